/* movebench collectives library: one registry of collective algorithms
 * (two-copy point-to-point baselines, shared-memory zero-copy and copy-in,
 * CMA, UCX RMA, hierarchical, and NCCL / CUDA IPC on device buffers)
 * behind one call signature, with MPI semantics for counts and in-place.
 * Depends on common/, MPI and UCX (and CUDA/NCCL in the CUDA build). */
#ifndef MB_COLL_H
#define MB_COLL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "../common/common.h"

enum mb_coll_kind {
    MB_COLL_ALLREDUCE,
    MB_COLL_REDUCE_SCATTER, /* reduce_scatter_block */
    MB_COLL_ALLGATHER,
    MB_COLL_BCAST,
    MB_COLL_REDUCE,
    MB_COLL_NKIND
};
#define MB_COLL_ALL_KINDS ((1u << MB_COLL_NKIND) - 1) /* every enum mb_coll_kind, as a bit mask */
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
/* The ranks of ctx on this rank's machine (all of them on a --ranks-per-node
 * split of one machine: its emulated nodes share the cores). */
int mb_coll_ctx_host_ranks(const struct mb_coll_ctx *ctx);

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
struct mb_coll_algo;
/* a->kind MB_COLL_ALLGATHER or MB_COLL_REDUCE_SCATTER (args as for run(),
 * sendbuf NULL in place); pace may be NULL. Local (no communication yet):
 * 0 and *req, or -1 with the reason in err. */
int mb_coll_start(struct mb_coll_ctx *ctx, const struct mb_coll_args *a, const struct mb_coll_pace *pace,
                  struct mb_coll_req **req, char *err, size_t errlen);
/* mb_coll_start with an algorithm of the registry: for allgather and
 * reduce_scatter_block the ring's (algo NULL or ring, as mb_coll_start);
 * for a broadcast (a->recvbuf, a->count, a->dtype, a->root; pace NULL)
 * mpi (MPI_Ibcast), binomial or scatter-allgather, the same tree and
 * blocks as their blocking forms, each step an MPI_Irecv/MPI_Isend pair
 * advanced by mb_coll_progress. 0 and *req, or -1 with the reason (an
 * algorithm without a nonblocking form among them). */
int mb_coll_start_algo(struct mb_coll_ctx *ctx, const struct mb_coll_algo *algo, const struct mb_coll_args *a,
                       const struct mb_coll_pace *pace, struct mb_coll_req **req, char *err, size_t errlen);
/* 1 when mb_coll_start_algo takes algo for kind (algo NULL: the ring). */
int mb_coll_nb_supports(const struct mb_coll_algo *algo, enum mb_coll_kind kind);
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
/* The registry index of algo (an entry of the registry). */
size_t mb_coll_index(const struct mb_coll_algo *algo);
/* 1 if algo implements kind and is available on ctx; else 0 and why. */
int mb_coll_usable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx,
                   enum mb_coll_kind kind, char *why, size_t len);
/* Whether a run runs algo on kind: 1 yes; 0 the algorithm does not
 * implement it (nothing to say); -1 unavailable, the reason in why (a
 * device algorithm in a host run (device_run 0), or mb_coll_usable's). */
int mb_coll_runnable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx, enum mb_coll_kind kind,
                     int device_run, char *why, size_t len);
/* The fitting element count: 0, or -1 with why completing "SIZE...": the
 * elements of dtype in bytes exceed MPI's int count, or (lib_algos: the
 * library's algorithms run, which pass byte counts) the bytes do. */
int mb_coll_count_fits(size_t bytes, enum mb_coll_dtype dtype, int lib_algos, char *why, size_t len);

/* ---- cost model and auto-selection (model.c, profile.c, calibrate.c) ----
 * An alpha-beta-gamma model per algorithm and collective, counting the
 * steps and bytes of each algorithm as implemented here: alpha per message
 * or flag synchronisation, beta per byte moved point-to-point, gamma per
 * byte reduced, and a memory-copy term for the shared-memory algorithms.
 * Every per-byte cost depends on whether the node's working set W (all its
 * ranks' buffers) fits the cache: cost = f*cache + (1-f)*mem per byte,
 * f = min(1, cache_bytes / W). The parameters are measured on the machine
 * (mb_coll_calibrate) and kept in a profile file (profiles/README.md). */

#define MB_COLL_NWS 5 /* the shm working-set table's sizes */

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
    double net_alpha;                       /* s per 8 B exchange between two node leaders over an
                                               inter-node link; NaN: not calibrated (--calibrate-net) */
    double net_beta;                        /* s per byte over one inter-node link, each direction at
                                               once (1 / the link's rate); NaN: not calibrated */
    /* Per-message overheads (measured, required): an exchange of b bytes
     * costs o(b) + b * beta, o through (8 B, p2p_alpha), (1 KiB, p2p_msg1k),
     * (8 KiB, p2p_msg8k), linear in b between them, o(8 KiB) beyond
     * (mb_coll_msg in model.h). */
    double p2p_msg1k;                       /* MPI_Sendrecv of 1 KiB less 1 KiB * p2p.cache */
    double p2p_msg8k;                       /* MPI_Sendrecv of 8 KiB less 8 KiB * p2p.cache */
    double p2p_nb_alpha;                    /* s per MPI_Irecv + MPI_Isend + MPI_Waitall round of 8 B
                                               between rank pairs (hier's leader ring steps) */
    /* The shared-memory family's copies and reductions (measured, required):
     * s per byte of a memcpy / a dst op= src whose source is node-shared
     * memory a peer rank of the node wrote just before, every node rank at
     * once, at the node working sets mb_coll_ws_point(i) (256 KiB to 64 MiB,
     * x4; model.h interpolates between them in log(ws)). */
    double shm_copy[MB_COLL_NWS];
    double shm_reduce[MB_COLL_NWS];
    /* UCX's own costs (measured, required; NaN where ucx's set-up failed):
     * s per flag round (every rank puts a flag to every peer and waits for
     * theirs) and s per get request of 8 B (set-up and completion). */
    double ucx_flag;
    double ucx_get_alpha;
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
/* The audit of a profile: one line per parameter, "# term KEY = VALUE UNIT
 * <- MICROBENCHMARK", in the profile file's order (--calibrate prints it,
 * so a reader can check each number of the profile against its source). */
void mb_coll_profile_audit(FILE *out, const struct mb_coll_profile *prof);

/* Measures every parameter on ctx's ranks (collective over ctx's
 * communicator; needs 2 or more ranks on one node; a few seconds).
 * Progress lines go to log on rank 0 when log is not NULL. 0, or -1 with
 * the reason in err on every rank (too few ranks, an allocation, or a
 * failed call such as process_vm_readv, named with the rank): a failed
 * measurement is never fitted. */
int mb_coll_calibrate(struct mb_coll_ctx *ctx, struct mb_coll_profile *prof, FILE *log, char *err, size_t errlen);

/* The profile of a run (profile_load.c), collective over comm, before any
 * work. Its path: `named` (--profile), or the default profile when NULL.
 * calibrate (--calibrate): nothing is read; it checks there are 2 or more
 * ranks and that rank 0 can create path.tmp. Otherwise rank 0 reads the
 * profile and every rank gets the same parameters. 1 loaded; 0 nothing
 * loaded (calibrating, or the default profile is missing and not
 * `needed`); -1 refused, one line naming the flag in err on rank 0
 * ("--profile: profile F:3: ...", "--profile F: cannot write: ..."). */
int mb_coll_profile_load(MPI_Comm comm, const char *named, int needed, int calibrate, char *path,
                         size_t pathlen, struct mb_coll_profile *prof, char *err, size_t errlen);
/* --calibrate: measures (mb_coll_calibrate) and rank 0 writes path, its
 * command line from argv; progress and "# wrote PATH in T s" to log. 0, or
 * on every rank one of these, one line naming the flag in err on rank 0: */
enum { MB_COLL_CALIBRATE_NODES = 1, /* the ranks span several nodes */
       MB_COLL_CALIBRATE_FAILED,    /* a measurement failed: nothing written */
       MB_COLL_CALIBRATE_WRITE };   /* the profile could not be written */
int mb_coll_calibrate_write(struct mb_coll_ctx *ctx, const char *path, int argc, char *const *argv, FILE *log,
                            char *err, size_t errlen);
/* --calibrate-net: the inter-node link's latency and per-byte cost
 * (calibrate_net.c: point-to-point exchanges between two node leaders
 * across the link) into prof->net_alpha, net_beta; needs ranks on 2 or
 * more machines (a --ranks-per-node split of one is refused). Collective;
 * 0, or -1 with the reason in err on every rank. */
int mb_coll_calibrate_net(struct mb_coll_ctx *ctx, struct mb_coll_profile *prof, FILE *log, char *err,
                          size_t errlen);
/* --calibrate-net's driver: measures into the loaded profile `prof` (its
 * node-level terms kept) and rank 0 rewrites path with it. 0, or
 * MB_COLL_CALIBRATE_NODES (not across machines), _FAILED or _WRITE, one
 * line naming the flag in err on rank 0. */
int mb_coll_calibrate_net_write(struct mb_coll_ctx *ctx, const char *path, struct mb_coll_profile *prof,
                                FILE *log, char *err, size_t errlen);
/* A program's --calibrate (net = 0) or --calibrate-net (net = 1) end to
 * end: mb_coll_calibrate_write or mb_coll_calibrate_net_write into path
 * (prof: the loaded profile, for net), its one error line warned on rank
 * 0. 0 or the driver's MB_COLL_CALIBRATE_* code (_FAILED: exit 1, the
 * others are usage errors, exit 2). */
int mb_coll_calibrate_run(struct mb_coll_ctx *ctx, int net, const char *path, struct mb_coll_profile *prof,
                          int argc, char *const *argv, FILE *log);

/* Memory bandwidth (environment.c): every rank of comm copies `bytes`
 * (clamped to 4 KiB .. 64 MiB) at once, three times; the best of all
 * ranks' bytes per second, in GB/s, also said on log (rank 0, not NULL).
 * Collective. */
double mb_coll_memcpy_gbps(MPI_Comm comm, size_t bytes, FILE *log);
/* What stands for hardware this machine lacks, for a result file: fake
 * nodes (ranks_per_node > 0) and, when pool_used, the pool's backing (a
 * file standing for CXL memory). Collective over ctx's communicator. The
 * length written to buf; 0 when nothing is emulated. */
size_t mb_coll_describe_emulation(struct mb_coll_ctx *ctx, int ranks_per_node, int pool_used, char *buf,
                                  size_t len);

/* Where a call runs: ranks, ranks per node (the largest node), nodes. */
struct mb_coll_shape {
    int nranks, node_size, nnodes;
    int one_host; /* every rank on one machine (a --ranks-per-node split): no link between the "nodes" */
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


/* ---- validation data (data.c) -----------------------------------------
 * Inputs that every dtype and op hold exactly (small integers; sums kept
 * within the dtype's exact range, products +-2), varying by rank, element,
 * iteration and seed, generated incrementally so checking 64 MiB every
 * iteration stays cheap; and the expected outputs to check against. */
struct mb_coll_data {
    int reducing;        /* inputs for a reduction by op; else values to gather or broadcast */
    enum mb_coll_op op;
    int nranks;
    uint64_t seed;
    int64_t sum_mod;     /* range of the sum pattern, so sums of nranks values stay exact */
};
void mb_coll_data_init(struct mb_coll_data *d, int reducing, enum mb_coll_op op, enum mb_coll_dtype dtype,
                       int nranks, uint64_t seed);
/* Rank r's input elements [first, first + n) at iteration iter. */
void mb_coll_data_row(const struct mb_coll_data *d, int r, uint64_t first, size_t n, long long iter,
                      int64_t *out);
/* The reduction over all ranks of elements [first, first + n); tmp holds n. */
void mb_coll_data_reduced(const struct mb_coll_data *d, uint64_t first, size_t n, long long iter, int64_t *acc,
                          int64_t *tmp);
/* Rank r's elements [first, first + n) written into buf as dtype. */
void mb_coll_data_fill(const struct mb_coll_data *d, enum mb_coll_dtype dtype, int r, uint64_t first, size_t n,
                       long long iter, void *buf);
/* What a call's output holds, element i of n (blk: the per-rank block): */
enum mb_coll_layout {
    MB_COLL_OUT_NONE,          /* no data (barrier) */
    MB_COLL_OUT_REDUCED,       /* the reduction of element i (allreduce) */
    MB_COLL_OUT_REDUCED_ROOT,  /* the same at the root only (reduce) */
    MB_COLL_OUT_REDUCED_BLOCK, /* the reduction of element rank*blk + i (reduce_scatter_block) */
    MB_COLL_OUT_GATHERED,      /* rank i/blk's element i%blk (allgather) */
    MB_COLL_OUT_EXCHANGED,     /* rank i/blk's element rank*blk + i%blk (alltoall) */
    MB_COLL_OUT_ROOT,          /* the root's element i (bcast) */
};
/* Checks the n elements of buf (dtype) of rank `rank` at iteration iter.
 * 0, or 1 with "first wrong element at index I: got G, expected E" in
 * msg. NaN and Inf never equal an expected value. */
int mb_coll_data_verify(const struct mb_coll_data *d, enum mb_coll_layout layout, enum mb_coll_dtype dtype,
                        const void *buf, size_t n, size_t blk, int rank, int root, long long iter, char *msg,
                        size_t mlen);
void mb_coll_store_row(enum mb_coll_dtype d, void *buf, const int64_t *v, size_t n);
/* Index of the first element of buf[0..n) that differs from want, or n. */
size_t mb_coll_compare_row(enum mb_coll_dtype d, const void *buf, const int64_t *want, size_t n);
double mb_coll_load(enum mb_coll_dtype d, const void *buf, size_t i);
/* A test fault in element i: fault "nan" or "inf" makes a float or double
 * element NaN or +Inf; otherwise (and for integers) +1. */
void mb_coll_store_fault(enum mb_coll_dtype d, void *buf, size_t i, const char *fault);
/* Which call of a timed block of `calls` the fault corrupts: a position
 * drawn from the seed and the case (its collective, dtype, algorithm, op,
 * in-place and count, as integers), 0 .. calls-1. */
long long mb_coll_fault_call(uint64_t seed, size_t count, int coll, int dtype, int algo, int op, int inplace,
                             long long calls);


/* ---- the model against measurements (report.c) -------------------------
 * One measured case of a run: cases with the same key differ only in the
 * algorithm. algo is the registry name or "auto"; pick is what auto ran. */
struct mb_coll_obs {
    const char *name, *algo, *pick;
    char key[192];
    double measured_s, predicted_s;
};
/* Per registry algorithm with a finite prediction and a positive
 * measurement: the median |predicted - measured| / measured over its cases
 * (n of them). Returns how many algorithms filled out[] (room for
 * mb_coll_nalgos()). */
struct mb_coll_model_error {
    const char *algo;
    double median;
    size_t n;
};
size_t mb_coll_model_errors(const struct mb_coll_obs *obs, size_t nobs, struct mb_coll_model_error *out);
/* auto against the measured-fastest algorithm of the same case. */
struct mb_coll_auto_report {
    size_t cases, compared, hits; /* auto cases; those whose pick ran beside them; picks that were fastest */
    double hit_rate, slowdown_median, slowdown_geomean, slowdown_max; /* pick's own case / fastest */
    double run_slowdown_median;   /* auto's own run / fastest: the same choice measured again */
    char *picks;                  /* "case=pick;..." (malloc'd; free it) */
};
/* Fills rep; prints the comparison table and its summary to out (NULL:
 * silent). 0, or -1 out of memory. */
int mb_coll_auto_report(const struct mb_coll_obs *obs, size_t nobs, FILE *out, struct mb_coll_auto_report *rep);
/* Both reports at once, printed to out (NULL: silent): model errors
 * ("# model: median |predicted - measured| / measured per algorithm
 * (cases): A E% (N) ...") then auto's. Their numbers, as the run-level
 * metrics a result file records, go to m[0..return) (room for
 * mb_coll_nalgos() + 9); strings point into obs or rep (free rep->picks
 * after use). */
struct mb_coll_metric {
    char name[64];
    enum { MB_COLL_METRIC_DBL, MB_COLL_METRIC_INT, MB_COLL_METRIC_STR } type;
    double dbl;
    long long i;
    const char *str;
    char text[512]; /* str's storage where the library owns it */
};
size_t mb_coll_report(const struct mb_coll_obs *obs, size_t nobs, FILE *out, struct mb_coll_auto_report *rep,
                      struct mb_coll_metric *m);
/* auto's picks, one line per group ("# auto picks for GROUP: SIZE:ALGO ..."):
 * call for each auto case in order with *last NULL at first (it tracks the
 * open line), then once with group NULL to end the last line. */
void mb_coll_print_pick(FILE *out, const char **last, const char *group, const char *size, const char *pick);


/* ---- a case's buffers (bufset.c) ---------------------------------------
 * nsets iterations' send and receive buffers back to back, each set
 * 64-byte (small) or page (large, by the receive size) aligned, so a batch
 * of back-to-back calls keeps its outputs apart until each is checked:
 * host memory (pinned, with a device mirror of the same size, when device),
 * or node-shared buffers from mb_coll_alloc when registered (the device
 * mirrors then hold one set). */
struct mb_coll_bufs {
    struct mb_coll_ctx *ctx;
    char *send0, *recv0;                     /* the first set (NULL when its size is 0 and unregistered) */
    size_t nsets, sstride, rstride;
    struct mb_buf hsend, hrecv, dsend, drecv; /* host (or pinned) and device buffers */
    int registered, device;
};
/* 0, or -1 with "allocating N bytes: ...", "allocating device buffers:
 * ..." or "registering buffers: ..." in err (mb_coll_bufs_free then frees
 * what was made). Registered: collective like mb_coll_alloc. */
int mb_coll_bufs_alloc(struct mb_coll_bufs *b, struct mb_coll_ctx *ctx, size_t send_bytes, size_t recv_bytes,
                       size_t nsets, int registered, int device, char *err, size_t errlen);
/* Iteration iter's buffers: set iter % nsets. */
void mb_coll_bufs_set(const struct mb_coll_bufs *b, long long iter, void **send, void **recv);
void mb_coll_bufs_free(struct mb_coll_bufs *b);


/* ---- one validated case (vcase.c) --------------------------------------
 * A benchmark case's buffers (mb_coll_bufs), inputs, expected outputs and
 * test fault, for a collective described by its output layout; count is
 * the elements of the largest buffer (nccl-tests' size semantics). */
struct mb_coll_vcase {
    struct mb_coll_data data;
    struct mb_coll_bufs bufs;
    enum mb_coll_layout layout;
    enum mb_coll_dtype dtype;
    size_t count, blk, send_n, recv_n; /* elements: the whole, per rank, this rank's send and receive */
    int rank, root, inplace;
    void *send, *recv;                 /* the current iteration's set (mb_coll_vcase_select) */
    int fault_rank;                    /* rank whose output a corrupt/nan/inf fault corrupts, -1 for none */
    long long fault_iter;              /* the iteration it corrupts; -1 until chosen */
};
/* The call of a case sized the nccl-tests way (count: elements of the
 * largest buffer) with MPI's counts; send is not passed in place or to bcast. */
struct mb_coll_args mb_coll_case_args(enum mb_coll_kind kind, size_t count, int nranks, int inplace,
                                      enum mb_coll_dtype dtype, enum mb_coll_op op, int root, const void *send,
                                      void *recv);
/* The forms of a collective a run measures: each dtype in the mask; each
 * op in the mask for a reduction, else the lowest one only; out of place
 * (inplace 0), in place (1) or both (2), bcast in one form (in place only
 * when inplace is 1). out has room for MB_COLL_NDTYPE * MB_COLL_NOP * 2. */
struct mb_coll_form {
    enum mb_coll_dtype dtype;
    enum mb_coll_op op;
    int inplace;
};
size_t mb_coll_forms(int reduction, int bcast, unsigned dtypes, unsigned ops, int inplace, struct mb_coll_form *out);
/* The largest of n sizes (0 for none). */
size_t mb_coll_largest(const size_t *sizes, size_t n);
/* "a|b|c" from n names into buf (option choices). */
void mb_coll_join_names(char *buf, size_t len, const char *const *names, size_t n);
/* Sizes the case and allocates nsets sets (mb_coll_bufs_alloc; err as
 * there). fault: the test fault's name or NULL. */
int mb_coll_vcase_init(struct mb_coll_vcase *v, struct mb_coll_ctx *ctx, enum mb_coll_layout layout,
                       enum mb_coll_op op, enum mb_coll_dtype dtype, size_t count, int root, int inplace,
                       uint64_t seed, size_t nsets, int registered, int device, const char *fault, char *err,
                       size_t errlen);
void mb_coll_vcase_select(struct mb_coll_vcase *v, long long iter);
/* Selects iter's set, poisons the output, writes this rank's input (and
 * copies both to the device buffers in device runs). */
void mb_coll_vcase_prepare(struct mb_coll_vcase *v, long long iter);
/* Device runs of a host algorithm: the device buffers into the pinned
 * set before the call (to_host 1), the output back after it (0). */
void mb_coll_vcase_stage(struct mb_coll_vcase *v, int to_host);
/* At fault_iter: corrupts one output element (mb_coll_store_fault). */
void mb_coll_vcase_fault(struct mb_coll_vcase *v, long long iter, const char *fault);
/* Checks iter's output on this rank (mb_coll_data_verify). */
int mb_coll_vcase_verify(struct mb_coll_vcase *v, long long iter, char *msg, size_t mlen);
void mb_coll_vcase_free(struct mb_coll_vcase *v);


/* ---- validation protocol (validation.c) --------------------------------
 * The model is calibrated from microbenchmarks at the calibration sizes
 * and validated at held-out sizes: a seeded random choice from a declared
 * grid (1.25, 1.5 and 1.75 times the powers of two from 1 KiB to 32 MiB)
 * that never contains a calibration size; held-out runs also use rank
 * counts other than the calibration's. */
extern const size_t mb_coll_calibration_sizes[];
extern const size_t mb_coll_ncalibration_sizes;
int mb_coll_is_calibration_size(size_t bytes);
/* The declared grid into sizes[cap], ascending; returns its length (48). */
size_t mb_coll_heldout_grid(size_t *sizes, size_t cap);
/* `want` distinct grid sizes drawn with seed, ascending; returns how many
 * (at most the grid's length). The same seed draws the same sizes. */
size_t mb_coll_heldout_draw(uint64_t seed, size_t want, size_t *out);
/* Which set a run's points belong to: "calibration" (every size a
 * calibration size, at the calibration's rank count on its one node:
 * ranks_per_node 0, or not below nranks), "heldout" (no point is a
 * calibration point: no size is one, or the ranks differ, or they are
 * split into nodes) or "mixed". */
const char *mb_coll_point_set(const size_t *sizes, size_t n, int nranks, int ranks_per_node, int calibration_ranks);
/* 1 if (nranks, ranks_per_node, bytes) is a calibration point. */
int mb_coll_is_calibration_point(int nranks, int ranks_per_node, size_t bytes, int calibration_ranks);
/* What a result file records about the protocol (model_calibration_ranks,
 * _sizes, model_point_set, model_heldout_seed, _sizes, _grid,
 * model_point_ranks_per_node) for a run of these sizes on nranks split
 * ranks_per_node (0: the real nodes) with prof; seed -1: not a held-out
 * draw. Strings in v[i].text. Returns how many (at most 8). */
struct mb_coll_metric;
size_t mb_coll_validation_values(const struct mb_coll_profile *prof, const size_t *sizes, size_t n, int nranks,
                                 int ranks_per_node, long long seed, struct mb_coll_metric *v);
/* "a,b,c" (bytes) into buf, for a result file. */
void mb_coll_sizes_string(const size_t *sizes, size_t n, char *buf, size_t len);

#endif
