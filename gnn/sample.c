/* PyG-style neighbour sampling: hop h samples fanout[h] neighbours of
 * every node known so far (the seeds and everything reached before),
 * uniformly without replacement, and appends first-seen neighbours to
 * the node list; destinations are thus the prefix of the sources. */
#include "gnn_internal.h"
#include "../common/common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gnn_parse_fanouts(const char *s, struct gnn_sampler_cfg *cfg)
{
    int h = 0;
    const char *p = s;
    if (!s || !*s)
        return -1;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 1000000 || h == GNN_MAX_HOPS)
            return -1;
        cfg->fanout[h++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    cfg->hops = h;
    return 0;
}

size_t gnn_sample_pick(uint64_t seed, uint64_t epoch, uint64_t batch, int hop, uint64_t node,
                       uint32_t deg, int k, uint32_t *out)
{
    if (k <= 0)
        return 0;
    if (deg <= (uint32_t)k) {
        for (uint32_t i = 0; i < deg; i++)
            out[i] = i;
        return deg;
    }
    /* Floyd's algorithm: k distinct values of [0, deg), each k-subset
     * equally likely */
    uint64_t st = gnn_hash4(seed ^ mb_mix64(epoch + 0x51ed27ULL), batch, (uint64_t)hop, node);
    size_t c = 0;
    for (uint32_t j = deg - (uint32_t)k; j < deg; j++) {
        st = mb_mix64(st);
        uint32_t t = (uint32_t)(((st >> 32) * ((uint64_t)j + 1)) >> 32);
        int seen = 0;
        for (size_t q = 0; q < c; q++)
            if (out[q] == t) {
                seen = 1;
                break;
            }
        out[c++] = seen ? j : t;
    }
    gnn_sort_u32(out, c); /* ascending */
    return c;
}

void gnn_sample_init(struct gnn_sample *s)
{
    memset(s, 0, sizeof(*s));
}

void gnn_sample_free(struct gnn_sample *s)
{
    free(s->nodes);
    for (int h = 0; h < GNN_MAX_HOPS; h++) {
        free(s->ptr[h]);
        free(s->idx[h]);
    }
    free(s->map_key);
    free(s->map_val);
    free(s->lists);
    free(s->degs);
    memset(s, 0, sizeof(*s));
}

static inline size_t slot_of(int64_t key, size_t cap)
{
    return (size_t)(mb_mix64((uint64_t)key) & (cap - 1));
}

static int map_rehash(struct gnn_sample *s, size_t cap)
{
    int64_t *k = malloc(cap * sizeof(*k));
    uint32_t *v = malloc(cap * sizeof(*v));
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    memset(k, 0xff, cap * sizeof(*k));
    for (size_t i = 0; i < s->n_nodes; i++) {
        size_t j = slot_of(s->nodes[i], cap);
        while (k[j] != -1)
            j = (j + 1) & (cap - 1);
        k[j] = s->nodes[i];
        v[j] = (uint32_t)i;
    }
    free(s->map_key);
    free(s->map_val);
    s->map_key = k;
    s->map_val = v;
    s->map_cap = cap;
    return 0;
}

/* Local position of global id g, appending it when new; -1 on no memory. */
static int64_t map_get_add(struct gnn_sample *s, int64_t g)
{
    if ((s->n_nodes + 1) * 2 > s->map_cap) {
        size_t cap = s->map_cap ? s->map_cap * 2 : 1024;
        while ((s->n_nodes + 1) * 2 > cap)
            cap *= 2;
        if (map_rehash(s, cap))
            return -1;
    }
    size_t j = slot_of(g, s->map_cap);
    while (s->map_key[j] != -1) {
        if (s->map_key[j] == g)
            return s->map_val[j];
        j = (j + 1) & (s->map_cap - 1);
    }
    if (mb_grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof(int64_t)))
        return -1;
    s->map_key[j] = g;
    s->map_val[j] = (uint32_t)s->n_nodes;
    s->nodes[s->n_nodes] = g;
    return (int64_t)s->n_nodes++;
}

int gnn_sample_begin(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, const int64_t *seeds,
                     size_t n, uint64_t epoch, uint64_t batch)
{
    if (cfg->hops < 1 || cfg->hops > GNN_MAX_HOPS)
        return -1;
    s->hops = cfg->hops;
    s->hops_done = 0;
    s->epoch = epoch;
    s->batch = batch;
    s->n_nodes = 0;
    s->n_seeds = 0;
    if (s->map_cap)
        memset(s->map_key, 0xff, s->map_cap * sizeof(*s->map_key));
    for (size_t i = 0; i < n; i++)
        if (map_get_add(s, seeds[i]) < 0)
            return -1;
    /* duplicate seeds collapse to one (PyG does the same with unique ids) */
    s->n_seeds = s->n_nodes;
    s->hop_end[0] = s->n_nodes;
    memset(s->block, 0, sizeof(s->block));
    return 0;
}

int gnn_sample_hop_submit(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r)
{
    (void)cfg;
    int h = s->hops_done;
    if (h >= s->hops)
        return 0;
    size_t nd = s->hop_end[h];
    if (nd > s->cap_lists) {
        size_t c = s->cap_lists ? s->cap_lists : 256;
        while (c < nd)
            c *= 2;
        const uint32_t **l = realloc(s->lists, c * sizeof(*l));
        if (!l) {
            gnn_reader_set_error(r, "out of memory for %zu neighbour lists", c);
            return -1;
        }
        s->lists = l;
        uint32_t *dg = realloc(s->degs, c * sizeof(*dg));
        if (!dg) {
            gnn_reader_set_error(r, "out of memory for %zu degrees", c);
            return -1;
        }
        s->degs = dg;
        s->cap_lists = c;
    }
    return gnn_read_neighbours_submit(r, s->nodes, nd, s->lists, s->degs);
}

int gnn_sample_hop(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r)
{
    if (s->hops_done >= s->hops)
        return s->hops;
    if (gnn_sample_hop_submit(s, cfg, r))
        return -1;
    return gnn_sample_hop_finish(s, cfg, r);
}

int gnn_sample_hop_finish(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r)
{
    int h = s->hops_done;
    if (h >= s->hops)
        return s->hops;
    size_t nd = s->hop_end[h];
    int k = cfg->fanout[h];
    if (gnn_read_neighbours_wait(r))
        return -1;
    if (mb_grow((void **)&s->ptr[h], &s->cap_ptr[h], nd + 1, sizeof(int64_t))) {
        gnn_reader_set_error(r, "out of memory for hop %d's %zu nodes", h, nd);
        return -1;
    }
    int64_t *ptr = s->ptr[h];
    ptr[0] = 0;
    for (size_t i = 0; i < nd; i++)
        ptr[i + 1] = ptr[i] + (s->degs[i] < (uint32_t)k ? s->degs[i] : (uint32_t)k);
    size_t ne = (size_t)ptr[nd];
    if (mb_grow((void **)&s->idx[h], &s->cap_idx[h], ne ? ne : 1, sizeof(int64_t))) {
        gnn_reader_set_error(r, "out of memory for hop %d's %zu sampled edges", h, ne);
        return -1;
    }
    int64_t *idx = s->idx[h];
    /* pick (parallel: each node's choice depends only on its own key) */
#pragma omp parallel for schedule(dynamic, 256) if (nd > 4096)
    for (size_t i = 0; i < nd; i++) {
        uint32_t pos[1024], *pp = pos, *heap = NULL;
        if (k > 1024) {
            heap = malloc(sizeof(uint32_t) * (size_t)k);
            pp = heap;
        }
        if (pp) {
            size_t c = gnn_sample_pick(cfg->seed, s->epoch, s->batch, h, (uint64_t)s->nodes[i], s->degs[i],
                                       k, pp);
            for (size_t q = 0; q < c; q++)
                idx[ptr[i] + (int64_t)q] = (int64_t)s->lists[i][pp[q]];
        } else {
            for (int64_t q = ptr[i]; q < ptr[i + 1]; q++)
                idx[q] = -1;
        }
        free(heap);
    }
    /* relabel in order: deterministic positions. A neighbour id comes
     * from disk, unchecked where the topology checksum is not verified:
     * one at or beyond n would index the offsets out of bounds next hop. */
    const uint64_t n_all = gnn_reader_dataset(r)->h.n;
    for (size_t q = 0; q < ne; q++) {
        if (idx[q] < 0) {
            gnn_reader_set_error(r, "out of memory for a fan-out of %d", k);
            return -1;
        }
        if ((uint64_t)idx[q] >= n_all) {
            size_t i = 0;
            while (i + 1 < nd && (size_t)ptr[i + 1] <= q)
                i++;
            uint32_t pos = 0;
            while (pos < s->degs[i] && (int64_t)s->lists[i][pos] != idx[q])
                pos++;
            gnn_reader_bad_neighbour(r, (uint64_t)s->nodes[i], pos, (uint64_t)idx[q]);
            return -1;
        }
        int64_t l = map_get_add(s, idx[q]);
        if (l < 0) {
            gnn_reader_set_error(r, "out of memory for the batch's node list");
            return -1;
        }
        idx[q] = l;
    }
    s->hop_end[h + 1] = s->n_nodes;
    struct nn_sage_block *b = &s->block[s->hops - 1 - h];
    b->n_dst = nd;
    b->n_src = s->n_nodes;
    b->ptr = ptr;
    b->idx = idx;
    s->hops_done = h + 1;
    return h;
}

int gnn_sample(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r,
               const int64_t *seeds, size_t n, uint64_t epoch, uint64_t batch)
{
    if (gnn_sample_begin(s, cfg, seeds, n, epoch, batch)) {
        gnn_reader_set_error(r, "out of memory for %zu seeds", n);
        return -1;
    }
    while (s->hops_done < s->hops)
        if (gnn_sample_hop(s, cfg, r) < 0)
            return -1;
    return 0;
}

void gnn_epoch_order(const uint32_t *ids, size_t n, uint64_t seed, uint64_t epoch, int64_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = ids[i];
    for (size_t i = n; i > 1; i--) {
        uint64_t r = gnn_hash4(seed, 0x0de4ULL, epoch, i);
        size_t j = (size_t)(((r >> 32) * (uint64_t)i) >> 32);
        int64_t t = out[i - 1];
        out[i - 1] = out[j];
        out[j] = t;
    }
}

size_t gnn_num_batches(size_t n, size_t bs, int rank, int nranks)
{
    if (bs == 0 || nranks < 1 || rank < 0 || rank >= nranks)
        return 0;
    size_t total = (n + bs - 1) / bs;
    if ((size_t)rank >= total)
        return 0;
    return (total - (size_t)rank + (size_t)nranks - 1) / (size_t)nranks;
}

size_t gnn_batch_seeds(const int64_t *order, size_t n, size_t bs, int rank, int nranks, size_t b,
                       const int64_t **seeds)
{
    size_t gb = b * (size_t)nranks + (size_t)rank;
    size_t start = gb * bs;
    if (start >= n) {
        *seeds = order + n;
        return 0;
    }
    *seeds = order + start;
    return n - start < bs ? n - start : bs;
}
