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

/* The model: fitted at the calibration's rank count, scaled to
 * P by the latency depth and the bytes each rank must move -------------- */

static double volume(enum mb_coll_kind k, int P)
{
    switch (k) {
    case MB_COLL_ALLREDUCE: return 2.0 * (P - 1) / P;
    case MB_COLL_REDUCE_SCATTER: case MB_COLL_ALLGATHER: return P - 1;
    default: return mb_coll_clog2(P);
    }
}

static double m_mpi(const struct mb_coll_model_in *m)
{
    const struct mb_coll_profile *p = m->p;
    int Pc = p->ranks;
    if (m->P == 1)
        return m->oop ? mb_coll_C(m, m->n) : 0;
    double lat = (double)mb_coll_clog2(m->P) / mb_coll_clog2(Pc), vol = volume(m->kind, m->P) / volume(m->kind, Pc);
    return p->mpi_alpha[m->kind] * lat + m->n * mb_coll_blend(p, p->mpi[m->kind], m->ws) * vol;
}

const struct mb_coll_algo mb_coll_algo_mpi = {
    .name = "mpi", .kinds = MB_COLL_ALL_KINDS, .model = m_mpi,
    .description = "the MPI library's own collectives",
    .available = mb_coll_always, .run = mpi_run,
};
