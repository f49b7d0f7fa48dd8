/* The GEMM peer of a trainer's FLOP rate: plain cblas_sgemm over exactly
 * the GEMMs one decoder block runs (nn_block_gemm_shapes), as mb-nn does,
 * timed in the same run as the trainer. */
#include "ratel.h"
#include "../common/common.h"

#include <cblas.h>
#include <stdlib.h>

double ratel_gemm_peer_rate(const struct nn_gpt_config *cfg, int B, double *seconds)
{
    struct nn_gemm_shape g[32];
    int n = nn_block_gemm_shapes(cfg, B, g, 32);
    size_t most = 1;
    for (int i = 0; i < n; i++) {
        size_t a = (size_t)g[i].M * g[i].K, b = (size_t)g[i].K * g[i].N, c = (size_t)g[i].M * g[i].N;
        most = a > most ? a : most;
        most = b > most ? b : most;
        most = c > most ? c : most;
    }
    float *A = calloc(most, 4), *Bm = calloc(most, 4), *C = calloc(most, 4);
    double flops = 0, t0 = mb_now();
    for (int i = 0; A && Bm && C && i < n; i++) {
        int lda = g[i].ta ? g[i].M : g[i].K, ldb = g[i].tb ? g[i].K : g[i].N;
        for (int r = 0; r < g[i].count; r++)
            cblas_sgemm(CblasRowMajor, g[i].ta ? CblasTrans : CblasNoTrans,
                        g[i].tb ? CblasTrans : CblasNoTrans, g[i].M, g[i].N, g[i].K, 1.0f, A, lda,
                        Bm, ldb, 0.0f, C, g[i].N);
        flops += 2.0 * g[i].M * g[i].N * g[i].K * g[i].count;
    }
    double dt = mb_now() - t0;
    int ok = A && Bm && C;
    free(A);
    free(Bm);
    free(C);
    if (seconds)
        *seconds = dt;
    return ok && dt > 0 ? flops / dt : 0;
}
