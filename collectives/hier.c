/* Hierarchical allreduce: shared-memory reduce to each node's leader,
 * Rabenseifner among the leaders, shared-memory broadcast back. The
 * levels run one after the other (not yet overlapped). */
#include "internal.h"

int mb_coll_shm_node(struct mb_coll_ctx *c, const struct mb_coll_args *a);

static int hier_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    struct mb_coll_args up = *a;
    up.kind = MB_COLL_REDUCE;
    up.root = 0;
    if (mb_coll_shm_node(c, &up) != 0)
        return -1;
    if (c->leader_comm != MPI_COMM_NULL && c->nnodes > 1) {
        struct mb_coll_ctx view = *c;
        view.comm = c->leader_comm;
        MPI_Comm_rank(view.comm, &view.rank);
        MPI_Comm_size(view.comm, &view.size);
        struct mb_coll_args mid = *a;
        mid.sendbuf = NULL;
        int rc = mb_coll_algo_rabenseifner.run(&view, &mid);
        c->tmp = view.tmp, c->tmp_bytes = view.tmp_bytes;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    struct mb_coll_args down = *a;
    down.kind = MB_COLL_BCAST;
    down.sendbuf = NULL;
    down.root = 0;
    return mb_coll_shm_node(c, &down);
}

static int always(struct mb_coll_ctx *c, char *why, size_t len)
{
    (void)c, (void)why, (void)len;
    return 1;
}

const struct mb_coll_algo mb_coll_algo_hier = {
    .name = "hier",
    .description = "intra-node shm-copyin reduce, Rabenseifner among node leaders, intra-node broadcast",
    .kinds = 1u << MB_COLL_ALLREDUCE,
    .available = always,
    .run = hier_run,
};
