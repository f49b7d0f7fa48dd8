/* sync and async: the batched engine (mb_aio). sync waits for each batch
 * as soon as it is submitted; async returns at once and the caller waits
 * later, computing meanwhile (CAM's double buffering). */
#include "storage_internal.h"

static int engine_open(struct mb_storage *s, char *err, size_t errlen)
{
    struct mb_aio_opts o = s->p.engine;
    o.stripe = s->p.stripe;
    o.buffered = s->p.buffered;
    s->eng = mb_aio_open(s->p.paths, s->p.nfiles, &o, err, errlen);
    return s->eng ? 0 : -1;
}

static int async_submit(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t)
{
    *t = (struct mb_storage_ticket){.reqs = reqs, .n = n};
    return mb_aio_submit(s->eng, reqs, n, &t->eng);
}

static int async_wait(struct mb_storage *s, struct mb_storage_ticket *t)
{
    (void)s;
    return mb_aio_wait(t->eng);
}

static int sync_submit(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t)
{
    int rc = async_submit(s, reqs, n, t);
    if (rc == 0)
        t->failed = mb_aio_wait(t->eng);
    return rc;
}

static void engine_close(struct mb_storage *s)
{
    if (s->eng)
        mb_aio_close(s->eng);
}

const struct mb_storage_ops mb_storage_sync = {
    .name = "sync",
    .description = "the engine, each batch waited for at once",
    .flags = MB_STORAGE_ENGINE | MB_STORAGE_BLOCKING,
    .open = engine_open,
    .submit = sync_submit,
    .wait = storage_blocking_wait,
    .close = engine_close,
};

const struct mb_storage_ops mb_storage_async = {
    .name = "async",
    .description = "the engine, batches waited for later (compute overlaps I/O)",
    .flags = MB_STORAGE_ENGINE,
    .open = engine_open,
    .submit = async_submit,
    .wait = async_wait,
    .close = engine_close,
};
