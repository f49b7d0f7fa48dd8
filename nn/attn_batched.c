/* Causal multi-head attention with the heads batched: all heads' score
 * GEMMs, then one parallel masked-softmax sweep over every head's rows,
 * then all heads' value GEMMs (backward likewise per sequence), instead
 * of a GEMM, a small serial softmax and a GEMM per head. The arithmetic
 * per row is attn.c's but for the forward softmax's exponential and row
 * sum (nn_softmax_causal_row_simd: a vectorizable exp within 1 ulp and the
 * sum in SIMD-lane order, 2x less CPU time than libm's scalar expf at
 * gpt-small's 2048 rows of 64), so the probabilities equal nn_attn_fwd's
 * within a few ulp and the backward, given the same probabilities,
 * equals nn_attn_bwd bit for bit; the elementwise sweeps also see B*A*S
 * rows at once and go parallel. Debian 12's OpenBLAS (0.3.21) has no cblas_sgemm_batch
 * (it arrived in 0.3.27), so the GEMMs stay one call per head. */
#include "layer_internal.h"
#include "row_math.h"

#include <math.h>
#include <string.h>

#define GEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) return -1; } while (0)

/* Rows of probabilities: row i of each S x S matrix keeps j <= i. */
static void softmax_causal_rows(float *P, size_t nmat, size_t S, size_t par)
{
    size_t rows = nmat * S;
#pragma omp parallel for schedule(static) if (rows * S >= par)
    for (size_t r = 0; r < rows; r++) {
        nn_softmax_causal_row_simd(P + r * S, r % S, S);
    }
}

/* dS = P * (dP - rowsum(dP * P)) * scale over rows of S x S matrices, in place in dP. */
static void softmax_causal_bwd_rows(float *dP, const float *P, size_t rows, size_t S, float scale)
{
#pragma omp parallel for schedule(static) if (rows * S >= nn_fused_par_elems())
    for (size_t r = 0; r < rows; r++)
        nn_softmax_causal_bwd_row(dP + r * S, P + r * S, r % S, S, scale);
}

int nn_attn_fwd_batched_timed(const float *qkv, float *probs, float *out, size_t B, size_t S,
                              size_t A, size_t D, struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H;
    int s = (int)S, d = (int)D;
    float scale = 1.0f / sqrtf((float)D);
    NN_STAGE(times, NN_ST_FWD_ATTN_SCORES,
        for (size_t b = 0; b < B; b++)
            for (size_t a = 0; a < A; a++) {
                const float *q = qkv + b * S * ld + a * D, *k = q + H;
                GEMM(0, 1, s, s, d, scale, q, (int)ld, k, (int)ld, 0.0f, probs + (b * A + a) * S * S, s);
            });
    NN_STAGE(times, NN_ST_FWD_SOFTMAX, softmax_causal_rows(probs, B * A, S, nn_fused_par_elems()));
    NN_STAGE(times, NN_ST_FWD_ATTN_VALUES,
        for (size_t b = 0; b < B; b++)
            for (size_t a = 0; a < A; a++) {
                const float *v = qkv + b * S * ld + 2 * H + a * D;
                GEMM(0, 0, s, d, s, 1.0f, probs + (b * A + a) * S * S, s, v, (int)ld, 0.0f,
                     out + b * S * H + a * D, (int)H);
            });
    return 0;
}

int nn_attn_fwd_batched(const float *qkv, float *probs, float *out, size_t B, size_t S, size_t A,
                        size_t D)
{
    return nn_attn_fwd_batched_timed(qkv, probs, out, B, S, A, D, NULL);
}

int nn_attn_bwd_batched_timed(const float *qkv, const float *probs, const float *dout, float *dqkv,
                              float *scratch, size_t B, size_t S, size_t A, size_t D,
                              struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H;
    int s = (int)S, d = (int)D, l = (int)ld, h = (int)H;
    float scale = 1.0f / sqrtf((float)D);
    for (size_t b = 0; b < B; b++) {
        const float *Pb = probs + b * A * S * S;
        NN_STAGE(times, NN_ST_BWD_ATTN_DP_DV,
            for (size_t a = 0; a < A; a++) {
                const float *v = qkv + b * S * ld + 2 * H + a * D, *dO = dout + b * S * H + a * D;
                float *dv = dqkv + b * S * ld + 2 * H + a * D;
                /* dP = dO V^T, dV = P^T dO */
                GEMM(0, 1, s, s, d, 1.0f, dO, h, v, l, 0.0f, scratch + a * S * S, s);
                GEMM(1, 0, s, d, s, 1.0f, Pb + a * S * S, s, dO, h, 0.0f, dv, l);
            });
        /* dS = P * (dP - rowsum(dP * P)) * scale, every head's rows at once */
        NN_STAGE(times, NN_ST_BWD_SOFTMAX, softmax_causal_bwd_rows(scratch, Pb, A * S, S, scale));
        NN_STAGE(times, NN_ST_BWD_ATTN_DQ_DK,
            for (size_t a = 0; a < A; a++) {
                const float *q = qkv + b * S * ld + a * D, *k = q + H;
                float *dq = dqkv + b * S * ld + a * D, *dk = dq + H;
                /* dQ = dS K, dK = dS^T Q */
                GEMM(0, 0, s, d, s, 1.0f, scratch + a * S * S, s, k, l, 0.0f, dq, l);
                GEMM(1, 0, s, d, s, 1.0f, scratch + a * S * S, s, q, l, 0.0f, dk, l);
            });
    }
    return 0;
}

int nn_attn_bwd_batched(const float *qkv, const float *probs, const float *dout, float *dqkv,
                        float *scratch, size_t B, size_t S, size_t A, size_t D)
{
    return nn_attn_bwd_batched_timed(qkv, probs, dout, dqkv, scratch, B, S, A, D, NULL);
}
