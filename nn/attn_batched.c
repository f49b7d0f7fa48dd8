/* Causal multi-head attention with the heads batched: the heads spread
 * over the OpenMP threads, each thread running a head's score GEMM, its
 * masked-softmax rows and its value GEMM back to back (backward: dP, dV,
 * the softmax gradient's rows, dQ, dK), one parallel region per
 * direction, instead of a GEMM, a small serial softmax and a GEMM per
 * head. The arithmetic per row is attn.c's but for the forward softmax's
 * exponential and row sum (nn_softmax_causal_row_simd: a vectorizable exp
 * within 1 ulp and the sum in SIMD-lane order, 2x less CPU time than
 * libm's scalar expf at gpt-small's 2048 rows of 64), so the
 * probabilities equal nn_attn_fwd's within a few ulp and the backward,
 * given the same probabilities, equals nn_attn_bwd bit for bit. Debian
 * 12's OpenBLAS (0.3.21) has no cblas_sgemm_batch (it arrived in 0.3.27),
 * so the GEMMs stay one call per head (attn_par below). */
#include "layer_internal.h"
#include "row_math.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The per-head GEMMs are small (S x S x D: 128 x 128 x 64 at gpt-bench,
 * 2 MFLOP, ~28 us on one core here), and OpenBLAS runs each on all its
 * threads: every call wakes its threads and splits 2 MFLOP between them
 * (16-20 us a call on 2 threads, quiet). Instead the heads are split
 * between the OpenMP threads, each running whole GEMMs with OpenBLAS set
 * to one thread for the region (Debian's 0.3.21 has no per-call thread
 * cap, so openblas_set_num_threads(1) before and back after; a program
 * calling OpenBLAS from another thread meanwhile would see one thread),
 * and a head's probabilities (S x S, 64 KB) stay in the core's cache from
 * its score GEMM through its softmax to its value GEMM. With one OpenMP
 * thread the same loop runs on it, OpenBLAS still at one thread, so the
 * bits do not depend on the thread count: OpenBLAS's single-threaded
 * driver blocks K the same whatever the call's M and N (its threaded
 * driver cuts K differently where K passes one block, ~384 here: S 1024's
 * value GEMMs), and every softmax row is the same call.
 *
 * It is the way of nn_gemm's split (NN_GEMM_SPLIT=1: one thread pool),
 * and off by default (NN_ATTN_PAR=1 or 0 decides alone): beside
 * OpenBLAS's own threads, the region's idle OpenMP thread spins after it
 * (libgomp's default wait) on the core OpenBLAS's second thread needs for
 * the next GEMMs. At gpt-small b8, whose default block has no OpenMP
 * region at all, that took block/sgemm from 0.94-0.96 to 0.23-0.39 (load
 * 4.6, alternated). The default is the staged way: each stage over all
 * heads, each GEMM on OpenBLAS's threads; its bits equal these where K (S
 * and D) is within one block, as at gpt-bench's 128 and 64. */
static int attn_par(size_t n)
{
    const char *e = getenv("NN_ATTN_PAR");
    int on = e && *e ? strcmp(e, "0") != 0 : nn_gemm_set_split(-1);
    return on && n > 1;
}

/* openblas_set_num_threads(1) for a parallel region over heads: returns
 * the count to restore (0: nothing to restore). */
static int blas_single(void)
{
    int nb = openblas_get_num_threads();
    if (nb > 1)
        openblas_set_num_threads(1);
    return nb > 1 ? nb : 0;
}

static void blas_restore(int nb)
{
    if (nb > 0)
        openblas_set_num_threads(nb);
}

/* Stage seconds of a parallel region whose threads each ran several
 * stages: each thread's seconds per stage summed over the threads (sum[]),
 * the region's wall time split between the stages in those proportions,
 * so the stages still add up to the wall time they took. */
static void split_wall(struct nn_stage_times *times, const enum nn_stage *st, const double *sum, int n,
                       double wall)
{
    double all = 0;
    for (int i = 0; i < n; i++)
        all += sum[i];
    for (int i = 0; i < n; i++)
        times->t[st[i]] += all > 0 ? wall * sum[i] / all : wall / n;
}

static double clk(const struct nn_stage_times *times) { return times ? nn_stage_now() : 0; }

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

#define GEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) return -1; } while (0)
/* in a parallel region: no return out of it (nn_gemm fails only on a device) */
#define PGEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) err = 1; } while (0)

/* Forward of every (batch, head) i = b * A + a over the OpenMP threads:
 * scores = scale Q K^T, its softmax rows, out = P V. */
static int fwd_heads(const float *qkv, float *probs, float *out, size_t B, size_t S, size_t A, size_t D,
                     struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H, BA = B * A;
    int s = (int)S, d = (int)D, err = 0;
    float scale = 1.0f / sqrtf((float)D);
    double sum[3] = {0, 0, 0}, w0 = clk(times);
#pragma omp parallel reduction(| : err)
    {
        double t[3] = {0, 0, 0};
#pragma omp for schedule(static)
        for (size_t i = 0; i < BA; i++) {
            size_t b = i / A, a = i % A;
            const float *q = qkv + b * S * ld + a * D, *k = q + H, *v = q + 2 * H;
            float *P = probs + i * S * S;
            double c0 = clk(times);
            PGEMM(0, 1, s, s, d, scale, q, (int)ld, k, (int)ld, 0.0f, P, s);
            double c1 = clk(times);
            for (size_t r = 0; r < S; r++)
                nn_softmax_causal_row_simd(P + r * S, r, S);
            double c2 = clk(times);
            PGEMM(0, 0, s, d, s, 1.0f, P, s, v, (int)ld, 0.0f, out + b * S * H + a * D, (int)H);
            t[0] += c1 - c0, t[1] += c2 - c1, t[2] += clk(times) - c2;
        }
        if (times) {
#pragma omp critical(nn_attn_fwd_times)
            for (int j = 0; j < 3; j++)
                sum[j] += t[j];
        }
    }
    if (times) {
        static const enum nn_stage st[3] = {NN_ST_FWD_ATTN_SCORES, NN_ST_FWD_SOFTMAX, NN_ST_FWD_ATTN_VALUES};
        split_wall(times, st, sum, 3, nn_stage_now() - w0);
    }
    return err;
}

int nn_attn_fwd_batched_timed(const float *qkv, float *probs, float *out, size_t B, size_t S,
                              size_t A, size_t D, struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H;
    int s = (int)S, d = (int)D;
    float scale = 1.0f / sqrtf((float)D);
    if (attn_par(B * A)) {
        int nb = blas_single(), err = fwd_heads(qkv, probs, out, B, S, A, D, times);
        blas_restore(nb);
        return err ? -1 : 0;
    }
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

/* Backward of every head over the OpenMP threads, each head through every
 * batch element (scratch holds one S x S matrix per head, so a head stays
 * on one thread): dP = dO V^T, dV = P^T dO, dS = P * (dP - rowsum(dP * P))
 * * scale in place of dP, dQ = dS K, dK = dS^T Q. */
static int bwd_heads(const float *qkv, const float *probs, const float *dout, float *dqkv, float *scratch,
                     size_t B, size_t S, size_t A, size_t D, struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H;
    int s = (int)S, d = (int)D, l = (int)ld, h = (int)H, err = 0;
    float scale = 1.0f / sqrtf((float)D);
    double sum[3] = {0, 0, 0}, w0 = clk(times);
#pragma omp parallel reduction(| : err)
    {
        double t[3] = {0, 0, 0};
#pragma omp for schedule(static)
        for (size_t a = 0; a < A; a++) {
            float *dS = scratch + a * S * S;
            for (size_t b = 0; b < B; b++) {
                const float *P = probs + (b * A + a) * S * S;
                const float *q = qkv + b * S * ld + a * D, *k = q + H, *v = q + 2 * H;
                const float *dO = dout + b * S * H + a * D;
                float *dq = dqkv + b * S * ld + a * D, *dk = dq + H, *dv = dq + 2 * H;
                double c0 = clk(times);
                PGEMM(0, 1, s, s, d, 1.0f, dO, h, v, l, 0.0f, dS, s);
                PGEMM(1, 0, s, d, s, 1.0f, P, s, dO, h, 0.0f, dv, l);
                double c1 = clk(times);
                for (size_t r = 0; r < S; r++)
                    nn_softmax_causal_bwd_row(dS + r * S, P + r * S, r, S, scale);
                double c2 = clk(times);
                PGEMM(0, 0, s, d, s, 1.0f, dS, s, k, l, 0.0f, dq, l);
                PGEMM(1, 0, s, d, s, 1.0f, dS, s, q, l, 0.0f, dk, l);
                t[0] += c1 - c0, t[1] += c2 - c1, t[2] += clk(times) - c2;
            }
        }
        if (times) {
#pragma omp critical(nn_attn_bwd_times)
            for (int j = 0; j < 3; j++)
                sum[j] += t[j];
        }
    }
    if (times) {
        static const enum nn_stage st[3] = {NN_ST_BWD_ATTN_DP_DV, NN_ST_BWD_SOFTMAX, NN_ST_BWD_ATTN_DQ_DK};
        split_wall(times, st, sum, 3, nn_stage_now() - w0);
    }
    return err;
}

int nn_attn_bwd_batched_timed(const float *qkv, const float *probs, const float *dout, float *dqkv,
                              float *scratch, size_t B, size_t S, size_t A, size_t D,
                              struct nn_stage_times *times)
{
    size_t H = A * D, ld = 3 * H;
    int s = (int)S, d = (int)D, l = (int)ld, h = (int)H;
    float scale = 1.0f / sqrtf((float)D);
    if (attn_par(A)) {
        int nb = blas_single(), err = bwd_heads(qkv, probs, dout, dqkv, scratch, B, S, A, D, times);
        blas_restore(nb);
        return err ? -1 : 0;
    }
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
