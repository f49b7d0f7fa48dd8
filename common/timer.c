/* Device-side timing through CUDA events (see common.h). */
#include "common.h"
#include "cuda_rt.h"

int mb_cuda_timer_init(struct mb_cuda_timer *t, char *err, size_t errlen)
{
    t->start = t->stop = NULL;
    if (mb_cuda_rt_event_create(&t->start, err, errlen) != 0 ||
        mb_cuda_rt_event_create(&t->stop, err, errlen) != 0) {
        mb_cuda_timer_free(t);
        return -1;
    }
    return 0;
}

void mb_cuda_timer_start(struct mb_cuda_timer *t) { mb_cuda_rt_event_record(t->start); }

double mb_cuda_timer_stop(struct mb_cuda_timer *t)
{
    mb_cuda_rt_event_record(t->stop);
    return mb_cuda_rt_event_elapsed(t->start, t->stop);
}

void mb_cuda_timer_free(struct mb_cuda_timer *t)
{
    mb_cuda_rt_event_destroy(t->start);
    mb_cuda_rt_event_destroy(t->stop);
    t->start = t->stop = NULL;
}
