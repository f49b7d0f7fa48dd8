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
    /* The inter-node link (N > 1): s per message, s per byte over one
     * link. Ranks on several machines: the profile's net terms (NaN when
     * not calibrated, so every prediction that crosses a link is NaN, "not
     * modelled"); a --ranks-per-node split on one machine: the
     * point-to-point a, b (its "link" is the same shared memory). */
    double na, nb;
    int one_host;
};

/* The share of a working set's bytes served from the node's effective
 * cache S: all of them while ws <= S, none beyond. Not S/ws: a collective
 * (and the calibration's sweeps) stream through their buffers in order, and
 * a cyclic sweep over more than an LRU-like cache evicts every line before
 * its reuse (measured: docs/models.md, "Collectives model: the cache
 * term"). */
static inline double mb_coll_cache_fraction(double cache, double ws) { return cache > 0 && ws <= cache ? 1 : 0; }

/* A per-byte cost for working set ws: f*cache + (1-f)*mem, f = mb_coll_cache_fraction. */
static inline double mb_coll_blend(const struct mb_coll_profile *p, struct mb_coll_rate r, double ws)
{
    double f = mb_coll_cache_fraction(p->cache_bytes, ws);
    return f * r.cache + (1 - f) * r.mem;
}

/* The node working sets of the shm tables (struct mb_coll_profile.shm_copy,
 * shm_reduce): 256 KiB, 1 MiB, 4 MiB, 16 MiB, 64 MiB. */
static inline double mb_coll_ws_point(int i) { return (double)(1u << (18 + 2 * i)); }

/* A shm table's per-byte cost at node working set ws: linear in log(ws)
 * between the measured points, the end points' values beyond them. */
static inline double mb_coll_ws_rate(const double *tab, double ws)
{
    if (!(ws > mb_coll_ws_point(0)))
        return tab[0];
    for (int i = 1; i < MB_COLL_NWS; i++)
        if (ws <= mb_coll_ws_point(i)) {
            double t = log2(ws / mb_coll_ws_point(i - 1)) / 2; /* the points are x4 apart */
            return tab[i - 1] + t * (tab[i] - tab[i - 1]);
        }
    return tab[MB_COLL_NWS - 1];
}

static inline int mb_coll_ilog2(int x) /* floor */
{
    int l = 0;
    while ((1 << (l + 1)) <= x)
        l++;
    return l;
}
static inline int mb_coll_clog2(int x) { return x <= 1 ? 0 : mb_coll_ilog2(x - 1) + 1; }

/* The per-message overhead of a point-to-point exchange of `bytes` (the
 * library's set-up, protocol and handshake, measured by --calibrate's
 * MPI_Sendrecv at 8 B, 1 KiB and 8 KiB less their bytes at the in-cache
 * rate): linear in bytes between the measured sizes, the 8 B value below,
 * the 8 KiB value beyond (the exchange fit of beta takes it off its larger
 * sizes, so nothing is counted twice). */
static inline double mb_coll_msg(const struct mb_coll_profile *p, double bytes)
{
    if (bytes <= 8)
        return p->p2p_alpha;
    if (bytes <= 1024)
        return p->p2p_alpha + (p->p2p_msg1k - p->p2p_alpha) * (bytes - 8) / (1024 - 8);
    if (bytes <= 8192)
        return p->p2p_msg1k + (p->p2p_msg8k - p->p2p_msg1k) * (bytes - 1024) / (8192 - 1024);
    return p->p2p_msg8k;
}

/* one point-to-point exchange, reducing bytes, copying bytes */
static inline double mb_coll_X(const struct mb_coll_model_in *m, double bytes)
{
    return mb_coll_msg(m->p, bytes) + bytes * m->b;
}
static inline double mb_coll_R(const struct mb_coll_model_in *m, double bytes) { return bytes * m->g; }
static inline double mb_coll_C(const struct mb_coll_model_in *m, double bytes) { return bytes * m->c; }
/* The shared-memory family (shm, shm-copyin, pool, hier's node levels): a
 * copy or a reduction of `bytes` by each node rank in a step that touches
 * ws bytes on the node (its buffers x the ranks that touch them, counted
 * from the algorithm's structure), priced at the shm tables' rate for ws:
 * sources a peer wrote, as the algorithms read them. */
static inline double mb_coll_Cw(const struct mb_coll_model_in *m, double bytes, double ws)
{
    return bytes * mb_coll_ws_rate(m->p->shm_copy, ws);
}
static inline double mb_coll_Rw(const struct mb_coll_model_in *m, double bytes, double ws)
{
    return bytes * mb_coll_ws_rate(m->p->shm_reduce, ws);
}
/* mb_coll_reduce_many over k sources at working set ws: k-1 passes, a copy for one */
static inline double mb_coll_RKw(const struct mb_coll_model_in *m, double bytes, int k, double ws)
{
    return k <= 1 ? mb_coll_Cw(m, bytes, ws) : (k - 1) * mb_coll_Rw(m, bytes, ws);
}
/* mb_coll_reduce_many over k sources of bytes each: k-1 passes, a copy for one */
static inline double mb_coll_RK(const struct mb_coll_model_in *m, double bytes, int k)
{
    return k <= 1 ? mb_coll_C(m, bytes) : (k - 1) * mb_coll_R(m, bytes);
}
/* One exchange of `bytes` over an inter-node link that `share` of the
 * node's ranks cross at once (they share its rate); a split on one host
 * has no shared link, only the point-to-point cost. */
static inline double mb_coll_XN(const struct mb_coll_model_in *m, double bytes, int share)
{
    return m->one_host ? mb_coll_X(m, bytes) : m->na + bytes * m->nb * share;
}
/* One step of a non-blocking exchange (MPI_Irecv + MPI_Isend + MPI_Waitall)
 * of `bytes` that crosses the link alone: the request round's measured
 * set-up instead of the blocking exchange's (p2p_nb_alpha - p2p_alpha, of
 * either sign) on top of the exchange. */
static inline double mb_coll_XNB(const struct mb_coll_model_in *m, double bytes)
{
    return m->p->p2p_nb_alpha - m->p->p2p_alpha + (m->N > 1 ? mb_coll_XN(m, bytes, 1) : mb_coll_X(m, bytes));
}
/* The slower of two costs; NaN when either is (fmax would hide a missing term). */
static inline double mb_coll_slower(double x, double y) { return isnan(x) || isnan(y) ? NAN : x > y ? x : y; }
/* An exchange that may cross a link with one rank of the node on it (a
 * ring's boundary hop, a tree's edge): the slower of the node's and the
 * link's when the ranks span nodes. */
static inline double mb_coll_Xany(const struct mb_coll_model_in *m, double bytes)
{
    return m->N > 1 ? mb_coll_slower(mb_coll_X(m, bytes), mb_coll_XN(m, bytes, 1)) : mb_coll_X(m, bytes);
}
/* Whether a recursive halving/doubling step between ranks `mask` apart
 * crosses nodes (ranks placed on nodes in blocks of L). */
static inline int mb_coll_crosses(const struct mb_coll_model_in *m, int mask) { return m->N > 1 && mask >= m->L; }
/* The shared-memory algorithms reach one node. */
static inline double mb_coll_one_node(const struct mb_coll_model_in *m, double t) { return m->N == 1 ? t : NAN; }

/* Models other algorithms build on (hier: shm-copyin on the node,
 * Rabenseifner among the leaders; pool: shm-copyin's steps). */
double mb_coll_model_rabenseifner(const struct mb_coll_model_in *m);
double mb_coll_model_shm_copyin(const struct mb_coll_model_in *m);

#endif
