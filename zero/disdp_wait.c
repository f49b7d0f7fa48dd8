/* Waiting without spinning, and the corrupt-grad position (disdp_internal.h). */
#include "disdp_internal.h"
#include "../common/common.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void mb_disdp_nap(const struct mb_disdp_cfg *c)
{
    double s = c->poll_sleep_s > 0 ? c->poll_sleep_s : 20e-6;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

int mb_disdp_waitall(const struct mb_disdp_cfg *c, int n, MPI_Request *r)
{
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        mb_disdp_nap(c);
    }
}

int mb_disdp_grad_fault(const struct mb_disdp_cfg *c, int *step, int *layer, size_t *chunk, int *worker,
                        size_t *elem)
{
    const char *f = getenv("MB_FAULT_INJECT");
    if (!f || strcmp(f, "corrupt-grad") != 0 || c->steps < 1)
        return 0;
    uint64_t r = mb_mix64(c->seed ^ 0x6469736470ull); /* "disdp" */
    *step = (int)(mb_mix64(r + 1) % (uint64_t)c->steps);
    *layer = (int)(mb_mix64(r + 2) % (uint64_t)c->nlayers);
    size_t nc = mb_disdp_nchunks(c, *layer);
    if (nc == 0)
        return 0;
    *chunk = (size_t)(mb_mix64(r + 3) % nc);
    *worker = (int)(mb_mix64(r + 4) % (uint64_t)c->W);
    size_t off, n;
    mb_disdp_chunk_range(c, *layer, *chunk, &off, &n);
    *elem = (size_t)(mb_mix64(r + 5) % n);
    return 1;
}
