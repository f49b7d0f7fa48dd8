/* How a measured run lays out its requests on the engine: the options for
 * a device queue depth, the offsets of an iteration, and the adaptive
 * thread counts chosen, as text for a result file. */
#include "aio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_aio_opts mb_aio_opts_for_qd(int nthreads, int nfiles, unsigned qd, unsigned batch, size_t arena)
{
    /* the device queue depth is the engine's in-flight cap (split over the
     * I/O threads), refilled on every completion as fio does */
    unsigned nth = nthreads > 0 ? (unsigned)nthreads : (unsigned)mb_aio_adaptive_threads(nfiles, 1.0);
    return (struct mb_aio_opts){.nthreads = nthreads, .arena = arena, .depth = qd,
                                .inflight = (qd + nth - 1) / nth,
                                /* at most 4 SQEs per io_uring_enter: about what fio
                                 * does whatever its iodepth_batch_submit (its report:
                                 * 1-4 per submit); bigger chunks reach the virtio disk
                                 * together and come back together, idling it */
                                .submit_batch = batch < 4 ? batch : 4};
}

size_t mb_aio_slots(size_t n, size_t bs, size_t qd)
{
    size_t cap = (64u << 20) / bs, nslot = n < cap ? n : cap;
    /* every request posted at once needs its own slot: the driver posts up
     * to 2 x qd (fewer where that would take more than 256 MiB) */
    size_t want = 2 * qd;
    if (want * bs > (256u << 20))
        want = (256u << 20) / bs > qd ? (256u << 20) / bs : qd;
    return nslot < want ? want : nslot;
}

void mb_aio_offsets(uint64_t *off, size_t n, size_t bs, uint64_t vol, int sequential, uint64_t seed,
                    long long iter, uint64_t *seqpos)
{
    uint64_t nblk = vol / bs;
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)iter * 0xbf58476d1ce4e5b9ULL + bs;
    for (size_t i = 0; i < n; i++) {
        if (!sequential) { /* xorshift64: cheap, and the same offsets for a seed */
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            off[i] = (x % nblk) * bs;
        } else {
            off[i] = *seqpos;
            *seqpos = (*seqpos + bs) % (nblk * bs);
        }
    }
}

void mb_aio_runs_text(const int *h, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = 0;
    for (size_t i = 0, j; i < n && used < len; i = j) {
        for (j = i; j < n && h[j] == h[i]; j++)
            ;
        used += (size_t)snprintf(buf + used, len - used, "%s%dx%zu", used ? " " : "", h[i], j - i);
    }
}

const char *mb_aio_thread_history_text(struct mb_aio *a, char *buf, size_t len)
{
    size_t n = mb_aio_thread_history(a, NULL, 0);
    int *h = calloc(n + 1, sizeof(int));
    if (!h)
        return "out of memory";
    n = mb_aio_thread_history(a, h, n);
    mb_aio_runs_text(h, n, buf, len);
    free(h);
    return n ? buf : "none (fewer waits than one window)";
}
