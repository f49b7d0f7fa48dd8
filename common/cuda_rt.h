/* Internal to common/: the CUDA runtime calls the allocator needs.
 * Implemented by mem_cuda.cu in the CUDA build and by nocuda.c otherwise,
 * so no C file ever includes a CUDA header. */
#ifndef MB_CUDA_RT_H
#define MB_CUDA_RT_H

#include <stddef.h>

int mb_cuda_rt_built(void);
int mb_cuda_rt_probe(char *err, size_t errlen);
void mb_cuda_rt_describe(char *buf, size_t len);
int mb_cuda_rt_alloc_pinned(void **ptr, size_t bytes, char *err, size_t errlen);
int mb_cuda_rt_alloc_device(void **ptr, size_t bytes, char *err, size_t errlen);
void mb_cuda_rt_free_pinned(void *ptr);
void mb_cuda_rt_free_device(void *ptr);
/* dir: 0 host->host, 1 host->device, 2 device->host, 3 device->device */
int mb_cuda_rt_copy(void *dst, const void *src, size_t bytes, int dir);
/* CUDA events on the default stream. elapsed records nothing: it waits
 * for `stop` and returns seconds since `start`, or -1. */
int mb_cuda_rt_event_create(void **ev, char *err, size_t errlen);
void mb_cuda_rt_event_record(void *ev);
double mb_cuda_rt_event_elapsed(void *start, void *stop);
void mb_cuda_rt_event_destroy(void *ev);

#endif
