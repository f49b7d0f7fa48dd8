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
    return mb_aio_volume_rw(v->fd, v->ndev, v->stripe, wr ? MB_AIO_WRITE : MB_AIO_READ, off, len, buf);
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
