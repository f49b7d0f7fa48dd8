/* Hyperion's TPC model (Sec. 3.4, Eq. 5): per-batch time is the slowest
 * of storage, PCIe and training; cost is the 5-year TCO. */
#include "gnn.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gnn_bound_name(enum gnn_bound b)
{
    switch (b) {
    case GNN_BOUND_SSD: return "ssd";
    case GNN_BOUND_PCIE: return "pcie";
    case GNN_BOUND_TRAIN: return "train";
    case GNN_BOUND_SAMPLE: return "sample";
    case GNN_BOUND_CPU: return "cpu";
    case GNN_BOUND_SERIAL: return "serial";
    case GNN_BOUND_LOOKUP: return "lookup";
    case GNN_BOUND_COMPLETE: return "complete";
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

double gnn_mva_period(const double *d, int k, double z, int n)
{
    double q[16] = {0}, r[16];
    if (k > 16)
        k = 16;
    double x = 0;
    for (int m = 1; m <= n; m++) {
        double sum = z > 0 ? z : 0;
        for (int i = 0; i < k; i++)
            sum += r[i] = d[i] * (1 + q[i]);
        x = sum > 0 ? m / sum : 0;
        for (int i = 0; i < k; i++)
            q[i] = x * r[i];
    }
    return x > 0 ? 1 / x : 0;
}

void gnn_tpc_predict_pipeline(const struct gnn_hw_profile *p, const struct gnn_profile *f, int cores,
                              int slots, struct gnn_prediction *o)
{
    double cls = p->cls ? p->cls : 64, C = cores > 0 ? cores : 1;
    memset(o, 0, sizeof(*o));
    o->q = p->n_ssd > 0 ? p->n_ssd : 1;
    o->t_ssd = f->ssd_bytes > 0 ? (f->io_rate > 0 ? f->ssd_bytes / f->io_rate : 1e300) : 0;
    o->t_pcie = p->pcie_bw > 0 ? (f->ssd_tx + f->mem_tx) / (p->pcie_bw / cls) : 0;
    double cpu[4] = {f->cpu_sample, f->cpu_lookup, f->cpu_complete, f->cpu_train};
    double tot = cpu[0] + cpu[1] + cpu[2] + cpu[3] + f->cpu_other;
    o->t_cpu = tot / C;
    if (slots <= 1) {
        o->t_batch = o->t_pipe = f->t_sample + f->t_lookup + f->t_complete + f->t_train;
        o->t_sample = f->t_sample;
        o->t_train = f->t_train;
        o->bound = GNN_BOUND_SERIAL;
    } else {
        /* the engine's time on the batch: what the sampler and the completion
         * waited for. Of it, bytes / rate holds the device; the rest is
         * latency, which other batches' reads overlap */
        double io_s = fmax(0, f->io_sample), io_c = fmax(0, f->io_complete);
        double io = io_s + io_c, occ = fmin(io, o->t_ssd), lat = io - occ;
        double occ_c = io > 0 ? io_c * occ / io : 0;
        double d[5], t = 0;
        for (int it = 0; it < 200; it++) {
            double x = t > 0 ? 1 / t : 0;
            for (int k = 0; k < 4; k++) {
                /* the chance the other threads hold every core, each core
                 * busy with them independently with probability U_other / C */
                double busy = fmin(0.95, pow(fmin(1, x * (tot - cpu[k]) / C), C));
                double c = cpu[k] / (1 - busy);
                d[k == 0 ? 0 : k + 1] = c;
            }
            d[1] = occ;
            /* the sampler's reads queue behind the feature reads in service */
            d[0] += io_s + (f->hops > 0 ? f->hops : 1) * fmin(1, x * occ_c) * occ_c / 2;
            double tn = fmax(gnn_mva_period(d, 5, lat, slots), o->t_cpu);
            if (fabs(tn - t) <= 1e-9 * tn) {
                t = tn;
                break;
            }
            t = it ? 0.5 * (t + tn) : tn;
        }
        o->t_pipe = t;
        o->t_sample = d[0];
        o->t_train = d[4];
        /* the busiest station names the pipeline's bottleneck */
        static const enum gnn_bound st[5] = {GNN_BOUND_SAMPLE, GNN_BOUND_SSD, GNN_BOUND_LOOKUP, GNN_BOUND_COMPLETE,
                                             GNN_BOUND_TRAIN};
        int kb = 0;
        for (int k = 1; k < 5; k++)
            if (d[k] > d[kb])
                kb = k;
        o->t_batch = t;
        o->bound = st[kb];
        if (o->t_ssd > o->t_batch)
            o->t_batch = o->t_ssd, o->bound = GNN_BOUND_SSD;
        if (o->t_pcie > o->t_batch)
            o->t_batch = o->t_pcie, o->bound = GNN_BOUND_PCIE;
        if (o->t_cpu >= o->t_batch)
            o->t_batch = o->t_cpu, o->bound = GNN_BOUND_CPU;
    }
    o->throughput = o->t_batch > 0 ? f->batch_size / o->t_batch : 0;
    o->cost = gnn_tco(p, o->q);
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
