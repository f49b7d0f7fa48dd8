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
    struct nn_gemm_shape s[32];
    int n = 0;
    for (int i = 0; i < 4; i++)
        s[n++] = (struct nn_gemm_shape){0, 0, M, lin[i][0], lin[i][1], 1, 0, i != 3};
    s[n++] = (struct nn_gemm_shape){0, 1, S, S, D, BA, 0, 1}; /* scores = Q K^T */
    s[n++] = (struct nn_gemm_shape){0, 0, S, D, S, BA, 0, 1}; /* out = P V */
    for (int i = 0; i < 4; i++) {
        s[n++] = (struct nn_gemm_shape){1, 0, lin[i][1], lin[i][0], M, 1, 1, 0}; /* dW = x^T dy */
        s[n++] = (struct nn_gemm_shape){0, 1, M, lin[i][1], lin[i][0], 1, 1, 0}; /* dx = dy W^T */
    }
    s[n++] = (struct nn_gemm_shape){0, 1, S, S, D, BA, 1, 0}; /* dP = dO V^T */
    s[n++] = (struct nn_gemm_shape){1, 0, S, D, S, BA, 1, 0}; /* dV = P^T dO */
    s[n++] = (struct nn_gemm_shape){0, 0, S, D, S, BA, 1, 0}; /* dQ = dS K */
    s[n++] = (struct nn_gemm_shape){1, 0, S, D, S, BA, 1, 0}; /* dK = dS^T Q */
    for (int i = 0; i < n && i < max; i++)
        out[i] = s[i];
    return n < max ? n : max;
}

void nn_block_elementwise_bytes(const struct nn_gpt_config *c, int B, double *fwd, double *bwd)
{
    double M = (double)B * c->seq, H = c->hidden, F = c->ffn;
    double P = (double)B * c->heads * c->seq * c->seq; /* every head's S x S */
    /* fp32 elements read + written by block_fused.c's sweeps (the GEMMs'
     * own traffic is in their rate). Forward: LN1 3MH (x; y, xhat), qkv
     * bias 6MH, softmax 2P, residual+bias+LN2 5MH (att Wo, x; x1, y,
     * xhat), bias+GELU 3MF, residual+bias 3MH; rstd 2M. Backward: dout's
     * bias sum MH, GELU+bias 3MF, LN2 apply 2MH, LN2 backward+residual
     * 4MH (d2, xhat, dout; d1), softmax backward 3P, qkv bias sum 3MH,
     * LN1 apply 2MH, LN1 backward+residual 4MH. */
    *fwd = 4.0 * (17 * M * H + 3 * M * F + 2 * P + 2 * M);
    *bwd = 4.0 * (16 * M * H + 3 * M * F + 3 * P);
}
