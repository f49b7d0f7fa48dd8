/* The unified static cache: one presampled epoch counts hotness, the
 * hottest neighbour lists and feature rows are packed into chunks of Z
 * bytes in hotness order, gnn_place_chunks splits them over the device
 * and host tiers, and the tiers are filled once from storage. Nothing is
 * replaced during training. */
#include "gnn_internal.h"

#include <stdlib.h>
#include <string.h>

#define LOC_SHIFT 62
#define LOC_MASK ((1ULL << LOC_SHIFT) - 1)

struct gnn_cache {
    const struct gnn_dataset *ds;
    const uint64_t *offsets;
    uint64_t *tloc, *floc;      /* per node: tier << 62 | byte offset in the tier, 0 = miss */
    char *mem[3];               /* tier arenas: features first (512-aligned), then lists */
    uint64_t mem_bytes[3];
    struct gnn_cache_info info;
};

int gnn_presample(struct gnn_reader *r, const struct gnn_sampler_cfg *cfg, size_t bs, uint64_t epoch,
                  struct gnn_hotness *h)
{
    struct gnn_dataset *ds = gnn_reader_dataset(r);
    uint64_t n = ds->h.n;
    memset(h, 0, sizeof(*h));
    h->n = n;
    h->topo = calloc(n, sizeof(uint32_t));
    h->feat = calloc(n, sizeof(uint32_t));
    size_t ntr;
    const uint32_t *tr = gnn_train_ids(ds, &ntr);
    int64_t *order = malloc(sizeof(int64_t) * (ntr ? ntr : 1));
    if (!h->topo || !h->feat || !order) {
        free(order);
        gnn_hotness_free(h);
        return -1;
    }
    gnn_epoch_order(tr, ntr, cfg->seed, epoch, order);
    struct gnn_sample s;
    gnn_sample_init(&s);
    int rc = 0;
    size_t nb = gnn_num_batches(ntr, bs, 0, 1);
    for (size_t b = 0; b < nb && !rc; b++) {
        const int64_t *seeds;
        size_t ns = gnn_batch_seeds(order, ntr, bs, 0, 1, b, &seeds);
        if (gnn_sample(&s, cfg, r, seeds, ns, epoch, b)) {
            rc = -1;
            break;
        }
        for (int hop = 0; hop < s.hops; hop++)
            for (size_t i = 0; i < s.hop_end[hop]; i++)
                h->topo[s.nodes[i]]++;
        for (size_t i = 0; i < s.n_nodes; i++)
            h->feat[s.nodes[i]]++;
        if (s.n_nodes > h->max_batch_rows)
            h->max_batch_rows = s.n_nodes;
    }
    gnn_sample_free(&s);
    free(order);
    if (rc)
        gnn_hotness_free(h);
    return rc;
}

void gnn_hotness_free(struct gnn_hotness *h)
{
    free(h->topo);
    free(h->feat);
    h->topo = h->feat = NULL;
}

/* hotness-descending order of the nodes with hot > 0 and 0 < bytes <= z */
static int cmp_hot(const void *x, const void *y, void *arg)
{
    const uint32_t *sort_hot = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (sort_hot[a] != sort_hot[b])
        return sort_hot[a] > sort_hot[b] ? -1 : 1;
    return (a > b) - (a < b);
}

struct queue {
    uint32_t *node;
    size_t n;
    size_t *chunk_start; /* chunk c = node[chunk_start[c] .. chunk_start[c+1]) */
    size_t nchunks;
    struct gnn_chunk_cost *cost;
    uint64_t *chunk_bytes;
    double oversize_ssd;  /* items never cached (larger than a chunk) */
};

static int build_queue(struct queue *q, const uint32_t *hot, uint64_t n, const uint64_t *off, uint64_t row_bytes,
                       uint64_t z, const struct gnn_cache_cfg *cfg, unsigned cls, unsigned ssds)
{
    memset(q, 0, sizeof(*q));
    q->node = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!q->node)
        return -1;
    for (uint64_t v = 0; v < n; v++) {
        if (!hot[v])
            continue;
        uint64_t bytes = off ? 4 * (off[v + 1] - off[v]) : row_bytes;
        if (bytes == 0)
            continue;
        if (bytes > z) {
            q->oversize_ssd += gnn_item_tx(hot[v], bytes, ssds, cls, cfg->per_access_ceil);
            continue;
        }
        q->node[q->n++] = (uint32_t)v;
    }
    qsort_r(q->node, q->n, sizeof(uint32_t), cmp_hot, (void *)hot);
    q->chunk_start = malloc(sizeof(size_t) * (q->n + 2));
    q->cost = calloc(q->n + 1, sizeof(*q->cost));
    q->chunk_bytes = calloc(q->n + 1, sizeof(uint64_t));
    if (!q->chunk_start || !q->cost || !q->chunk_bytes)
        return -1;
    uint64_t fillb = 0;
    for (size_t i = 0; i < q->n; i++) {
        uint64_t v = q->node[i];
        uint64_t bytes = off ? 4 * (off[v + 1] - off[v]) : row_bytes;
        if (q->nchunks == 0 || fillb + bytes > z) {
            q->chunk_start[q->nchunks++] = i;
            fillb = 0;
        }
        size_t c = q->nchunks - 1;
        fillb += bytes;
        q->chunk_bytes[c] += bytes;
        q->cost[c].mem += gnn_item_tx(hot[v], bytes, cls, cls, cfg->per_access_ceil);
        q->cost[c].ssd += gnn_item_tx(hot[v], bytes, ssds, cls, cfg->per_access_ceil);
    }
    q->chunk_start[q->nchunks] = q->n;
    return 0;
}

static void free_queue(struct queue *q)
{
    free(q->node);
    free(q->chunk_start);
    free(q->cost);
    free(q->chunk_bytes);
    memset(q, 0, sizeof(*q));
}

/* hot-0 fill order: degree descending, then id */
static int cmp_deg(const void *x, const void *y, void *arg)
{
    const uint64_t *off = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t da = off[a + 1] - off[a], db = off[b + 1] - off[b];
    if (da != db)
        return da > db ? -1 : 1;
    return (a > b) - (a < b);
}

/* Fills what the placed chunks left of each tier's capacity (device
 * first): the presampled items whose chunks did not fit (features, then
 * lists, in hotness order), then the nodes presampling never touched, by
 * degree (a high-degree node is the likeliest to be sampled later): its
 * list, then its row. Items that do not fit are skipped. 0, or -1. */
static int fill_rest(const struct queue *qt, const struct queue *qf, const struct gnn_hotness *h,
                     const struct gnn_header *hd, const uint64_t *off, uint64_t z, const struct gnn_cache_cfg *cfg,
                     size_t fr[3][2], size_t tr[3][2], uint32_t *fl[3], size_t nfl[3], uint32_t *tl[3],
                     size_t ntl[3], uint64_t fbytes[3], uint64_t tbytes[3])
{
    uint64_t n = hd->n;
    unsigned char *taken = calloc(n ? n : 1, 1); /* bit 1: row cached, bit 2: list cached */
    uint32_t *cold = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!taken || !cold) {
        free(taken);
        free(cold);
        return -1;
    }
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        for (size_t i = 0; i < nfl[t]; i++)
            taken[fl[t][i]] |= 1;
        for (size_t i = 0; i < ntl[t]; i++)
            taken[tl[t][i]] |= 2;
    }
    size_t ncold = 0;
    for (uint64_t v = 0; v < n; v++)
        if (!h->feat[v] || !h->topo[v])
            cold[ncold++] = (uint32_t)v;
    qsort_r(cold, ncold, sizeof(uint32_t), cmp_deg, (void *)off);
    size_t f_rest = qf->chunk_start[fr[0][0]], t_rest = qt->chunk_start[tr[0][0]];
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        if (!cfg->cap[t])
            continue;
        uint64_t used = fbytes[t] + tbytes[t];
        uint64_t cap = cfg->fill_limit[t] && cfg->fill_limit[t] < cfg->cap[t] ? cfg->fill_limit[t] : cfg->cap[t];
        uint64_t room = cap > used ? cap - used : 0;
#define TAKE_ROW(v)                                                                                 \
    do {                                                                                            \
        if (!(taken[v] & 1) && hd->row_bytes <= room) {                                             \
            taken[v] |= 1;                                                                          \
            fl[t][nfl[t]++] = (uint32_t)(v);                                                        \
            fbytes[t] += hd->row_bytes;                                                             \
            room -= hd->row_bytes;                                                                  \
        }                                                                                           \
    } while (0)
#define TAKE_LIST(v)                                                                                \
    do {                                                                                            \
        uint64_t b_ = 4 * (off[(v) + 1] - off[v]);                                                  \
        if (!(taken[v] & 2) && b_ > 0 && b_ <= z && b_ <= room) {                                   \
            taken[v] |= 2;                                                                          \
            tl[t][ntl[t]++] = (uint32_t)(v);                                                        \
            tbytes[t] += b_;                                                                        \
            room -= b_;                                                                             \
        }                                                                                           \
    } while (0)
        for (size_t i = f_rest; i < qf->n && room >= hd->row_bytes; i++)
            TAKE_ROW(qf->node[i]);
        for (size_t i = t_rest; i < qt->n && room >= 4; i++)
            TAKE_LIST(qt->node[i]);
        for (size_t i = 0; i < ncold && room >= 4; i++) {
            uint32_t v = cold[i];
            if (!h->topo[v])
                TAKE_LIST(v);
            if (!h->feat[v])
                TAKE_ROW(v);
        }
#undef TAKE_ROW
#undef TAKE_LIST
    }
    free(taken);
    free(cold);
    return 0;
}

static void free_lists(uint32_t *fl[3], uint32_t *tl[3])
{
    for (int t = 0; t < 3; t++) {
        free(fl[t]);
        free(tl[t]);
    }
}

/* Plans (fill = 0: queues, placement, sizes and hit rates only) or builds
 * the cache (fill = 1: tier memory filled through r). */
static struct gnn_cache *cache_make(struct gnn_dataset *ds, struct gnn_reader *r, const struct gnn_hotness *h,
                                    const struct gnn_cache_cfg *cfgin, int fill, char *err, size_t errlen)
{
    const struct gnn_header *hd = &ds->h;
    struct gnn_cache_cfg cfg = *cfgin;
    unsigned cls = cfg.cls ? cfg.cls : 64, ssds = cfg.ssds ? cfg.ssds : 512;
    if (h->n != hd->n) {
        snprintf(err, errlen, "hotness counts %llu nodes, the dataset has %llu", (unsigned long long)h->n,
                 (unsigned long long)hd->n);
        return NULL;
    }
    /* Z: as given (100 MB by default), capped to a quarter of the smallest
     * non-empty tier so small caches still get several chunks */
    uint64_t z = cfg.chunk ? cfg.chunk : 100000000ULL;
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++)
        if (cfg.cap[t] && !cfg.chunk && cfg.cap[t] / 4 < z)
            z = cfg.cap[t] / 4;
    if (z < hd->row_bytes)
        z = hd->row_bytes;
    struct gnn_cache *c = calloc(1, sizeof(*c));
    struct queue qt, qf;
    memset(&qt, 0, sizeof(qt));
    memset(&qf, 0, sizeof(qf));
    /* per tier: the node ids whose rows / lists it holds, placed chunks
     * first, then (fill_rest) what fills the capacity the chunks left */
    uint32_t *fl[3] = {NULL}, *tl[3] = {NULL};
    if (!c)
        goto oom;
    c->ds = ds;
    c->offsets = ds->offsets;
    if (fill) {
        c->tloc = calloc(hd->n, sizeof(uint64_t));
        c->floc = calloc(hd->n, sizeof(uint64_t));
        if (!c->tloc || !c->floc)
            goto oom;
    }
    if (build_queue(&qt, h->topo, hd->n, ds->offsets, 0, z, &cfg, cls, ssds) ||
        build_queue(&qf, h->feat, hd->n, NULL, hd->row_bytes, z, &cfg, cls, ssds))
        goto oom;
    size_t kdev = (size_t)(cfg.cap[GNN_TIER_DEV] / z), khost = (size_t)(cfg.cap[GNN_TIER_HOST] / z);
    struct gnn_split sp;
    if (gnn_place_chunks(qt.cost, qt.nchunks, qf.cost, qf.nchunks, kdev, khost, cfg.policy, cfg.hybrid_topo_frac,
                         &sp) != 0)
        goto oom; /* (not an empty cache that looks placed) */
    struct gnn_cache_info *in = &c->info;
    in->split = sp;
    in->chunk = z;
    in->tx_mem = sp.mem_tx;
    in->tx_ssd = sp.ssd_tx + qt.oversize_ssd + qf.oversize_ssd;
    /* chunk ranges per tier: [lo, hi) of each queue */
    size_t tr[3][2] = {{sp.t_dev + sp.t_host, qt.nchunks}, {0, sp.t_dev}, {sp.t_dev, sp.t_dev + sp.t_host}};
    size_t fr[3][2] = {{sp.f_dev + sp.f_host, qf.nchunks}, {0, sp.f_dev}, {sp.f_dev, sp.f_dev + sp.f_host}};
    double tot_t = 0, tot_f = 0, hot_t[3] = {0}, hot_f[3] = {0};
    for (uint64_t v = 0; v < hd->n; v++) {
        tot_t += h->topo[v];
        tot_f += h->feat[v];
    }
    size_t nfl[3] = {0}, ntl[3] = {0};
    uint64_t fbytes[3] = {0}, tbytes[3] = {0};
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        size_t f0 = qf.chunk_start[fr[t][0]], f1 = qf.chunk_start[fr[t][1]];
        size_t t0 = qt.chunk_start[tr[t][0]], t1 = qt.chunk_start[tr[t][1]];
        fl[t] = malloc(sizeof(uint32_t) * (cfg.fill_rest ? hd->n + 1 : f1 - f0 + 1));
        tl[t] = malloc(sizeof(uint32_t) * (cfg.fill_rest ? hd->n + 1 : t1 - t0 + 1));
        if (!fl[t] || !tl[t])
            goto oom;
        for (size_t i = f0; i < f1; i++)
            fl[t][nfl[t]++] = qf.node[i];
        for (size_t i = t0; i < t1; i++) {
            tl[t][ntl[t]++] = qt.node[i];
            tbytes[t] += 4 * (c->offsets[qt.node[i] + 1] - c->offsets[qt.node[i]]);
        }
        fbytes[t] = nfl[t] * hd->row_bytes;
    }
    if (cfg.fill_rest && fill_rest(&qt, &qf, h, hd, c->offsets, z, &cfg, fr, tr, fl, nfl, tl, ntl, fbytes, tbytes))
        goto oom;
    /* the queues' metadata goes before the tiers are allocated: the
     * build's peak memory counts against the budget too */
    free_queue(&qt);
    free_queue(&qf);
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        uint64_t fb = fbytes[t], tb = tbytes[t];
        in->feat_nodes[t] = nfl[t];
        in->topo_nodes[t] = ntl[t];
        in->feat_bytes[t] = fb;
        in->topo_bytes[t] = tb;
        c->mem_bytes[t] = fb + tb;
        for (size_t i = 0; i < nfl[t]; i++)
            hot_f[t] += h->feat[fl[t][i]];
        for (size_t i = 0; i < ntl[t]; i++)
            hot_t[t] += h->topo[tl[t][i]];
        if (!fill)
            continue;
        if (posix_memalign((void **)&c->mem[t], 4096, fb + tb + 4096) != 0) {
            c->mem[t] = NULL;
            goto oom;
        }
        /* features, read in batches through the reader (verified) */
        const size_t B = 4096;
        int64_t ids[4096];
        for (size_t i = 0; i < nfl[t]; i += B) {
            size_t cnt = nfl[t] - i < B ? nfl[t] - i : B;
            for (size_t k = 0; k < cnt; k++) {
                uint64_t v = fl[t][i + k];
                ids[k] = (int64_t)v;
                c->floc[v] = (uint64_t)t << LOC_SHIFT | (uint64_t)(i + k) * hd->row_bytes;
            }
            if (gnn_gather(r, ids, cnt, (float *)(c->mem[t] + i * hd->row_bytes))) {
                snprintf(err, errlen, "filling the cache: %s", gnn_reader_error(r));
                goto fail;
            }
        }
        uint64_t pos = fb;
        const uint32_t *lists[4096];
        uint32_t degs[4096];
        for (size_t i = 0; i < ntl[t]; i += B) {
            size_t cnt = ntl[t] - i < B ? ntl[t] - i : B;
            for (size_t k = 0; k < cnt; k++)
                ids[k] = tl[t][i + k];
            if (gnn_read_neighbours(r, ids, cnt, lists, degs)) {
                snprintf(err, errlen, "filling the cache: %s", gnn_reader_error(r));
                goto fail;
            }
            for (size_t k = 0; k < cnt; k++) {
                uint64_t v = (uint64_t)ids[k];
                memcpy(c->mem[t] + pos, lists[k], 4ULL * degs[k]);
                c->tloc[v] = (uint64_t)t << LOC_SHIFT | pos;
                pos += 4ULL * degs[k];
            }
        }
    }
    free_lists(fl, tl);
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        in->hit_topo[t] = tot_t > 0 ? hot_t[t] / tot_t : 0;
        in->hit_feat[t] = tot_f > 0 ? hot_f[t] / tot_f : 0;
    }
    in->hit_topo[0] = 1 - in->hit_topo[1] - in->hit_topo[2];
    in->hit_feat[0] = 1 - in->hit_feat[1] - in->hit_feat[2];
    free_queue(&qt);
    free_queue(&qf);
    return c;
oom:
    snprintf(err, errlen, "out of memory building the cache");
fail:
    free_lists(fl, tl);
    free_queue(&qt);
    free_queue(&qf);
    gnn_cache_free(c);
    return NULL;
}

struct gnn_cache *gnn_cache_build(struct gnn_reader *r, const struct gnn_hotness *h,
                                  const struct gnn_cache_cfg *cfg, char *err, size_t errlen)
{
    return cache_make(gnn_reader_dataset(r), r, h, cfg, 1, err, errlen);
}

int gnn_cache_plan(const struct gnn_dataset *ds, const struct gnn_hotness *h, const struct gnn_cache_cfg *cfg,
                   struct gnn_cache_info *out, char *err, size_t errlen)
{
    struct gnn_cache *c = cache_make((struct gnn_dataset *)ds, NULL, h, cfg, 0, err, errlen);
    if (!c)
        return -1;
    *out = c->info;
    gnn_cache_free(c);
    return 0;
}

void gnn_cache_free(struct gnn_cache *c)
{
    if (!c)
        return;
    free(c->tloc);
    free(c->floc);
    for (int t = 0; t < 3; t++)
        free(c->mem[t]);
    free(c);
}

void gnn_cache_info(const struct gnn_cache *c, struct gnn_cache_info *out) { *out = c->info; }

enum gnn_tier gnn_cache_topo(const struct gnn_cache *c, uint64_t v, const uint32_t **list, uint32_t *deg)
{
    uint64_t l = c->tloc[v];
    if (!l) {
        *list = NULL;
        return GNN_TIER_NONE;
    }
    int t = (int)(l >> LOC_SHIFT);
    *list = (const uint32_t *)(c->mem[t] + (l & LOC_MASK));
    *deg = (uint32_t)(c->offsets[v + 1] - c->offsets[v]);
    return (enum gnn_tier)t;
}

enum gnn_tier gnn_cache_feat(const struct gnn_cache *c, uint64_t v, const float **row)
{
    uint64_t l = c->floc[v];
    if (!l) {
        *row = NULL;
        return GNN_TIER_NONE;
    }
    int t = (int)(l >> LOC_SHIFT);
    *row = (const float *)(c->mem[t] + (l & LOC_MASK));
    return (enum gnn_tier)t;
}

uint64_t gnn_cache_mem_bytes(const struct gnn_cache *c, enum gnn_tier t)
{
    if (t == GNN_TIER_DEV)
        return c->mem_bytes[GNN_TIER_DEV];
    if (t == GNN_TIER_HOST)
        return c->mem_bytes[GNN_TIER_HOST] + 16 * c->ds->h.n; /* the index lives on the host */
    return 0;
}
