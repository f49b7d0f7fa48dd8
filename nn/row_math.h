/* Internal to nn/: per-row arithmetic the reference ops and the fused
 * paths share, so both compute it the same way (their results are
 * compared bit for bit in the tests). */
#ifndef MB_NN_ROW_MATH_H
#define MB_NN_ROW_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* GELU, tanh approximation (GPT-2), split around the tanh so that the
 * reference (tanhf) and the fused path (a vectorizable tanh) share the
 * rest: u = nn_gelu_arg(v), t = tanh(u), GELU(v) = nn_gelu_value(v, t),
 * GELU'(v) = nn_gelu_slope(v, t). */
#define NN_GELU_K 0.7978845608028654f /* sqrt(2/pi) */
static inline float nn_gelu_arg(float v) { return NN_GELU_K * (v + 0.044715f * v * v * v); }
static inline float nn_gelu_value(float v, float t) { return 0.5f * v * (1.0f + t); }
static inline float nn_gelu_slope(float v, float t)
{
    float du = NN_GELU_K * (1.0f + 3.0f * 0.044715f * v * v);
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
}

/* Row i of a causal softmax over S scores, in place: entries 0..i become
 * the softmax of themselves (max subtracted), the masked rest 0. */
static inline void nn_softmax_causal_row(float *row, size_t i, size_t S)
{
    float mx = row[0];
    for (size_t j = 1; j <= i; j++)
        mx = row[j] > mx ? row[j] : mx;
    float s = 0;
    for (size_t j = 0; j <= i; j++) {
        row[j] = expf(row[j] - mx);
        s += row[j];
    }
    float inv = 1.0f / s;
    for (size_t j = 0; j <= i; j++)
        row[j] *= inv;
    for (size_t j = i + 1; j < S; j++)
        row[j] = 0;
}

/* e^x for x <= 0 (a softmax's shifted scores) without libm, so a loop
 * of it vectorizes: Cephes' expf (x = n ln2 + r, |r| <= ln2/2, degree-7
 * polynomial in r, 2^n put into the exponent bits), within 2 ulp of expf
 * on every float in [-87.3, 0] (tests/unit/test_nn_fused.c checks a
 * sweep of it against expf). Below -87.3 it gives e^-87.3 (1.2e-38)
 * where expf gives a subnormal or 0; a NaN stays NaN. Integer masks,
 * not float compares: those stay branches under -ftrapping-math and the
 * loop would not vectorize. */
static inline float nn_exp_nonpos(float x)
{
    const int32_t lim = 0x42aea000; /* 87.3125f */
    int32_t xb, ab;
    memcpy(&xb, &x, 4);
    ab = xb & 0x7fffffff;
    int32_t cb = (ab < lim ? ab : lim) | (int32_t)0x80000000;
    float xc;
    memcpy(&xc, &cb, 4);
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float t = xc * 1.44269504088896341f + magic;
    float n = t - magic;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t tb, eb;
    memcpy(&tb, &t, 4);
    /* t's low mantissa bits hold n (two's complement); 2^n as a float */
    eb = (int32_t)((uint32_t)(tb - 0x4b400000 + 127) << 23);
    float scale;
    memcpy(&scale, &eb, 4);
    float e = p * scale;
    int32_t rb;
    memcpy(&rb, &e, 4);
    int32_t nan = -(int32_t)(ab > 0x7f800000);
    rb = (xb & nan) | (rb & ~nan);
    memcpy(&e, &rb, 4);
    return e;
}

/* nn_softmax_causal_row with nn_exp_nonpos and the sum vectorized (in
 * SIMD-lane order, not left to right): the fused path's softmax, within
 * a few ulp of the reference per entry (test_nn_fused). */
static inline void nn_softmax_causal_row_simd(float *row, size_t i, size_t S)
{
    float mx = row[0];
    for (size_t j = 1; j <= i; j++)
        mx = row[j] > mx ? row[j] : mx;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t j = 0; j <= i; j++) {
        float e = nn_exp_nonpos(row[j] - mx);
        row[j] = e;
        s += e;
    }
    float inv = 1.0f / s;
#pragma omp simd
    for (size_t j = 0; j <= i; j++)
        row[j] *= inv;
    for (size_t j = i + 1; j < S; j++)
        row[j] = 0;
}

/* The causal softmax's backward for row i, in place: dP becomes
 * dS = scale * P * (dP - sum_j dP_j P_j) over the first i + 1 entries, 0
 * beyond. */
static inline void nn_softmax_causal_bwd_row(float *row, const float *pr, size_t i, size_t S, float scale)
{
    float dot = 0;
    for (size_t j = 0; j <= i; j++)
        dot += row[j] * pr[j];
    for (size_t j = 0; j <= i; j++)
        row[j] = scale * pr[j] * (row[j] - dot);
    for (size_t j = i + 1; j < S; j++)
        row[j] = 0;
}

/* The layer norm's row sums run in double over NN_LANES interleaved
 * partial sums, added in lane order at the end: one chain of dependent
 * double adds (4 cycles each) made the norms latency-bound, 9% of a
 * gpt-small block on the quiet run for 4% of its bytes. The order is
 * fixed by n alone, and the reference and fused paths both use these. */
#define NN_LANES 8

static inline double nn_lanes_total(const double *acc)
{
    double t = 0;
    for (int k = 0; k < NN_LANES; k++)
        t += acc[k];
    return t;
}

/* Layer norm backward's two row means, summed in double: *a = mean of
 * dy*g, *b = mean of dy*g*xhat (dx = rstd * (dy*g - a - xhat*b)). */
static inline void nn_ln_bwd_row_means(const float *dy, const float *xhat, const float *g, size_t cols, float *a,
                                       float *b)
{
    double m1[NN_LANES] = {0}, m2[NN_LANES] = {0};
    size_t c = 0;
    for (; c + NN_LANES <= cols; c += NN_LANES)
        for (int k = 0; k < NN_LANES; k++) {
            double t = (double)dy[c + k] * g[c + k];
            m1[k] += t;
            m2[k] += t * xhat[c + k];
        }
    for (int k = 0; c < cols; c++, k++) {
        double t = (double)dy[c] * g[c];
        m1[k] += t;
        m2[k] += t * xhat[c];
    }
    *a = (float)(nn_lanes_total(m1) / (double)cols);
    *b = (float)(nn_lanes_total(m2) / (double)cols);
}

/* Layer norm's statistics of one row, summed in double: its mean and
 * 1 / sqrt(variance + eps). */
static inline void nn_row_mean_rstd(const float *x, size_t cols, float eps, float *mu, float *rs)
{
    double s[NN_LANES] = {0}, ss[NN_LANES] = {0};
    size_t c = 0;
    for (; c + NN_LANES <= cols; c += NN_LANES)
        for (int k = 0; k < NN_LANES; k++)
            s[k] += x[c + k];
    for (int k = 0; c < cols; c++, k++)
        s[k] += x[c];
    double mean = nn_lanes_total(s) / (double)cols;
    for (c = 0; c + NN_LANES <= cols; c += NN_LANES)
        for (int k = 0; k < NN_LANES; k++) {
            double d = x[c + k] - mean;
            ss[k] += d * d;
        }
    for (int k = 0; c < cols; c++, k++) {
        double d = x[c] - mean;
        ss[k] += d * d;
    }
    *rs = (float)(1.0 / sqrt(nn_lanes_total(ss) / (double)cols + eps));
    *mu = (float)mean;
}

#endif
