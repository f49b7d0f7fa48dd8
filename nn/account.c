/* Bytes and FLOPs of each GPT layer, in closed form, for any shape: what
 * nn_layer_new allocates and what its forward and backward compute. */
#include "nn.h"

#include <string.h>

const char *nn_layer_kind_name(enum nn_layer_kind k)
{
    static const char *const n[] = {"embed", "block", "head", "sage"};
    return (unsigned)k < 4 ? n[k] : "?";
}

static uint64_t block_params(const struct nn_gpt_config *c)
{
    uint64_t H = (uint64_t)c->hidden, F = (uint64_t)c->ffn;
    return 4 * H + (H * 3 * H + 3 * H) + (H * H + H) + (H * F + F) + (F * H + H);
}

void nn_gpt_layer_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                          int layer, struct nn_layer_account *o)
{
    memset(o, 0, sizeof(*o));
    uint64_t H = (uint64_t)cfg->hidden, F = (uint64_t)cfg->ffn, S = (uint64_t)cfg->seq;
    uint64_t V = (uint64_t)cfg->vocab, A = (uint64_t)cfg->heads, M = (uint64_t)B * S;
    uint64_t ea = nn_dtype_size(prec.act);
    double m = (double)M, h = (double)H, f = (double)F, s = (double)S;
    if (layer == 0) {
        o->kind = NN_LAYER_EMBED;
        o->params = (V + S) * H;
        o->act_inter_bytes = 4 * M; /* token ids */
    } else if (layer <= cfg->layers) {
        o->kind = NN_LAYER_BLOCK;
        o->params = block_params(cfg);
        o->act_inter_bytes = ea * M * H;
        /* xhat1, qkv, attention output, xhat2 (each [M,H] or [M,3H]), MLP
         * pre- and post-GELU [M,F], probabilities [B,A,S,S], two fp32 rstd */
        o->act_intra_bytes = ea * (M * (H + 3 * H + H + H + 2 * F) + (uint64_t)B * A * S * S) + 8 * M;
        o->flops_fwd = 2 * m * h * (3 * h + h + 2 * f) + 4 * m * s * h;
        o->flops_bwd = 2 * o->flops_fwd;
        /* the partial recompute (intra.c) rebuilds the saved tensors and
         * never reruns the W2 GEMM, whose output is the next block's input */
        o->flops_recompute = o->flops_fwd - 2 * m * f * h;
    } else {
        o->kind = NN_LAYER_HEAD;
        o->params = 2 * H + H * V;
        o->act_inter_bytes = ea * M * H + 4 * M; /* input and int32 targets */
        /* xhat [M,H], probabilities [M,V], fp32 rstd */
        o->act_intra_bytes = ea * (M * H + M * V) + 4 * M;
        o->flops_fwd = 2 * m * h * (double)V;
        o->flops_bwd = 2 * o->flops_fwd;
        o->flops_recompute = o->flops_fwd;
    }
    o->param_bytes = o->params * nn_dtype_size(prec.param);
    o->grad_bytes = o->params * nn_dtype_size(prec.grad);
    o->opt_bytes = o->params * 12;
    if (o->kind == NN_LAYER_EMBED)
        o->flops_recompute = 0;
}

void nn_gpt_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                    struct nn_layer_account *t)
{
    memset(t, 0, sizeof(*t));
    t->kind = NN_LAYER_BLOCK;
    for (int i = 0; i < cfg->layers + 2; i++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, i, &a);
        t->params += a.params;
        t->param_bytes += a.param_bytes;
        t->grad_bytes += a.grad_bytes;
        t->opt_bytes += a.opt_bytes;
        t->act_inter_bytes += a.act_inter_bytes;
        t->act_intra_bytes += a.act_intra_bytes;
        t->flops_fwd += a.flops_fwd;
        t->flops_bwd += a.flops_bwd;
        t->flops_recompute += a.flops_recompute;
    }
}

int nn_block_gemm_shapes(const struct nn_gpt_config *c, int B, struct nn_gemm_shape *out, int max)
{
    int H = c->hidden, F = c->ffn, S = c->seq, M = B * S, D = H / c->heads, BA = B * c->heads;
    /* forward linear layers: y[M,N] = x[M,K] W[K,N] */
    const int lin[4][2] = {{3 * H, H}, {H, H}, {F, H}, {H, F}}; /* N, K */
    const enum nn_stage fst[4] = {NN_ST_FWD_GEMM_QKV, NN_ST_FWD_GEMM_O, NN_ST_FWD_GEMM_W1, NN_ST_FWD_GEMM_W2};
    const enum nn_stage bst[4] = {NN_ST_BWD_GEMM_QKV, NN_ST_BWD_GEMM_O, NN_ST_BWD_GEMM_W1, NN_ST_BWD_GEMM_W2};
    struct nn_gemm_shape s[32];
    int n = 0;
    for (int i = 0; i < 4; i++)
        s[n++] = (struct nn_gemm_shape){0, 0, M, lin[i][0], lin[i][1], 1, 0, i != 3, fst[i]};
    s[n++] = (struct nn_gemm_shape){0, 1, S, S, D, BA, 0, 1, NN_ST_FWD_ATTN_SCORES}; /* scores = Q K^T */
    s[n++] = (struct nn_gemm_shape){0, 0, S, D, S, BA, 0, 1, NN_ST_FWD_ATTN_VALUES}; /* out = P V */
    for (int i = 0; i < 4; i++) {
        s[n++] = (struct nn_gemm_shape){1, 0, lin[i][1], lin[i][0], M, 1, 1, 0, bst[i]}; /* dW = x^T dy */
        s[n++] = (struct nn_gemm_shape){0, 1, M, lin[i][1], lin[i][0], 1, 1, 0, bst[i]}; /* dx = dy W^T */
    }
    s[n++] = (struct nn_gemm_shape){0, 1, S, S, D, BA, 1, 0, NN_ST_BWD_ATTN_DP_DV}; /* dP = dO V^T */
    s[n++] = (struct nn_gemm_shape){1, 0, S, D, S, BA, 1, 0, NN_ST_BWD_ATTN_DP_DV}; /* dV = P^T dO */
    s[n++] = (struct nn_gemm_shape){0, 0, S, D, S, BA, 1, 0, NN_ST_BWD_ATTN_DQ_DK}; /* dQ = dS K */
    s[n++] = (struct nn_gemm_shape){1, 0, S, D, S, BA, 1, 0, NN_ST_BWD_ATTN_DQ_DK}; /* dK = dS^T Q */
    for (int i = 0; i < n && i < max; i++)
        out[i] = s[i];
    return n < max ? n : max;
}

double nn_block_stage_bytes(const struct nn_gpt_config *c, int B, int st)
{
    double M = (double)B * c->seq, H = c->hidden, F = c->ffn;
    double P = (double)B * c->heads * c->seq * c->seq; /* every head's S x S */
    /* fp32 elements read + written by block_fused.c's sweeps (the GEMMs'
     * own traffic is in their rate). The input's copy into the saved
     * inter-block tensor 2MH (fp32: a memmove); rstd M each LN. */
    switch (st) {
    case NN_ST_FWD_COPIES: return 4.0 * 2 * M * H;
    case NN_ST_FWD_LN1: return 4.0 * (3 * M * H + M);          /* x; y, xhat, rstd */
    case NN_ST_FWD_BIAS_QKV: return 4.0 * 3 * M * H;           /* qkv = b preloaded: 3MH out */
    case NN_ST_FWD_SOFTMAX: return 4.0 * 2 * P;
    case NN_ST_FWD_RES_LN2: return 4.0 * (5 * M * H + M);      /* x; x1 = x + bo; then x1; y, xhat */
    case NN_ST_FWD_BIAS_GELU: return 4.0 * 3 * M * F;          /* h1; h1, gl */
    case NN_ST_FWD_RES_BIAS: return 4.0 * 2 * M * H;           /* out = x1 + b2 preloaded: x1; out */
    case NN_ST_BWD_BIAS_B2: return 4.0 * M * H;                /* dout's column sums */
    case NN_ST_BWD_GELU_BIAS: return 4.0 * 3 * M * F;          /* h1, d; d */
    case NN_ST_BWD_LN_APPLY: return 4.0 * 2 * 2 * M * H;       /* LN2 and LN1 again: xhat; y */
    case NN_ST_BWD_LN2_RES: return 4.0 * 4 * M * H;            /* d2, xhat, dout; d1 */
    case NN_ST_BWD_SOFTMAX: return 4.0 * 3 * P;                /* dP, P; dS */
    case NN_ST_BWD_BIAS_QKV: return 4.0 * 3 * M * H;
    case NN_ST_BWD_LN1_RES: return 4.0 * 4 * M * H;
    default: return 0; /* GEMM stages; bwd copies: none with fp32 storage */
    }
}

void nn_block_elementwise_bytes(const struct nn_gpt_config *c, int B, double *fwd, double *bwd)
{
    *fwd = *bwd = 0;
    for (int st = 0; st < NN_STAGE_COUNT; st++)
        *(st < NN_ST_BWD_COPIES ? fwd : bwd) += nn_block_stage_bytes(c, B, (enum nn_stage)st);
}
