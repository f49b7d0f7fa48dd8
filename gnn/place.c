/* Hyperion's chunked placement (Sec. 3.2). Within each data type the
 * chunks are in hotness order, so a placement is four prefix lengths:
 * the device tier takes topology chunks [0, t_dev) and feature chunks
 * [0, f_dev), the host tier the next t_host and f_host; everything else
 * stays on storage. Cost = transactions left: host-resident chunks cost
 * their memory transactions, storage-resident ones their SSD
 * transactions (at SSD granularity), device-resident ones nothing. */
#include "gnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *gnn_placement_name(enum gnn_placement_policy p)
{
    switch (p) {
    case GNN_PLACE_HYPERION: return "hyperion";
    case GNN_PLACE_JOINT: return "joint";
    case GNN_PLACE_TOPO_FIRST: return "topo-first";
    case GNN_PLACE_FEAT_FIRST: return "feat-first";
    case GNN_PLACE_HYBRID: return "hybrid";
    }
    return "?";
}

int gnn_placement_parse(const char *s, enum gnn_placement_policy *out)
{
    for (int p = GNN_PLACE_HYPERION; p <= GNN_PLACE_HYBRID; p++)
        if (!strcmp(s, gnn_placement_name((enum gnn_placement_policy)p))) {
            *out = (enum gnn_placement_policy)p;
            return 0;
        }
    return -1;
}

double gnn_item_tx(uint64_t hot, uint64_t bytes, unsigned g, unsigned cls, int per_access_ceil)
{
    if (hot == 0 || bytes == 0)
        return 0;
    double units = per_access_ceil ? (double)hot * (double)((bytes + g - 1) / g)
                                   : ceil((double)hot * (double)bytes / (double)g);
    return units * (double)g / (double)cls;
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

struct prefix {
    double *tm, *ts, *fm, *fs;
    size_t nT, nF;
};

static double split_cost(const struct prefix *p, size_t a, size_t b, size_t c, size_t d, double *mem,
                         double *ssd)
{
    double m = (p->tm[a + c] - p->tm[a]) + (p->fm[b + d] - p->fm[b]);
    double s = (p->ts[p->nT] - p->ts[a + c]) + (p->fs[p->nF] - p->fs[b + d]);
    if (mem)
        *mem = m;
    if (ssd)
        *ssd = s;
    return m + s;
}

/* Given the device split (a, b), the host split minimising the cost. */
static void best_host(const struct prefix *p, size_t a, size_t b, size_t khost, size_t *c_out,
                      size_t *d_out, double *cost)
{
    size_t cmax = min_sz(khost, p->nT - a);
    double best = INFINITY;
    for (size_t c = 0; c <= cmax; c++) {
        size_t d = min_sz(khost - c, p->nF - b);
        double x = split_cost(p, a, b, c, d, NULL, NULL);
        if (x < best) {
            best = x;
            *c_out = c;
            *d_out = d;
        }
    }
    *cost = best;
}

/* Fixed-order fill of one tier: `first` chunks of one type, then the other. */
static void fill(size_t k, size_t avail_t, size_t avail_f, int topo_first, double tfrac, int hybrid,
                 size_t *t, size_t *f)
{
    if (hybrid) {
        size_t want_t = (size_t)llround(tfrac * (double)k);
        *t = min_sz(want_t, avail_t);
        *f = min_sz(k - *t, avail_f);
        *t = min_sz(k - *f, avail_t); /* leftovers go to topology */
    } else if (topo_first) {
        *t = min_sz(k, avail_t);
        *f = min_sz(k - *t, avail_f);
    } else {
        *f = min_sz(k, avail_f);
        *t = min_sz(k - *f, avail_t);
    }
}

int gnn_place_chunks(const struct gnn_chunk_cost *T, size_t nT, const struct gnn_chunk_cost *F,
                     size_t nF, size_t kdev, size_t khost, enum gnn_placement_policy policy,
                     double hybrid_topo_frac, struct gnn_split *out)
{
    int rc = -1;
    struct prefix p = {.nT = nT, .nF = nF};
    p.tm = calloc(nT + 1, sizeof(double));
    p.ts = calloc(nT + 1, sizeof(double));
    p.fm = calloc(nF + 1, sizeof(double));
    p.fs = calloc(nF + 1, sizeof(double));
    memset(out, 0, sizeof(*out));
    if (!p.tm || !p.ts || !p.fm || !p.fs)
        goto done;
    for (size_t i = 0; i < nT; i++) {
        p.tm[i + 1] = p.tm[i] + T[i].mem;
        p.ts[i + 1] = p.ts[i] + T[i].ssd;
    }
    for (size_t i = 0; i < nF; i++) {
        p.fm[i + 1] = p.fm[i] + F[i].mem;
        p.fs[i + 1] = p.fs[i] + F[i].ssd;
    }
    size_t a = 0, b = 0, c = 0, d = 0;
    if (hybrid_topo_frac <= 0)
        hybrid_topo_frac = 0.5;
    switch (policy) {
    case GNN_PLACE_HYPERION: {
        /* device: the split that saves the most transactions */
        double best = -1;
        for (size_t x = 0; x <= min_sz(kdev, nT); x++) {
            size_t y = min_sz(kdev - x, nF);
            double saved = p.tm[x] + p.fm[y];
            if (saved > best) {
                best = saved;
                a = x;
                b = y;
            }
        }
        double cost;
        best_host(&p, a, b, khost, &c, &d, &cost);
        break;
    }
    case GNN_PLACE_JOINT: {
        double best = INFINITY;
        for (size_t x = 0; x <= min_sz(kdev, nT); x++) {
            size_t y = min_sz(kdev - x, nF), cc = 0, dd = 0;
            double cost;
            best_host(&p, x, y, khost, &cc, &dd, &cost);
            if (cost < best) {
                best = cost;
                a = x;
                b = y;
                c = cc;
                d = dd;
            }
        }
        break;
    }
    case GNN_PLACE_TOPO_FIRST:
    case GNN_PLACE_FEAT_FIRST:
    case GNN_PLACE_HYBRID: {
        int tf = policy == GNN_PLACE_TOPO_FIRST, hy = policy == GNN_PLACE_HYBRID;
        fill(kdev, nT, nF, tf, hybrid_topo_frac, hy, &a, &b);
        fill(khost, nT - a, nF - b, tf, hybrid_topo_frac, hy, &c, &d);
        break;
    }
    }
    out->t_dev = a;
    out->f_dev = b;
    out->t_host = c;
    out->f_host = d;
    out->cost = split_cost(&p, a, b, c, d, &out->mem_tx, &out->ssd_tx);
    rc = 0;
done:
    free(p.tm);
    free(p.ts);
    free(p.fm);
    free(p.fs);
    return rc;
}
