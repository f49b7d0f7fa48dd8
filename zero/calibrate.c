/* The model's compute rates measured in the run that uses them (issue
 * 19: "FLOP rate vs cblas_sgemm over nn_block_gemm_shapes, in the same
 * run"): the block's own GEMMs through plain sgemm, and CPU Adam; each
 * pass timed on the wall and in the process's CPU seconds (every thread:
 * the CPU-sharing term's rates), the best pass of each. */
#include "zero.h"

#include "../common/common.h"

#include <math.h>
#include <stdlib.h>

/* rate[0]: per wall second, rate[1]: per CPU second; NaN when failed. */
static void gemm_rates(const struct nn_gpt_config *cfg, int B, int reps, double rate[2])
{
    struct nn_gemm_peer p;
    double best = INFINITY, cbest = INFINITY;
    rate[0] = rate[1] = NAN;
    if (nn_gemm_peer_init(&p, cfg, B, 0) != 0) {
        nn_gemm_peer_free(&p);
        return;
    }
    double flops = nn_gemm_peer_flops(&p);
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        double c0 = mb_cpu_s(0);
        nn_gemm_peer_run(&p, r);
        double c = mb_cpu_s(0) - c0, t = 0;
        for (int i = 0; i < p.ng; i++)
            t += p.t[i];
        best = t < best ? t : best;
        cbest = c < cbest ? c : cbest;
    }
    char msg[256];
    int bad = nn_gemm_peer_check(&p, 0x5eed, msg, sizeof msg);
    nn_gemm_peer_free(&p);
    if (!bad && best > 0 && cbest > 0)
        rate[0] = flops / best, rate[1] = flops / cbest;
}

static void adam_rates(size_t n, int reps, double rate[2])
{
    rate[0] = rate[1] = NAN;
    float *buf = calloc(4 * (n ? n : 1), sizeof(float));
    if (!buf || n == 0) {
        free(buf);
        return;
    }
    float *p = buf, *m = buf + n, *v = buf + 2 * n, *g = buf + 3 * n;
    for (size_t i = 0; i < n; i++) {
        p[i] = 1.0f;
        g[i] = (float)((i % 17) + 1) * 1e-3f;
    }
    struct nn_adam hp = nn_adam_default();
    double best = INFINITY, cbest = INFINITY;
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        double t0 = mb_now(), c0 = mb_cpu_s(0);
        nn_adam_step(&hp, r + 1, n, p, m, v, g, NN_F32, 1.0f, NULL, NN_F32);
        double t = mb_now() - t0, c = mb_cpu_s(0) - c0;
        best = t < best ? t : best;
        cbest = c < cbest ? c : cbest;
    }
    /* The update moved every weight against its positive gradient: a step
     * that did nothing (or wrote NaN) is not a rate. */
    int ok = p[0] < 1.0f && p[n - 1] < 1.0f;
    free(buf);
    if (ok && best > 0 && cbest > 0)
        rate[0] = (double)n / best, rate[1] = (double)n / cbest;
}

double zero_model_measure_gemm(const struct nn_gpt_config *cfg, int B, int reps)
{
    double r[2];
    gemm_rates(cfg, B, reps, r);
    return r[0];
}

double zero_model_measure_gemm_cpu(const struct nn_gpt_config *cfg, int B, int reps)
{
    double r[2];
    gemm_rates(cfg, B, reps, r);
    return r[1];
}

double zero_model_measure_adam(size_t n, int reps)
{
    double r[2];
    adam_rates(n, reps, r);
    return r[0];
}

double zero_model_measure_adam_cpu(size_t n, int reps)
{
    double r[2];
    adam_rates(n, reps, r);
    return r[1];
}

void zero_model_measure_worker(const struct nn_gpt_config *cfg, int B, int reps, size_t adam_n, double rate[4])
{
    gemm_rates(cfg, B, reps, rate);
    adam_rates(adam_n, reps, rate + 2);
}
