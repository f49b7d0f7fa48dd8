/* A case's buffers: several iterations' send and receive sets back to
 * back, in host, pinned (with device mirrors) or registered memory. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static int alloc_pair(struct mb_coll_bufs *b, struct mb_buf *host, struct mb_buf *dev, size_t bytes, char **ptr,
                      char *err, size_t errlen)
{
    char why[256];
    if (mb_buf_alloc(host, b->device ? MB_MEM_PINNED : MB_MEM_HOST, bytes, 0, MPI_COMM_SELF, why, sizeof(why)) != 0 ||
        (b->device && mb_buf_alloc(dev, MB_MEM_DEVICE, bytes, 0, MPI_COMM_SELF, why, sizeof(why)) != 0)) {
        snprintf(err, errlen, "allocating %zu bytes: %s", bytes, why);
        return -1;
    }
    *ptr = host->ptr;
    return 0;
}

int mb_coll_bufs_alloc(struct mb_coll_bufs *b, struct mb_coll_ctx *ctx, size_t send_bytes, size_t recv_bytes,
                       size_t nsets, int registered, int device, char *err, size_t errlen)
{
    memset(b, 0, sizeof(*b));
    b->ctx = ctx;
    b->registered = registered;
    b->device = device;
    b->nsets = nsets > 1 ? nsets : 1;
    size_t align = recv_bytes >= 4096 ? 4096 : 64;
    b->sstride = (send_bytes + align - 1) / align * align;
    b->rstride = (recv_bytes + align - 1) / align * align;
    size_t sbytes = b->nsets > 1 ? b->nsets * b->sstride : send_bytes;
    size_t rbytes = b->nsets > 1 ? b->nsets * b->rstride : recv_bytes;
    char why[256];
    if (!registered)
        return alloc_pair(b, &b->hsend, &b->dsend, sbytes, &b->send0, err, errlen) != 0 ||
                       alloc_pair(b, &b->hrecv, &b->drecv, rbytes, &b->recv0, err, errlen) != 0
                   ? -1
                   : 0;
    /* node-shared buffers, registered once per case; device mirrors of one set */
    if (device && (mb_buf_alloc(&b->dsend, MB_MEM_DEVICE, send_bytes, 0, MPI_COMM_SELF, why, sizeof(why)) != 0 ||
                   mb_buf_alloc(&b->drecv, MB_MEM_DEVICE, recv_bytes, 0, MPI_COMM_SELF, why, sizeof(why)) != 0)) {
        snprintf(err, errlen, "allocating device buffers: %s", why);
        return -1;
    }
    b->send0 = mb_coll_alloc(ctx, sbytes, why, sizeof(why));
    b->recv0 = b->send0 ? mb_coll_alloc(ctx, rbytes, why, sizeof(why)) : NULL;
    if (!b->send0 || !b->recv0) {
        snprintf(err, errlen, "registering buffers: %s", why);
        return -1;
    }
    return 0;
}

void mb_coll_bufs_set(const struct mb_coll_bufs *b, long long iter, void **send, void **recv)
{
    size_t set = (size_t)iter % b->nsets;
    *send = b->send0 ? b->send0 + set * b->sstride : NULL;
    *recv = b->recv0 ? b->recv0 + set * b->rstride : NULL;
}

void mb_coll_bufs_free(struct mb_coll_bufs *b)
{
    if (b->registered) {
        if (b->send0)
            mb_coll_release(b->ctx, b->send0);
        if (b->recv0)
            mb_coll_release(b->ctx, b->recv0);
    }
    mb_buf_free(&b->hsend);
    mb_buf_free(&b->hrecv);
    mb_buf_free(&b->dsend);
    mb_buf_free(&b->drecv);
    memset(b, 0, sizeof(*b));
}
