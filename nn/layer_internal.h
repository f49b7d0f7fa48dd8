/* Internal to nn/: the layer object shared by layer.c, block.c, head.c. */
#ifndef MB_NN_LAYER_INTERNAL_H
#define MB_NN_LAYER_INTERNAL_H

#include "nn.h"

#include <time.h>

#define NN_MAX_INTRA 10

struct nn_workspace {
    struct nn_alloc alloc;
    size_t M, H, F, S, A, V;
    float *W, *G;                      /* fp32 weights / gradients of one layer */
    float *y, *qkv, *probs, *att, *x1, *xhat1, *xhat2, *h1, *gl, *logits;
    float *d1, *d2, *d3, *db, *scr, *out;
    void (*progress)(void *ctx);       /* between GEMMs (nn_workspace_set_progress), or NULL */
    void *progress_ctx;
};
/* The workspace's progress hook, if any (after each GEMM of a layer). */
#define NN_PROGRESS(ws)                                                                            \
    do {                                                                                           \
        if ((ws)->progress)                                                                        \
            (ws)->progress((ws)->progress_ctx);                                                    \
    } while (0)

struct nn_layer {
    enum nn_layer_kind kind;
    struct nn_gpt_config cfg;
    int B, index;
    struct nn_precision prec;
    struct nn_workspace *ws;
    struct nn_tensor params, grads, inter;
    struct nn_tensor aux;              /* head: the targets (part of its inter bytes) */
    int nintra;
    int bind_intra;                    /* NN_LAYER_BIND_INTRA: no own_intra at creation */
    struct nn_tensor intra[NN_MAX_INTRA];
    float *wsbuf[NN_MAX_INTRA];        /* fp32 working buffer of each intra tensor */
    int live;                          /* every intra tensor present */
    struct nn_alloc alloc;
    /* own allocations (NULL: none, or bound / dropped); tensors are views */
    void *own_params, *own_grads, *own_inter, *own_aux, *own_intra[NN_MAX_INTRA];
    int present[NN_MAX_INTRA];         /* contents valid */
    float *redirect[NN_MAX_INTRA];     /* partial recompute: where a present tensor's
                                        * step writes instead of over it */
    int redo;                          /* inside a recompute: nn_act_save skips present ones */
    double count;                      /* head: counted targets of the last forward */
    int fused;                         /* blocks: fused kernels (1) or the reference ops (0) */
    int recompute_whole;               /* a recompute reruns the whole forward, W2 included */
    struct nn_stage_times *times;      /* fused blocks: per-stage seconds, or NULL */
};

/* fp32 view of intra tensor i (its storage when fp32, else the workspace). */
float *nn_act(struct nn_layer *l, int i);
/* After forward: store the workspace copies into fp16/bf16 storage. */
void nn_act_save(struct nn_layer *l);
/* Before backward: load them back into the workspace. */
void nn_act_load(struct nn_layer *l);
/* The layer's fp32 weights (storage when fp32, else converted into ws->W). */
float *nn_weights(struct nn_layer *l);

/* A block's parameters, views into its one contiguous vector:
 *   ln1 g,b [H] | Wqkv [H,3H] bqkv [3H] | Wo [H,H] bo [H] | ln2 g,b [H] |
 *   W1 [H,F] b1 [F] | W2 [F,H] b2 [H] */
struct nn_blockp {
    float *g1, *b1, *Wqkv, *bqkv, *Wo, *bo, *g2, *b2, *W1, *bf1, *W2, *bf2;
};

static inline struct nn_blockp nn_blockp_split(float *p, size_t H, size_t F)
{
    struct nn_blockp b;
    b.g1 = p; b.b1 = p + H; p += 2 * H;
    b.Wqkv = p; p += 3 * H * H;
    b.bqkv = p; p += 3 * H;
    b.Wo = p; p += H * H;
    b.bo = p; p += H;
    b.g2 = p; b.b2 = p + H; p += 2 * H;
    b.W1 = p; p += H * F;
    b.bf1 = p; p += F;
    b.W2 = p; p += F * H;
    b.bf2 = p;
    return b;
}

/* Saved intra activations of a block, in layer.c's order. */
enum { NN_XHAT1, NN_RSTD1, NN_QKV, NN_PROBS, NN_ATT, NN_XHAT2, NN_RSTD2, NN_H1, NN_GL };
#define NN_LN_EPS 1e-5f

/* Dispatch on l->fused (block.c); the two paths. */
int nn_block_forward(struct nn_layer *l, const float *x, float *out);
int nn_block_backward(struct nn_layer *l, const float *dout, float *din);
int nn_block_forward_fused(struct nn_layer *l, const float *x, float *out);
int nn_block_backward_fused(struct nn_layer *l, const float *dout, float *din);
/* Forward steps of the fused block, bit i = step i (intra.c says which
 * tensors each step writes); NN_BLOCK_ALL_STEPS also writes the output
 * and the saved input. */
#define NN_BLOCK_STEPS 5
#define NN_BLOCK_ALL_STEPS 0x3fu
int nn_block_forward_steps(struct nn_layer *l, const float *x, float *out, unsigned steps);
int nn_head_forward(struct nn_layer *l, const float *x, const int32_t *targets, double *loss);
/* intra.c: memory of one tensor from the layer's allocator, zeroed. */
void *nn_layer_alloc(struct nn_layer *l, size_t bytes);
/* Rebuilds the intra tensors that are not present (backward calls it). */
int nn_layer_recompute(struct nn_layer *l);
/* Gives every released tensor without memory its own allocation. */
int nn_layer_intra_home(struct nn_layer *l);
int nn_head_backward(struct nn_layer *l, float *din);

/* Seconds on a monotonic clock, for the stage times. */
static inline double nn_stage_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the statements, adding their wall time to times->t[stage] when
 * times is not NULL (a `return` inside skips the record: a failed pass). */
#define NN_STAGE(times, stage, ...)                                                                \
    do {                                                                                           \
        struct nn_stage_times *st_ = (times);                                                      \
        double t0_ = st_ ? nn_stage_now() : 0;                                                     \
        __VA_ARGS__;                                                                               \
        if (st_)                                                                                   \
            st_->t[stage] += nn_stage_now() - t0_;                                                 \
    } while (0)

/* nn_attn_fwd/bwd_batched, adding their stages' seconds to times (NULL:
 * untimed): fwd NN_ST_FWD_ATTN_SCORES, _SOFTMAX, _ATTN_VALUES; bwd
 * NN_ST_BWD_ATTN_DP_DV, _SOFTMAX, _ATTN_DQ_DK. */
int nn_attn_fwd_batched_timed(const float *qkv, float *probs, float *out, size_t B, size_t S,
                              size_t A, size_t D, struct nn_stage_times *times);
int nn_attn_bwd_batched_timed(const float *qkv, const float *probs, const float *dout, float *dqkv,
                              float *scratch, size_t B, size_t S, size_t A, size_t D,
                              struct nn_stage_times *times);

#endif
