/* Internal to collectives/: the context, reduction kernels, flags. */
#ifndef MB_COLL_INTERNAL_H
#define MB_COLL_INTERNAL_H

#include "coll.h"
#include "../common/common.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Fault injection for the tests: $MB_FAULT_INJECT names one fault (the
 * harness's convention; the library reads it itself, never the harness). */
static inline int mb_coll_fault(const char *name)
{
    const char *f = getenv("MB_FAULT_INJECT");
    return f && strcmp(f, name) == 0;
}

/* One cache line per flag, per rank, in node-shared memory. */
struct mb_coll_flags {
    _Atomic uint64_t arrive;   /* sequence number of the last call entered */
    char pad0[56];
    _Atomic uint64_t progress; /* (seq << 32) | chunks of my slice reduced */
    char pad1[56];
    _Atomic uint64_t done;     /* sequence number of the last call finished */
    char pad2[56];
    uint64_t addr_in, addr_out; /* cma.c: this call's buffers, published before `arrive` */
    char pad3[48];
    /* An event count over this rank's three flags: bumped after every
     * post, a futex for peers that stopped spinning on them. */
    _Atomic uint32_t wake, sleepers;
    char pad4[56];
};

struct mb_coll_reg { /* a registered buffer */
    struct mb_buf buf;
    void **algo_state;         /* [mb_coll_nalgos()]: what each algorithm's reg_map attached, or NULL */
    struct mb_coll_reg *next;
};

/* One algorithm's own part of a context (registry order): its opaque
 * state, and the outcome of its set-up (struct mb_coll_algo.setup). */
struct mb_coll_slot {
    void *state;
    int setup;                             /* 0 not run yet, 1 succeeded, -1 failed (why) */
    char why[300];
};

struct mb_coll_ctx {
    MPI_Comm comm, node_comm, leader_comm; /* leader_comm: node rank 0s, else MPI_COMM_NULL */
    int rank, size, node_rank, node_size, nnodes;
    int one_host;                          /* every rank on one machine (whatever --ranks-per-node says) */
    uint64_t seq;                          /* calls so far on this ctx (same on every rank) */
    uint64_t spin_ns;                      /* this call's spin before a flag wait sleeps (mb_coll_spin) */
    struct mb_buf ctrl;                    /* flags: one struct mb_coll_flags per node rank */
    struct mb_coll_flags **peer_flags;     /* [node_size] */
    struct mb_buf small;                   /* per rank 2 slots of MB_COLL_SMALL bytes */
    void **peer_small;
    struct mb_buf scratch;                 /* copy-in area, grown collectively */
    void **peer_scratch;
    struct mb_coll_reg *regs;
    struct mb_coll_slot *slots;            /* [mb_coll_nalgos()]: each algorithm's own, registry order */
    void *tmp;                             /* private temporary */
    size_t tmp_bytes;
    uint64_t nb_started;                   /* nonblocking requests started (nb.c: each one's tag) */
};

/* Where an algorithm's own state lives in ctx: its slot, by its position
 * in the registry (the algorithm must be registered). */
static inline struct mb_coll_slot *mb_coll_slot(const struct mb_coll_ctx *c, const struct mb_coll_algo *algo)
{
    return &c->slots[mb_coll_index(algo)];
}
/* What algo's reg_map attached to a registered buffer (NULL: nothing). */
static inline void *mb_coll_reg_state(const struct mb_coll_reg *r, const struct mb_coll_algo *algo)
{
    return r->algo_state[mb_coll_index(algo)];
}
/* Calls algo's reg_map on every registered buffer it has not mapped yet
 * (collective like mb_coll_alloc); the registry does this after a set-up
 * succeeds, mb_coll_alloc for each new buffer. */
void mb_coll_reg_map_all(struct mb_coll_ctx *c, const struct mb_coll_algo *algo);
/* available() of the algorithms that run wherever MPI does. */
int mb_coll_always(struct mb_coll_ctx *c, char *why, size_t len);

#define MB_COLL_SMALL 16384 /* bytes: at or below, the one-flag small path */
#define MB_COLL_CHUNK 65536 /* bytes per pipelined chunk (fits L2) */

/* dst[i] = dst[i] op src[i] */
/* Start of rank b's slice of n elements split over p ranks (n when b >= p),
 * rounded down to 64 bytes so slices never share a cache line; shm, cma,
 * cuda-ipc and ucx split their work with it. */
static inline size_t mb_coll_slice_bound(size_t n, int p, int b, size_t es)
{
    if (b >= p)
        return n;
    size_t a = 64 / es, x = (size_t)((unsigned __int128)n * (unsigned)b / (unsigned)p);
    return x / a * a;
}

/* memcpy with non-temporal stores (x86 SSE2; memcpy elsewhere), then
 * mb_coll_copy_fence() before the data is published or the call returns. */
void mb_coll_copy_stream(void *dst, const void *src, size_t bytes);
void mb_coll_copy_fence(void);
/* Bytes per rank from which shm's reduced slices are written with
 * streaming stores (pushed into every output for a zero-copy allreduce,
 * copied out otherwise): the node's buffers then exceed the last-level
 * cache, so cached stores would only add a read per line and evict the
 * peers' slices. */
#define MB_COLL_STREAM_MIN (4u << 20)
/* nb_bcast.c: a nonblocking broadcast's state inside nb.c's request
 * (mb_coll_start_algo); progress 1 done, 0 not yet, -1 failed; free
 * cancels and completes what is still posted. */
struct mb_coll_nbb;
struct mb_coll_nbb *mb_coll_nbb_start(struct mb_coll_ctx *ctx, const struct mb_coll_algo *algo,
                                      const struct mb_coll_args *a, int tag, char *err, size_t errlen);
int mb_coll_nbb_progress(struct mb_coll_nbb *b);
void mb_coll_nbb_free(struct mb_coll_nbb *b);

void mb_coll_reduce2(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *src, size_t n);
/* dst[i] = op over srcs[k][i], k < nsrc (dst may alias one source) */
void mb_coll_reduce_many(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *const *srcs,
                         int nsrc, size_t n);
MPI_Op mb_coll_mpi_op(enum mb_coll_op o);

/* A private temporary of at least bytes. */
void *mb_coll_tmp(struct mb_coll_ctx *ctx, size_t bytes);
/* Peer addresses of a registered buffer range [ptr, ptr+bytes): fills
 * peers[node_size] with the address of the same offset in each node rank's
 * segment; 0, or -1 if ptr is not registered. */
int mb_coll_lookup(struct mb_coll_ctx *ctx, const void *ptr, void **peers);
/* Grows the copy-in scratch to at least bytes per rank (collective over the node). */
int mb_coll_scratch(struct mb_coll_ctx *ctx, size_t bytes);

/* Raises flag f (arrive, progress or done of owner, this rank's own) to v
 * and wakes the peers sleeping on it. */
void mb_coll_post(struct mb_coll_flags *owner, _Atomic uint64_t *f, uint64_t v);
/* Waits until owner's flag f >= want: spins for ctx->spin_ns, then sleeps
 * on the owner's futex, so a waiter does not burn (or, with sched_yield,
 * hand away for a whole time slice) the CPU that a descheduled peer needs. */
void mb_coll_wait(struct mb_coll_ctx *ctx, struct mb_coll_flags *owner, _Atomic uint64_t *f, uint64_t want);
/* Sets the spin of this call's waits: long enough for a running peer to
 * move `bytes` (so an expected wait never pays a wake-up), short next to
 * the milliseconds a descheduled peer costs. */
void mb_coll_spin(struct mb_coll_ctx *ctx, size_t bytes);
/* Node-local flag barrier on the `arrive` or `done` flags. */
void mb_coll_wait_all(struct mb_coll_ctx *ctx, int which_done, uint64_t want);

/* The registered algorithms (algos.def), for their own files and for the
 * algorithms that build on one another. */
#define MB_COLL_ALGO(x) extern const struct mb_coll_algo mb_coll_algo_##x;
#include "algos.def"
#undef MB_COLL_ALGO
/* ucx.c, for the calibration: one repetition of UCX's own costs on every
 * rank of c at once (ucx's set-up done: mb_coll_usable). `gets` 8 B gets
 * from the next rank's copy of the registered buffer `reg` (mb_coll_alloc,
 * mapped as the algorithm's buffers are), each completed before the next
 * (a request's set-up and completion), then one flag round: every rank
 * puts its ARRIVE flag to every peer and waits for theirs, as ucx's
 * allreduce enters (the round also keeps every rank progressing until the
 * peers' gets from it are served). 0, or -1 on a failed request or a reg
 * that ucx has not mapped. */
int mb_coll_ucx_calibrate_op(struct mb_coll_ctx *c, const void *reg, int gets);
/* The calibrations' timing loop (calibrate.c, calibrate_net.c): one
 * warm-up, then up to reps calls of once(arg) on every rank of comm, each
 * after before(arg) (untimed; NULL: none) and a barrier, timed as the
 * slowest rank's; after 5, it stops once budget_s are spent (every rank
 * sees the same times, so all stop together). 0 with the median in *median;
 * -1 when once failed (non-zero) on some rank, -2 when this rank had no
 * memory for the times (every rank returns non-zero alike, *median NaN). */
int mb_coll_time_median(MPI_Comm comm, int reps, double budget_s, int (*once)(void *), void (*before)(void *),
                        void *arg, double *median);
/* 1 if ok on every rank of the context; else 0, and reason (len bytes)
 * becomes the lowest failing rank's on every rank. Collective. */
int mb_coll_agree(struct mb_coll_ctx *ctx, int ok, char *reason, size_t len);
/* model.c: the node's working set in bytes of a call with n bytes of count
 * on L ranks per node (calibrate.c fits with the same definition). */
double mb_coll_model_ws(enum mb_coll_kind kind, double n, int oop, int L);

#endif
