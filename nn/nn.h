/* movebench nn/: the training math that the DisDP, Ratel and Hyperion
 * reproductions run. Tensors (fp32 compute, fp16/bf16 storage), one GEMM
 * interface (OpenBLAS on the host, cuBLAS on a CUDA device), a GPT-style
 * decoder (embedding, blocks, final norm + LM head + cross-entropy) with a
 * layer-granular API (parameters, gradients, inter-/intra-block saved
 * activations, their bytes and FLOPs, drop-and-recompute), GraphSAGE layers
 * (PyG SAGEConv, mean aggregator), Adam with fp32 master state, and named
 * model presets with per-layer accounting.
 *
 * Layout conventions: row-major; a batch of token activations is
 * [B*S, H]; weights are [in, out] so y = x W + b. Everything computes in
 * fp32 on the host; parameters, gradients and saved activations may be
 * stored in fp16 or bf16 and are converted on the fly. Results are
 * deterministic for a given seed and thread count. Depends only on
 * common/ and OpenBLAS. */
#ifndef MB_NN_H
#define MB_NN_H

#include <stddef.h>
#include <stdint.h>

/* ===== tensors ========================================================= */

enum nn_dtype { NN_F32 = 0, NN_F16 = 1, NN_BF16 = 2, NN_I32 = 3 };
enum nn_device { NN_HOST = 0, NN_CUDA = 1 };

#define NN_MAX_DIMS 4

struct nn_tensor {
    void *data;
    enum nn_dtype dtype;
    enum nn_device device;
    int ndim;
    size_t shape[NN_MAX_DIMS];
    size_t numel;
    int owner; /* 1: nn_tensor_free releases data; 0: a view */
};

size_t nn_dtype_size(enum nn_dtype t);
const char *nn_dtype_name(enum nn_dtype t);
/* "fp32"/"f32", "fp16"/"f16", "bf16": 0 and *out set, or -1. */
int nn_dtype_parse(const char *s, enum nn_dtype *out);

/* Allocates a zeroed owning tensor (host) or device memory (NN_CUDA,
 * needs a CUDA build and a device). 0, or -1 with the reason in err. */
int nn_tensor_alloc(struct nn_tensor *t, enum nn_dtype dtype, enum nn_device dev, int ndim,
                    const size_t *shape, char *err, size_t errlen);
/* A non-owning view of data with the given shape. */
struct nn_tensor nn_tensor_view(void *data, enum nn_dtype dtype, enum nn_device dev, int ndim,
                                const size_t *shape);
/* A 1-D view of elements [off, off + n) of a contiguous tensor. */
struct nn_tensor nn_tensor_slice(const struct nn_tensor *t, size_t off, size_t n);
void nn_tensor_free(struct nn_tensor *t);
size_t nn_tensor_bytes(const struct nn_tensor *t);

/* Conversions between fp32 and fp16 (IEEE binary16, round to nearest even)
 * or bf16 (round to nearest even), element-wise on host arrays. */
uint16_t nn_f32_to_f16(float f);
float nn_f16_to_f32(uint16_t h);
uint16_t nn_f32_to_bf16(float f);
float nn_bf16_to_f32(uint16_t h);
/* dst[i] = src[i] converted; src of dtype st, dst fp32 (load) or the
 * reverse (store). Host memory. OpenMP-threaded for large n. */
void nn_load_f32(float *dst, const void *src, enum nn_dtype st, size_t n);
void nn_store_f32(void *dst, enum nn_dtype dt, const float *src, size_t n);
/* dst[i] += src[i] with dst stored in dtype dt (accumulate in fp32). */
void nn_accum_f32(void *dst, enum nn_dtype dt, const float *src, size_t n);
/* Copies a tensor to another of the same numel, converting dtypes and
 * crossing host/device as needed. 0 or -1. */
int nn_tensor_copy(struct nn_tensor *dst, const struct nn_tensor *src);

/* ===== deterministic random numbers ==================================== */

struct nn_rng {
    uint64_t s[4];
};
void nn_rng_seed(struct nn_rng *r, uint64_t seed);
uint64_t nn_rng_next(struct nn_rng *r);
double nn_rng_uniform(struct nn_rng *r); /* [0, 1) */
double nn_rng_normal(struct nn_rng *r);
/* x[i] = (float)(std * nn_rng_normal(r)) for i < n, in that order. */
void nn_normal_f32(float *x, size_t n, double std, struct nn_rng *r);
/* Fills n fp32 values with N(0, std^2) (then stored in dtype). */
void nn_fill_normal(void *dst, enum nn_dtype dt, size_t n, double std, struct nn_rng *r);
/* x[i] in [-scale, scale), a hash of i and seed: cheap at any size,
 * OpenMP-parallel, for benchmark operands. */
void nn_fill_hashed(float *x, size_t n, uint64_t seed, double scale);

/* ===== GEMM ============================================================ */

/* C = alpha * op(A) op(B) + beta * C, row-major, op = transpose when ta/tb
 * is set; op(A) is M x K, op(B) K x N, C M x N. NN_HOST: OpenBLAS
 * cblas_sgemm; NN_CUDA: cuBLAS on device pointers (CUDA build). Returns 0,
 * or -1 (CUDA unavailable or a cuBLAS error, message via nn_gemm_error). */
int nn_gemm(enum nn_device dev, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            int lda, const float *B, int ldb, float beta, float *C, int ldc);
const char *nn_gemm_error(void);
/* Opt-in (NN_GEMM_SPLIT=1 in the environment, or this call): a host GEMM
 * of at least 2^24 multiply-adds, called outside a parallel region with
 * more than one OpenMP thread, runs as one single-threaded OpenBLAS call
 * per OpenMP thread on its share of C's rows or columns, OpenBLAS at one
 * thread meanwhile: one thread pool where OpenBLAS's threads would run
 * beside OpenMP's idle, spinning ones (reproduce/nn/README.md). With it
 * on, every host GEMM runs OpenBLAS single-threaded, so the bits are one
 * single-threaded call's whatever the thread count (OpenBLAS's threaded
 * driver blocks K differently past ~384). on: 1 or 0, or -1 to keep the
 * current setting; returns the previous one. Not thread-safe: set it
 * before the GEMMs. */
int nn_gemm_set_split(int on);
/* 1 when cuBLAS is built in and a device answers. */
int nn_gemm_cuda_available(void);

/* ===== elementwise and normalisation ops (host, fp32) =================== */
/* Each forward has its backward; rows x cols arrays are row-major. */

/* Layer norm over cols: xhat = (x - mean) * rstd, y = xhat * g + b.
 * Saves xhat and rstd[rows] (either may be NULL to skip). */
void nn_layernorm_fwd(const float *x, const float *g, const float *b, float *y, float *xhat,
                      float *rstd, size_t rows, size_t cols, float eps);
/* From xhat, rstd, g and dy: dx (overwritten), dg and db accumulated. */
void nn_layernorm_bwd(const float *dy, const float *xhat, const float *rstd, const float *g,
                      float *dx, float *dg, float *db, size_t rows, size_t cols);
/* GELU, tanh approximation (GPT-2). */
void nn_gelu_fwd(const float *x, float *y, size_t n);
/* dx = dy * gelu'(x) */
void nn_gelu_bwd(const float *x, const float *dy, float *dx, size_t n);
void nn_relu_fwd(const float *x, float *y, size_t n);
/* dx = dy where y > 0 */
void nn_relu_bwd(const float *y, const float *dy, float *dx, size_t n);
/* y[r, :] += bias */
void nn_add_bias(float *y, const float *bias, size_t rows, size_t cols);
/* db += column sums of dy */
void nn_bias_bwd(const float *dy, float *db, size_t rows, size_t cols);
/* Softmax cross-entropy over cols per row, targets[r] in [0, cols) or -1
 * (ignored). Writes probabilities into p (may alias logits). Returns the
 * summed loss and the number of counted rows in *count. */
double nn_softmax_xent_fwd(const float *logits, const int32_t *targets, float *p, size_t rows,
                           size_t cols, size_t *count);
/* dlogits = scale * (p - onehot(target)); rows with target -1 get 0. */
void nn_softmax_xent_bwd(const float *p, const int32_t *targets, float *dlogits, size_t rows,
                         size_t cols, float scale);
/* Log-softmax over cols + negative log-likelihood (GraphSAGE's head).
 * logp saved; returns summed loss over rows with targets >= 0. */
double nn_logsoftmax_nll_fwd(const float *x, const int32_t *targets, float *logp, size_t rows,
                             size_t cols, size_t *count);
/* dx = scale * (exp(logp) - onehot) */
void nn_logsoftmax_nll_bwd(const float *logp, const int32_t *targets, float *dx, size_t rows,
                           size_t cols, float scale);

/* Causal multi-head attention on qkv [B*S, 3H] (q | k | v, head h owns
 * columns h*D..h*D+D of each part): probs [B, A, S, S] saved, out [B*S, H].
 * Masked entries of probs are 0. */
int nn_attn_fwd(enum nn_device dev, const float *qkv, float *probs, float *out, size_t B,
                size_t S, size_t A, size_t D);
/* From qkv, probs and dout [B*S, H]: dqkv [B*S, 3H] (overwritten).
 * scratch: at least S*S floats. */
int nn_attn_bwd(enum nn_device dev, const float *qkv, const float *probs, const float *dout,
                float *dqkv, float *scratch, size_t B, size_t S, size_t A, size_t D);

/* ===== fused block kernels (host, fp32; fused.c, attn_batched.c) ======== */
/* The decoder block's default path: each kernel does in one OpenMP sweep
 * what the ops above do in several, and equals them within fp32 rounding
 * of a reordered sum (tests/unit/test_nn_fused.c). Column sums go by
 * fixed chunks of rows in order: same bits for any thread count. The
 * int-returning ones fail (-1) only when their partial sums cannot be
 * allocated. */

/* sum = (res + a) + bias when res or bias is given (sum may alias a),
 * then layer norm of it: y, xhat, rstd as nn_layernorm_fwd. */
void nn_residual_layernorm_fwd(const float *a, const float *res, const float *bias, float *sum,
                               const float *g, const float *b, float *y, float *xhat, float *rstd,
                               size_t rows, size_t cols, float eps);
/* dx = res + LN backward of dy (res may be NULL; dx NULL: gradients only),
 * dg and db accumulated, dbias += column sums of dx (may be NULL). */
int nn_layernorm_bwd_residual(const float *dy, const float *xhat, const float *rstd, const float *g,
                              const float *res, float *dx, float *dg, float *db, float *dbias,
                              size_t rows, size_t cols);
/* h += bias, gl = GELU(h). */
void nn_bias_gelu_fwd(float *h, const float *bias, float *gl, size_t rows, size_t cols);
/* d *= GELU'(h) in place, dbias += its column sums. */
int nn_gelu_bias_bwd(const float *h, float *d, float *dbias, size_t rows, size_t cols);
/* dbias += column sums of dy (chunked, parallel). */
int nn_bias_bwd_par(const float *dy, float *dbias, size_t rows, size_t cols);
void nn_add_bias_par(float *y, const float *bias, size_t rows, size_t cols);
/* y = xhat * g + b */
void nn_layernorm_apply(const float *xhat, const float *g, const float *b, float *y, size_t rows,
                        size_t cols);
/* out[r, :] = res[r, :] + bias (res NULL: bias alone), to preload a
 * GEMM's C for beta = 1. */
void nn_bias_preload(float *out, const float *res, const float *bias, size_t rows, size_t cols);
/* out = (res + a) + bias (out may alias a). */
void nn_residual_bias(const float *a, const float *res, const float *bias, float *out, size_t rows,
                      size_t cols);
/* GELU over one row, in the widest vectors the CPU has (gelu_simd.c):
 * h += bias, gl = GELU(h); and d *= GELU'(h), pd += d. */
void nn_gelu_fwd_row(float *h, const float *bias, float *gl, size_t n);
void nn_gelu_bwd_row(const float *h, float *d, float *pd, size_t n);
/* The GELU kernels' instruction set: "sse2", "avx2" or "avx512" (x86-64),
 * the widest supported unless NN_ISA names another. _set forces one for
 * this process (NULL: back to that choice); -1 when the CPU lacks it or
 * the name is unknown. */
int nn_gelu_isa_set(const char *name);
const char *nn_gelu_isa(void);
/* Elements above which the fused sweeps go parallel (NN_PAR_ELEMS, default 4M). */
size_t nn_fused_par_elems(void);
/* nn_attn_fwd/bwd with the heads batched: every head's score GEMMs, one
 * parallel softmax (or softmax-backward) sweep over all their rows, every
 * head's value GEMMs. The forward's softmax uses a vectorized exp (within
 * a few ulp of nn_attn_fwd's probabilities); the backward equals
 * nn_attn_bwd bit for bit. bwd's scratch: A*S*S. */
int nn_attn_fwd_batched(const float *qkv, float *probs, float *out, size_t B, size_t S, size_t A,
                        size_t D);
int nn_attn_bwd_batched(const float *qkv, const float *probs, const float *dout, float *dqkv,
                        float *scratch, size_t B, size_t S, size_t A, size_t D);

/* ===== GPT model configuration, presets, accounting ===================== */

struct nn_gpt_config {
    char name[32];
    int layers, heads, hidden, seq, vocab;
    int ffn;      /* MLP width, 4 * hidden */
};

/* Parses "layers=8,hidden=1024,heads=16,seq=128,vocab=50257[,ffn=4096]",
 * optionally after a preset name whose values the keys then override
 * ("gpt-13b,layers=4"). Without a preset every key but ffn (default
 * 4*hidden) is required. 0, or -1 with one line in err naming the bad key
 * or value (unknown key, repeated key, not a positive integer, missing
 * key, hidden not a multiple of heads). */
int nn_gpt_config_parse(const char *spec, struct nn_gpt_config *cfg, char *err, size_t errlen);

/* Named presets: "gpt-6b", "gpt-13b", "gpt-30b", "gpt-70b", "gpt-135b",
 * "gpt-175b", "gpt-276b", "gpt-412b" (Ratel Table IV, seq 1024, vocab
 * 50257) and small ones that run here: "gpt-tiny", "gpt-small",
 * "gpt-bench" (GEMM-bound, for mb-nn). 0, or -1 for an unknown name. */
int nn_gpt_preset(const char *name, struct nn_gpt_config *cfg);
/* The preset names, NULL-terminated. */
const char *const *nn_gpt_preset_names(void);

/* Storage types of a run (mixed precision: fp16 everywhere, fp32 master
 * weights and Adam moments in the optimizer). */
struct nn_precision {
    enum nn_dtype param, grad, act;
};

enum nn_layer_kind { NN_LAYER_EMBED, NN_LAYER_BLOCK, NN_LAYER_HEAD, NN_LAYER_SAGE };
const char *nn_layer_kind_name(enum nn_layer_kind k);

/* What one layer holds and costs for a micro-batch of B sequences.
 * FLOPs count GEMM and attention multiply-adds as 2 (elementwise work is
 * not counted). opt_bytes = fp32 master weights + Adam m and v = 12/param.
 * act_inter: the layer's input, kept across the pass (Ratel's inter-block
 * activations); act_intra: everything else backward needs (dropped and
 * recomputed when the layer recomputes). */
struct nn_layer_account {
    enum nn_layer_kind kind;
    uint64_t params;
    uint64_t param_bytes, grad_bytes, opt_bytes;
    uint64_t act_inter_bytes, act_intra_bytes;
    double flops_fwd, flops_bwd, flops_recompute;
};

/* Layer i of cfg (0: embedding, 1..layers: blocks, layers+1: head). */
void nn_gpt_layer_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                          int layer, struct nn_layer_account *out);
/* Sums over all layers (kind of the sum: NN_LAYER_BLOCK). */
void nn_gpt_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                    struct nn_layer_account *total);

/* The GEMMs one block runs, forward then backward (the attention ones
 * batched: count = B*A). FLOPs of a block = sum 2*M*N*K*count; its
 * recompute FLOPs the same over the `recomputed` ones. mb-nn runs
 * exactly these through plain cblas_sgemm as its peer. Returns the number
 * written (at most max). */
struct nn_gemm_shape {
    int ta, tb, M, N, K, count;
    int backward;
    int recomputed;            /* a forward GEMM that a dropped block's backward reruns */
    int stage;                 /* the enum nn_stage that runs it in the fused block */
};
int nn_block_gemm_shapes(const struct nn_gpt_config *cfg, int B, struct nn_gemm_shape *out,
                         int max);
/* Bytes the fused block's elementwise sweeps read and write (fp32, fp32
 * gradients), forward and backward: with the GEMM FLOPs, the block's
 * roofline (mb-nn). */
void nn_block_elementwise_bytes(const struct nn_gpt_config *cfg, int B, double *fwd, double *bwd);
/* Those of one stage (enum nn_stage; 0 for the GEMM stages): the sum
 * over the stages is nn_block_elementwise_bytes. */
double nn_block_stage_bytes(const struct nn_gpt_config *cfg, int B, int stage);

/* ===== layers =========================================================== */

struct nn_layer;

/* Where layers and workspaces get their memory: alloc returns bytes
 * (a multiple of 64) aligned to 64, or NULL when it refuses (a capped
 * arena that is full); free takes back what alloc gave. nn_layer_new and
 * nn_workspace_new use aligned_alloc/free (nn_alloc_default()). */
struct nn_alloc {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    void *ctx;
};
struct nn_alloc nn_alloc_default(void);

/* Scratch shared by all layers of a model (fp32 working copies of
 * weights, activations and gradients); one per model, sized for it. */
struct nn_workspace;
struct nn_workspace *nn_workspace_new(const struct nn_gpt_config *cfg, int B);
/* Bytes it takes (what a capped arena must hold for it). */
size_t nn_workspace_bytes(const struct nn_gpt_config *cfg, int B);
/* The same from allocator a (NULL: the default); NULL when it refuses. */
struct nn_workspace *nn_workspace_new_alloc(const struct nn_gpt_config *cfg, int B,
                                            const struct nn_alloc *a);
void nn_workspace_free(struct nn_workspace *ws);
/* A hook every layer using ws calls between its GEMMs (forward and
 * backward; NULL, the default: none): a caller that must keep something
 * moving while a layer computes (mb-zero's --progress poll advances its
 * collectives) does it there. Called on the computing thread. */
void nn_workspace_set_progress(struct nn_workspace *ws, void (*fn)(void *ctx), void *ctx);

/* Creates layer i of cfg for micro-batch B with the given storage types,
 * parameters initialised from seed (GPT-2: N(0, 0.02), LN 1 and 0, biases
 * 0). NULL on allocation failure. */
struct nn_layer *nn_layer_new(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                              int layer, uint64_t seed, struct nn_workspace *ws);
/* nn_layer_new with every tensor of the layer from allocator a (NULL: the
 * default). flags NN_LAYER_BIND_PARAMS / NN_LAYER_BIND_GRADS: no storage
 * of its own for the parameters / gradients; the caller binds memory
 * before forward / backward (parameters then uninitialised: see
 * nn_layer_init_params). */
#define NN_LAYER_BIND_PARAMS 1u
#define NN_LAYER_BIND_GRADS 2u
/* No memory of its own for the intra-block activations either: the caller
 * attaches memory (nn_layer_intra_attach) to every intra tensor before
 * each forward and backward, so layers can share one buffer (a trainer
 * that swaps or recomputes them). Otherwise backward allocates them. */
#define NN_LAYER_BIND_INTRA 4u
/* No memory of its own for a block's or the head's input (its inter
 * activation; the embedding keeps its token ids, the head its targets):
 * the caller binds it (nn_layer_bind_inter) before each forward and
 * backward, so a trainer that swaps the inputs out shares their buffers. */
#define NN_LAYER_BIND_INTER 8u
struct nn_layer *nn_layer_new_alloc(const struct nn_gpt_config *cfg, int B,
                                    struct nn_precision prec, int layer, uint64_t seed,
                                    struct nn_workspace *ws, const struct nn_alloc *a,
                                    unsigned flags);
void nn_layer_free(struct nn_layer *l);
/* The layer's parameters (gradients) become caller memory mem of
 * param_bytes (grad_bytes) from nn_layer_account, used as it is (no
 * copy); the layer's own storage, if any, is given back. The caller keeps
 * mem alive while the layer uses it and frees it. 0, or -1 (mem NULL). */
int nn_layer_bind_params(struct nn_layer *l, void *mem);
int nn_layer_bind_grads(struct nn_layer *l, void *mem);
/* The same for the layer's input (nn_layer_act_inter's bytes). */
int nn_layer_bind_inter(struct nn_layer *l, void *mem);
/* Writes the GPT-2 initialisation of layer `layer` from seed into the
 * layer's parameters (what nn_layer_new does): same seed, same bits. */
void nn_layer_init_params(struct nn_layer *l, uint64_t seed);
enum nn_layer_kind nn_layer_kind(const struct nn_layer *l);
/* The layer's parameters and gradients, each one contiguous tensor (its
 * storage dtype), so they can be sharded, offloaded and updated in place. */
struct nn_tensor *nn_layer_params(struct nn_layer *l);
struct nn_tensor *nn_layer_grads(struct nn_layer *l);
/* Its saved activations: inter (the input) and the intra-block tensors
 * (views; data NULL while released or dropped and not attached). */
struct nn_tensor *nn_layer_act_inter(struct nn_layer *l);
size_t nn_layer_act_intra(struct nn_layer *l, struct nn_tensor **out, size_t max);
/* Sizes and FLOPs as allocated (equal to nn_gpt_layer_account). */
void nn_layer_account(const struct nn_layer *l, struct nn_layer_account *out);

/* Forward. EMBED: in = token ids (NN_I32, B*S), out = hidden [B*S, H] fp32.
 * BLOCK: in/out hidden. HEAD: in hidden, targets (B*S, -1 = ignored),
 * returns the mean loss through *loss. Saves what backward needs. */
int nn_layer_forward(struct nn_layer *l, const void *in, float *out);
int nn_layer_forward_head(struct nn_layer *l, const float *in, const int32_t *targets,
                          double *loss);
/* Backward: dout -> din (NULL for EMBED), gradients accumulated into the
 * layer's gradient tensor. HEAD takes no dout (the loss is the end). A
 * layer whose intra activations were dropped recomputes them first. */
int nn_layer_backward(struct nn_layer *l, const float *dout, float *din);
/* Frees the intra-block activations' contents (keeps the inter one). */
void nn_layer_drop_intra(struct nn_layer *l);
/* 1 when every intra tensor is present (backward recomputes nothing). */
int nn_layer_intra_live(const struct nn_layer *l);

/* Per intra tensor i in [0, nn_layer_act_intra count): swap it out and in
 * without free or realloc, or leave it to be recomputed.
 * account: its bytes and the forward FLOPs of the step that produces it
 * (a step's FLOPs split among its outputs; elementwise work counts 0, as
 * in nn_gpt_layer_account). name: "xhat1", "qkv", "probs", ... 0 / -1. */
int nn_layer_intra_account(const struct nn_layer *l, int i, uint64_t *bytes, double *flops);
const char *nn_layer_intra_name(const struct nn_layer *l, int i);
/* The same without allocating, for any shape: the number of intra tensors
 * of layer `layer` (9 per block, 3 for the head, 0 for the embedding) and
 * tensor i's bytes and FLOPs. 0 / -1. */
int nn_gpt_intra_count(const struct nn_gpt_config *cfg, int layer);
int nn_gpt_intra_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         int layer, int i, uint64_t *bytes, double *flops);
/* release: the layer stops using tensor i's contents and hands back the
 * memory they are in (to copy out and then reuse); NULL when i is out of
 * range or already released. attach: tensor i gets memory again, mem
 * (NULL: the layer's own allocation) of its bytes, with valid contents
 * (valid = 1: swapped back in) or to be recomputed (0). Backward attaches
 * the own allocation to any released tensor left without memory and
 * recomputes only the forward steps the invalid tensors need (fused
 * path; the reference path and the head rerun their whole forward),
 * writing nothing into the present ones: gradients bit-identical to a
 * run that released nothing (fp32 storage). 0 / -1. */
void *nn_layer_intra_release(struct nn_layer *l, int i);
int nn_layer_intra_attach(struct nn_layer *l, int i, void *mem, int valid);
int nn_layer_intra_present(const struct nn_layer *l, int i);
/* FLOPs (counted as in the accounting) that the next backward will spend
 * recomputing, given what is released or dropped now. */
double nn_layer_recompute_flops(const struct nn_layer *l);
/* whole = 1: a block's recompute reruns its whole forward, the W2 GEMM
 * (whose output backward never reads) included, as PyTorch's checkpoint
 * under DeepSpeed's activation checkpointing does: FLOP_r = FLOP_f, the
 * Ratel paper's Eq. 7 at no swap. 0 (the default): only the steps the
 * missing tensors need. Gradients are the same either way. */
void nn_layer_set_recompute_whole(struct nn_layer *l, int whole);
void nn_layer_zero_grad(struct nn_layer *l);
/* Blocks run the fused kernels (1, the default) or the unfused reference
 * ops (0), which the tests compare them against. MB_NN_REFERENCE=1 in the
 * environment makes 0 the default of new layers. */
void nn_layer_set_fused(struct nn_layer *l, int fused);

/* Where a fused block's time goes: wall seconds per stage, accumulated
 * over the passes run while a stage-time record is attached (NULL: off,
 * the default; two clock reads per stage when on). Forward stages begin
 * "fwd.", backward "bwd."; a recompute counts as forward. Each stage's
 * category says what kind of work it is (gemm: the weight GEMMs; attn_gemm:
 * the per-head score and value GEMMs; softmax, layernorm, gelu,
 * bias_residual, copies: the sweeps). The reference path is not timed. */
enum nn_stage {
    NN_ST_FWD_COPIES, NN_ST_FWD_LN1, NN_ST_FWD_GEMM_QKV, NN_ST_FWD_BIAS_QKV, NN_ST_FWD_ATTN_SCORES,
    NN_ST_FWD_SOFTMAX, NN_ST_FWD_ATTN_VALUES, NN_ST_FWD_GEMM_O, NN_ST_FWD_RES_LN2, NN_ST_FWD_GEMM_W1,
    NN_ST_FWD_BIAS_GELU, NN_ST_FWD_GEMM_W2, NN_ST_FWD_RES_BIAS,
    NN_ST_BWD_COPIES, NN_ST_BWD_BIAS_B2, NN_ST_BWD_GEMM_W2, NN_ST_BWD_GELU_BIAS, NN_ST_BWD_LN_APPLY,
    NN_ST_BWD_GEMM_W1, NN_ST_BWD_LN2_RES, NN_ST_BWD_GEMM_O, NN_ST_BWD_ATTN_DP_DV,
    NN_ST_BWD_SOFTMAX, NN_ST_BWD_ATTN_DQ_DK, NN_ST_BWD_BIAS_QKV, NN_ST_BWD_GEMM_QKV,
    NN_ST_BWD_LN1_RES,
    NN_STAGE_COUNT
};
struct nn_stage_times {
    double t[NN_STAGE_COUNT];
};
const char *nn_stage_name(enum nn_stage s);
const char *nn_stage_category(enum nn_stage s);
/* The categories in a fixed order (0 .. NN_CATEGORY_COUNT-1) and the one of a stage. */
#define NN_CATEGORY_COUNT 7
const char *nn_category_name(int c);
int nn_stage_category_id(enum nn_stage s);
void nn_layer_set_stage_times(struct nn_layer *l, struct nn_stage_times *acc);

/* Plain cblas_sgemm over exactly the GEMMs one block runs, each on its
 * own contiguous operands (gemm_peer.c): mb-nn's peer for the block. */
#define NN_GEMM_PEER_MAX 32
struct nn_gemm_peer {
    struct nn_gemm_shape g[NN_GEMM_PEER_MAX];
    int ng, recompute;         /* recompute: the GEMMs marked recomputed run twice */
    float **A, **B, **C;       /* operands of g[i] (C row-major M x N) */
    double t[NN_GEMM_PEER_MAX]; /* seconds of g[i] (all its count) in the last run */
};
/* 0, or -1 when out of memory (free it either way). */
int nn_gemm_peer_init(struct nn_gemm_peer *p, const struct nn_gpt_config *cfg, int B, int recompute);
void nn_gemm_peer_free(struct nn_gemm_peer *p);
/* One pass of every GEMM, each timed; iter changes one element of each A first. */
void nn_gemm_peer_run(struct nn_gemm_peer *p, long long iter);
/* The FLOPs of one pass (2MNK per GEMM call, the recomputed ones twice). */
double nn_gemm_peer_flops(const struct nn_gemm_peer *p);
/* Freivalds' check of every C (a random vector from seed): 0, or 1 with
 * msg naming the GEMM and row. */
int nn_gemm_peer_check(const struct nn_gemm_peer *p, uint64_t seed, char *msg, size_t len);

/* A block's 12 parameter tensors, in the order of its one parameter
 * vector (block.c): their names ("ln1.g" ... "b2") and sizes. */
const char *nn_block_param_name(int i);
void nn_block_param_sizes(size_t H, size_t F, size_t n[12]);
/* An independent double-precision reference of an fp32 block's forward
 * and backward (block_check.c), for checking every element: */
struct nn_block_ref;
struct nn_block_ref *nn_block_ref_new(const struct nn_gpt_config *cfg, int B);
void nn_block_ref_free(struct nn_block_ref *r);
/* Bytes it allocates (at its first check). */
double nn_block_ref_bytes(const struct nn_gpt_config *cfg, int B);
/* Reruns l's pass in double from x and dout (l's parameters; l's
 * gradients must hold this pass's only) and compares y, dx and every
 * parameter gradient: |got - ref| <= 1e-3 (|ref| + rms of the tensor),
 * NaN and Inf fail. 0 when all pass, else 1 and msg names the first bad
 * element. */
int nn_block_ref_check(struct nn_block_ref *r, struct nn_layer *l, const float *x, const float *dout,
                       const float *y, const float *dx, char *msg, size_t len);

/* One checked fp32 block pass (block_case.c; mb-nn's block case): init
 * makes layer 1 of cfg with its parameters moved off GPT-2's 1/0 LN and
 * bias values; prepare fills x and dout from seed and zeroes the
 * gradients; pass runs forward and backward (recompute: the intra
 * activations dropped between); check compares y, dx and every gradient
 * with nn_block_ref_check. */
struct nn_block_case {
    struct nn_workspace *ws;
    struct nn_layer *layer;
    float *x, *y, *dout, *dx;  /* numel = B * seq * hidden each */
    size_t numel;
    int recompute;
    struct nn_block_ref *ref;
};
int nn_block_case_init(struct nn_block_case *c, const struct nn_gpt_config *cfg, int B, uint64_t seed,
                       int recompute);
void nn_block_case_free(struct nn_block_case *c);
void nn_block_case_prepare(struct nn_block_case *c, uint64_t seed);
int nn_block_case_pass(struct nn_block_case *c);
int nn_block_case_check(struct nn_block_case *c, char *msg, size_t len);
/* About the bytes a case allocates (check: with its reference). */
double nn_block_case_bytes(const struct nn_gpt_config *cfg, int B, int check);

/* FSDP sharding over W ranks (rank in [0, W)): the flat parameter tensor
 * of numel elements is padded with zeros to W * S elements, S =
 * ceil(numel / W), as FSDP pads its flat parameter, so every rank's shard
 * has S elements (the per-rank count of allgather / reduce_scatter_block).
 * Returns S; *off = rank * S, this shard's first element in the flat
 * tensor; *n = its real elements (min(S, numel - off), 0 when the shard is
 * all padding); the shard's last S - *n elements are the padding, at most
 * W - 1 elements in all and only on the last ranks. 0 with *off = *n = 0
 * when W < 1 or rank is out of range. */
size_t nn_shard_range(size_t numel, int rank, int W, size_t *off, size_t *n);
/* The same for layer l's parameter tensor (nn_layer_params(l)->numel). */
size_t nn_layer_shard(const struct nn_layer *l, int rank, int W, size_t *off, size_t *n);

/* ===== whole GPT (layers in order) ====================================== */

struct nn_gpt {
    struct nn_gpt_config cfg;
    int B;
    struct nn_precision prec;
    int nlayers;               /* layers + 2 */
    struct nn_layer **layer;
    struct nn_workspace *ws;
    float *h[2], *dh[2];       /* ping-pong hidden states [B*S, H] */
    int recompute;             /* drop intra activations after each block's forward */
};
struct nn_gpt *nn_gpt_new(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                          uint64_t seed);
void nn_gpt_free(struct nn_gpt *m);
/* Mean cross-entropy of predicting targets from tokens (both B*S). */
int nn_gpt_forward(struct nn_gpt *m, const int32_t *tokens, const int32_t *targets, double *loss);
int nn_gpt_backward(struct nn_gpt *m);
void nn_gpt_zero_grad(struct nn_gpt *m);

/* ===== Adam ============================================================= */

struct nn_adam {
    float lr, beta1, beta2, eps, weight_decay; /* decoupled (AdamW) decay */
};
/* Default hyper-parameters: lr 1e-3, 0.9, 0.999, 1e-8, no decay. */
struct nn_adam nn_adam_default(void);
/* One step (t >= 1) on n contiguous elements: fp32 master p, moments m
 * and v; grad in dtype gdt scaled by grad_scale; if work != NULL the
 * updated weights are also stored there in dtype wdt (the fp16 working
 * copy). Any shard of a larger tensor may be passed. OpenMP + SIMD in
 * the widest vectors the CPU has (the GELU kernels' choice, NN_ISA);
 * every width gives the same bits. */
void nn_adam_step(const struct nn_adam *hp, long long t, size_t n, float *p, float *m, float *v,
                  const void *grad, enum nn_dtype gdt, float grad_scale, void *work,
                  enum nn_dtype wdt);
/* Thread t of T's share of an n-element step: contiguous, ends on
 * 1024-element (4 KiB) boundaries; nn_adam_step's threads take these,
 * and a first touch with them places each page with its thread. */
void nn_adam_share(size_t n, int t, int T, size_t *lo, size_t *hi);
/* Bytes one step reads and writes per element. */
size_t nn_adam_bytes_per_elem(enum nn_dtype gdt, int has_work, enum nn_dtype wdt);

/* Adam's memcpy peer (copy_peer.c, mb-nn): copies n bytes (one thread's
 * share) with non-temporal stores in the widest vectors the CPU has, so
 * the bytes it moves are the bytes it counts (read n + write n), as
 * Adam's in-place stores are. nn_llc_bytes: the last-level cache's size
 * (hwloc's, mb_llc_bytes; 32 MiB when unknown). */
void nn_copy_peer(void *dst, const void *src, size_t n);
size_t nn_llc_bytes(void);
/* Thread t of T's share of n bytes: contiguous, on 4 KiB page boundaries
 * (nn_adam_share's shares in bytes). */
void nn_byte_share(size_t n, int t, int T, size_t *lo, size_t *hi);
/* A cold start for streaming measurements: nn_cold_init allocates
 * max(2 x the last-level cache, 64 MiB), first touched by the OpenMP
 * threads (a no-op once allocated); nn_cold_start reads it, a byte a
 * line, so the dirty lines of the last pass are written back and the
 * cache holds none of the next pass's data; nn_cold_free releases it. */
struct nn_cold {
    char *buf;
    size_t n;
};
int nn_cold_init(struct nn_cold *c);
void nn_cold_start(const struct nn_cold *c);
void nn_cold_free(struct nn_cold *c);

/* One checked step on n fp32 parameters (adam_check.c; mb-nn's case):
 * init first-touches every buffer with nn_adam_step's thread shares
 * (nn_adam_share), then fills p, m, v; prepare draws a gradient from seed and keeps p, m,
 * v as they were; step runs nn_adam_step; check compares every element
 * of p, m and v with the update in double (0, or 1 and msg). */
struct nn_adam_case {
    size_t n;
    struct nn_adam hp;         /* nn_adam_default() */
    long long step;
    float *p, *m, *v, *grad;
    float *p0, *m0, *v0;       /* before the step */
};
int nn_adam_case_init(struct nn_adam_case *c, size_t n);
void nn_adam_case_free(struct nn_adam_case *c);
void nn_adam_case_prepare(struct nn_adam_case *c, uint64_t seed, long long step);
void nn_adam_case_step(struct nn_adam_case *c);
int nn_adam_case_check(const struct nn_adam_case *c, char *msg, size_t len);

/* Optimizer state of a whole model: per layer master weights and moments. */
struct nn_adam_state {
    int nlayers;
    size_t *n;
    float **p, **m, **v;
    long long t;
};
int nn_adam_state_init(struct nn_adam_state *s, struct nn_gpt *m);
void nn_adam_state_free(struct nn_adam_state *s);
/* One step over every layer (grads scaled by grad_scale), then writes the
 * working weights back into each layer's parameter tensor. */
void nn_gpt_adam_step(struct nn_gpt *m, struct nn_adam_state *s, const struct nn_adam *hp,
                      float grad_scale);

/* ===== GraphSAGE ========================================================= */

/* A sampled bipartite block (DGL/PyG): n_dst destination nodes, which are
 * the first n_dst of the n_src source nodes; neighbours of dst i are
 * src indices idx[ptr[i] .. ptr[i+1]). */
struct nn_sage_block {
    size_t n_src, n_dst;
    const int64_t *ptr;
    const int64_t *idx;
};

/* One SAGEConv (mean aggregator): out = mean_{j in N(i)} x_j W_l + x_i W_r + b
 * (PyG: lin_l has the bias, lin_r none; a node without neighbours
 * aggregates 0). Parameters in one contiguous fp32 tensor
 * [W_l (in x out) | W_r (in x out) | b (out)]; gradients alike. */
struct nn_sage {
    int in, out;
    int relu;                  /* ReLU after the layer (hidden layers) */
    struct nn_tensor params, grads;
    float *Wl, *Wr, *b, *dWl, *dWr, *db;
    /* saved for backward */
    float *agg, *y;            /* [n_dst x in], [n_dst x out] */
    size_t cap_dst;
    const float *x;            /* the input (caller keeps it alive) */
    struct nn_sage_block blk;
};
int nn_sage_init(struct nn_sage *s, int in, int out, int relu, uint64_t seed);
void nn_sage_free(struct nn_sage *s);
/* x: [n_src x in]; y: [n_dst x out] (after ReLU when relu). */
int nn_sage_forward(struct nn_sage *s, const struct nn_sage_block *blk, const float *x, float *y);
/* dy: [n_dst x out] (modified in place by the ReLU backward); dx:
 * [n_src x in] overwritten (NULL to skip: first layer). Gradients
 * accumulate. */
int nn_sage_backward(struct nn_sage *s, float *dy, float *dx);
void nn_sage_zero_grad(struct nn_sage *s);
/* FLOPs (forward) of one layer on a block: aggregation adds + 2 GEMMs. */
double nn_sage_flops_fwd(const struct nn_sage *s, const struct nn_sage_block *blk);

#endif
