/* The gradient checker itself must fail a wrong gradient, and a NaN or
 * Inf one: |num - ana| > lim is false for NaN, so it is written
 * !(err <= lim). L(x) = sum x_i^2 has gradient 2 x. */
#include "check.h"
#include "nn_gradcheck.h"

static double sumsq(void *ctx)
{
    const float *x = ctx;
    double s = 0;
    for (int i = 0; i < 8; i++)
        s += (double)x[i] * x[i];
    return s;
}

int main(void)
{
    float x[8], g[8];
    struct nn_rng r;
    nn_rng_seed(&r, 3);
    gc_fill(x, 8, 1.0, &r);
    for (int i = 0; i < 8; i++)
        g[i] = 2 * x[i];
    EXPECT(gc_check("exact", sumsq, x, x, g, 8, 8, 1e-2, &r) == 0);
    const float bad[3] = {NAN, INFINITY, 0};
    for (int k = 0; k < 3; k++) {
        float keep = g[5];
        g[5] = k == 2 ? keep + 1.0f : bad[k];
        EXPECT(gc_check(k == 0 ? "nan" : k == 1 ? "inf" : "wrong", sumsq, x, x, g, 8, 8, 1e-2, &r) == 1);
        g[5] = keep;
    }
    return TEST_EXIT();
}
