/* nn/ Adam: against a double-precision reference over several steps;
 * a tensor updated in shards equals the whole-tensor update; fp16
 * gradients and an fp16 working copy; bias correction on step 1
 * (the first update is -lr * sign(g)); every SIMD width bit-identical
 * to the scalar loop; the thread shares; the memcpy peer copies. */
#include "check.h"
#include "../../nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    size_t n = 100003;
    struct nn_rng r;
    nn_rng_seed(&r, 1);
    float *p = malloc(n * 4), *m = calloc(n, 4), *v = calloc(n, 4), *g = malloc(n * 4);
    double *pd = malloc(n * 8), *md = calloc(n, 8), *vd = calloc(n, 8);
    for (size_t i = 0; i < n; i++)
        pd[i] = p[i] = (float)nn_rng_normal(&r);
    struct nn_adam hp = nn_adam_default();
    hp.weight_decay = 0.01f;
    double worst = 0;
    for (int t = 1; t <= 5; t++) {
        for (size_t i = 0; i < n; i++)
            g[i] = (float)nn_rng_normal(&r);
        nn_adam_step(&hp, t, n, p, m, v, g, NN_F32, 0.5f, NULL, NN_F32);
        for (size_t i = 0; i < n; i++) {
            double gi = g[i] * 0.5;
            md[i] = 0.9 * md[i] + 0.1 * gi;
            vd[i] = 0.999 * vd[i] + 0.001 * gi * gi;
            double mh = md[i] / (1 - pow(0.9, t)), vh = vd[i] / (1 - pow(0.999, t));
            pd[i] = pd[i] * (1 - 1e-3 * 0.01) - 1e-3 * mh / (sqrt(vh) + 1e-8);
            worst = fmax(worst, fabs(pd[i] - p[i]) / (1 + fabs(pd[i]))); /* a few fp32 ulps */
        }
    }
    fprintf(stderr, "adam vs double reference: max |dp|/(1+|p|) %.3g\n", worst);
    EXPECT(worst < 1e-6);

    /* step 1: the update is -lr * sign(g) (bias-corrected m/sqrt(v) = +-1) */
    float p1[3] = {1, 1, 1}, m1[3] = {0}, v1[3] = {0}, g1[3] = {2, -3, 0.001f};
    struct nn_adam plain = nn_adam_default();
    nn_adam_step(&plain, 1, 3, p1, m1, v1, g1, NN_F32, 1.0f, NULL, NN_F32);
    EXPECT_NEAR(p1[0], 1 - 1e-3, 1e-6);
    EXPECT_NEAR(p1[1], 1 + 1e-3, 1e-6);
    EXPECT_NEAR(p1[2], 1 - 1e-3, 1e-5);

    /* shards: updating [0, k) and [k, n) separately equals one update */
    float *p2 = malloc(n * 4), *m2 = malloc(n * 4), *v2 = malloc(n * 4);
    memcpy(p2, p, n * 4); memcpy(m2, m, n * 4); memcpy(v2, v, n * 4);
    nn_adam_step(&hp, 6, n, p, m, v, g, NN_F32, 1.0f, NULL, NN_F32);
    size_t k = 12345;
    nn_adam_step(&hp, 6, k, p2, m2, v2, g, NN_F32, 1.0f, NULL, NN_F32);
    nn_adam_step(&hp, 6, n - k, p2 + k, m2 + k, v2 + k, g + k, NN_F32, 1.0f, NULL, NN_F32);
    EXPECT(memcmp(p, p2, n * 4) == 0 && memcmp(m, m2, n * 4) == 0 && memcmp(v, v2, n * 4) == 0);

    /* fp16 gradients and an fp16 working copy */
    uint16_t *g16 = malloc(n * 2), *w16 = malloc(n * 2);
    nn_store_f32(g16, NN_F16, g, n);
    float *gr = malloc(n * 4);
    nn_load_f32(gr, g16, NN_F16, n);
    memcpy(p2, p, n * 4); memcpy(m2, m, n * 4); memcpy(v2, v, n * 4);
    nn_adam_step(&hp, 7, n, p, m, v, gr, NN_F32, 1.0f, NULL, NN_F32);
    nn_adam_step(&hp, 7, n, p2, m2, v2, g16, NN_F16, 1.0f, w16, NN_F16);
    EXPECT(memcmp(p, p2, n * 4) == 0);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= w16[i] == nn_f32_to_f16(p2[i]);
    EXPECT(ok);
    /* every kernel width (SSE2, AVX2, AVX-512, as this CPU has them) gives
     * the same bits as the scalar loop, at an odd length and an odd start
     * (so each width's vector body, scalar tail and thread shares differ) */
    {
        size_t nn = 70001, off = 3;
        float *ps = malloc((nn + off) * 4), *ms = malloc((nn + off) * 4), *vs = malloc((nn + off) * 4);
        float *pw = malloc((nn + off) * 4), *mw = malloc((nn + off) * 4), *vw = malloc((nn + off) * 4);
        for (size_t i = 0; i < nn + off; i++) {
            ps[i] = (float)nn_rng_normal(&r);
            ms[i] = 0.01f * (float)nn_rng_normal(&r);
            vs[i] = ms[i] * ms[i] + 1e-6f;
        }
        struct nn_adam dh = nn_adam_default();
        dh.weight_decay = 0.01f;
        /* the scalar reference: nn_adam_step one element at a time (n = 1 is the scalar tail) */
        memcpy(pw, ps, (nn + off) * 4); memcpy(mw, ms, (nn + off) * 4); memcpy(vw, vs, (nn + off) * 4);
        for (size_t i = off; i < nn + off; i++)
            nn_adam_step(&dh, 3, 1, pw + i, mw + i, vw + i, g + (i % n), NN_F32, 0.5f, NULL, NN_F32);
        const char *isas[] = {"sse2", "avx2", "avx512"};
        int widths = 0;
        for (int k = 0; k < 3; k++) {
            if (nn_gelu_isa_set(isas[k]) != 0)
                continue; /* not on this CPU */
            widths++;
            float *pk = malloc((nn + off) * 4), *mk = malloc((nn + off) * 4), *vk = malloc((nn + off) * 4);
            float *gk = malloc(nn * 4);
            memcpy(pk, ps, (nn + off) * 4); memcpy(mk, ms, (nn + off) * 4); memcpy(vk, vs, (nn + off) * 4);
            for (size_t i = 0; i < nn; i++)
                gk[i] = g[(i + off) % n];
            nn_adam_step(&dh, 3, nn, pk + off, mk + off, vk + off, gk, NN_F32, 0.5f, NULL, NN_F32);
            int same = !memcmp(pk, pw, (nn + off) * 4) && !memcmp(mk, mw, (nn + off) * 4) &&
                       !memcmp(vk, vw, (nn + off) * 4);
            if (!same)
                fprintf(stderr, "adam %s differs from the scalar loop\n", isas[k]);
            EXPECT(same);
            free(pk); free(mk); free(vk); free(gk);
        }
        nn_gelu_isa_set(NULL);
        EXPECT(widths >= 1);
        free(ps); free(ms); free(vs); free(pw); free(mw); free(vw);
    }

    /* thread shares: contiguous, covering [0, n) once, inner ends on 1024 elements */
    {
        size_t sizes[] = {0, 1, 1023, 1024, 100003, 16u << 20};
        int ok_share = 1;
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
            for (int T = 1; T <= 7; T++) {
                size_t prev = 0;
                for (int t = 0; t < T; t++) {
                    size_t lo, hi;
                    nn_adam_share(sizes[si], t, T, &lo, &hi);
                    ok_share &= lo == prev && hi >= lo && (hi % 1024 == 0 || hi == sizes[si]);
                    prev = hi;
                }
                ok_share &= prev == sizes[si];
            }
        EXPECT(ok_share);
    }

    /* the memcpy peer copies every byte at any alignment and length */
    {
        size_t cn = 300007;
        unsigned char *src = malloc(cn + 64), *dst = malloc(cn + 64);
        for (size_t i = 0; i < cn + 64; i++)
            src[i] = (unsigned char)(i * 131 + 7);
        int ok_copy = 1;
        size_t offs[][3] = {{0, 0, 0}, {1, 5, 0}, {13, 0, 3}, {0, 63, 70}, {7, 9, cn - 1000}};
        for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
            size_t so = offs[k][0], d0 = offs[k][1], len = offs[k][2] ? offs[k][2] : cn;
            memset(dst, 0, cn + 64);
            nn_copy_peer(dst + d0, src + so, len);
            ok_copy &= memcmp(dst + d0, src + so, len) == 0 && (d0 == 0 || dst[d0 - 1] == 0) &&
                       dst[d0 + len] == 0;
        }
        EXPECT(ok_copy);
        free(src); free(dst);
    }

    EXPECT(nn_adam_bytes_per_elem(NN_F32, 0, NN_F32) == 28);
    EXPECT(nn_adam_bytes_per_elem(NN_F16, 1, NN_F16) == 28);
    return TEST_EXIT();
}
