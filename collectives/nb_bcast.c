/* The nonblocking broadcast (mb_coll_start_algo with MB_COLL_BCAST): the
 * registry's point-to-point broadcasts as state machines of
 * MPI_Irecv/MPI_Isend advanced by MPI_Test from progress calls, the same
 * trees and blocks as their blocking forms in p2p.c (`binomial`: the
 * binomial tree from the root; `scatter-allgather`: the root's blocks
 * [b n/p, (b+1) n/p) scattered, then a ring allgather), and `mpi` as
 * MPI_Ibcast. nb.c owns the request; this file its broadcast state. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum { NBB_MPI, NBB_BINOMIAL, NBB_SAG };

struct mb_coll_nbb {
    MPI_Comm comm;
    int how, rank, size, vr, root, tag;
    char *buf;
    size_t n, es;          /* elements, bytes of one */
    int phase, step;       /* binomial: 0 receive, 1 send; sag: 0 scatter, 1 ring step `step` */
    int mask;              /* binomial: the first child's distance * 2 */
    int nrq;
    MPI_Request *rq;       /* size + 1 */
};

static int mod(int a, int p) { return ((a % p) + p) % p; }
static size_t blo(size_t n, int p, int b) { return (size_t)((unsigned __int128)n * (unsigned)b / (unsigned)p); }

int mb_coll_nb_supports(const struct mb_coll_algo *algo, enum mb_coll_kind kind)
{
    if (kind == MB_COLL_ALLGATHER || kind == MB_COLL_REDUCE_SCATTER)
        return !algo || algo == &mb_coll_algo_ring;
    if (kind == MB_COLL_BCAST)
        return algo == &mb_coll_algo_mpi || algo == &mb_coll_algo_binomial || algo == &mb_coll_algo_scatter_allgather;
    return 0;
}

static int isend(struct mb_coll_nbb *b, size_t off, size_t cnt, int to)
{
    return MPI_Isend(b->buf + off * b->es, (int)(cnt * b->es), MPI_BYTE, to, b->tag, b->comm, &b->rq[b->nrq++]);
}

static int irecv(struct mb_coll_nbb *b, size_t off, size_t cnt, int from)
{
    return MPI_Irecv(b->buf + off * b->es, (int)(cnt * b->es), MPI_BYTE, from, b->tag, b->comm, &b->rq[b->nrq++]);
}

/* Posts what the current phase sends and receives. MPI_SUCCESS or an error. */
static int post(struct mb_coll_nbb *b)
{
    int p = b->size, rc = MPI_SUCCESS;
    b->nrq = 0;
    if (b->how == NBB_BINOMIAL) {
        if (b->phase == 0) { /* from the parent: vr less its lowest set bit */
            int m = 1;
            while (m < p && !(b->vr & m))
                m <<= 1;
            b->mask = m;
            if (b->vr)
                rc = irecv(b, 0, b->n, mod(b->vr - m + b->root, p));
        } else { /* to the children, farthest first as p2p.c */
            for (int m = b->mask >> 1; m > 0 && rc == MPI_SUCCESS; m >>= 1)
                if (b->vr + m < p)
                    rc = isend(b, 0, b->n, mod(b->vr + m + b->root, p));
        }
    } else if (b->phase == 0) { /* scatter: block q to virtual rank q */
        if (b->vr == 0) {
            for (int q = 1; q < p && rc == MPI_SUCCESS; q++)
                rc = isend(b, blo(b->n, p, q), blo(b->n, p, q + 1) - blo(b->n, p, q), mod(q + b->root, p));
        } else {
            rc = irecv(b, blo(b->n, p, b->vr), blo(b->n, p, b->vr + 1) - blo(b->n, p, b->vr), b->root);
        }
    } else { /* ring step: block vr - s to the next rank, block vr - s - 1 from the previous */
        int sb = mod(b->vr - b->step, p), rb = mod(b->vr - b->step - 1, p);
        rc = irecv(b, blo(b->n, p, rb), blo(b->n, p, rb + 1) - blo(b->n, p, rb), mod(b->rank - 1, p));
        if (rc == MPI_SUCCESS)
            rc = isend(b, blo(b->n, p, sb), blo(b->n, p, sb + 1) - blo(b->n, p, sb), mod(b->rank + 1, p));
    }
    return rc;
}

struct mb_coll_nbb *mb_coll_nbb_start(struct mb_coll_ctx *ctx, const struct mb_coll_algo *algo,
                                      const struct mb_coll_args *a, int tag, char *err, size_t errlen)
{
    if (!mb_coll_nb_supports(algo, MB_COLL_BCAST)) {
        snprintf(err, errlen, "nonblocking bcast: not implemented for %s (it is for mpi, binomial and "
                 "scatter-allgather)", algo ? algo->name : "no algorithm");
        return NULL;
    }
    if (a->root < 0 || a->root >= ctx->size) {
        snprintf(err, errlen, "nonblocking bcast: root %d outside the %d ranks", a->root, ctx->size);
        return NULL;
    }
    size_t es = mb_coll_dtype_size(a->dtype);
    if (a->count * es > (size_t)INT32_MAX) {
        snprintf(err, errlen, "nonblocking bcast: %zu bytes exceed an MPI count", a->count * es);
        return NULL;
    }
    struct mb_coll_nbb *b = calloc(1, sizeof(*b));
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(ctx->size + 1));
    if (!b || !rq) {
        free(b), free(rq);
        snprintf(err, errlen, "nonblocking bcast: out of memory");
        return NULL;
    }
    *b = (struct mb_coll_nbb){.comm = ctx->comm, .rank = ctx->rank, .size = ctx->size, .root = a->root, .tag = tag,
                              .buf = a->recvbuf, .n = a->count, .es = es, .rq = rq,
                              .how = algo == &mb_coll_algo_mpi ? NBB_MPI
                                     : algo == &mb_coll_algo_binomial ? NBB_BINOMIAL : NBB_SAG};
    b->vr = mod(b->rank - b->root, b->size);
    for (int i = 0; i <= b->size; i++)
        rq[i] = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    if (b->size == 1)
        b->phase = -1; /* nothing to move */
    else if (b->how == NBB_MPI)
        b->nrq = 1, rc = MPI_Ibcast(b->buf, (int)(b->n * es), MPI_BYTE, b->root, b->comm, &rq[0]);
    else
        rc = post(b);
    if (rc != MPI_SUCCESS) {
        mb_coll_nbb_free(b);
        snprintf(err, errlen, "nonblocking bcast: MPI error %d posting the first step", rc);
        return NULL;
    }
    return b;
}

int mb_coll_nbb_progress(struct mb_coll_nbb *b)
{
    while (b->phase >= 0) {
        int flag = 0;
        if (MPI_Testall(b->nrq, b->rq, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!flag)
            return 0;
        /* this phase is done: the next, or the end */
        if (b->how == NBB_MPI || (b->how == NBB_BINOMIAL && b->phase == 1) ||
            (b->how == NBB_SAG && b->phase == 1 && b->step == b->size - 2)) {
            b->phase = -1, b->nrq = 0;
            break;
        }
        if (b->how == NBB_SAG && b->phase == 1)
            b->step++;
        else
            b->phase = 1, b->step = 0;
        if (post(b) != MPI_SUCCESS)
            return -1;
    }
    return 1;
}

void mb_coll_nbb_free(struct mb_coll_nbb *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->nrq; i++) /* a failed step's other requests: never left writing into freed memory */
        if (b->rq[i] != MPI_REQUEST_NULL) {
            if (b->how != NBB_MPI)
                MPI_Cancel(&b->rq[i]);
            MPI_Wait(&b->rq[i], MPI_STATUS_IGNORE);
        }
    free(b->rq);
    free(b);
}
