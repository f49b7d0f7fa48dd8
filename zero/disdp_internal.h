/* Internal to zero/ (the folder's one public header is zero.h): the disdp
 * mode's pieces, for its files and tests/unit/test_disdp.c.
 *
 * DisDP's push/pull protocol (issue 19, ../shared/papers/disdp.md §3.2,
 * §7.5) on MPI: W workers, K switch ranks and N parameter servers in one
 * communicator (workers 0..W-1, switches W..W+K-1, PSes W+K..W+K+N-1).
 *
 * - Worker: its compute thread makes no MPI call. It posts descriptors
 *   (pull a layer's parameters before forward and again before backward,
 *   push its gradient after backward) to an agent thread (the SmartNIC
 *   stand-in), which does the MPI traffic and flags each descriptor done;
 *   both sides poll and sleep, never spin.
 * - Switch (the Tofino stand-in): owns chunk c of layer l when
 *   (l + c) % K is its index; sums the W pushes of a chunk in worker order
 *   (int32 fixed point with MB_DISDP_AGG_FIXED: order-independent, exact),
 *   checks the linear checksum (the reduced block's sum equals the sum of
 *   the senders' sums) and forwards the sum to the layer's PS; multicasts
 *   the PS's parameter chunks to the W workers.
 * - PS: owns layer l when l % N is its index; keeps P32, m, v (and the
 *   16-bit image the workers pull) in an mb_ostore (files in a folder) and
 *   runs nn_adam_step on the whole layer when its summed gradient is in;
 *   synchronous: step s+1's parameters go out after step s's updates.
 *
 * Wire: parameters as fp32 (the master weights, as ZeRO-3's gathers carry
 * them) or the 16-bit image (fp16/bf16) the PS's Adam writes; gradients as
 * 4 bytes (int32 fixed point or fp32) per element, each gradient chunk
 * followed by a 16-byte trailer (sum, sum of magnitudes) that the payload
 * counters leave out. Messages are tagged by (phase, layer); the order of
 * chunks and steps follows from MPI's non-overtaking rule.
 *
 * Faults (MB_FAULT_INJECT): corrupt-grad flips bit 30 of a gradient
 * element at a seeded step, layer, chunk, worker and position after its
 * sender summed it; the switch reports step, layer, chunk and the rank.
 * corrupt-state and write-error are mb_ostore's (they name the tensor). */
#ifndef MB_ZERO_DISDP_INTERNAL_H
#define MB_ZERO_DISDP_INTERNAL_H

#include "../nn/nn.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum mb_disdp_agg { MB_DISDP_AGG_FP32 = 0, MB_DISDP_AGG_FIXED = 1 };
enum mb_disdp_role { MB_DISDP_WORKER = 0, MB_DISDP_SWITCH = 1, MB_DISDP_PS = 2 };
enum mb_disdp_phase { MB_DISDP_FWD = 0, MB_DISDP_BWD = 1 };

#define MB_DISDP_TRAILER 16       /* bytes after each gradient chunk: double sum, double |sum| */
#define MB_DISDP_FIXED_BITS 20    /* default fraction bits of the fixed-point gradients */

struct mb_disdp_cfg {
    MPI_Comm comm;              /* W + K + N ranks */
    int W, K, N;
    int nlayers;
    const uint64_t *numel;      /* parameters per layer */
    size_t chunk_elems;         /* elements per chunk; 0 = 65536 */
    enum nn_dtype wire;         /* NN_F32, NN_F16 or NN_BF16: parameters on the wire */
    enum mb_disdp_agg agg;      /* pushed gradients: int32 (already fixed point) or fp32 */
    int micro;                  /* micro-batches per worker and step (2 pulls each); 0 = 1 */
    /* What the PS multiplies the summed gradient by: fixed, in double
     * before one rounding to fp32 (Adam's scale then 1); fp32, Adam's
     * scale. 0: 1/W (times 2^-MB_DISDP_FIXED_BITS when fixed). */
    double grad_scale;
    int steps;                  /* steps the test driver runs (the roles serve one per call) */
    uint64_t seed;              /* fault positions */
    double poll_sleep_s;        /* nap when nothing moved; 0 = 20 us */
    /* Optional: called by the PS (and switch) as each step's layer is
     * served, so a program can feed its watchdog (step, layer). */
    void (*on_progress)(void *ctx, int step, int layer);
    void *progress_ctx;
    /* Optional: the PS now waits for (then updates) this layer's gradient. */
    void (*on_layer)(void *ctx, int layer);
    void *layer_ctx;
};

/* Checks the counts and the dtype against the communicator: 0, or -1 with
 * one line naming what is wrong. Collective-free. */
int mb_disdp_cfg_check(const struct mb_disdp_cfg *c, char *err, size_t errlen);
/* This rank's role and its index within the role. */
enum mb_disdp_role mb_disdp_role_of(const struct mb_disdp_cfg *c, int rank, int *index);
size_t mb_disdp_chunk_elems(const struct mb_disdp_cfg *c);
size_t mb_disdp_nchunks(const struct mb_disdp_cfg *c, int layer);
/* Chunk c of a layer: first element and element count. */
void mb_disdp_chunk_range(const struct mb_disdp_cfg *c, int layer, size_t chunk, size_t *off, size_t *n);
int mb_disdp_switch_rank(const struct mb_disdp_cfg *c, int layer, size_t chunk);
int mb_disdp_ps_rank(const struct mb_disdp_cfg *c, int layer);
int mb_disdp_tag(const struct mb_disdp_cfg *c, int grad, enum mb_disdp_phase ph, int layer);

/* ---- fixed point and the linear checksum (disdp_fixed.c) --------------- */

/* q[i] = round(g[i]·2^bits); -1 (naming the element) when |q| could
 * overflow an int32 sum of W of them, or g is not finite. */
int mb_disdp_quantize(const float *g, size_t n, int bits, int W, int32_t *q, char *err, size_t errlen);
/* g[i] = (float)(q[i]·scale), computed in double and rounded once. */
void mb_disdp_dequantize(const int32_t *q, size_t n, double scale, float *g);
/* cfg's grad_scale with its default. */
double mb_disdp_grad_scale(const struct mb_disdp_cfg *c);
int mb_disdp_micro(const struct mb_disdp_cfg *c);
/* The trailer of a 4-byte block (int32 when fixed, else fp32). */
void mb_disdp_block_sums(const void *blk, size_t n, enum mb_disdp_agg agg, double *sum, double *abs_sum);
/* 1 when a reduced block's sum matches the senders' sums: exact for
 * fixed, within (W+1)·2^-23·Σ|g| for fp32 (each reduced element's rounding
 * error is at most (W-1)·u·Σ_w|g_w|, the double sums add less); NaN fails. */
int mb_disdp_sums_match(enum mb_disdp_agg agg, int W, double got, double want, double abs_sum);

/* ---- the worker's agent (disdp_agent.c) -------------------------------- */

struct mb_disdp_agent;
struct mb_disdp_op;
struct mb_disdp_agent_opts {
    double link_gbps;           /* > 0: every byte paced per direction by mb_link (in process) */
    int cpu;                    /* hwloc PU for the agent thread; -1: not pinned */
};
struct mb_disdp_stats {
    uint64_t sent_bytes, recv_bytes;     /* payload: gradients out, parameters in */
    uint64_t trailer_bytes;              /* checksum trailers sent */
    uint64_t pulls, pushes;
    double agent_cpu_s, link_paced_s;
};
/* Starts the agent thread of a worker rank (needs MPI_THREAD_MULTIPLE).
 * NULL with the reason. */
struct mb_disdp_agent *mb_disdp_agent_start(const struct mb_disdp_cfg *c, const struct mb_disdp_agent_opts *o,
                                            char *err, size_t errlen);
/* Descriptors, in the schedule's order: pull layer l's parameters (wire
 * dtype, numel elements) into dst; push its gradient g (numel int32 fixed
 * point or fp32, as cfg->agg says; read until the op is done). The memory
 * lives until the op is waited for. */
struct mb_disdp_op *mb_disdp_pull(struct mb_disdp_agent *a, int layer, enum mb_disdp_phase ph, void *dst);
struct mb_disdp_op *mb_disdp_push(struct mb_disdp_agent *a, int layer, const void *g);
/* Waits (poll and sleep) and frees the op: 0, or -1 with the agent's error. */
int mb_disdp_wait(struct mb_disdp_agent *a, struct mb_disdp_op *op, char *err, size_t errlen);
/* 1 done, 0 not yet, -1 the agent failed. */
int mb_disdp_test(struct mb_disdp_agent *a, const struct mb_disdp_op *op);
void mb_disdp_agent_stats(struct mb_disdp_agent *a, struct mb_disdp_stats *s);
/* Finishes what is posted, stops the thread, fills *final (may be NULL)
 * with the counters and the agent's CPU seconds; 0 or -1 with the first
 * error. */
int mb_disdp_agent_stop(struct mb_disdp_agent *a, struct mb_disdp_stats *final, char *err, size_t errlen);

/* ---- the switch (disdp_switch.c) ---------------------------------------- */

struct mb_disdp_switch_stats {
    uint64_t grad_chunks, param_chunks, in_bytes, out_bytes;
};
struct mb_disdp_switch;
struct mb_disdp_switch *mb_disdp_switch_new(const struct mb_disdp_cfg *c, char *err, size_t errlen);
/* Serves one step; 0, or -1 with the reason (a corrupt gradient: "step S
 * layer L chunk C: rank R's gradient fails the linear checksum", steps
 * counted from 1). */
int mb_disdp_switch_step(struct mb_disdp_switch *s, char *err, size_t errlen);
void mb_disdp_switch_stats(const struct mb_disdp_switch *s, struct mb_disdp_switch_stats *st);
void mb_disdp_switch_free(struct mb_disdp_switch *s);

/* ---- the parameter server (disdp_ps.c) ---------------------------------- */

struct mb_disdp_ps_opts {
    const char *dir;            /* mb_ostore's folder */
    int nfiles;                 /* 0 = 1 */
    double file_gbps;           /* mb_ostore's per-file cap; 0: none */
    int buffered;
    struct nn_adam hp;
    /* Writes layer l's initial fp32 parameters. */
    void (*init)(void *ctx, int layer, float *p32, uint64_t n);
    /* Optional: called with each owned layer's P32 after the last step. */
    void (*final)(void *ctx, int layer, const float *p32, uint64_t n);
    void *ctx;
    void (*on_span)(void *ctx, const char *what, const char *name, double start, double end);
    void *span_ctx;
};
struct mb_disdp_ps_stats {
    uint64_t layers, updates, param_bytes_out, grad_bytes_in;
    double adam_s, io_busy_s, stall_s;
    uint64_t io_bytes;          /* read and written through the store (set-up included) */
};
struct mb_disdp_ps;
/* Opens the store and writes every owned layer's initial state. */
struct mb_disdp_ps *mb_disdp_ps_open(const struct mb_disdp_cfg *c, const struct mb_disdp_ps_opts *o, char *err,
                                     size_t errlen);
/* Serves one step: parameters out (2 per micro-batch), gradients in,
 * every owned layer's update written. 0, or -1 with the reason. */
int mb_disdp_ps_step(struct mb_disdp_ps *p, char *err, size_t errlen);
/* Calls o->final with each owned layer's P32 (read from the store). */
int mb_disdp_ps_final(struct mb_disdp_ps *p, char *err, size_t errlen);
void mb_disdp_ps_stats(const struct mb_disdp_ps *p, struct mb_disdp_ps_stats *st);
/* Drains and closes the store (its files removed). */
void mb_disdp_ps_close(struct mb_disdp_ps *p);
/* Collective over c->comm, every rank (ps: this rank's PS or NULL): each
 * PS's store files (all nfiles of them) reach the ranks of its host, where
 * zero_disdp_remove_files (zero.h) removes them unless the run ended
 * through mb_disdp_files_disarm (the teardown): a SIGKILLed PS leaves no
 * files (disdp_cleanup.c). 0, or -1 (MPI, or more than 256 store files
 * on one host: those past it would be left). */
int mb_disdp_files_share(const struct mb_disdp_cfg *c, struct mb_disdp_ps *ps);
void mb_disdp_files_disarm(void);
/* The store (a program registers mb_ostore_unlink as a clean-up hook). */
struct mb_ostore *mb_disdp_ps_store(struct mb_disdp_ps *p);

/* ---- shared pieces (disdp_wait.c) --------------------------------------- */

/* MPI_Testall in a loop with a nap between tries; 0, or -1 (MPI error). */
int mb_disdp_waitall(const struct mb_disdp_cfg *c, int n, MPI_Request *r);
void mb_disdp_nap(const struct mb_disdp_cfg *c);
/* The corrupt-grad position when MB_FAULT_INJECT asks for it: 1 and the
 * step, layer, chunk, worker and element in the chunk; 0 otherwise. */
int mb_disdp_grad_fault(const struct mb_disdp_cfg *c, int *step, int *layer, size_t *chunk, int *worker,
                        size_t *elem);

#endif
