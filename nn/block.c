/* GPT-2 decoder block (pre-LN), forward and backward:
 *   x1  = x + Attn(LN1(x)) Wo + bo,  Attn = causal MHA on LN1(x) Wqkv + bqkv
 *   out = x1 + GELU(LN2(x1) W1 + b1) W2 + b2
 * Parameter layout (one contiguous vector):
 *   ln1 g,b [H] | Wqkv [H,3H] bqkv [3H] | Wo [H,H] bo [H] | ln2 g,b [H] |
 *   W1 [H,F] b1 [F] | W2 [F,H] b2 [H]
 * Saved intra activations (layer.c order): xhat1, rstd1, qkv, probs, att,
 * xhat2, rstd2, h1 (pre-GELU), gl (post-GELU); inter: the input x.
 * This file is the unfused reference path (one op per step, as written
 * above); block_fused.c is the default, and the tests hold one to the
 * other. */
#include "layer_internal.h"

#include <string.h>

enum { XHAT1 = NN_XHAT1, RSTD1, QKV, PROBS, ATT, XHAT2, RSTD2, H1, GL }; /* short names here */

#define LN_EPS 1e-5f
#define GEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) return -1; NN_PROGRESS(l->ws); } while (0)

/* y = xhat * g + b */
static void ln_apply(const float *xhat, const float *g, const float *b, float *y, size_t rows,
                     size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= (1u << 22))
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            y[r * cols + c] = xhat[r * cols + c] * g[c] + b[c];
}

static int forward_ref(struct nn_layer *l, const float *x, float *out)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, F = l->cfg.ffn;
    size_t m = (size_t)M, h = (size_t)H;
    struct nn_blockp p = nn_blockp_split(nn_weights(l), h, (size_t)F);
    nn_store_f32(l->inter.data, l->inter.dtype, x, m * h);

    float *xhat1 = nn_act(l, XHAT1), *qkv = nn_act(l, QKV), *probs = nn_act(l, PROBS);
    float *att = nn_act(l, ATT), *xhat2 = nn_act(l, XHAT2), *h1 = nn_act(l, H1), *gl = nn_act(l, GL);
    nn_layernorm_fwd(x, p.g1, p.b1, w->y, xhat1, nn_act(l, RSTD1), m, h, LN_EPS);
    GEMM(0, 0, M, 3 * H, H, 1.0f, w->y, H, p.Wqkv, 3 * H, 0.0f, qkv, 3 * H);
    nn_add_bias(qkv, p.bqkv, m, 3 * h);
    if (nn_attn_fwd(NN_HOST, qkv, probs, att, (size_t)l->B, (size_t)l->cfg.seq,
                    (size_t)l->cfg.heads, h / (size_t)l->cfg.heads) != 0)
        return -1;
    memcpy(w->x1, x, m * h * sizeof(float));
    GEMM(0, 0, M, H, H, 1.0f, att, H, p.Wo, H, 1.0f, w->x1, H);
    nn_add_bias(w->x1, p.bo, m, h);
    nn_layernorm_fwd(w->x1, p.g2, p.b2, w->y, xhat2, nn_act(l, RSTD2), m, h, LN_EPS);
    GEMM(0, 0, M, F, H, 1.0f, w->y, H, p.W1, F, 0.0f, h1, F);
    nn_add_bias(h1, p.bf1, m, (size_t)F);
    nn_gelu_fwd(h1, gl, m * (size_t)F);
    memcpy(out, w->x1, m * h * sizeof(float));
    GEMM(0, 0, M, H, F, 1.0f, gl, F, p.W2, H, 1.0f, out, H);
    nn_add_bias(out, p.bf2, m, h);
    nn_act_save(l);
    return 0;
}

static int backward_ref(struct nn_layer *l, const float *dout, float *din)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, F = l->cfg.ffn;
    size_t m = (size_t)M, h = (size_t)H, f = (size_t)F;
    struct nn_blockp p = nn_blockp_split(nn_weights(l), h, f);
    memset(w->G, 0, l->grads.numel * sizeof(float));
    struct nn_blockp g = nn_blockp_split(w->G, h, f);
    nn_act_load(l);
    float *xhat1 = nn_act(l, XHAT1), *qkv = nn_act(l, QKV), *probs = nn_act(l, PROBS);
    float *att = nn_act(l, ATT), *xhat2 = nn_act(l, XHAT2), *h1 = nn_act(l, H1), *gl = nn_act(l, GL);
    float *rstd1 = nn_act(l, RSTD1), *rstd2 = nn_act(l, RSTD2);
    float *d1 = w->d1, *d2 = w->d2, *d3 = w->d3, *db = w->db;

    /* MLP: out = x1 + gl W2 + b2 */
    memcpy(d1, dout, m * h * sizeof(float)); /* d x1, residual path */
    nn_bias_bwd(dout, g.bf2, m, h);
    GEMM(1, 0, F, H, M, 1.0f, gl, F, dout, H, 0.0f, g.W2, H);
    GEMM(0, 1, M, F, H, 1.0f, dout, H, p.W2, H, 0.0f, db, F);
    nn_gelu_bwd(h1, db, db, m * f);
    nn_bias_bwd(db, g.bf1, m, f);
    ln_apply(xhat2, p.g2, p.b2, w->y, m, h);
    GEMM(1, 0, H, F, M, 1.0f, w->y, H, db, F, 0.0f, g.W1, F);
    GEMM(0, 1, M, H, F, 1.0f, db, F, p.W1, F, 0.0f, d2, H);
    nn_layernorm_bwd(d2, xhat2, rstd2, p.g2, d3, g.g2, g.b2, m, h);
    for (size_t i = 0; i < m * h; i++)
        d1[i] += d3[i];
    /* attention: x1 = x + att Wo + bo */
    nn_bias_bwd(d1, g.bo, m, h);
    GEMM(1, 0, H, H, M, 1.0f, att, H, d1, H, 0.0f, g.Wo, H);
    GEMM(0, 1, M, H, H, 1.0f, d1, H, p.Wo, H, 0.0f, d2, H);
    if (nn_attn_bwd(NN_HOST, qkv, probs, d2, db, w->scr, (size_t)l->B, (size_t)l->cfg.seq,
                    (size_t)l->cfg.heads, h / (size_t)l->cfg.heads) != 0)
        return -1;
    nn_bias_bwd(db, g.bqkv, m, 3 * h);
    ln_apply(xhat1, p.g1, p.b1, w->y, m, h);
    GEMM(1, 0, H, 3 * H, M, 1.0f, w->y, H, db, 3 * H, 0.0f, g.Wqkv, 3 * H);
    GEMM(0, 1, M, H, 3 * H, 1.0f, db, 3 * H, p.Wqkv, 3 * H, 0.0f, d2, H);
    nn_layernorm_bwd(d2, xhat1, rstd1, p.g1, d3, g.g1, g.b1, m, h);
    if (din)
        for (size_t i = 0; i < m * h; i++)
            din[i] = d1[i] + d3[i];
    nn_accum_f32(l->grads.data, l->grads.dtype, w->G, l->grads.numel);
    return 0;
}

int nn_block_forward(struct nn_layer *l, const float *x, float *out)
{
    return l->fused ? nn_block_forward_fused(l, x, out) : forward_ref(l, x, out);
}

int nn_block_backward(struct nn_layer *l, const float *dout, float *din)
{
    return l->fused ? nn_block_backward_fused(l, dout, din) : backward_ref(l, dout, din);
}
