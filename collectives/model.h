/* Internal to collectives/: the terms of the alpha-beta-gamma cost model,
 * for the algorithms' own model functions (struct mb_coll_algo.model). A
 * model counts the messages, flag synchronisations and bytes moved,
 * reduced and copied on the slowest rank's path of its algorithm as
 * implemented; model.c blends the per-byte costs for the working set and
 * calls it (mb_coll_model). */
#ifndef MB_COLL_MODEL_H
#define MB_COLL_MODEL_H

#include "internal.h"

#include <math.h>

/* One prediction's inputs, with the per-byte costs already blended for
 * the working set. n: bytes of count (MPI's count: the whole buffer of
 * allreduce/bcast/reduce, the per-rank block of reduce_scatter/allgather). */
struct mb_coll_model_in {
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

/* A per-byte cost for working set ws: f*cache + (1-f)*mem, f = min(1, S/ws). */
static inline double mb_coll_blend(const struct mb_coll_profile *p, struct mb_coll_rate r, double ws)
{
    double f = !(p->cache_bytes > 0) ? 0 : ws <= p->cache_bytes ? 1 : p->cache_bytes / ws;
    return f * r.cache + (1 - f) * r.mem;
}

static inline int mb_coll_ilog2(int x) /* floor */
{
    int l = 0;
    while ((1 << (l + 1)) <= x)
        l++;
    return l;
}
static inline int mb_coll_clog2(int x) { return x <= 1 ? 0 : mb_coll_ilog2(x - 1) + 1; }

/* one point-to-point exchange, reducing bytes, copying bytes */
static inline double mb_coll_X(const struct mb_coll_model_in *m, double bytes) { return m->a + bytes * m->b; }
static inline double mb_coll_R(const struct mb_coll_model_in *m, double bytes) { return bytes * m->g; }
static inline double mb_coll_C(const struct mb_coll_model_in *m, double bytes) { return bytes * m->c; }
/* mb_coll_reduce_many over k sources of bytes each: k-1 passes, a copy for one */
static inline double mb_coll_RK(const struct mb_coll_model_in *m, double bytes, int k)
{
    return k <= 1 ? mb_coll_C(m, bytes) : (k - 1) * mb_coll_R(m, bytes);
}
/* The shared-memory algorithms reach one node. */
static inline double mb_coll_one_node(const struct mb_coll_model_in *m, double t) { return m->N == 1 ? t : NAN; }

/* Models other algorithms build on (hier: shm-copyin on the node,
 * Rabenseifner among the leaders; pool: shm-copyin's steps). */
double mb_coll_model_rabenseifner(const struct mb_coll_model_in *m);
double mb_coll_model_shm_copyin(const struct mb_coll_model_in *m);

#endif
