/* The one registry of algorithms, and the library's own (`mpi`). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static int always(struct mb_coll_ctx *c, char *why, size_t len)
{
    (void)c, (void)why, (void)len;
    return 1;
}

static int run_mpi(struct mb_coll_ctx *c, const struct mb_coll_args *a)
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
        if (!a->sendbuf && c->rank != a->root)
            return MPI_Reduce(a->recvbuf, NULL, n, t, op, a->root, c->comm);
        return MPI_Reduce(in, a->recvbuf, n, t, op, a->root, c->comm);
    default: return MPI_ERR_OTHER;
    }
}

const char *const mb_coll_kind_names[MB_COLL_NKIND] = {"allreduce", "reduce_scatter_block", "allgather",
                                                         "bcast", "reduce"};

const struct mb_coll_algo mb_coll_algo_mpi = {
    .name = "mpi",
    .description = "the MPI library's own collectives",
    .kinds = (1u << MB_COLL_NKIND) - 1,
    .available = always,
    .run = run_mpi,
};

static const struct mb_coll_algo *const registry[] = {
    &mb_coll_algo_mpi,
    &mb_coll_algo_ring,
    &mb_coll_algo_rd,
    &mb_coll_algo_rabenseifner,
    &mb_coll_algo_binomial,
    &mb_coll_algo_scatter_allgather,
    &mb_coll_algo_shm,
    &mb_coll_algo_shm_copyin,
    &mb_coll_algo_hier,
    &mb_coll_algo_pool,
    &mb_coll_algo_cma,
    &mb_coll_algo_ucx,
    &mb_coll_algo_nccl,
    &mb_coll_algo_cuda_ipc,
};

size_t mb_coll_nalgos(void) { return sizeof(registry) / sizeof(registry[0]); }
const struct mb_coll_algo *mb_coll_algo_at(size_t i) { return i < mb_coll_nalgos() ? registry[i] : NULL; }

const struct mb_coll_algo *mb_coll_find(const char *name)
{
    for (size_t i = 0; i < mb_coll_nalgos(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int mb_coll_usable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx, enum mb_coll_kind kind,
                   char *why, size_t len)
{
    if (!(algo->kinds & (1u << kind))) {
        snprintf(why, len, "%s does not implement %s", algo->name, mb_coll_kind_names[kind]);
        return 0;
    }
    return algo->available(ctx, why, len);
}
