/* CUDA build: the device side of the nccl and cuda-ipc algorithms. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef MB_HAVE_NCCL
#include <nccl.h>
#endif

extern "C" {
#include "device.h"
}

static int cuda_fail(cudaError_t rc, const char *what, char *err, size_t errlen)
{
    if (err)
        snprintf(err, errlen, "%s: CUDA error %d (%s)", what, (int)rc, cudaGetErrorString(rc));
    cudaGetLastError(); /* clear a sticky error */
    return -1;
}

extern "C" int mb_coll_dev_count(int *n, char *err, size_t errlen)
{
    *n = 0;
    cudaError_t rc = cudaGetDeviceCount(n);
    if (rc != cudaSuccess)
        return cuda_fail(rc, "cudaGetDeviceCount", err, errlen);
    if (*n == 0) {
        snprintf(err, errlen, "no CUDA device found");
        return -1;
    }
    return 0;
}

extern "C" int mb_coll_dev_select(int device, char *err, size_t errlen)
{
    cudaError_t rc = cudaSetDevice(device);
    return rc == cudaSuccess ? 0 : cuda_fail(rc, "cudaSetDevice", err, errlen);
}

/* ---- NCCL ---------------------------------------------------------------- */

#ifdef MB_HAVE_NCCL
static int nccl_fail(ncclResult_t rc, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, ncclGetErrorString(rc));
    return -1;
}

extern "C" int mb_coll_nccl_unique_id(void *id, char *err, size_t errlen)
{
    ncclUniqueId u;
    ncclResult_t rc = ncclGetUniqueId(&u);
    if (rc != ncclSuccess)
        return nccl_fail(rc, "ncclGetUniqueId", err, errlen);
    memcpy(id, &u, sizeof(u));
    return 0;
}

extern "C" int mb_coll_nccl_init(void **comm, const void *id, int nranks, int rank, char *err, size_t errlen)
{
    ncclUniqueId u;
    memcpy(&u, id, sizeof(u));
    ncclComm_t c;
    ncclResult_t rc = ncclCommInitRank(&c, nranks, u, rank);
    if (rc != ncclSuccess)
        return nccl_fail(rc, "ncclCommInitRank", err, errlen);
    *comm = c;
    return 0;
}

extern "C" int mb_coll_nccl_run(void *comm, int kind, const void *send, void *recv, size_t count, int dtype,
                                int op, int root, int rank, char *err, size_t errlen)
{
    static const ncclDataType_t types[] = {ncclInt8, ncclInt32, ncclInt64, ncclFloat32, ncclFloat64};
    static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMin, ncclMax};
    static const size_t sizes[] = {1, 4, 8, 4, 8};
    ncclComm_t c = (ncclComm_t)comm;
    ncclDataType_t t = types[dtype];
    ncclRedOp_t o = ops[op];
    char *rb = (char *)recv;
    size_t bytes = count * sizes[dtype];
    ncclResult_t rc = ncclSuccess;
    cudaStream_t s = 0;
    switch (kind) {
    case 0: rc = ncclAllReduce(send ? send : recv, recv, count, t, o, c, s); break;
    case 1: /* in place, NCCL reads recvbuf and leaves my block at my offset; ours goes to the start */
        rc = ncclReduceScatter(send ? send : recv, send ? rb : rb + (size_t)rank * bytes, count, t, o, c, s);
        if (rc == ncclSuccess && !send && rank != 0 &&
            cudaMemcpyAsync(rb, rb + (size_t)rank * bytes, bytes, cudaMemcpyDeviceToDevice, s) != cudaSuccess)
            return cuda_fail(cudaGetLastError(), "cudaMemcpyAsync", err, errlen);
        break;
    case 2: rc = ncclAllGather(send ? send : rb + (size_t)rank * bytes, recv, count, t, c, s); break;
    case 3: rc = ncclBroadcast(recv, recv, count, t, root, c, s); break;
    case 4: rc = ncclReduce(send ? send : recv, recv, count, t, o, root, c, s); break;
    default: snprintf(err, errlen, "nccl: unknown collective %d", kind); return -1;
    }
    if (rc != ncclSuccess)
        return nccl_fail(rc, "nccl collective", err, errlen);
    cudaError_t ce = cudaStreamSynchronize(s);
    return ce == cudaSuccess ? 0 : cuda_fail(ce, "cudaStreamSynchronize", err, errlen);
}

extern "C" void mb_coll_nccl_free(void *comm)
{
    if (comm)
        ncclCommDestroy((ncclComm_t)comm);
}
#else
static int no_nccl(char *err, size_t errlen)
{
    snprintf(err, errlen, "NCCL was not found at build time (no nccl.h in CUDA_HOME/include or /usr/include)");
    return -1;
}
extern "C" int mb_coll_nccl_unique_id(void *id, char *err, size_t errlen)
{
    (void)id;
    return no_nccl(err, errlen);
}
extern "C" int mb_coll_nccl_init(void **comm, const void *id, int nranks, int rank, char *err, size_t errlen)
{
    (void)comm, (void)id, (void)nranks, (void)rank;
    return no_nccl(err, errlen);
}
extern "C" int mb_coll_nccl_run(void *comm, int kind, const void *send, void *recv, size_t count, int dtype,
                                int op, int root, int rank, char *err, size_t errlen)
{
    (void)comm, (void)kind, (void)send, (void)recv, (void)count, (void)dtype, (void)op, (void)root, (void)rank;
    return no_nccl(err, errlen);
}
extern "C" void mb_coll_nccl_free(void *comm) { (void)comm; }
#endif

/* ---- CUDA IPC -------------------------------------------------------------- */

#define IPC_CACHE 128
static struct {
    cudaIpcMemHandle_t h;
    void *base;
} opened[IPC_CACHE];
static int nopened;

extern "C" int mb_coll_ipc_handle(const void *ptr, void *handle, char *err, size_t errlen)
{
    cudaIpcMemHandle_t h;
    cudaError_t rc = cudaIpcGetMemHandle(&h, (void *)ptr);
    if (rc != cudaSuccess)
        return cuda_fail(rc, "cudaIpcGetMemHandle", err, errlen);
    memcpy(handle, &h, sizeof(h));
    return 0;
}

extern "C" int mb_coll_ipc_open(const void *handle, void **base, char *err, size_t errlen)
{
    for (int i = 0; i < nopened; i++)
        if (memcmp(&opened[i].h, handle, sizeof(cudaIpcMemHandle_t)) == 0) {
            *base = opened[i].base;
            return 0;
        }
    if (nopened == IPC_CACHE) { /* full: the oldest mappings go */
        mb_coll_ipc_close_all();
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof(h));
    cudaError_t rc = cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
    if (rc != cudaSuccess)
        return cuda_fail(rc, "cudaIpcOpenMemHandle", err, errlen);
    opened[nopened].h = h;
    opened[nopened].base = *base;
    nopened++;
    return 0;
}

extern "C" void mb_coll_ipc_close_all(void)
{
    for (int i = 0; i < nopened; i++)
        cudaIpcCloseMemHandle(opened[i].base);
    nopened = 0;
}

/* ---- reduction and copies -------------------------------------------------- */

#define MAX_SRC 32
struct srcs {
    const void *p[MAX_SRC];
};

template <typename T, int OP>
__global__ void reduce_kernel(T *dst, srcs s, int nsrc, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        T acc = ((const T *)s.p[0])[i];
        for (int k = 1; k < nsrc; k++) {
            T v = ((const T *)s.p[k])[i];
            acc = OP == 0 ? (T)(acc + v) : OP == 1 ? (T)(acc * v) : OP == 2 ? (v < acc ? v : acc) : (v > acc ? v : acc);
        }
        dst[i] = acc; /* every source of element i is read first: dst may be one */
    }
}

template <typename T>
static void launch(int op, void *dst, const srcs &s, int nsrc, size_t n)
{
    unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    switch (op) {
    case 0: reduce_kernel<T, 0><<<blocks, 256>>>((T *)dst, s, nsrc, n); break;
    case 1: reduce_kernel<T, 1><<<blocks, 256>>>((T *)dst, s, nsrc, n); break;
    case 2: reduce_kernel<T, 2><<<blocks, 256>>>((T *)dst, s, nsrc, n); break;
    default: reduce_kernel<T, 3><<<blocks, 256>>>((T *)dst, s, nsrc, n); break;
    }
}

extern "C" int mb_coll_dev_reduce(int dtype, int op, void *dst, const void *const *src, int nsrc, size_t n,
                                  char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    if (nsrc < 1 || nsrc > MAX_SRC) {
        snprintf(err, errlen, "cuda-ipc: %d ranks on a node, at most %d supported", nsrc, MAX_SRC);
        return -1;
    }
    srcs s;
    for (int k = 0; k < nsrc; k++)
        s.p[k] = src[k];
    switch (dtype) {
    case 0: launch<int8_t>(op, dst, s, nsrc, n); break;
    case 1: launch<int32_t>(op, dst, s, nsrc, n); break;
    case 2: launch<int64_t>(op, dst, s, nsrc, n); break;
    case 3: launch<float>(op, dst, s, nsrc, n); break;
    default: launch<double>(op, dst, s, nsrc, n); break;
    }
    cudaError_t rc = cudaGetLastError();
    if (rc == cudaSuccess)
        rc = cudaDeviceSynchronize();
    return rc == cudaSuccess ? 0 : cuda_fail(rc, "reduction kernel", err, errlen);
}

extern "C" int mb_coll_dev_copy(void *dst, const void *src, size_t bytes, char *err, size_t errlen)
{
    if (bytes == 0 || dst == src)
        return 0;
    cudaError_t rc = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault); /* peer memory through UVA */
    return rc == cudaSuccess ? 0 : cuda_fail(rc, "cudaMemcpy (device to device)", err, errlen);
}
