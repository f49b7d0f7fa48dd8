/* inline: the compute thread owns an io_uring over the registered files,
 * posts requests itself and reaps its own completions (BaM-like: no I/O
 * thread between it and the device). A request stays inside one stripe
 * unit (one SQE). Pending requests carry status 1 until completed. */
#include "storage_internal.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>

#define PENDING 1

struct inline_st {
    struct io_uring ring;
    int ring_ok;
};

static int inline_open(struct mb_storage *s, char *err, size_t errlen)
{
    struct inline_st *st = calloc(1, sizeof(*st));
    if (!(s->priv = st)) {
        snprintf(err, errlen, "out of memory: the ring's state");
        return -1;
    }
    unsigned qd = s->p.qd ? s->p.qd : 64;
    if (io_uring_queue_init(qd * 2, &st->ring, 0) < 0) {
        snprintf(err, errlen, "io_uring refused");
        return -1;
    }
    st->ring_ok = 1;
    if (io_uring_register_files(&st->ring, s->fd, (unsigned)s->p.nfiles) != 0) {
        snprintf(err, errlen, "io_uring refused to register the files");
        return -1;
    }
    return 0;
}

static void complete(struct io_uring_cqe *cq)
{
    struct mb_aio_req *r = io_uring_cqe_get_data(cq);
    r->status = cq->res == (int)r->len ? 0 : cq->res < 0 ? cq->res : -ENODATA;
}

/* -EXDEV: a request crosses a stripe unit (nothing of it was posted). */
static int inline_submit(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t)
{
    struct inline_st *st = s->priv;
    if (t)
        *t = (struct mb_storage_ticket){.reqs = reqs, .n = n};
    for (size_t i = 0; i < n; i++) {
        struct mb_aio_req *r = &reqs[i];
        int dev;
        uint64_t devoff;
        if (mb_aio_map(r->offset, s->p.stripe, s->p.nfiles, &dev, &devoff) < r->len)
            return r->status = -EXDEV;
        struct io_uring_sqe *e = io_uring_get_sqe(&st->ring);
        if (!e) { /* the ring is full: hand what it holds to the kernel first */
            int sub = io_uring_submit(&st->ring);
            if (sub < 0 || !(e = io_uring_get_sqe(&st->ring)))
                return r->status = sub < 0 ? sub : -EBUSY;
        }
        if (r->op == MB_AIO_WRITE)
            io_uring_prep_write(e, dev, r->buf, (unsigned)r->len, devoff);
        else
            io_uring_prep_read(e, dev, r->buf, (unsigned)r->len, devoff);
        e->flags |= IOSQE_FIXED_FILE;
        io_uring_sqe_set_data(e, r);
        r->status = PENDING;
    }
    int sub = io_uring_submit(&st->ring);
    return sub < 0 ? sub : 0;
}

static size_t inline_reap(struct mb_storage *s, struct mb_aio_req **done, size_t max)
{
    struct inline_st *st = s->priv;
    struct io_uring_cqe *cq;
    size_t k = 0;
    while (k < max && io_uring_peek_cqe(&st->ring, &cq) == 0) {
        complete(cq);
        done[k++] = io_uring_cqe_get_data(cq);
        io_uring_cqe_seen(&st->ring, cq);
    }
    return k;
}

static int inline_wait(struct mb_storage *s, struct mb_storage_ticket *t)
{
    struct inline_st *st = s->priv;
    int failed = 0;
    for (size_t i = 0; i < t->n; i++) {
        while (t->reqs[i].status == PENDING) {
            struct io_uring_cqe *cq;
            int rc = io_uring_wait_cqe(&st->ring, &cq);
            if (rc < 0 && rc != -EINTR) {
                t->reqs[i].status = rc;
                break;
            }
            if (rc == 0) {
                complete(cq);
                io_uring_cqe_seen(&st->ring, cq);
            }
        }
        failed += t->reqs[i].status != 0;
    }
    return failed;
}

static void inline_close(struct mb_storage *s)
{
    struct inline_st *st = s->priv;
    if (st && st->ring_ok)
        io_uring_queue_exit(&st->ring);
    free(st);
}

const struct mb_storage_ops mb_storage_inline = {
    .name = "inline",
    .description = "an io_uring owned by the compute thread, which reaps its own completions (BaM-like)",
    .flags = MB_STORAGE_ANY_ORDER,
    .open = inline_open,
    .submit = inline_submit,
    .wait = inline_wait,
    .reap = inline_reap,
    .close = inline_close,
};
