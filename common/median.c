/* Sorting samples and taking their median: the one comparison every
 * library and program uses (NaN sorts last, so it never reorders the rest). */
#include "common.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

void mb_sort_doubles(double *x, size_t n) { qsort(x, n, sizeof(*x), cmp_double); }

double mb_median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    mb_sort_doubles(x, n);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}
