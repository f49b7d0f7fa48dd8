/* Internal to nn/: per-row arithmetic the reference ops and the fused
 * paths share, so both compute it the same way (their results are
 * compared bit for bit in the tests). */
#ifndef MB_NN_ROW_MATH_H
#define MB_NN_ROW_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h> /* SSE2, and xmmintrin.h's SSE */
#endif

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

/* The largest of x[0..n-1] (n >= 1), 8 at a time in two SSE registers:
 * a compare-and-select chain over the row does not vectorize (under
 * -ftrapping-math GCC keeps it a branch per element). The max of
 * numbers is exact in any order, so the value is the left-to-right
 * one's (up to the sign of a zero max, which x - max does not see).
 * With a NaN in x the result may or may not be NaN; a softmax row then
 * turns NaN through the NaN's own exponential either way. */
static inline float nn_row_max(const float *x, size_t n)
{
    size_t j = 0;
    float mx = x[0];
#ifdef __SSE2__
    if (n >= 8) {
        __m128 m0 = _mm_loadu_ps(x), m1 = _mm_loadu_ps(x + 4);
        for (j = 8; j + 8 <= n; j += 8) {
            m0 = _mm_max_ps(m0, _mm_loadu_ps(x + j));
            m1 = _mm_max_ps(m1, _mm_loadu_ps(x + j + 4));
        }
        float l[4];
        _mm_storeu_ps(l, _mm_max_ps(m0, m1));
        mx = l[0];
        for (int k = 1; k < 4; k++)
            mx = l[k] > mx ? l[k] : mx;
    }
#endif
    for (; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    return mx;
}

/* nn_softmax_causal_row with nn_exp_nonpos, the max by nn_row_max and
 * the sum vectorized (in SIMD-lane order, not left to right): the fused
 * path's softmax, within a few ulp of the reference per entry
 * (test_nn_fused). */
static inline void nn_softmax_causal_row_simd(float *row, size_t i, size_t S)
{
    float mx = nn_row_max(row, i + 1);
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

typedef float nn_f4 __attribute__((vector_size(4 * sizeof(float))));

static inline nn_f4 nn_f4_load(const float *x)
{
    nn_f4 v;
    memcpy(&v, x, sizeof v);
    return v;
}

/* The causal softmax's backward for row i, in place: dP becomes
 * dS = scale * P * (dP - sum_j dP_j P_j) over the first i + 1 entries, 0
 * beyond. The dot product goes over 8 float lanes (two 4-float vectors;
 * lane k takes j = k mod 8 in order, the lanes are added in order and
 * the tail after them): left to right it was one chain of dependent adds.
 * The order depends on i alone, so the reference (attn.c) and the
 * batched path (attn_batched.c), which both call this, stay bit for bit
 * equal. */
static inline void nn_softmax_causal_bwd_row(float *row, const float *pr, size_t i, size_t S, float scale)
{
    size_t n = i + 1, j = 0;
    nn_f4 a0 = {0}, a1 = {0};
    for (; j + 8 <= n; j += 8) {
        a0 += nn_f4_load(row + j) * nn_f4_load(pr + j);
        a1 += nn_f4_load(row + j + 4) * nn_f4_load(pr + j + 4);
    }
    float dot = 0;
    for (int k = 0; k < 4; k++)
        dot += a0[k];
    for (int k = 0; k < 4; k++)
        dot += a1[k];
    for (; j < n; j++)
        dot += row[j] * pr[j];
#pragma omp simd
    for (size_t q = 0; q < n; q++)
        row[q] = scale * pr[q] * (row[q] - dot);
    for (size_t q = n; q < S; q++)
        row[q] = 0;
}

/* The layer norm's row sums run in double over NN_LANES interleaved
 * partial sums, added in lane order at the end: one chain of dependent
 * double adds (4 cycles each) made the norms latency-bound, 9% of a
 * gpt-small block on the quiet run for 4% of its bytes. The order is
 * fixed by n alone, and the reference and fused paths both use these.
 * The lanes are one GCC vector of 8 doubles (4 SSE2 registers on the
 * baseline build): as an array of 8, GCC kept them on the stack and every
 * add went through a store and a reload (the row statistics of a 512 x
 * 128 layer norm took 50 us of its 83). Lane k still adds elements
 * k, k + 8, k + 16, ... in order, so the bits are the array's. */
#define NN_LANES 8

/* The lanes as 4 vectors of 2 doubles, each one SSE2 register: lane
 * 2j + i is element i of v[j]. */
typedef double nn_d2 __attribute__((vector_size(2 * sizeof(double))));
struct nn_lanes {
    nn_d2 v0, v1, v2, v3;
};

/* Elements i, i + 1 of x as doubles (one cvtps2pd: GCC lowers
 * __builtin_convertvector of a 2-float vector to two scalar converts). */
static inline nn_d2 nn_d2_load(const float *x)
{
#ifdef __SSE2__
    return (nn_d2)_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)x)));
#else
    nn_d2 d = {x[0], x[1]};
    return d;
#endif
}

/* The lanes into acc[0..7] in lane order. */
static inline void nn_lanes_store(struct nn_lanes l, double *acc)
{
    memcpy(acc, &l.v0, 16);
    memcpy(acc + 2, &l.v1, 16);
    memcpy(acc + 4, &l.v2, 16);
    memcpy(acc + 6, &l.v3, 16);
}

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
    struct nn_lanes m1 = {{0}, {0}, {0}, {0}}, m2 = m1;
    size_t c = 0;
#define NN_LN_BWD_STEP(j)                                                   \
    do {                                                                    \
        nn_d2 t = nn_d2_load(dy + c + 2 * j) * nn_d2_load(g + c + 2 * j); \
        m1.v##j += t;                                                       \
        m2.v##j += t * nn_d2_load(xhat + c + 2 * j);                        \
    } while (0)
    for (; c + NN_LANES <= cols; c += NN_LANES) {
        NN_LN_BWD_STEP(0);
        NN_LN_BWD_STEP(1);
        NN_LN_BWD_STEP(2);
        NN_LN_BWD_STEP(3);
    }
#undef NN_LN_BWD_STEP
    double s1[NN_LANES], s2[NN_LANES];
    nn_lanes_store(m1, s1);
    nn_lanes_store(m2, s2);
    for (size_t k = 0; k < NN_LANES && c + k < cols; k++) {
        double t = (double)dy[c + k] * g[c + k];
        s1[k] += t;
        s2[k] += t * xhat[c + k];
    }
    *a = (float)(nn_lanes_total(s1) / (double)cols);
    *b = (float)(nn_lanes_total(s2) / (double)cols);
}

/* Layer norm's statistics of one row, summed in double: its mean and
 * 1 / sqrt(variance + eps). */
static inline void nn_row_mean_rstd(const float *x, size_t cols, float eps, float *mu, float *rs)
{
    struct nn_lanes s = {{0}, {0}, {0}, {0}}, ss = s;
    size_t c = 0;
    for (; c + NN_LANES <= cols; c += NN_LANES) {
        s.v0 += nn_d2_load(x + c);
        s.v1 += nn_d2_load(x + c + 2);
        s.v2 += nn_d2_load(x + c + 4);
        s.v3 += nn_d2_load(x + c + 6);
    }
    double acc[NN_LANES];
    nn_lanes_store(s, acc);
    size_t tail = c;
    for (size_t k = 0; k < NN_LANES && tail + k < cols; k++)
        acc[k] += x[tail + k];
    double mean = nn_lanes_total(acc) / (double)cols;
    nn_d2 m2 = {mean, mean};
    for (c = 0; c + NN_LANES <= cols; c += NN_LANES) {
        nn_d2 d0 = nn_d2_load(x + c) - m2, d1 = nn_d2_load(x + c + 2) - m2;
        nn_d2 d2 = nn_d2_load(x + c + 4) - m2, d3 = nn_d2_load(x + c + 6) - m2;
        ss.v0 += d0 * d0;
        ss.v1 += d1 * d1;
        ss.v2 += d2 * d2;
        ss.v3 += d3 * d3;
    }
    nn_lanes_store(ss, acc);
    for (size_t k = 0; k < NN_LANES && tail + k < cols; k++) {
        double d = x[tail + k] - mean;
        acc[k] += d * d;
    }
    *rs = (float)(1.0 / sqrt(nn_lanes_total(acc) / (double)cols + eps));
    *mu = (float)mean;
}

#endif
