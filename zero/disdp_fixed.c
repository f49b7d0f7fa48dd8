/* Fixed-point gradients and the linear checksum (disdp_internal.h). */
#include "disdp_internal.h"

#include <math.h>
#include <stdio.h>

int mb_disdp_quantize(const float *g, size_t n, int bits, int W, int32_t *q, char *err, size_t errlen)
{
    /* W of them must add up without leaving int32 */
    double limit = (double)INT32_MAX / (double)W, scale = ldexp(1.0, bits);
    for (size_t i = 0; i < n; i++) {
        double x = rint((double)g[i] * scale);
        if (!(fabs(x) <= limit)) {
            snprintf(err, errlen,
                     "gradient element %zu = %g does not fit %d-bit fixed point summed over %d workers (|g| < %g)",
                     i, (double)g[i], bits, W, limit / scale);
            return -1;
        }
        q[i] = (int32_t)x;
    }
    return 0;
}

void mb_disdp_dequantize(const int32_t *q, size_t n, double scale, float *g)
{
    for (size_t i = 0; i < n; i++)
        g[i] = (float)((double)q[i] * scale);
}

double mb_disdp_grad_scale(const struct mb_disdp_cfg *c)
{
    if (c->grad_scale > 0)
        return c->grad_scale;
    double s = 1.0 / (double)c->W;
    return c->agg == MB_DISDP_AGG_FIXED ? ldexp(s, -MB_DISDP_FIXED_BITS) : s;
}

int mb_disdp_micro(const struct mb_disdp_cfg *c)
{
    return c->micro > 0 ? c->micro : 1;
}

void mb_disdp_block_sums(const void *blk, size_t n, enum mb_disdp_agg agg, double *sum, double *abs_sum)
{
    if (agg == MB_DISDP_AGG_FIXED) {
        const int32_t *q = blk;
        int64_t s = 0, a = 0;
        for (size_t i = 0; i < n; i++) {
            s += q[i];
            a += q[i] < 0 ? -(int64_t)q[i] : q[i];
        }
        *sum = (double)s; /* exact below 2^53: n·2^31 */
        *abs_sum = (double)a;
        return;
    }
    const float *f = blk;
    double s = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
        s += f[i];
        a += fabs(f[i]);
    }
    *sum = s;
    *abs_sum = a;
}

int mb_disdp_sums_match(enum mb_disdp_agg agg, int W, double got, double want, double abs_sum)
{
    if (agg == MB_DISDP_AGG_FIXED)
        return got == want;
    double tol = (double)(W + 1) * ldexp(1.0, -23) * abs_sum;
    return fabs(got - want) <= tol;
}
