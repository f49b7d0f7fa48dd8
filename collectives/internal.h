/* Internal to collectives/: the context, reduction kernels, flags. */
#ifndef MB_COLL_INTERNAL_H
#define MB_COLL_INTERNAL_H

#include "coll.h"
#include "../common/common.h"

#include <stdatomic.h>
#include <stdint.h>

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
};

struct mb_coll_reg { /* a registered buffer */
    struct mb_buf buf;
    struct mb_coll_reg *next;
};

struct mb_coll_ctx {
    MPI_Comm comm, node_comm, leader_comm; /* leader_comm: node rank 0s, else MPI_COMM_NULL */
    int rank, size, node_rank, node_size, nnodes;
    uint64_t seq;                          /* calls so far on this ctx (same on every rank) */
    struct mb_buf ctrl;                    /* flags: one struct mb_coll_flags per node rank */
    struct mb_coll_flags **peer_flags;     /* [node_size] */
    struct mb_buf small;                   /* per rank 2 slots of MB_COLL_SMALL bytes */
    void **peer_small;
    struct mb_buf scratch;                 /* copy-in area, grown collectively */
    void **peer_scratch;
    struct mb_coll_reg *regs;
    char pool_path[512], pool_err[600], pool_backing[700];
    int pool_fd, pool_created;             /* pool.c: the shared file, -1 when none */
    void *pool_base;                       /* node_size regions of pool_stride bytes */
    size_t pool_stride;
    int cma_state;                         /* cma.c: 0 not probed, 1 usable, -1 refused */
    char cma_why[300];
    int *node_pids;
    void *tmp;                             /* private temporary */
    size_t tmp_bytes;
};

#define MB_COLL_SMALL 16384 /* bytes: at or below, the one-flag small path */
#define MB_COLL_CHUNK 65536 /* bytes per pipelined chunk (fits L2) */

/* dst[i] = dst[i] op src[i] */
void mb_coll_reduce2(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *src, size_t n);
/* dst[i] = op over srcs[k][i], k < nsrc (dst may alias one source) */
void mb_coll_reduce_many(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *const *srcs,
                         int nsrc, size_t n);
MPI_Datatype mb_coll_mpi_dtype(enum mb_coll_dtype d);
MPI_Op mb_coll_mpi_op(enum mb_coll_op o);

/* A private temporary of at least bytes. */
void *mb_coll_tmp(struct mb_coll_ctx *ctx, size_t bytes);
/* Peer addresses of a registered buffer range [ptr, ptr+bytes): fills
 * peers[node_size] with the address of the same offset in each node rank's
 * segment; 0, or -1 if ptr is not registered. */
int mb_coll_lookup(struct mb_coll_ctx *ctx, const void *ptr, void **peers);
/* Grows the copy-in scratch to at least bytes per rank (collective over the node). */
int mb_coll_scratch(struct mb_coll_ctx *ctx, size_t bytes);

/* Waits until *f >= want, spinning then yielding. */
void mb_coll_wait(_Atomic uint64_t *f, uint64_t want);
/* Node-local flag barrier on the `arrive` or `done` flags. */
void mb_coll_wait_all(struct mb_coll_ctx *ctx, int which_done, uint64_t want);

extern const struct mb_coll_algo mb_coll_algo_mpi, mb_coll_algo_ring, mb_coll_algo_rd,
    mb_coll_algo_rabenseifner, mb_coll_algo_binomial, mb_coll_algo_scatter_allgather,
    mb_coll_algo_shm, mb_coll_algo_shm_copyin, mb_coll_algo_hier, mb_coll_algo_pool, mb_coll_algo_cma;
void mb_coll_pool_close(struct mb_coll_ctx *ctx);

/* model.c: the node's working set in bytes of a call with n bytes of count
 * on L ranks per node (calibrate.c fits with the same definition). */
double mb_coll_model_ws(enum mb_coll_kind kind, double n, int oop, int L);

#endif
