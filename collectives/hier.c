/* Hierarchical collectives: shared memory (shm-copyin) inside each node,
 * point to point among the node leaders (node rank 0).
 * - allreduce is pipelined in chunks across machines: the node reduces
 *   chunk k+1 and broadcasts chunk k-1 while the leaders' ring allreduce
 *   of chunk k is in flight (non-blocking, advanced between the node
 *   steps); one stage when every rank is on one machine (hier_chunk);
 * - reduce_scatter_block is that allreduce of the whole input into a
 *   private buffer, keeping this rank's block (simple, not traffic-optimal);
 * - allgather: node allgather into a node-ordered buffer, allgatherv
 *   among the leaders, node broadcast, then each block to its rank's place;
 * - bcast: the root's node, then the leaders (binomial or scatter-allgather),
 *   then the other nodes;
 * - reduce: node reduce to the leader, binomial reduce among the leaders,
 *   then the root's leader hands the result to the root. */
#include "model.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TAG 7302
#define HIER_CHUNK ((size_t)256 << 10) /* bytes per pipeline stage */

/* Elements per allreduce pipeline stage. The pipeline overlaps the node's
 * memory work with the leaders' network exchange; where every "node" is on
 * one machine (a --ranks-per-node split) both levels share the same cores
 * and memory, and the stages cost more than they hide (measured: 16 MiB in
 * 12-16 ms pipelined against 11-12 ms in one stage at 2 ranks, 77-84 ms
 * against 24-26 ms at 4 ranks on 2 cores), so there it is one stage.
 * MB_COLL_HIER_CHUNK=BYTES overrides the stage size (0: one stage). */
static size_t hier_chunk(size_t es, size_t n, int one_host)
{
    static long long env = -2;
    if (env == -2) {
        const char *e = getenv("MB_COLL_HIER_CHUNK");
        char *end = NULL;
        env = e ? strtoll(e, &end, 0) : -1;
        if (e && (end == e || *end || env < 0))
            env = -1;
    }
    size_t bytes = env < 0 ? (one_host ? n * es : HIER_CHUNK) : env == 0 ? n * es : (size_t)env;
    size_t ce = bytes / es;
    return ce ? ce : 1;
}

int mb_coll_shm_node(struct mb_coll_ctx *c, const struct mb_coll_args *a);

struct mb_coll_hier {
    int *node_of, *node_rank_of; /* [size] */
    int *first, *count;          /* [nnodes]: node i's ranks in order[first[i] .. +count[i]) */
    int *order;                  /* [size]: comm ranks, by node then node rank */
    char *buf;                   /* private work buffer */
    size_t buf_bytes;
    char *ring_tmp;
    size_t ring_tmp_bytes;
};

/* hier's state in the context: made by layout(), at its first call */
static struct mb_coll_hier *hier_of(struct mb_coll_ctx *c) { return mb_coll_slot(c, &mb_coll_algo_hier)->state; }

static void hier_free(struct mb_coll_ctx *c, void *state)
{
    struct mb_coll_hier *h = state;
    (void)c;
    free(h->node_of);
    free(h->node_rank_of);
    free(h->first);
    free(h->count);
    free(h->order);
    free(h->buf);
    free(h->ring_tmp);
    free(h);
}

/* The layout, learnt once (collective: the first hier call on every rank). */
static struct mb_coll_hier *layout(struct mb_coll_ctx *c)
{
    void **state = &mb_coll_slot(c, &mb_coll_algo_hier)->state;
    if (*state)
        return *state;
    struct mb_coll_hier *h = *state = calloc(1, sizeof(*h));
    int p = c->size, node = 0, me[2];
    if (c->leader_comm != MPI_COMM_NULL)
        MPI_Comm_rank(c->leader_comm, &node);
    MPI_Bcast(&node, 1, MPI_INT, 0, c->node_comm);
    me[0] = node, me[1] = c->node_rank;
    int *all = malloc(sizeof(int) * 2 * (size_t)p);
    MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, c->comm);
    h->node_of = malloc(sizeof(int) * (size_t)p);
    h->node_rank_of = malloc(sizeof(int) * (size_t)p);
    h->first = calloc((size_t)c->nnodes + 1, sizeof(int));
    h->count = calloc((size_t)c->nnodes, sizeof(int));
    h->order = malloc(sizeof(int) * (size_t)p);
    for (int q = 0; q < p; q++) {
        h->node_of[q] = all[2 * q], h->node_rank_of[q] = all[2 * q + 1];
        h->count[h->node_of[q]]++;
    }
    for (int i = 0; i < c->nnodes; i++)
        h->first[i + 1] = h->first[i] + h->count[i];
    for (int q = 0; q < p; q++)
        h->order[h->first[h->node_of[q]] + h->node_rank_of[q]] = q;
    free(all);
    return h;
}

static char *work(struct mb_coll_hier *h, size_t bytes)
{
    if (bytes > h->buf_bytes) {
        free(h->buf);
        h->buf = malloc(bytes);
        h->buf_bytes = bytes;
    }
    return h->buf;
}

/* A view of the context as its leaders' communicator, for the p2p algorithms. */
static int on_leaders(struct mb_coll_ctx *c, const struct mb_coll_algo *algo, const struct mb_coll_args *a)
{
    struct mb_coll_ctx view = *c;
    view.comm = c->leader_comm;
    MPI_Comm_rank(view.comm, &view.rank);
    MPI_Comm_size(view.comm, &view.size);
    int rc = algo->run(&view, a);
    c->tmp = view.tmp, c->tmp_bytes = view.tmp_bytes;
    return rc;
}

static int node_call(struct mb_coll_ctx *c, enum mb_coll_kind kind, const void *in, void *out, size_t count,
                     const struct mb_coll_args *a, int root)
{
    struct mb_coll_args x = *a;
    x.kind = kind, x.sendbuf = in, x.recvbuf = out, x.count = count, x.root = root;
    return mb_coll_shm_node(c, &x);
}

/* ---- allreduce: node reduce, leaders' non-blocking ring, node bcast ---- */

struct ring { /* one ring allreduce among the leaders, advanced step by step */
    struct mb_coll_ctx *c;
    const struct mb_coll_args *a;
    char *x, *tmp;
    size_t m;
    int l, L, step, nsteps;
    MPI_Request rq[2];
};

static size_t blo(size_t n, int p, int b) { return (size_t)((unsigned __int128)n * (unsigned)b / (unsigned)p); }
static int mod(int a, int p) { return ((a % p) + p) % p; }

static void ring_post(struct ring *g)
{
    size_t es = mb_coll_dtype_size(g->a->dtype);
    int s = g->step, rs = s < g->L - 1, t = rs ? s : s - (g->L - 1);
    int sb = rs ? mod(g->l - t, g->L) : mod(g->l + 1 - t, g->L), rb = rs ? mod(g->l - t - 1, g->L) : mod(g->l - t, g->L);
    size_t so = blo(g->m, g->L, sb), sn = blo(g->m, g->L, sb + 1) - so;
    size_t ro = blo(g->m, g->L, rb), rn = blo(g->m, g->L, rb + 1) - ro;
    MPI_Comm lc = g->c->leader_comm;
    MPI_Irecv(rs ? g->tmp : g->x + ro * es, (int)(rn * es), MPI_BYTE, mod(g->l - 1, g->L), TAG, lc, &g->rq[0]);
    MPI_Isend(g->x + so * es, (int)(sn * es), MPI_BYTE, mod(g->l + 1, g->L), TAG, lc, &g->rq[1]);
}

static void ring_start(struct ring *g, struct mb_coll_ctx *c, const struct mb_coll_args *a, char *x, size_t m)
{
    struct mb_coll_hier *h = hier_of(c);
    g->c = c, g->a = a, g->x = x, g->m = m, g->step = 0;
    MPI_Comm_rank(c->leader_comm, &g->l);
    MPI_Comm_size(c->leader_comm, &g->L);
    g->nsteps = 2 * (g->L - 1);
    size_t need = (m / (size_t)g->L + 1) * mb_coll_dtype_size(a->dtype);
    if (need > h->ring_tmp_bytes) {
        free(h->ring_tmp);
        h->ring_tmp = malloc(need);
        h->ring_tmp_bytes = need;
    }
    g->tmp = h->ring_tmp;
    if (g->nsteps > 0)
        ring_post(g);
}

/* Moves the ring on; blocking waits for the end. 1 when it is complete. */
static int ring_advance(struct ring *g, int blocking)
{
    while (g->step < g->nsteps) {
        int done = 1;
        if (blocking)
            MPI_Waitall(2, g->rq, MPI_STATUSES_IGNORE);
        else
            MPI_Testall(2, g->rq, &done, MPI_STATUSES_IGNORE);
        if (!done)
            return 0;
        if (g->step < g->L - 1) {
            int rb = mod(g->l - g->step - 1, g->L);
            size_t ro = blo(g->m, g->L, rb), rn = blo(g->m, g->L, rb + 1) - ro;
            mb_coll_reduce2(g->a->dtype, g->a->op, g->x + ro * mb_coll_dtype_size(g->a->dtype), g->tmp, rn);
        }
        if (++g->step < g->nsteps)
            ring_post(g);
    }
    return 1;
}

static int allreduce_into(struct mb_coll_ctx *c, const struct mb_coll_args *a, const char *in, char *out,
                          size_t n)
{
    size_t es = mb_coll_dtype_size(a->dtype), ce = hier_chunk(es, n, c->one_host), nk = (n + ce - 1) / ce;
    int leader = c->leader_comm != MPI_COMM_NULL && c->nnodes > 1, rc = 0;
    struct ring g = {0};
    for (size_t k = 0; k <= nk; k++) {
        if (k < nk) { /* node reduce of chunk k, while the leaders' chunk k-1 is in flight */
            size_t off = k * ce, len = n - off < ce ? n - off : ce;
            rc |= node_call(c, MB_COLL_REDUCE, in + off * es, out + off * es, len, a, 0);
        }
        if (k > 0 && leader)
            ring_advance(&g, 1);
        if (k < nk && leader) {
            size_t off = k * ce, len = n - off < ce ? n - off : ce;
            ring_start(&g, c, a, out + off * es, len);
        }
        if (k > 0) { /* node broadcast of chunk k-1, while chunk k is in flight */
            size_t off = (k - 1) * ce, len = n - off < ce ? n - off : ce;
            if (leader)
                ring_advance(&g, 0);
            rc |= node_call(c, MB_COLL_BCAST, NULL, out + off * es, len, a, 0);
            if (leader)
                ring_advance(&g, 0);
        }
    }
    return rc;
}

static int hier_allreduce(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    const char *in = a->sendbuf ? a->sendbuf : a->recvbuf;
    return allreduce_into(c, a, in, a->recvbuf, a->count);
}

static int hier_reduce_scatter(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count * (size_t)c->size;
    char *w = work(hier_of(c), n * es);
    const char *in = a->sendbuf ? a->sendbuf : a->recvbuf;
    int rc = allreduce_into(c, a, in, w, n);
    memcpy(a->recvbuf, w + (size_t)c->rank * a->count * es, a->count * es);
    return rc;
}

static int hier_allgather(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    struct mb_coll_hier *h = hier_of(c);
    int p = c->size, me = h->node_of[c->rank];
    size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
    char *w = work(h, (size_t)p * bytes), *out = a->recvbuf;
    const char *mine = a->sendbuf ? a->sendbuf : out + (size_t)c->rank * bytes;
    int rc = node_call(c, MB_COLL_ALLGATHER, mine, w + (size_t)h->first[me] * bytes, a->count, a, 0);
    if (c->leader_comm != MPI_COMM_NULL && c->nnodes > 1) {
        if ((size_t)p * bytes > INT_MAX)
            return -1;
        int cnt[c->nnodes], dsp[c->nnodes];
        for (int i = 0; i < c->nnodes; i++)
            cnt[i] = h->count[i] * (int)bytes, dsp[i] = h->first[i] * (int)bytes;
        rc |= MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, w, cnt, dsp, MPI_BYTE, c->leader_comm);
    }
    rc |= node_call(c, MB_COLL_BCAST, NULL, w, (size_t)p * a->count, a, 0);
    for (int pos = 0; pos < p; pos++)
        memcpy(out + (size_t)h->order[pos] * bytes, w + (size_t)pos * bytes, bytes);
    return rc;
}

static int hier_bcast(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    struct mb_coll_hier *h = hier_of(c);
    int rn = h->node_of[a->root], me = h->node_of[c->rank], rc = 0;
    if (me == rn)
        rc |= node_call(c, MB_COLL_BCAST, NULL, a->recvbuf, a->count, a, h->node_rank_of[a->root]);
    if (c->leader_comm != MPI_COMM_NULL && c->nnodes > 1) {
        struct mb_coll_args x = *a;
        x.root = rn;
        size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
        rc |= on_leaders(c, bytes >= 65536 ? &mb_coll_algo_scatter_allgather : &mb_coll_algo_binomial, &x);
    }
    if (me != rn)
        rc |= node_call(c, MB_COLL_BCAST, NULL, a->recvbuf, a->count, a, 0);
    return rc;
}

static int hier_reduce(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    struct mb_coll_hier *h = hier_of(c);
    size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
    int rn = h->node_of[a->root], rnr = h->node_rank_of[a->root], rc = 0;
    char *w = work(h, bytes);
    const char *in = a->sendbuf ? a->sendbuf : a->recvbuf;
    rc |= node_call(c, MB_COLL_REDUCE, in, w, a->count, a, 0);
    if (c->leader_comm != MPI_COMM_NULL && c->nnodes > 1) {
        struct mb_coll_args x = *a;
        x.sendbuf = NULL, x.recvbuf = w, x.root = rn;
        rc |= on_leaders(c, &mb_coll_algo_binomial, &x);
    }
    if (h->node_of[c->rank] == rn && rnr != 0) { /* the root is not its node's leader */
        if (c->node_rank == 0)
            rc |= MPI_Send(w, (int)bytes, MPI_BYTE, rnr, TAG, c->node_comm);
        else if (c->rank == a->root)
            rc |= MPI_Recv(a->recvbuf, (int)bytes, MPI_BYTE, 0, TAG, c->node_comm, MPI_STATUS_IGNORE);
    } else if (c->rank == a->root) {
        memcpy(a->recvbuf, w, bytes);
    }
    return rc;
}

static int hier_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    layout(c);
    if (a->count == 0) /* the same on every rank */
        return 0;
    switch (a->kind) {
    case MB_COLL_ALLREDUCE: return hier_allreduce(c, a);
    case MB_COLL_REDUCE_SCATTER: return hier_reduce_scatter(c, a);
    case MB_COLL_ALLGATHER: return hier_allgather(c, a);
    case MB_COLL_BCAST: return hier_bcast(c, a);
    case MB_COLL_REDUCE: return hier_reduce(c, a);
    default: return -1;
    }
}

/* The model: node reduce, Rabenseifner among the leaders, node broadcast. */

static double m_hier(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    struct mb_coll_model_in node = *m;
    node.N = 1;
    node.kind = MB_COLL_REDUCE;
    double t = mb_coll_model_shm_copyin(&node);
    node.kind = MB_COLL_BCAST;
    node.oop = 0;
    t += mb_coll_model_shm_copyin(&node);
    if (m->N > 1) {
        /* the leaders' ring (ring_post/ring_advance): 2(N-1) non-blocking
         * steps of n/N, each crossing a link with one leader on it, and N-1
         * reductions of n/N */
        double N = m->N, blk = m->n / N;
        t += 2 * (N - 1) * mb_coll_XNB(m, blk) + (N - 1) * mb_coll_R(m, blk);
    }
    return t;
}

const struct mb_coll_algo mb_coll_algo_hier = {
    .name = "hier", .kinds = MB_COLL_ALL_KINDS, .model = m_hier,
    .description = "shm-copyin inside nodes, p2p among node leaders; allreduce pipelined so the levels overlap",
    .available = mb_coll_always, .run = hier_run, .teardown = hier_free,
};
