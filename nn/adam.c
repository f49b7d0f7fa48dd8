/* Adam (AdamW decay) with fp32 master weights and moments on any
 * contiguous shard; OpenMP threads over page-aligned contiguous shares,
 * SIMD within (SSE2, AVX2 or AVX-512, as the CPU has). */
#include "layer_internal.h"

#include <math.h>
#include <omp.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct nn_adam nn_adam_default(void)
{
    struct nn_adam a = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f};
    return a;
}

size_t nn_adam_bytes_per_elem(enum nn_dtype gdt, int has_work, enum nn_dtype wdt)
{
    return 4 * 3 * 2 + nn_dtype_size(gdt) + (has_work ? nn_dtype_size(wdt) : 0);
}

#define CHUNK 2048

/* Thread t of T's share of n elements: contiguous, its ends on 4 KiB
 * (1024-element) boundaries of the index, so no page of p, m, v or the
 * gradient is written by two threads (when the arrays start page-aligned)
 * and a first touch with the same shares (nn_adam_case_init) puts each
 * page where its thread runs. */
void nn_adam_share(size_t n, int t, int T, size_t *lo, size_t *hi)
{
    nn_byte_share(n * sizeof(float), t, T, lo, hi); /* whole pages of fp32 */
    *lo /= sizeof(float);
    *hi /= sizeof(float);
}

/* The update of one chunk, in the widest vectors the CPU has. GCC keeps
 * sqrtf scalar behind an errno branch unless the whole build has
 * -fno-math-errno, which would stop the loop from vectorising; the
 * intrinsics' square root and division are IEEE (exact, as sqrtf and
 * '/'), and every width runs the same operations in the same order per
 * element (C11 mode: no FMA contraction), so SSE2, AVX2, AVX-512 and
 * the scalar tail give the same bits and a shard's result does not
 * depend on where it starts. Wider stores matter beyond the cache: each
 * store waits in the store buffer until its line arrives, so bytes in
 * flight scale with the vector width (reproduce/nn/README.md). */
#define ADAM_SCALAR_TAIL                                                                           \
    for (; i < len; i++) {                                                                         \
        float gi = g[i] * grad_scale;                                                              \
        float mi = b1 * mm[i] + (1.0f - b1) * gi;                                                  \
        float vi = b2 * vv[i] + (1.0f - b2) * gi * gi;                                             \
        mm[i] = mi;                                                                                \
        vv[i] = vi;                                                                                \
        pp[i] = pp[i] * decay - lr * (mi * c1) / (sqrtf(vi * c2) + eps);                           \
    }

/* The scalar loop up to where pp sits on a 64-byte line (when m, v and g
 * share p's offset in the line, as malloc's do, all four are then
 * aligned and no vector load or store splits across two lines). */
#define ADAM_SCALAR_HEAD                                                                           \
    size_t i = 0, len0 = len;                                                                      \
    {                                                                                              \
        size_t head = ((uintptr_t)pp & 3) ? 0 : ((64 - ((uintptr_t)pp & 63)) & 63) / 4;          \
        len = head < len ? head : len;                                                             \
        ADAM_SCALAR_TAIL                                                                           \
        len = len0;                                                                                \
    }

#define ADAM_ARGS                                                                                  \
    size_t len, float *restrict pp, float *restrict mm, float *restrict vv,                        \
        const float *restrict g, float grad_scale, float b1, float b2, float c1, float c2,         \
        float lr, float decay, float eps

/* W: the vector type's intrinsic prefix and suffix (_mm, _mm256, _mm512). */
#define ADAM_VECTOR_LOOP(VT, PF, W)                                                                \
    const VT vs = PF##_set1_ps(grad_scale), vb1 = PF##_set1_ps(b1), vb2 = PF##_set1_ps(b2);        \
    const VT vb1c = PF##_set1_ps(1.0f - b1), vb2c = PF##_set1_ps(1.0f - b2);                        \
    const VT vc1 = PF##_set1_ps(c1), vc2 = PF##_set1_ps(c2), vlr = PF##_set1_ps(lr);               \
    const VT vdec = PF##_set1_ps(decay), veps = PF##_set1_ps(eps);                                 \
    for (; i + W <= len; i += W) {                                                                 \
        VT gi = PF##_mul_ps(PF##_loadu_ps(g + i), vs);                                             \
        VT mi = PF##_add_ps(PF##_mul_ps(vb1, PF##_loadu_ps(mm + i)), PF##_mul_ps(vb1c, gi));       \
        VT vi = PF##_add_ps(PF##_mul_ps(vb2, PF##_loadu_ps(vv + i)),                               \
                            PF##_mul_ps(PF##_mul_ps(vb2c, gi), gi));                               \
        PF##_storeu_ps(mm + i, mi);                                                                \
        PF##_storeu_ps(vv + i, vi);                                                                \
        VT den = PF##_add_ps(PF##_sqrt_ps(PF##_mul_ps(vi, vc2)), veps);                            \
        VT upd = PF##_div_ps(PF##_mul_ps(vlr, PF##_mul_ps(mi, vc1)), den);                         \
        PF##_storeu_ps(pp + i, PF##_sub_ps(PF##_mul_ps(PF##_loadu_ps(pp + i), vdec), upd));        \
    }

static void adam_chunk_base(ADAM_ARGS)
{
    ADAM_SCALAR_HEAD
#if defined(__SSE2__)
    ADAM_VECTOR_LOOP(__m128, _mm, 4)
#endif
    ADAM_SCALAR_TAIL
}

#if defined(__x86_64__) && defined(__GNUC__)
#define NN_ADAM_X86 1
__attribute__((target("avx2"))) static void adam_chunk_avx2(ADAM_ARGS)
{
    ADAM_SCALAR_HEAD
    ADAM_VECTOR_LOOP(__m256, _mm256, 8)
    ADAM_SCALAR_TAIL
}

__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2"))) static void adam_chunk_avx512(ADAM_ARGS)
{
    ADAM_SCALAR_HEAD
    ADAM_VECTOR_LOOP(__m512, _mm512, 16)
    ADAM_SCALAR_TAIL
}
#endif

typedef void (*adam_chunk_fn)(ADAM_ARGS);

/* The kernel for the ISA the fused sweeps use (nn_gelu_isa: the widest
 * the CPU has, or NN_ISA's). */
static adam_chunk_fn adam_kernel(void)
{
#ifdef NN_ADAM_X86
    const char *isa = nn_gelu_isa();
    if (strcmp(isa, "avx512") == 0)
        return adam_chunk_avx512;
    if (strcmp(isa, "avx2") == 0)
        return adam_chunk_avx2;
#endif
    return adam_chunk_base;
}

void nn_adam_step(const struct nn_adam *hp, long long t, size_t n, float *p, float *m, float *v,
                  const void *grad, enum nn_dtype gdt, float grad_scale, void *work,
                  enum nn_dtype wdt)
{
    const float b1 = hp->beta1, b2 = hp->beta2, eps = hp->eps;
    const float c1 = (float)(1.0 / (1.0 - pow(hp->beta1, (double)t)));
    const float c2 = (float)(1.0 / (1.0 - pow(hp->beta2, (double)t)));
    const float lr = hp->lr, decay = 1.0f - hp->lr * hp->weight_decay;
    const adam_chunk_fn chunk = adam_kernel();
#pragma omp parallel if (n >= 65536)
    {
        size_t lo0, hi0;
        nn_adam_share(n, omp_get_thread_num(), omp_get_num_threads(), &lo0, &hi0);
        float gbuf[CHUNK];
        for (size_t lo = lo0; lo < hi0; lo += CHUNK) {
            size_t len = hi0 - lo < CHUNK ? hi0 - lo : CHUNK;
            const float *g;
            if (gdt == NN_F32) {
                g = (const float *)grad + lo;
            } else {
                nn_load_f32(gbuf, (const char *)grad + lo * nn_dtype_size(gdt), gdt, len);
                g = gbuf;
            }
            chunk(len, p + lo, m + lo, v + lo, g, grad_scale, b1, b2, c1, c2, lr, decay, eps);
            if (work) /* the chunk's weights are still in L1 */
                nn_store_f32((char *)work + lo * nn_dtype_size(wdt), wdt, p + lo, len);
        }
    }
}

int nn_adam_state_init(struct nn_adam_state *s, struct nn_gpt *model)
{
    memset(s, 0, sizeof(*s));
    s->nlayers = model->nlayers;
    s->n = calloc((size_t)s->nlayers, sizeof(size_t));
    s->p = calloc((size_t)s->nlayers, sizeof(float *));
    s->m = calloc((size_t)s->nlayers, sizeof(float *));
    s->v = calloc((size_t)s->nlayers, sizeof(float *));
    if (!s->n || !s->p || !s->m || !s->v)
        return -1;
    for (int i = 0; i < s->nlayers; i++) {
        struct nn_tensor *pt = nn_layer_params(model->layer[i]);
        s->n[i] = pt->numel;
        s->p[i] = malloc(pt->numel * sizeof(float));
        s->m[i] = calloc(pt->numel, sizeof(float));
        s->v[i] = calloc(pt->numel, sizeof(float));
        if (!s->p[i] || !s->m[i] || !s->v[i])
            return -1;
        nn_load_f32(s->p[i], pt->data, pt->dtype, pt->numel);
    }
    return 0;
}

void nn_adam_state_free(struct nn_adam_state *s)
{
    for (int i = 0; i < s->nlayers; i++) {
        if (s->p) free(s->p[i]);
        if (s->m) free(s->m[i]);
        if (s->v) free(s->v[i]);
    }
    free(s->n); free(s->p); free(s->m); free(s->v);
    memset(s, 0, sizeof(*s));
}

void nn_gpt_adam_step(struct nn_gpt *model, struct nn_adam_state *s, const struct nn_adam *hp,
                      float grad_scale)
{
    s->t++;
    for (int i = 0; i < s->nlayers; i++) {
        struct nn_layer *l = model->layer[i];
        nn_adam_step(hp, s->t, s->n[i], s->p[i], s->m[i], s->v[i], l->grads.data, l->grads.dtype,
                     grad_scale, l->params.data, l->params.dtype);
    }
}
