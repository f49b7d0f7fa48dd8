/* memory: a RAM image of the volume's first image_bytes, loaded from the
 * files at open; requests are copies. The out-of-core apps' compute phase
 * alone (the data already in memory). */
#include "storage_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int memory_open(struct mb_storage *s, char *err, size_t errlen)
{
    if (!s->p.image_bytes)
        return 0;
    uint64_t bytes = (s->p.image_bytes + 4095) & ~(uint64_t)4095, load = s->p.image_load;
    void *p = NULL;
    if (storage_inject_nomem() || posix_memalign(&p, 4096, bytes) != 0) {
        snprintf(err, errlen, "no memory for a %llu-byte image of the data", (unsigned long long)bytes);
        return -1;
    }
    memset(p, 0, bytes);
    s->image = p;
    s->image_bytes = bytes;
    for (uint64_t off = 0; off < load; off += 1 << 20) {
        size_t n = load - off < (1 << 20) ? (size_t)(load - off) : (size_t)1 << 20;
        int rc = mb_aio_volume_rw(s->fd, s->p.nfiles, s->p.stripe, MB_AIO_READ, off, n, s->image + off);
        if (rc) {
            snprintf(err, errlen, "loading the data into memory: %s at volume offset %llu",
                     rc == -ENODATA ? "short file (no data)" : strerror(-rc), (unsigned long long)off);
            return -1;
        }
    }
    return 0;
}

static int memory_rw(struct mb_storage *s, struct mb_aio_req *r)
{
    if (r->offset + r->len > s->image_bytes)
        return -ENODATA;
    if (r->op == MB_AIO_WRITE)
        memcpy(s->image + r->offset, r->buf, r->len);
    else
        memcpy(r->buf, s->image + r->offset, r->len);
    return 0;
}

static void memory_close(struct mb_storage *s) { free(s->image); }

const struct mb_storage_ops mb_storage_memory = {
    .name = "memory",
    .description = "a RAM image of the volume loaded at open (the compute phase alone)",
    .flags = MB_STORAGE_BLOCKING | MB_STORAGE_IMAGE,
    .open = memory_open,
    .submit = storage_each,
    .rw = memory_rw,
    .wait = storage_blocking_wait,
    .close = memory_close,
};
