/* fp32 <-> fp16 / bf16 conversions (round to nearest even), element-wise. */
#include "nn.h"

#include <string.h>

static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t nn_f32_to_f16(float f)
{
    uint32_t x = f2u(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x47800000u) /* >= 65536 (after rounding: inf), inf or nan */
        return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        /* adding 0.5 makes the FPU round the value into the low mantissa bits */
        float r = u2f(ax) + 0.5f;
        return (uint16_t)(sign | (f2u(r) - 0x3f000000u));
    }
    uint32_t mant_odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round */
    return (uint16_t)(sign | (ax >> 13));
}

float nn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) { /* zero or subnormal: m * 2^-24 */
        float v = (float)m * 5.9604644775390625e-8f;
        return u2f(f2u(v) | sign);
    }
    if (e == 31)
        return u2f(sign | 0x7f800000u | (m << 13));
    return u2f(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t nn_f32_to_bf16(float f)
{
    uint32_t x = f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float nn_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }

#define PAR_MIN 65536 /* below this, threads cost more than they save */

/* fp16 or bf16 (bf) to fp32 and back; bf is loop-invariant, so the
 * compiler unswitches it. */
static void halves_to_f32(float *dst, const uint16_t *s, int bf, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++)
        dst[i] = bf ? nn_bf16_to_f32(s[i]) : nn_f16_to_f32(s[i]);
}

static void f32_to_halves(uint16_t *d, const float *src, int bf, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++)
        d[i] = bf ? nn_f32_to_bf16(src[i]) : nn_f32_to_f16(src[i]);
}

void nn_load_f32(float *dst, const void *src, enum nn_dtype st, size_t n)
{
    if (st == NN_F32 && dst != src)
        memmove(dst, src, n * sizeof(float));
    else if (st == NN_F16 || st == NN_BF16)
        halves_to_f32(dst, src, st == NN_BF16, n);
}

void nn_store_f32(void *dst, enum nn_dtype dt, const float *src, size_t n)
{
    if (dt == NN_F32 && dst != src)
        memmove(dst, src, n * sizeof(float));
    else if (dt == NN_F16 || dt == NN_BF16)
        f32_to_halves(dst, src, dt == NN_BF16, n);
}

void nn_accum_f32(void *dst, enum nn_dtype dt, const float *src, size_t n)
{
    float *f = dst;
    uint16_t *d = dst;
    switch (dt) {
    case NN_F32:
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
        for (size_t i = 0; i < n; i++)
            f[i] += src[i];
        break;
    case NN_F16:
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
        for (size_t i = 0; i < n; i++)
            d[i] = nn_f32_to_f16(nn_f16_to_f32(d[i]) + src[i]);
        break;
    case NN_BF16:
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
        for (size_t i = 0; i < n; i++)
            d[i] = nn_f32_to_bf16(nn_bf16_to_f32(d[i]) + src[i]);
        break;
    case NN_I32:
        break;
    }
}
