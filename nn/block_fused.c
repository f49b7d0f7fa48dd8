/* The decoder block's default path: block.c's math with its elementwise
 * steps fused (fused.c) and the attention heads batched (attn_batched.c).
 * Per pass it sweeps the activations 4 times forward (LN1, softmax, LN2,
 * bias + GELU; plus 3 write-only preloads of a GEMM's C, in place of
 * OpenBLAS zeroing it) and 6 backward where block.c sweeps them 9 and 13 times (memcpys, separate bias,
 * residual, LN and GELU passes, serial bias-gradient sums), and every
 * sweep is OpenMP-parallel. The QKV, Wo and W2 GEMMs add into a C
 * preloaded with their bias (and Wo's and W2's residual), beta = 1: no
 * zeroing pass in OpenBLAS and no bias or residual pass after, in another
 * order than the reference's (res + a) + bias (test_nn_fused: within its
 * tolerance). */
#include "layer_internal.h"

#include <string.h>

/* The block's sizes: ints for the GEMMs, size_t for the sweeps. */
struct dims {
    int M, H, F;
    size_t m, h, f, B, S, A;
};

static struct dims dims_of(const struct nn_layer *l)
{
    struct dims d;
    d.M = (int)l->inter.shape[0], d.H = l->cfg.hidden, d.F = l->cfg.ffn;
    d.m = (size_t)d.M, d.h = (size_t)d.H, d.f = (size_t)d.F;
    d.B = (size_t)l->B, d.S = (size_t)l->cfg.seq, d.A = (size_t)l->cfg.heads;
    return d;
}

#define GEMM(...) do { if (nn_gemm(NN_HOST, __VA_ARGS__) != 0) return -1; NN_PROGRESS(l->ws); } while (0)

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
    struct dims d = dims_of(l);
    struct nn_blockp p = nn_blockp_split(nn_weights(l), d.h, d.f);
    struct nn_stage_times *T = l->times;
    if ((steps & 1u << 5) && !l->redo) /* (a recompute's input is that saved copy) */
        NN_STAGE(T, NN_ST_FWD_COPIES, nn_store_f32(l->inter.data, l->inter.dtype, x, d.m * d.h));

    float *xhat1 = nn_act(l, NN_XHAT1), *qkv = nn_act(l, NN_QKV), *probs = nn_act(l, NN_PROBS);
    float *att = nn_act(l, NN_ATT), *xhat2 = nn_act(l, NN_XHAT2), *h1 = nn_act(l, NN_H1);
    float *gl = nn_act(l, NN_GL);
    if (steps & 1u << 0)
        NN_STAGE(T, NN_ST_FWD_LN1,
                 nn_residual_layernorm_fwd(x, NULL, NULL, NULL, p.g1, p.b1, w->y, xhat1,
                                           nn_act(l, NN_RSTD1), d.m, d.h, NN_LN_EPS));
    if (steps & 1u << 1) {
        /* qkv = bqkv + y Wqkv: the bias preloaded, the GEMM with beta = 1 */
        NN_STAGE(T, NN_ST_FWD_BIAS_QKV, nn_bias_preload(qkv, NULL, p.bqkv, d.m, 3 * d.h));
        NN_STAGE(T, NN_ST_FWD_GEMM_QKV, GEMM(0, 0, d.M, 3 * d.H, d.H, 1.0f, w->y, d.H, p.Wqkv, 3 * d.H, 1.0f, qkv, 3 * d.H));
    }
    if ((steps & 1u << 2) && nn_attn_fwd_batched_timed(qkv, probs, att, d.B, d.S, d.A, d.h / d.A, T) != 0)
        return -1;
    if (steps & 1u << 3) {
        /* x1 = (x + bo) + att Wo (x + bo preloaded, beta = 1), then LN2(x1) */
        NN_STAGE(T, NN_ST_FWD_RES_LN2, nn_bias_preload(w->x1, x, p.bo, d.m, d.h));
        NN_STAGE(T, NN_ST_FWD_GEMM_O, GEMM(0, 0, d.M, d.H, d.H, 1.0f, att, d.H, p.Wo, d.H, 1.0f, w->x1, d.H));
        NN_STAGE(T, NN_ST_FWD_RES_LN2,
                 nn_residual_layernorm_fwd(w->x1, NULL, NULL, NULL, p.g2, p.b2, w->y, xhat2,
                                           nn_act(l, NN_RSTD2), d.m, d.h, NN_LN_EPS));
    }
    if (steps & 1u << 4) {
        NN_STAGE(T, NN_ST_FWD_GEMM_W1, GEMM(0, 0, d.M, d.F, d.H, 1.0f, w->y, d.H, p.W1, d.F, 0.0f, h1, d.F));
        NN_STAGE(T, NN_ST_FWD_BIAS_GELU, nn_bias_gelu_fwd(h1, p.bf1, gl, d.m, d.f));
    }
    if (steps & 1u << 5) {
        /* out = (x1 + b2) + gl W2: x1 + b2 preloaded, the GEMM with beta = 1 */
        NN_STAGE(T, NN_ST_FWD_RES_BIAS, nn_bias_preload(out, w->x1, p.bf2, d.m, d.h));
        NN_STAGE(T, NN_ST_FWD_GEMM_W2, GEMM(0, 0, d.M, d.H, d.F, 1.0f, gl, d.F, p.W2, d.H, 1.0f, out, d.H));
    }
    NN_STAGE(T, NN_ST_FWD_COPIES, nn_act_save(l));
    return 0;
}

int nn_block_backward_fused(struct nn_layer *l, const float *dout, float *din)
{
    struct nn_workspace *w = l->ws;
    struct dims d = dims_of(l);
    struct nn_blockp p = nn_blockp_split(nn_weights(l), d.h, d.f);
    /* fp32 gradients: accumulate straight into them (the weight-gradient
     * GEMMs with beta = 1, the column sums add anyway), which saves
     * zeroing, reading and adding a scratch copy of 12h^2 parameters:
     * at gpt-bench more bytes than all the activation sweeps together */
    int direct = l->grads.dtype == NN_F32;
    float *G = direct ? l->grads.data : w->G, beta = direct ? 1.0f : 0.0f;
    if (!direct)
        memset(G, 0, l->grads.numel * sizeof(float));
    struct nn_blockp g = nn_blockp_split(G, d.h, d.f);
    struct nn_stage_times *T = l->times;
    NN_STAGE(T, NN_ST_BWD_COPIES, nn_act_load(l));
    float *xhat1 = nn_act(l, NN_XHAT1), *qkv = nn_act(l, NN_QKV), *probs = nn_act(l, NN_PROBS);
    float *att = nn_act(l, NN_ATT), *xhat2 = nn_act(l, NN_XHAT2), *h1 = nn_act(l, NN_H1);
    float *gl = nn_act(l, NN_GL), *rstd1 = nn_act(l, NN_RSTD1), *rstd2 = nn_act(l, NN_RSTD2);
    float *d1 = w->d1, *d2 = w->d2, *db = w->db;

    /* MLP: out = x1 + gl W2 + b2 */
    NN_STAGE(T, NN_ST_BWD_BIAS_B2, if (nn_bias_bwd_par(dout, g.bf2, d.m, d.h) != 0) return -1);
    NN_STAGE(T, NN_ST_BWD_GEMM_W2,
             GEMM(1, 0, d.F, d.H, d.M, 1.0f, gl, d.F, dout, d.H, beta, g.W2, d.H);
             GEMM(0, 1, d.M, d.F, d.H, 1.0f, dout, d.H, p.W2, d.H, 0.0f, db, d.F));
    NN_STAGE(T, NN_ST_BWD_GELU_BIAS, if (nn_gelu_bias_bwd(h1, db, g.bf1, d.m, d.f) != 0) return -1);
    NN_STAGE(T, NN_ST_BWD_LN_APPLY, nn_layernorm_apply(xhat2, p.g2, p.b2, w->y, d.m, d.h));
    NN_STAGE(T, NN_ST_BWD_GEMM_W1,
             GEMM(1, 0, d.H, d.F, d.M, 1.0f, w->y, d.H, db, d.F, beta, g.W1, d.F);
             GEMM(0, 1, d.M, d.H, d.F, 1.0f, db, d.F, p.W1, d.F, 0.0f, d2, d.H));
    /* d x1 = dout + LN2'(d2); dbo is its column sum, in the same sweep */
    NN_STAGE(T, NN_ST_BWD_LN2_RES,
             if (nn_layernorm_bwd_residual(d2, xhat2, rstd2, p.g2, dout, d1, g.g2, g.b2, g.bo, d.m, d.h) != 0)
                 return -1);
    /* attention: x1 = x + att Wo + bo */
    NN_STAGE(T, NN_ST_BWD_GEMM_O,
             GEMM(1, 0, d.H, d.H, d.M, 1.0f, att, d.H, d1, d.H, beta, g.Wo, d.H);
             GEMM(0, 1, d.M, d.H, d.H, 1.0f, d1, d.H, p.Wo, d.H, 0.0f, d2, d.H));
    if (nn_attn_bwd_batched_timed(qkv, probs, d2, db, w->scr, d.B, d.S, d.A, d.h / d.A, T) != 0)
        return -1;
    NN_STAGE(T, NN_ST_BWD_BIAS_QKV, if (nn_bias_bwd_par(db, g.bqkv, d.m, 3 * d.h) != 0) return -1);
    NN_STAGE(T, NN_ST_BWD_LN_APPLY, nn_layernorm_apply(xhat1, p.g1, p.b1, w->y, d.m, d.h));
    NN_STAGE(T, NN_ST_BWD_GEMM_QKV,
             GEMM(1, 0, d.H, 3 * d.H, d.M, 1.0f, w->y, d.H, db, 3 * d.H, beta, g.Wqkv, 3 * d.H);
             GEMM(0, 1, d.M, d.H, 3 * d.H, 1.0f, db, 3 * d.H, p.Wqkv, 3 * d.H, 0.0f, d2, d.H));
    /* din = d x1 + LN1'(d2) */
    NN_STAGE(T, NN_ST_BWD_LN1_RES,
             if (nn_layernorm_bwd_residual(d2, xhat1, rstd1, p.g1, d1, din, g.g1, g.b1, NULL, d.m, d.h) != 0)
                 return -1);
    if (!direct)
        NN_STAGE(T, NN_ST_BWD_COPIES, nn_accum_f32(l->grads.data, l->grads.dtype, G, l->grads.numel));
    return 0;
}
