/* CPU build: cuBLAS is not built in. */
#include "gemm_cuda.h"

#include <stdio.h>

int nn_cublas_sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc, char *err,
                    unsigned errlen)
{
    (void)ta; (void)tb; (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)lda;
    (void)B; (void)ldb; (void)beta; (void)C; (void)ldc;
    snprintf(err, errlen, "this build has no cuBLAS (rebuild with make CUDA=1)");
    return -1;
}

int nn_cublas_available(void) { return 0; }
