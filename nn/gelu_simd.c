/* The fused path's GELU row kernels, compiled three times (x86-64
 * baseline SSE2, AVX2, AVX-512) and picked by the CPU at run time: the
 * build targets baseline x86-64 (4 floats a vector), and GELU's rational
 * tanh is arithmetic-bound, so wider vectors pay directly (bias + GELU
 * forward at gpt-small, 512 x 512, one thread, CPU time: 530 us SSE2,
 * 216 AVX2, 155 AVX-512). The variants run the same IEEE operations in
 * the same order per element (C11 mode: no FMA contraction), so they
 * differ only in width; test_nn_fused runs each against the reference.
 * NN_ISA=sse2|avx2|avx512 (or nn_gelu_isa_set) forces one. */
#include "nn.h"
#include "row_math.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* tanh as a rational function (Eigen's generic_fast_tanh_float: odd
 * degree 13 over even degree 6, clamped at +-7.9988 where it reaches
 * 1 in fp32): no libm call, so the GELU loops vectorize (glibc offers
 * no SIMD tanhf without -ffast-math). Against tanh in double on every
 * 1e-5 step of [-20, 20] its error stayed below 3.95e-7 relative (7
 * ulp), which moves GELU and its derivative by < 0.5 |v| 4e-7 + 1e-6:
 * two orders below test_nn_fused's 1e-4 (|ref| + rms) tolerance.
 * always_inline: it is inlined into each ISA's kernel (a baseline
 * function may inline into a wider target), where a call would stop the
 * loop vectorizing. */
__attribute__((always_inline)) static inline float tanh_rational(float x)
{
    /* |x| clamped by comparing bit patterns as integers (they order like
     * non-negative floats): float compares stay branches under GCC's
     * default -ftrapping-math and the loop would not vectorize. A NaN
     * clamps to +-1 here, but GELU multiplies by x itself, so it
     * stays NaN. */
    const int32_t clamp = 0x40fff644; /* 7.99881172180175781f */
    const int32_t tiny = 0x39d1b717;  /* 0.0004f */
    const int32_t saturate = 0x41102cb4; /* 9.01091385f: tanhf is 1 from here */
    int32_t xb, ab;
    memcpy(&xb, &x, 4);
    ab = xb & 0x7fffffff;
    int32_t cb = (ab < clamp ? ab : clamp) | (xb & (int32_t)0x80000000);
    float xc, x2;
    memcpy(&xc, &cb, 4);
    x2 = xc * xc;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    float r = p * xc / q;
    int32_t rb;
    memcpy(&rb, &r, 4);
    /* tanh x = x to fp32 precision below 4e-4; a mask, not a select:
     * GCC would sink the (possibly trapping) division into a branch */
    int32_t small = -(int32_t)(ab < tiny);
    rb = (xb & small) | (rb & ~small);
    /* exactly +-1 where tanhf is (the clamped fraction saturates at
     * 0.99999982): GELU' multiplies 1 - t^2 by ~0.13 v^3, so a 3.6e-7
     * left over would blow up at large inputs */
    int32_t big = -(int32_t)(ab >= saturate);
    rb = (((xb & (int32_t)0x80000000) | 0x3f800000) & big) | (rb & ~big);
    memcpy(&r, &rb, 4);
    return r;
}

/* One ISA's kernels: h += bias, gl = GELU(h) over a row; d *= GELU'(h)
 * over a row and its values added to the partial column sums pd. */
#define GELU_KERNELS(sfx, attr)                                                             \
    attr static void gelu_fwd_##sfx(float *h, const float *bias, float *gl, size_t n)       \
    {                                                                                       \
        _Pragma("omp simd") for (size_t c = 0; c < n; c++)                                  \
        {                                                                                   \
            float v = h[c] + bias[c];                                                       \
            h[c] = v;                                                                       \
            gl[c] = nn_gelu_value(v, tanh_rational(nn_gelu_arg(v)));                        \
        }                                                                                   \
    }                                                                                       \
    attr static void gelu_bwd_##sfx(const float *h, float *d, float *pd, size_t n)          \
    {                                                                                       \
        _Pragma("omp simd") for (size_t c = 0; c < n; c++)                                  \
        {                                                                                   \
            float v = d[c] * nn_gelu_slope(h[c], tanh_rational(nn_gelu_arg(h[c])));         \
            d[c] = v;                                                                       \
            pd[c] += v;                                                                     \
        }                                                                                   \
    }

GELU_KERNELS(base, )

#if defined(__x86_64__) && defined(__GNUC__)
#define NN_GELU_X86 1
GELU_KERNELS(avx2, __attribute__((target("avx2"))))
GELU_KERNELS(avx512, __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2"))))
#endif

enum { ISA_BASE, ISA_AVX2, ISA_AVX512, ISA_AUTO };
static const char *const isa_name[] = {"sse2", "avx2", "avx512"};

/* What this CPU runs: 0 no, 1 yes. */
static int isa_supported(int isa)
{
#ifdef NN_GELU_X86
    __builtin_cpu_init();
    if (isa == ISA_AVX2)
        return __builtin_cpu_supports("avx2") != 0;
    if (isa == ISA_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
    return isa == ISA_BASE;
}

static int isa_lookup(const char *name)
{
    for (int i = 0; i < ISA_AUTO; i++)
        if (strcmp(name, isa_name[i]) == 0)
            return i;
    return -1;
}

/* The chosen kernel set: set once before the sweeps (nn_gelu_isa_set is
 * not meant to race with them), else NN_ISA, else the widest supported. */
static int chosen = -1;

static int isa(void)
{
    if (chosen < 0) {
        const char *e = getenv("NN_ISA");
        int want = e && *e ? isa_lookup(e) : -1;
        int c = ISA_BASE;
        if (want >= 0 && isa_supported(want))
            c = want;
        else
            for (int i = ISA_AVX512; i > ISA_BASE; i--)
                if (isa_supported(i)) {
                    c = i;
                    break;
                }
        chosen = c;
    }
    return chosen;
}

int nn_gelu_isa_set(const char *name)
{
    if (!name) {
        chosen = -1;
        return 0;
    }
    int i = isa_lookup(name);
    if (i < 0 || !isa_supported(i))
        return -1;
    chosen = i;
    return 0;
}

const char *nn_gelu_isa(void) { return isa_name[isa()]; }

void nn_gelu_fwd_row(float *h, const float *bias, float *gl, size_t n)
{
    switch (isa()) {
#ifdef NN_GELU_X86
    case ISA_AVX512: gelu_fwd_avx512(h, bias, gl, n); return;
    case ISA_AVX2: gelu_fwd_avx2(h, bias, gl, n); return;
#endif
    default: gelu_fwd_base(h, bias, gl, n); return;
    }
}

void nn_gelu_bwd_row(const float *h, float *d, float *pd, size_t n)
{
    switch (isa()) {
#ifdef NN_GELU_X86
    case ISA_AVX512: gelu_bwd_avx512(h, d, pd, n); return;
    case ISA_AVX2: gelu_bwd_avx2(h, d, pd, n); return;
#endif
    default: gelu_bwd_base(h, d, pd, n); return;
    }
}
