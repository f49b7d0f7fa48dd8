/* Each step's own split, kept so a run reports the median step and its
 * spread, not only the mean: with 4 ranks on 2 cores a step of 20-100 ms
 * meets 4 ms scheduler slices, and one disturbed step moves a mean of a
 * few steps (issue 19's ratios moved by 0.2-0.4 between quiet runs). */
#include "zero.h"

#include "../common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int zero_step_record(struct zero_run *z, const double d[ZERO_REC_N])
{
    if (z->nrec == z->caprec) {
        long long cap = z->caprec ? 2 * z->caprec : 64;
        double *r = realloc(z->rec, (size_t)cap * ZERO_REC_N * sizeof(*r));
        if (!r)
            return -1;
        z->rec = r, z->caprec = cap;
    }
    memcpy(z->rec + z->nrec * ZERO_REC_N, d, ZERO_REC_N * sizeof(*d));
    z->nrec++;
    return 0;
}

void zero_quantiles(double *x, size_t n, const double *q, int nq, double *out)
{
    if (n == 0) {
        for (int k = 0; k < nq; k++)
            out[k] = NAN;
        return;
    }
    mb_sort_doubles(x, n);
    for (int k = 0; k < nq; k++) {
        double pos = q[k] * (double)(n - 1);
        size_t i = (size_t)floor(pos);
        if (i >= n - 1) {
            out[k] = x[n - 1];
            continue;
        }
        double f = pos - (double)i;
        out[k] = x[i] + f * (x[i + 1] - x[i]);
    }
}

void zero_step_medians(const struct zero_run *z, double *v)
{
    static const int part[ZERO_REC_N] = {ZERO_V_MED_STEP, ZERO_V_MED_COMPUTE, ZERO_V_MED_WAIT, ZERO_V_MED_OPT};
    long long from = z->timed_from < z->nrec ? z->timed_from : 0;
    size_t n = (size_t)(z->nrec - from);
    double *x = malloc((n ? n : 1) * sizeof(*x));
    if (!x)
        n = 0;
    for (int p = 0; p < ZERO_REC_N; p++) {
        for (size_t i = 0; i < n; i++)
            x[i] = z->rec[(from + (long long)i) * ZERO_REC_N + p];
        double med[3], q[3] = {0.5, 0.25, 0.75};
        zero_quantiles(x, n, q, p == ZERO_REC_STEP ? 3 : 1, med);
        v[part[p]] = med[0];
        if (p == ZERO_REC_STEP)
            v[ZERO_V_STEP_P25] = med[1], v[ZERO_V_STEP_P75] = med[2];
    }
    v[ZERO_V_TIMED] = (double)n;
    free(x);
}
