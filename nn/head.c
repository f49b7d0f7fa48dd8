/* Final layer norm, LM head and cross-entropy:
 *   logits = LN(x) Wlm, loss = mean over counted rows of -log softmax[target]
 * Parameters: g, b [H] | Wlm [H, V]. Saved: xhat, rstd, probabilities. */
#include "layer_internal.h"

#include <string.h>

enum { XHAT, RSTD, PROBS };

int nn_head_forward(struct nn_layer *l, const float *x, const int32_t *targets, double *loss)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, V = l->cfg.vocab;
    size_t m = (size_t)M, h = (size_t)H;
    float *W = nn_weights(l), *probs = nn_act(l, PROBS);
    nn_store_f32(l->inter.data, l->inter.dtype, x, m * h);
    if (targets != l->aux.data)
        memcpy(l->aux.data, targets, m * sizeof(int32_t));
    for (size_t r = 0; r < m; r++)
        if (targets[r] >= V)
            return -1;
    nn_layernorm_fwd(x, W, W + h, w->y, nn_act(l, XHAT), nn_act(l, RSTD), m, h, 1e-5f);
    if (nn_gemm(NN_HOST, 0, 0, M, V, H, 1.0f, w->y, H, W + 2 * h, V, 0.0f, probs, V) != 0)
        return -1;
    NN_PROGRESS(w);
    size_t count;
    double sum = nn_softmax_xent_fwd(probs, l->aux.data, probs, m, (size_t)V, &count);
    l->count = (double)count;
    *loss = count ? sum / (double)count : 0;
    nn_act_save(l);
    return 0;
}

int nn_head_backward(struct nn_layer *l, float *din)
{
    struct nn_workspace *w = l->ws;
    int M = (int)l->inter.shape[0], H = l->cfg.hidden, V = l->cfg.vocab;
    size_t m = (size_t)M, h = (size_t)H;
    float *W = nn_weights(l), *G = w->G;
    memset(G, 0, l->grads.numel * sizeof(float));
    nn_act_load(l);
    float *xhat = nn_act(l, XHAT), *probs = nn_act(l, PROBS);
    /* dlogits, in place over the probabilities' fp32 copy */
    nn_softmax_xent_bwd(probs, l->aux.data, probs, m, (size_t)V,
                        l->count > 0 ? (float)(1.0 / l->count) : 0.0f);
    for (size_t r = 0; r < m; r++)
        for (size_t c = 0; c < h; c++)
            w->y[r * h + c] = xhat[r * h + c] * W[c] + W[h + c];
    if (nn_gemm(NN_HOST, 1, 0, H, V, M, 1.0f, w->y, H, probs, V, 0.0f, G + 2 * h, V) != 0)
        return -1;
    NN_PROGRESS(w);
    if (nn_gemm(NN_HOST, 0, 1, M, H, V, 1.0f, probs, V, W + 2 * h, V, 0.0f, w->d2, H) != 0)
        return -1;
    NN_PROGRESS(w);
    nn_layernorm_bwd(w->d2, xhat, nn_act(l, RSTD), W, din, G, G + h, m, h);
    nn_accum_f32(l->grads.data, l->grads.dtype, G, l->grads.numel);
    return 0;
}
