/* CUDA build: pinned and device memory, copies, and device discovery. */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "cuda_rt.h"
}

static int fail(cudaError_t rc, const char *what, char *err, size_t errlen)
{
    if (err)
        snprintf(err, errlen, "%s: CUDA error %d (%s)", what, (int)rc, cudaGetErrorString(rc));
    return -1;
}

extern "C" int mb_cuda_rt_built(void) { return 1; }

extern "C" int mb_cuda_rt_probe(char *err, size_t errlen)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess)
        return fail(rc, "cudaGetDeviceCount", err, errlen);
    if (n == 0) {
        if (err)
            snprintf(err, errlen, "no CUDA device found");
        return -1;
    }
    return 0;
}

extern "C" void mb_cuda_rt_describe(char *buf, size_t len)
{
    int rt = 0, drv = 0, dev = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    cudaDeviceProp prop;
    const char *name = "none";
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        name = prop.name;
    else
        cudaGetLastError(); /* clear the sticky "no driver" error */
    snprintf(buf, len, "runtime %d.%d, driver %d.%d, device %s", rt / 1000, (rt % 1000) / 10,
             drv / 1000, (drv % 1000) / 10, name);
}

extern "C" int mb_cuda_rt_alloc_pinned(void **ptr, size_t bytes, char *err, size_t errlen)
{
    cudaError_t rc = cudaMallocHost(ptr, bytes ? bytes : 1);
    return rc == cudaSuccess ? 0 : fail(rc, "cudaMallocHost", err, errlen);
}

extern "C" int mb_cuda_rt_alloc_device(void **ptr, size_t bytes, char *err, size_t errlen)
{
    cudaError_t rc = cudaMalloc(ptr, bytes ? bytes : 1);
    return rc == cudaSuccess ? 0 : fail(rc, "cudaMalloc", err, errlen);
}

extern "C" void mb_cuda_rt_free_pinned(void *ptr) { cudaFreeHost(ptr); }
extern "C" void mb_cuda_rt_free_device(void *ptr) { cudaFree(ptr); }

extern "C" int mb_cuda_rt_copy(void *dst, const void *src, size_t bytes, int dir)
{
    static const cudaMemcpyKind kinds[] = {cudaMemcpyHostToHost, cudaMemcpyHostToDevice,
                                           cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice};
    if (dir < 0 || dir > 3)
        return -1;
    return cudaMemcpy(dst, src, bytes, kinds[dir]) == cudaSuccess ? 0 : -1;
}
