/* What the trainer measures beside the epochs: the engine's random-read
 * rate, the host copy rate, the rows an epoch read from storage (its cache
 * misses, found again by resampling) and the rate storage sustains on
 * them at the pipeline's depth. */
#include "trainer_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 0, or -1 with the failed read or allocation in err (an error: a rate
 * from fewer reads would not be the one measured). */
int gnn_measure_rand_read(struct gnn_trainer *t, char *err, size_t errlen)
{
    struct gnn_rates *rates = t->cfg.rates;
    if (!isnan(rates->rand_read_Bps))
        return 0;
    const struct gnn_header *h = &t->h;
    struct gnn_reader *r = gnn_reader_new(t->ds, NULL, 0);
    size_t n = 4096 < h->n ? 4096 : (size_t)h->n;
    int64_t *ids = malloc(n * sizeof(int64_t));
    float *x = gnn_alloc_rows(t->ds, n);
    double best = 0;
    int failed = !r || !ids || !x;
    if (failed)
        snprintf(err, errlen, "the engine's random-read rate: out of memory for %zu rows", n);
    for (int rep = 0; rep < 3 && !failed; rep++) {
        for (size_t i = 0; i < n; i++)
            ids[i] = (int64_t)(gnn_hash4(77, (uint64_t)rep, i, 0) % h->n);
        double t0 = mb_now();
        /* the engine path: a few large batches, as the pipeline submits them */
        int rc = gnn_gather(r, ids, n, x);
        double dt = mb_now() - t0;
        if (rc) {
            snprintf(err, errlen, "the engine's random-read rate: %s", gnn_reader_error(r));
            failed = 1;
        } else if (dt > 0 && (double)n * (double)h->row_bytes / dt > best)
            best = (double)n * (double)h->row_bytes / dt;
    }
    if (!failed)
        rates->rand_read_Bps = best;
    free(ids);
    if (x)
        gnn_free_rows(t->ds, x);
    gnn_reader_free(r);
    return failed ? -1 : 0;
}

int gnn_measure_memcpy(struct gnn_rates *r, uint64_t row_bytes)
{
    if (!isnan(r->memcpy_Bps))
        return 0;
    /* host copy rate (the "PCIe" of the emulation): rows copied out of a
     * buffer larger than the caches, every destination page read back */
    size_t bytes = 64u << 20;
    char *a = malloc(bytes), *c = malloc(bytes);
    if (!a || !c) {
        free(a);
        free(c);
        return -1;
    }
    memset(a, 1, bytes);
    memset(c, 2, bytes);
    double t0 = mb_now();
    for (size_t off = 0; off + row_bytes <= bytes; off += row_bytes)
        memcpy(c + off, a + (bytes - row_bytes - off), row_bytes);
    double dt = mb_now() - t0;
    volatile unsigned sink = 0;
    for (size_t off = 0; off < bytes; off += 4096)
        sink += (unsigned char)c[off];
    r->memcpy_Bps = dt > 0 ? (double)bytes / dt : NAN;
    free(a);
    free(c);
    return 0;
}

/* The feature rows the first `nb` batches of the last pass (t->order,
 * t->epoch) read from storage (misses of the cache), found by sampling
 * those batches again (sampling is a function of seed, epoch and batch).
 * NULL when none. */
int64_t *gnn_miss_rows(struct gnn_trainer *t, long nb, size_t *n_out, char *err, size_t errlen)
{
    struct gnn_sample smp;
    gnn_sample_init(&smp);
    struct gnn_reader *r = gnn_reader_new(t->ds, t->cache, 0);
    int64_t *rows = NULL;
    size_t n = 0, cap = 0;
    if (!r)
        snprintf(err, errlen, "finding the misses again: out of memory");
    for (long b = 0; r && b < nb; b++) {
        const int64_t *seeds;
        size_t k = gnn_batch_seeds(t->order, t->n_train, t->cfg.batch, t->rank, t->nranks, (size_t)b, &seeds);
        if (k == 0)
            break;
        if (gnn_sample(&smp, &t->cfg.scfg, r, seeds, k, t->epoch, (uint64_t)b) < 0) {
            snprintf(err, errlen, "finding the misses again: sampling batch %ld: %s", b, gnn_reader_error(r));
            break;
        }
        for (size_t i = 0; i < smp.n_nodes; i++) {
            const float *row;
            if (t->cache && gnn_cache_feat(t->cache, (uint64_t)smp.nodes[i], &row) != GNN_TIER_NONE)
                continue;
            if (mb_grow((void **)&rows, &cap, n + 1, sizeof(int64_t)) != 0) {
                snprintf(err, errlen, "finding the misses again: out of memory for %zu rows", n + 1);
                goto out;
            }
            rows[n++] = smp.nodes[i];
        }
    }
out:
    gnn_sample_free(&smp);
    if (r)
        gnn_reader_free(r);
    *n_out = n;
    if (!n) {
        free(rows);
        rows = NULL;
    }
    return rows;
}

/* The rate storage sustains for row reads with `depth` requests per round
 * and the next round submitted before the last one is waited for, as the
 * pipeline's slots keep reads in flight (a barrier between rounds would
 * let the queue drain at every round's tail). The rows are drawn from
 * pool[0..npool), the rows the profile read from storage (the misses the
 * epochs draw from), or uniformly when there is no pool: on an SSD either
 * gives the same rate, but a VM's disk is a file on its host, whose cached
 * blocks read several times faster than the rest, and the epochs re-read
 * their misses (seen: 66 MB/s on uniform rows, 240 MB/s in the epochs). At
 * least 4 rounds, 4096 rows and 0.25 s, so that a few slow moments of a
 * shared disk average out; with `once`, the pool itself, each row once, in
 * order. Bytes/s; NAN with the failed read or allocation in err. */
double gnn_measure_io_rate(struct gnn_trainer *t, size_t depth, const int64_t *pool, size_t npool, int once,
                           char *err, size_t errlen)
{
    const struct gnn_header *h = &t->h;
    if (depth < 1)
        depth = 1;
    if (depth > 65536)
        depth = 65536;
    /* the pipeline is stopped here: two slots lend their row buffers, so
     * the rounds hold at most a slot's rows each (what the budget check
     * counted); without two slots, as many rows of their own */
    int lend = t->st.nslots >= 2 && t->slot[0].x && t->slot[1].x;
    uint64_t need = gnn_slot_rows_need(&t->cfg, h);
    size_t most = lend ? (t->slot[0].x_rows < t->slot[1].x_rows ? t->slot[0].x_rows : t->slot[1].x_rows)
                       : (size_t)(need < 512 ? 512 : need);
    if (depth > most)
        depth = most;
    if (once && npool && depth > npool)
        depth = npool;
    struct gnn_reader *r[2] = {gnn_reader_new(t->ds, NULL, 0), gnn_reader_new(t->ds, NULL, 0)};
    int64_t *ids[2] = {malloc(depth * sizeof(int64_t)), malloc(depth * sizeof(int64_t))};
    float *x[2] = {lend ? t->slot[0].x : gnn_alloc_rows(t->ds, depth), lend ? t->slot[1].x : gnn_alloc_rows(t->ds, depth)};
    double bytes = 0, t0 = mb_now(), secs = 0;
    int rc = r[0] && r[1] && ids[0] && ids[1] && x[0] && x[1] && (!once || npool) ? 0 : -1, pending[2] = {0, 0};
    if (rc)
        snprintf(err, errlen, "the storage rate: out of memory for %zu rows", depth);
    size_t count[2] = {0, 0};
    for (uint64_t round = 0; rc == 0; round++) {
        int k = (int)(round & 1);
        secs = mb_now() - t0;
        int more = once ? round * depth < npool : round < 4 || bytes < 4096.0 * (double)h->row_bytes || secs < 0.25;
        if (more) {
            count[k] = once && npool - round * depth < depth ? npool - round * depth : depth;
            for (size_t i = 0; i < count[k]; i++)
                ids[k][i] = once    ? pool[round * depth + i]
                            : npool ? pool[gnn_hash4(78, round, i, depth) % npool]
                                    : (int64_t)(gnn_hash4(78, round, i, depth) % h->n);
            rc = gnn_gather_submit(r[k], ids[k], count[k], x[k]);
            pending[k] = rc == 0;
            if (rc)
                snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[k]));
        }
        if (rc == 0 && pending[!k]) { /* the previous round, while this one is in flight */
            rc = gnn_gather_wait(r[!k]);
            pending[!k] = 0;
            if (rc)
                snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[!k]));
            bytes += (double)count[!k] * (double)h->row_bytes;
        }
        if (!more && !pending[k])
            break;
    }
    secs = mb_now() - t0;
    for (int k = 0; k < 2; k++) {
        if (pending[k] && gnn_gather_wait(r[k]) && rc == 0) {
            snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[k]));
            rc = -1;
        }
        free(ids[k]);
        if (x[k] && !lend)
            gnn_free_rows(t->ds, x[k]);
        if (r[k])
            gnn_reader_free(r[k]);
    }
    return rc == 0 && secs > 0 ? bytes / secs : NAN;
}

/* The bound's storage side: the engine's rate on the epoch just run's own
 * misses, read again right after it (untimed), each row once, 512 rows a
 * round and two rounds in flight (4 MiB of buffers: at 20% cache and 8
 * slots, hyperion runs within 16 MiB of a 1 GiB budget). A VM's
 * disk is a file on a shared host: random rows read at 41 MB/s on a cold
 * host cache and 314 MB/s warm within a day, so one rate taken before the
 * epochs bounded them wrongly both ways. Ranks read at once and their rates
 * add up (the disk is shared). NAN where features are not read through the
 * engine or nothing missed. */
static double epoch_miss_rate(struct gnn_trainer *t)
{
    t->st.miss_read_rows = 0;
    if (!t->ds || gnn_dataset_feat_access(t->ds) != GNN_AIO)
        return NAN;
    size_t n = 0;
    char err[400] = "";
    int64_t *rows = t->epoch_failed ? NULL : gnn_miss_rows(t, t->st.nbatches, &n, err, sizeof(err));
    t->st.miss_read_rows = n;
    MPI_Barrier(t->cfg.comm);
    double rate = rows ? gnn_measure_io_rate(t, 512, rows, n, 1, err, sizeof(err)) : 0;
    free(rows);
    if (err[0])
        gnn_pass_error(t, err);
    gnn_agree_error(t, 0);
    if (isnan(rate))
        rate = 0;
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_SUM, t->cfg.comm);
    return rate > 0 ? rate : NAN;
}

int gnn_trainer_read_misses(struct gnn_trainer *t)
{
    t->pass_error = 0;
    t->st.miss_rate = epoch_miss_rate(t);
    if (t->pass_error)
        t->epoch_failed = 1;
    return t->pass_error ? -1 : 0;
}
