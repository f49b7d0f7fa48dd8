/* Internal to nn/: the cuBLAS calls, implemented in gemm_cuda.cu (CUDA
 * build) and gemm_nocuda.c (CPU build), so no C file includes CUDA. */
#ifndef MB_NN_GEMM_CUDA_H
#define MB_NN_GEMM_CUDA_H

/* Row-major C = alpha op(A) op(B) + beta C on device pointers; 0 or -1
 * with the reason in err. */
int nn_cublas_sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc, char *err,
                    unsigned errlen);
int nn_cublas_available(void);

#endif
