/* `nccl`: NVIDIA's collectives on device buffers, one NCCL communicator per
 * context, its ncclUniqueId made on rank 0 and broadcast with MPI. Where
 * there is no GPU, no NCCL at build time or no CUDA build, the algorithm
 * reports itself unavailable with the reason. */
#include "device.h"
#include "internal.h"

#include <stdio.h>

/* The set-up (collective): a device per rank, rank 0's ncclUniqueId
 * broadcast, the communicator (the state). */
static int nccl_setup(struct mb_coll_ctx *c, void **state, char *why, size_t len)
{
    char reason[250] = "";
    int n = 0, ok = mb_coll_dev_count(&n, reason, sizeof(reason)) == 0 &&
                    mb_coll_dev_select(c->node_rank % n, reason, sizeof(reason)) == 0;
    char id[MB_COLL_NCCL_ID_BYTES] = {0};
    if (mb_coll_agree(c, ok, reason, sizeof(reason))) {
        if (c->rank == 0)
            ok = mb_coll_nccl_unique_id(id, reason, sizeof(reason)) == 0;
        if (mb_coll_agree(c, ok, reason, sizeof(reason))) {
            MPI_Bcast(id, sizeof(id), MPI_BYTE, 0, c->comm);
            ok = mb_coll_nccl_init(state, id, c->size, c->rank, reason, sizeof(reason)) == 0;
        }
    }
    if (mb_coll_agree(c, ok, reason, sizeof(reason)))
        return 0;
    snprintf(why, len, "NCCL unusable: %s", reason);
    mb_coll_nccl_free(*state);
    *state = NULL;
    return -1;
}

static void nccl_free(struct mb_coll_ctx *c, void *state)
{
    (void)c;
    mb_coll_nccl_free(state);
}

static int nccl_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    char err[300];
    if (a->count == 0)
        return 0;
    if (mb_coll_nccl_run(mb_coll_slot(c, &mb_coll_algo_nccl)->state, (int)a->kind, a->sendbuf, a->recvbuf, a->count, (int)a->dtype, (int)a->op,
                         a->root, c->rank, err, sizeof(err)) != 0) {
        mb_warn("collectives: nccl: %s", err);
        return -1;
    }
    return 0;
}

const struct mb_coll_algo mb_coll_algo_nccl = {
    .name = "nccl", .kinds = MB_COLL_ALL_KINDS, .device = 1,
    .description = "NCCL on device buffers (ncclUniqueId broadcast with MPI)",
    .available = mb_coll_always /* the set-up decides */, .run = nccl_run,
    .setup = nccl_setup, .teardown = nccl_free,
};
