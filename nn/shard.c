/* FSDP-style sharding of a layer's flat parameter tensor over W ranks:
 * the tensor is padded with zeros to a multiple of W elements so every
 * shard has the same size, the count that ring allgather and
 * reduce_scatter_block take per rank. */
#include "layer_internal.h"

size_t nn_shard_range(size_t numel, int rank, int W, size_t *off, size_t *n)
{
    *off = *n = 0;
    if (W < 1 || rank < 0 || rank >= W)
        return 0;
    size_t shard = numel / (size_t)W + (numel % (size_t)W != 0);
    *off = (size_t)rank * shard;
    *n = *off >= numel ? 0 : numel - *off < shard ? numel - *off : shard;
    return shard;
}

size_t nn_layer_shard(const struct nn_layer *l, int rank, int W, size_t *off, size_t *n)
{
    return nn_shard_range(l->params.numel, rank, W, off, n);
}
