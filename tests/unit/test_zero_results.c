/* zero/results.c: what mb-zero records, without the program. A one-rank
 * zero3-serial run of gpt-tiny (MPI_COMM_SELF, 2 steps) gathered: its
 * per-step values are its counters over 2, its peak is
 * zero_worker_bytes, its CRCs are zero_layer_crc's, no PS; the PS panel
 * on hand-computed counters; the case's values (keys, kinds, the model's
 * keys or model_refused, the PS keys only with a PS) and printed lines. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXM 512
static struct zero_metric got[MAXM];
static int ngot;

static void collect(void *ctx, const struct zero_metric *m)
{
    (void)ctx;
    if (ngot < MAXM)
        got[ngot++] = *m;
}

static const struct zero_metric *find(const char *key, long idx)
{
    for (int i = 0; i < ngot; i++)
        if (strcmp(got[i].key, key) == 0 && got[i].idx == idx)
            return &got[i];
    return NULL;
}

static void panel(void)
{
    /* 1e6 parameters, 0.5 s of Adam, 2 s with 26e6 bytes in flight; P = 1e6, W = 2, compute 0.25 s */
    struct zero_ps_counters c = {1e6, 0.5, 2, 26e6};
    struct zero_ps_panel p;
    zero_ps_panel(&c, 1e6, 2, 0.25, &p);
    EXPECT_NEAR(p.adam_params_s, 2e6, 1e-6);
    EXPECT_NEAR(p.storage_Bps, 13e6, 1e-6);
    EXPECT_NEAR(p.update_params_s, 5e5, 1e-9); /* the busier: transfers, 2 s */
    EXPECT_NEAR(p.workers_fed, 0.25, 1e-12);   /* 2 * 0.25 * 5e5 / 1e6 */
}

/* zero_quantiles, hand-computed: order statistics with linear
 * interpolation at q (n - 1) */
static void quantiles(void)
{
    double x[5] = {5, 1, 4, 2, 3}, q[3] = {0.5, 0.25, 0.75}, out[3];
    zero_quantiles(x, 5, q, 3, out);
    EXPECT(out[0] == 3 && out[1] == 2 && out[2] == 4); /* positions 2, 1, 3 of 1..5 */
    double y[4] = {4, 1, 3, 2};
    zero_quantiles(y, 4, q, 3, out);
    EXPECT(out[0] == 2.5 && out[1] == 1.75 && out[2] == 3.25); /* positions 1.5, 0.75, 2.25 */
    double z1[1] = {7}, e[1];
    zero_quantiles(z1, 1, q, 3, out);
    EXPECT(out[0] == 7 && out[1] == 7 && out[2] == 7);
    zero_quantiles(e, 0, q, 1, out);
    EXPECT(isnan(out[0]));
    /* a run of 9 steps, one disturbed: the median ignores it, the mean does not */
    struct zero_run r = {.timed_from = 2};
    for (int i = 0; i < 9; i++) {
        double d[ZERO_REC_N] = {i == 5 ? 1.0 : 0.1 + 0.01 * i, 0.05, 0.01 * i, i == 0 ? 9 : 0.002};
        EXPECT(zero_step_record(&r, d) == 0);
    }
    double v[ZERO_NV];
    zero_step_medians(&r, v); /* steps 2..8: 0.12 0.13 0.14 1.0 0.16 0.17 0.18 */
    EXPECT(v[ZERO_V_TIMED] == 7);
    EXPECT_NEAR(v[ZERO_V_MED_STEP], 0.16, 1e-15);
    EXPECT_NEAR(v[ZERO_V_STEP_P25], 0.135, 1e-15); /* position 1.5: 0.13 .. 0.14 */
    EXPECT_NEAR(v[ZERO_V_STEP_P75], 0.175, 1e-15); /* position 4.5: 0.17 .. 0.18 */
    EXPECT_NEAR(v[ZERO_V_MED_COMPUTE], 0.05, 1e-15);
    EXPECT_NEAR(v[ZERO_V_MED_WAIT], 0.05, 1e-15); /* 0.02 .. 0.08 */
    EXPECT(v[ZERO_V_MED_OPT] == 0.002);           /* step 0's 9 s is warm-up */
    r.timed_from = 20;                            /* past the end: every step */
    zero_step_medians(&r, v);
    EXPECT(v[ZERO_V_TIMED] == 9 && v[ZERO_V_MED_OPT] == 0.002);
    free(r.rec);
}

static void one_rank(void)
{
    struct zero_opts o = {.batch = 1, .micro = 1, .lay = {1, 0, 0}, .seed = 7, .adam_threads = 1, .reference = 1};
    char err[400];
    EXPECT(nn_gpt_config_parse("gpt-tiny", &o.cfg, err, sizeof err) == 0);
    o.hp = nn_adam_default();
    struct zero_run *z = zero_run_new(&o, &zero_mode_zero3_serial, MPI_COMM_SELF, err, sizeof err);
    EXPECT(z != NULL);
    if (!z) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    /* the model's compute calibration: one block's passes, its FLOPs nn's account of layer 1 */
    double fl = 0, cpu = 0, t = zero_block_pass(z, &fl, &cpu);
    struct nn_layer_account a;
    nn_gpt_layer_account(&o.cfg, o.micro, (struct nn_precision){NN_F32, NN_F32, NN_F32}, 1, &a);
    EXPECT(t > 0 && cpu > 0 && fl == a.flops_fwd + a.flops_bwd && fl > 0);
    EXPECT(z->nrec == 0); /* a calibration pass is not a step */
    for (int s = 0; s < 2; s++)
        EXPECT(zero_run_step(z, err, sizeof err) == 0);
    EXPECT(zero_run_sync(z, err, sizeof err) == 0);
    struct zero_results r;
    zero_results_gather(z, &r);
    EXPECT(r.W == 1 && r.v && r.peak && !r.has_ps);
    EXPECT(r.v[ZERO_V_STEP] == z->st.step_s / 2 && r.v[ZERO_V_STEP] > 0);
    EXPECT(r.v[ZERO_V_COMPUTE] == z->st.compute_s / 2 && r.v[ZERO_V_OPT] == z->st.optimizer_s / 2);
    EXPECT(r.v[ZERO_V_SENT] == 0 && r.v[ZERO_V_RECV] == 0); /* one worker: nothing on the wire */
    EXPECT(r.v[ZERO_V_TIMED] == 2 && z->nrec == 2); /* no warm-up here: both steps */
    EXPECT_NEAR(r.v[ZERO_V_MED_STEP], (z->rec[ZERO_REC_STEP] + z->rec[ZERO_REC_N + ZERO_REC_STEP]) / 2, 1e-12);
    EXPECT_NEAR(r.v[ZERO_V_MED_STEP], z->st.step_s / 2, 1e-12); /* two steps: the median is the mean */
    EXPECT(r.peak[0] == zero_worker_bytes(&o) && r.peak[0] == z->alloc_bytes);
    EXPECT(r.ncrc == z->L);
    for (int i = 0; i < r.ncrc; i++)
        EXPECT(r.crc[i] == zero_layer_crc(z, i));

    /* the case's values, without a model */
    struct zero_report rep = {.res = &r, .model_why = "no profile", .link = "off", .worst_rel = 0.5};
    ngot = 0;
    zero_report_metrics(z, &rep, collect, NULL);
    const struct zero_metric *m;
    for (int k = 0; k < ZERO_NV; k++) {
        char key[64];
        snprintf(key, sizeof key, "worker_%s_per_step", zero_worker_value_names[k]);
        EXPECT((m = find(key, 0)) != NULL);
        if (m)
            EXPECT(m->kind == (k == ZERO_V_SENT || k == ZERO_V_RECV || k == ZERO_V_TIMED ? ZERO_M_INT : ZERO_M_DBL));
        EXPECT(find(key, 1) == NULL);
    }
    EXPECT((m = find("worker_step_s_per_step", 0)) && m->d == r.v[ZERO_V_STEP]);
    EXPECT((m = find("worker_peak_bytes", 0)) && m->i == (long long)zero_worker_bytes(&o));
    EXPECT((m = find("steps", -1)) && m->i == 2);
    EXPECT((m = find("link", -1)) && strcmp(m->s, "off") == 0);
    EXPECT((m = find("check_worst_rel_error", -1)) && m->d == 0.5);
    EXPECT((m = find("layer_crc32c", z->L - 1)) && m->i == (long long)r.crc[z->L - 1]);
    EXPECT((m = find("model_refused", -1)) && strcmp(m->s, "no profile") == 0);
    EXPECT(find("model_step_s", -1) == NULL && find("ps_adam_params_per_s", -1) == NULL);

    /* with a model and a PS's counters */
    struct zero_prediction pred = {.model = {.step = 0.5, .compute = 0.25}, .bytes = {.send = 11, .recv = 22}};
    struct zero_model_in rates = {.gemm_flops = 1e9, .adam_params_s = 1e8, .storage_Bps = 1e9, .ps_params_s = 4e6};
    struct zero_ps_rate psr = {.params_s = 4e6, .adam_params_s = 9e6};
    r.has_ps = 1, r.ps = (struct zero_ps_counters){1e6, 0.5, 2, 26e6};
    rep.pred = &pred, rep.rates = &rates, rep.ps_rate = &psr;
    ngot = 0;
    zero_report_metrics(z, &rep, collect, NULL);
    double P = zero_model_params(z);
    EXPECT(find("model_refused", -1) == NULL);
    EXPECT((m = find("model_step_s", -1)) && m->d == 0.5);
    EXPECT((m = find("closed_form_recv_bytes", -1)) && m->i == 22);
    EXPECT((m = find("ps_calib_adam_params_per_s", -1)) && m->d == 9e6);
    EXPECT((m = find("model_link", -1)) && strcmp(m->s, "collectives profile") == 0);
    EXPECT((m = find("ps_update_params_per_s", -1)) && m->d == 5e5);
    EXPECT((m = find("ps_workers_fed", -1)) && m->d == 1 * r.v[ZERO_V_COMPUTE] * 5e5 / P);
    EXPECT((m = find("model_ps_workers_fed", -1)) && m->d == 1 * 0.25 * 4e6 / P);
    EXPECT(P > 0);

    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    EXPECT(f != NULL);
    if (f) {
        zero_report_print(f, z, &rep);
        fclose(f);
        EXPECT(strstr(text, "#   step (worker 0) measured") && strstr(text, "closed form 11 / 22"));
        EXPECT(strstr(text, "#   PS (rank 1): Adam 2 Mparam/s, storage 0.013 GB/s, update 0.5 Mparam/s"));
        EXPECT(strstr(text, "#   per step (worker 0): compute"));
        free(text);
    }
    zero_results_free(&r);
    EXPECT(r.v == NULL && r.peak == NULL);
    zero_run_free(z);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    panel();
    quantiles();
    one_rank();
    MPI_Finalize();
    return TEST_EXIT();
}
