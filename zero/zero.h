/* zero/ — model-sharded data parallelism (ZeRO-3, ZeRO-Offload, DisDP;
 * issue 19): the modes mb-zero runs, their step model and measurements. */
#ifndef MB_ZERO_H
#define MB_ZERO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "../collectives/coll.h"
#include "../nn/nn.h"

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
 *    max(numel_l*ps_bytes_per_param / storage_Bps, numel_l / adam_params_s).
 * X(U_l): the updates U_l run in backward order on their own cores (the
 * offload pool, the PS), each once its layer's last backward term has
 * ended and the previous update is done; X is what runs past the end of
 * backward (zero/README.md). */
struct zero_model_layer {
    uint64_t numel;             /* parameters */
    double flops_fwd, flops_bwd;
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
    double link_gbps;           /* > 0: paced link per direction; 0: the profile */
    const struct mb_coll_profile *coll; /* needed when link_gbps == 0 */
};
struct zero_model_step {
    double compute;   /* sum F_l + B_l */
    double wire;      /* the mode's communication alone (per direction, the busier) */
    double optimizer; /* Adam alone (offload: the pool's; disdp: the PS's) */
    double storage;   /* disdp: the PS's storage alone, sum numel*bytes/storage_Bps */
    double exposed_wire, exposed_optimizer;
    double step;      /* predicted seconds */
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
 * ps_bytes_per_param, link_gbps): every key present once, a finite number
 * >= 0 (link_gbps may be 0; the others > 0). Parsed into in's rates; 0,
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

/* --- end of model, interference, closed forms --- */

#endif
