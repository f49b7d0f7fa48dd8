/* The model's compute rates measured in the run that uses them (issue
 * 19: "FLOP rate vs cblas_sgemm over nn_block_gemm_shapes, in the same
 * run"): the block's own GEMMs through plain sgemm, and CPU Adam. */
#include "zero.h"

#include "../common/common.h"

#include <math.h>
#include <stdlib.h>

/* The best pass's wall seconds, or with cpu its process CPU seconds. */
static double gemm_rate(const struct nn_gpt_config *cfg, int B, int reps, int cpu)
{
    struct nn_gemm_peer p;
    double best = INFINITY, flops = 0;
    if (nn_gemm_peer_init(&p, cfg, B, 0) != 0) {
        nn_gemm_peer_free(&p);
        return NAN;
    }
    for (int i = 0; i < p.ng; i++)
        flops += 2.0 * p.g[i].M * p.g[i].N * p.g[i].K * p.g[i].count;
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        double c0 = mb_cpu_s(0);
        nn_gemm_peer_run(&p, r);
        double t = 0;
        for (int i = 0; i < p.ng; i++)
            t += p.t[i];
        if (cpu)
            t = mb_cpu_s(0) - c0;
        if (t < best)
            best = t;
    }
    char msg[256];
    int bad = nn_gemm_peer_check(&p, 0x5eed, msg, sizeof msg);
    nn_gemm_peer_free(&p);
    return bad || !(best > 0) ? NAN : flops / best;
}

double zero_model_measure_gemm(const struct nn_gpt_config *cfg, int B, int reps) { return gemm_rate(cfg, B, reps, 0); }
double zero_model_measure_gemm_cpu(const struct nn_gpt_config *cfg, int B, int reps) { return gemm_rate(cfg, B, reps, 1); }

static double adam_rate(size_t n, int reps, int cpu)
{
    float *buf = calloc(4 * (n ? n : 1), sizeof(float));
    if (!buf || n == 0) {
        free(buf);
        return NAN;
    }
    float *p = buf, *m = buf + n, *v = buf + 2 * n, *g = buf + 3 * n;
    for (size_t i = 0; i < n; i++) {
        p[i] = 1.0f;
        g[i] = (float)((i % 17) + 1) * 1e-3f;
    }
    struct nn_adam hp = nn_adam_default();
    double best = INFINITY;
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        double t0 = cpu ? mb_cpu_s(0) : mb_now();
        nn_adam_step(&hp, r + 1, n, p, m, v, g, NN_F32, 1.0f, NULL, NN_F32);
        double t = (cpu ? mb_cpu_s(0) : mb_now()) - t0;
        if (t < best)
            best = t;
    }
    /* The update moved every weight against its positive gradient: a step
     * that did nothing (or wrote NaN) is not a rate. */
    int ok = p[0] < 1.0f && p[n - 1] < 1.0f;
    free(buf);
    return ok && best > 0 ? (double)n / best : NAN;
}

double zero_model_measure_adam(size_t n, int reps) { return adam_rate(n, reps, 0); }
double zero_model_measure_adam_cpu(size_t n, int reps) { return adam_rate(n, reps, 1); }
