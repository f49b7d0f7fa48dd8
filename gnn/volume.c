/* The dataset's striped volume through plain file descriptors, and the
 * on-storage layout. */
#include "gnn_internal.h"
#include "../offload/aio.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

static int vol_io(const struct gnn_vol *v, uint64_t off, void *buf, size_t len, int wr)
{
    char *p = buf;
    while (len) {
        int dev;
        uint64_t devoff;
        size_t room = mb_aio_map(off, v->stripe, v->ndev, &dev, &devoff);
        size_t n = room < len ? room : len;
        size_t done = 0;
        while (done < n) {
            ssize_t r = wr ? pwrite(v->fd[dev], p + done, n - done, (off_t)(devoff + done))
                           : pread(v->fd[dev], p + done, n - done, (off_t)(devoff + done));
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                return -errno;
            }
            if (r == 0)
                return wr ? -ENOSPC : -ENODATA;
            done += (size_t)r;
        }
        p += n;
        off += n;
        len -= n;
    }
    return 0;
}

int gnn_vol_pwrite(const struct gnn_vol *v, uint64_t off, const void *buf, size_t len)
{
    return vol_io(v, off, (void *)buf, len, 1);
}

int gnn_vol_pread(const struct gnn_vol *v, uint64_t off, void *buf, size_t len)
{
    return vol_io(v, off, buf, len, 0);
}

void gnn_layout(struct gnn_header *h)
{
    uint64_t s = h->stripe;
    h->row_bytes = 4ULL * (uint64_t)h->dim;
    h->off_offsets = 0;
    h->off_neigh = gnn_round_up(8 * (h->n + 1), s);
    h->off_feat = h->off_neigh + gnn_round_up(4 * h->m, s);
    uint64_t total = gnn_round_up(h->off_feat + h->n * h->row_bytes, s * h->ndev);
    if (total == 0)
        total = s * h->ndev;
    h->file_bytes = total / h->ndev;
    h->meta_labels = GNN_HEADER_BYTES;
    h->meta_train = h->meta_labels + gnn_round_up(4 * h->n, 4096);
    h->meta_val = h->meta_train + gnn_round_up(4 * h->n_train, 4096);
    h->meta_bytes = h->meta_val + gnn_round_up(4 * h->n_val, 4096);
}

uint64_t gnn_header_sum(const struct gnn_header *h)
{
    struct gnn_header c = *h;
    c.sum_header = 0;
    return gnn_checksum(&c, sizeof(c) / 4 * 4, 0);
}

uint64_t gnn_topology_bytes(const struct gnn_header *h)
{
    return 8 * (h->n + 1) + 4 * h->m;
}

uint64_t gnn_feature_bytes(const struct gnn_header *h)
{
    return h->n * h->row_bytes;
}
