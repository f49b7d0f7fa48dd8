/* Statistics on inputs whose answers are known by hand. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <math.h>

int main(void)
{
    struct mb_stats st;
    /* 1..9 in scrambled order: median 5, p95 at position 7.6 -> 8.6 */
    double a[] = {9, 1, 8, 2, 7, 3, 6, 4, 5};
    mb_stats_compute(a, 9, &st);
    EXPECT(st.n == 9);
    EXPECT_NEAR(st.min, 1, 0);
    EXPECT_NEAR(st.max, 9, 0);
    EXPECT_NEAR(st.median, 5, 0);
    EXPECT_NEAR(st.mean, 5, 1e-15);
    EXPECT_NEAR(st.p95, 8.6, 1e-12);
    /* n = 9: P(X <= 1) = 10/512 -> 2*0.0195 <= 0.05, P(X <= 2) = 46/512 too big,
     * so j = 2: the CI is [x_(2), x_(8)] = [2, 8]. */
    EXPECT_NEAR(st.ci_lo, 2, 0);
    EXPECT_NEAR(st.ci_hi, 8, 0);
    /* the input is left untouched */
    EXPECT_NEAR(a[0], 9, 0);

    /* even n: median interpolates */
    double b[] = {4, 1, 3, 2};
    mb_stats_compute(b, 4, &st);
    EXPECT_NEAR(st.median, 2.5, 0);
    /* n < 6: no order statistic gives 95%; the whole range is returned */
    EXPECT_NEAR(st.ci_lo, 1, 0);
    EXPECT_NEAR(st.ci_hi, 4, 0);

    /* known tables: n = 100 -> ranks 40 and 61 (1-based); n = 6 -> 1 and 6 */
    size_t lo, hi;
    mb_stats_median_ci_ranks(100, &lo, &hi);
    EXPECT(lo == 39 && hi == 60);
    mb_stats_median_ci_ranks(6, &lo, &hi);
    EXPECT(lo == 0 && hi == 5);
    mb_stats_median_ci_ranks(1, &lo, &hi);
    EXPECT(lo == 0 && hi == 0);

    /* single sample */
    double c[] = {3.5};
    mb_stats_compute(c, 1, &st);
    EXPECT_NEAR(st.median, 3.5, 0);
    EXPECT_NEAR(st.p95, 3.5, 0);

    /* empty input: NaN everywhere, no crash */
    mb_stats_compute(NULL, 0, &st);
    EXPECT(isnan(st.median) && isnan(st.ci_lo) && st.n == 0);

    /* quantiles on a sorted ramp 0..100 */
    double r[101];
    for (int i = 0; i <= 100; i++)
        r[i] = i;
    EXPECT_NEAR(mb_stats_quantile_sorted(r, 101, 0.95), 95, 1e-12);
    EXPECT_NEAR(mb_stats_quantile_sorted(r, 101, 0.0), 0, 0);
    EXPECT_NEAR(mb_stats_quantile_sorted(r, 101, 1.0), 100, 0);
    return TEST_EXIT();
}
