/* CUDA build: row-major SGEMM through cuBLAS (column-major) by computing
 * C^T = op(B)^T op(A)^T, i.e. swapping the operands. One handle per
 * process, created on first use. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "gemm_cuda.h"
}

static cublasHandle_t handle;
static int handle_state; /* 0 untried, 1 ready, -1 failed */
static cublasStatus_t handle_rc;

static int get_handle(char *err, unsigned errlen)
{
    if (handle_state == 0) {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
            handle_state = -1;
            handle_rc = CUBLAS_STATUS_NOT_INITIALIZED;
        } else {
            handle_rc = cublasCreate(&handle);
            handle_state = handle_rc == CUBLAS_STATUS_SUCCESS ? 1 : -1;
            if (handle_state == 1) /* exact fp32, comparable to the CPU path */
                cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
        }
    }
    if (handle_state < 0 && err)
        snprintf(err, errlen, "cuBLAS unavailable (status %d; no usable CUDA device?)", (int)handle_rc);
    return handle_state > 0 ? 0 : -1;
}

extern "C" int nn_cublas_available(void) { return get_handle(NULL, 0) == 0; }

extern "C" int nn_cublas_sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A,
                               int lda, const float *B, int ldb, float beta, float *C, int ldc,
                               char *err, unsigned errlen)
{
    if (get_handle(err, errlen) != 0)
        return -1;
    cublasStatus_t rc = cublasSgemm(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc);
    if (rc == CUBLAS_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess)
        return 0;
    snprintf(err, errlen, "cublasSgemm: status %d", (int)rc);
    return -1;
}
