/* The engine: submission rings, I/O threads, io_uring and pread back ends. */
#include "aio.h"
#include "aio_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEV 64
#define CQ_BATCH 256 /* completions taken per device and round */

struct seg {
    struct seg *next;            /* the I/O thread's free list */
    struct mb_aio_batch *b;
    struct mb_aio_req *r;
    int dev, write, fixed, file; /* file: registered file index */
    uint64_t devoff;             /* where the I/O goes (aligned when bounced) */
    size_t len, iolen, skip;     /* bytes wanted, bytes issued, offset of wanted data in bounce */
    char *dst, *bounce;
    struct iothread *owner;
};

struct mb_aio_batch {
    struct mb_aio *a;
    struct mb_aio_req *reqs;
    size_t n;
    uint64_t nsegs;
    _Atomic uint64_t done;   /* the batch's completion counter (segments) */
    /* PENDING -> (SLEEPING) -> COMPLETE, one word so that the completer never
     * touches the batch after publishing: the waiter may free it at once */
    _Atomic uint32_t state;
    int failed;              /* written by the one I/O thread that owns the batch */
};

enum { B_PENDING, B_SLEEPING, B_COMPLETE };

struct iothread {
    struct mb_aio *a;
    pthread_t tid;
    struct mb_aio_ring ring;
    struct io_uring uring[MAX_DEV];
    int nuring;
    int efd, has_efd;            /* eventfd every ring signals (several devices) */
    _Atomic int sleeping;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct seg **queue; size_t qn, qcap, qhead;
    struct seg *free_segs;       /* recycled segments: no malloc per I/O */
    unsigned inflight[MAX_DEV], inflight_all;
    struct io_uring_cqe *cqes[MAX_DEV][CQ_BATCH];
    unsigned ncqe[MAX_DEV];
    unsigned prepared[MAX_DEV];
    _Atomic uint64_t submits, inflight_sum;
};

struct mb_aio {
    int ndev, nthreads, direct, use_uring;
    _Atomic int stop;
    unsigned submit_batch;
    unsigned cap;                /* requests in flight per I/O thread, all devices (0: depth per device) */
    int fd[MAX_DEV], bfd[MAX_DEV];
    size_t stripe;
    unsigned depth;
    uint64_t devsize;
    const char *fallback;
    char *arena; size_t arena_size, arena_used; int arena_live;
    pthread_mutex_t amu;
    struct iothread *th;
    _Atomic unsigned rr;
    _Atomic uint64_t bounce_bytes, direct_bytes, buffered_bytes, requests, batches, completed;
    _Atomic uint64_t segno;
    /* adaptive mode: threads in use, and the compute/wait times measured in
     * mb_aio_wait since the last decision */
    int adaptive;
    _Atomic int active;
    unsigned window;
    _Atomic uint64_t win_waits, win_wait_ns, win_compute_ns;
    pthread_mutex_t adapt_mu;
    int *history; size_t caphistory;
    _Atomic size_t nhistory;
    int inject_errno; uint64_t inject_at;
};

static const char *inject_spec(void) { return getenv("MB_AIO_INJECT"); }

/* ---- completion -------------------------------------------------------- */

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void batch_done(struct mb_aio_batch *b)
{
    struct mb_aio *a = b->a;
    atomic_fetch_add(&a->completed, 1);
    /* after this exchange the waiter may free b: only its address is used
     * (a futex wake on a reused word is a harmless spurious wake-up) */
    if (atomic_exchange(&b->state, B_COMPLETE) == B_SLEEPING)
        futex(&b->state, FUTEX_WAKE, INT32_MAX);
}

static void seg_finish(struct seg *s, long res)
{
    struct mb_aio *a = s->b->a;
    uint64_t k = atomic_fetch_add(&a->segno, 1) + 1;
    if (a->inject_errno && k == a->inject_at &&
        (a->inject_errno != ENOSPC || s->write))
        res = -a->inject_errno;
    int st = 0;
    if (res < 0)
        st = (int)res;
    else if (s->bounce && !s->write) {
        if ((size_t)res < s->skip + s->len)
            st = -ENODATA;
        else
            memcpy(s->dst, s->bounce + s->skip, s->len);
    } else if ((size_t)res < s->iolen)
        st = s->write ? -ENOSPC : -ENODATA;
    if (st && !s->r->status) {
        s->r->status = st;
        s->b->failed++;
    }
    free(s->bounce);
    s->bounce = NULL;
    struct mb_aio_batch *b = s->b;
    struct iothread *t = s->owner;
    s->next = t->free_segs;
    t->free_segs = s;
    if (atomic_fetch_add(&b->done, 1) + 1 == b->nsegs)
        batch_done(b);
}

/* ---- splitting a batch into per-device segments ------------------------- */

static int in_arena(const struct mb_aio *a, const void *p, size_t len)
{
    return a->arena && (const char *)p >= a->arena && (const char *)p + len <= a->arena + a->arena_size;
}

static void push_seg(struct iothread *t, struct seg *s)
{
    if (t->qn == t->qcap) {
        if (t->qhead > 0) {
            memmove(t->queue, t->queue + t->qhead, (t->qn - t->qhead) * sizeof(*t->queue));
            t->qn -= t->qhead;
            t->qhead = 0;
        }
        if (t->qn == t->qcap) {
            t->qcap = t->qcap ? 2 * t->qcap : 256;
            t->queue = realloc(t->queue, t->qcap * sizeof(*t->queue));
        }
    }
    t->queue[t->qn++] = s;
}

static void expand(struct iothread *t, struct mb_aio_batch *b)
{
    struct mb_aio *a = t->a;
    for (size_t i = 0; i < b->n; i++) {
        struct mb_aio_req *r = &b->reqs[i];
        uint64_t off = r->offset;
        size_t left = r->len;
        char *p = r->buf;
        while (left > 0) {
            struct seg *s = t->free_segs;
            if (s) {
                t->free_segs = s->next;
                memset(s, 0, sizeof(*s));
            } else {
                s = calloc(1, sizeof(*s));
            }
            s->owner = t;
            uint64_t devoff;
            size_t room = mb_aio_map(off, a->stripe, a->ndev, &s->dev, &devoff);
            size_t n = left < room ? left : room;
            s->b = b; s->r = r; s->write = r->op == MB_AIO_WRITE; s->len = n; s->dst = p;
            s->devoff = devoff; s->iolen = n; s->file = s->dev;
            int aligned = devoff % MB_AIO_BLOCK == 0 && n % MB_AIO_BLOCK == 0 &&
                          (uintptr_t)p % MB_AIO_BLOCK == 0;
            if (!a->direct) {
                atomic_fetch_add(&a->buffered_bytes, n);
            } else if (aligned) {
                s->fixed = in_arena(a, p, n);
                atomic_fetch_add(&a->direct_bytes, n);
            } else if (s->write) {
                s->file = a->ndev + s->dev; /* the buffered descriptor of the same file */
                atomic_fetch_add(&a->buffered_bytes, n);
            } else {
                uint64_t lo = devoff & ~(uint64_t)(MB_AIO_BLOCK - 1);
                uint64_t hi = (devoff + n + MB_AIO_BLOCK - 1) & ~(uint64_t)(MB_AIO_BLOCK - 1);
                s->iolen = (size_t)(hi - lo);
                s->skip = (size_t)(devoff - lo);
                s->devoff = lo;
                if (posix_memalign((void **)&s->bounce, 4096, s->iolen) != 0)
                    s->bounce = NULL;
                atomic_fetch_add(&a->bounce_bytes, s->iolen);
            }
            push_seg(t, s);
            off += n; left -= n; p += n;
        }
    }
}

static int real_fd(const struct mb_aio *a, int file)
{
    return file < a->ndev ? a->fd[file] : a->bfd[file - a->ndev];
}

/* ---- the pread/pwrite back end ------------------------------------------ */

static void posix_one(struct mb_aio *a, struct seg *s)
{
    int fd = real_fd(a, s->file);
    char *buf = s->bounce ? s->bounce : s->dst;
    size_t done = 0;
    long res = 0;
    if (s->bounce == NULL && s->skip) { seg_finish(s, -ENOMEM); return; }
    while (done < s->iolen) {
        ssize_t k = s->write ? pwrite(fd, buf + done, s->iolen - done, (off_t)(s->devoff + done))
                             : pread(fd, buf + done, s->iolen - done, (off_t)(s->devoff + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) { res = -errno; break; }
        if (k == 0)
            break;
        done += (size_t)k;
        res = (long)done;
    }
    seg_finish(s, res);
}

/* ---- the io_uring back end ----------------------------------------------- */

/* Counts a submission: the queue depth the device saw, for mb_aio_info. */
static void note_submit(struct iothread *t, int dev)
{
    t->prepared[dev] = 0;
    atomic_store_explicit(&t->submits, atomic_load_explicit(&t->submits, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&t->inflight_sum,
                          atomic_load_explicit(&t->inflight_sum, memory_order_relaxed) + t->inflight_all,
                          memory_order_relaxed);
}

/* Prepares queued segments while the device and thread caps allow. */
static int submit_queued(struct iothread *t, int *dirty)
{
    struct mb_aio *a = t->a;
    int any = 0;
    while (t->qhead < t->qn) {
        struct seg *s = t->queue[t->qhead];
        if (t->inflight[s->dev] >= a->depth || (a->cap && t->inflight_all >= a->cap))
            break;
        struct io_uring *u = &t->uring[s->dev];
        struct io_uring_sqe *e = io_uring_get_sqe(u);
        if (!e)
            break;
        char *buf = s->bounce ? s->bounce : s->dst;
        if (s->bounce == NULL && s->skip) { t->qhead++; seg_finish(s, -ENOMEM); continue; }
        if (s->fixed) {
            if (s->write)
                io_uring_prep_write_fixed(e, s->file, buf, (unsigned)s->iolen, s->devoff, 0);
            else
                io_uring_prep_read_fixed(e, s->file, buf, (unsigned)s->iolen, s->devoff, 0);
        } else if (s->write) {
            io_uring_prep_write(e, s->file, buf, (unsigned)s->iolen, s->devoff);
        } else {
            io_uring_prep_read(e, s->file, buf, (unsigned)s->iolen, s->devoff);
        }
        e->flags |= IOSQE_FIXED_FILE;
        io_uring_sqe_set_data(e, s);
        t->inflight[s->dev]++;
        t->inflight_all++;
        dirty[s->dev] = 1;
        any = 1;
        t->qhead++;
        if (a->submit_batch && ++t->prepared[s->dev] >= a->submit_batch) {
            io_uring_submit(u); /* a full chunk: the device starts on it now */
            note_submit(t, s->dev);
            dirty[s->dev] = 0;
        }
    }
    return any;
}

/* Takes up to CQ_BATCH ready completions of device dev off the in-flight
 * count (their slots may be refilled at once); finish() handles them. */
static unsigned peek(struct iothread *t, int dev)
{
    unsigned n = io_uring_peek_batch_cqe(&t->uring[dev], t->cqes[dev], CQ_BATCH);
    t->ncqe[dev] = n;
    t->inflight[dev] -= n;
    t->inflight_all -= n;
    return n;
}

static void finish(struct iothread *t, int dev)
{
    unsigned n = t->ncqe[dev];
    for (unsigned i = 0; i < n; i++) {
        struct io_uring_cqe *c = t->cqes[dev][i];
        struct seg *s = io_uring_cqe_get_data(c);
        long res = c->res;
        if (res == -EAGAIN || (res >= 0 && (size_t)res < s->iolen && res > 0 && s->write)) {
            /* partial or retried: finish synchronously */
            posix_one(t->a, s);
        } else {
            seg_finish(s, res);
        }
    }
    io_uring_cq_advance(&t->uring[dev], n);
    t->ncqe[dev] = 0;
}

static void idle_wait(struct iothread *t)
{
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->sleeping, 1);
    if (mb_aio_ring_empty(&t->ring) && !atomic_load(&t->a->stop))
        pthread_cond_wait(&t->cv, &t->mu);
    atomic_store(&t->sleeping, 0);
    pthread_mutex_unlock(&t->mu);
}

/* One round of the io_uring back end, in fio's spirit (refill on every
 * completion, so the queue depth stays at the cap), with one reordering: the
 * completions found ready free their slots first, the refill is submitted,
 * and only then are those completions handled (pattern of the user's
 * destinations, ticket counters, wake-ups), so the device is never idle
 * while the thread does that work. One io_uring_enter per device both
 * submits and, when nothing is ready, waits for the first completion. */
static void uring_round(struct iothread *t)
{
    int dirty[MAX_DEV] = {0};
    unsigned ready = 0;
    for (int d = 0; d < t->nuring; d++)
        ready += peek(t, d);
    submit_queued(t, dirty);
    int may_wait = !ready && mb_aio_ring_empty(&t->ring) && t->inflight_all > 0;
    for (int d = 0; d < t->nuring; d++)
        if (dirty[d])
            note_submit(t, d);
    if (t->nuring == 1) {
        if (dirty[0] || may_wait)
            io_uring_submit_and_wait(&t->uring[0], may_wait ? 1 : 0);
    } else {
        for (int d = 0; d < t->nuring; d++)
            if (dirty[d])
                io_uring_submit(&t->uring[d]);
        if (may_wait && t->has_efd) {
            /* every ring of this thread signals the eventfd when it posts a
             * completion, so one blocking wait covers them all (a timed poll
             * of the busiest ring instead kept waking this thread beside the
             * compute thread); bounded, as a safety net only */
            struct pollfd pfd = {t->efd, POLLIN, 0};
            if (poll(&pfd, 1, 10) > 0) {
                uint64_t v;
                ssize_t got = read(t->efd, &v, sizeof(v));
                (void)got;
            }
        } else if (may_wait) {
            /* no eventfd: a short timed wait on the busiest ring */
            int best = 0;
            for (int d = 1; d < t->nuring; d++)
                if (t->inflight[d] > t->inflight[best])
                    best = d;
            struct io_uring_cqe *cqe;
            struct __kernel_timespec ts = {0, 50000};
            io_uring_wait_cqe_timeout(&t->uring[best], &cqe, &ts);
        }
    }
    for (int d = 0; d < t->nuring; d++)
        if (t->ncqe[d])
            finish(t, d);
}

static void *io_main(void *arg)
{
    struct iothread *t = arg;
    struct mb_aio *a = t->a;
    for (;;) {
        struct mb_aio_batch *b;
        while ((b = mb_aio_ring_pop(&t->ring)) != NULL)
            expand(t, b);
        if (!a->use_uring) {
            while (t->qhead < t->qn)
                posix_one(a, t->queue[t->qhead++]);
        } else {
            uring_round(t);
        }
        if (t->qhead == t->qn) {
            t->qhead = t->qn = 0;
            if (!t->inflight_all && mb_aio_ring_empty(&t->ring)) {
                if (atomic_load(&a->stop))
                    break;
                idle_wait(t);
            }
        }
    }
    return NULL;
}

/* ---- open / close --------------------------------------------------------- */

static int setup_uring(struct mb_aio *a, struct iothread *t, char *why, size_t whylen)
{
    int files[2 * MAX_DEV];
    for (int d = 0; d < a->ndev; d++) {
        files[d] = a->fd[d];
        files[a->ndev + d] = a->bfd[d];
    }
    for (int d = 0; d < a->ndev; d++) {
        unsigned entries = a->cap > a->depth ? a->cap : a->depth;
        int rc = io_uring_queue_init(entries, &t->uring[d], 0);
        if (rc < 0) {
            snprintf(why, whylen, "io_uring_queue_init: %s", strerror(-rc));
            return -1;
        }
        t->nuring = d + 1;
        rc = io_uring_register_files(&t->uring[d], files, (unsigned)(2 * a->ndev));
        if (rc < 0) {
            snprintf(why, whylen, "io_uring_register_files: %s", strerror(-rc));
            return -1;
        }
        if (a->arena) {
            struct iovec iov = {a->arena, a->arena_size};
            rc = io_uring_register_buffers(&t->uring[d], &iov, 1);
            if (rc < 0) {
                snprintf(why, whylen, "io_uring_register_buffers: %s", strerror(-rc));
                return -1;
            }
        }
    }
    if (a->ndev > 1 && (t->efd = eventfd(0, EFD_CLOEXEC)) >= 0) {
        t->has_efd = 1;
        for (int d = 0; d < a->ndev && t->has_efd; d++)
            t->has_efd = io_uring_register_eventfd(&t->uring[d], t->efd) == 0;
        if (!t->has_efd)
            close(t->efd);
    }
    return 0;
}

struct mb_aio *mb_aio_open(const char *const *paths, int n, const struct mb_aio_opts *o,
                           char *err, size_t errlen)
{
    struct mb_aio_opts def = {0};
    if (!o)
        o = &def;
    if (n < 1 || n > MAX_DEV) {
        snprintf(err, errlen, "%d files: accepts 1 to %d", n, MAX_DEV);
        return NULL;
    }
    struct mb_aio *a = calloc(1, sizeof(*a));
    a->ndev = n;
    a->stripe = o->stripe ? o->stripe : 64 * 1024;
    a->depth = o->depth ? o->depth : 128;
    a->cap = o->inflight;
    a->submit_batch = o->submit_batch;
    a->nthreads = o->nthreads > 0 ? o->nthreads : mb_aio_adaptive_threads(n, 1.0);
    a->adaptive = o->nthreads == MB_AIO_ADAPTIVE;
    a->window = o->adapt_window ? o->adapt_window : 32;
    atomic_store(&a->active, a->nthreads);
    pthread_mutex_init(&a->adapt_mu, NULL);
    a->direct = !o->buffered;
    a->fallback = "";
    if (a->stripe % 4096) {
        snprintf(err, errlen, "stripe %zu: must be a multiple of 4096", a->stripe);
        free(a);
        return NULL;
    }
    pthread_mutex_init(&a->amu, NULL);
    for (int d = 0; d < n; d++)
        a->fd[d] = a->bfd[d] = -1;
    a->devsize = UINT64_MAX;
    for (int d = 0; d < n; d++) {
        int fl = O_RDWR | (o->create ? O_CREAT : 0);
        a->bfd[d] = open(paths[d], fl, 0644);
        if (a->bfd[d] < 0 && errno == EACCES)
            a->bfd[d] = open(paths[d], O_RDONLY);
        if (a->bfd[d] < 0) {
            snprintf(err, errlen, "%s: %s", paths[d], strerror(errno));
            goto fail;
        }
        int acc = fcntl(a->bfd[d], F_GETFL) & O_ACCMODE;
        struct stat st;
        fstat(a->bfd[d], &st);
        if (o->create && (uint64_t)st.st_size < o->size) {
            if (ftruncate(a->bfd[d], (off_t)o->size) != 0) {
                snprintf(err, errlen, "%s: %s", paths[d], strerror(errno));
                goto fail;
            }
            st.st_size = (off_t)o->size;
        }
        if ((uint64_t)st.st_size < a->devsize)
            a->devsize = (uint64_t)st.st_size;
        if (a->direct) {
            /* MB_AIO_INJECT=nodirect (tests): behave as a file system that refuses
             * O_DIRECT (tmpfs before Linux 6.6) */
            const char *inj = inject_spec();
            if (inj && strcmp(inj, "nodirect") == 0) {
                a->fd[d] = -1;
                errno = EINVAL;
            } else {
                a->fd[d] = open(paths[d], acc | O_DIRECT);
            }
            if (a->fd[d] < 0 && errno == EINVAL) {
                fprintf(stderr, "offload/aio: warning: %s: O_DIRECT refused, using buffered I/O\n",
                        paths[d]);
                a->direct = 0;
                a->fallback = "O_DIRECT refused: buffered I/O";
            } else if (a->fd[d] < 0) {
                snprintf(err, errlen, "%s: %s", paths[d], strerror(errno));
                goto fail;
            }
        }
    }
    if (!a->direct)
        for (int d = 0; d < n; d++) {
            if (a->fd[d] >= 0)
                close(a->fd[d]);
            a->fd[d] = dup(a->bfd[d]);
        }
    a->devsize -= a->devsize % a->stripe;
    a->arena_size = o->arena ? o->arena : 64u << 20;
    if (posix_memalign((void **)&a->arena, 2u << 20, a->arena_size) != 0) {
        snprintf(err, errlen, "arena of %zu bytes: out of memory", a->arena_size);
        goto fail;
    }
    /* huge pages where the kernel allows them (THP "madvise"): a large request
     * then spans few physically contiguous segments instead of one per 4 KiB
     * page (a 1 MiB read is 256 pages, above virtio-blk's 254 segments) */
    if (!getenv("MB_AIO_NOHUGE"))
        madvise(a->arena, a->arena_size, MADV_HUGEPAGE);
    memset(a->arena, 0, a->arena_size);
    const char *inj = inject_spec();
    if (inj) {
        unsigned long long k = 1;
        if (sscanf(inj, "eio:%llu", &k) >= 0 && strncmp(inj, "eio", 3) == 0)
            a->inject_errno = EIO;
        else if (strncmp(inj, "enospc", 6) == 0) {
            sscanf(inj, "enospc:%llu", &k);
            a->inject_errno = ENOSPC;
        }
        a->inject_at = k ? k : 1;
    }
    const char *eng = getenv("MB_AIO_ENGINE");
    a->use_uring = !(eng && strcmp(eng, "posix") == 0);
    if (!a->use_uring)
        a->fallback = "MB_AIO_ENGINE=posix: pread/pwrite thread pool";
    a->th = calloc((size_t)a->nthreads, sizeof(*a->th));
    static char why[256];
    for (int i = 0; i < a->nthreads && a->use_uring; i++) {
        a->th[i].a = a;
        if (setup_uring(a, &a->th[i], why, sizeof(why)) != 0) {
            for (int k = 0; k <= i; k++)
                for (int d = 0; d < a->th[k].nuring; d++)
                    io_uring_queue_exit(&a->th[k].uring[d]);
            for (int k = 0; k <= i; k++)
                if (a->th[k].has_efd)
                    close(a->th[k].efd), a->th[k].has_efd = 0;
            for (int k = 0; k <= i; k++)
                a->th[k].nuring = 0;
            a->use_uring = 0;
            fprintf(stderr, "offload/aio: warning: io_uring refused (%s), using the pread/pwrite pool\n",
                    why);
            a->fallback = "io_uring refused: pread/pwrite thread pool";
        }
    }
    for (int i = 0; i < a->nthreads; i++) {
        struct iothread *t = &a->th[i];
        t->a = a;
        mb_aio_ring_init(&t->ring, 1024);
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        pthread_create(&t->tid, NULL, io_main, t);
    }
    return a;
fail:
    for (int d = 0; d < n; d++) {
        if (a->fd[d] >= 0) close(a->fd[d]);
        if (a->bfd[d] >= 0) close(a->bfd[d]);
    }
    free(a->arena);
    free(a);
    return NULL;
}

static void wake(struct iothread *t)
{
    /* the push's seq_cst tail CAS before this load of `sleeping`, against
     * idle_wait's store of `sleeping` before its emptiness check: one of the
     * two sees the other, so no wake-up is lost */
    if (atomic_load(&t->sleeping)) {
        pthread_mutex_lock(&t->mu);
        pthread_cond_signal(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
}

void mb_aio_close(struct mb_aio *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->nthreads; i++) {
        pthread_mutex_lock(&a->th[i].mu);
        atomic_store(&a->stop, 1);
        pthread_cond_signal(&a->th[i].cv);
        pthread_mutex_unlock(&a->th[i].mu);
    }
    for (int i = 0; i < a->nthreads; i++) {
        struct iothread *t = &a->th[i];
        pthread_join(t->tid, NULL);
        for (int d = 0; d < t->nuring; d++)
            io_uring_queue_exit(&t->uring[d]);
        if (t->has_efd)
            close(t->efd);
        mb_aio_ring_free(&t->ring);
        free(t->queue);
        while (t->free_segs) {
            struct seg *s = t->free_segs;
            t->free_segs = s->next;
            free(s);
        }
    }
    for (int d = 0; d < a->ndev; d++) {
        close(a->fd[d]);
        close(a->bfd[d]);
    }
    free(a->th);
    free(a->arena);
    free(a->history);
    free(a);
}

void *mb_aio_alloc(struct mb_aio *a, size_t bytes)
{
    size_t r = (bytes + 4095) & ~(size_t)4095;
    void *p = NULL;
    pthread_mutex_lock(&a->amu);
    if (a->arena_used + r <= a->arena_size) {
        p = a->arena + a->arena_used;
        a->arena_used += r;
        a->arena_live++;
    }
    pthread_mutex_unlock(&a->amu);
    if (!p && posix_memalign(&p, 4096, r ? r : 4096) != 0)
        p = NULL;
    return p;
}

void mb_aio_free(struct mb_aio *a, void *p)
{
    if (!p)
        return;
    if (in_arena(a, p, 1)) {
        pthread_mutex_lock(&a->amu);
        if (--a->arena_live == 0)
            a->arena_used = 0;
        pthread_mutex_unlock(&a->amu);
        return;
    }
    free(p);
}

int mb_aio_submit(struct mb_aio *a, struct mb_aio_req *reqs, size_t n, mb_aio_ticket *t)
{
    struct mb_aio_batch *b = calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    b->a = a;
    b->reqs = reqs;
    b->n = n;
    uint64_t segs = 0;
    for (size_t i = 0; i < n; i++) {
        reqs[i].status = 0;
        if (reqs[i].offset + reqs[i].len > (uint64_t)a->ndev * a->devsize || reqs[i].len == 0) {
            reqs[i].status = reqs[i].len == 0 ? 0 : -ENODATA;
            if (reqs[i].len) b->failed++;
            reqs[i].len = reqs[i].status ? 0 : reqs[i].len;
            continue;
        }
        uint64_t off = reqs[i].offset;
        size_t left = reqs[i].len;
        while (left) {
            int dev;
            uint64_t devoff;
            size_t room = mb_aio_map(off, a->stripe, a->ndev, &dev, &devoff);
            size_t k = left < room ? left : room;
            off += k; left -= k; segs++;
        }
    }
    b->nsegs = segs;
    atomic_fetch_add(&a->requests, n);
    atomic_fetch_add(&a->batches, 1);
    *t = b;
    if (segs == 0) {
        batch_done(b);
        return 0;
    }
    unsigned nact = (unsigned)atomic_load(&a->active);
    struct iothread *th = &a->th[atomic_fetch_add(&a->rr, 1) % nact];
    while (!mb_aio_ring_push(&th->ring, b)) {
        wake(th);
        sched_yield();
    }
    wake(th);
    return 0;
}

int mb_aio_test(mb_aio_ticket t) { return atomic_load(&t->state) == B_COMPLETE; }

uint64_t mb_aio_ticket_count(mb_aio_ticket t) { return atomic_load(&t->done); }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adaptive mode: every `window` waits, one caller re-chooses the number of
 * I/O threads that get new batches from the window's compute/wait times. */
static void adapt(struct mb_aio *a)
{
    if (atomic_load(&a->win_waits) < a->window || pthread_mutex_trylock(&a->adapt_mu) != 0)
        return;
    if (atomic_load(&a->win_waits) >= a->window) {
        uint64_t w = atomic_exchange(&a->win_wait_ns, 0), c = atomic_exchange(&a->win_compute_ns, 0);
        atomic_store(&a->win_waits, 0);
        int k = mb_aio_adaptive_threads(a->ndev, mb_aio_io_fraction(w, c));
        if (k > a->nthreads)
            k = a->nthreads;
        atomic_store(&a->active, k);
        if (atomic_load(&a->nhistory) == a->caphistory) {
            size_t cap = a->caphistory ? 2 * a->caphistory : 64;
            int *h = realloc(a->history, cap * sizeof(*h));
            if (h) {
                a->history = h;
                a->caphistory = cap;
            }
        }
        size_t n = atomic_load(&a->nhistory);
        if (n < a->caphistory) {
            a->history[n] = k;
            atomic_store(&a->nhistory, n + 1);
        }
    }
    pthread_mutex_unlock(&a->adapt_mu);
}

/* per compute thread: when (and in which engine) its last wait ended */
static _Thread_local struct { const struct mb_aio *a; uint64_t t; } last_wait;

int mb_aio_wait(mb_aio_ticket t)
{
    struct mb_aio *a = t->a;
    uint64_t t0 = a->adaptive ? now_ns() : 0;
    /* a short spin (the I/O thread runs on another core), then sleep on the
     * ticket's own futex word: only this waiter is woken */
    for (int spin = 0; spin < 20 && atomic_load(&t->state) != B_COMPLETE; spin++)
        sched_yield();
    uint32_t st = B_PENDING;
    if (atomic_compare_exchange_strong(&t->state, &st, B_SLEEPING) || st == B_SLEEPING)
        while (atomic_load(&t->state) != B_COMPLETE)
            futex(&t->state, FUTEX_WAIT, B_SLEEPING);
    int f = t->failed;
    free(t);
    if (a->adaptive) {
        uint64_t t1 = now_ns();
        if (last_wait.a == a)
            atomic_fetch_add(&a->win_compute_ns, t0 - last_wait.t);
        atomic_fetch_add(&a->win_wait_ns, t1 - t0);
        atomic_fetch_add(&a->win_waits, 1);
        last_wait.a = a;
        last_wait.t = t1;
        adapt(a);
    }
    return f;
}

size_t mb_aio_thread_history(struct mb_aio *a, int *counts, size_t max)
{
    pthread_mutex_lock(&a->adapt_mu);
    size_t n = atomic_load(&a->nhistory);
    for (size_t i = 0; i < n && i < max; i++)
        counts[i] = a->history[i];
    pthread_mutex_unlock(&a->adapt_mu);
    return n;
}

void mb_aio_info(const struct mb_aio *a, struct mb_aio_info *o)
{
    /* one snapshot of the counters; inflight_mean below */
    *o = (struct mb_aio_info){
        .engine = a->use_uring ? "io_uring" : "posix", .fallback = a->fallback, .direct = a->direct,
        .nthreads = a->nthreads, .ndev = a->ndev, .stripe = a->stripe,
        .bounce_bytes = atomic_load(&a->bounce_bytes), .direct_bytes = atomic_load(&a->direct_bytes),
        .buffered_bytes = atomic_load(&a->buffered_bytes), .requests = atomic_load(&a->requests),
        .batches = atomic_load(&a->batches), .completed = atomic_load(&a->completed),
        .adaptive = a->adaptive, .active_threads = atomic_load(&a->active),
        .decisions = atomic_load(&a->nhistory)};
    uint64_t subs = 0, sum = 0;
    for (int i = 0; i < a->nthreads; i++) {
        subs += atomic_load(&a->th[i].submits);
        sum += atomic_load(&a->th[i].inflight_sum);
    }
    o->inflight_mean = subs ? (double)sum / (double)subs : 0;
}

uint64_t mb_aio_size(const struct mb_aio *a) { return (uint64_t)a->ndev * a->devsize; }
