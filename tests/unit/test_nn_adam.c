/* nn/ Adam: against a double-precision reference over several steps;
 * a tensor updated in shards equals the whole-tensor update; fp16
 * gradients and an fp16 working copy; bias correction on step 1
 * (the first update is -lr * sign(g)). */
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
    EXPECT(nn_adam_bytes_per_elem(NN_F32, 0, NN_F32) == 28);
    EXPECT(nn_adam_bytes_per_elem(NN_F16, 1, NN_F16) == 28);
    return TEST_EXIT();
}
