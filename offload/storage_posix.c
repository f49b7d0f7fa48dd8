/* posix: the compute thread reads and writes each request with
 * pread/pwrite through the stripe map (the synchronous baseline). */
#include "storage_internal.h"

static int posix_rw(struct mb_storage *s, struct mb_aio_req *r)
{
    return mb_aio_volume_rw(s->fd, s->p.nfiles, s->p.stripe, r->op, r->offset, r->len, r->buf);
}

const struct mb_storage_ops mb_storage_posix = {
    .name = "posix",
    .description = "pread/pwrite in the compute thread, one request at a time",
    .flags = MB_STORAGE_BLOCKING,
    .submit = storage_each,
    .rw = posix_rw,
    .wait = storage_blocking_wait,
};
