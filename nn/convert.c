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
    if (ax > 0x7f800000u) /* nan: quiet, the payload's top bits kept (as F16C) */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x47800000u) /* >= 65536 (after rounding: inf) or inf */
        return (uint16_t)(sign | 0x7c00u);
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
    if (e == 31) /* inf, or nan made quiet (as F16C) */
        return u2f(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0));
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
#define BLK 4096      /* elements a thread converts at a time */

/* The F16C instructions where the CPU has them (checked once): the same
 * IEEE round-to-nearest-even as the scalar code, bit for bit (NaNs too:
 * nn_f32_to_f16 keeps the payload as they do), 8 elements an instruction;
 * element by element the conversions took 8% of a Ratel step's CPU. */
#if defined(__x86_64__)
#include <immintrin.h>
#include <pthread.h>

static int f16c_ok;
static void f16c_probe(void)
{
    __builtin_cpu_init();
    f16c_ok = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
}
static int have_f16c(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, f16c_probe);
    return f16c_ok;
}

__attribute__((target("avx,f16c"))) static size_t f16c_load(float *d, const uint16_t *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    return i;
}

__attribute__((target("avx,f16c"))) static size_t f16c_store(uint16_t *d, const float *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

__attribute__((target("avx,f16c"))) static size_t f16c_accum(uint16_t *d, const float *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_add_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(d + i))), _mm256_loadu_ps(s + i));
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
#else
static int have_f16c(void) { return 0; }
static size_t f16c_load(float *d, const uint16_t *s, size_t n) { (void)d, (void)s, (void)n; return 0; }
static size_t f16c_store(uint16_t *d, const float *s, size_t n) { (void)d, (void)s, (void)n; return 0; }
static size_t f16c_accum(uint16_t *d, const float *s, size_t n) { (void)d, (void)s, (void)n; return 0; }
#endif

/* fp16 <-> fp32 on [0, n): blocks of BLK over the threads, each by F16C
 * where it exists, the scalar code for the rest. op: 0 load, 1 store, 2 accumulate */
static void f16_blocks(int op, void *half, float *f, size_t n)
{
    uint16_t *h = half;
    int hw = have_f16c();
    size_t nb = (n + BLK - 1) / BLK;
#pragma omp parallel for schedule(static) if (n >= PAR_MIN)
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * BLK, len = n - lo < BLK ? n - lo : BLK, i = 0;
        uint16_t *hb = h + lo;
        float *fb = f + lo;
        if (op == 0) {
            i = hw ? f16c_load(fb, hb, len) : 0;
            for (; i < len; i++)
                fb[i] = nn_f16_to_f32(hb[i]);
        } else if (op == 1) {
            i = hw ? f16c_store(hb, fb, len) : 0;
            for (; i < len; i++)
                hb[i] = nn_f32_to_f16(fb[i]);
        } else {
            i = hw ? f16c_accum(hb, fb, len) : 0;
            for (; i < len; i++)
                hb[i] = nn_f32_to_f16(nn_f16_to_f32(hb[i]) + fb[i]);
        }
    }
}

/* bf16 to fp32 and back */
static void bf16_to_f32(float *dst, const uint16_t *s, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++)
        dst[i] = nn_bf16_to_f32(s[i]);
}

static void f32_to_bf16(uint16_t *d, const float *src, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++)
        d[i] = nn_f32_to_bf16(src[i]);
}

void nn_load_f32(float *dst, const void *src, enum nn_dtype st, size_t n)
{
    if (st == NN_F32 && dst != src)
        memmove(dst, src, n * sizeof(float));
    else if (st == NN_F16)
        f16_blocks(0, (void *)src, dst, n);
    else if (st == NN_BF16)
        bf16_to_f32(dst, src, n);
}

void nn_store_f32(void *dst, enum nn_dtype dt, const float *src, size_t n)
{
    if (dt == NN_F32 && dst != src)
        memmove(dst, src, n * sizeof(float));
    else if (dt == NN_F16)
        f16_blocks(1, dst, (float *)src, n);
    else if (dt == NN_BF16)
        f32_to_bf16(dst, src, n);
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
        f16_blocks(2, d, (float *)src, n);
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
