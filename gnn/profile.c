/* The TPC model's profiling run (untimed, before the first epoch), with a
 * throwaway copy of the model (the measured model is untouched):
 * - serial phase: profile_batches batches with one batch in flight, so
 *   each stage is timed alone. Stage walls are means over the batches
 *   (mean_col); I/O waits are walls less CPU.
 * - pipelined phase (pipelined systems): as many other batches through the
 *   pipeline itself, for the CPU each stage spends per batch while they
 *   share the cores and caches.
 * CPU times and traffic are plain means (traffic over both phases: with
 * small batches 20 of them read 10% less than an epoch's mean). Then the
 * storage rate, on rows the last phase read from storage. The host steal
 * over the whole run is recorded beside it. */
#include "trainer_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_EPOCH 0x70726f66ull /* sampling epoch of the profiling run ("prof") */

/* Mean of column c of n rows of 4. MVA's demands are mean service times,
 * so every batch counts: a batch another process held up on this shared
 * machine is part of what the epochs see too (the host steal over the
 * profile is recorded beside it). */
static double mean_col(const double *rec, long n, int c)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += rec[4 * i + c];
    return n > 0 ? sum / (double)n : NAN;
}

/* The profile's CPU per batch from the last pass of n batches that took
 * `cpu` process CPU seconds: stage threads, training, the rest. */
static void profile_cpu(struct gnn_trainer *t, double cpu, double n, double ar_cpu)
{
    struct gnn_profile *f = &t->st.prof;
    f->cpu_sample = 1e-9 * (double)atomic_load(&t->stage_cpu_ns[0]) / n;
    f->cpu_lookup = 1e-9 * (double)atomic_load(&t->stage_cpu_ns[1]) / n;
    f->cpu_complete = 1e-9 * (double)atomic_load(&t->stage_cpu_ns[2]) / n;
    /* (the allreduce's polling is left out of training's and of the rest's CPU) */
    f->cpu_train = fmax(0, t->st.c_train - ar_cpu) / n;
    f->cpu_other = fmax(0, (cpu - ar_cpu) / n - f->cpu_sample - f->cpu_lookup - f->cpu_complete - f->cpu_train);
}

/* The gradient allreduce when every rank arrives at once: the median of
 * 9 after a barrier each (an odd count: the median is one of them), on the
 * throwaway model's packed gradients, into *out (0 with one rank).
 * Collective. 0, or -1 when the allreduce failed. */
static int allreduce_synced(struct gnn_trainer *t, double *out)
{
    struct gnn_model *m = &t->model;
    *out = 0;
    if (!m->coll || !m->algo || m->nranks <= 1)
        return 0;
    double v[9];
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 9; i++) {
        MPI_Barrier(t->cfg.comm);
        struct mb_coll_args a = {MB_COLL_ALLREDUCE, NULL, m->flat, m->nparams, MB_COLL_FLOAT, MB_COLL_SUM, 0};
        double t0 = mb_now();
        if (rc == MPI_SUCCESS)
            rc = m->algo->run(m->coll, &a);
        v[i] = mb_now() - t0;
    }
    if (rc != MPI_SUCCESS) {
        gnn_pass_error(t, "profiling run: the synchronised gradient allreduce failed");
        return -1;
    }
    *out = mb_median(v, 9);
    return 0;
}

/* The serial phase's stage walls into t->st.prof. 0, or -1 (out of memory). */
static int serial_walls(struct gnn_trainer *t, struct mb_pipe *serial, long nb, int rc)
{
    struct gnn_profile *f = &t->st.prof;
    double n = (double)nb;
    if (!t->rec && rc == 0) {
        gnn_pass_error(t, "profiling run: out of memory for the per-batch stage times");
        rc = -1;
    }
    t->st.prof_t_source = "means over the profiled batches (mean_col)";
    if (t->nrec == nb) {
        f->t_sample = mean_col(t->rec, nb, 0);
        f->t_lookup = mean_col(t->rec, nb, 1);
        f->t_complete = mean_col(t->rec, nb, 2);
        f->t_train = mean_col(t->rec, nb, 3);
        if (rc == 0 && (isnan(f->t_sample) || isnan(f->t_lookup) || isnan(f->t_complete) || isnan(f->t_train))) {
            gnn_pass_error(t, "profiling run: no stage times");
            rc = -1;
        }
    } else { /* (a batch without seeds) */
        t->st.prof_t_source = "plain means of the stages' busy time (a batch had no seeds: no per-batch times)";
        f->t_sample = mb_pipe_stage_busy(serial, 0) / n;
        f->t_lookup = mb_pipe_stage_busy(serial, 1) / n;
        f->t_complete = mb_pipe_stage_busy(serial, 2) / n;
        f->t_train = t->st.t_train / n;
    }
    return rc;
}

/* The pipelined phase: CPU per batch while the stages share the cores. */
static int pipelined_phase(struct gnn_trainer *t, long nb, struct gnn_read_stats *rs_pipe)
{
    int rc = 0;
    /* every slot's row buffer at the size the budget allows for it (the
     * largest presampled batch), touched: otherwise the lookups here
     * page-fault into buffers still growing, which the epochs' steady
     * state does not (8 ms of lookup CPU per batch against 3) */
    for (int i = 0; i < t->st.nslots && rc == 0; i++) {
        struct gnn_slot *sl = &t->slot[i];
        rc = gnn_slot_rows(t, sl, (size_t)t->st.max_batch_rows, -1) ? -1 : 0;
        if (rc)
            gnn_pass_error(t, sl->err);
        else if (sl->x)
            memset(sl->x, 0, sl->x_rows * t->h.row_bytes);
    }
    rc = gnn_agree_error(t, rc) ? -1 : 0;
    /* then, untimed, two batches per slot, as in the epochs' steady state */
    gnn_use_epoch(t, PROFILE_EPOCH + 2);
    if (rc == 0)
        rc = gnn_run_pass(t, 2 * t->st.nslots < t->st.nbatches ? 2 * t->st.nslots : t->st.nbatches, 0);
    gnn_collect_stats(t, rs_pipe, 1); /* (the warm-up's traffic is left out) */
    gnn_use_epoch(t, PROFILE_EPOCH + 3);
    double c0 = mb_cpu_s(0), ar0 = t->model.allreduce_cpu_s;
    if (rc == 0)
        rc = gnn_run_pass(t, nb, 0);
    double cpu = mb_cpu_s(0) - c0;
    gnn_collect_stats(t, rs_pipe, 1);
    profile_cpu(t, cpu, (double)nb, t->model.allreduce_cpu_s - ar0);
    return rc;
}

/* Fills t->st.prof. 0 or -1. */
int gnn_profile_run(struct gnn_trainer *t)
{
    const struct gnn_trainer_cfg *c = &t->cfg;
    /* (more than an epoch's batches where the training set has them: a
     * longer profile averages a shared host's slow moments out) */
    long nb = c->profile_batches < t->all_batches ? c->profile_batches : t->all_batches;
    struct mb_stage defs[3];
    struct mb_pipe *serial = mb_pipe_new(gnn_stage_defs(t, 1, defs), 3, 1, t), *keep_pipe = t->pipe;
    struct gnn_model keep_model = t->model;
    memset(&t->model, 0, sizeof(t->model));
    t->pass_error = 0;
    t->error_msg[0] = 0;
    int bad = !serial || gnn_model_init(&t->model, c->scfg.hops, t->h.dim, c->hidden, t->h.classes, c->lr, c->seed,
                                        c->coll, c->algo, t->nranks) != 0;
    if (bad)
        gnn_pass_error(t, "profiling run: out of memory for its pipeline or model");
    if (gnn_agree_error(t, bad)) {
        if (serial)
            mb_pipe_free(serial);
        if (!bad)
            gnn_model_free(&t->model);
        t->model = keep_model;
        return -1;
    }
    gnn_use_epoch(t, PROFILE_EPOCH);
    double p0 = mb_now(), steal0 = mb_host_steal_s();
    struct gnn_read_stats rs, rs_pipe;
    memset(&rs_pipe, 0, sizeof(rs_pipe));
    t->pipe = serial;
    /* one batch first, untimed: it touches the slot's buffers for the first time */
    int rc = gnn_run_pass(t, 1, 0);
    t->epoch = PROFILE_EPOCH + 1; /* other batches than the warm-up's */
    gnn_collect_stats(t, &rs, 1);
    t->rec = malloc((size_t)nb * 4 * sizeof(double));
    t->nrec = 0;
    t->rec_cap = t->rec ? nb : 0;
    double c0 = mb_cpu_s(0), ar_w0 = t->model.allreduce_s, ar_c0 = t->model.allreduce_cpu_s;
    if (rc == 0)
        rc = gnn_run_pass(t, nb, 0);
    double cpu = mb_cpu_s(0) - c0;
    double ar_wall = t->model.allreduce_s - ar_w0, ar_cpu = t->model.allreduce_cpu_s - ar_c0;
    gnn_collect_stats(t, &rs, 1);
    struct gnn_profile *f = &t->st.prof;
    memset(f, 0, sizeof(*f));
    double n = (double)nb, phases = 1;
    f->batches = n;
    f->batch_size = (double)c->batch;
    f->hops = c->scfg.hops;
    rc = serial_walls(t, serial, nb, rc);
    free(t->rec);
    t->rec = NULL;
    t->pipe = keep_pipe;
    mb_pipe_free(serial);
    profile_cpu(t, cpu, n, ar_cpu);
    f->io_sample = fmax(0, f->t_sample - f->cpu_sample);
    f->io_complete = fmax(0, f->t_complete - f->cpu_complete);
    /* the share of a core one thread gets here: training is CPU only, and
     * in the serial phase no other stage of ours runs beside it, so its
     * CPU over its wall (both less the allreduce's, which waits for the
     * other ranks) is what other processes leave us */
    double compute_wall = f->t_train - ar_wall / n;
    f->cpu_share = compute_wall > 0 && f->cpu_train > 0 ? fmin(1, f->cpu_train / compute_wall) : 1;
    rc = gnn_agree_error(t, rc) ? -1 : 0; /* (every rank takes the same path from here) */
    if (rc == 0 && t->st.nslots > 1) {
        rc = pipelined_phase(t, nb, &rs_pipe);
        phases = 2;
    }
    f->ssd_bytes = (double)(rs.ssd_bytes + rs_pipe.ssd_bytes) / (phases * n);
    f->ssd_requests = (double)(rs.ssd_requests + rs_pipe.ssd_requests) / (phases * n);
    f->ssd_tx = (double)(rs.ssd_tx + rs_pipe.ssd_tx) / (phases * n);
    f->mem_tx = (double)(rs.mem_tx + rs_pipe.mem_tx) / (phases * n);
    if (rc == 0) /* (every rank agreed on rc: all of them call it) */
        rc = allreduce_synced(t, &f->allreduce_s);
    rc = gnn_agree_error(t, rc) ? -1 : 0;
    gnn_model_free(&t->model);
    t->model = keep_model;
    if (rc == 0 && f->ssd_requests > 0) { /* the depth the pipeline keeps: up to two batches' reads */
        size_t npool;
        char err[400] = "";
        int64_t *pool = gnn_miss_rows(t, nb < 16 ? nb : 16, &npool, err, sizeof(err));
        if (!err[0])
            f->io_rate = gnn_measure_io_rate(t, (size_t)llround(f->ssd_requests * (t->st.nslots > 1 ? 2 : 1)), pool,
                                             npool, 0, err, sizeof(err));
        t->st.prof_pool_rows = npool;
        free(pool);
        if (err[0]) {
            gnn_pass_error(t, err);
            rc = -1;
        }
    }
    rc = gnn_agree_error(t, rc) ? -1 : 0;
    t->st.prof_steal = gnn_steal_share(steal0, mb_now() - p0);
    t->st.prof_batches = nb;
    t->st.prof_phases = (int)phases;
    t->st.profiled = rc == 0;
    return rc;
}

int gnn_trainer_profile(struct gnn_trainer *t)
{
    if (t->st.profiled || t->sys->feat == GNN_MMAP)
        return 1;
    if (gnn_profile_run(t) != 0) {
        t->epoch_failed = 1;
        return -1;
    }
    return 0;
}
