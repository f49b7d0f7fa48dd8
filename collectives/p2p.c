/* Two-copy baselines on MPI point-to-point: ring, recursive doubling with
 * the non-power-of-two fold, Rabenseifner (recursive-halving reduce-scatter
 * + recursive-doubling allgather), binomial trees, scatter-allgather
 * broadcast. Every count (0, 1, fewer elements than ranks) and rank count
 * works: blocks are [b*n/p, (b+1)*n/p). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define TAG 7301


static size_t blo(size_t n, int p, int b) { return (size_t)((unsigned __int128)n * (unsigned)b / (unsigned)p); }
static int mod(int a, int p) { return ((a % p) + p) % p; }

static int sendrecv(struct mb_coll_ctx *c, const void *sb, size_t sbytes, int to, void *rb,
                    size_t rbytes, int from)
{
    return MPI_Sendrecv(sb, (int)sbytes, MPI_BYTE, to, TAG, rb, (int)rbytes, MPI_BYTE, from, TAG,
                        c->comm, MPI_STATUS_IGNORE);
}

/* out holds this rank's input; after it, out holds the reduction (ring). */
static int ring_allreduce_inplace(struct mb_coll_ctx *c, const struct mb_coll_args *a, char *out)
{
    int p = c->size, r = c->rank, next = mod(r + 1, p), prev = mod(r - 1, p);
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    char *tmp = mb_coll_tmp(c, (n / (size_t)p + 1) * es);
    for (int s = 0; s < p - 1; s++) {
        int sb = mod(r - s, p), rb = mod(r - s - 1, p);
        size_t so = blo(n, p, sb), sn = blo(n, p, sb + 1) - so, ro = blo(n, p, rb), rn = blo(n, p, rb + 1) - ro;
        if (sendrecv(c, out + so * es, sn * es, next, tmp, rn * es, prev) != MPI_SUCCESS)
            return -1;
        mb_coll_reduce2(a->dtype, a->op, out + ro * es, tmp, rn);
    }
    for (int s = 0; s < p - 1; s++) {
        int sb = mod(r + 1 - s, p), rb = mod(r - s, p);
        size_t so = blo(n, p, sb), sn = blo(n, p, sb + 1) - so, ro = blo(n, p, rb), rn = blo(n, p, rb + 1) - ro;
        if (sendrecv(c, out + so * es, sn * es, next, out + ro * es, rn * es, prev) != MPI_SUCCESS)
            return -1;
    }
    return MPI_SUCCESS;
}

static int ring_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    int p = c->size, r = c->rank, next = mod(r + 1, p), prev = mod(r - 1, p);
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    char *out = a->recvbuf;
    switch (a->kind) {
    case MB_COLL_ALLREDUCE:
        if (a->sendbuf && n)
            memcpy(out, a->sendbuf, n * es);
        return ring_allreduce_inplace(c, a, out);
    case MB_COLL_REDUCE_SCATTER: {
        size_t blk = n * es;
        char *work = mb_coll_tmp(c, (size_t)(p + 1) * blk + 1), *rtmp = work + (size_t)p * blk;
        if (blk)
            memcpy(work, a->sendbuf ? a->sendbuf : a->recvbuf, (size_t)p * blk);
        for (int s = 0; s < p - 1; s++) {
            int sb = mod(r - s - 1, p), rb = mod(r - s - 2, p);
            if (sendrecv(c, work + (size_t)sb * blk, blk, next, rtmp, blk, prev) != MPI_SUCCESS)
                return -1;
            mb_coll_reduce2(a->dtype, a->op, work + (size_t)rb * blk, rtmp, n);
        }
        if (blk)
            memcpy(out, work + (size_t)r * blk, blk);
        return MPI_SUCCESS;
    }
    case MB_COLL_ALLGATHER: {
        size_t blk = n * es;
        if (a->sendbuf && blk)
            memcpy(out + (size_t)r * blk, a->sendbuf, blk);
        for (int s = 0; s < p - 1; s++) {
            int sb = mod(r - s, p), rb = mod(r - s - 1, p);
            if (sendrecv(c, out + (size_t)sb * blk, blk, next, out + (size_t)rb * blk, blk, prev) != MPI_SUCCESS)
                return -1;
        }
        return MPI_SUCCESS;
    }
    default: return MPI_ERR_OTHER;
    }
}

/* Non-power-of-two fold: the first 2*rem ranks pair up, evens hand their
 * data to odds and sit out. Returns the rank among p2 = 2^floor(log2 p)
 * survivors, or -1. */
static int fold(struct mb_coll_ctx *c, const struct mb_coll_args *a, char *out, int *p2out)
{
    int p = c->size, r = c->rank, p2 = 1;
    while (p2 * 2 <= p)
        p2 *= 2;
    int rem = p - p2;
    *p2out = p2;
    size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            MPI_Send(out, (int)bytes, MPI_BYTE, r + 1, TAG, c->comm);
            return -1;
        }
        char *tmp = mb_coll_tmp(c, bytes + 1);
        MPI_Recv(tmp, (int)bytes, MPI_BYTE, r - 1, TAG, c->comm, MPI_STATUS_IGNORE);
        mb_coll_reduce2(a->dtype, a->op, out, tmp, a->count);
        return r / 2;
    }
    return r - rem;
}

static int real_rank(int nr, int rem) { return nr < rem ? nr * 2 + 1 : nr + rem; }

static void unfold(struct mb_coll_ctx *c, const struct mb_coll_args *a, char *out, int p2)
{
    int r = c->rank, rem = c->size - p2;
    size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
    if (r < 2 * rem) {
        if (r % 2)
            MPI_Send(out, (int)bytes, MPI_BYTE, r - 1, TAG, c->comm);
        else
            MPI_Recv(out, (int)bytes, MPI_BYTE, r + 1, TAG, c->comm, MPI_STATUS_IGNORE);
    }
}

static int rd_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), bytes = a->count * es;
    char *out = a->recvbuf;
    if (a->sendbuf && bytes)
        memcpy(out, a->sendbuf, bytes);
    int p2, nr = fold(c, a, out, &p2), rem = c->size - p2;
    if (nr >= 0) {
        char *tmp = mb_coll_tmp(c, bytes + 1);
        for (int mask = 1; mask < p2; mask <<= 1) {
            int peer = real_rank(nr ^ mask, rem);
            if (sendrecv(c, out, bytes, peer, tmp, bytes, peer) != MPI_SUCCESS)
                return -1;
            mb_coll_reduce2(a->dtype, a->op, out, tmp, a->count);
        }
    }
    unfold(c, a, out, p2);
    return MPI_SUCCESS;
}

static int rab_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    char *out = a->recvbuf;
    if (a->sendbuf && n)
        memcpy(out, a->sendbuf, n * es);
    int p2, nr = fold(c, a, out, &p2), rem = c->size - p2;
    if (nr >= 0) {
        char *tmp = mb_coll_tmp(c, (n / 2 + 1) * es);
        size_t lo = 0, hi = n, stk_lo[32], stk_hi[32];
        int depth = 0;
        for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
            int peer = real_rank(nr ^ mask, rem);
            size_t mid = lo + (hi - lo) / 2;
            size_t klo = (nr & mask) ? mid : lo, khi = (nr & mask) ? hi : mid;
            size_t slo = (nr & mask) ? lo : mid, shi = (nr & mask) ? mid : hi;
            stk_lo[depth] = lo, stk_hi[depth] = hi, depth++;
            if (sendrecv(c, out + slo * es, (shi - slo) * es, peer, tmp, (khi - klo) * es, peer) != MPI_SUCCESS)
                return -1;
            mb_coll_reduce2(a->dtype, a->op, out + klo * es, tmp, khi - klo);
            lo = klo, hi = khi;
        }
        for (int mask = 1; mask < p2; mask <<= 1) {
            int peer = real_rank(nr ^ mask, rem);
            depth--;
            size_t plo = stk_lo[depth], phi = stk_hi[depth];
            /* the other half of [plo, phi) is the peer's */
            size_t olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo;
            if (sendrecv(c, out + lo * es, (hi - lo) * es, peer, out + olo * es, (ohi - olo) * es, peer) !=
                MPI_SUCCESS)
                return -1;
            lo = plo, hi = phi;
        }
    }
    unfold(c, a, out, p2);
    return MPI_SUCCESS;
}

static int binomial_bcast(struct mb_coll_ctx *c, char *buf, size_t bytes, int root)
{
    int p = c->size, vr = mod(c->rank - root, p), mask = 1;
    for (; mask < p; mask <<= 1)
        if (vr & mask) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, mod(vr - mask + root, p), TAG, c->comm, MPI_STATUS_IGNORE);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            MPI_Send(buf, (int)bytes, MPI_BYTE, mod(vr + mask + root, p), TAG, c->comm);
    return MPI_SUCCESS;
}

static int binomial_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), bytes = a->count * es;
    if (a->kind == MB_COLL_BCAST)
        return binomial_bcast(c, a->recvbuf, bytes, a->root);
    if (a->kind != MB_COLL_REDUCE)
        return MPI_ERR_OTHER;
    int p = c->size, vr = mod(c->rank - a->root, p);
    char *acc = mb_coll_tmp(c, 2 * bytes + 1), *rtmp = acc + bytes;
    if (bytes)
        memcpy(acc, a->sendbuf ? a->sendbuf : a->recvbuf, bytes);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            MPI_Send(acc, (int)bytes, MPI_BYTE, mod((vr & ~mask) + a->root, p), TAG, c->comm);
            return MPI_SUCCESS;
        }
        if ((vr | mask) < p) {
            MPI_Recv(rtmp, (int)bytes, MPI_BYTE, mod((vr | mask) + a->root, p), TAG, c->comm,
                     MPI_STATUS_IGNORE);
            mb_coll_reduce2(a->dtype, a->op, acc, rtmp, a->count);
        }
    }
    if (bytes)
        memcpy(a->recvbuf, acc, bytes);
    return MPI_SUCCESS;
}

/* van de Geijn: the root scatters blocks, then a ring allgather. */
static int sag_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    int p = c->size, vr = mod(c->rank - a->root, p), next = mod(c->rank + 1, p), prev = mod(c->rank - 1, p);
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    char *buf = a->recvbuf;
    if (vr == 0) {
        MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)p);
        for (int q = 1; q < p; q++) {
            size_t o = blo(n, p, q), m = blo(n, p, q + 1) - o;
            MPI_Isend(buf + o * es, (int)(m * es), MPI_BYTE, mod(q + a->root, p), TAG, c->comm, &rq[q - 1]);
        }
        MPI_Waitall(p - 1, rq, MPI_STATUSES_IGNORE);
        free(rq);
    } else {
        size_t o = blo(n, p, vr), m = blo(n, p, vr + 1) - o;
        MPI_Recv(buf + o * es, (int)(m * es), MPI_BYTE, a->root, TAG, c->comm, MPI_STATUS_IGNORE);
    }
    for (int s = 0; s < p - 1; s++) {
        int sb = mod(vr - s, p), rb = mod(vr - s - 1, p);
        size_t so = blo(n, p, sb), sn = blo(n, p, sb + 1) - so, ro = blo(n, p, rb), rn = blo(n, p, rb + 1) - ro;
        if (sendrecv(c, buf + so * es, sn * es, next, buf + ro * es, rn * es, prev) != MPI_SUCCESS)
            return -1;
    }
    return MPI_SUCCESS;
}

/* ---- the models: messages, bytes exchanged and reduced per step ------- */

/* Across nodes (ranks placed in blocks of L): a ring step is as slow as
 * its boundary hop, one rank of each node on each link (mb_coll_Xany); a
 * halving/doubling step between ranks at least L apart has all L ranks of
 * a node on its link at once (mb_coll_XN with share L). */
static double m_ring(const struct mb_coll_model_in *m)
{
    double n = m->n, P = m->P;
    switch (m->kind) {
    case MB_COLL_ALLREDUCE: /* copy in, P-1 reduce-scatter steps, P-1 allgather steps */
        return (m->oop ? mb_coll_C(m, n) : 0) + 2 * (P - 1) * mb_coll_Xany(m, n / P) + (P - 1) * mb_coll_R(m, n / P);
    case MB_COLL_REDUCE_SCATTER: /* the whole input into a work area, P-1 steps, the block out */
        return mb_coll_C(m, P * n) + (P - 1) * (mb_coll_Xany(m, n) + mb_coll_R(m, n)) + mb_coll_C(m, n);
    case MB_COLL_ALLGATHER: return (m->oop ? mb_coll_C(m, n) : 0) + (P - 1) * mb_coll_Xany(m, n);
    default: return NAN;
    }
}

/* The non-power-of-two fold and unfold: a send + reduce in, a send out. */
static double fold_cost(const struct mb_coll_model_in *m)
{
    int rem = m->P - (1 << mb_coll_ilog2(m->P));
    return rem ? 2 * mb_coll_Xany(m, m->n) + mb_coll_R(m, m->n) : 0;
}

static double m_rd(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    double t = (m->oop ? mb_coll_C(m, m->n) : 0) + fold_cost(m);
    for (int mask = 1; mask < (1 << mb_coll_ilog2(m->P)); mask <<= 1)
        t += (mb_coll_crosses(m, mask) ? mb_coll_XN(m, m->n, m->L) : mb_coll_X(m, m->n)) + mb_coll_R(m, m->n);
    return t;
}

double mb_coll_model_rabenseifner(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    int p2 = 1 << mb_coll_ilog2(m->P);
    double t = (m->oop ? mb_coll_C(m, m->n) : 0) + fold_cost(m);
    /* the step between ranks mask apart moves n*mask/p2 bytes each way, in
     * the halving (with a reduction) and again in the doubling */
    for (int mask = 1; mask < p2; mask <<= 1) {
        double bytes = m->n * mask / p2;
        double x = mb_coll_crosses(m, mask) ? mb_coll_XN(m, bytes, m->L) : mb_coll_X(m, bytes);
        t += 2 * x + mb_coll_R(m, bytes);
    }
    return t;
}

static double m_binomial(const struct mb_coll_model_in *m)
{
    int depth = mb_coll_clog2(m->P);
    switch (m->kind) {
    case MB_COLL_BCAST: return depth * mb_coll_Xany(m, m->n);
    case MB_COLL_REDUCE: /* into an accumulator, a step per level, out at the root */
        return 2 * mb_coll_C(m, m->n) + depth * (mb_coll_Xany(m, m->n) + mb_coll_R(m, m->n));
    default: return NAN;
    }
}

static double m_scatter_allgather(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_BCAST)
        return NAN;
    double P = m->P, blk = m->n / P;
    if (m->N > 1) /* the root's blocks leave its node over one link */
        return (P - 1) * mb_coll_Xany(m, blk) + (P - 1) * mb_coll_Xany(m, blk);
    return (P - 1) * mb_coll_msg(m->p, blk) + (P - 1) * blk * m->b + (P - 1) * mb_coll_X(m, blk);
}

/* The point-to-point entries differ only in these: always available, no
 * state, no set-up. P2P(id, name, collectives, run, model, description)
 * defines mb_coll_algo_<id>. */
#define P2P(id, name_, kinds_, run_, model_, description_)                                       \
    const struct mb_coll_algo mb_coll_algo_##id = {.name = name_, .description = description_,     \
                                                   .kinds = kinds_, .available = mb_coll_always, \
                                                   .run = run_, .model = model_}
#define K(kind) (1u << MB_COLL_##kind)
P2P(ring, "ring", K(ALLREDUCE) | K(REDUCE_SCATTER) | K(ALLGATHER), ring_run, m_ring,
    "ring reduce-scatter + ring allgather (point-to-point, two copies)");
P2P(rd, "rd", K(ALLREDUCE), rd_run, m_rd, "recursive doubling with the non-power-of-two fold");
P2P(rabenseifner, "rabenseifner", K(ALLREDUCE), rab_run, mb_coll_model_rabenseifner,
    "recursive-halving reduce-scatter + recursive-doubling allgather, with the fold");
P2P(binomial, "binomial", K(BCAST) | K(REDUCE), binomial_run, m_binomial, "binomial-tree broadcast and reduce");
P2P(scatter_allgather, "scatter-allgather", K(BCAST), sag_run, m_scatter_allgather,
    "broadcast as a scatter from the root then a ring allgather (van de Geijn)");
