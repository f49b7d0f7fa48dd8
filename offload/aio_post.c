/* GPU-posted batches, host side (CAM's persistent CPU polling thread): polls
 * the mailbox's doorbell, submits each posted batch through the engine,
 * stages device destinations through pinned memory, and publishes each
 * batch's 64-bit completion counter. Plain C, so a CPU thread can play the
 * GPU's part in tests; the kernel is in aio_cuda.cu. */
#include "aio.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The mailbox words are plain integers (the layout is shared with CUDA C++);
 * the host side reaches them through GCC's atomic builtins. */
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

struct mb_aio_poller {
    struct mb_aio *a;
    struct mb_aio_mailbox *mb;
    char *dst, *staging;
    size_t dst_bytes, max_req;
    int dst_device, pinned;
    pthread_t tid;
    _Atomic int stop;
    uint64_t served;
    struct mb_aio_req reqs[MB_AIO_POST_SLOTS][MB_AIO_POST_MAXREQ];
    int32_t early[MB_AIO_POST_SLOTS][MB_AIO_POST_MAXREQ]; /* status decided before submission */
    mb_aio_ticket tk[MB_AIO_POST_SLOTS];
};

struct mb_aio_mailbox *mb_aio_mailbox_alloc(int mapped, char *err, size_t errlen)
{
    void *p = NULL;
    if (mapped) {
        if (mb_aio_mapped_alloc(&p, sizeof(struct mb_aio_mailbox), err, errlen) != 0)
            return NULL;
    } else if (posix_memalign(&p, 4096, sizeof(struct mb_aio_mailbox)) != 0) {
        snprintf(err, errlen, "mailbox: out of memory");
        return NULL;
    }
    memset(p, 0, sizeof(struct mb_aio_mailbox));
    ((struct mb_aio_mailbox *)p)->mapped = mapped != 0;
    return p;
}

void mb_aio_mailbox_free(struct mb_aio_mailbox *mb)
{
    if (!mb)
        return;
    if (mb->mapped)
        mb_aio_mapped_free(mb);
    else
        free(mb);
}

static char *stage_of(struct mb_aio_poller *p, int slot, int i)
{
    return p->staging + ((size_t)slot * MB_AIO_POST_MAXREQ + (size_t)i) * p->max_req;
}

/* Reads batch seq's requests out of its slot and submits them. */
static void take(struct mb_aio_poller *p, uint64_t seq)
{
    int k = (int)(seq % MB_AIO_POST_SLOTS);
    struct mb_aio_post_slot *sl = &p->mb->slot[k];
    uint32_t n = sl->n;
    if (n > MB_AIO_POST_MAXREQ)
        n = MB_AIO_POST_MAXREQ; /* the rest are ignored; failed counts it below */
    for (uint32_t i = 0; i < n; i++) {
        const struct mb_aio_post_req *q = &sl->req[i];
        struct mb_aio_req *r = &p->reqs[k][i];
        int bad = q->len == 0 || q->dst > p->dst_bytes || q->len > p->dst_bytes - q->dst ||
                  (p->dst_device && q->len > p->max_req) || (q->op != MB_AIO_READ && q->op != MB_AIO_WRITE);
        p->early[k][i] = bad ? -EINVAL : 0;
        char *buf = p->dst_device ? stage_of(p, k, (int)i) : p->dst + q->dst;
        *r = (struct mb_aio_req){q->offset, bad ? 0 : q->len, buf, (int)q->op, 0};
        if (!bad && p->dst_device && q->op == MB_AIO_WRITE) {
            char why[256];
            if (mb_aio_stage_from_device(buf, p->dst + q->dst, q->len, why, sizeof(why)) != 0) {
                p->early[k][i] = -EIO;
                r->len = 0;
            }
        }
    }
    if (mb_aio_submit(p->a, p->reqs[k], n, &p->tk[k]) != 0) {
        for (uint32_t i = 0; i < n; i++)
            p->early[k][i] = -ENOMEM;
        p->tk[k] = NULL;
    }
}

/* Waits for batch seq, stages device reads, publishes statuses and counters. */
static void finish(struct mb_aio_poller *p, uint64_t seq)
{
    int k = (int)(seq % MB_AIO_POST_SLOTS);
    struct mb_aio_post_slot *sl = &p->mb->slot[k];
    uint32_t n = sl->n, nreq = n > MB_AIO_POST_MAXREQ ? MB_AIO_POST_MAXREQ : n;
    if (p->tk[k])
        mb_aio_wait(p->tk[k]);
    uint32_t failed = n - nreq;
    for (uint32_t i = 0; i < nreq; i++) {
        struct mb_aio_post_req *q = &sl->req[i];
        int32_t st = p->early[k][i] ? p->early[k][i] : p->reqs[k][i].status;
        if (!st && p->dst_device && q->op == MB_AIO_READ) {
            char why[256];
            if (mb_aio_stage_to_device(p->dst + q->dst, p->reqs[k][i].buf, q->len, why, sizeof(why)) != 0)
                st = -EIO;
        }
        q->status = st;
        failed += st != 0;
    }
    sl->failed = failed;
    STORE_REL(&sl->done, seq + 1);          /* region 4: the batch's counter */
    STORE_REL(&p->mb->completed, seq + 1);  /* batches are finished in order */
    p->served++;
}

static void *poll_main(void *arg)
{
    struct mb_aio_poller *p = arg;
    uint64_t next = LOAD_ACQ(&p->mb->completed), fin = next;
    unsigned idle = 0;
    for (;;) {
        int stop = atomic_load(&p->stop);
        uint64_t bell = LOAD_ACQ(&p->mb->doorbell); /* acquire: the slot's contents */
        int work = 0;
        while (next < bell && next - fin < MB_AIO_POST_SLOTS) {
            take(p, next++);
            work = 1;
        }
        while (fin < next && (!p->tk[fin % MB_AIO_POST_SLOTS] || mb_aio_test(p->tk[fin % MB_AIO_POST_SLOTS]) ||
                              stop)) {
            finish(p, fin++);
            work = 1;
        }
        if (stop && fin == next && next >= bell)
            break;
        if (work) {
            idle = 0;
        } else if (++idle < 64) {
            sched_yield(); /* CAM's poller spins; on shared cores it yields */
        } else {
            /* long idle: poll every 20 us instead of holding a core */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

struct mb_aio_poller *mb_aio_poller_start(struct mb_aio *a, struct mb_aio_mailbox *mb, void *dst,
                                          size_t dst_bytes, int dst_device, size_t max_req,
                                          char *err, size_t errlen)
{
    struct mb_aio_poller *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "poller: out of memory");
        return NULL;
    }
    p->a = a;
    p->mb = mb;
    p->dst = dst;
    p->dst_bytes = dst_bytes;
    p->dst_device = dst_device;
    p->max_req = (max_req + 4095) & ~(size_t)4095;
    if (dst_device) {
        size_t bytes = (size_t)MB_AIO_POST_SLOTS * MB_AIO_POST_MAXREQ * p->max_req;
        p->staging = mb_aio_alloc(a, bytes);
        if (!p->staging) {
            snprintf(err, errlen, "poller: staging of %zu bytes: out of memory", bytes);
            free(p);
            return NULL;
        }
        /* page-locked for asynchronous copies; where that fails (no device)
         * the copies fail too, and each request reports -EIO */
        char why[256];
        p->pinned = mb_aio_pin(p->staging, bytes, why, sizeof(why)) == 0;
    }
    if (pthread_create(&p->tid, NULL, poll_main, p) != 0) {
        snprintf(err, errlen, "poller: pthread_create: %s", strerror(errno));
        if (p->pinned)
            mb_aio_unpin(p->staging);
        if (p->staging)
            mb_aio_free(a, p->staging);
        free(p);
        return NULL;
    }
    return p;
}

uint64_t mb_aio_poller_stop(struct mb_aio_poller *p)
{
    atomic_store(&p->stop, 1);
    pthread_join(p->tid, NULL);
    uint64_t n = p->served;
    if (p->pinned)
        mb_aio_unpin(p->staging);
    if (p->staging)
        mb_aio_free(p->a, p->staging);
    free(p);
    return n;
}
