/* Adam (AdamW decay) with fp32 master weights and moments on any
 * contiguous shard; OpenMP threads over blocks, SIMD within. */
#include "layer_internal.h"

#include <math.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
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

/* The update of one chunk. GCC keeps sqrtf scalar behind an errno branch
 * unless the whole build has -fno-math-errno, which would stop the loop
 * from vectorising; on x86 the SSE square root and division (exact,
 * IEEE) do four elements at a time, with the scalar loop for the rest. */
static void adam_chunk(size_t len, float *restrict pp, float *restrict mm, float *restrict vv,
                       const float *restrict g, float grad_scale, float b1, float b2, float c1,
                       float c2, float lr, float decay, float eps)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 vs = _mm_set1_ps(grad_scale), vb1 = _mm_set1_ps(b1), vb2 = _mm_set1_ps(b2);
    const __m128 vb1c = _mm_set1_ps(1.0f - b1), vb2c = _mm_set1_ps(1.0f - b2);
    const __m128 vc1 = _mm_set1_ps(c1), vc2 = _mm_set1_ps(c2), vlr = _mm_set1_ps(lr);
    const __m128 vdec = _mm_set1_ps(decay), veps = _mm_set1_ps(eps);
    for (; i + 4 <= len; i += 4) {
        __m128 gi = _mm_mul_ps(_mm_loadu_ps(g + i), vs);
        __m128 mi = _mm_add_ps(_mm_mul_ps(vb1, _mm_loadu_ps(mm + i)), _mm_mul_ps(vb1c, gi));
        __m128 vi = _mm_add_ps(_mm_mul_ps(vb2, _mm_loadu_ps(vv + i)), _mm_mul_ps(_mm_mul_ps(vb2c, gi), gi));
        _mm_storeu_ps(mm + i, mi);
        _mm_storeu_ps(vv + i, vi);
        __m128 den = _mm_add_ps(_mm_sqrt_ps(_mm_mul_ps(vi, vc2)), veps);
        __m128 upd = _mm_div_ps(_mm_mul_ps(vlr, _mm_mul_ps(mi, vc1)), den);
        _mm_storeu_ps(pp + i, _mm_sub_ps(_mm_mul_ps(_mm_loadu_ps(pp + i), vdec), upd));
    }
#endif
    for (; i < len; i++) {
        float gi = g[i] * grad_scale;
        float mi = b1 * mm[i] + (1.0f - b1) * gi;
        float vi = b2 * vv[i] + (1.0f - b2) * gi * gi;
        mm[i] = mi;
        vv[i] = vi;
        pp[i] = pp[i] * decay - lr * (mi * c1) / (sqrtf(vi * c2) + eps);
    }
}

void nn_adam_step(const struct nn_adam *hp, long long t, size_t n, float *p, float *m, float *v,
                  const void *grad, enum nn_dtype gdt, float grad_scale, void *work,
                  enum nn_dtype wdt)
{
    const float b1 = hp->beta1, b2 = hp->beta2, eps = hp->eps;
    const float c1 = (float)(1.0 / (1.0 - pow(hp->beta1, (double)t)));
    const float c2 = (float)(1.0 / (1.0 - pow(hp->beta2, (double)t)));
    const float lr = hp->lr, decay = 1.0f - hp->lr * hp->weight_decay;
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static) if (n >= 65536)
    for (size_t k = 0; k < nchunks; k++) {
        size_t lo = k * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        float gbuf[CHUNK];
        const float *g;
        if (gdt == NN_F32) {
            g = (const float *)grad + lo;
        } else {
            nn_load_f32(gbuf, (const char *)grad + lo * nn_dtype_size(gdt), gdt, len);
            g = gbuf;
        }
        adam_chunk(len, p + lo, m + lo, v + lo, g, grad_scale, b1, b2, c1, c2, lr, decay, eps);
        if (work)
            nn_store_f32((char *)work + lo * nn_dtype_size(wdt), wdt, p + lo, len);
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
