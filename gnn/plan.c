/* What each system needs under a memory budget, known before any work:
 * the presampling (the cached systems' first step) is deterministic from
 * the seed and reads the topology alone, so it is done here as setup will
 * do it, before any feature I/O, cgroup or result. */
#include "trainer_internal.h"

#include <string.h>

#define ENGINE_ARENA ((uint64_t)64 << 20) /* offload/aio's default arena, touched at open */
/* beyond the terms counted: threads' stacks, io_uring rings, OpenBLAS's
 * buffers, the sampler's arrays, the chunked placement's lists (measured:
 * hyperion at 20% cache of reproduce/hyperion's small scale, 8 slots under
 * 1 GiB, peaks at 1006.6 MiB of anonymous memory, 46 MiB above the terms) */
#define BUDGET_SLACK ((uint64_t)48 << 20)

/* 0, or -1 with err (the run then fails in setup, where it names it). */
int gnn_plan_presample(const struct gnn_trainer_cfg *c, struct gnn_plan *out, char *err, size_t len)
{
    memset(out, 0, sizeof(*out));
    struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
    struct gnn_dataset *ds = gnn_open(c->data, &o, err, len);
    if (!ds)
        return -1;
    struct gnn_reader *r = gnn_reader_new(ds, NULL, 0);
    struct gnn_hotness h;
    int rc = r ? gnn_presample(r, &c->scfg, c->batch, 0, &h) : -1;
    if (rc)
        snprintf(err, len, "presampling: %s", r ? gnn_reader_error(r) : "out of memory");
    if (!rc) {
        out->pre_rows = h.max_batch_rows;
        struct gnn_cache_cfg cc;
        struct gnn_cache_info info;
        memset(&cc, 0, sizeof(cc));
        cc.cap[GNN_TIER_DEV] = c->cache_dev;
        cc.cap[GNN_TIER_HOST] = c->cache_host;
        /* the device tier's fill takes its whole capacity (cache_fill);
         * the host tier's is held to what the budget leaves */
        if (c->cache_dev + c->cache_host && gnn_cache_plan(ds, &h, &cc, &info, err, len) == 0)
            out->pre_placed = (c->cache_fill ? c->cache_dev
                                             : info.feat_bytes[GNN_TIER_DEV] + info.topo_bytes[GNN_TIER_DEV]) +
                              info.feat_bytes[GNN_TIER_HOST] + info.topo_bytes[GNN_TIER_HOST];
        else
            out->pre_placed = c->cache_dev + c->cache_host;
        gnn_hotness_free(&h);
    }
    if (r)
        gnn_reader_free(r);
    gnn_close(ds);
    return rc;
}

/* Dataset arrays, the caches (where the fill adapts to the budget, what
 * their placement of the presampled items holds; else their capacity) and
 * their index, and the larger of two phases: the cache's build (the
 * presampling's counts) and the epochs (every slot's rows at the size of
 * the largest presampled batch, in or beside the engine's arena, with the
 * storage-rate buffers where the slots cannot lend theirs), the model's
 * weights and activations, and a fixed slack. */
uint64_t gnn_plan_need(const struct gnn_trainer_cfg *c, const struct gnn_header *hdr, const struct gnn_plan *plan,
                       const struct gnn_system *sys, char *what, size_t len)
{
    struct gnn_trainer_cfg cp = *c;
    const uint64_t pre_rows = plan ? plan->pre_rows : 0;
    cp.pre_rows = pre_rows;
    const uint64_t rb = hdr->row_bytes, n = hdr->n, rows = gnn_slot_rows_need(&cp, hdr);
    const int engine = sys->feat != GNN_MMAP;
    const uint64_t slots = sys->pipelined ? (uint64_t)c->slots : 1;
    uint64_t data = 8 * (n + 1) + 4 * n + 12 * (hdr->n_train + hdr->n_val);
    uint64_t held = pre_rows ? plan->pre_placed : c->cache_dev + c->cache_host;
    uint64_t cache = sys->cached ? held + 16 * n : 0; /* + index */
    uint64_t build = sys->cached ? 8 * n + 8 * hdr->n_train : 0; /* presample counts and order */
    uint64_t slot_bytes = slots * rows * rb;
    /* the storage rate's two buffers: borrowed from two idle slots where
     * there are two (gnn_measure_io_rate), else at most a slot's rows each */
    uint64_t mrows = slots >= 2 ? (rows < 512 ? 512 : 0) : (rows < 512 ? 512 : rows);
    uint64_t measure = engine ? 2 * mrows * rb : 0;
    uint64_t arena = engine ? ENGINE_ARENA : 0;
    uint64_t epochs = slot_bytes + measure > arena ? slot_bytes + measure - arena : 0;
    uint64_t params = 0, act = 0, tgt = c->batch, frontier = c->batch;
    const struct gnn_sampler_cfg *sc = &c->scfg;
    for (int l = sc->hops - 1; l >= 0; l--) { /* layer l's targets: the nodes within hops-1-l hops */
        uint64_t in = l == 0 ? (uint64_t)hdr->dim : (uint64_t)c->hidden;
        uint64_t out = l == sc->hops - 1 ? (uint64_t)hdr->classes : (uint64_t)c->hidden;
        uint64_t t = tgt < rows ? tgt : rows;
        params += 2 * in * out + out;
        /* the aggregate and the output, and for layers past the first their
         * gradients (the features need none) */
        act += l == 0 ? 4 * t * (in + 3 * out) : 4 * t * (2 * in + 2 * out);
        frontier *= (uint64_t)sc->fanout[sc->hops - 1 - l];
        tgt += frontier;
    }
    uint64_t model = 16 * params + act; /* weights, gradients, Adam's two moments */
    uint64_t need = data + cache + arena + (epochs + model > build ? epochs + model : build) + BUDGET_SLACK;
    char fanout[64] = "";
    for (int i = 0, k = 0; i < sc->hops; i++)
        k += snprintf(fanout + k, sizeof(fanout) - (size_t)k, "%s%d", i ? "," : "", sc->fanout[i]);
    snprintf(what, len,
             "%s needs %.1f MiB: --slots %llu x %llu rows (--batch %zu, --fanout %s: the largest presampled batch "
             "%s) x %llu B = %.1f MiB%s, caches (--cache-dev + --cache-host%s) and their index %.1f MiB, model "
             "%.1f MiB, dataset arrays %.1f MiB, %.0f MiB slack",
             sys->name, (double)need / 1048576.0, (unsigned long long)slots, (unsigned long long)rows, c->batch,
             c->fanout_text ? c->fanout_text : fanout, pre_rows ? "and a quarter" : "unknown: at most", (unsigned long long)rb,
             (double)slot_bytes / 1048576.0, engine ? " in or beside the engine's 64 MiB arena" : "",
             pre_rows ? ": what the placement holds" : "", (double)cache / 1048576.0,
             (double)model / 1048576.0, (double)data / 1048576.0, (double)BUDGET_SLACK / 1048576.0);
    return need;
}

int gnn_plan_check(const struct gnn_trainer_cfg *c, const struct gnn_header *h, unsigned mask, uint64_t bytes,
                   uint64_t *pre_rows, char *msg, size_t len)
{
    struct gnn_plan pl;
    *pre_rows = 0;
    if (gnn_plan_presample(c, &pl, msg, len) != 0)
        return -1;
    *pre_rows = pl.pre_rows;
    for (size_t i = 0; i < gnn_nsystems(); i++) {
        char what[600];
        const struct gnn_system *sys = gnn_system_at(i);
        uint64_t need = gnn_plan_need(c, h, &pl, sys, what, sizeof(what));
        if ((mask & (1u << i)) && !sys->upper_bound && need > bytes) {
            snprintf(msg, len,
                     "--mem-budget %.1f MiB (%llu B): %s (%llu B); give fewer --slots, a smaller --batch, --fanout or "
                     "--cache-host, or a larger --mem-budget",
                     (double)bytes / 1048576.0, (unsigned long long)bytes, what, (unsigned long long)need);
            return 1;
        }
    }
    return 0;
}
