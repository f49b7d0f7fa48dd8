/* `mpi`: the MPI library's own collectives, the reference every other
 * algorithm is checked and measured against. */
#include "model.h"

static int mpi_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    MPI_Datatype t = mb_coll_mpi_dtype(a->dtype);
    MPI_Op op = mb_coll_mpi_op(a->op);
    const void *in = a->sendbuf ? a->sendbuf : MPI_IN_PLACE;
    int n = (int)a->count;
    switch (a->kind) {
    case MB_COLL_ALLREDUCE: return MPI_Allreduce(in, a->recvbuf, n, t, op, c->comm);
    case MB_COLL_REDUCE_SCATTER: return MPI_Reduce_scatter_block(in, a->recvbuf, n, t, op, c->comm);
    case MB_COLL_ALLGATHER: return MPI_Allgather(in, n, t, a->recvbuf, n, t, c->comm);
    case MB_COLL_BCAST: return MPI_Bcast(a->recvbuf, n, t, a->root, c->comm);
    case MB_COLL_REDUCE:
        if (!a->sendbuf && c->rank != a->root) /* only the root may pass MPI_IN_PLACE */
            return MPI_Reduce(a->recvbuf, NULL, n, t, op, a->root, c->comm);
        return MPI_Reduce(in, a->recvbuf, n, t, op, a->root, c->comm);
    default: return MPI_ERR_OTHER;
    }
}

/* Not modelled: the MPI library picks its own algorithm per call (Open
 * MPI's tuned component by message size and rank count, or another
 * component altogether), and the calibration times only microbenchmarks,
 * never the collectives it predicts. The entry has no model: its column is
 * NaN and auto never picks it. */

const struct mb_coll_algo mb_coll_algo_mpi = {
    .name = "mpi", .kinds = MB_COLL_ALL_KINDS,
    .description = "the MPI library's own collectives",
    .available = mb_coll_always, .run = mpi_run,
};
