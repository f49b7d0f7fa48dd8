/* offload/aio's CUDA path in the CPU build: there is no device. */
#include "aio.h"

#include <stdio.h>

int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err, size_t errlen)
{
    (void)dev, (void)staging, (void)bytes;
    snprintf(err, errlen, "built without CUDA");
    return -1;
}

int mb_aio_stage_from_device(void *staging, const void *dev, size_t bytes, char *err, size_t errlen)
{
    (void)dev, (void)staging, (void)bytes;
    snprintf(err, errlen, "built without CUDA");
    return -1;
}

int mb_aio_pin(void *p, size_t bytes, char *err, size_t errlen)
{
    (void)p, (void)bytes;
    snprintf(err, errlen, "built without CUDA");
    return -1;
}

void mb_aio_unpin(void *p) { (void)p; }

int mb_aio_mapped_alloc(void **p, size_t bytes, char *err, size_t errlen)
{
    (void)bytes;
    *p = NULL;
    snprintf(err, errlen, "mapped host memory: built without CUDA");
    return -1;
}

void mb_aio_mapped_free(void *p) { (void)p; }

long long mb_aio_gpu_post_run(struct mb_aio_mailbox *mb, void *dst, uint64_t vol, size_t bs, int n,
                              int nbatch, uint64_t seed, char *err, size_t errlen)
{
    (void)mb, (void)dst, (void)vol, (void)bs, (void)n, (void)nbatch, (void)seed;
    snprintf(err, errlen, "GPU-posted batches: built without CUDA");
    return -1;
}
