/* Finite-difference gradient checking for the nn/ tests.
 *
 * Everything computes in fp32, so the checks use central differences on a
 * scalar L = sum(out * R) accumulated in double, with R a fixed random
 * projection, and compare against the analytic gradient with
 *   |num - ana| <= atol + rtol * max(|num|, |ana|), ana finite.
 * Justification of the tolerances: with step h the truncation error of the
 * central difference is O(h^2 |f'''|) (about 1e-4 for h = 1e-2 on these
 * O(1)-scaled inputs), and fp32 rounding of L (relative 6e-8 per
 * operation, growing with the number of summed terms, here a few hundred)
 * contributes about 1e-6 |L| / h. For L of order 10 this is ~1e-3
 * absolute; so atol = 3e-3 and rtol = 3e-2 separate correct gradients from
 * wrong ones (a wrong formula is off by O(1) relative error), which the
 * tests also show by checking that a perturbed gradient fails. */
#ifndef NN_GRADCHECK_H
#define NN_GRADCHECK_H

#include <math.h>
#include <stdio.h>

#include "../../nn/nn.h"

#define GC_ATOL 3e-3
#define GC_RTOL 3e-2

/* f(ctx) -> L, after x[i] changed */
typedef double (*gc_fn)(void *ctx);

/* Checks k coordinates of x (chosen by rng) against grad; returns the
 * number of mismatches and prints the worst. */
static inline int gc_check(const char *what, gc_fn f, void *ctx, float *x, const float *grad, size_t n,
                    size_t k, double h, struct nn_rng *rng)
{
    int bad = 0;
    double worst = 0;
    for (size_t t = 0; t < k; t++) {
        size_t i = k >= n ? t % n : (size_t)(nn_rng_next(rng) % n);
        if (t >= n && k >= n)
            break;
        float keep = x[i];
        x[i] = keep + (float)h;
        double lp = f(ctx);
        x[i] = keep - (float)h;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * h), ana = grad[i];
        double err = fabs(num - ana), lim = GC_ATOL + GC_RTOL * fmax(fabs(num), fabs(ana));
        /* NaN fails (!(err <= lim)); an infinite analytic value fails
         * although it makes lim infinite too */
        int ok = err <= lim && isfinite(ana);
        double q = isfinite(ana) && !isnan(err) ? err / lim : INFINITY;
        if (q > worst)
            worst = q;
        if (!ok) {
            if (bad < 3)
                fprintf(stderr, "%s[%zu]: numeric %.6g analytic %.6g\n", what, i, num, ana);
            bad++;
        }
    }
    fprintf(stderr, "gradcheck %-24s %zu coords, worst err/limit %.3f%s\n", what, k < n ? k : n,
            worst, bad ? "  FAIL" : "");
    return bad;
}

static inline double gc_dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

static inline void gc_fill(float *x, size_t n, double scale, struct nn_rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * nn_rng_normal(r));
}

#endif
