/* movebench ratel/: Ratel's (ICDE'25, "LoHan") planning math for
 * fine-tuning a GPT whose states live on storage: the iteration-time
 * model (Eqs. 1-5), Algorithm 1 (which activations to swap out of the
 * device and which to recompute, Eqs. 6-8, cases 1-3), and the --plan
 * accounting (bytes per tier, fit under device / host / storage budgets,
 * the largest model per host budget). No I/O, no threads: a trainer feeds
 * it rates from a profiling iteration and executes the plan with nn/'s
 * per-tensor release/attach. Depends on nn/ and common/ only.
 * Background: shared/papers/ratel.md. */
#ifndef MB_RATEL_H
#define MB_RATEL_H

#include "../nn/nn.h"

#include <stddef.h>
#include <stdint.h>

/* ===== inputs of the model (the paper's Table I) ======================== */

/* Rates from the profiling iteration; bytes/s and FLOP/s. The paper has
 * one BW_G for the duplex device link; we keep a rate per direction. */
struct ratel_hw {
    double gemm_flops;   /* THP_G: measured GEMM rate of the device */
    double link_g2m;     /* device -> host (activations out, G16 out) */
    double link_m2g;     /* host -> device (P16 in, activations back) */
    double stor_read;    /* BW_S2M: storage -> host */
    double stor_write;   /* BW_M2S: host -> storage */
    double mem_avail;    /* MEM_M^avail: host bytes free for activations */
    /* CPU sharing (not in the paper: here the emulated GPU's GEMMs, the
     * store's Adam, CRC32C and I/O submission and the link's copy threads
     * all run on the host's cores). 0 cores: no CPU term. */
    double cores;        /* CPUs this process may run on */
    double cpu_per_flop; /* CPU-s per GEMM FLOP (the GEMMs' threads) */
    double cpu_per_link_byte; /* CPU-s per byte the link's copy threads move */
    double cpu_store_f, cpu_store_b; /* CPU-s of everything else (the store:
                          * P16 reads and their CRC32C in forward; Adam, CRC32C,
                          * I/O of the states in backward) per iteration */
    double bwd_share_s;  /* seconds backward's compute loses to the threads
                          * beside it (the store's Adam, CRC32C and I/O on the
                          * same cores): ratel_share_calibrate; 0: none */
    double store_tail_s; /* seconds backward waits at its end for the store
                          * (the last tensors' update and writes, after the
                          * last gradient: the flow shop's tail, which no
                          * overlap hides), the profiling step's drain under
                          * an overlapped order; on T_b's compute and CPU
                          * paths. 0: none (the paper's Eq. 5) */
};

/* Per-iteration totals of the model being trained. */
struct ratel_model {
    double params;       /* P */
    double flops_fwd;    /* FLOP_f (backward without recompute = 2 FLOP_f) */
    double flops_rc_all; /* FLOP_r when nothing intra is swapped (the paper:
                          * FLOP_f; with nn/'s partial recompute: the sum of
                          * the units' FLOPs) */
    double act_all;      /* A_all: every unit's bytes */
    double act_inter;    /* A_interBlock: the minimum to swap */
    double read_ahead;   /* optimizer-state bytes read in forward, not in
                          * backward (the trainer's opts.read_ahead; 0 in the
                          * paper's model) */
};

/* One swappable tensor (Algorithm 1's "layer": Ratel decides per
 * operator output). OB = flops / bytes. */
struct ratel_unit {
    double bytes, flops;
    int inter;           /* 1: an inter-block activation (a block's input) */
    int layer, tensor;   /* nn layer index; intra tensor index (-1: inter) */
    /* 0: the unit stands alone. Otherwise the units of one layer sharing
     * a group are one step of nn's partial recompute: the step reruns
     * (all their FLOPs spent) unless every one of them is present, so
     * ratel_act_choose swaps them together or not at all (their FLOPs
     * summed are the group's; how they are split among them is moot) */
    int group;
};

/* ===== iteration-time model (Eqs. 1-5) ================================== */

enum ratel_bound {
    RATEL_BOUND_COMPUTE = 0, /* device GEMMs (+ recompute in backward) */
    RATEL_BOUND_G2M,         /* device -> host link */
    RATEL_BOUND_M2G,         /* host -> device link */
    RATEL_BOUND_STORAGE,     /* storage, reads + writes (simplex) */
    RATEL_BOUND_CPU,         /* the host's cores, shared by all of the above */
    RATEL_BOUND_COUNT
};
const char *ratel_bound_name(enum ratel_bound b);

struct ratel_times {
    double t_f, t_b, t_iter;
    double f_terms[RATEL_BOUND_COUNT], b_terms[RATEL_BOUND_COUNT]; /* each max's terms, by enum ratel_bound */
    enum ratel_bound bound_f, bound_b;
    double act_storage;            /* alpha * A_G2M: swapped bytes on storage */
};
/* T_f = max(FLOP_f/THP, A/BW_g2m, 2P/BW_m2g, 2P/BW_S2M + aA/BW_M2S)
 * T_b = max((2 FLOP_f + FLOP_r)/THP, 2P/BW_g2m, (2P + A)/BW_m2g,
 *           (14P + aA)/BW_S2M + 14P/BW_M2S),  aA = max(0, A - MEM_avail).
 * A = a_g2m, FLOP_r = flops_r. T_b's compute term also carries
 * hw->bwd_share_s (the cores' sharing, calibrated in the profiling step:
 * a per-step constant, the store's work being the same whatever is swapped).
 * Both also at least the CPU-seconds they
 * need over the cores (hw->cores > 0; 0 otherwise):
 *   T_f >= (FLOP_f c_flop + (A + 2P) c_link + S_f) / cores
 *   T_b >= ((2 FLOP_f + FLOP_r) c_flop + (4P + A) c_link + S_b) / cores
 * (the link bytes are the ones of the link terms above). */
void ratel_iter_time(const struct ratel_model *m, const struct ratel_hw *hw, double a_g2m,
                     double flops_r, struct ratel_times *out);

/* The CPU-sharing inputs from one measured step (the profiling one): per
 * pass ([0] forward, [1] backward) the process's CPU-seconds, the link's
 * copy threads' and the GEMMs' (CPU in the compute calls less the link's
 * and the store's threads there); the rest of a pass is the store's (its
 * thread, the I/O engine, P16 reads' CRC32C). */
struct ratel_cpu_sample {
    double all[2], link[2], gemm[2];
    double link_bytes;   /* bytes over the link in the step, both directions */
    double flops_done;   /* the step's GEMM FLOPs, recompute included */
};
/* Sets hw's cores (the argument), cpu_per_flop (GEMM CPU over FLOPs),
 * cpu_per_link_byte (link CPU over its bytes) and cpu_store_f/_b (each
 * pass's CPU less its link's and GEMMs', at least 0). */
void ratel_cpu_inputs(const struct ratel_cpu_sample *c, double cores, struct ratel_hw *hw);

/* The cores' sharing in backward, from the profiling step only: its
 * forward's compute calls ran their GEMMs nearly alone (the store then only
 * reads P16), its backward's beside the store's Adam, CRC32C and I/O
 * threads (the overlapped orders), so backward's compute seconds less its
 * FLOPs at forward's rate is what the sharing cost it:
 *   share = bwd_s - bwd_flops * fwd_s / fwd_flops,
 * at least 0 and at most store_cpu_s, the store's CPU-seconds in that
 * backward (cpu_store_b): each of them can stop the GEMMs for at most a
 * wall second (every GEMM thread waiting at its barrier for the one
 * preempted), so more than that is not the store's doing (other
 * processes on a loaded host, whose load moved between the passes).
 * *share and 0, or -1 (share untouched) when an input is NaN, infinite,
 * <= 0 (store_cpu_s: < 0). Under the serial order the store runs in the
 * trainer's thread, not beside the GEMMs, and share comes out near 0. */
int ratel_share_calibrate(double fwd_flops, double fwd_s, double bwd_flops, double bwd_s, double store_cpu_s,
                          double *share);

/* BW_S2M = BW_M2S for Eqs. 4-5 from the profiling step: both directions'
 * bytes over the time either was in flight, at most the capped files'
 * sustained rate (nfiles x file_gbps; file_gbps <= 0: no cap). Each file's
 * token bucket lets one stripe through at once after an idle gap, and the
 * profiling step has gaps wherever storage waits on backward or Adam
 * (0.79 GB/s measured against 2 x 0.3 GB/s of caps at the quiet reference's
 * batch 8), none where storage is the bound, the only place its term
 * counts: there the spilled activations and the optimizer's traffic
 * share the files at their sustained rate. No bytes: the cap, else 1e12. */
double ratel_stor_rate(double bytes, double busy_s, int nfiles, double file_gbps);

/* ===== Algorithm 1 ======================================================= */

/* The two readings of case 1 (shared/papers/ratel.md 4.5):
 * RATEL_CASE1_BYTES: the paper's pseudo-code: every unit, inter-block ones
 *   included, walked by OB; at least A_interBlock bytes are swapped,
 *   whichever tensors they are.
 * RATEL_CASE1_INTER: the inter-block tensors are always swapped (a block's
 *   input is what recomputation starts from); the walk is over the
 *   intra-block units. */
enum ratel_case1 { RATEL_CASE1_INTER = 0, RATEL_CASE1_BYTES = 1 };
/* "inter" / "bytes": 0 and *out, or -1. */
int ratel_case1_parse(const char *s, enum ratel_case1 *out);

struct ratel_choice {
    int which_case;      /* 1: rising (swap the minimum), 2: falling (swap all), 3: interior */
    double a_g2m;        /* bytes swapped */
    double flops_r;      /* recompute FLOPs left (Eq. 7) */
    int nswap;           /* units swapped */
    struct ratel_times t;
    int steps;           /* prefixes evaluated */
};
/* Walks the units by decreasing OB from full recomputation, evaluating
 * ratel_iter_time after each, and stops at the first step that does not
 * improve once at least A_interBlock bytes are swapped (the model is
 * convex in A_G2M, so that is the minimum). swap[i] = 1 for the units
 * chosen (caller's array of n). 0, or -1 (n < 0, a unit with bytes <= 0). */
int ratel_algorithm1(const struct ratel_model *m, const struct ratel_hw *hw,
                     const struct ratel_unit *u, int n, enum ratel_case1 c1,
                     unsigned char *swap, struct ratel_choice *out);
/* The same walk never swapping more than cap bytes (Ratel+CpuAct: cap =
 * MEM_avail, no activations on storage): a unit that would overflow it is
 * skipped for the smaller ones after it; -1 also when A_interBlock is not
 * reached under cap. */
int ratel_algorithm1_capped(const struct ratel_model *m, const struct ratel_hw *hw,
                            const struct ratel_unit *u, int n, enum ratel_case1 c1, double cap,
                            unsigned char *swap, struct ratel_choice *out);
/* Fig. 9b's curve: the model at every prefix of the walk's order (the
 * inter-block units first under RATEL_CASE1_INTER), from the starting
 * point to everything swapped, whether or not Algorithm 1 would stop.
 * pts[k]: A_G2M, FLOP_r and the times after k units. Writes at most max;
 * returns the number of points (walked units + 1), or -1. */
struct ratel_point {
    double a_g2m, flops_r;
    struct ratel_times t;
};
int ratel_sweep(const struct ratel_model *m, const struct ratel_hw *hw,
                const struct ratel_unit *u, int n, enum ratel_case1 c1, struct ratel_point *pts,
                int max);
/* nn's recompute groups as units: u[0..n) with each group (same layer,
 * same nonzero group) merged into one unit of their summed bytes and
 * FLOPs, in first-seen order, into g (n entries); of[i] = unit i's group.
 * Returns the number of groups, or -1 (n < 0). */
int ratel_units_grouped(const struct ratel_unit *u, int n, struct ratel_unit *g, int *of);
/* The same over nn's recompute groups (ratel_unit's group), each one
 * point of the walk, as ratel_act_choose's Algorithm 1 walks them: the
 * swap sets the trainer runs (Fig. 9b's swept points are whole groups).
 * Returns the number of points (groups after the forced ones, plus one). */
int ratel_sweep_groups(const struct ratel_model *m, const struct ratel_hw *hw,
                       const struct ratel_unit *u, int n, enum ratel_case1 c1, struct ratel_point *pts,
                       int max);
/* Iteration time of an arbitrary swap set under the same model (FLOP_r =
 * flops_rc_all - the swapped units' FLOPs): the brute-force reference. */
double ratel_eval_set(const struct ratel_model *m, const struct ratel_hw *hw,
                      const struct ratel_unit *u, int n, const unsigned char *swap);

/* ===== activation policies (mb-ratel --act) =============================== */

/* ratel: Algorithm 1; swap-all (G10-like); inter-block (ZeRO-Infinity:
 * block inputs out, the rest recomputed); recompute-all (nothing out:
 * block inputs stay on the device); host-only (Algorithm 1 capped at
 * MEM_avail, Ratel+CpuAct). */
enum ratel_act {
    RATEL_ACT_RATEL = 0,
    RATEL_ACT_SWAP_ALL,
    RATEL_ACT_INTER_BLOCK,
    RATEL_ACT_RECOMPUTE_ALL,
    RATEL_ACT_HOST_ONLY,
    RATEL_ACT_COUNT
};
const char *ratel_act_name(enum ratel_act a);
/* A name above: 0 and *out, or -1. */
int ratel_act_parse(const char *s, enum ratel_act *out);
/* swap[] and the choice (priced by the model) under policy act. -1: a
 * bad table, or host-only when A_interBlock does not fit in MEM_avail.
 * Algorithm 1 (ratel, host-only) walks the grouped units (ratel_unit's
 * group) as one unit each, bytes and FLOPs summed, and swaps each group
 * whole; choice's nswap counts the table's units. */
int ratel_act_choose(enum ratel_act act, const struct ratel_model *m, const struct ratel_hw *hw,
                     const struct ratel_unit *u, int n, enum ratel_case1 c1,
                     unsigned char *swap, struct ratel_choice *out);
/* Activations in host memory up to MEM_avail, the rest on storage (mb-ratel's
 * trainer: every swapped tensor in host memory a 64-byte aligned block of
 * its host arena; the others mb_ostore extents, Eq. 3's alpha A_G2M).
 * ratel_host_pad_bytes: what rounding every unit up to 64 bytes adds, the
 * most alignment can waste. ratel_host_mem_avail: MEM_avail for such a
 * trainer: the arena's free bytes between steps, less the step's other
 * (transient) host bytes, its peak above its start (step_peak) less the
 * activations it swapped as allocated (step_act), less the padding. At
 * least 0. ratel_act_choose_host: ratel_act_choose for that trainer:
 * Algorithm 1 (ratel) and the fixed policies uncapped (what exceeds
 * hw->mem_avail goes to storage), host-only capped at it; -1 when nothing
 * allowed fits (host-only: A_interBlock over MEM_avail) or a bad table.
 * ratel_spill_units: which of the swapped units go to storage so that the
 * rest fit in mem_avail: whole layers' swapped units from the lowest layer
 * up (forward writes them first and backward reads them last: the most
 * time to hide both), within the last layer taken in table order, until
 * the rest fit. on_store[i] = 1 for those; returns their bytes (0: every
 * swapped unit fits in host memory; at most one unit over Eq. 3's
 * max(0, A_G2M - MEM_avail)). */
double ratel_host_pad_bytes(const struct ratel_unit *u, int n);
double ratel_host_mem_avail(uint64_t free_bytes, uint64_t step_peak, uint64_t step_act,
                            const struct ratel_unit *u, int n);
int ratel_act_choose_host(enum ratel_act act, const struct ratel_model *m, const struct ratel_hw *hw,
                          const struct ratel_unit *u, int n, enum ratel_case1 c1,
                          unsigned char *swap, struct ratel_choice *out);
double ratel_spill_units(const struct ratel_unit *u, int n, const unsigned char *swap, double mem_avail,
                         unsigned char *on_store);
/* A swap set as text and back (mb-ratel --swap-set: one run's pick given
 * to another, so two optimizer orders of one batch run the same policy):
 * hex digits in unit order, digit k holding units 4k..4k+3, the lowest bit
 * the first; exactly (n + 3) / 4 digits. format: writes them (buf of at
 * least (n + 3) / 4 + 1), returns the count or -1 when len is short.
 * parse: swap[0..n) from the text; 0, or -1 with one line in err (a
 * length other than the table's, a digit that is not hex, a bit past the
 * table, a recompute group split: nn reruns a group unless all of it is
 * present, so a split group would be priced as recompute saved that
 * backward still spends). */
int ratel_swap_set_format(const unsigned char *swap, int n, char *buf, size_t len);
int ratel_swap_set_parse(const char *hex, const struct ratel_unit *u, int n, unsigned char *swap, char *err,
                         size_t errlen);
/* The choice for a given swap set (the model's price of it, which_case 0):
 * 0, or -1 on a bad table. */
int ratel_act_given(const struct ratel_model *m, const struct ratel_hw *hw, const struct ratel_unit *u, int n,
                    const unsigned char *given, unsigned char *swap, struct ratel_choice *out);
/* Of the units of nn layer `layer`: the intra tensors to swap (bit i =
 * intra tensor i, the argument of nn_layer_intra_release) and whether its
 * input is swapped (*inter, may be NULL). */
unsigned ratel_layer_mask(const struct ratel_unit *u, int n, const unsigned char *swap, int layer,
                          int *inter);

/* ===== a GPT's units and totals ========================================== */

/* Units of cfg at micro-batch B: per block its input (inter) and its 9
 * intra tensors, the head's input and 3 intra tensors (nn_gpt_intra_*).
 * Grouped as nn's partial recompute reruns them (group): a block's
 * xhat1+rstd1 (layer norm 1), qkv, probs+att (attention), and
 * xhat2+rstd2+h1+gl (the output projection, layer norm 2, W1 and GELU:
 * W1's step reads the y that layer norm 2's leaves in the workspace, so
 * it pulls that step in); the head's three (its whole forward reruns).
 * Writes at most max; returns the count (call with max 0 to size). */
int ratel_gpt_units(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                    struct ratel_unit *out, int max);
/* Recompute priced by time. nn's accounting counts a block's elementwise
 * work (layer norms, softmax, GELU) as 0 FLOPs, and that is most of what
 * Algorithm 1 leaves to recompute: 48.3 GFLOP took 0.82 s at batch 10 in
 * the quiet reference of e98013f, 0.3 s at the GEMM rate. out = u, but
 * each block unit's FLOPs become the seconds of the forward stages its
 * group reruns (fwd: one forward of every block, timed per stage; groups
 * 1-4 are LN1 | bias+QKV GEMM | scores, softmax, values | bias+O GEMM,
 * LN2, W1 GEMM, bias+GELU), over cfg->layers, at rate (FLOP/s), shared in
 * the group by FLOPs (by bytes where it has none); the head's and the
 * inter units stay. Returns out's FLOPs summed (FLOP_r with nothing
 * swapped), or -1 (out = u) when fwd times none of them or rate <= 0. */
double ratel_rc_price_units(const struct nn_gpt_config *cfg, const struct nn_stage_times *fwd, double rate,
                            const struct ratel_unit *u, int n, struct ratel_unit *out);
/* The model's totals from nn_gpt_account and the units. */
void ratel_gpt_model(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                     struct ratel_model *m);

/* ===== --plan: bytes per tier and fit ===================================== */

struct ratel_budget {
    uint64_t dev_mem;    /* device arena */
    uint64_t host_mem;   /* host budget */
    uint64_t storage;    /* storage capacity, 0: unlimited */
    int host_only_act;   /* 1: activations may not go to storage (Ratel+CpuAct) */
    uint64_t update_chunk; /* the store's update chunk (0: RATEL_UPDATE_CHUNK) */
};

struct ratel_plan {
    uint64_t params;
    /* storage: P32 + Adam m, v + P16 = 14P (nn_gpt_account: opt_bytes +
     * param_bytes), plus the activations that overflow the host */
    uint64_t stor_states, stor_act;
    /* host: P16 staging (2 layers), G16 landing (2 layers), the optimizer's
     * in-flight tensors (3 layers of P32, m, v, P16: read-ahead R(i-1),
     * Adam C(i), write-behind W(i+1)), then swapped activations */
    uint64_t host_fixed, host_act;
    /* host_fixed: the trainer's host arena without activations, exactly;
     * host_store: what the trainer keeps beside it in the same budget
     * (ratel_host_beside_bytes: mb_ostore's 3 step buffer sets of the
     * largest update unit (RATEL_UPDATE_CHUNK, or the largest layer when
     * smaller), 14 bytes a parameter, and unless host-only the
     * activations' staging slots, RATEL_ACT_STAGING_BYTES) */
    uint64_t host_store;
    /* device: ratel_dev_bytes(RATEL_SYS_RATEL), the trainer's arena peak */
    uint64_t dev_need;
    uint64_t act_swap;   /* bytes swapped (the argument) */
    int fits_dev, fits_host, fits_storage, fits;
    char why[160];       /* the first budget that does not fit, or "" */
};
/* The trainer's staging slots for activations on storage (16 chunks of
 * 4 MiB, beside the host arena in --host-mem: the artifact's activation
 * buffers). */
#define RATEL_ACT_STAGING_BYTES ((uint64_t)16 * (4u << 20))
/* Plans cfg at batch B swapping act_swap bytes (< act_inter: act_inter). */
void ratel_plan(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                const struct ratel_budget *b, uint64_t act_swap, struct ratel_plan *out);
/* --plan's table: a line per tier (device, host, storage) with what it
 * holds, its bytes, the budget and fits/over, then the verdict. Returns
 * what snprintf would (truncated when >= len). */
int ratel_plan_format(const struct ratel_plan *p, const struct ratel_budget *b, char *buf,
                      size_t len);
/* The largest of the Table IV presets (gpt-6b ... gpt-412b) that fits at
 * batch B swapping A_interBlock: its name, or NULL when none does. */
const char *ratel_largest_preset(int B, struct nn_precision prec, const struct ratel_budget *b,
                                 struct ratel_plan *out);
/* The most layers (1..max_layers) of cfg's shape that fit (Fig. 6's
 * "binary search L"): 0 when even one does not. */
int ratel_largest_layers(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         const struct ratel_budget *b, int max_layers);
/* The largest micro-batch (1..max_batch) of cfg that fits (a --batch
 * over it is refused before any work): 0 when B = 1 does not. */
int ratel_largest_batch(const struct nn_gpt_config *cfg, struct nn_precision prec,
                        const struct ratel_budget *b, int max_batch);

/* ===== the trainer (trainer.c): mb-ratel's mechanism ======================
 * One GPT trained layer by layer the way Ratel runs it, with every tier
 * emulated on this host: the device is an mb_arena of dev_mem that nn's
 * layers, workspace and hidden states are allocated from (nn's allocator
 * hook); the host is an mb_arena of host_mem less what the store and the
 * activations' staging slots hold beside it (P16 staging, G16 landing,
 * swapped activations); the link between them is an mb_link (P16 staged
 * per layer, double-buffered; G16 copied out as produced; swapped
 * activations out after forward and back before backward); P32, m, v and
 * P16 live in an mb_ostore on dir, updated by mb_ostore_step with
 * nn_adam_step (synchronous: every step drained before the next forward).
 * Systems: ratel (states on storage, the order given, --act's policy),
 * zero-infinity (states on storage, the optimizer after backward in the
 * serial order, block inputs swapped, the rest recomputed), zero-offload
 * (states in host memory, Adam on the host as gradients arrive,
 * activations kept on the device) and no-offload (everything on the
 * device). The first step is the profiling iteration: it runs the
 * inter-block policy, measures the GEMM, link and storage rates, and the
 * policy's choice for the later steps is made from them. */
#include "../offload/aio.h"

enum ratel_system {
    RATEL_SYS_RATEL = 0,
    RATEL_SYS_ZERO_OFFLOAD,
    RATEL_SYS_ZERO_INFINITY,
    RATEL_SYS_NO_OFFLOAD,
    RATEL_SYS_COUNT
};
const char *ratel_system_name(enum ratel_system s);
/* host_arena.c: the bytes the trainer of system sys under policy act needs
 * in its host arena at the least (--host-mem less ratel_host_beside_bytes):
 * the P16 staging and G16 landing slots as setup takes them
 * and, with the states on storage, the block inputs the first two steps
 * swap (later ones send what exceeds MEM_avail to storage), each rounded
 * to 64 as allocated (act: unused since swap-all may spill too).
 * 0 where activations stay on the device. */
uint64_t ratel_host_arena_need(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                               enum ratel_system sys, enum ratel_act act);
/* The host bytes that trainer keeps beside its arena, within --host-mem
 * all the same (the paper's MEM_avail is what the host has left after the
 * optimizer's and prefetch buffers): mb_ostore's buffers
 * (mb_ostore_host_bytes) and, unless act is host-only, the activations'
 * staging slots (RATEL_ACT_STAGING_BYTES). The arena is --host-mem less
 * these; 0 without a store (zero-offload, no-offload). chunk: the store's
 * update chunk in elements (0: RATEL_UPDATE_CHUNK). */
uint64_t ratel_host_beside_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                                 enum ratel_system sys, enum ratel_act act, uint64_t chunk);
/* dev_bytes.c: the device arena's bytes exactly as the trainer of system
 * sys allocates them (its peak; --plan's device need is the ratel one):
 * nn's workspace, two shared intra regions (ratel, zero-infinity) or every
 * layer's own intra tensors, every layer's input, two hidden states and
 * their gradients, two P16 and two G16 slots (no-offload: the states). */
uint64_t ratel_dev_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         enum ratel_system sys);
/* One shared region: the largest layer's intra tensors, each 64-aligned. */
uint64_t ratel_dev_region_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec);
int ratel_system_parse(const char *s, enum ratel_system *out);

#define RATEL_READ_AHEAD_MAX MB_OSTORE_SETS
/* The store updates a layer in chunks of this many elements (mb_ostore's
 * chunk, DeepSpeed's sub_group_size), last to first as the layer's G16
 * lands: the paper's AGO runs per tensor, and a block's largest tensors
 * at hidden 768 have 4h^2 = 2.4M elements. Its 3 buffer sets then take
 * 88 MB of the host budget, not 3 x 14 bytes x the largest layer (0.30 GB
 * at the full study's shape: 60% of its --host-mem, which activations
 * need). Read-ahead reads a layer's last chunk, the first its step runs. */
#define RATEL_UPDATE_CHUNK ((uint64_t)1 << 21)
struct ratel_trainer_opts {
    struct nn_gpt_config cfg;
    int batch;
    struct nn_precision prec;   /* param and grad 16-bit (P16, G16) */
    uint64_t seed;              /* parameters (as nn_gpt_new) and fault positions */
    enum ratel_system system;
    enum ratel_act act;
    enum ratel_case1 case1;
    enum mb_ostore_order order;
    const char *dir;            /* the store's folder (ratel, zero-infinity) */
    int nfiles;
    double file_gbps;           /* per-file rate cap, <= 0: none */
    uint64_t dev_mem;           /* the device arena's capacity */
    uint64_t host_mem;          /* the host budget: the host arena is this less
                                 * ratel_host_beside_bytes (the store's buffers,
                                 * the activations' staging slots) */
    double link_gbps;           /* per direction, <= 0: memcpy speed */
    struct nn_adam hp;
    /* optional trace spans (what: "fwd", "bwd", "read", "write", "update",
     * "h2d", "d2h"; name: the layer or extent) */
    void (*on_span)(void *ctx, const char *what, const char *name, double start, double end);
    void *span_ctx;
    /* NULL: the policy (act) picks the swap set after the profiling step.
     * Else the swap set itself (ratel_gpt_units' n entries; system ratel),
     * used instead of the pick: the profiling step still runs and prices
     * it (another run's pick, so two orders compare orders only) */
    const unsigned char *swap_set;
    /* a dropped block reruns its whole forward in backward, W2 included
     * (1: as DeepSpeed's activation checkpointing, PyTorch's checkpoint,
     * does; FLOP_r = FLOP_f, Eq. 7 at no swap; zero-infinity's rule), or
     * only the steps its tensors need (0: nn's partial recompute). 1 only
     * where every block drops whole: zero-infinity, and the inter-block
     * and recompute-all rules (the model prices FLOP_r = FLOP_f) */
    int recompute_whole;
    /* the optimized order (system ratel) only: the optimizer states (P32,
     * m, v) of read_ahead layers are read during forward, while the storage
     * mostly idles, into the store's idle buffer sets (mb_ostore_read_ahead:
     * no memory beyond the steps'; at most RATEL_READ_AHEAD_MAX): first the
     * embedding's, which backward updates last, then the head's and the
     * top blocks', which it updates first. In the paper's order R(0) is
     * submitted only when layer 1's gradient lands, queued behind W(1), so
     * the step ends R(0), update, W(0) after backward's last layer (0.69 s
     * of a 9.2 s backward in a traced run at batch 10); the top layers'
     * reads leave backward's storage path, which binds once Algorithm 1
     * spills. The embedding's set is held through backward, the others are
     * used by its first steps, so two sets stay for R(i-1) and W(i) from
     * the third step on. 0: the paper's order alone */
    int read_ahead;
    /* the store's update chunk in elements (0: RATEL_UPDATE_CHUNK) */
    uint64_t update_chunk;
};

struct ratel_trainer_stats {
    int steps;
    double loss;                /* the last step's */
    double fwd_s, bwd_s, step_s, gemm_flops_done, recompute_flops;
    /* of bwd_s, the time the trainer spent in mb_ostore_step and the final
     * drain: with the serial order and in ZeRO-Infinity every update runs
     * there, so it is the storage traffic (and Adam) alone and bwd_s less
     * it the backward alone; in the other orders, the stalls */
    double store_caller_s;
    /* the store's Adam alone (its update callback), the last step: with the
     * serial order, the part of store_caller_s that is not storage traffic */
    double update_s;
    /* the last step's backward decomposed (the trainer's thread): the
     * compute calls (recompute included), of them the blocks' recompute
     * (their fused forward stages rerun inside backward), the waits for
     * swapped activations to come back (link, and storage for spilled
     * ones), and for the layer's P16 and the G16 slot. bwd_s less these and
     * store_caller_s is the rest (bookkeeping, G16 copies queued). */
    double bwd_compute_s, bwd_recompute_s, bwd_swapin_s, bwd_stage_s;
    uint64_t act_swapped;       /* bytes out over the link, the last step */
    uint64_t act_prefetched;    /* of them, bytes copied back in backward a layer ahead
                                 * (host-held ones), the last step */
    uint64_t act_stored;        /* of them, written to storage (beyond MEM_avail) */
    uint64_t act_staging;       /* host bytes of the storage path's staging slots (0: none) */
    int read_ahead;             /* layers whose optimizer states forward reads ahead */
    /* FLOP_r with nothing swapped as the model prices it after the
     * profiling step: the units' recompute priced by time
     * (ratel_rc_price_units); 0: by FLOPs (no stage timed) */
    double recompute_priced_all;
    uint64_t read_ahead_bytes;  /* their bytes (12 a parameter), a step */
    /* the last step's CPU-seconds (the whole process), and of them the
     * link's copy threads and the GEMMs (CPU in the compute calls less the
     * link's and the store's threads there); the rest is the store's */
    double cpu_s, cpu_link_s, cpu_gemm_s;
    struct ratel_choice choice; /* the policy's, made after the profiling step */
    struct ratel_hw hw;         /* measured in the profiling step */
    int choice_made;
    uint64_t dev_peak, host_peak;
    uint64_t host_beside;       /* --host-mem's bytes beside the host arena (the
                                 * store's buffers, the staging slots): host_peak
                                 * + host_beside <= host_mem */
    uint64_t host_transient;    /* the profiling step's host-arena bytes besides its
                                 * activations (MEM_avail leaves them out) */
};

struct ratel_trainer;
/* Creates the arenas, link, store and layers and writes the initial
 * states. NULL with one line in err (an arena overrun names the tier, the
 * bytes asked and free; a store failure names the file). */
struct ratel_trainer *ratel_trainer_new(const struct ratel_trainer_opts *o, char *err,
                                        size_t errlen);
/* One synchronous step on tokens/targets (batch * seq each). 0, or -1 with
 * err (a corrupt state names the tensor and offset). */
int ratel_trainer_step(struct ratel_trainer *t, const int32_t *tokens, const int32_t *targets,
                       char *err, size_t errlen);
/* Layer i's fp32 master weights (P32) and fp16 working copy (P16) now.
 * 0 or -1 with err. */
int ratel_trainer_params(struct ratel_trainer *t, int layer, float *p32, uint16_t *p16, char *err,
                         size_t errlen);
int ratel_trainer_layers(const struct ratel_trainer *t);
uint64_t ratel_trainer_layer_params(const struct ratel_trainer *t, int layer);
void ratel_trainer_stats(const struct ratel_trainer *t, struct ratel_trainer_stats *out);
/* The swap set in use (the policy's pick, or opts.swap_set, after the
 * profiling step): swap[0..n) of ratel_gpt_units' table; n must be its
 * count (else nothing is written). */
void ratel_trainer_swap(const struct ratel_trainer *t, unsigned char *swap, int n);
/* The model as the policy prices it: ratel_gpt_model at the trainer's
 * shape with forward's read-ahead, FLOP_r with nothing swapped priced by
 * time once the profiling step ran (the whole forward where the whole
 * forward reruns). */
void ratel_trainer_model(const struct ratel_trainer *t, struct ratel_model *m);
/* The unit table as the policy priced it (ratel_gpt_units' order, each
 * block unit's recompute priced by time after the profiling step); n must
 * be its count (else nothing is written). */
void ratel_trainer_units(const struct ratel_trainer *t, struct ratel_unit *u, int n);
/* Link and store counters (NULL store: states not on storage). */
struct mb_link *ratel_trainer_link(struct ratel_trainer *t);
struct mb_ostore *ratel_trainer_store(struct ratel_trainer *t);
void ratel_trainer_free(struct ratel_trainer *t);

/* cblas_sgemm's rate (FLOP/s) over one block's GEMMs (nn_block_gemm_shapes,
 * nn's GEMM peer), timed now: the median of three passes after a warm-up
 * (the trainer's FLOP rate's peer; *seconds: the median pass); 0 when out
 * of memory. */
double ratel_gemm_peer_rate(const struct nn_gpt_config *cfg, int B, double *seconds);

#endif
