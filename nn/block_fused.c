/* The decoder block's default path: block.c's math with its elementwise
 * steps fused (fused.c) and the attention heads batched (attn_batched.c).
 * Per pass it sweeps the activations 5 times forward and 6 backward
 * where block.c sweeps them 9 and 13 times (memcpys, separate bias,
 * residual, LN and GELU passes, serial bias-gradient sums), and every
 * sweep is OpenMP-parallel. The residuals are added after the GEMMs
 * instead of preloading C: (res + a) + bias is the reference's order. */
#include "layer_internal.h"

#include <string.h>

#define GEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) return -1; } while (0)

int nn_block_forward_fused(struct nn_layer *l, const float *x, float *out)
{
    return nn_block_forward_steps(l, x, out, NN_BLOCK_ALL_STEPS);
}

/* The forward as steps, so a partial recompute runs only those it needs:
 * 0 LN1 (xhat1, rstd1, y) | 1 QKV GEMM (qkv; needs 0's y) | 2 attention
 * (probs, att) | 3 Wo GEMM, residual, LN2 (x1, xhat2, rstd2, y) | 4 W1
 * GEMM, GELU (h1, gl; needs 3's y) | 5 W2 GEMM, residual (out) and the
 * saved input. */
int nn_block_forward_steps(struct nn_layer *l, const float *x, float *out, unsigned steps)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, F = l->cfg.ffn;
    size_t m = (size_t)M, h = (size_t)H, f = (size_t)F;
    size_t B = (size_t)l->B, S = (size_t)l->cfg.seq, A = (size_t)l->cfg.heads;
    struct nn_blockp p = nn_blockp_split(nn_weights(l), h, f);
    if (steps & 1u << 5)
        nn_store_f32(l->inter.data, l->inter.dtype, x, m * h);

    float *xhat1 = nn_act(l, NN_XHAT1), *qkv = nn_act(l, NN_QKV), *probs = nn_act(l, NN_PROBS);
    float *att = nn_act(l, NN_ATT), *xhat2 = nn_act(l, NN_XHAT2), *h1 = nn_act(l, NN_H1);
    float *gl = nn_act(l, NN_GL);
    if (steps & 1u << 0)
        nn_residual_layernorm_fwd(x, NULL, NULL, NULL, p.g1, p.b1, w->y, xhat1,
                                  nn_act(l, NN_RSTD1), m, h, NN_LN_EPS);
    if (steps & 1u << 1) {
        GEMM(0, 0, M, 3 * H, H, 1.0f, w->y, H, p.Wqkv, 3 * H, 0.0f, qkv, 3 * H);
        nn_add_bias_par(qkv, p.bqkv, m, 3 * h);
    }
    if ((steps & 1u << 2) && nn_attn_fwd_batched(qkv, probs, att, B, S, A, h / A) != 0)
        return -1;
    if (steps & 1u << 3) {
        /* x1 = (x + att Wo) + bo, then LN2(x1), one sweep */
        GEMM(0, 0, M, H, H, 1.0f, att, H, p.Wo, H, 0.0f, w->x1, H);
        nn_residual_layernorm_fwd(w->x1, x, p.bo, w->x1, p.g2, p.b2, w->y, xhat2,
                                  nn_act(l, NN_RSTD2), m, h, NN_LN_EPS);
    }
    if (steps & 1u << 4) {
        GEMM(0, 0, M, F, H, 1.0f, w->y, H, p.W1, F, 0.0f, h1, F);
        nn_bias_gelu_fwd(h1, p.bf1, gl, m, f);
    }
    if (steps & 1u << 5) {
        /* out = (x1 + gl W2) + b2 */
        GEMM(0, 0, M, H, F, 1.0f, gl, F, p.W2, H, 0.0f, out, H);
        nn_residual_bias(out, w->x1, p.bf2, out, m, h);
    }
    nn_act_save(l);
    return 0;
}

int nn_block_backward_fused(struct nn_layer *l, const float *dout, float *din)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, F = l->cfg.ffn;
    size_t m = (size_t)M, h = (size_t)H, f = (size_t)F;
    size_t B = (size_t)l->B, S = (size_t)l->cfg.seq, A = (size_t)l->cfg.heads;
    struct nn_blockp p = nn_blockp_split(nn_weights(l), h, f);
    /* fp32 gradients: accumulate straight into them (the weight-gradient
     * GEMMs with beta = 1, the column sums add anyway), which saves
     * zeroing, reading and adding a scratch copy of 12h^2 parameters:
     * at gpt-bench more bytes than all the activation sweeps together */
    int direct = l->grads.dtype == NN_F32;
    float *G = direct ? l->grads.data : w->G, beta = direct ? 1.0f : 0.0f;
    if (!direct)
        memset(G, 0, l->grads.numel * sizeof(float));
    struct nn_blockp g = nn_blockp_split(G, h, f);
    nn_act_load(l);
    float *xhat1 = nn_act(l, NN_XHAT1), *qkv = nn_act(l, NN_QKV), *probs = nn_act(l, NN_PROBS);
    float *att = nn_act(l, NN_ATT), *xhat2 = nn_act(l, NN_XHAT2), *h1 = nn_act(l, NN_H1);
    float *gl = nn_act(l, NN_GL), *rstd1 = nn_act(l, NN_RSTD1), *rstd2 = nn_act(l, NN_RSTD2);
    float *d1 = w->d1, *d2 = w->d2, *db = w->db;

    /* MLP: out = x1 + gl W2 + b2 */
    if (nn_bias_bwd_par(dout, g.bf2, m, h) != 0)
        return -1;
    GEMM(1, 0, F, H, M, 1.0f, gl, F, dout, H, beta, g.W2, H);
    GEMM(0, 1, M, F, H, 1.0f, dout, H, p.W2, H, 0.0f, db, F);
    if (nn_gelu_bias_bwd(h1, db, g.bf1, m, f) != 0)
        return -1;
    nn_layernorm_apply(xhat2, p.g2, p.b2, w->y, m, h);
    GEMM(1, 0, H, F, M, 1.0f, w->y, H, db, F, beta, g.W1, F);
    GEMM(0, 1, M, H, F, 1.0f, db, F, p.W1, F, 0.0f, d2, H);
    /* d x1 = dout + LN2'(d2); dbo is its column sum, in the same sweep */
    if (nn_layernorm_bwd_residual(d2, xhat2, rstd2, p.g2, dout, d1, g.g2, g.b2, g.bo, m, h) != 0)
        return -1;
    /* attention: x1 = x + att Wo + bo */
    GEMM(1, 0, H, H, M, 1.0f, att, H, d1, H, beta, g.Wo, H);
    GEMM(0, 1, M, H, H, 1.0f, d1, H, p.Wo, H, 0.0f, d2, H);
    if (nn_attn_bwd_batched(qkv, probs, d2, db, w->scr, B, S, A, h / A) != 0 ||
        nn_bias_bwd_par(db, g.bqkv, m, 3 * h) != 0)
        return -1;
    nn_layernorm_apply(xhat1, p.g1, p.b1, w->y, m, h);
    GEMM(1, 0, H, 3 * H, M, 1.0f, w->y, H, db, 3 * H, beta, g.Wqkv, 3 * H);
    GEMM(0, 1, M, H, 3 * H, 1.0f, db, 3 * H, p.Wqkv, 3 * H, 0.0f, d2, H);
    /* din = d x1 + LN1'(d2) */
    if (nn_layernorm_bwd_residual(d2, xhat1, rstd1, p.g1, d1, din, g.g1, g.b1, NULL, m, h) != 0)
        return -1;
    if (!direct)
        nn_accum_f32(l->grads.data, l->grads.dtype, G, l->grads.numel);
    return 0;
}
