/* movebench collectives library: one registry of collective algorithms
 * (two-copy point-to-point baselines, shared-memory zero-copy and copy-in,
 * CMA, UCX RMA, hierarchical, and NCCL / CUDA IPC on device buffers)
 * behind one call signature, with MPI semantics for counts and in-place.
 * Depends on common/, MPI and UCX (and CUDA/NCCL in the CUDA build). */
#ifndef MB_COLL_H
#define MB_COLL_H

#include <stddef.h>
#include <mpi.h>

enum mb_coll_kind {
    MB_COLL_ALLREDUCE,
    MB_COLL_REDUCE_SCATTER, /* reduce_scatter_block */
    MB_COLL_ALLGATHER,
    MB_COLL_BCAST,
    MB_COLL_REDUCE,
    MB_COLL_NKIND
};
enum mb_coll_dtype { MB_COLL_INT8, MB_COLL_INT32, MB_COLL_INT64, MB_COLL_FLOAT, MB_COLL_DOUBLE, MB_COLL_NDTYPE };
enum mb_coll_op { MB_COLL_SUM, MB_COLL_PROD, MB_COLL_MIN, MB_COLL_MAX, MB_COLL_NOP };

size_t mb_coll_dtype_size(enum mb_coll_dtype d);

/* One call. count follows MPI: allreduce/bcast/reduce the whole buffer,
 * reduce_scatter_block and allgather the per-rank block. sendbuf NULL
 * means in place (MPI_IN_PLACE: reduce_scatter_block's input is recvbuf
 * and its block lands at recvbuf's start; allgather's own block is
 * already at recvbuf + rank*count; on non-roots of reduce the input is
 * recvbuf; bcast ignores sendbuf). */
struct mb_coll_args {
    enum mb_coll_kind kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    enum mb_coll_dtype dtype;
    enum mb_coll_op op;
    int root;
};

/* A communicator prepared for the algorithms: node split, control flags
 * in node-shared memory, scratch, registered buffers. Create one per
 * communicator (several may be live at once); collective over comm.
 * ranks_per_node > 0 overrides the node split (consecutive ranks form a
 * "node"), to test multi-node algorithms on one machine. */
struct mb_coll_ctx;
struct mb_coll_ctx *mb_coll_ctx_create(MPI_Comm comm, int ranks_per_node, char *err, size_t errlen);
void mb_coll_ctx_free(struct mb_coll_ctx *ctx);
int mb_coll_ctx_nnodes(const struct mb_coll_ctx *ctx);

/* Registered buffers: node-shared memory from an MPI-3 shared window,
 * reachable by every rank of the node. Collective over the node, and over
 * the whole communicator once `ucx` is in use (the buffer is mapped for
 * RMA and its rkey exchanged then). NULL on failure with err set. */
void *mb_coll_alloc(struct mb_coll_ctx *ctx, size_t bytes, char *err, size_t errlen);
void mb_coll_release(struct mb_coll_ctx *ctx, void *ptr);

/* The memory pool of the `pool` algorithm: a shared file mapped by every
 * rank of the node. path NULL: a new file under /dev/shm; a directory: a
 * new file in it; otherwise that file or device (DAX, CXL memory) is used
 * as is. Collective over the context's communicator. 0, or -1 when any rank
 * cannot create or open it: `pool` then reports itself unavailable with
 * the reason (and the other algorithms are unaffected). */
int mb_coll_pool_open(struct mb_coll_ctx *ctx, const char *path);
/* "PATH (tmpfs)" etc., "" when no pool is open. */
const char *mb_coll_pool_backing(const struct mb_coll_ctx *ctx);

/* One algorithm (fio-style ops table), registered once in the registry. */
struct mb_coll_algo {
    const char *name;
    const char *description;
    unsigned kinds;          /* bit mask over enum mb_coll_kind it implements */
    int wants_registered;    /* needs buffers from mb_coll_alloc (zero-copy) */
    int device;              /* run() takes CUDA device buffers (cudaMalloc bases), not host memory */
    /* 1 if usable on ctx, else 0 with the reason in why. Collective-safe:
     * the answer is the same on every rank. */
    int (*available)(struct mb_coll_ctx *ctx, char *why, size_t len);
    /* MPI_SUCCESS or an MPI error code / -1. */
    int (*run)(struct mb_coll_ctx *ctx, const struct mb_coll_args *a);
};

size_t mb_coll_nalgos(void);
const struct mb_coll_algo *mb_coll_algo_at(size_t i);
const struct mb_coll_algo *mb_coll_find(const char *name);
/* 1 if algo implements kind and is available on ctx; else 0 and why. */
int mb_coll_usable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx,
                   enum mb_coll_kind kind, char *why, size_t len);

#endif
