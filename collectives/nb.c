/* Nonblocking ring allgather and ring reduce_scatter_block (mb_coll_start,
 * mb_coll_start_algo; broadcasts: nb_bcast.c's state in the same request,
 * mb_coll_progress, mb_coll_req_wait): the blocking ring's steps (p2p.c),
 * the same blocks in the same order and the same reductions, so the
 * results are bit-identical, but each step is an MPI_Irecv + MPI_Isend
 * advanced by MPI_Test from progress calls. This Open MPI has no
 * asynchronous progress thread, so a collective overlapped with compute
 * moves only as often as the caller (or a thread of its own) calls
 * progress. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Each request gets its own tag, so requests in flight together on one
 * communicator (started in the same order on every rank, as MPI requires
 * of collectives) never match each other's messages, nor the blocking
 * algorithms' (p2p.c 7301, hier.c 7302). 32767 is the least MPI_TAG_UB
 * the standard allows. */
#define NB_TAG_BASE 16384
#define NB_TAG_SPAN 16383

struct mb_coll_req {
    MPI_Comm comm;
    enum mb_coll_kind kind;
    enum mb_coll_dtype dtype;
    enum mb_coll_op op;
    int rank, size, next, prev, tag;
    size_t count, blk;          /* elements and bytes of one block */
    char *out;                  /* allgather: recvbuf; reduce_scatter: the caller's block */
    char *work, *rtmp;          /* reduce_scatter: copy of the p input blocks, one received block */
    int step;                   /* ring step in flight (p - 1 steps in all) */
    int posted, sent;           /* this step's receive posted; its send posted (pacing allowed it) */
    MPI_Request rq[2];          /* receive, send */
    int done, failed;
    struct mb_coll_pace pace;
    struct mb_coll_nbb *bcast; /* a broadcast (nb_bcast.c): its state, the fields above unused */
};

static int mod(int a, int p) { return ((a % p) + p) % p; }

/* Blocks this step sends and receives, as in p2p.c's ring_run. */
static int send_block(const struct mb_coll_req *q)
{
    return q->kind == MB_COLL_ALLGATHER ? mod(q->rank - q->step, q->size) : mod(q->rank - q->step - 1, q->size);
}
static int recv_block(const struct mb_coll_req *q)
{
    return q->kind == MB_COLL_ALLGATHER ? mod(q->rank - q->step - 1, q->size)
                                        : mod(q->rank - q->step - 2, q->size);
}

static void finish(struct mb_coll_req *q)
{
    if (q->kind == MB_COLL_REDUCE_SCATTER && q->blk)
        memcpy(q->out, q->work + (size_t)q->rank * q->blk, q->blk);
    q->done = 1;
}

static int next_tag(struct mb_coll_ctx *ctx) { return NB_TAG_BASE + (int)(ctx->nb_started++ % NB_TAG_SPAN); }

int mb_coll_start_algo(struct mb_coll_ctx *ctx, const struct mb_coll_algo *algo, const struct mb_coll_args *a,
                       const struct mb_coll_pace *pace, struct mb_coll_req **reqp, char *err, size_t errlen)
{
    *reqp = NULL;
    if (a->kind != MB_COLL_BCAST) {
        if (algo && algo != &mb_coll_algo_ring) {
            snprintf(err, errlen, "nonblocking %s: only the ring's, not %s",
                     (unsigned)a->kind < MB_COLL_NKIND ? mb_coll_kind_names[a->kind] : "collective", algo->name);
            return -1;
        }
        return mb_coll_start(ctx, a, pace, reqp, err, errlen);
    }
    if (pace && pace->fn) {
        snprintf(err, errlen, "nonblocking bcast: no pacing (the ring's hook)");
        return -1;
    }
    struct mb_coll_req *q = calloc(1, sizeof(*q));
    if (!q) {
        snprintf(err, errlen, "nonblocking bcast: out of memory");
        return -1;
    }
    *q = (struct mb_coll_req){.comm = ctx->comm, .kind = a->kind, .rq = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
    if (!(q->bcast = mb_coll_nbb_start(ctx, algo, a, next_tag(ctx), err, errlen))) {
        free(q);
        return -1;
    }
    *reqp = q;
    return 0;
}

int mb_coll_start(struct mb_coll_ctx *ctx, const struct mb_coll_args *a, const struct mb_coll_pace *pace,
                  struct mb_coll_req **reqp, char *err, size_t errlen)
{
    *reqp = NULL;
    if (a->kind != MB_COLL_ALLGATHER && a->kind != MB_COLL_REDUCE_SCATTER) {
        const char *what = (unsigned)a->kind < MB_COLL_NKIND ? mb_coll_kind_names[a->kind] : "unknown collective";
        snprintf(err, errlen, "nonblocking %s: not implemented (the nonblocking ring does allgather and "
                 "reduce_scatter_block)", what);
        return -1;
    }
    size_t es = mb_coll_dtype_size(a->dtype), blk = a->count * es;
    if (blk > (size_t)INT32_MAX) {
        snprintf(err, errlen, "nonblocking %s: a block of %zu bytes exceeds an MPI count",
                 mb_coll_kind_names[a->kind], blk);
        return -1;
    }
    struct mb_coll_req *q = calloc(1, sizeof(*q));
    if (!q) {
        snprintf(err, errlen, "nonblocking %s: out of memory", mb_coll_kind_names[a->kind]);
        return -1;
    }
    *q = (struct mb_coll_req){.comm = ctx->comm, .kind = a->kind, .dtype = a->dtype, .op = a->op,
                              .rank = ctx->rank, .size = ctx->size, .count = a->count, .blk = blk,
                              .out = a->recvbuf, .rq = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
    q->next = mod(q->rank + 1, q->size);
    q->prev = mod(q->rank - 1, q->size);
    q->tag = next_tag(ctx);
    if (pace)
        q->pace = *pace;
    int p = q->size;
    if (a->kind == MB_COLL_ALLGATHER) {
        if (a->sendbuf && blk)
            memcpy(q->out + (size_t)q->rank * blk, a->sendbuf, blk);
    } else {
        q->work = malloc((size_t)(p + 1) * blk + 1);
        if (!q->work) {
            free(q);
            snprintf(err, errlen, "nonblocking reduce_scatter_block: out of memory for %zu bytes",
                     (size_t)(p + 1) * blk);
            return -1;
        }
        q->rtmp = q->work + (size_t)p * blk;
        if (blk)
            memcpy(q->work, a->sendbuf ? a->sendbuf : a->recvbuf, (size_t)p * blk);
    }
    if (p == 1)
        finish(q);
    *reqp = q;
    return 0;
}

/* Posts what this step may post: the receive at once (so the sender's
 * message always has a home), the send once the pacing hook lets it go. */
static int post(struct mb_coll_req *q)
{
    if (!q->posted) {
        char *dst = q->kind == MB_COLL_ALLGATHER ? q->out + (size_t)recv_block(q) * q->blk : q->rtmp;
        if (MPI_Irecv(dst, (int)q->blk, MPI_BYTE, q->prev, q->tag, q->comm, &q->rq[0]) != MPI_SUCCESS)
            return -1;
        q->posted = 1;
    }
    if (!q->sent) {
        if (q->pace.fn && !q->pace.fn(q->pace.ctx, q->blk))
            return 0;
        const char *src = (q->kind == MB_COLL_ALLGATHER ? q->out : q->work) + (size_t)send_block(q) * q->blk;
        if (MPI_Isend(src, (int)q->blk, MPI_BYTE, q->next, q->tag, q->comm, &q->rq[1]) != MPI_SUCCESS)
            return -1;
        q->sent = 1;
    }
    return 0;
}

int mb_coll_progress(struct mb_coll_req *q)
{
    if (q->failed)
        return -1;
    if (q->bcast) {
        int rc = mb_coll_nbb_progress(q->bcast);
        q->failed = rc < 0;
        return rc;
    }
    while (!q->done) {
        if (post(q) != 0)
            goto fail;
        if (!q->sent)
            return 0; /* held by the pacing hook */
        int flag = 0;
        if (MPI_Testall(2, q->rq, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            goto fail;
        if (!flag)
            return 0;
        if (q->kind == MB_COLL_REDUCE_SCATTER)
            mb_coll_reduce2(q->dtype, q->op, q->work + (size_t)recv_block(q) * q->blk, q->rtmp, q->count);
        q->posted = q->sent = 0;
        if (++q->step == q->size - 1)
            finish(q);
    }
    return 1;
fail:
    q->failed = 1;
    return -1;
}

int mb_coll_req_wait(struct mb_coll_req *q)
{
    int rc;
    while ((rc = mb_coll_progress(q)) == 0)
        ;
    for (int i = 0; i < 2; i++) /* a failed step's other half: never left writing into freed memory */
        if (q->rq[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&q->rq[i]);
            MPI_Wait(&q->rq[i], MPI_STATUS_IGNORE);
        }
    mb_coll_nbb_free(q->bcast);
    free(q->work);
    free(q);
    return rc == 1 ? MPI_SUCCESS : -1;
}
