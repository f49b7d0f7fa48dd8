// offload/aio's CUDA path (compiled in the CUDA variant): pinned staging and
// asynchronous copies into device memory.
#include "aio.h"

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err,
                                      size_t errlen)
{
    cudaError_t e = cudaMemcpyAsync(dev, staging, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(cudaStreamPerThread);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaMemcpyAsync: CUDA error %d (%s)", (int)e, cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

extern "C" int mb_aio_pin(void *p, size_t bytes, char *err, size_t errlen)
{
    cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaHostRegister: CUDA error %d (%s)", (int)e, cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
