/* Summary statistics of per-iteration times: min, median, p95, max, mean
 * and a distribution-free 95% confidence interval of the median from order
 * statistics (exact binomial, so it holds for any distribution of times). */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double mb_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n)
        return sorted[n - 1];
    double frac = pos - (double)i;
    return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

/* With X ~ Binomial(n, 1/2), [x_(j), x_(n+1-j)] (1-based) covers the median
 * with probability 1 - 2 P(X <= j-1); take the largest j keeping >= 95%.
 * Below n = 6 no such j exists and the whole range is returned. */
void mb_stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi)
{
    if (n == 0) {
        *lo = *hi = 0;
        return;
    }
    double log_norm = lgamma((double)n + 1) - (double)n * log(2.0);
    double cdf = 0; /* P(X <= j-1) */
    size_t j = 0;
    for (size_t k = 0; k < n; k++) {
        cdf += exp(log_norm - lgamma((double)k + 1) - lgamma((double)(n - k) + 1));
        if (2 * cdf > 0.05)
            break;
        j = k + 1;
    }
    if (j == 0) {
        *lo = 0;
        *hi = n - 1;
        return;
    }
    *lo = j - 1;
    *hi = n - j;
}

void mb_stats_compute(const double *x, size_t n, struct mb_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->n = n;
    if (n == 0) {
        out->min = out->median = out->p95 = out->max = out->mean = out->ci_lo = out->ci_hi = NAN;
        return;
    }
    double *s = malloc(n * sizeof(*s));
    memcpy(s, x, n * sizeof(*s));
    mb_sort_doubles(s, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->min = s[0];
    out->max = s[n - 1];
    out->median = mb_stats_quantile_sorted(s, n, 0.5);
    out->p95 = mb_stats_quantile_sorted(s, n, 0.95);
    out->mean = sum / (double)n;
    size_t lo, hi;
    mb_stats_median_ci_ranks(n, &lo, &hi);
    out->ci_lo = s[lo];
    out->ci_hi = s[hi];
    free(s);
}
