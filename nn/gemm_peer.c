/* The block's GEMMs through plain cblas_sgemm: exactly the shapes one
 * decoder block runs forward and backward (nn_block_gemm_shapes), each
 * on its own contiguous operands, with nothing between them. mb-nn runs
 * it interleaved with the block as the rate the block's GEMMs could
 * reach, and checks every pass (Freivalds). */
#include "layer_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int nn_gemm_peer_init(struct nn_gemm_peer *p, const struct nn_gpt_config *cfg, int B, int recompute)
{
    p->ng = nn_block_gemm_shapes(cfg, B, p->g, NN_GEMM_PEER_MAX);
    p->recompute = recompute;
    p->A = calloc((size_t)p->ng, sizeof(float *));
    p->B = calloc((size_t)p->ng, sizeof(float *));
    p->C = calloc((size_t)p->ng, sizeof(float *));
    if (!p->A || !p->B || !p->C)
        return -1;
    for (int i = 0; i < p->ng; i++) {
        size_t m = (size_t)p->g[i].M, n = (size_t)p->g[i].N, k = (size_t)p->g[i].K;
        p->A[i] = malloc(m * k * 4);
        p->B[i] = malloc(k * n * 4);
        p->C[i] = malloc(m * n * 4);
        if (!p->A[i] || !p->B[i] || !p->C[i])
            return -1;
        nn_fill_hashed(p->A[i], m * k, (uint64_t)i + 1, 1.0);
        nn_fill_hashed(p->B[i], k * n, (uint64_t)i + 100, 1.0);
    }
    return 0;
}

void nn_gemm_peer_free(struct nn_gemm_peer *p)
{
    /* (an init that failed half way may have left any of the arrays NULL) */
    for (int i = 0; i < p->ng; i++) {
        if (p->A)
            free(p->A[i]);
        if (p->B)
            free(p->B[i]);
        if (p->C)
            free(p->C[i]);
    }
    free(p->A);
    free(p->B);
    free(p->C);
    p->A = p->B = p->C = NULL;
}

/* with recompute the block reruns its forward GEMMs but W2's: so does
 * the peer */
static int reps_of(const struct nn_gemm_peer *p, const struct nn_gemm_shape *g)
{
    return g->count * (p->recompute && g->recomputed ? 2 : 1);
}

double nn_gemm_peer_flops(const struct nn_gemm_peer *p)
{
    double flops = 0;
    for (int i = 0; i < p->ng; i++)
        flops += 2.0 * p->g[i].M * p->g[i].N * p->g[i].K * reps_of(p, &p->g[i]);
    return flops;
}

void nn_gemm_peer_run(struct nn_gemm_peer *p, long long iter)
{
    for (int i = 0; i < p->ng; i++) {
        const struct nn_gemm_shape *g = &p->g[i];
        int lda = g->ta ? g->M : g->K, ldb = g->tb ? g->K : g->N;
        p->A[i][0] = (float)(iter % 7) * 0.125f; /* fresh data: one element of A */
        int reps = reps_of(p, g);
        double t0 = nn_stage_now();
        for (int r = 0; r < reps; r++)
            cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans,
                        g->M, g->N, g->K, 1.0f, p->A[i], lda, p->B[i], ldb, 0.0f, p->C[i], g->N);
        p->t[i] = nn_stage_now() - t0;
    }
}

/* Freivalds: C r == A (B r) in double, every row, for a random r (from
 * seed and the GEMM) whose entries are +-[0.5, 1.5): no column of C goes
 * unchecked. */
int nn_gemm_peer_check(const struct nn_gemm_peer *s, uint64_t seed, char *msg, size_t len)
{
    for (int i = 0; i < s->ng; i++) {
        const struct nn_gemm_shape *g = &s->g[i];
        int M = g->M, N = g->N, K = g->K, lda = g->ta ? M : K, ldb = g->tb ? K : N;
        double *r = malloc((size_t)N * 8), *br = calloc((size_t)K, 8);
        if (!r || !br) {
            free(r); free(br);
            snprintf(msg, len, "gemm %d: out of memory for the check", i);
            return 1;
        }
        struct nn_rng rng;
        nn_rng_seed(&rng, seed + (uint64_t)i * 0x9e3779b97f4a7c15ull);
        for (int j = 0; j < N; j++) {
            double u = nn_rng_uniform(&rng);
            r[j] = u < 0.5 ? -(0.5 + 2 * u) : 0.5 + 2 * (u - 0.5);
        }
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                br[k] += (g->tb ? s->B[i][(size_t)j * ldb + k] : s->B[i][(size_t)k * ldb + j]) * r[j];
        int bad = -1;
        double got = 0, want = 0;
        for (int m = 0; m < M && bad < 0; m++) {
            double a = 0, c = 0, scale = 0;
            for (int k = 0; k < K; k++) {
                double av = g->ta ? s->A[i][(size_t)k * lda + m] : s->A[i][(size_t)m * lda + k];
                a += av * br[k];
                scale += fabs(av * br[k]);
            }
            for (int j = 0; j < N; j++)
                c += s->C[i][(size_t)m * N + j] * r[j];
            /* fp32 rounding of C r stayed below 7e-7 of sum |A_mk (B r)_k| (gpt-bench) */
            if (!(fabs(a - c) <= 1e-5 * scale + 1e-6)) {
                bad = m;
                got = c;
                want = a;
            }
        }
        free(r);
        free(br);
        if (bad >= 0) {
            snprintf(msg, len, "gemm %d row %d (%dx%dx%d): C r is %.9g, A (B r) is %.9g", i, bad, M, N, K,
                     got, want);
            return 1;
        }
    }
    return 0;
}
