/* Hyperion's TPC model (Sec. 3.4, Eq. 5): per-batch time is the slowest
 * of storage, PCIe and training; cost is the 5-year TCO. */
#include "gnn.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gnn_bound_name(enum gnn_bound b)
{
    switch (b) {
    case GNN_BOUND_SSD: return "ssd";
    case GNN_BOUND_PCIE: return "pcie";
    case GNN_BOUND_TRAIN: return "train";
    }
    return "?";
}

double gnn_tco(const struct gnn_hw_profile *p, int n_ssd)
{
    return (p->c_mac + p->c_gpu * p->n_gpu + p->c_ssd * n_ssd + p->c_ele) * (p->n_mac > 0 ? p->n_mac : 1);
}

void gnn_tpc_predict(const struct gnn_hw_profile *p, const struct gnn_workload *w, int q,
                     struct gnn_prediction *o)
{
    double cls = p->cls ? p->cls : 64;
    double th_ssd = p->ssd_bw / cls, th_pcie = p->pcie_bw / cls; /* transactions/s */
    memset(o, 0, sizeof(*o));
    o->q = q;
    o->t_ssd = (q > 0 && th_ssd > 0 ? w->n_ssd_tx / (th_ssd * q) : (w->n_ssd_tx > 0 ? 1e300 : 0)) + w->alpha;
    o->t_pcie = th_pcie > 0 ? (w->n_ssd_tx + w->n_mem_tx) / th_pcie : 0;
    o->t_train = w->t_train;
    o->t_batch = o->t_ssd;
    o->bound = GNN_BOUND_SSD;
    if (o->t_pcie > o->t_batch) {
        o->t_batch = o->t_pcie;
        o->bound = GNN_BOUND_PCIE;
    }
    if (o->t_train > o->t_batch) {
        o->t_batch = o->t_train;
        o->bound = GNN_BOUND_TRAIN;
    }
    o->throughput = o->t_batch > 0 ? w->batch_size / o->t_batch : 0;
    o->cost = gnn_tco(p, q);
    o->tpc = o->cost > 0 ? o->throughput / o->cost : 0;
}

int gnn_tpc_optimise(const struct gnn_hw_profile *p, const struct gnn_workload *w, double budget,
                     struct gnn_prediction *best)
{
    int found = 0;
    int qmax = p->max_ssd > 0 ? p->max_ssd : 1;
    for (int q = 1; q <= qmax; q++) {
        struct gnn_prediction pr;
        gnn_tpc_predict(p, w, q, &pr);
        if (budget > 0 && pr.cost > budget)
            continue;
        if (!found || pr.tpc > best->tpc) {
            *best = pr;
            found = 1;
        }
    }
    return found ? 0 : -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

int gnn_profile_load(const char *path, struct gnn_hw_profile *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    memset(p, 0, sizeof(*p));
    p->cls = 64;
    p->ssds = 512;
    p->n_gpu = 1;
    p->n_mac = 1;
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected key = value", path, lineno);
            fclose(f);
            return -1;
        }
        *eq = 0;
        char *key = trim(s), *val = trim(eq + 1);
        if (!strcmp(key, "name")) {
            snprintf(p->name, sizeof(p->name), "%s", val);
            continue;
        }
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (end == val || *trim(end) || errno) {
            snprintf(err, errlen, "%s:%d: %s: not a number: %s", path, lineno, key, val);
            fclose(f);
            return -1;
        }
        if (!strcmp(key, "ssd_bw")) p->ssd_bw = d;
        else if (!strcmp(key, "pcie_bw")) p->pcie_bw = d;
        else if (!strcmp(key, "cls")) p->cls = (unsigned)d;
        else if (!strcmp(key, "ssds")) p->ssds = (unsigned)d;
        else if (!strcmp(key, "max_ssd")) p->max_ssd = (int)d;
        else if (!strcmp(key, "n_ssd")) p->n_ssd = (int)d;
        else if (!strcmp(key, "n_gpu")) p->n_gpu = (int)d;
        else if (!strcmp(key, "n_mac")) p->n_mac = (int)d;
        else if (!strcmp(key, "c_mac")) p->c_mac = d;
        else if (!strcmp(key, "c_gpu")) p->c_gpu = d;
        else if (!strcmp(key, "c_ssd")) p->c_ssd = d;
        else if (!strcmp(key, "c_ele")) p->c_ele = d;
        else {
            snprintf(err, errlen, "%s:%d: unknown key %s", path, lineno, key);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (p->ssd_bw <= 0 || p->pcie_bw <= 0 || p->cls == 0 || p->ssds == 0) {
        snprintf(err, errlen, "%s: ssd_bw, pcie_bw, cls and ssds must be positive", path);
        return -1;
    }
    if (!p->name[0])
        snprintf(p->name, sizeof(p->name), "%s", path);
    return 0;
}
