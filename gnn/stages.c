/* The trainer's slot pipeline: a batch lives in a slot while three stage
 * teams prepare it for training over common/'s mb_pipe runtime: sample
 * (the neighbour sampler; with the intra-batch overlap it also sends each
 * hop's known nodes' rows to the engine), submit (cache lookups and the
 * engine submission of the rest, split in shares over the team) and
 * complete (wait for the reads, copy, verify). */
#include "trainer_internal.h"

#include <errno.h>
#include <omp.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

uint64_t gnn_batch_rows_bound(const struct gnn_trainer_cfg *c, const struct gnn_header *h)
{
    double rows = (double)c->batch, frontier = rows;
    for (int i = 0; i < c->scfg.hops; i++) {
        frontier *= (double)c->scfg.fanout[i];
        rows += frontier;
    }
    return rows < (double)h->n ? (uint64_t)rows : h->n;
}

uint64_t gnn_slot_rows_need(const struct gnn_trainer_cfg *c, const struct gnn_header *h)
{
    uint64_t bound = gnn_batch_rows_bound(c, h), rows = c->pre_rows ? c->pre_rows + c->pre_rows / 4 : bound;
    return rows < bound ? rows : bound;
}

/* stage_nice: once per stage thread (Linux: nice is per thread) */
static void stage_thread_nice(int nice)
{
    static _Thread_local int done;
    if (done || !nice)
        return;
    done = 1;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) != 0)
        mb_warn("--stage-nice: %s (stage threads keep their priority)", strerror(errno));
}

/* Completes the slot's intra-batch gathers in flight; the first error
 * goes to sl->err. 0, or 1. */
static int wait_hop_gathers(const struct gnn_trainer *t, struct gnn_slot *sl, long b)
{
    int rc = 0;
    for (int h = 0; h < t->cfg.scfg.hops; h++)
        if (sl->hpending[h]) {
            int e = gnn_gather_wait(sl->hrd[h]);
            if (e && !rc) {
                snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->hrd[h]));
                sl->err_verify = e == GNN_ERR_VERIFY;
                rc = 1;
            }
            sl->hpending[h] = 0;
        }
    return rc;
}

/* Room for `rows` feature rows in the slot: a larger buffer keeps the
 * rows gathered so far (their reads are completed first). 0, or 1. */
int gnn_slot_rows(struct gnn_trainer *t, struct gnn_slot *sl, size_t rows, long b)
{
    if (rows <= sl->x_rows)
        return 0;
    /* (the bound is what the budget check counted) */
    size_t want = rows + rows / 4, bound = (size_t)gnn_batch_rows_bound(&t->cfg, &t->h);
    if (want > bound)
        want = rows > bound ? rows : bound;
    float *x = gnn_alloc_rows(t->ds, want);
    if (!x) {
        snprintf(sl->err, sizeof(sl->err), "batch %ld: out of memory for %zu feature rows", b, rows);
        return 1;
    }
    int rc = wait_hop_gathers(t, sl, b);
    if (sl->fed)
        memcpy(x, sl->x, sl->fed * t->h.row_bytes);
    gnn_free_rows(t->ds, sl->x);
    sl->x = x;
    sl->x_rows = want;
    return rc;
}

static void add_cpu(struct gnn_trainer *t, int stage, double c0)
{
    atomic_fetch_add(&t->stage_cpu_ns[stage], (long long)(1e9 * (mb_cpu_s(1) - c0)));
}

/* Samples hop after hop; each hop's topology reads in flight while the
 * features of the nodes known so far are looked up and sent to the engine. */
static int sample_overlapped(struct gnn_trainer *t, struct gnn_slot *sl, const int64_t *seeds, size_t n,
                             uint64_t ep, long b)
{
    const struct gnn_sampler_cfg *sc = &t->cfg.scfg;
    const size_t dim = (size_t)t->h.dim;
    if (gnn_sample_begin(&sl->smp, sc, seeds, n, ep, (uint64_t)b)) {
        snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: out of memory", b);
        return 1;
    }
    for (int h = 0; h < sc->hops; h++) {
        if (gnn_sample_hop_submit(&sl->smp, sc, sl->srd)) {
            snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
            return 1;
        }
        size_t known = sl->smp.hop_end[h];
        if (known > sl->fed) {
            if (gnn_slot_rows(t, sl, known, b))
                return 1;
            if (gnn_gather_submit(sl->hrd[h], sl->smp.nodes + sl->fed, known - sl->fed, sl->x + sl->fed * dim)) {
                snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->hrd[h]));
                return 1;
            }
            sl->hpending[h] = 1;
            sl->fed = known;
        }
        if (gnn_sample_hop_finish(&sl->smp, sc, sl->srd) < 0) {
            snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
            return 1;
        }
    }
    return 0;
}

static int sample_stage_run(struct gnn_trainer *t, int slot, long b)
{
    omp_set_num_threads(1); /* this stage thread's own work only (per-thread setting) */
    struct gnn_slot *sl = &t->slot[slot];
    const size_t bs = t->cfg.batch;
    double t0 = mb_now();
    const int64_t *seeds = NULL;
    size_t n;
    if (t->eval_mode) {
        size_t lo = ((size_t)b * (size_t)t->nranks + (size_t)t->rank) * bs;
        n = lo < t->n_eval ? t->n_eval - lo : 0;
        if (n > bs)
            n = bs;
        seeds = t->eval_ids + (n ? lo : 0);
    } else {
        n = gnn_batch_seeds(t->order, t->n_train, bs, t->rank, t->nranks, (size_t)b, &seeds);
    }
    sl->n_seeds = n;
    sl->err[0] = 0;
    sl->err_verify = 0;
    if (n == 0) {
        sl->t_sample = mb_now() - t0;
        return 0;
    }
    uint64_t ep = t->eval_mode ? 1000000 + t->epoch : t->epoch;
    wait_hop_gathers(t, sl, b); /* left by a failed batch: its error is already reported */
    sl->err[0] = 0;
    sl->err_verify = 0;
    sl->fed = 0;
    if (!t->st.overlap) {
        if (gnn_sample(&sl->smp, &t->cfg.scfg, sl->srd, seeds, n, ep, (uint64_t)b) < 0) {
            snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
            return 1;
        }
    } else if (sample_overlapped(t, sl, seeds, n, ep, b)) {
        return 1;
    }
    const int32_t *lab = gnn_labels(t->ds);
    for (size_t i = 0; i < n; i++)
        sl->labels[i] = lab[seeds[i]];
    if (gnn_slot_rows(t, sl, sl->smp.block[0].n_src, b))
        return 1;
    sl->t_sample = mb_now() - t0;
    return 0;
}

static int sample_stage(void *ctx, int slot, long b, int tid, int nt)
{
    struct gnn_trainer *t = ctx;
    stage_thread_nice(t->cfg.stage_nice);
    (void)tid, (void)nt;
    double c0 = mb_cpu_s(1);
    int rc = sample_stage_run(t, slot, b);
    add_cpu(t, 0, c0);
    return rc;
}

/* share k of a batch's input rows */
static void share(size_t rows, int k, int K, size_t *lo, size_t *hi)
{
    *lo = rows * (size_t)k / (size_t)K;
    *hi = rows * (size_t)(k + 1) / (size_t)K;
}

/* A submit or complete team thread's batch: NULL when it has no seeds. */
static struct gnn_slot *team_slot(struct gnn_trainer *t, int slot)
{
    omp_set_num_threads(1); /* this stage thread's own work only (per-thread setting) */
    stage_thread_nice(t->cfg.stage_nice);
    struct gnn_slot *sl = &t->slot[slot];
    return sl->n_seeds ? sl : NULL;
}

static int submit_stage(void *ctx, int slot, long b, int tid, int nt)
{
    struct gnn_trainer *t = ctx;
    struct gnn_slot *sl = team_slot(t, slot);
    if (!sl)
        return 0;
    double t0 = mb_now(), c0 = mb_cpu_s(1);
    size_t rows = sl->smp.block[0].n_src, dim = (size_t)t->h.dim, fed = sl->fed;
    for (int k = tid; k < t->nshares; k += nt) {
        size_t lo, hi;
        share(rows - fed, k, t->nshares, &lo, &hi);
        lo += fed, hi += fed;
        if (hi > lo && gnn_gather_submit(sl->rd[k], sl->smp.nodes + lo, hi - lo, sl->x + lo * dim) != 0) {
            snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->rd[k]));
            return 1;
        }
    }
    if (tid == 0)
        sl->t_submit = mb_now() - t0;
    add_cpu(t, 1, c0);
    return 0;
}

static int complete_stage(void *ctx, int slot, long b, int tid, int nt)
{
    struct gnn_trainer *t = ctx;
    struct gnn_slot *sl = team_slot(t, slot);
    if (!sl)
        return 0;
    double t0 = mb_now(), c0 = mb_cpu_s(1);
    size_t rows = sl->smp.block[0].n_src, fed = sl->fed;
    int rc = tid == 0 ? wait_hop_gathers(t, sl, b) : 0;
    for (int k = tid; k < t->nshares; k += nt) {
        size_t lo, hi;
        share(rows - fed, k, t->nshares, &lo, &hi);
        int e = hi > lo ? gnn_gather_wait(sl->rd[k]) : 0;
        if (e) {
            snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->rd[k]));
            sl->err_verify = e == GNN_ERR_VERIFY;
            return 1;
        }
    }
    if (tid == 0)
        sl->t_complete = mb_now() - t0;
    add_cpu(t, 2, c0);
    return rc;
}

const struct mb_stage *gnn_stage_defs(const struct gnn_trainer *t, int sample_instances, struct mb_stage st[3])
{
    st[0] = (struct mb_stage){"sample", 1, sample_stage, sample_instances};
    st[1] = (struct mb_stage){"submit", t->cfg.sub_threads, submit_stage, 1};
    st[2] = (struct mb_stage){"complete", t->cfg.comp_threads, complete_stage, 1};
    return st;
}
