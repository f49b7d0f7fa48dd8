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
#include <stdio.h>

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
    int compute_threads;      /* a worker's OpenBLAS and OpenMP threads (--compute-threads; 0: defaults) */
    const char *dir;          /* storage folder (disdp's PS), may be NULL */
    int ps_files;             /* files of each PS's mb_ostore (--files); 0 = 1 */
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
    /* a disdp PS: parameters updated, seconds in Adam, with a transfer in
     * flight, and bytes moved through its mb_ostore (set-up included) */
    double ps_params, ps_adam_s, ps_io_busy_s, ps_io_bytes;
};

/* ===== the run ========================================================== */

struct zero_mode_ops;
struct zero_comm;
struct zero_pool;

/* One worker's model: every layer's shard (its working copy, fp32 master
 * and Adam moments); the full-size (W*S) gathered parameters and
 * gradients are borrowed from the worker's small pools (zero_pool) for
 * the span they are needed, and the layer is rebound to them. */
struct zero_layer {
    struct nn_layer *l;
    size_t numel;       /* real parameters */
    size_t S;           /* shard elements (padded) */
    size_t off, n;      /* this worker's shard: first element, real count */
    float *work;        /* S fp32: the shard's working copy (Adam writes it; a gather sends it) */
    float *full;        /* W*S fp32 from the parameter pool while gathered (own block at off), else NULL */
    float *grad;        /* W*S fp32: nn's gradient (accumulated over micro-batches); from the
                           gradient pool when one micro-batch per step, else the layer's own */
    int32_t *acc;       /* W*S: fixed-point gradient sums (fixed agg), else NULL; one micro-batch:
                           the grad buffer itself (quantized in place) */
    int grad_pooled;    /* grad (and acc) came from the gradient pool */
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
    struct zero_pool *pp, *gp; /* full-size parameter and gradient buffers (workers) */
    uint64_t alloc_bytes;     /* what this worker allocated for its model and run: its peak */
    float *h[2], *dh[2];      /* [micro*seq, hidden] hidden states */
    int32_t *tok, *tgt;       /* one micro-batch */
    long long step;           /* steps done */
    struct zero_stats st;
    /* each step's own split (step_record.c): ZERO_REC_N values per step
     * (wall step, compute, exposed comm, optimizer), in step order; the
     * medians skip the first timed_from steps (the harness's warm-up) */
    double *rec;
    long long nrec, caprec, timed_from;
    void *mode_state;         /* the mode's own */
    /* Optional: a span of work [start, end) (mb_now) on lane `what`. */
    void (*on_span)(void *ctx, const char *what, const char *name, double start, double end);
    void *span_ctx;
    /* Optional: the layer this rank now waits for or works on (disdp: a
     * worker's pull or push, the PS's gradient and update), -1 none; with
     * span_ctx (mb-zero: the --timeout watchdog's detail). */
    void (*on_layer)(void *ctx, int layer);
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

/* Full-size buffers a worker keeps: ZERO_PARAM_BUFS gathered layers (the
 * one computing and the next ZERO_PREFETCH uses' gathers or pulls in
 * flight) and, with
 * one micro-batch per worker, ZERO_GRAD_BUFS gradients (the one being
 * written and the reduce-scatters or pushes in flight; a backward that
 * finds none free waits for the oldest). With several micro-batches the
 * gradients accumulate over them and each layer keeps its own (as FSDP's
 * no_sync). */
#define ZERO_PARAM_BUFS 3
/* Uses (a layer's forward or backward) whose gather or pull flies ahead
 * of the one computing in the overlapping modes. Two, not one: at
 * --link-gbps auto a use's wire time equals its compute, so a transfer
 * posted one use ahead lands at that use's end at best and any lateness
 * of the peer or of the thread that advances it is exposed; two keep the
 * link reserved back to back (issue 19). */
#define ZERO_PREFETCH (ZERO_PARAM_BUFS - 1)
#define ZERO_GRAD_BUFS 3
/* Bytes a worker allocates for o (shards, optimizer state, the pools or
 * the accumulators above, activations, workspace): what --mem-budget
 * compares against and what zero_run's alloc_bytes comes to. */
uint64_t zero_worker_bytes(const struct zero_opts *o);
/* Whether o's gradients come from the gradient pool (one micro-batch per
 * worker per step). */
int zero_grads_pooled(const struct zero_opts *o);

/* Layer i's parameters: a buffer from the parameter pool bound to it,
 * its own block filled from the working copy (-1 when the pool is empty:
 * more gathers in flight than ZERO_PARAM_BUFS allows). Idempotent. */
int zero_params_get(struct zero_run *z, int i);
/* Gives it back after the layer's compute (no-op when none). */
void zero_params_put(struct zero_run *z, int i);
/* A second pool buffer for layer i while its first is bound (the head's
 * backward gathered during its forward), its own block filled from the
 * working copy: NULL when the pool is empty. _adopt binds it to the layer
 * once the first is given back (-1 if it is not); _drop returns it unused. */
float *zero_params_spare(struct zero_run *z, int i);
int zero_params_adopt(struct zero_run *z, int i, float *buf);
void zero_params_drop(struct zero_run *z, float *buf);
/* Layer i's gradient buffer for a backward: the pool's, zeroed, when
 * pooled (-1 when none is free: the caller finishes the oldest reduce
 * first), else already in place. Idempotent. */
int zero_grads_get(struct zero_run *z, int i);
/* After layer i's reduce-scatter or push completed (no-op unless pooled). */
void zero_grads_put(struct zero_run *z, int i);
/* Padded parameter bytes of the whole model on the wire (sum over layers
 * of W*S*4): ZeRO-3's S in 3S(W-1)/W. */
uint64_t zero_wire_param_bytes(const struct zero_opts *o);

/* One block's forward + backward of a micro-batch in the layer's own code
 * (collective over z->comm): the median of ZERO_BLOCK_PASSES timed passes
 * after an untimed one, with every worker passing side by side as they
 * compute in the run; the slowest worker's seconds, and (each when not
 * NULL) in *flops the block's FLOPs (nn_gpt_layer_account), in *cpu_s
 * the median pass's process CPU seconds (every thread), the largest. */
#define ZERO_BLOCK_PASSES 7
double zero_block_pass(struct zero_run *z, double *flops, double *cpu_s);
/* This worker's part of it (not collective; 0s elsewhere): the median
 * pass's seconds, its FLOPs and CPU seconds; after the timed passes,
 * untimed ones while more(ctx) returns non-zero (more may be NULL). */
void zero_block_passes(struct zero_run *z, int (*more)(void *), void *ctx, double *t, double *flops,
                       double *cpu_s);
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

/* ===== results gathered to rank 0 (results.c) =========================== */

/* One worker's counters per step (its zero_stats over its steps): the
 * values each worker's `worker_<name>_per_step` series holds, in this
 * order (zero_worker_value_names). */
enum {
    ZERO_V_SENT, ZERO_V_RECV, ZERO_V_COMPUTE, ZERO_V_WAIT, ZERO_V_OPT, ZERO_V_STEP, ZERO_V_CPU, ZERO_V_COMM_CPU,
    ZERO_V_PROG_CPU, ZERO_V_POLLS, ZERO_V_LATE,
    /* over the timed steps (step_record.c): the median of each part of
     * the split and the step's quartiles, the steps they rest on */
    ZERO_V_MED_STEP, ZERO_V_MED_COMPUTE, ZERO_V_MED_WAIT, ZERO_V_MED_OPT, ZERO_V_STEP_P25, ZERO_V_STEP_P75,
    ZERO_V_TIMED, ZERO_NV
};
extern const char *const zero_worker_value_names[ZERO_NV];
#define ZERO_CRC_LAYERS 256 /* layers whose CRC32C is recorded, at most */
/* A disdp PS's own counters over the run (zero_stats' ps_*). */
struct zero_ps_counters {
    double params, adam_s, io_busy_s, io_bytes;
};
/* What rank 0 records, gathered from every rank (zero_results_gather). */
struct zero_results {
    int W;                         /* workers */
    double *v;                     /* W x ZERO_NV: worker w's values at v[w * ZERO_NV + k] */
    unsigned long long *peak;      /* W: each worker's alloc_bytes (its peak) */
    int ncrc;                      /* min(L, ZERO_CRC_LAYERS) */
    uint32_t crc[ZERO_CRC_LAYERS]; /* CRC32C of each layer's gathered parameters */
    int has_ps;                    /* the first PS's counters came (N > 0, params > 0) */
    struct zero_ps_counters ps;
};
/* ===== each step's split (step_record.c) ================================ */

enum { ZERO_REC_STEP, ZERO_REC_COMPUTE, ZERO_REC_WAIT, ZERO_REC_OPT, ZERO_REC_N };
/* Appends one step's split d[ZERO_REC_N] to z->rec; -1 out of memory
 * (the step is then left out of the medians, not fatal). */
int zero_step_record(struct zero_run *z, const double d[ZERO_REC_N]);
/* The q-quantiles (0..1, each) of x[0..n), linearly interpolated between
 * order statistics (q = 0.5 of an even n: the mean of the middle two);
 * sorts x in place; NaN for n = 0. */
void zero_quantiles(double *x, size_t n, const double *q, int nq, double *out);
/* Into v (zero_worker_values' array): the medians of z's recorded steps
 * after the first timed_from (all of them when no step is after it), the
 * step's quartiles and how many steps; NaN (and 0 steps) with none. */
void zero_step_medians(const struct zero_run *z, double *v);

/* z's worker values (zeros on a switch or PS rank), per step. */
void zero_worker_values(const struct zero_run *z, double v[ZERO_NV]);
/* Collective over z->comm (after zero_run_sync): the workers' values and
 * peaks, the first PS's counters and the layers' CRCs (collective over
 * the workers), into *out on rank 0 (zeroed elsewhere; out of memory is
 * fatal, mb_die). */
void zero_results_gather(struct zero_run *z, struct zero_results *out);
void zero_results_free(struct zero_results *r);

/* The PS rate panel (docs/mb-zero.md): Adam params/s (parameters / Adam
 * seconds), storage bytes/s (bytes / seconds with a transfer in flight),
 * the update rate (parameters / the busier of the two: they overlap) and
 * the workers one PS holding all P parameters can feed at a fixed global
 * batch, W * compute_s * update / P (compute_s: a worker's compute per
 * step at W workers). */
struct zero_ps_panel {
    double adam_params_s, storage_Bps, update_params_s, workers_fed;
};
void zero_ps_panel(const struct zero_ps_counters *c, double P, int W, double compute_s, struct zero_ps_panel *out);
/* The model's real parameters (sum of the layers' numel). */
double zero_model_params(const struct zero_run *z);
/* The result file's "emulation" text for a run of mode (disdp: its
 * stand-ins; paced: --link-gbps given) with lay's roles. hostnames: the
 * ranks' hosts in rank order, comma-separated (the harness's provenance
 * "hostnames"); NULL or a single host: the roles share "this host's
 * cores"; several (tools/vcluster, Slurm): which hosts each role's ranks
 * are on. */
void zero_emulation(const struct zero_layout *lay, const char *hostnames, int disdp, int paced, char *buf,
                    size_t len);

/* One value of a case's result: element idx of a series (idx >= 0) or
 * one value (idx < 0), an integer, a double or a string. */
struct zero_metric {
    char key[64];
    long idx;
    enum { ZERO_M_INT, ZERO_M_DBL, ZERO_M_STR } kind;
    long long i;
    double d;
    const char *s;
};
/* What a run adds to the gathered results: the model and the check. */
struct zero_report {
    const struct zero_results *res;
    const struct zero_prediction *pred; /* NULL: no prediction ... */
    const char *model_why;              /* ... and why */
    const struct zero_model_in *rates;  /* calibrated (with pred) */
    const struct zero_ps_rate *ps_rate; /* disdp's calibrated PS (with pred) */
    const char *link;                   /* "auto", "paced" or "off" */
    double worst_rel;                   /* the check's worst relative error */
    double sgemm_flops;                 /* cblas_sgemm over the block's shapes (with pred; the model's
                                           compute rate is rates->gemm_flops, a block's own passes) */
};
/* Every value of the case, in order, to put(ctx, m): the workers' series,
 * peaks, formula, CRCs, the model beside them, the PS panel. */
void zero_report_metrics(const struct zero_run *z, const struct zero_report *rep,
                         void (*put)(void *ctx, const struct zero_metric *m), void *ctx);
/* The lines mb-zero prints after the run (measured step beside the
 * model, the PS panel, worker 0's split). */
void zero_report_print(FILE *f, const struct zero_run *z, const struct zero_report *rep);

/* ===== pieces the modes share (worker.c, fixed.c) ======================= */

/* Forward and backward of one micro-batch through every layer (tokens in
 * z->tok/tgt): before layer i's forward (fwd = 1) or backward (fwd = 0)
 * `ready(z, i, fwd)` is called and must leave layer i's parameters in
 * place; `done_bwd(z, i)` after layer i's backward. 0 or -1 with err. */
struct zero_pass_hooks {
    int (*ready)(struct zero_run *z, int i, int fwd, char *err, size_t len);
    int (*done_bwd)(struct zero_run *z, int i, char *err, size_t len);
    /* No free gradient buffer for a backward: finish the oldest reduce
     * in flight (which gives its buffer back). */
    int (*grad_wait)(struct zero_run *z, char *err, size_t len);
};
int zero_micro_pass(struct zero_run *z, const struct zero_pass_hooks *h, double *loss, char *err, size_t len);
/* Uses of a step, in order: micro-batch u / 2L, the forward of layer
 * u % 2L for the first L, then the backwards from the head down. */
int zero_use_layer(const struct zero_run *z, int u);
/* How many uses after u (of U in the step) may have their parameters
 * fetched now: up to ZERO_PREFETCH, stopping before the first whose layer
 * is u's or an earlier one's in that window (its one buffer is in use:
 * the head's forward then backward, layer 0 between micro-batches). */
int zero_prefetch_ahead(const struct zero_run *z, int u, int U);
/* The same window where a use's parameters may go to a second buffer
 * (zero3's gathers: zero_params_spare): the head's backward may follow its
 * forward, the next use, so the head's second gather flies during its
 * forward instead of after it (issue 19); other repeats still stop. */
int zero_prefetch_ahead_spare(const struct zero_run *z, int u, int U);
/* After a micro-batch's backward of layer i: with fixed aggregation its
 * gradient is quantized into the int32 sums and zeroed (nn accumulates
 * otherwise). */
void zero_grad_collect(struct zero_run *z, int i);
/* Quantizes n fp32 values into int32 sums: acc[k] += round(g[k] * 2^F),
 * clamped so that `terms` of them cannot overflow. */
void zero_fixed_accumulate(int32_t *acc, const float *g, size_t n, int terms);
/* Adam on layer i's shard from its reduced gradient (t = step number),
 * writing the fp32 working copy (work). */
void zero_shard_adam(struct zero_run *z, int i, long long t);
/* The gradient scale: 1 / (micro-batches in the global batch), times
 * 2^-F for fixed point. */
float zero_grad_scale(const struct zero_opts *o);
/* Adds a span when z->on_span is set. */
void zero_span(struct zero_run *z, const char *lane, const char *name, double start, double end);
/* Calls z->on_layer when set. */
void zero_note_layer(struct zero_run *z, int layer);

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
 * caller advances them (zero_comm_poll, between layers) and, in the
 * overlapping modes, nn's progress hook does between every GEMM of a
 * layer (nn_workspace_set_progress on z->ws); THREAD: a progress thread
 * does, sleeping between polls. Waiting sleeps, never spins. */
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
/* Seconds paced sends waited past their pacer's send time (the thread
 * that advances them came back late: nap overshoot, a busy core). */
double zero_comm_pace_late_s(struct zero_comm *c);
/* Calls of the mid-layer hook (POLL) that found requests in flight. */
uint64_t zero_comm_polls(const struct zero_comm *c);
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

/* A clean-up hook for the program (mb_cleanup_add, registered before
 * zero_run_new): removes the mb_ostore files of every disdp PS on this
 * host unless the run ended through the mode's teardown, so a PS killed
 * by SIGKILL leaves nothing in --dir once the survivors end (SIGTERM
 * from mpirun, exit, the --timeout watchdog). Async-signal-safe; arg
 * unused (zero/disdp_cleanup.c). */
void zero_disdp_remove_files(void *arg);

/* --- model, interference, closed forms (zero/model.c, interference.c, closed_form.c) --- */
/* (also model_rates.c, calibrate.c, storage_rate.c and paper_table.c) */

/* The modes the model knows, in mb-zero's --mode order. */
enum zero_model_mode {
    ZERO_MODEL_SERIAL,  /* zero3-serial */
    ZERO_MODEL_OVERLAP, /* zero3-overlap */
    ZERO_MODEL_OFFLOAD, /* zero-offload */
    ZERO_MODEL_DISDP,   /* disdp */
    ZERO_MODEL_NMODES
};
extern const char *const zero_model_mode_names[ZERO_MODEL_NMODES]; /* "zero3-serial", ... */
/* The mode named s: 0 and *m, or -1. */
int zero_model_mode_parse(const char *s, enum zero_model_mode *m);

/* Bytes one worker sends and receives in one step (closed_form.c). */
struct zero_wire_bytes {
    uint64_t send, recv;
};
/* Per layer of numel parameters over W workers that each run `micro`
 * micro-batches per step (mb-zero gathers a layer before every forward
 * and backward of every micro-batch, and reduces once per step),
 * param_bytes per parameter on the wire (gathers, DisDP's pulls) and
 * grad_bytes per gradient element (reduce-scatter, DisDP's push):
 *  ZeRO-3 modes: 2*micro ring allgathers and one ring reduce_scatter_block
 *    of the padded shard S = ceil(numel/W) (nn_shard_range): send = recv
 *    = (W-1)*S*(2*micro*param_bytes + grad_bytes), i.e. 3S(W-1)/W of the
 *    model's bytes at micro = 1 when both are b, plus the padding;
 *  disdp: the worker pushes its accumulated gradient once and pulls the
 *    parameters twice per micro-batch: send = numel*grad_bytes, recv =
 *    2*micro*numel*param_bytes.
 * 0, or -1 (W < 1, micro < 1, a bad mode or a zero byte width). */
int zero_closed_form_layer(enum zero_model_mode m, size_t numel, int W, int micro, size_t param_bytes,
                           size_t grad_bytes, struct zero_wire_bytes *out);
/* The sum over nlayers layers (numel[i] each). 0 or -1. */
int zero_closed_form(enum zero_model_mode m, const size_t *numel, int nlayers, int W, int micro,
                     size_t param_bytes, size_t grad_bytes, struct zero_wire_bytes *out);

/* The step model (model.c). Per layer l and micro-batch: F_l, B_l =
 * forward and backward FLOPs / gemm_flops; S_l = ceil(numel_l/W) (the
 * padded shard); AG_l (allgather of S_l*param_bytes per rank) and RS_l
 * (reduce_scatter_block of S_l*grad_bytes) take bytes*(W-1)/R on a paced
 * link of R = link_gbps*1e9/8 bytes/s per direction, else mb_coll_model's
 * "ring" on `coll`. With m micro-batches per worker (the reduce and the
 * update once, after the last):
 *  zero3-serial  = m*sum(F_l + AG_l) + (m-1)*sum(B_l + AG_l)
 *                  + sum(B_l + AG_l + RS_l) + O,  O = sum S_l / adam_params_s
 *  zero3-overlap = m*sum max(F_l, AG_l) + (m-1)*sum max(B_l, AG_l)
 *                  + sum max(B_l, AG_l + RS_l) + O
 *  zero-offload  = the overlap's passes + X(S_l / pool_adam_params_s)
 *  disdp = m*sum max(F_l, Pull_l) + (m-1)*sum max(B_l, Pull_l)
 *          + sum max(B_l, max(Pull_l, Push_l)) + X(P_l),
 *    Pull_l = numel_l*param_bytes / R, Push_l = numel_l*grad_bytes / R
 *    (unpaced: the profile's p2p_alpha + bytes*p2p.mem), P_l =
 *    numel_l / ps_params_s when given (the PS's measured update), else
 *    max(numel_l*ps_bytes_per_param / storage_Bps, numel_l / adam_params_s).
 * X(U_l): the updates U_l run in backward order on their own cores (the
 * offload pool, the PS), each once its layer's last backward term has
 * ended and the previous update is done; X is what runs past the end of
 * backward (zero/README.md).
 * CPU sharing (when hosts are given): per step, a worker burns
 * Cw = m*sum(f_l + b_l)/cpu_gemm_flops + Aw + bytes_w/cpu_copy_Bps, Aw =
 * sum S_l/cpu_adam_params_s (ZeRO-3 modes; the offload pool's Adam is the
 * worker's process too), bytes_w what it sends plus what it receives
 * (ZeRO-3: 2((2m-1)AGb_l + RSb_l), AGb/RSb the ring's bytes per rank;
 * disdp: its agent's 2m*Pullb_l + Pushb_l); disdp's switch Cs = (bytes it
 * sends and receives + the W pushes it sums) / cpu_copy_Bps, its PS Cp =
 * sum n_l/cpu_ps_params_s + its bytes/cpu_copy_Bps; the ZeRO-3 modes'
 * switch and PS nap: 0. A host's roles need sum(C)/cores seconds of its
 * cores per step, so step = max(the terms above, max over hosts). */
struct zero_model_layer {
    uint64_t numel;             /* parameters */
    double flops_fwd, flops_bwd;
};
/* Ranks that share a host's cores (zero_cpu_hosts): how many of each
 * role, and the cores their CPU sets hold together. */
struct zero_model_host {
    int workers, switches, ps;
    double cores;
};
struct zero_model_in {
    int W;                      /* workers */
    int micro;                  /* micro-batches per worker per step (>= 1) */
    int nlayers;
    const struct zero_model_layer *layers;
    size_t param_bytes, grad_bytes; /* bytes per element on the wire */
    double gemm_flops;          /* FLOP/s, cblas_sgemm over nn_block_gemm_shapes */
    double adam_params_s;       /* CPU Adam (worker shard; the PS's) */
    double pool_adam_params_s;  /* zero-offload's Adam pool; only that mode needs it */
    double storage_Bps;         /* PS storage, bytes/s; only disdp needs it */
    double ps_bytes_per_param;  /* PS storage bytes moved per parameter (26: 12 read, 14 written) */
    double ps_params_s;         /* > 0: the PS's whole update (read, Adam, write) as measured by
                                 * zero_model_measure_ps, params/s; 0: max of storage and Adam */
    double link_gbps;           /* > 0: paced link per direction; 0: the profile */
    const struct mb_coll_profile *coll; /* needed when link_gbps == 0 */
    /* 1: every role has a link of its own at link_gbps (tools/vcluster's
     * tc-shaped nodes, one role per node): disdp's K switches each carry
     * 1/K of W workers' pulls (W copies out) and pushes (W in), its N PS
     * 1/N of one worker's; 0: only the workers' links are paced (mb_link
     * in the process) */
    int role_links;
    int switches, ps;           /* K and N (role_links) */
    /* role_links: each switch's and each PS's own link, Gb/s per
     * direction (tools/vcluster --node-gbps: a switch node at W x the
     * workers' rate stands for a port per worker); 0: link_gbps */
    double switch_gbps, ps_gbps;
    /* disdp, 1: the step is the pull pipeline's end (zero_model_step's
     * event recurrence: prefetch ZERO_PREFETCH uses ahead, the PS's send
     * order and storage reads, store-and-forward of chunk_elems per hop,
     * the pushes after the last backward); 0: the per-layer max terms */
    int pull_pipeline;
    size_t chunk_elems;         /* disdp's switch chunk (pull_pipeline); 0: 65536 */
    /* The CPU-sharing term (left out when nhosts == 0): the roles placed
     * on hosts whose cores they share, and each role's CPU cost, every
     * rate calibrated per role alone (CPU seconds of the whole process,
     * every thread), never timed in the mode predicted. */
    int nhosts;
    const struct zero_model_host *hosts;
    double cpu_gemm_flops;      /* a worker's FLOPs per CPU second (its GEMMs) */
    double cpu_adam_params_s;   /* Adam parameters per CPU second (ZeRO-3's shards, the offload pool) */
    double cpu_ps_params_s;     /* the PS's update (read + CRC, Adam, write) per CPU second; disdp */
    double cpu_copy_Bps;        /* bytes a role moves per CPU second (one copy per byte sent or received) */
    /* The roles' sharing, timed (zero_model_measure_loaded; 0: left out):
     * compute_load_x = a worker's block pass with the mode's other roles
     * running beside it on the same cores / the same pass beside the other
     * workers only; every F_l and B_l is priced x times longer. disdp:
     * ps_loaded_params_s = the PS's update (as ps_params_s) timed while the
     * workers computed and the agents and switches polled; > 0 prices the
     * PS's update instead of ps_params_s. */
    double compute_load_x;
    double ps_loaded_params_s;
};
struct zero_model_step {
    double compute;   /* sum F_l + B_l */
    double wire;      /* the mode's communication alone (per direction, the busier) */
    double optimizer; /* Adam alone (offload: the pool's; disdp: the PS's) */
    double storage;   /* disdp: the PS's storage alone, sum numel*bytes/storage_Bps */
    double exposed_wire, exposed_optimizer;
    /* CPU sharing (0 without hosts): CPU seconds per step of one worker
     * (compute, its shard's Adam or its agent's copies), one switch, one
     * PS, and the floor: the busiest host's sum over its cores */
    double cpu_worker, cpu_switch, cpu_ps, cpu_floor;
    double step;      /* predicted seconds: the mode's terms, at least cpu_floor */
    double pipe_fill; /* disdp pull_pipeline: worker wait before the first compute */
    double pipe_tail; /* disdp pull_pipeline: the last push past the last compute */
};
/* 0, or -1 with one line in err naming the bad or missing input (W, a
 * layer, a rate that the mode needs missing, not finite or <= 0). */
int zero_model_step(enum zero_model_mode m, const struct zero_model_in *in, struct zero_model_step *out,
                    char *err, size_t errlen);
/* Layers 0..cfg->layers+1 of a GPT at micro-batch B sequences (nn_gpt_layer_account)
 * into out (cfg->layers + 2 entries). */
void zero_model_gpt_layers(const struct nn_gpt_config *cfg, int B, struct zero_model_layer *out);

/* Calibrated rates, as text ("key = value" lines, '#' comments; the keys
 * gemm_flops, adam_params_s, pool_adam_params_s, storage_Bps,
 * ps_bytes_per_param, link_gbps; ps_params_s optional, 0 when left out):
 * every key present once, a finite number (link_gbps and ps_params_s
 * may be 0; the others > 0). Parsed into in's rates; 0,
 * or -1 with one line naming the key or line. */
int zero_model_rates_parse(const char *text, const char *name, struct zero_model_in *in, char *err,
                           size_t errlen);
/* Measured in this process: cblas_sgemm over nn_block_gemm_shapes(cfg, B)
 * (nn_gemm_peer, best of reps passes, checked with Freivalds), FLOP/s;
 * and nn_adam_step on n fp32 parameters (best of reps), parameters/s.
 * NaN when out of memory or a check fails. */
double zero_model_measure_gemm(const struct nn_gpt_config *cfg, int B, int reps);
double zero_model_measure_adam(size_t n, int reps);
/* Storage: writes `bytes` to a new file in dir (O_CREAT|O_EXCL|
 * O_NOFOLLOW, 1 MiB writes, fsync), drops it from the page cache
 * (POSIX_FADV_DONTNEED, advisory: a tmpfs keeps it), reads it back,
 * checks every byte and unlinks it. 0 with bytes/s of each, or -1 with
 * one line in err naming the path. */
int zero_model_measure_storage(const char *dir, size_t bytes, double *write_Bps, double *read_Bps, char *err,
                               size_t errlen);
/* Every measured rate of in, in this process: gemm_flops over cfg's
 * block at B sequences (3 passes), adam_params_s over 4M parameters (also
 * pool_adam_params_s: the pool runs the same nn_adam_step), storage_Bps
 * from storage_bytes in dir, ps_bytes_per_param = 26. The link and the
 * profile are left as they are. 0, or -1 with one line in err. */
int zero_model_calibrate(const struct nn_gpt_config *cfg, int B, const char *dir, size_t storage_bytes,
                         struct zero_model_in *in, char *err, size_t errlen);
/* The PS's update as mb-zero's PS runs it (ps_rate.c): an mb_ostore in
 * dir with the PS's options, two throw-away tensors of numel parameters
 * (a layer's size) stepped in backward order and drained, reps passes:
 * read P32, m, v (CRC32C-checked), nn_adam_step, write P32, m, v, P16.
 * params_s = 2*numel / the best pass's time (the model's ps_params_s);
 * adam_params_s = parameters / time in the update callback and
 * storage_Bps = bytes read and written / time with a transfer in flight,
 * each the best pass's. The files are removed. 0, or -1 with one line. */
struct zero_ps_calib {
    const char *dir;
    size_t numel;
    int nfiles, buffered, reps;
    double file_gbps;
};
struct zero_ps_rate {
    double params_s, adam_params_s, storage_Bps;
    double cpu_params_s; /* 2*numel / the process's CPU seconds over the cheapest pass */
};
int zero_model_measure_ps(const struct zero_ps_calib *pc, struct zero_ps_rate *out, char *err, size_t errlen);
/* The PS's storage rate for ps_bytes_per_param = read_per_param +
 * write_per_param: (r + w) / (r / read_Bps + w / write_Bps) (the PS reads
 * P32, m, v: 12 B; writes them and the bf16 copy: 14 B). NaN on a rate <= 0. */
double zero_model_storage_Bps(double read_per_param, double write_per_param, double read_Bps, double write_Bps);

/* The "model, paper's inputs" table (paper_table.c): gpt-175b, W = 8,
 * bf16 on the wire, at 100 and 200 Gb/s, every mode, beside the paper's
 * 3.98x (DisDP over ZeRO-Infinity, 175B, 8 workers [abs]). The paper
 * names neither the GPU nor the batch, so those inputs are ours, declared
 * in zero/README.md ([inf]); only the link rates, W, the model and the
 * PS's 26 GB/s of storage ([sec]) are the paper's. */
#define ZERO_PAPER_SPEEDUP 3.98
struct zero_paper_inputs {
    double gpu_flops;          /* [inf] A100 dense bf16 312 TFLOP/s at 50% */
    int micro_batch;           /* [inf] sequences of 1024 tokens per worker per step */
    double gpu_adam_params_s;  /* [inf] ZeRO-3's Adam in HBM: 1.555 TB/s / 28 B per param */
    double cpu_adam_params_s;  /* [inf] a dual Xeon Gold 5320 (2 x 187.7 GB/s) / 28 B: offload pool, PS */
    double ps_storage_Bps;     /* [sec] 12 SSDs, 26 GB/s */
};
void zero_paper_inputs_default(struct zero_paper_inputs *p);
struct zero_paper_row {
    double link_gbps;
    enum zero_model_mode mode;
    struct zero_model_step model;
    struct zero_wire_bytes bytes; /* per worker per step (closed form) */
    double over_disdp;            /* this row's step / disdp's at the same link rate */
};
#define ZERO_PAPER_ROWS (2 * ZERO_MODEL_NMODES)
/* Fills rows[ZERO_PAPER_ROWS] (100 Gb/s first, modes in order). 0, or -1
 * with one line in err (a bad input). */
int zero_paper_table(const struct zero_paper_inputs *p, struct zero_paper_row *rows, char *err, size_t errlen);
/* The table as text, labelled "model, paper's inputs", the paper's 3.98x
 * beside the zero-offload rows (ZeRO-Infinity's stand-in). */
void zero_paper_table_print(FILE *f, const struct zero_paper_inputs *p, const struct zero_paper_row *rows);

/* --interference (interference.c), the paper's two microbenchmarks on
 * CPUs: (1) a ring allgather of coll_bytes per rank alone, then while a
 * GEMM loops on another thread of the same rank (the same cores: the
 * paper's +41% for a collective beside a GEMM); (2) an N x N x N sgemm on
 * gemm_threads OpenBLAS threads alone, then while a memcpy stream runs on
 * a thread pinned to the last allowed PU (the DMA analogue; unlike a DMA
 * engine it still uses DRAM bandwidth). Each time is, per repetition, the
 * slowest rank's, and the median of reps. Every allgather and GEMM result
 * is checked, and the copy's bytes at the end. */
struct zero_interference_opts {
    size_t coll_bytes; /* per rank */
    int gemm_n;        /* >= 1 */
    size_t copy_bytes; /* the stream's buffer */
    int reps;          /* >= 1 */
    int gemm_threads;  /* 0: the allowed PUs less one (at least 1) */
    int fault;         /* tests: 1 corrupts an allgather result, 2 a GEMM's */
};
struct zero_interference {
    double coll_alone, coll_with_gemm;  /* seconds */
    double gemm_alone, gemm_with_copy;  /* seconds */
    double coll_slowdown, gemm_slowdown; /* with / alone - 1 */
    double copy_GBps;                   /* the stream's rate while the GEMM ran */
    int gemm_threads, copy_pu;          /* what ran; copy_pu -1: not pinned (one PU) */
};
/* Collective over comm (funneled: only the calling thread makes MPI
 * calls). 0, or -1 with one line in err (a bad option, memory, an MPI
 * error, or a check that failed, naming the rank and what), the same
 * verdict on every rank. */
int zero_interference_run(MPI_Comm comm, const struct zero_interference_opts *o, struct zero_interference *out,
                          char *err, size_t errlen);

/* One mb-zero run's prediction (predict.c): the step model of `mode` on
 * o's GPT (micro-batches of o->micro sequences), W, micro-batches per
 * worker and link (o->link_bps; 0: rates->coll's profile), 4 bytes per
 * element on the wire as mb-zero moves them, with rates' calibrated
 * rates; and the closed-form bytes per worker per direction. 0, or -1
 * with one line in err (no model for the mode, a missing rate). */
struct zero_prediction {
    enum zero_model_mode mode;
    struct zero_model_step model;
    struct zero_wire_bytes bytes;
};
/* The per-direction rate (Gb/s) of a tc-shaped link named in a run's
 * emulation text (tools/vcluster's "... tc tbf R Gbit/s ..."); 0 when
 * none. zero_predict prices the wire with rates->link_gbps when the
 * process paces nothing (o->link_bps == 0), so a caller gives it this. */
double zero_tc_gbps(const char *emulation);
/* The rate (Gb/s) of node `host`'s own link in such a text (tools/vcluster
 * --node-gbps: "..., node3 tbf R Gbit/s"), else the base rate
 * (zero_tc_gbps); 0 when the text names no tc rate. */
double zero_tc_node_gbps(const char *emulation, const char *host);
/* Each role's link from every rank's own (gbps[r], zero_tc_node_gbps of
 * rank r's host, W + K + N of them): the slowest of the role's ranks into
 * out[ZERO_WORKER], out[ZERO_SWITCH], out[ZERO_PS]; 0 for a role with no
 * rank or any rank unshaped. */
void zero_role_tc_gbps(const struct zero_layout *lay, const double *gbps, double out[3]);
/* How zero_predict priced the wire: "paced", "tc" or "collectives profile". */
const char *zero_model_link_name(const struct zero_opts *o, const struct zero_model_in *rates);
int zero_predict(const struct zero_opts *o, const char *mode, const struct zero_model_in *rates,
                 struct zero_prediction *p, char *err, size_t errlen);

/* The OpenMP wait policy this process started under (wait_policy.c):
 * OMP_WAIT_POLICY and GOMP_SPINCOUNT as GOMP read them at load, in buf
 * ("passive", "active", "unset (...)", plus ", GOMP_SPINCOUNT=..." when
 * set); *passive = 1 when waiting threads sleep at once (passive and no
 * spin count other than 0). Roles sharing cores must run passive: a
 * spinning OpenMP thread takes the core a busy role needs. */
const char *zero_omp_wait_policy(char *buf, size_t len, int *passive);
/* Waits for every rank of comm while napping nap_ns (< 1 s) between tests,
 * so that ranks idle during rank 0's calibration, or a mode's step, do not
 * spin on the cores the busy ranks share (zero/cpu_share.c). */
void zero_nap_barrier(MPI_Comm comm, long nap_ns);

/* The CPU-sharing term's inputs (cpu_share.c, calibrate.c). CPU rates,
 * each the process's CPU seconds (every thread) over its best pass, NaN
 * when the pass fails its check: */
double zero_model_measure_gemm_cpu(const struct nn_gpt_config *cfg, int B, int reps); /* FLOPs per CPU s */
double zero_model_measure_adam_cpu(size_t n, int reps);                                /* params per CPU s */
double zero_model_measure_copy_cpu(size_t bytes, int reps);                            /* memcpy B per CPU s */
/* Collective over comm: rank 0 sends `bytes` to rank 1 through MPI (the
 * run's own transport: shared memory on one host, the kernel's TCP between
 * vcluster nodes), `reps` times, both napping 1 ms between MPI_Tests
 * (no spin counted), the other ranks napping in a barrier; on rank 0 the
 * bytes moved per CPU second per side, 2*bytes / (the sender's + the
 * receiver's process CPU seconds, best pass each), NaN when a pass's
 * bytes arrive wrong; 0 on other ranks or with one rank. */
double zero_model_measure_wire_cpu(MPI_Comm comm, size_t bytes, int reps);
/* One rank as the host grouping sees it: its kernel (boot_id), CPU set
 * and role. */
struct zero_cpu_who {
    char key[64];
    unsigned char mask[128]; /* CPU_SETSIZE bits */
    int role;                /* enum zero_role */
};
/* Ranks on one kernel with overlapping CPU sets share the union of their
 * sets: the groups into out (n entries at most), their count (-1: out of
 * memory). */
int zero_cpu_hosts_of(const struct zero_cpu_who *ranks, int n, struct zero_model_host *out);
/* --compute-threads: 0 when 0 <= n <= 4 x the PUs this process may use,
 * else -1 with one line naming the flag in err. */
int zero_compute_threads_check(long long n, char *err, size_t len);
/* A worker's compute threads (zero/compute_threads.c): n >= 1 sets
 * OpenBLAS's (process-wide) and the calling thread's OpenMP threads to n,
 * 0 leaves the defaults; got[0], got[1]: OpenBLAS's and OpenMP's counts
 * after it (what the run computes on). Call on the worker's compute thread
 * before its calibration and steps (they must use the same count). */
void zero_compute_threads_apply(int n, int got[2]);
/* A worker's calibration in one go: rate = {GEMM FLOP/s, GEMM FLOPs per
 * CPU s, Adam params/s, Adam params per CPU s}, from the same passes. */
void zero_model_measure_worker(const struct nn_gpt_config *cfg, int B, int reps, size_t adam_n, double rate[4]);
/* Collective over comm (every role): mine_cpu = this worker's GEMM and
 * Adam CPU rates (zero_model_measure_worker; ignored elsewhere); rank 0
 * measures its copy rate while the others nap, then ranks 0 and 1 the
 * transport's (zero_model_measure_wire_cpu), and cpu_copy_Bps is the
 * lower of the two (TCP between vcluster nodes costs several memcpys a
 * byte: syscalls, skbs, the veth and tc); rank 0 gets the slowest
 * of each and the host groups in in (cpu_gemm_flops, cpu_adam_params_s,
 * cpu_copy_Bps, hosts, nhosts; *hosts is rank 0's to free). 0, or -1 on
 * rank 0 with one line in err. The PS's CPU rate comes from
 * zero_model_measure_ps. */
int zero_model_calibrate_cpu(MPI_Comm comm, enum zero_role role, const double mine_cpu[2], struct zero_model_in *in,
                             struct zero_model_host **hosts, char *err, size_t errlen);

/* The roles' sharing, timed (loaded.c; collective over z->comm), in
 * ZERO_LOADED_ROUNDS rounds so that both sides of each ratio see the same
 * moment of a shared machine. A round: alone, the workers time
 * zero_block_passes side by side (the others nap 1 ms), then PS ranks
 * given ps time zero_model_measure_ps (one pass); together, the workers
 * time the passes again with, when worker_poller, a thread of their own
 * polling MPI and napping worker_nap_s (disdp's agent, zero3-overlap's
 * progress thread), passing on, untimed, until every rank is done
 * (ZERO_BLOCK_PASSES more at most), while
 * the PS times its update again and every other rank polls and naps
 * others_nap_s (as it waits in the mode). Out: compute_x, the median over
 * rounds of the slowest worker's median pass together / alone; ps_x, of
 * the slowest PS's rate alone / together (0: no PS given); block_s and
 * ps_params_s, the medians of the together sides. 0, or -1 with the
 * failing rank's line in err on every rank. */
#define ZERO_LOADED_ROUNDS 3
struct zero_loaded_opts {
    int worker_poller;
    double worker_nap_s, others_nap_s;
    const struct zero_ps_calib *ps; /* PS ranks: their update alone and under the load; NULL: they poll */
};
struct zero_loaded {
    double compute_x, ps_x, block_s, ps_params_s;
};
int zero_model_measure_loaded(struct zero_run *z, const struct zero_loaded_opts *o, struct zero_loaded *out,
                              char *err, size_t errlen);
/* The model's compute_load_x: loaded_s / alone_s; NaN unless both are
 * finite and > 0. */
double zero_load_x(double loaded_s, double alone_s);

/* --- end of model, interference, closed forms --- */

#endif
