/* CUDA build: device-side intervals from CUDA events. */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "cuda_rt.h"
}

extern "C" int mb_cuda_rt_event_create(void **ev, char *err, size_t errlen)
{
    cudaEvent_t e = NULL;
    cudaError_t rc = cudaEventCreate(&e);
    if (rc != cudaSuccess) {
        snprintf(err, errlen, "cudaEventCreate: CUDA error %d (%s)", (int)rc, cudaGetErrorString(rc));
        *ev = NULL;
        return -1;
    }
    *ev = e;
    return 0;
}

extern "C" void mb_cuda_rt_event_record(void *ev)
{
    if (ev)
        cudaEventRecord((cudaEvent_t)ev, 0);
}

extern "C" double mb_cuda_rt_event_elapsed(void *start, void *stop)
{
    float ms = 0;
    if (!start || !stop || cudaEventSynchronize((cudaEvent_t)stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop) != cudaSuccess)
        return -1;
    return ms * 1e-3;
}

extern "C" void mb_cuda_rt_event_destroy(void *ev)
{
    if (ev)
        cudaEventDestroy((cudaEvent_t)ev);
}
