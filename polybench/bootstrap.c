/* NPBench's bootstrap confidence interval of the median (plot_results.py:
 * resample with replacement, the statistic of each resample, sorted, the
 * order statistics at round((R-1) alpha/2) and round((R-1)(1-alpha/2))),
 * with a seeded generator so a rerun gives the same interval. */
#include "polybench.h"

#include <math.h>
#include <stdlib.h>

int mb_pb_bootstrap_median_ci(const double *x, size_t n, int resamples, double alpha, uint64_t seed, double *lo,
                              double *hi)
{
    *lo = *hi = NAN;
    if (n == 0 || resamples < 1)
        return -1;
    double *stat = malloc((size_t)resamples * sizeof(double)), *draw = malloc(n * sizeof(double));
    if (!stat || !draw) {
        free(stat), free(draw);
        return -1;
    }
    uint64_t state = seed;
    for (int r = 0; r < resamples; r++) {
        for (size_t i = 0; i < n; i++)
            draw[i] = x[mb_splitmix64(&state) % n];
        stat[r] = mb_median(draw, n);
    }
    mb_sort_doubles(stat, (size_t)resamples);
    long ilo = lround((resamples - 1) * alpha / 2), ihi = lround((resamples - 1) * (1 - alpha / 2));
    *lo = stat[ilo], *hi = stat[ihi];
    free(stat), free(draw);
    return 0;
}
