/* movebench collectives library: one registry of collective algorithms
 * (two-copy point-to-point baselines, shared-memory zero-copy and copy-in,
 * CMA, UCX RMA, hierarchical, and NCCL / CUDA IPC on device buffers)
 * behind one call signature, with MPI semantics for counts and in-place.
 * Depends on common/, MPI and UCX (and CUDA/NCCL in the CUDA build). */
#ifndef MB_COLL_H
#define MB_COLL_H

#include <stddef.h>
#include <stdio.h>
#include <mpi.h>

enum mb_coll_kind {
    MB_COLL_ALLREDUCE,
    MB_COLL_REDUCE_SCATTER, /* reduce_scatter_block */
    MB_COLL_ALLGATHER,
    MB_COLL_BCAST,
    MB_COLL_REDUCE,
    MB_COLL_NKIND
};
/* "allreduce", "reduce_scatter_block", "allgather", "bcast", "reduce": the
 * names of enum mb_coll_kind (result files, profiles, messages). */
extern const char *const mb_coll_kind_names[MB_COLL_NKIND];
enum mb_coll_dtype { MB_COLL_INT8, MB_COLL_INT32, MB_COLL_INT64, MB_COLL_FLOAT, MB_COLL_DOUBLE, MB_COLL_NDTYPE };
enum mb_coll_op { MB_COLL_SUM, MB_COLL_PROD, MB_COLL_MIN, MB_COLL_MAX, MB_COLL_NOP };
/* "int8", "int32", "int64", "float", "double"; "sum", "prod", "min", "max". */
extern const char *const mb_coll_dtype_names[MB_COLL_NDTYPE];
extern const char *const mb_coll_op_names[MB_COLL_NOP];

size_t mb_coll_dtype_size(enum mb_coll_dtype d);
MPI_Datatype mb_coll_mpi_dtype(enum mb_coll_dtype d);

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
 * new file in it (unique name, created exclusively; pool files there whose
 * owning process is dead are removed first); a name that does not exist:
 * that file, created exclusively; a character device (DAX, CXL memory):
 * used as is. An existing regular file is refused (unless it is a pool
 * file of a dead movebench process), and so is a symbolic link: links are
 * never followed. A created file is unlinked as soon as every rank of the
 * node has it open, so no exit leaves it behind. Collective over the
 * context's communicator. 0, or -1 when any rank cannot create or open
 * it: `pool` then reports itself unavailable with the reason
 * (mb_coll_pool_error), and the other algorithms are unaffected. */
int mb_coll_pool_open(struct mb_coll_ctx *ctx, const char *path);
/* Why the pool is not open ("--pool-path PATH: ..."), "" when it is. */
const char *mb_coll_pool_error(const struct mb_coll_ctx *ctx);
/* "PATH (tmpfs)" etc., "" when no pool is open. */
const char *mb_coll_pool_backing(const struct mb_coll_ctx *ctx);

/* ---- nonblocking ring (nb.c) ------------------------------------------
 * The ring's allgather and reduce_scatter_block as a request: started,
 * advanced by mb_coll_progress (MPI_Isend/Irecv + MPI_Test: this Open MPI
 * has no asynchronous progress, so data moves only inside progress calls,
 * from any one thread at a time under MPI_THREAD_MULTIPLE), finished by
 * mb_coll_req_wait. Results are bit-identical to the blocking `ring`.
 * Every rank starts its requests on a context in the same order; several
 * may be in flight at once, each with its own tag. The buffers belong to
 * the request until it is waited for. */

/* Pacing: consulted before each send with its bytes; 1 sends it now, 0
 * holds it until a later progress call asks again (a token bucket says 0
 * until it has the tokens). fn NULL: never held. */
typedef int (*mb_coll_pace_fn)(void *pace_ctx, size_t bytes);
struct mb_coll_pace {
    mb_coll_pace_fn fn;
    void *ctx;
};
struct mb_coll_req;
/* a->kind MB_COLL_ALLGATHER or MB_COLL_REDUCE_SCATTER (args as for run(),
 * sendbuf NULL in place); pace may be NULL. Local (no communication yet):
 * 0 and *req, or -1 with the reason in err. */
int mb_coll_start(struct mb_coll_ctx *ctx, const struct mb_coll_args *a, const struct mb_coll_pace *pace,
                  struct mb_coll_req **req, char *err, size_t errlen);
/* Advances req as far as it can without blocking: 1 complete, 0 not yet,
 * -1 an MPI call failed. */
int mb_coll_progress(struct mb_coll_req *req);
/* Progresses req to completion and frees it: MPI_SUCCESS or -1. (Named
 * apart from internal.h's flag wait, mb_coll_wait.) */
int mb_coll_req_wait(struct mb_coll_req *req);

struct mb_coll_model_in; /* one prediction's inputs (collectives/model.h) */

/* One algorithm (fio-style ops table): one file defines it, one row of
 * registry.c lists it. Only name..run are required; the rest is for
 * algorithms that keep state in a context or have a cost model. */
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
    /* Collective set-up on ctx (a probe, a communicator, a UCP worker), run
     * once, on every rank, the first time the algorithm is asked whether it
     * is usable (mb_coll_usable), before available(). It may set *state, the
     * algorithm's own opaque part of ctx. 0, or -1 with the reason in why,
     * the same on every rank; the algorithm is then unavailable with that
     * reason, and set-up must have undone itself (*state NULL or freeable). */
    int (*setup)(struct mb_coll_ctx *ctx, void **state, char *why, size_t len);
    /* Frees state (and what the set-up built) in mb_coll_ctx_free; called,
     * in registry order and before registered buffers are freed, for every
     * algorithm whose set-up succeeded or whose state is not NULL. */
    void (*teardown)(struct mb_coll_ctx *ctx, void *state);
    /* Registered buffers (mb_coll_alloc) once set-up succeeded, including
     * those allocated before: reg_map prepares [ptr, ptr+bytes) for the
     * algorithm (collective over ctx's communicator) and may attach
     * *reg_state; 0 or -1 (the buffer is then unusable to it). reg_unmap
     * undoes one in mb_coll_release; teardown undoes the rest. */
    int (*reg_map)(struct mb_coll_ctx *ctx, void *state, void *ptr, size_t bytes, void **reg_state);
    void (*reg_unmap)(struct mb_coll_ctx *ctx, void *state, void *reg_state);
    /* Predicted seconds of a call (mb_coll_model); NULL: not modelled. */
    double (*model)(const struct mb_coll_model_in *m);
};

size_t mb_coll_nalgos(void);
const struct mb_coll_algo *mb_coll_algo_at(size_t i);
const struct mb_coll_algo *mb_coll_find(const char *name);
/* 1 if algo implements kind and is available on ctx; else 0 and why. */
int mb_coll_usable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx,
                   enum mb_coll_kind kind, char *why, size_t len);

/* ---- cost model and auto-selection (model.c, profile.c, calibrate.c) ----
 * An alpha-beta-gamma model per algorithm and collective, counting the
 * steps and bytes of each algorithm as implemented here: alpha per message
 * or flag synchronisation, beta per byte moved point-to-point, gamma per
 * byte reduced, and a memory-copy term for the shared-memory algorithms.
 * Every per-byte cost depends on whether the node's working set W (all its
 * ranks' buffers) fits the cache: cost = f*cache + (1-f)*mem per byte,
 * f = min(1, cache_bytes / W). The parameters are measured on the machine
 * (mb_coll_calibrate) and kept in a profile file (profiles/README.md). */

struct mb_coll_rate {
    double cache, mem; /* seconds per byte, working set in / far out of cache */
};

struct mb_coll_profile {
    char host[128], date[32], command[512]; /* where, when and how it was measured */
    int ranks;                              /* ranks the calibration ran with */
    double cache_bytes;                     /* effective cache of a node (fitted) */
    double p2p_alpha;                       /* s per MPI_Sendrecv exchange of 8 B */
    struct mb_coll_rate p2p;                /* beta: per byte exchanged point-to-point */
    struct mb_coll_rate reduce;             /* gamma: per byte of dst op= src */
    struct mb_coll_rate copy;               /* per byte of memcpy (all node ranks at once) */
    double stream;                          /* per byte streamed out of a cached chunk (all ranks
                                               at once, out of cache); NaN: not measured */
    double flag;                            /* s per flag synchronisation of the node's ranks */
    double cma_alpha;                       /* s per process_vm_readv call; NaN: not measured */
    struct mb_coll_rate cma;                /* per byte read with process_vm_readv */
    /* the MPI library's own, fitted per collective: alpha + bytes * rate */
    double mpi_alpha[MB_COLL_NKIND];
    struct mb_coll_rate mpi[MB_COLL_NKIND];
};

/* Profile files: "key = value" lines, '#' comments (profiles/README.md).
 * Reading fails, with one line in err naming the file (and line), on a
 * missing file, a malformed line, a missing or non-numeric required value;
 * unknown keys are ignored. 0 or -1. */
int mb_coll_profile_read(const char *path, struct mb_coll_profile *prof, char *err, size_t errlen);
/* The same on text already in memory; name is used in messages. */
int mb_coll_profile_parse(const char *text, const char *name, struct mb_coll_profile *prof, char *err,
                          size_t errlen);
/* Writes path (through path.tmp and rename). 0 or -1 with err. */
int mb_coll_profile_write(const char *path, const struct mb_coll_profile *prof, char *err, size_t errlen);
/* "profiles/<hostname>.txt" into buf. */
void mb_coll_profile_default(char *buf, size_t len);

/* Measures every parameter on ctx's ranks (collective over ctx's
 * communicator; needs 2 or more ranks on one node; a few seconds).
 * Progress lines go to log on rank 0 when log is not NULL. 0, or -1 with
 * the reason in err on every rank (too few ranks, an allocation, or a
 * failed call such as process_vm_readv, named with the rank): a failed
 * measurement is never fitted. */
int mb_coll_calibrate(struct mb_coll_ctx *ctx, struct mb_coll_profile *prof, FILE *log, char *err, size_t errlen);

/* Where a call runs: ranks, ranks per node (the largest node), nodes. */
struct mb_coll_shape {
    int nranks, node_size, nnodes;
};
void mb_coll_model_shape(const struct mb_coll_ctx *ctx, struct mb_coll_shape *shape);
/* Predicted seconds of algorithm `algo` on call a (kind, count, dtype and
 * whether sendbuf is NULL, i.e. in place, are read); NaN when the model
 * does not know the algorithm or collective, or the profile lacks a
 * parameter it needs. */
double mb_coll_model(const struct mb_coll_profile *prof, const char *algo, const struct mb_coll_args *a,
                     const struct mb_coll_shape *shape);
/* 1 if the model has an entry for algo (some collectives may still be NaN). */
int mb_coll_model_knows(const char *algo);
/* The usable algorithm (mb_coll_usable) with the smallest finite
 * prediction for a; algorithms that want registered buffers only when
 * `registered`. Ties go to the earlier registry entry. Collective like
 * mb_coll_usable (every rank must call it); NULL when none is modelled.
 * *predicted gets its prediction. */
const struct mb_coll_algo *mb_coll_pick(const struct mb_coll_profile *prof, struct mb_coll_ctx *ctx,
                                        const struct mb_coll_args *a, int registered, double *predicted);

#endif
