/* Readers: neighbour lists and feature rows from memory, the page cache
 * (mmap) or the storage engine, with the unified cache in front. Misses
 * of one call go to the engine as one batch. */
#include "gnn_internal.h"
#include "../offload/aio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct gnn_reader {
    struct gnn_dataset *ds;
    const struct gnn_cache *cache;
    int verify;
    unsigned cls, ssds;
    struct gnn_read_stats st;
    char err[512];
    /* topology scratch (aligned: O_DIRECT target) */
    char *nbuf;
    size_t nbuf_cap;
    struct mb_aio_req *reqs;
    size_t reqs_cap;
    size_t *miss;
    size_t miss_cap;
    /* the neighbour read in flight (gnn_read_neighbours_submit) */
    int n_pending;
    struct mb_storage_ticket n_ticket;
    size_t n_nmiss;
    const int64_t *n_nodes;
    /* the gather in flight */
    size_t g_n;
    float *g_out;
    int g_pending, g_staged;
    struct mb_storage_ticket g_ticket;
    size_t g_nmiss;
    char *stage;
    size_t stage_cap;
    struct mb_aio_req *greqs;
    size_t greqs_cap;
    size_t *gmiss;
    size_t gmiss_cap;
    int64_t *gids;            /* the gather's node ids, copied: the caller's
                                 array may move while it is in flight (the
                                 sampler grows its node list) */
    size_t gids_cap;
};

struct gnn_reader *gnn_reader_new(struct gnn_dataset *ds, const struct gnn_cache *cache, int verify)
{
    struct gnn_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->ds = ds;
    r->cache = cache;
    r->verify = verify;
    r->cls = 64;
    r->ssds = 512;
    return r;
}

void gnn_reader_free(struct gnn_reader *r)
{
    if (!r)
        return;
    if (r->g_pending)
        gnn_gather_wait(r);
    if (r->n_pending)
        gnn_read_neighbours_wait(r);
    free(r->nbuf);
    free(r->reqs);
    free(r->miss);
    free(r->stage);
    free(r->greqs);
    free(r->gmiss);
    free(r->gids);
    free(r);
}

void gnn_reader_set_granularity(struct gnn_reader *r, unsigned cls, unsigned ssds)
{
    r->cls = cls ? cls : 64;
    r->ssds = ssds ? ssds : 512;
}

void gnn_reader_stats(const struct gnn_reader *r, struct gnn_read_stats *out) { *out = r->st; }
void gnn_reader_reset_stats(struct gnn_reader *r) { memset(&r->st, 0, sizeof(r->st)); }
const char *gnn_reader_error(const struct gnn_reader *r) { return r->err; }

void gnn_read_stats_add(struct gnn_read_stats *a, const struct gnn_read_stats *s)
{
    if (s->verify_failures && !a->verify_failures)
        a->first_bad_node = s->first_bad_node;
    a->topo_lists += s->topo_lists;
    a->topo_dev_hits += s->topo_dev_hits;
    a->topo_host_hits += s->topo_host_hits;
    a->topo_misses += s->topo_misses;
    a->feat_rows += s->feat_rows;
    a->feat_dev_hits += s->feat_dev_hits;
    a->feat_host_hits += s->feat_host_hits;
    a->feat_misses += s->feat_misses;
    a->ssd_requests += s->ssd_requests;
    a->ssd_bytes += s->ssd_bytes;
    a->mem_tx += s->mem_tx;
    a->ssd_tx += s->ssd_tx;
    a->verified_rows += s->verified_rows;
    a->verify_failures += s->verify_failures;
}

static int grow_aligned(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 65536;
    while (c < need)
        c *= 2;
    void *q = NULL;
    if (posix_memalign(&q, 4096, c) != 0)
        return -1;
    free(*p);
    *p = q;
    *cap = c;
    return 0;
}

/* "DIR/data.D": the data file holding logical byte `off` of the volume. */
static const char *file_of(const struct gnn_dataset *ds, uint64_t off, char *buf, size_t len)
{
    int dev = 0;
    uint64_t devoff;
    mb_aio_map(off, ds->h.stripe, (int)ds->h.ndev, &dev, &devoff);
    snprintf(buf, len, "%.300s/data.%d", ds->dir, dev);
    return buf;
}

static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* transactions of `bytes` from host memory / from storage (SSD granularity) */
static inline uint64_t mem_tx(const struct gnn_reader *r, uint64_t bytes) { return ceil_div(bytes, r->cls); }

int gnn_read_neighbours_submit(struct gnn_reader *r, const int64_t *nodes, size_t n, const uint32_t **lists,
                               uint32_t *deg)
{
    if (r->n_pending) {
        snprintf(r->err, sizeof(r->err), "neighbour read submitted while another is in flight");
        return -1;
    }
    struct gnn_dataset *ds = r->ds;
    const struct gnn_header *h = &ds->h;
    const uint64_t *off = ds->offsets;
    enum gnn_access mode = ds->o.topo;
    size_t nmiss = 0;
    uint64_t scratch = 0;
    if (mb_grow((void **)&r->miss, &r->miss_cap, n, sizeof(size_t))) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        return -1;
    }
    r->st.topo_lists += n;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)nodes[i];
        deg[i] = (uint32_t)(off[v + 1] - off[v]);
        if (r->cache) {
            uint32_t d;
            enum gnn_tier t = gnn_cache_topo(r->cache, v, &lists[i], &d);
            if (t == GNN_TIER_DEV) {
                r->st.topo_dev_hits++;
                continue;
            }
            if (t == GNN_TIER_HOST) {
                r->st.topo_host_hits++;
                r->st.mem_tx += mem_tx(r, 4ULL * d);
                continue;
            }
        }
        r->st.topo_misses++;
        if (deg[i] == 0) {
            lists[i] = NULL;
            continue;
        }
        if (mode == GNN_MEM) {
            lists[i] = ds->neigh_mem + off[v];
            r->st.mem_tx += mem_tx(r, 4ULL * deg[i]);
            continue;
        }
        uint64_t s = h->off_neigh + 4 * off[v], e = s + 4ULL * deg[i];
        uint64_t as = s / 512 * 512, ae = ceil_div(e, 512) * 512;
        r->miss[nmiss++] = i;
        scratch += mode == GNN_AIO ? ae - as : e - s;
    }
    if (nmiss == 0)
        return 0;
    if (grow_aligned(&r->nbuf, &r->nbuf_cap, scratch) ||
        mb_grow((void **)&r->reqs, &r->reqs_cap, nmiss, sizeof(struct mb_aio_req))) {
        snprintf(r->err, sizeof(r->err), "out of memory for %llu B of neighbour lists",
                 (unsigned long long)scratch);
        return -1;
    }
    uint64_t pos = 0;
    for (size_t k = 0; k < nmiss; k++) {
        size_t i = r->miss[k];
        uint64_t v = (uint64_t)nodes[i];
        uint64_t s = h->off_neigh + 4 * off[v], e = s + 4ULL * deg[i];
        if (mode == GNN_MMAP) {
            int dev;
            uint64_t devoff;
            size_t room = mb_aio_map(s, h->stripe, (int)h->ndev, &dev, &devoff);
            if (room >= e - s) {
                lists[i] = (const uint32_t *)((const char *)ds->map[dev] + devoff);
            } else {
                gnn_map_copy(ds, s, r->nbuf + pos, e - s);
                lists[i] = (const uint32_t *)(r->nbuf + pos);
                pos += e - s;
            }
            r->st.ssd_bytes += e - s;
            r->st.ssd_requests++;
            r->st.ssd_tx += ceil_div(ceil_div(e, r->ssds) * r->ssds - s / r->ssds * r->ssds, r->cls);
            continue;
        }
        uint64_t as = s / 512 * 512, ae = ceil_div(e, 512) * 512;
        r->reqs[k] = (struct mb_aio_req){.offset = as, .len = ae - as, .buf = r->nbuf + pos, .op = MB_AIO_READ};
        lists[i] = (const uint32_t *)(r->nbuf + pos + (s - as));
        pos += ae - as;
        r->st.ssd_bytes += ae - as;
        r->st.ssd_requests++;
        r->st.ssd_tx += ceil_div(ceil_div(e, r->ssds) * r->ssds - s / r->ssds * r->ssds, r->cls);
    }
    if (mode == GNN_AIO) {
        int e = ds->sto.ops->submit(&ds->sto, r->reqs, nmiss, &r->n_ticket);
        if (e) {
            snprintf(r->err, sizeof(r->err), "%.300s: submitting %zu neighbour reads: %s", ds->dir, nmiss,
                     strerror(-e));
            return -1;
        }
        r->n_pending = 1;
        r->n_nmiss = nmiss;
        r->n_nodes = nodes;
    }
    return 0;
}

int gnn_read_neighbours_wait(struct gnn_reader *r)
{
    if (!r->n_pending)
        return 0;
    r->n_pending = 0;
    if (r->ds->sto.ops->wait(&r->ds->sto, &r->n_ticket) != 0) {
        for (size_t k = 0; k < r->n_nmiss; k++)
            if (r->reqs[k].status) {
                char f[400];
                snprintf(r->err, sizeof(r->err), "%s: reading the neighbours of node %lld: %s",
                         file_of(r->ds, r->reqs[k].offset, f, sizeof(f)), (long long)r->n_nodes[r->miss[k]],
                         strerror(-r->reqs[k].status));
                break;
            }
        return -1;
    }
    return 0;
}

int gnn_read_neighbours(struct gnn_reader *r, const int64_t *nodes, size_t n, const uint32_t **lists,
                        uint32_t *deg)
{
    if (gnn_read_neighbours_submit(r, nodes, n, lists, deg))
        return -1;
    return gnn_read_neighbours_wait(r);
}

int gnn_gather_submit(struct gnn_reader *r, const int64_t *nodes, size_t n, float *out)
{
    struct gnn_dataset *ds = r->ds;
    const struct gnn_header *h = &ds->h;
    const size_t rb = h->row_bytes, dim = (size_t)h->dim;
    if (r->g_pending) {
        snprintf(r->err, sizeof(r->err), "gather submitted while another is in flight");
        return -1;
    }
    if (mb_grow((void **)&r->gids, &r->gids_cap, n ? n : 1, sizeof(int64_t))) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        return -1;
    }
    memcpy(r->gids, nodes, n * sizeof(int64_t));
    nodes = r->gids;
    r->g_n = n;
    r->g_out = out;
    r->g_nmiss = 0;
    r->g_staged = 0;
    if (mb_grow((void **)&r->gmiss, &r->gmiss_cap, n, sizeof(size_t))) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        return -1;
    }
    r->st.feat_rows += n;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)nodes[i];
        float *dst = out + i * dim;
        if (r->cache) {
            const float *row;
            enum gnn_tier t = gnn_cache_feat(r->cache, v, &row);
            if (t != GNN_TIER_NONE) {
                memcpy(dst, row, rb);
                if (t == GNN_TIER_DEV) {
                    r->st.feat_dev_hits++;
                } else {
                    r->st.feat_host_hits++;
                    r->st.mem_tx += mem_tx(r, rb);
                }
                continue;
            }
        }
        r->st.feat_misses++;
        switch (ds->o.feat) {
        case GNN_MEM:
            memcpy(dst, ds->feat_mem + v * dim, rb);
            r->st.mem_tx += mem_tx(r, rb);
            break;
        case GNN_MMAP:
            gnn_map_copy(ds, h->off_feat + v * rb, dst, rb);
            r->st.ssd_bytes += rb;
            r->st.ssd_requests++;
            r->st.ssd_tx += ceil_div(ceil_div(rb, r->ssds) * r->ssds, r->cls);
            break;
        case GNN_AIO:
            r->gmiss[r->g_nmiss++] = i;
            break;
        }
    }
    r->g_pending = 1;
    size_t nm = r->g_nmiss;
    if (ds->o.feat != GNN_AIO || nm == 0)
        return 0;
    if (mb_grow((void **)&r->greqs, &r->greqs_cap, nm, sizeof(struct mb_aio_req))) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        r->g_pending = 0;
        return -1;
    }
    /* rows are 512 B multiples: read straight into out when it is aligned */
    int direct = ((uintptr_t)out % 512) == 0;
    if (!direct) {
        if (grow_aligned(&r->stage, &r->stage_cap, nm * rb)) {
            snprintf(r->err, sizeof(r->err), "out of memory for the staging buffer");
            r->g_pending = 0;
            return -1;
        }
        r->g_staged = 1;
    }
    for (size_t k = 0; k < nm; k++) {
        size_t i = r->gmiss[k];
        uint64_t v = (uint64_t)nodes[i];
        void *buf = direct ? (void *)(out + i * dim) : (void *)(r->stage + k * rb);
        r->greqs[k] = (struct mb_aio_req){.offset = h->off_feat + v * rb, .len = rb, .buf = buf, .op = MB_AIO_READ};
    }
    r->st.ssd_requests += nm;
    r->st.ssd_bytes += nm * rb;
    r->st.ssd_tx += nm * ceil_div(ceil_div(rb, r->ssds) * r->ssds, r->cls);
    int e = ds->sto.ops->submit(&ds->sto, r->greqs, nm, &r->g_ticket);
    if (e) {
        snprintf(r->err, sizeof(r->err), "%.300s: submitting %zu feature reads: %s", ds->dir, nm, strerror(-e));
        r->g_pending = 0;
        return -1;
    }
    r->g_pending = 2;
    return 0;
}

int gnn_gather_wait(struct gnn_reader *r)
{
    struct gnn_dataset *ds = r->ds;
    const struct gnn_header *h = &ds->h;
    const size_t dim = (size_t)h->dim;
    if (!r->g_pending) {
        snprintf(r->err, sizeof(r->err), "no gather in flight");
        return -1;
    }
    int rc = 0;
    if (r->g_pending == 2) {
        if (ds->sto.ops->wait(&ds->sto, &r->g_ticket) != 0) {
            for (size_t k = 0; k < r->g_nmiss; k++)
                if (r->greqs[k].status) {
                    char f[400];
                    snprintf(r->err, sizeof(r->err), "%s: reading the features of node %lld: %s",
                             file_of(ds, r->greqs[k].offset, f, sizeof(f)), (long long)r->gids[r->gmiss[k]],
                             strerror(-r->greqs[k].status));
                    break;
                }
            rc = -1;
        }
        if (r->g_staged)
            for (size_t k = 0; k < r->g_nmiss; k++)
                memcpy(r->g_out + r->gmiss[k] * dim, r->stage + k * h->row_bytes, h->row_bytes);
    }
    r->g_pending = 0;
    if (rc || !r->verify)
        return rc;
    rc = 0;
    for (size_t i = 0; i < r->g_n; i++) {
        size_t bad = gnn_verify_row(h, (uint64_t)r->gids[i], r->g_out + i * dim, r->verify >= 2);
        r->st.verified_rows++;
        if (bad) {
            if (!r->st.verify_failures)
                r->st.first_bad_node = (uint64_t)r->gids[i];
            r->st.verify_failures++;
            if (!rc)
                snprintf(r->err, sizeof(r->err), "%.300s: feature row of node %lld is wrong at element %zu",
                         ds->dir, (long long)r->gids[i], bad - 1);
            rc = GNN_ERR_VERIFY;
        }
    }
    return rc;
}

int gnn_gather(struct gnn_reader *r, const int64_t *nodes, size_t n, float *out)
{
    if (gnn_gather_submit(r, nodes, n, out))
        return -1;
    return gnn_gather_wait(r);
}

struct gnn_dataset *gnn_reader_dataset(const struct gnn_reader *r) { return r->ds; }

void gnn_reader_set_error(struct gnn_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
}

void gnn_reader_bad_neighbour(struct gnn_reader *r, uint64_t node, uint32_t pos, uint64_t value)
{
    const struct gnn_header *h = &r->ds->h;
    uint64_t at = h->off_neigh + 4 * (r->ds->offsets[node] + pos), devoff;
    int dev;
    mb_aio_map(at, h->stripe, (int)h->ndev, &dev, &devoff);
    snprintf(r->err, sizeof(r->err),
             "%.300s/data.%d: neighbour %u of node %llu is %llu, not one of the %llu nodes (corrupted topology at "
             "byte %llu)",
             r->ds->dir, dev, pos, (unsigned long long)node, (unsigned long long)value, (unsigned long long)h->n,
             (unsigned long long)devoff);
}
