/* The alpha-beta-gamma cost model: one function per algorithm, counting
 * the messages, flag synchronisations, bytes moved, reduced and copied on
 * the slowest rank's path of the code as implemented (p2p.c, shm.c,
 * pool.c, cma.c, hier.c), and the fitted model of the MPI library. A new
 * algorithm is one function and one row of `models`; names not listed
 * predict NaN. */
#include "internal.h"

#include <math.h>
#include <string.h>

/* One prediction's inputs, with the per-byte costs already blended for
 * the working set. n: bytes of count (MPI's count: the whole buffer of
 * allreduce/bcast/reduce, the per-rank block of reduce_scatter/allgather). */
struct in {
    const struct mb_coll_profile *p;
    enum mb_coll_kind kind;
    double n;
    int oop;       /* out of place */
    int P, L, N;   /* ranks, ranks per node, nodes */
    double ws;     /* the node's working set in bytes */
    double a, b;   /* point-to-point: s per message, s per byte */
    double g, c;   /* s per byte reduced, s per byte copied */
    double fl;     /* s per flag synchronisation */
};

static double blend(const struct mb_coll_profile *p, struct mb_coll_rate r, double ws)
{
    double f = !(p->cache_bytes > 0) ? 0 : ws <= p->cache_bytes ? 1 : p->cache_bytes / ws;
    return f * r.cache + (1 - f) * r.mem;
}

double mb_coll_model_ws(enum mb_coll_kind kind, double n, int oop, int L)
{
    double in = 0, out = 0;
    switch (kind) {
    case MB_COLL_REDUCE_SCATTER: in = L * n, out = n; break;
    case MB_COLL_ALLGATHER: in = n, out = L * n; break;
    case MB_COLL_BCAST: in = 0, out = n, oop = 0; break;
    default: in = n, out = n; break;
    }
    return L * ((oop ? in : 0) + out);
}

static int ilog2(int x) /* floor */
{
    int l = 0;
    while ((1 << (l + 1)) <= x)
        l++;
    return l;
}
static int clog2(int x) { return x <= 1 ? 0 : ilog2(x - 1) + 1; }

static double X(const struct in *m, double bytes) { return m->a + bytes * m->b; } /* one exchange */
static double R(const struct in *m, double bytes) { return bytes * m->g; }       /* reduce bytes */
static double C(const struct in *m, double bytes) { return bytes * m->c; }       /* copy bytes */
/* mb_coll_reduce_many over k sources of bytes each: k-1 passes, a copy for one */
static double RK(const struct in *m, double bytes, int k) { return k <= 1 ? C(m, bytes) : (k - 1) * R(m, bytes); }

/* ---- two-copy point-to-point baselines (p2p.c) ------------------------ */

static double m_ring(const struct in *m)
{
    double n = m->n, P = m->P;
    switch (m->kind) {
    case MB_COLL_ALLREDUCE: /* copy in, P-1 reduce-scatter steps, P-1 allgather steps */
        return (m->oop ? C(m, n) : 0) + 2 * (P - 1) * X(m, n / P) + (P - 1) * R(m, n / P);
    case MB_COLL_REDUCE_SCATTER: /* the whole input into a work area, P-1 steps, the block out */
        return C(m, P * n) + (P - 1) * (X(m, n) + R(m, n)) + C(m, n);
    case MB_COLL_ALLGATHER: return (m->oop ? C(m, n) : 0) + (P - 1) * X(m, n);
    default: return NAN;
    }
}

/* The non-power-of-two fold and unfold: a send + reduce in, a send out. */
static double fold(const struct in *m)
{
    int rem = m->P - (1 << ilog2(m->P));
    return rem ? 2 * X(m, m->n) + R(m, m->n) : 0;
}

static double m_rd(const struct in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    return (m->oop ? C(m, m->n) : 0) + fold(m) + ilog2(m->P) * (X(m, m->n) + R(m, m->n));
}

static double m_rabenseifner(const struct in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    int lg = ilog2(m->P);
    double share = m->n * (1 - 1.0 / (1 << lg)); /* bytes sent in each half, summed over steps */
    return (m->oop ? C(m, m->n) : 0) + fold(m) + 2 * lg * m->a + share * (2 * m->b + m->g);
}

static double m_binomial(const struct in *m)
{
    int depth = clog2(m->P);
    switch (m->kind) {
    case MB_COLL_BCAST: return depth * X(m, m->n);
    case MB_COLL_REDUCE: /* into an accumulator, a step per level, out at the root */
        return 2 * C(m, m->n) + depth * (X(m, m->n) + R(m, m->n));
    default: return NAN;
    }
}

static double m_scatter_allgather(const struct in *m)
{
    if (m->kind != MB_COLL_BCAST)
        return NAN;
    double P = m->P, blk = m->n / P;
    return (P - 1) * m->a + (P - 1) * blk * m->b + (P - 1) * X(m, blk);
}

/* ---- shared memory (shm.c, pool.c, cma.c) ----------------------------- */

static int small(const struct in *m)
{
    double bytes = m->kind == MB_COLL_REDUCE_SCATTER ? m->L * m->n : m->n;
    return bytes <= MB_COLL_SMALL;
}

/* The one-flag path through the small slots (shm, shm-copyin and pool). */
static double shm_small(const struct in *m)
{
    double n = m->n;
    int L = m->L;
    switch (m->kind) {
    case MB_COLL_ALLREDUCE: case MB_COLL_REDUCE: return C(m, n) + m->fl + RK(m, n, L);
    case MB_COLL_REDUCE_SCATTER: return C(m, L * n) + m->fl + RK(m, n, L);
    case MB_COLL_ALLGATHER: return C(m, n) + m->fl + L * C(m, n);
    case MB_COLL_BCAST: return 2 * C(m, n) + m->fl;
    default: return NAN;
    }
}

/* The large path: an entry and an exit synchronisation; copyin: the input
 * goes into node-shared scratch first and every slice is copied out. */
static double shm_large(const struct in *m, int copyin)
{
    double n = m->n;
    int L = m->L;
    double sync = 2 * m->fl;
    switch (m->kind) {
    case MB_COLL_ALLREDUCE:
        if (!copyin && n >= MB_COLL_STREAM_MIN) /* every reduced slice streamed into every output */
            return sync + RK(m, n / L, L) + n * (isnan(m->p->stream) ? m->c : m->p->stream);
        return sync + (copyin ? C(m, n) : 0) + RK(m, n / L, L) + C(m, copyin ? n : n * (L - 1) / L);
    case MB_COLL_REDUCE: /* zero-copy reduces into the root's buffer; copy-in: the root copies out */
        return sync + (copyin ? 2 * C(m, n) : 0) + RK(m, n / L, L);
    case MB_COLL_REDUCE_SCATTER:
        return sync + (copyin ? C(m, L * n) : !m->oop ? C(m, n) : 0) + RK(m, n, L);
    case MB_COLL_ALLGATHER: return sync + (copyin ? C(m, n) : 0) + (L - 1 + (copyin || m->oop)) * C(m, n);
    case MB_COLL_BCAST: return sync + (copyin ? 2 : 1) * C(m, n);
    default: return NAN;
    }
}

static double one_node(const struct in *m, double t) { return m->N == 1 ? t : NAN; }
static double m_shm(const struct in *m) { return one_node(m, small(m) ? shm_small(m) : shm_large(m, 0)); }
static double m_shm_copyin(const struct in *m) { return one_node(m, small(m) ? shm_small(m) : shm_large(m, 1)); }

static double m_cma(const struct in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE || m->N != 1)
        return NAN;
    const struct mb_coll_profile *p = m->p;
    double slice = m->n / m->L, chunks = ceil(slice / MB_COLL_CHUNK), rd = blend(p, p->cma, m->ws);
    double read = chunks * p->cma_alpha + slice * rd; /* one peer's slice, chunk by chunk */
    return 2 * m->fl + (m->oop ? C(m, slice) : 0) + (m->L - 1) * (2 * read + R(m, slice));
}

/* ---- UCX RMA (ucx.c): gets from the peers' mapped buffers over UCX's
 * shared-memory transport, priced as CMA reads (UCX's cma transport) where
 * CMA was calibrated, else as copies, plus one point-to-point latency per
 * get request for UCX's request handling (so ucx never ties with cma, which
 * reads without it); one node only, since no network is calibrated.
 * Allreduce: entry flags, a reduce-scatter by gets in 128 KiB chunks, the
 * slice flags, an allgather by gets. ------------------------------------- */

#define UCX_GET_CHUNK (128.0 * 1024) /* ucx.c's UCX_CHUNK */

static double ucx_get(const struct in *m, double bytes)
{
    const struct mb_coll_profile *p = m->p;
    double requests = ceil(bytes / UCX_GET_CHUNK), t = requests * m->a;
    if (!isfinite(p->cma_alpha))
        return t + C(m, bytes);
    return t + requests * p->cma_alpha + bytes * blend(p, p->cma, m->ws);
}

static double m_ucx(const struct in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE || m->N != 1)
        return NAN;
    double n = m->n;
    int P = m->P;
    if (n <= MB_COLL_SMALL) /* every rank reduces the whole vector; in place through a temporary */
        return 2 * m->fl + (P - 1) * ucx_get(m, n) + RK(m, n, P) + (m->oop ? 0 : C(m, n));
    double slice = n / P;
    return 2 * m->fl + 2 * (P - 1) * ucx_get(m, slice) + RK(m, slice, P);
}

/* ---- hierarchical (hier.c): node reduce, leaders, node broadcast ------ */

static double m_hier(const struct in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    struct in node = *m;
    node.N = 1;
    node.kind = MB_COLL_REDUCE;
    double t = m_shm_copyin(&node);
    node.kind = MB_COLL_BCAST;
    node.oop = 0;
    t += m_shm_copyin(&node);
    if (m->N > 1) {
        struct in lead = *m;
        lead.P = m->N;
        lead.oop = 0;
        t += m_rabenseifner(&lead);
    }
    return t;
}

/* ---- the MPI library: fitted at the calibration's rank count, scaled to
 * P by the latency depth and the bytes each rank must move -------------- */

static double volume(enum mb_coll_kind k, int P)
{
    switch (k) {
    case MB_COLL_ALLREDUCE: return 2.0 * (P - 1) / P;
    case MB_COLL_REDUCE_SCATTER: case MB_COLL_ALLGATHER: return P - 1;
    default: return clog2(P);
    }
}

static double m_mpi(const struct in *m)
{
    const struct mb_coll_profile *p = m->p;
    int Pc = p->ranks;
    if (m->P == 1)
        return m->oop ? C(m, m->n) : 0;
    double lat = (double)clog2(m->P) / clog2(Pc), vol = volume(m->kind, m->P) / volume(m->kind, Pc);
    return p->mpi_alpha[m->kind] * lat + m->n * blend(p, p->mpi[m->kind], m->ws) * vol;
}

static const struct {
    const char *name;
    double (*fn)(const struct in *m);
} models[] = {
    {"mpi", m_mpi},
    {"ring", m_ring},
    {"rd", m_rd},
    {"rabenseifner", m_rabenseifner},
    {"binomial", m_binomial},
    {"scatter-allgather", m_scatter_allgather},
    {"shm", m_shm},
    {"shm-copyin", m_shm_copyin},
    {"pool", m_shm_copyin}, /* the same copy-in code on the pool's slots */
    {"cma", m_cma},
    {"hier", m_hier},
    {"ucx", m_ucx},
};

int mb_coll_model_knows(const char *algo)
{
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (strcmp(models[i].name, algo) == 0)
            return 1;
    return 0;
}

double mb_coll_model(const struct mb_coll_profile *p, const char *algo, const struct mb_coll_args *a,
                     const struct mb_coll_shape *s)
{
    if (!p || a->kind >= MB_COLL_NKIND || s->nranks < 1 || s->node_size < 1 || s->nnodes < 1)
        return NAN;
    struct in m = {
        .p = p,
        .kind = a->kind,
        .n = (double)a->count * (double)mb_coll_dtype_size(a->dtype),
        .oop = a->sendbuf != NULL && a->kind != MB_COLL_BCAST,
        .P = s->nranks,
        .L = s->node_size,
        .N = s->nnodes,
        .a = p->p2p_alpha,
        .fl = p->flag,
    };
    m.ws = mb_coll_model_ws(m.kind, m.n, m.oop, m.L);
    m.b = blend(p, p->p2p, m.ws);
    m.g = blend(p, p->reduce, m.ws);
    m.c = blend(p, p->copy, m.ws);
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (strcmp(models[i].name, algo) == 0) {
            double t = models[i].fn(&m);
            return isfinite(t) && t >= 0 ? t : NAN;
        }
    return NAN;
}

void mb_coll_model_shape(const struct mb_coll_ctx *c, struct mb_coll_shape *s)
{
    int local = c->node_size, largest = local;
    MPI_Allreduce(&local, &largest, 1, MPI_INT, MPI_MAX, c->comm);
    s->nranks = c->size;
    s->node_size = largest;
    s->nnodes = c->nnodes;
}

const struct mb_coll_algo *mb_coll_pick(const struct mb_coll_profile *p, struct mb_coll_ctx *ctx,
                                        const struct mb_coll_args *a, int registered, double *predicted)
{
    struct mb_coll_shape s;
    mb_coll_model_shape(ctx, &s);
    const struct mb_coll_algo *best = NULL;
    double tbest = INFINITY;
    for (size_t i = 0; i < mb_coll_nalgos(); i++) {
        const struct mb_coll_algo *al = mb_coll_algo_at(i);
        char why[256];
        if (!mb_coll_usable(al, ctx, a->kind, why, sizeof(why)) || (al->wants_registered && !registered))
            continue;
        double t = mb_coll_model(p, al->name, a, &s);
        if (t < tbest) /* NaN never compares less */
            best = al, tbest = t;
    }
    if (predicted)
        *predicted = best ? tbest : NAN;
    return best;
}
