/* Elementwise, normalisation and loss ops, forward and backward (host,
 * fp32, row-major). Row loops are OpenMP-parallel with static schedules,
 * so results do not depend on timing. */
#include "nn.h"
#include "row_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parallelise loops over at least this many elements. Lower thresholds
 * lose: OpenMP's team and OpenBLAS's pthread pool both spin-wait on the
 * same cores, so a short parallel loop between two GEMMs costs more in
 * contention than it saves (measured with mb-nn: block/sgemm 0.74 with
 * 64K, 0.9 serial, on 2 cores). */
#define PAR_ELEMS (1u << 22)

void nn_layernorm_fwd(const float *x, const float *g, const float *b, float *y, float *xhat,
                      float *rstd, size_t rows, size_t cols, float eps)
{
#pragma omp parallel for schedule(static) if (rows * cols >= PAR_ELEMS)
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float mu, rs;
        nn_row_mean_rstd(xr, cols, eps, &mu, &rs);
        if (rstd)
            rstd[r] = rs;
        for (size_t c = 0; c < cols; c++) {
            float xh = (xr[c] - mu) * rs;
            if (xhat)
                xhat[r * cols + c] = xh;
            if (y)
                y[r * cols + c] = xh * g[c] + b[c];
        }
    }
}

void nn_layernorm_bwd(const float *dy, const float *xhat, const float *rstd, const float *g,
                      float *dx, float *dg, float *db, size_t rows, size_t cols)
{
    /* dg/db: column sums, row by row (contiguous, vectorised, a fixed
     * order) */
    for (size_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * cols, *xr = xhat + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++) {
            dg[c] += dyr[c] * xr[c];
            db[c] += dyr[c];
        }
    }
#pragma omp parallel for schedule(static) if (rows * cols >= PAR_ELEMS)
    for (size_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * cols, *xr = xhat + r * cols;
        float a, bb;
        nn_ln_bwd_row_means(dyr, xr, g, cols, &a, &bb);
        for (size_t c = 0; c < cols; c++)
            dx[r * cols + c] = rstd[r] * (dyr[c] * g[c] - a - xr[c] * bb);
    }
}

void nn_gelu_fwd(const float *x, float *y, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_ELEMS)
    for (size_t i = 0; i < n; i++)
        y[i] = nn_gelu_value(x[i], tanhf(nn_gelu_arg(x[i])));
}

void nn_gelu_bwd(const float *x, const float *dy, float *dx, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_ELEMS)
    for (size_t i = 0; i < n; i++)
        dx[i] = dy[i] * nn_gelu_slope(x[i], tanhf(nn_gelu_arg(x[i])));
}

void nn_relu_fwd(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}

void nn_relu_bwd(const float *y, const float *dy, float *dx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = y[i] > 0 ? dy[i] : 0;
}

void nn_add_bias(float *y, const float *bias, size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= PAR_ELEMS)
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            y[r * cols + c] += bias[c];
}

void nn_bias_bwd(const float *dy, float *db, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) { /* row by row: contiguous, a fixed order */
        const float *d = dy + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++)
            db[c] += d[c];
    }
}

double nn_softmax_xent_fwd(const float *logits, const int32_t *targets, float *p, size_t rows,
                           size_t cols, size_t *count)
{
    /* per-row losses summed serially afterwards: the same sum for any
     * thread count */
    double *lr_loss = malloc((rows ? rows : 1) * sizeof(double));
    if (!lr_loss)
        return NAN;
#pragma omp parallel for schedule(static) if (rows * cols >= PAR_ELEMS)
    for (size_t r = 0; r < rows; r++) {
        const float *lr = logits + r * cols;
        float *pr = p + r * cols;
        float mx = lr[0];
        for (size_t c = 1; c < cols; c++)
            mx = lr[c] > mx ? lr[c] : mx;
        double s = 0;
        int32_t t = targets[r];
        float lt = t >= 0 ? lr[t] : 0;
        for (size_t c = 0; c < cols; c++) {
            pr[c] = expf(lr[c] - mx);
            s += pr[c];
        }
        float inv = (float)(1.0 / s);
        for (size_t c = 0; c < cols; c++)
            pr[c] *= inv;
        lr_loss[r] = t >= 0 ? log(s) + mx - lt : 0;
    }
    double loss = 0;
    size_t cnt = 0;
    for (size_t r = 0; r < rows; r++)
        if (targets[r] >= 0) {
            loss += lr_loss[r];
            cnt++;
        }
    free(lr_loss);
    *count = cnt;
    return loss;
}

void nn_softmax_xent_bwd(const float *p, const int32_t *targets, float *dlogits, size_t rows,
                         size_t cols, float scale)
{
#pragma omp parallel for schedule(static) if (rows * cols >= PAR_ELEMS)
    for (size_t r = 0; r < rows; r++) {
        float *d = dlogits + r * cols;
        int32_t t = targets[r];
        if (t < 0) {
            memset(d, 0, cols * sizeof(float));
            continue;
        }
        for (size_t c = 0; c < cols; c++)
            d[c] = scale * p[r * cols + c];
        d[t] -= scale;
    }
}

double nn_logsoftmax_nll_fwd(const float *x, const int32_t *targets, float *logp, size_t rows,
                             size_t cols, size_t *count)
{
    double loss = 0;
    size_t cnt = 0;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float mx = xr[0];
        for (size_t c = 1; c < cols; c++)
            mx = xr[c] > mx ? xr[c] : mx;
        double s = 0;
        for (size_t c = 0; c < cols; c++)
            s += exp((double)xr[c] - mx);
        float lse = (float)(log(s) + mx);
        for (size_t c = 0; c < cols; c++)
            logp[r * cols + c] = xr[c] - lse;
        if (targets[r] >= 0) {
            loss -= logp[r * cols + targets[r]];
            cnt++;
        }
    }
    *count = cnt;
    return loss;
}

void nn_logsoftmax_nll_bwd(const float *logp, const int32_t *targets, float *dx, size_t rows,
                           size_t cols, float scale)
{
    for (size_t r = 0; r < rows; r++) {
        if (targets[r] < 0) {
            memset(dx + r * cols, 0, cols * sizeof(float));
            continue;
        }
        for (size_t c = 0; c < cols; c++)
            dx[r * cols + c] = scale * expf(logp[r * cols + c]);
        dx[r * cols + targets[r]] -= scale;
    }
}
