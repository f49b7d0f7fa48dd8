/* Shared-memory collectives inside one node: `shm` (zero-copy: every rank
 * loads its slice directly from each peer's registered buffer, then reads
 * the reduced slices; a large allreduce writes them into every peer's
 * output instead) and `shm-copyin` (unregistered buffers: one copy into
 * node-shared scratch first). Large messages are pipelined in cache-sized
 * chunks, synchronised by per-rank sequence counters in shared memory
 * (arrive / progress / done), never an MPI_Barrier. Messages up to
 * MB_COLL_SMALL bytes take a one-flag path through double-buffered slots.
 * These functions work on the node communicator of the context. */
#include "model.h"

#include <stdio.h>
#include <string.h>

static struct mb_coll_flags *me(struct mb_coll_ctx *c) { return c->peer_flags[c->node_rank]; }

static void arrive(struct mb_coll_ctx *c, uint64_t seq, const struct mb_coll_args *a)
{
    mb_coll_post(me(c), &me(c)->arrive, seq);
    if (a->kind != MB_COLL_BCAST)
        mb_coll_wait_all(c, 0, seq);
    else if (c->node_rank != a->root) /* a broadcast reads the root only */
        mb_coll_wait(c, c->peer_flags[a->root], &c->peer_flags[a->root]->arrive, seq);
}

static void finish(struct mb_coll_ctx *c, uint64_t seq)
{
    mb_coll_post(me(c), &me(c)->done, seq);
    mb_coll_wait_all(c, 1, seq);
}

/* Phase 1: this rank reduces its slice from in[q] into red[me];
 * phase 2 (out != NULL): it copies every slice s from red[s] into out,
 * chunk k of slice s as soon as rank s has published it. */
static void core_reduce(struct mb_coll_ctx *c, enum mb_coll_dtype d, enum mb_coll_op op, size_t n,
                        char *const *in, char *const *red, char *out, uint64_t seq)
{
    int p = c->node_size, r = c->node_rank;
    size_t es = mb_coll_dtype_size(d), ce = MB_COLL_CHUNK / es;
    const void *srcs[p];
    size_t lo = mb_coll_slice_bound(n, p, r, es), hi = mb_coll_slice_bound(n, p, r + 1, es);
    uint64_t k = 0;
    for (size_t off = lo; off < hi; off += ce, k++) {
        size_t len = hi - off < ce ? hi - off : ce;
        for (int q = 0; q < p; q++)
            srcs[q] = in[q] + off * es;
        mb_coll_reduce_many(d, op, red[r] + off * es, srcs, p, len);
        mb_coll_post(me(c), &me(c)->progress, seq << 32 | (k + 1));
    }
    if (!out)
        return;
    int stream = n * es >= MB_COLL_STREAM_MIN;
    for (int j = 0; j < p; j++) {
        int s = (r + j) % p;
        size_t slo = mb_coll_slice_bound(n, p, s, es), shi = mb_coll_slice_bound(n, p, s + 1, es);
        k = 0;
        for (size_t off = slo; off < shi; off += ce, k++) {
            size_t len = shi - off < ce ? shi - off : ce;
            if (s != r)
                mb_coll_wait(c, c->peer_flags[s], &c->peer_flags[s]->progress, seq << 32 | (k + 1));
            if (out + off * es == red[s] + off * es)
                continue;
            if (stream)
                mb_coll_copy_stream(out + off * es, red[s] + off * es, len * es);
            else
                memcpy(out + off * es, red[s] + off * es, len * es);
        }
    }
    if (stream)
        mb_coll_copy_fence();
}

/* Zero-copy allreduce from MB_COLL_STREAM_MIN: this rank reduces its slice
 * from in[q] into a cached chunk and streams it straight into every rank's
 * output (rv[q]) with non-temporal stores. Each rank then moves 2n bytes
 * (n read, n written, no read-for-ownership) instead of the pull path's
 * ~3n, and waits once, at the end, instead of on every peer chunk. Only
 * rank r reads or writes slice r anywhere, so in-place buffers are safe;
 * arrive() has made sure every peer is inside the call before its output
 * is written. */
static void core_reduce_push(struct mb_coll_ctx *c, enum mb_coll_dtype d, enum mb_coll_op op, size_t n,
                             char *const *in, char *const *rv)
{
    int p = c->node_size, r = c->node_rank;
    size_t es = mb_coll_dtype_size(d), ce = MB_COLL_CHUNK / es;
    const void *srcs[p];
    char *chunk = mb_coll_tmp(c, MB_COLL_CHUNK);
    size_t lo = mb_coll_slice_bound(n, p, r, es), hi = mb_coll_slice_bound(n, p, r + 1, es);
    for (size_t off = lo; off < hi; off += ce) {
        size_t len = hi - off < ce ? hi - off : ce;
        for (int q = 0; q < p; q++)
            srcs[q] = in[q] + off * es;
        mb_coll_reduce_many(d, op, chunk, srcs, p, len);
        for (int j = 0; j < p; j++)
            mb_coll_copy_stream(rv[(r + j) % p] + off * es, chunk, len * es);
    }
    mb_coll_copy_fence();
}

/* Bytes of this rank's input and where it is. */
static const char *input_of(struct mb_coll_ctx *c, const struct mb_coll_args *a, size_t *bytes)
{
    size_t es = mb_coll_dtype_size(a->dtype);
    const char *rb = a->recvbuf;
    switch (a->kind) {
    case MB_COLL_REDUCE_SCATTER: *bytes = a->count * (size_t)c->node_size * es; break;
    case MB_COLL_ALLGATHER:
        *bytes = a->count * es;
        if (!a->sendbuf)
            return rb + (size_t)c->node_rank * *bytes;
        break;
    case MB_COLL_BCAST: *bytes = c->node_rank == a->root ? a->count * es : 0; return rb;
    default: *bytes = a->count * es; break;
    }
    return a->sendbuf ? a->sendbuf : rb;
}

/* Up to MB_COLL_SMALL bytes: copy into my slot of this call's parity,
 * raise `arrive`, read the peers' slots. A slot is rewritten two calls
 * later, once every peer has arrived at the call in between, i.e. has
 * finished reading it. */
static int small_path(struct mb_coll_ctx *c, const struct mb_coll_args *a, char **slots)
{
    int p = c->node_size, r = c->node_rank;
    size_t es = mb_coll_dtype_size(a->dtype), bytes;
    const char *in = input_of(c, a, &bytes);
    mb_coll_spin(c, bytes * (size_t)p);
    uint64_t seq = ++c->seq;
    size_t slot = (seq & 1) * MB_COLL_SMALL;
    if (seq >= 2)
        mb_coll_wait_all(c, 0, seq - 1);
    if (bytes)
        memcpy((char *)slots[r] + slot, in, bytes);
    mb_coll_post(me(c), &me(c)->arrive, seq);
    char *out = a->recvbuf;
    const void *srcs[p];
    switch (a->kind) {
    case MB_COLL_ALLREDUCE: case MB_COLL_REDUCE:
        if (a->kind == MB_COLL_REDUCE && r != a->root)
            return 0;
        mb_coll_wait_all(c, 0, seq);
        for (int q = 0; q < p; q++)
            srcs[q] = (char *)slots[q] + slot;
        mb_coll_reduce_many(a->dtype, a->op, out, srcs, p, a->count);
        return 0;
    case MB_COLL_REDUCE_SCATTER:
        mb_coll_wait_all(c, 0, seq);
        for (int q = 0; q < p; q++)
            srcs[q] = (char *)slots[q] + slot + (size_t)r * a->count * es;
        mb_coll_reduce_many(a->dtype, a->op, out, srcs, p, a->count);
        return 0;
    case MB_COLL_ALLGATHER:
        mb_coll_wait_all(c, 0, seq);
        for (int q = 0; q < p; q++)
            if (q != r || a->sendbuf)
                memcpy(out + (size_t)q * bytes, (char *)slots[q] + slot, bytes);
        return 0;
    case MB_COLL_BCAST:
        if (r != a->root) {
            mb_coll_wait(c, c->peer_flags[a->root], &c->peer_flags[a->root]->arrive, seq);
            memcpy(out, (char *)slots[a->root] + slot, a->count * es);
        }
        return 0;
    default: return -1;
    }
}

static int fits_small(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count * es;
    if (a->kind == MB_COLL_REDUCE_SCATTER)
        n *= (size_t)c->node_size;
    return n <= MB_COLL_SMALL;
}

/* The large path on per-peer input pointers in[] (peer views). */
static int large_path(struct mb_coll_ctx *c, const struct mb_coll_args *a, char **in, char **user_recv,
                      int copyin, uint64_t seq)
{
    int p = c->node_size, r = c->node_rank;
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    char *out = a->recvbuf;
    char *red[p];
    switch (a->kind) {
    case MB_COLL_ALLREDUCE:
        if (!copyin && n * es >= MB_COLL_STREAM_MIN) {
            core_reduce_push(c, a->dtype, a->op, n, in, user_recv);
            break;
        }
        for (int q = 0; q < p; q++)
            red[q] = copyin ? in[q] : user_recv[q];
        core_reduce(c, a->dtype, a->op, n, in, red, out, seq);
        break;
    case MB_COLL_REDUCE:
        for (int q = 0; q < p; q++)
            red[q] = copyin ? in[q] : user_recv[a->root];
        core_reduce(c, a->dtype, a->op, n, in, red, copyin && r == a->root ? out : NULL, seq);
        break;
    case MB_COLL_REDUCE_SCATTER: {
        /* in place, ranks other than 0 would overwrite block 0 of their input
         * while rank 0 reads it: reduce into a temporary, copy after `done` */
        int late = !copyin && !a->sendbuf && r != 0;
        char *dst = late ? mb_coll_tmp(c, n * es + 1) : out;
        const void *srcs[p];
        size_t ce = MB_COLL_CHUNK / es;
        for (size_t off = 0; off < n; off += ce) {
            size_t len = n - off < ce ? n - off : ce;
            for (int q = 0; q < p; q++)
                srcs[q] = in[q] + ((size_t)r * n + off) * es;
            mb_coll_reduce_many(a->dtype, a->op, dst + off * es, srcs, p, len);
        }
        finish(c, seq);
        if (late && n)
            memcpy(out, dst, n * es);
        return 0;
    }
    case MB_COLL_ALLGATHER:
        for (int q = 0; q < p; q++)
            if (q != r || a->sendbuf || copyin)
                if (out + (size_t)q * n * es != in[q])
                    memcpy(out + (size_t)q * n * es, in[q], n * es);
        break;
    case MB_COLL_BCAST:
        /* only the root's buffer is read: it waits for every reader, the
         * readers wait for nobody (one hand-off each way, not two barriers) */
        if (r != a->root && n)
            memcpy(out, in[a->root], n * es);
        mb_coll_post(me(c), &me(c)->done, seq);
        if (r == a->root)
            mb_coll_wait_all(c, 1, seq);
        return 0;
    default: return -1;
    }
    finish(c, seq);
    return 0;
}

static int shm_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    if (fits_small(c, a))
        return small_path(c, a, (char **)c->peer_small);
    int p = c->node_size;
    char *in[p], *rv[p];
    size_t es = mb_coll_dtype_size(a->dtype);
    const void *src = a->sendbuf && a->kind != MB_COLL_BCAST ? a->sendbuf : a->recvbuf;
    if (mb_coll_lookup(c, a->recvbuf, (void **)rv) != 0 || mb_coll_lookup(c, src, (void **)in) != 0) {
        mb_warn("collectives: shm: buffers not from mb_coll_alloc (use shm-copyin)");
        return -1;
    }
    if (a->kind == MB_COLL_ALLGATHER && !a->sendbuf)
        for (int q = 0; q < p; q++)
            in[q] += (size_t)q * a->count * es;
    uint64_t seq = ++c->seq;
    mb_coll_spin(c, a->count * es * (size_t)(a->kind == MB_COLL_BCAST ? 1 : p));
    arrive(c, seq, a);
    return large_path(c, a, in, rv, 0, seq);
}

/* Copy-in through per-rank slots: small[q] (2 x MB_COLL_SMALL bytes) and
 * data[q] (data_bytes) are rank q's regions as this rank sees them. */
int mb_coll_shm_with(struct mb_coll_ctx *c, const struct mb_coll_args *a, char **small, char **data,
                     size_t data_bytes)
{
    (void)data_bytes;
    if (fits_small(c, a))
        return small_path(c, a, small);
    size_t bytes;
    const char *src = input_of(c, a, &bytes);
    if (bytes)
        memcpy(data[c->node_rank], src, bytes);
    uint64_t seq = ++c->seq;
    mb_coll_spin(c, bytes * (size_t)(a->kind == MB_COLL_BCAST ? 1 : c->node_size));
    arrive(c, seq, a);
    return large_path(c, a, data, NULL, 1, seq);
}

static int copyin_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), need = a->count * es;
    if (a->kind == MB_COLL_REDUCE_SCATTER)
        need *= (size_t)c->node_size;
    if (!fits_small(c, a) && mb_coll_scratch(c, need) != 0)
        return -1;
    return mb_coll_shm_with(c, a, (char **)c->peer_small, (char **)c->peer_scratch, need);
}

static int one_node(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nnodes == 1)
        return 1;
    snprintf(why, len, "the communicator spans %d nodes; shared memory reaches one (use hier)", c->nnodes);
    return 0;
}

/* ---- the models (shm, shm-copyin; pool and hier reuse copy-in's) ----- */

static int small(const struct mb_coll_model_in *m)
{
    double bytes = m->kind == MB_COLL_REDUCE_SCATTER ? m->L * m->n : m->n;
    return bytes <= MB_COLL_SMALL;
}

/* The one-flag path through the small slots (shm, shm-copyin and pool):
 * every step touches the node's inputs and outputs (m->ws) and the L slots
 * of n (reduce_scatter: L n each). */
static double shm_small(const struct mb_coll_model_in *m)
{
    double n = m->n;
    int L = m->L;
    double w = m->ws + L * (m->kind == MB_COLL_REDUCE_SCATTER ? L * n : n);
    switch (m->kind) {
    case MB_COLL_ALLREDUCE: case MB_COLL_REDUCE: return mb_coll_Cw(m, n, w) + m->fl + mb_coll_RKw(m, n, L, w);
    case MB_COLL_REDUCE_SCATTER: return mb_coll_Cw(m, L * n, w) + m->fl + mb_coll_RKw(m, n, L, w);
    case MB_COLL_ALLGATHER: return mb_coll_Cw(m, n, w) + m->fl + L * mb_coll_Cw(m, n, w);
    case MB_COLL_BCAST: return 2 * mb_coll_Cw(m, n, w) + m->fl;
    default: return NAN;
    }
}

/* The large path: an entry and an exit synchronisation; copyin: the input
 * goes into node-shared scratch first and every slice is copied out. Each
 * step is priced at its own node working set (model.h, mb_coll_Cw):
 * the copy-in L inputs and L scratch copies (2 L n), the reduction the L
 * inputs it reads in slices and the reduced slices it writes ((L + 1) n),
 * the copy-out the reduced vector and the L outputs ((L + 1) n); for
 * reduce_scatter and allgather the L-times larger side counts L times. */
static double shm_large(const struct mb_coll_model_in *m, int copyin)
{
    double n = m->n;
    int L = m->L;
    double sync = 2 * m->fl, in = 2.0 * L * n, red = (L + 1.0) * n;
    switch (m->kind) {
    case MB_COLL_ALLREDUCE:
        if (!copyin && n >= MB_COLL_STREAM_MIN) /* every reduced slice streamed into every output */
            return sync + mb_coll_RKw(m, n / L, L, red) + n * (isnan(m->p->stream) ? mb_coll_Cw(m, 1, red) : m->p->stream);
        return sync + (copyin ? mb_coll_Cw(m, n, in) : 0) + mb_coll_RKw(m, n / L, L, red) +
               mb_coll_Cw(m, copyin ? n : n * (L - 1) / L, red);
    case MB_COLL_REDUCE: /* zero-copy reduces into the root's buffer; copy-in: the root copies out */
        return sync + (copyin ? mb_coll_Cw(m, n, in) + mb_coll_Cw(m, n, 2 * n) : 0) + mb_coll_RKw(m, n / L, L, red);
    case MB_COLL_REDUCE_SCATTER: /* inputs of L n, outputs of n */
        return sync + (copyin ? mb_coll_Cw(m, L * n, L * in) : !m->oop ? mb_coll_Cw(m, n, in) : 0) +
               mb_coll_RKw(m, n, L, L * red);
    case MB_COLL_ALLGATHER: /* inputs of n, outputs of L n */
        return sync + (copyin ? mb_coll_Cw(m, n, in) : 0) + (L - 1 + (copyin || m->oop)) * mb_coll_Cw(m, n, L * red);
    case MB_COLL_BCAST: /* the root's input into scratch, then every rank's copy of it */
        return sync + (copyin ? mb_coll_Cw(m, n, 2 * n) : 0) + mb_coll_Cw(m, n, red);
    default: return NAN;
    }
}

static double m_shm(const struct mb_coll_model_in *m)
{
    return mb_coll_one_node(m, small(m) ? shm_small(m) : shm_large(m, 0));
}
double mb_coll_model_shm_copyin(const struct mb_coll_model_in *m)
{
    return mb_coll_one_node(m, small(m) ? shm_small(m) : shm_large(m, 1));
}


const struct mb_coll_algo mb_coll_algo_shm = {
    .name = "shm", .kinds = MB_COLL_ALL_KINDS, .wants_registered = 1, .model = m_shm,
    .available = one_node, .run = shm_run,
    .description = "zero-copy over node-shared registered buffers, chunk-pipelined, flag-synchronised",
};
const struct mb_coll_algo mb_coll_algo_shm_copyin = {
    .name = "shm-copyin", .kinds = MB_COLL_ALL_KINDS, .available = one_node, .run = copyin_run,
    .model = mb_coll_model_shm_copyin,
    .description = "shm for unregistered buffers: one copy into node-shared scratch, then as shm",
};

/* Node-level pieces for the hierarchical algorithm. */
int mb_coll_shm_node(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    return copyin_run(c, a);
}
