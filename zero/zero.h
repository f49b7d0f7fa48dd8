/* movebench zero/: model-sharded data parallelism (ZeRO-3 and DisDP, issue
 * 19) on nn/'s GPT layers, with collectives/' non-blocking ring and its
 * pacing hook. A run has W workers, K switch ranks and N parameter
 * servers (ranks 0..W-1, W..W+K-1, W+K..W+K+N-1). Each worker holds every
 * layer's parameter shard (nn_layer_shard: FSDP's padding), its fp32
 * master copy and Adam moments; the global batch is split into
 * micro-batches spread evenly over the workers. A mode (--mode) is one
 * row of the ops table (modes.def): set-up, one training step, teardown.
 * Depends on nn/, collectives/, offload/ and common/; never on the
 * harness. Background: shared/papers/disdp.md. */
#ifndef MB_ZERO_H
#define MB_ZERO_H

#include "../nn/nn.h"
#include "../collectives/coll.h"

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* ===== roles ============================================================ */

enum zero_role { ZERO_WORKER, ZERO_SWITCH, ZERO_PS };
const char *zero_role_name(enum zero_role r);

struct zero_layout {
    int W, K, N; /* workers, switch ranks (--switch), parameter servers (--ps) */
};
/* The role of `rank` and its index among its role's ranks. */
enum zero_role zero_role_of(const struct zero_layout *lay, int rank, int *index);
/* 0 when nranks == W + K + N, W >= 1 and, if needs_ps, N >= 1; else -1
 * with one line naming the flag in err. */
int zero_layout_check(const struct zero_layout *lay, int nranks, int needs_ps, char *err, size_t len);

/* ===== options ========================================================== */

/* Gradient aggregation: fp32 sums (the paper's systems) or int32 fixed
 * point (ZERO_FIXED_FRAC_BITS fraction bits), whose sums are exact and so
 * order-independent: every mode and W gives the same bits. */
enum zero_agg { ZERO_AGG_FP32, ZERO_AGG_FIXED };
#define ZERO_FIXED_FRAC_BITS 24
/* Who advances the in-flight collectives: the compute thread between
 * layers (poll) or a progress thread of its own (thread). */
enum zero_progress { ZERO_PROGRESS_POLL, ZERO_PROGRESS_THREAD };

struct zero_opts {
    struct nn_gpt_config cfg;
    int batch;                /* global batch, sequences */
    int micro;                /* sequences per micro-batch */
    struct zero_layout lay;
    enum zero_agg agg;
    enum zero_progress progress;
    double link_bps;          /* per worker and direction, bytes/s; 0: unpaced */
    uint64_t seed;
    struct nn_adam hp;
    int adam_threads;         /* zero-offload's optimizer pool */
    const char *dir;          /* storage folder (disdp's PS), may be NULL */
    int trace;                /* record spans (on_span) */
    double stall_s;           /* disdp: a worker's wait this long names its layer on stderr (0: never) */
    int reference;            /* a checker's reference run: no fault injection */
};
/* Micro-batches per worker: batch / (micro * W), 0 when it does not divide. */
int zero_micro_per_worker(const struct zero_opts *o);

/* ===== counters ========================================================= */

/* What one worker's step did (added up over the run's steps). */
struct zero_stats {
    uint64_t sent_bytes, recv_bytes;   /* collective bytes, per direction */
    double compute_s, comm_wait_s, optimizer_s, step_s; /* wall, split */
    double cpu_s;                      /* the compute thread's CPU seconds in steps */
    double comm_cpu_s;                 /* the compute thread's CPU seconds while waiting for collectives */
    long long steps;
    double loss;                       /* mean over the last step's micro-batches */
};

/* ===== the run ========================================================== */

struct zero_mode_ops;
struct zero_comm;

/* One worker's model: every layer with its parameters bound to a padded
 * full-size buffer (gathered before use) and its shard's optimizer state. */
struct zero_layer {
    struct nn_layer *l;
    size_t numel;       /* real parameters */
    size_t S;           /* shard elements (padded) */
    size_t off, n;      /* this worker's shard: first element, real count */
    float *full;        /* W*S fp32: the gathered parameters (own block at off) */
    float *grad;        /* numel fp32: nn's gradient (accumulated over micro-batches) */
    int32_t *acc;       /* W*S: fixed-point gradient sums (fixed agg), else NULL */
    void *red;          /* S elements (int32 or fp32): the reduced shard */
    float *master, *m, *v; /* S: fp32 master shard and Adam moments */
    double *sum_send;   /* W blocks x chunks x {sum, |sum|} of the reduce-scatter's input */
    double *sum_recv;   /* chunks: sums of the reduced shard as it landed */
};

struct zero_run {
    struct zero_opts o;
    const struct zero_mode_ops *mode;
    MPI_Comm comm;            /* all ranks (a duplicate of the caller's) */
    int rank, nranks;
    enum zero_role role;
    int index;                /* among the role's ranks (worker index w) */
    MPI_Comm workers;         /* the W workers (MPI_COMM_NULL elsewhere) */
    struct mb_coll_ctx *coll; /* on `workers` */
    struct zero_comm *cc;     /* the request engine (comm.c) */
    int L;                    /* layers: cfg.layers + 2 */
    struct zero_layer *layer;
    struct nn_workspace *ws;
    float *h[2], *dh[2];      /* [micro*seq, hidden] hidden states */
    int32_t *tok, *tgt;       /* one micro-batch */
    long long step;           /* steps done */
    struct zero_stats st;
    void *mode_state;         /* the mode's own */
    /* Optional: a span of work [start, end) (mb_now) on lane `what`. */
    void (*on_span)(void *ctx, const char *what, const char *name, double start, double end);
    void *span_ctx;
};

/* Collective over comm (every rank): roles, the workers' communicator and
 * collectives context, every worker's layers, shards and buffers
 * (parameters from o->seed), the request engine, then the mode's setup.
 * NULL with one line in err. */
struct zero_run *zero_run_new(const struct zero_opts *o, const struct zero_mode_ops *mode, MPI_Comm comm,
                              char *err, size_t len);
/* One synchronous training step on every rank: 0, or -1 with err. */
int zero_run_step(struct zero_run *z, char *err, size_t len);
void zero_run_free(struct zero_run *z);

/* Bytes a worker allocates for o (parameters, gradients, optimizer
 * state, activations, workspace): what --mem-budget compares against. */
uint64_t zero_worker_bytes(const struct zero_opts *o);
/* Padded parameter bytes of the whole model on the wire (sum over layers
 * of W*S*4): ZeRO-3's S in 3S(W-1)/W. */
uint64_t zero_wire_param_bytes(const struct zero_opts *o);

/* --link-gbps auto (collective over z->comm): the rate at which ZeRO-3's
 * wire time per layer equals its compute per layer, measured on one block
 * (forward + backward of a micro-batch), the slowest worker's; set as
 * every worker's pacing rate and returned in bytes/s (0 for one worker). */
double zero_link_auto(struct zero_run *z);

/* The tokens and targets of global micro-batch g at step `step` (the same
 * whoever computes it: a single rank running every micro-batch trains
 * exactly what W workers do). */
void zero_tokens(const struct zero_opts *o, long long step, int g, int32_t *tok, int32_t *tgt);

/* One layer's fp32 parameters (real elements), gathered from the workers'
 * master shards: collective over z->workers; out on every worker. */
int zero_layer_params(struct zero_run *z, int i, float *out);
/* CRC32C of layer i's gathered fp32 parameters (worker ranks). */
uint32_t zero_layer_crc(struct zero_run *z, int i);

/* ===== pieces the modes share (worker.c, fixed.c) ======================= */

/* Forward and backward of one micro-batch through every layer (tokens in
 * z->tok/tgt): before layer i's forward (fwd = 1) or backward (fwd = 0)
 * `ready(z, i, fwd)` is called and must leave layer i's parameters in
 * place; `done_bwd(z, i)` after layer i's backward. 0 or -1 with err. */
struct zero_pass_hooks {
    int (*ready)(struct zero_run *z, int i, int fwd, char *err, size_t len);
    int (*done_bwd)(struct zero_run *z, int i, char *err, size_t len);
};
int zero_micro_pass(struct zero_run *z, const struct zero_pass_hooks *h, double *loss, char *err, size_t len);
/* After a micro-batch's backward of layer i: with fixed aggregation its
 * gradient is quantized into the int32 sums and zeroed (nn accumulates
 * otherwise). */
void zero_grad_collect(struct zero_run *z, int i);
/* Quantizes n fp32 values into int32 sums: acc[k] += round(g[k] * 2^F),
 * clamped so that `terms` of them cannot overflow. */
void zero_fixed_accumulate(int32_t *acc, const float *g, size_t n, int terms);
/* Adam on layer i's shard from its reduced gradient (t = step number),
 * writing the fp32 working copy into the own block of `full`. */
void zero_shard_adam(struct zero_run *z, int i, long long t);
/* The gradient scale: 1 / (micro-batches in the global batch), times
 * 2^-F for fixed point. */
float zero_grad_scale(const struct zero_opts *o);
/* Adds a span when z->on_span is set. */
void zero_span(struct zero_run *z, const char *lane, const char *name, double start, double end);

/* ===== the reduce-scatter's linear checksum (checksum.c) ============= */

int zero_checksum_alloc(struct zero_run *z, char *err, size_t len);
/* Layer i's input chunk sums, as its reduce-scatter starts. */
void zero_checksum_send(struct zero_run *z, int i);
/* Its reduced shard's chunk sums, as it lands (MB_FAULT_INJECT=corrupt-grad
 * corrupts one element first, at a seeded worker, layer and element of
 * the first step). */
void zero_checksum_recv(struct zero_run *z, int i);
/* Collective over the workers: every chunk of every worker's last reduced
 * shards against the senders' sums. 0, or 1 with msg naming the step,
 * layer, chunk and rank. */
int zero_checksum_verify(struct zero_run *z, char *msg, size_t len);

/* ===== collective requests (comm.c) ===================================== */

/* The allgather of layer i's shards into `full` and the reduce-scatter of
 * its gradient sums into `red`, as MB_COLL_INT8 bytes / INT32 / FLOAT
 * through mb_coll_start; sends paced at o->link_bps (a token bucket in the
 * pacing hook, which also counts the bytes sent). progress POLL: the
 * caller advances them (zero_comm_poll); THREAD: a progress thread does,
 * sleeping between polls. Waiting sleeps, never spins. */
struct zero_req;
struct zero_comm *zero_comm_new(struct zero_run *z, char *err, size_t len);
void zero_comm_free(struct zero_comm *c);
struct zero_req *zero_gather_start(struct zero_run *z, int i, char *err, size_t len);
struct zero_req *zero_reduce_start(struct zero_run *z, int i, char *err, size_t len);
/* Advances what is in flight (POLL; nothing under THREAD). -1 on failure. */
int zero_comm_poll(struct zero_comm *c);
/* Waits for r and frees it; the time waited is added to comm_wait_s. */
int zero_req_wait(struct zero_run *z, struct zero_req *r, char *err, size_t len);
/* Sets the pacing rate (bytes/s per direction; 0: unpaced). */
void zero_comm_set_rate(struct zero_comm *c, double bps);
/* Bytes the pacing hook let go (sent by this worker), all requests so far. */
uint64_t zero_comm_sent(struct zero_comm *c);
/* Seconds the progress thread (THREAD) spent on its CPU; 0 under POLL. */
double zero_comm_thread_cpu_s(struct zero_comm *c);

/* ===== modes ============================================================ */

/* One way to train (fio-style ops table). setup and teardown are
 * optional; step runs one synchronous step on every rank (workers, switch
 * and PS ranks alike: a role with nothing to do returns 0). */
struct zero_mode_ops {
    const char *name;
    const char *description;
    int needs_ps;          /* refuses --ps 0 */
    int uses_switch;       /* K > 0 has work (else those ranks idle) */
    int thread_multiple;   /* calls MPI from a thread of its own whatever --progress says */
    int uses_progress;     /* --progress matters */
    int (*setup)(struct zero_run *z, char *err, size_t len);
    int (*step)(struct zero_run *z, char *err, size_t len);
    /* Optional, for modes whose parameters live off the workers (disdp's
     * PS): collective over z->comm, leaves every worker's master shards
     * holding the current parameters (for the check and the dump). */
    int (*sync)(struct zero_run *z, char *err, size_t len);
    void (*teardown)(struct zero_run *z);
};
/* The registry (modes.def), NULL-terminated, and lookup by name. */
extern const struct zero_mode_ops *const zero_modes[];
const struct zero_mode_ops *zero_mode_find(const char *name);
/* "zero3-serial|zero3-overlap|..." (static storage). */
const char *zero_mode_names(void);
/* The mode's sync (collective over z->comm; 0 when it has none). */
int zero_run_sync(struct zero_run *z, char *err, size_t len);
/* 1 when o with mode m calls MPI from a second thread. */
int zero_mode_needs_threads(const struct zero_mode_ops *m, const struct zero_opts *o);

#define ZERO_MODE(sym) extern const struct zero_mode_ops zero_mode_##sym;
#include "modes.def"
#undef ZERO_MODE

#endif
