/* The trainer's pass driver: batches come out of the slot pipeline in
 * order, the training thread steps the model on each (or scores it in a
 * held-out pass), and every rank agrees on failures after the pass. */
#include "trainer_internal.h"

#include <string.h>

void gnn_use_epoch(struct gnn_trainer *t, uint64_t epoch)
{
    size_t ntr;
    const uint32_t *tr = gnn_train_ids(t->ds, &ntr);
    gnn_epoch_order(tr, ntr, t->cfg.seed, epoch, t->order);
    t->epoch = epoch;
}

/* Adds reader r's counts to acc (r may be NULL), and resets them. */
static void add_reader_stats(struct gnn_read_stats *acc, struct gnn_reader *r, int reset)
{
    if (!r)
        return;
    struct gnn_read_stats one;
    gnn_reader_stats(r, &one);
    gnn_read_stats_add(acc, &one);
    if (reset)
        gnn_reader_reset_stats(r);
}

void gnn_collect_stats(struct gnn_trainer *t, struct gnn_read_stats *acc, int reset)
{
    memset(acc, 0, sizeof(*acc));
    for (int i = 0; i < t->st.nslots; i++) {
        add_reader_stats(acc, t->slot[i].srd, reset);
        for (int h = 0; h < GNN_MAX_HOPS; h++)
            add_reader_stats(acc, t->slot[i].hrd[h], reset);
        for (int k = 0; k < t->nshares; k++)
            add_reader_stats(acc, t->slot[i].rd[k], reset);
    }
}

void gnn_pass_error(struct gnn_trainer *t, const char *msg)
{
    if (!t->pass_error)
        snprintf(t->error_msg, sizeof(t->error_msg), "%s", msg);
    t->pass_error = 1;
}

int gnn_agree_error(struct gnn_trainer *t, int rc)
{
    int v[2] = {rc != 0, t->pass_error};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, t->cfg.comm);
    t->pass_error = v[1];
    return v[0] || v[1];
}

long gnn_eval_batches(const struct gnn_trainer *t)
{
    size_t per = t->cfg.batch * (size_t)t->nranks;
    return (long)((t->n_eval + per - 1) / per);
}

/* Message in fail_msg; t->pass_error set where one was an error, not a check. */
int gnn_run_pass(struct gnn_trainer *t, long nb, int eval)
{
    t->eval_mode = eval;
    t->pass_error = 0;
    t->error_msg[0] = 0;
    t->fail_msg[0] = 0;
    int slot, status, failed = 0;
    if (mb_pipe_start(t->pipe, nb) != 0) {
        snprintf(t->fail_msg, sizeof(t->fail_msg), "pipeline not drained");
        gnn_pass_error(t, t->fail_msg);
        failed = 1;
    }
    int started = !failed;
    long b;
    double loss = 0;
    size_t correct = 0, seen = 0;
    t->st.t_train = 0;
    t->st.c_train = 0;
    for (int k = 0; k < 3; k++)
        atomic_store(&t->stage_cpu_ns[k], 0);
    while (started && mb_pipe_next(t->pipe, &slot, &b, &status)) {
        struct gnn_slot *sl = &t->slot[slot];
        /* every rank takes part in every step's allreduce, so a rank with a
         * failed batch trains on nothing and reports the failure after */
        if (status && !failed) {
            failed = 1;
            snprintf(t->fail_msg, sizeof(t->fail_msg), "%s", sl->err[0] ? sl->err : "a pipeline stage failed");
        }
        if (status && !sl->err_verify)
            gnn_pass_error(t, sl->err[0] ? sl->err : "a pipeline stage failed");
        char hit[300];
        if (gnn_budget_hit(t->cfg.budget, hit, sizeof(hit))) {
            if (!failed)
                snprintf(t->fail_msg, sizeof(t->fail_msg), "%s", hit);
            failed = 1;
            gnn_pass_error(t, hit);
        }
        size_t n = status || failed ? 0 : sl->n_seeds;
        double l = 0, t0 = mb_now(), c0 = mb_cpu_s(1);
        size_t ok = 0;
        char err[256] = "";
        int rc = eval ? gnn_model_eval(&t->model, sl->smp.block, sl->x, sl->labels, n, &l, &ok)
                      : gnn_model_step(&t->model, sl->smp.block, sl->x, sl->labels, n, &l, &ok, err, sizeof(err));
        t->st.t_train += mb_now() - t0;
        t->st.c_train += mb_cpu_s(1) - c0;
        if (t->rec && t->nrec < t->rec_cap && !status) {
            double *r = t->rec + 4 * t->nrec++;
            r[0] = sl->t_sample, r[1] = sl->t_submit, r[2] = sl->t_complete, r[3] = mb_now() - t0;
        }
        if (rc && !failed) {
            failed = 1;
            snprintf(t->fail_msg, sizeof(t->fail_msg), "training batch %ld failed%s%s", b, eval ? "" : ": ",
                     eval ? "" : err);
        }
        if (rc)
            gnn_pass_error(t, t->fail_msg);
        loss += l;
        correct += ok;
        seen += n;
        mb_pipe_release(t->pipe, slot);
    }
    /* (failures agreed: every rank takes the same path after a pass) */
    double v[5] = {loss, (double)correct, (double)seen, (double)failed, (double)t->pass_error};
    MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_SUM, t->cfg.comm);
    failed = v[3] > 0;
    t->pass_error = v[4] > 0;
    if (failed && !t->fail_msg[0])
        snprintf(t->fail_msg, sizeof(t->fail_msg), "another rank failed");
    if (eval)
        t->st.acc_val = v[2] > 0 ? v[1] / v[2] : 0;
    else {
        t->st.loss = v[2] > 0 ? v[0] / v[2] : 0;
        t->st.acc_train = v[2] > 0 ? v[1] / v[2] : 0;
    }
    return failed ? -1 : 0;
}
