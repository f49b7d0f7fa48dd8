/* bounce: reads land in a staging buffer and are copied to the
 * destination (SPDK without GPUDirect: the extra copy through the host);
 * writes go straight from the source. */
#include "storage_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bounce_open(struct mb_storage *s, char *err, size_t errlen)
{
    /* a piece of a request never spans stripe units: one unit of staging */
    if (posix_memalign(&s->priv, 4096, s->p.stripe) != 0) {
        s->priv = NULL;
        snprintf(err, errlen, "out of memory: a %zu-byte bounce buffer", s->p.stripe);
        return -1;
    }
    return 0;
}

static int bounce_rw(struct mb_storage *s, struct mb_aio_req *r)
{
    if (r->op == MB_AIO_WRITE)
        return mb_aio_volume_rw(s->fd, s->p.nfiles, s->p.stripe, r->op, r->offset, r->len, r->buf);
    char *dst = r->buf, *bounce = s->priv;
    size_t done = 0;
    while (done < r->len) {
        int dev;
        uint64_t devoff;
        size_t room = mb_aio_map(r->offset + done, s->p.stripe, s->p.nfiles, &dev, &devoff);
        size_t n = r->len - done < room ? r->len - done : room;
        ssize_t k = pread(s->fd[dev], bounce, n, (off_t)devoff);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return -ENODATA;
        memcpy(dst + done, bounce, (size_t)k);
        done += (size_t)k;
    }
    return 0;
}

static void bounce_close(struct mb_storage *s) { free(s->priv); }

const struct mb_storage_ops mb_storage_bounce = {
    .name = "bounce",
    .description = "pread into a staging buffer, then a copy (SPDK without GPUDirect)",
    .flags = MB_STORAGE_BLOCKING,
    .open = bounce_open,
    .submit = storage_each,
    .rw = bounce_rw,
    .wait = storage_blocking_wait,
    .close = bounce_close,
};
