/* offload/aio's CUDA path in the CPU build: there is no device. */
#include "aio.h"

#include <stdio.h>

int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err, size_t errlen)
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
