/* GraphSAGE layer (PyG SAGEConv, mean aggregator) on a sampled block:
 *   agg_i = mean_{j in N(i)} x_j,   y = agg Wl + x_dst Wr + b,   ReLU optional
 * Backward: dWl = agg^T dy, dWr = x_dst^T dy, db = colsum dy,
 *   dx_dst += dy Wr^T, dx_j += (dy Wl^T)_i / deg(i) for every edge (i, j)
 * (the scatter-add over the block, serial per source for determinism). */
#include "nn.h"

#include <stdlib.h>
#include <string.h>

int nn_sage_init(struct nn_sage *s, int in, int out, int relu, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->in = in;
    s->out = out;
    s->relu = relu;
    size_t n = 2 * (size_t)in * (size_t)out + (size_t)out;
    char err[128];
    if (nn_tensor_alloc(&s->params, NN_F32, NN_HOST, 1, &n, err, sizeof(err)) != 0 ||
        nn_tensor_alloc(&s->grads, NN_F32, NN_HOST, 1, &n, err, sizeof(err)) != 0)
        return -1;
    s->Wl = s->params.data;
    s->Wr = s->Wl + (size_t)in * out;
    s->b = s->Wr + (size_t)in * out;
    s->dWl = s->grads.data;
    s->dWr = s->dWl + (size_t)in * out;
    s->db = s->dWr + (size_t)in * out;
    /* PyG Linear default: kaiming-uniform-like U(-1/sqrt(in), 1/sqrt(in)) */
    struct nn_rng r;
    nn_rng_seed(&r, seed);
    double a = 1.0 / __builtin_sqrt((double)in);
    for (size_t i = 0; i < 2 * (size_t)in * out; i++)
        s->Wl[i] = (float)(a * (2 * nn_rng_uniform(&r) - 1));
    return 0;
}

void nn_sage_free(struct nn_sage *s)
{
    nn_tensor_free(&s->params);
    nn_tensor_free(&s->grads);
    free(s->agg);
    free(s->y);
    memset(s, 0, sizeof(*s));
}

void nn_sage_zero_grad(struct nn_sage *s) { memset(s->grads.data, 0, nn_tensor_bytes(&s->grads)); }

int nn_sage_forward(struct nn_sage *s, const struct nn_sage_block *blk, const float *x, float *y)
{
    size_t nd = blk->n_dst, in = (size_t)s->in, out = (size_t)s->out;
    if (nd > blk->n_src)
        return -1;
    if (nd > s->cap_dst) {
        free(s->agg);
        free(s->y);
        s->agg = malloc(nd * in * sizeof(float));
        s->y = malloc(nd * out * sizeof(float));
        s->cap_dst = nd;
        if (!s->agg || !s->y)
            return -1;
    }
    s->x = x;
    s->blk = *blk;
#pragma omp parallel for schedule(static) if (nd * in >= 65536)
    for (size_t i = 0; i < nd; i++) {
        float *a = s->agg + i * in;
        memset(a, 0, in * sizeof(float));
        int64_t lo = blk->ptr[i], hi = blk->ptr[i + 1];
        for (int64_t e = lo; e < hi; e++) {
            const float *xj = x + (size_t)blk->idx[e] * in;
            for (size_t c = 0; c < in; c++)
                a[c] += xj[c];
        }
        if (hi > lo) {
            float inv = 1.0f / (float)(hi - lo);
            for (size_t c = 0; c < in; c++)
                a[c] *= inv;
        }
    }
    for (size_t i = 0; i < nd; i++)
        memcpy(y + i * out, s->b, out * sizeof(float));
    if (nn_gemm(NN_HOST, 0, 0, (int)nd, (int)out, (int)in, 1.0f, s->agg, (int)in, s->Wl, (int)out,
                1.0f, y, (int)out) != 0 ||
        nn_gemm(NN_HOST, 0, 0, (int)nd, (int)out, (int)in, 1.0f, x, (int)in, s->Wr, (int)out, 1.0f,
                y, (int)out) != 0)
        return -1;
    if (s->relu)
        nn_relu_fwd(y, y, nd * out);
    memcpy(s->y, y, nd * out * sizeof(float));
    return 0;
}

int nn_sage_backward(struct nn_sage *s, float *dy, float *dx)
{
    const struct nn_sage_block *blk = &s->blk;
    size_t nd = blk->n_dst, in = (size_t)s->in, out = (size_t)s->out;
    if (s->relu)
        nn_relu_bwd(s->y, dy, dy, nd * out);
    nn_bias_bwd(dy, s->db, nd, out);
    if (nn_gemm(NN_HOST, 1, 0, (int)in, (int)out, (int)nd, 1.0f, s->agg, (int)in, dy, (int)out,
                1.0f, s->dWl, (int)out) != 0 ||
        nn_gemm(NN_HOST, 1, 0, (int)in, (int)out, (int)nd, 1.0f, s->x, (int)in, dy, (int)out, 1.0f,
                s->dWr, (int)out) != 0)
        return -1;
    if (!dx)
        return 0;
    memset(dx, 0, blk->n_src * in * sizeof(float));
    /* dx_dst = dy Wr^T (the dst nodes are the first n_dst sources) */
    if (nn_gemm(NN_HOST, 0, 1, (int)nd, (int)in, (int)out, 1.0f, dy, (int)out, s->Wr, (int)out,
                0.0f, dx, (int)in) != 0)
        return -1;
    float *dagg = malloc(nd * in * sizeof(float) + 1);
    if (!dagg)
        return -1;
    if (nn_gemm(NN_HOST, 0, 1, (int)nd, (int)in, (int)out, 1.0f, dy, (int)out, s->Wl, (int)out,
                0.0f, dagg, (int)in) != 0) {
        free(dagg);
        return -1;
    }
    for (size_t i = 0; i < nd; i++) { /* scatter-add along the block's edges */
        int64_t lo = blk->ptr[i], hi = blk->ptr[i + 1];
        if (hi <= lo)
            continue;
        float inv = 1.0f / (float)(hi - lo);
        const float *da = dagg + i * in;
        for (int64_t e = lo; e < hi; e++) {
            float *dxj = dx + (size_t)blk->idx[e] * in;
            for (size_t c = 0; c < in; c++)
                dxj[c] += da[c] * inv;
        }
    }
    free(dagg);
    return 0;
}

double nn_sage_flops_fwd(const struct nn_sage *s, const struct nn_sage_block *blk)
{
    double edges = (double)blk->ptr[blk->n_dst];
    return edges * s->in + 2.0 * 2.0 * (double)blk->n_dst * s->in * s->out;
}
