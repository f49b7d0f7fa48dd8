/* CPU build: every CUDA entry point reports that CUDA was not built in. */
#include "cuda_rt.h"

#include <stdio.h>

static int not_built(char *err, size_t errlen)
{
    if (err)
        snprintf(err, errlen, "this build has no CUDA support (rebuild with make CUDA=1)");
    return -1;
}

int mb_cuda_rt_built(void) { return 0; }
int mb_cuda_rt_probe(char *err, size_t errlen) { return not_built(err, errlen); }
void mb_cuda_rt_describe(char *buf, size_t len) { if (len) buf[0] = '\0'; }
int mb_cuda_rt_alloc_pinned(void **ptr, size_t bytes, char *err, size_t errlen)
{
    (void)ptr; (void)bytes;
    return not_built(err, errlen);
}
int mb_cuda_rt_alloc_device(void **ptr, size_t bytes, char *err, size_t errlen)
{
    (void)ptr; (void)bytes;
    return not_built(err, errlen);
}
void mb_cuda_rt_free_pinned(void *ptr) { (void)ptr; }
void mb_cuda_rt_free_device(void *ptr) { (void)ptr; }
int mb_cuda_rt_copy(void *dst, const void *src, size_t bytes, int dir)
{
    (void)dst; (void)src; (void)bytes; (void)dir;
    return -1;
}

int mb_cuda_rt_event_create(void **ev, char *err, size_t errlen)
{
    *ev = NULL;
    return not_built(err, errlen);
}
void mb_cuda_rt_event_record(void *ev) { (void)ev; }
double mb_cuda_rt_event_elapsed(void *start, void *stop)
{
    (void)start; (void)stop;
    return -1;
}
void mb_cuda_rt_event_destroy(void *ev) { (void)ev; }
