/* One GEMM interface: OpenBLAS cblas_sgemm on the host, cuBLAS on a CUDA
 * device. Row-major throughout. */
#include "nn.h"
#include "gemm_cuda.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char gemm_err[256];

const char *nn_gemm_error(void) { return gemm_err; }

int nn_gemm_cuda_available(void) { return nn_cublas_available(); }

/* The split (nn_gemm_set_split): -1 until read from NN_GEMM_SPLIT. */
static int split_on = -1;

int nn_gemm_set_split(int on)
{
    int was = split_on < 0 ? 0 : split_on;
    if (split_on < 0) {
        const char *e = getenv("NN_GEMM_SPLIT");
        was = e && strcmp(e, "1") == 0;
    }
    split_on = on < 0 ? was : on != 0;
    return was;
}

/* At least this many multiply-adds (2^24, ~0.2 ms on a core here) to split. */
#define SPLIT_MIN_MACS 16777216.0

static void sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha,
                A, lda, B, ldb, beta, C, ldc);
}

/* One single-threaded OpenBLAS call per OpenMP thread on its share of C:
 * rows when that duplicates less packing (each thread packs all of op(B),
 * K x N) than columns (all of op(A), M x K), in multiples of 16. The same
 * bits as one single-threaded call: each element's sum over K is the same
 * kernel's in the same K blocks, which OpenBLAS's single-threaded driver
 * sizes from K alone (its threaded driver cuts the K blocks differently
 * where K is past one block, ~384 here, so those bits differ from the
 * default's). OpenBLAS is at one thread (the caller's doing). */
static void split_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc, int nt)
{
    int rows = (double)K * N <= (double)M * K, len = rows ? M : N;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int step = (len / n + 15) / 16 * 16, lo = t * step, hi = lo + step < len ? lo + step : len;
        if (t == n - 1)
            hi = len;
        if (lo < hi) {
            if (rows)
                sgemm(ta, tb, hi - lo, N, K, alpha, ta ? A + lo : A + (size_t)lo * lda, lda, B, ldb, beta,
                      C + (size_t)lo * ldc, ldc);
            else
                sgemm(ta, tb, M, hi - lo, K, alpha, A, lda, tb ? B + (size_t)lo * ldb : B + lo, ldb, beta,
                      C + lo, ldc);
        }
    }
}

int nn_gemm(enum nn_device dev, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return 0;
    if (dev == NN_CUDA)
        return nn_cublas_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, gemm_err,
                               sizeof(gemm_err));
    if (split_on < 0)
        nn_gemm_set_split(-1);
    if (!split_on || omp_in_parallel()) { /* in a region: the caller runs OpenBLAS at one thread */
        sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return 0;
    }
    /* the split: OpenBLAS always single-threaded, so the bits do not
     * depend on the thread count; large GEMMs over the OpenMP threads */
    int nt = omp_get_max_threads(), nb = openblas_get_num_threads();
    if (nb > 1)
        openblas_set_num_threads(1);
    if (nt > 1 && (double)M * N * K >= SPLIT_MIN_MACS && (M >= 32 * nt || N >= 32 * nt))
        split_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, nt);
    else
        sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (nb > 1)
        openblas_set_num_threads(nb);
    return 0;
}
