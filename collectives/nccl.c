/* `nccl`: NVIDIA's collectives on device buffers, one NCCL communicator per
 * context, its ncclUniqueId made on rank 0 and broadcast with MPI. Where
 * there is no GPU, no NCCL at build time or no CUDA build, the algorithm
 * reports itself unavailable with the reason. */
#include "device.h"
#include "internal.h"

#include <stdio.h>

static int nccl_available(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nccl_state == 0) {
        char reason[250] = "";
        int n = 0, ok = mb_coll_dev_count(&n, reason, sizeof(reason)) == 0 &&
                        mb_coll_dev_select(c->node_rank % n, reason, sizeof(reason)) == 0;
        char id[MB_COLL_NCCL_ID_BYTES] = {0};
        if (mb_coll_agree(c, ok, reason, sizeof(reason))) {
            if (c->rank == 0)
                ok = mb_coll_nccl_unique_id(id, reason, sizeof(reason)) == 0;
            if (mb_coll_agree(c, ok, reason, sizeof(reason))) {
                MPI_Bcast(id, sizeof(id), MPI_BYTE, 0, c->comm);
                ok = mb_coll_nccl_init(&c->nccl, id, c->size, c->rank, reason, sizeof(reason)) == 0;
            }
        }
        c->nccl_state = mb_coll_agree(c, ok, reason, sizeof(reason)) ? 1 : -1;
        if (c->nccl_state < 0) {
            snprintf(c->nccl_why, sizeof(c->nccl_why), "NCCL unusable: %s", reason);
            mb_coll_nccl_free(c->nccl);
            c->nccl = NULL;
        }
    }
    if (c->nccl_state < 0)
        snprintf(why, len, "%s", c->nccl_why);
    return c->nccl_state > 0;
}

static int nccl_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    char err[300];
    if (a->count == 0)
        return 0;
    if (mb_coll_nccl_run(c->nccl, (int)a->kind, a->sendbuf, a->recvbuf, a->count, (int)a->dtype, (int)a->op,
                         a->root, c->rank, err, sizeof(err)) != 0) {
        mb_warn("collectives: nccl: %s", err);
        return -1;
    }
    return 0;
}

void mb_coll_device_free(struct mb_coll_ctx *c)
{
    mb_coll_nccl_free(c->nccl);
    c->nccl = NULL;
    if (c->ipc_state > 0)
        mb_coll_ipc_close_all();
}

const struct mb_coll_algo mb_coll_algo_nccl = {
    .name = "nccl",
    .description = "NCCL on device buffers (ncclUniqueId broadcast with MPI)",
    .kinds = 1u << MB_COLL_ALLREDUCE | 1u << MB_COLL_REDUCE_SCATTER | 1u << MB_COLL_ALLGATHER |
             1u << MB_COLL_BCAST | 1u << MB_COLL_REDUCE,
    .device = 1,
    .available = nccl_available,
    .run = nccl_run,
};
