/* One GEMM interface: OpenBLAS cblas_sgemm on the host, cuBLAS on a CUDA
 * device. Row-major throughout. */
#include "nn.h"
#include "gemm_cuda.h"

#include <cblas.h>
#include <stdio.h>

static _Thread_local char gemm_err[256];

const char *nn_gemm_error(void) { return gemm_err; }

int nn_gemm_cuda_available(void) { return nn_cublas_available(); }

int nn_gemm(enum nn_device dev, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return 0;
    if (dev == NN_CUDA)
        return nn_cublas_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, gemm_err,
                               sizeof(gemm_err));
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
    return 0;
}
