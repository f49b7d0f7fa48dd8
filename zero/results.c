/* What a run's ranks measured, gathered to rank 0 (zero.h, "results
 * gathered to rank 0"), and the case's values and lines made from it: the
 * workers' counters per step, peaks and layer CRCs, the first PS's rate
 * panel, the step model beside them. The program only writes them. */
#include "zero.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const zero_worker_value_names[ZERO_NV] = {
    "sent_bytes", "recv_bytes", "compute_s", "exposed_comm_s", "optimizer_s", "step_s",
    "cpu_s", "comm_cpu_s", "progress_thread_cpu_s", "mid_layer_polls", "pace_late_s",
    "median_step_s", "median_compute_s", "median_exposed_comm_s", "median_optimizer_s", "step_p25_s", "step_p75_s",
    "timed_steps"};

void zero_worker_values(const struct zero_run *z, double v[ZERO_NV])
{
    memset(v, 0, ZERO_NV * sizeof(*v));
    if (z->role != ZERO_WORKER)
        return;
    const struct zero_stats *st = &z->st;
    double n = st->steps > 0 ? (double)st->steps : 1;
    v[ZERO_V_SENT] = (double)st->sent_bytes / n, v[ZERO_V_RECV] = (double)st->recv_bytes / n;
    v[ZERO_V_COMPUTE] = st->compute_s / n, v[ZERO_V_WAIT] = st->comm_wait_s / n;
    v[ZERO_V_OPT] = st->optimizer_s / n, v[ZERO_V_STEP] = st->step_s / n;
    v[ZERO_V_CPU] = st->cpu_s / n, v[ZERO_V_COMM_CPU] = st->comm_cpu_s / n;
    v[ZERO_V_PROG_CPU] = zero_comm_thread_cpu_s(z->cc) / n;
    v[ZERO_V_POLLS] = (double)zero_comm_polls(z->cc) / n;
    v[ZERO_V_LATE] = zero_comm_pace_late_s(z->cc) / n;
    zero_step_medians(z, v);
}

void zero_results_gather(struct zero_run *z, struct zero_results *out)
{
    memset(out, 0, sizeof(*out));
    int root = z->rank == 0;
    double mine[ZERO_NV], *all = NULL;
    unsigned long long peak = z->role == ZERO_WORKER ? (unsigned long long)z->alloc_bytes : 0, *peaks = NULL;
    zero_worker_values(z, mine);
    if (root && (!(all = calloc((size_t)z->nranks * ZERO_NV, sizeof(*all))) ||
                 !(peaks = calloc((size_t)z->nranks, sizeof(*peaks)))))
        mb_die(1, "out of memory: gathering the counters");
    MPI_Gather(mine, ZERO_NV, MPI_DOUBLE, all, ZERO_NV, MPI_DOUBLE, 0, z->comm);
    /* each worker's peak: what it allocated for its model (shards, pools,
     * activations, workspace), against the --mem-budget formula */
    MPI_Gather(&peak, 1, MPI_UNSIGNED_LONG_LONG, peaks, 1, MPI_UNSIGNED_LONG_LONG, 0, z->comm);
    /* the first PS's counters (disdp; zeros otherwise) */
    const struct zero_stats *st = &z->st;
    double ps[4] = {st->ps_params, st->ps_adam_s, st->ps_io_busy_s, st->ps_io_bytes}, ps0[4] = {0};
    int ps_rank = z->o.lay.W + z->o.lay.K;
    if (z->o.lay.N > 0 && ps_rank != 0) {
        if (z->rank == ps_rank)
            MPI_Send(ps, 4, MPI_DOUBLE, 0, 7, z->comm);
        else if (root)
            MPI_Recv(ps0, 4, MPI_DOUBLE, ps_rank, 7, z->comm, MPI_STATUS_IGNORE);
    }
    int ncrc = z->L < ZERO_CRC_LAYERS ? z->L : ZERO_CRC_LAYERS;
    for (int i = 0; z->role == ZERO_WORKER && i < ncrc; i++)
        out->crc[i] = zero_layer_crc(z, i);
    if (!root) {
        memset(out, 0, sizeof(*out));
        return;
    }
    out->W = z->o.lay.W, out->v = all, out->peak = peaks, out->ncrc = ncrc;
    out->ps = (struct zero_ps_counters){ps0[0], ps0[1], ps0[2], ps0[3]};
    out->has_ps = ps0[0] > 0;
}

void zero_results_free(struct zero_results *r)
{
    free(r->v), free(r->peak);
    r->v = NULL, r->peak = NULL;
}

void zero_ps_panel(const struct zero_ps_counters *c, double P, int W, double compute_s, struct zero_ps_panel *out)
{
    out->adam_params_s = c->params / c->adam_s;
    out->storage_Bps = c->io_bytes / c->io_busy_s;
    out->update_params_s = c->params / (c->adam_s > c->io_busy_s ? c->adam_s : c->io_busy_s);
    out->workers_fed = W * compute_s * out->update_params_s / P;
}

double zero_model_params(const struct zero_run *z)
{
    double P = 0;
    for (int i = 0; i < z->L; i++)
        P += (double)z->layer[i].numel;
    return P;
}

struct emit {
    void (*put)(void *ctx, const struct zero_metric *m);
    void *ctx;
};

static void emit(const struct emit *e, const char *key, long idx, int kind, long long i, double d, const char *s)
{
    struct zero_metric m = {.idx = idx, .kind = kind, .i = i, .d = d, .s = s};
    snprintf(m.key, sizeof(m.key), "%s", key);
    e->put(e->ctx, &m);
}
#define INT(k, v) emit(e, k, -1, ZERO_M_INT, (long long)(v), 0, NULL)
#define DBL(k, v) emit(e, k, -1, ZERO_M_DBL, 0, v, NULL)
#define STR(k, v) emit(e, k, -1, ZERO_M_STR, 0, 0, v)

/* The prediction beside the measurement. */
static void model_metrics(const struct emit *e, const struct zero_run *z, const struct zero_report *rep)
{
    if (!rep->pred) {
        STR("model_refused", rep->model_why ? rep->model_why : "");
        return;
    }
    const struct zero_model_step *m = &rep->pred->model;
    DBL("model_step_s", m->step);
    DBL("model_compute_s", m->compute);
    DBL("model_wire_s", m->wire);
    DBL("model_optimizer_s", m->optimizer);
    DBL("model_storage_s", m->storage);
    DBL("model_exposed_wire_s", m->exposed_wire);
    DBL("model_exposed_optimizer_s", m->exposed_optimizer);
    DBL("model_pipe_fill_s", m->pipe_fill); /* disdp's pull pipeline (0 in the other modes) */
    DBL("model_pipe_tail_s", m->pipe_tail);
    INT("closed_form_send_bytes", rep->pred->bytes.send);
    INT("closed_form_recv_bytes", rep->pred->bytes.recv);
    DBL("gemm_flops", rep->sgemm_flops);            /* cblas_sgemm over nn_block_gemm_shapes */
    DBL("model_compute_flops", rep->rates->gemm_flops); /* the compute term's rate: a block's passes */
    DBL("adam_params_per_s", rep->rates->adam_params_s);
    DBL("storage_Bps", rep->rates->storage_Bps);
    if (rep->rates->ps_params_s > 0) { /* disdp */
        DBL("ps_params_per_s", rep->rates->ps_params_s);
        DBL("ps_calib_adam_params_per_s", rep->ps_rate->adam_params_s);
    }
    STR("model_link", zero_model_link_name(&z->o, rep->rates));
    /* tc (unpaced): each role's own link as the model priced it, Gb/s */
    DBL("model_worker_link_gbps", rep->rates->link_gbps);
    DBL("model_switch_link_gbps", rep->rates->switch_gbps);
    DBL("model_ps_link_gbps", rep->rates->ps_gbps);
    /* the roles' sharing, timed (zero_model_measure_loaded) */
    DBL("model_compute_load_x", rep->rates->compute_load_x);
    if (rep->rates->ps_params_s > 0)
        DBL("ps_loaded_params_per_s", rep->rates->ps_loaded_params_s);
    DBL("model_cpu_floor_s", m->cpu_floor); /* the CPU-sharing term (zero.h) */
    DBL("model_cpu_worker_s", m->cpu_worker);
    DBL("model_cpu_switch_s", m->cpu_switch);
    DBL("model_cpu_ps_s", m->cpu_ps);
    DBL("model_cpu_copy_Bps", rep->rates->cpu_copy_Bps); /* min(memcpy, the transport), per CPU s */
    DBL("model_cpu_cores", rep->rates->nhosts > 0 ? rep->rates->hosts[0].cores : NAN);
    INT("model_cpu_hosts", rep->rates->nhosts);
}

/* The model's workers one PS can feed: its compute and calibrated rate. */
static double model_fed(const struct zero_run *z, const struct zero_report *rep)
{
    return rep->pred ? z->o.lay.W * rep->pred->model.compute * rep->rates->ps_params_s / zero_model_params(z) : NAN;
}

void zero_report_metrics(const struct zero_run *z, const struct zero_report *rep,
                         void (*put)(void *ctx, const struct zero_metric *m), void *ctx)
{
    const struct emit em = {put, ctx}, *e = &em;
    const struct zero_results *r = rep->res;
    char key[64];
    for (int w = 0; w < r->W; w++)
        for (int k = 0; k < ZERO_NV; k++) {
            double v = r->v[w * ZERO_NV + k];
            snprintf(key, sizeof(key), "worker_%s_per_step", zero_worker_value_names[k]);
            if (k == ZERO_V_SENT || k == ZERO_V_RECV || k == ZERO_V_TIMED)
                emit(e, key, w, ZERO_M_INT, llround(v), 0, NULL);
            else
                emit(e, key, w, ZERO_M_DBL, 0, v, NULL);
        }
    for (int w = 0; w < r->W; w++)
        emit(e, "worker_peak_bytes", w, ZERO_M_INT, (long long)r->peak[w], 0, NULL);
    INT("worker_bytes_formula", zero_worker_bytes(&z->o));
    INT("wire_param_bytes", zero_wire_param_bytes(&z->o));
    INT("steps", z->st.steps);
    DBL("loss_last", z->st.loss);
    DBL("link_Bps", z->o.link_bps);
    STR("link", rep->link);
    DBL("check_worst_rel_error", rep->worst_rel);
    for (int i = 0; i < r->ncrc; i++)
        emit(e, "layer_crc32c", i, ZERO_M_INT, r->crc[i], 0, NULL);
    model_metrics(e, z, rep);
    if (!r->has_ps)
        return;
    struct zero_ps_panel p;
    zero_ps_panel(&r->ps, zero_model_params(z), r->W, r->v[ZERO_V_COMPUTE], &p);
    DBL("ps_adam_params_per_s", p.adam_params_s);
    DBL("ps_storage_Bps", p.storage_Bps);
    DBL("ps_update_params_per_s", p.update_params_s);
    DBL("ps_workers_fed", p.workers_fed);
    if (rep->pred)
        DBL("model_ps_workers_fed", model_fed(z, rep));
}

void zero_report_print(FILE *f, const struct zero_run *z, const struct zero_report *rep)
{
    const struct zero_results *r = rep->res;
    const double *w0 = r->v;
    if (rep->pred) {
        const struct zero_prediction *p = rep->pred;
        fprintf(f, "#   step (worker 0) measured %.4f s, model %.4f s (%+.1f%%); sent %.0f / received %.0f bytes, "
                "closed form %llu / %llu\n", w0[ZERO_V_STEP], p->model.step, 100 * (w0[ZERO_V_STEP] / p->model.step - 1),
                w0[ZERO_V_SENT], w0[ZERO_V_RECV], (unsigned long long)p->bytes.send,
                (unsigned long long)p->bytes.recv);
    }
    if (r->has_ps) {
        struct zero_ps_panel p;
        zero_ps_panel(&r->ps, zero_model_params(z), r->W, w0[ZERO_V_COMPUTE], &p);
        fprintf(f, "#   PS (rank %d): Adam %.3g Mparam/s, storage %.3g GB/s, update %.3g Mparam/s; workers one PS can "
                "feed %.3g (model %.3g)\n", z->o.lay.W + z->o.lay.K, p.adam_params_s / 1e6, p.storage_Bps / 1e9,
                p.update_params_s / 1e6, p.workers_fed, model_fed(z, rep));
    }
    fprintf(f, "#   median of %.0f timed steps (worker 0): step %.4f s (quartiles %.4f-%.4f), compute %.4f s, exposed "
            "comm %.4f s, optimizer %.4f s\n", w0[ZERO_V_TIMED], w0[ZERO_V_MED_STEP], w0[ZERO_V_STEP_P25],
            w0[ZERO_V_STEP_P75], w0[ZERO_V_MED_COMPUTE], w0[ZERO_V_MED_WAIT], w0[ZERO_V_MED_OPT]);
    fprintf(f, "#   per step (worker 0): compute %.4f s, exposed comm %.4f s, optimizer %.4f s; sent %.0f bytes "
            "(wire S = %llu)\n", w0[ZERO_V_COMPUTE], w0[ZERO_V_WAIT], w0[ZERO_V_OPT], w0[ZERO_V_SENT],
            (unsigned long long)zero_wire_param_bytes(&z->o));
}
