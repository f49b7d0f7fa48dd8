/* Per-shard work: fixed-point gradient sums, Adam on the shard, and the
 * gathered parameters a check or a dump reads. */
#include "zero.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* |each term| <= INT32_MAX / terms: their sum cannot wrap, in any
 * order; NaN becomes 0 here, but the fp32 loss check still sees it */
static int32_t quantize(float g, double lim, double one)
{
    double q = nearbyint((double)g * one);
    q = q > lim ? lim : q < -lim ? -lim : q == q ? q : 0;
    return (int32_t)q;
}

void zero_fixed_accumulate(int32_t *acc, const float *g, size_t n, int terms)
{
    const double lim = (double)INT32_MAX / (terms > 0 ? terms : 1);
    const double one = ldexp(1.0, ZERO_FIXED_FRAC_BITS);
    for (size_t k = 0; k < n; k++)
        acc[k] += quantize(g[k], lim, one);
}

void zero_grad_collect(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    if (z->o.agg != ZERO_AGG_FIXED)
        return; /* nn accumulates fp32 over the micro-batches */
    int terms = z->o.batch / z->o.micro;
    if ((void *)ly->acc == (void *)ly->grad) {
        /* one micro-batch, one pooled buffer: quantized in place (each
         * element read before its slot is written; the sums start at 0) */
        const double lim = (double)INT32_MAX / (terms > 0 ? terms : 1);
        const double one = ldexp(1.0, ZERO_FIXED_FRAC_BITS);
        unsigned char *b = (unsigned char *)ly->grad; /* memcpy: no float/int32 aliasing */
        for (size_t k = 0; k < ly->numel; k++) {
            float x;
            memcpy(&x, b + 4 * k, 4);
            int32_t q = quantize(x, lim, one);
            memcpy(b + 4 * k, &q, 4);
        }
        return;
    }
    zero_fixed_accumulate(ly->acc, ly->grad, ly->numel, terms);
    memset(ly->grad, 0, ly->numel * 4);
}

void zero_shard_adam(struct zero_run *z, int i, long long t)
{
    struct zero_layer *ly = &z->layer[i];
    if (!ly->n)
        return;
    float scale = zero_grad_scale(&z->o);
    if (z->o.agg == ZERO_AGG_FIXED) {
        /* the exact integer sum, scaled in double and rounded once, in
         * place (same size): nn's loaders have no int32 path */
        const int32_t *q = ly->red;
        float *g = ly->red;
        double d = ldexp((double)z->o.micro / z->o.batch, -ZERO_FIXED_FRAC_BITS);
        for (size_t k = 0; k < ly->n; k++)
            g[k] = (float)((double)q[k] * d);
        scale = 1.0f;
    }
    nn_adam_step(&z->o.hp, t, ly->n, ly->master, ly->m, ly->v, ly->red, NN_F32, scale, ly->work, NN_F32);
}

int zero_layer_params(struct zero_run *z, int i, float *out)
{
    struct zero_layer *ly = &z->layer[i];
    float *all = malloc((size_t)z->o.lay.W * ly->S * 4 + 4);
    if (!all)
        return -1;
    int rc = MPI_Allgather(ly->master, (int)ly->S, MPI_FLOAT, all, (int)ly->S, MPI_FLOAT, z->workers);
    if (rc == MPI_SUCCESS)
        memcpy(out, all, ly->numel * 4);
    free(all);
    return rc == MPI_SUCCESS ? 0 : -1;
}

uint32_t zero_layer_crc(struct zero_run *z, int i)
{
    float *p = malloc(z->layer[i].numel * 4 + 4);
    uint32_t crc = 0;
    if (p && zero_layer_params(z, i, p) == 0)
        crc = mb_crc32c(0, p, z->layer[i].numel * 4);
    free(p);
    return crc;
}
