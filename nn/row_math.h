/* Internal to nn/: per-row arithmetic the reference ops and the fused
 * paths share, so both compute it the same way (their results are
 * compared bit for bit in the tests). */
#ifndef MB_NN_ROW_MATH_H
#define MB_NN_ROW_MATH_H

#include <math.h>
#include <stddef.h>

/* Row i of a causal softmax over S scores, in place: entries 0..i become
 * the softmax of themselves (max subtracted), the masked rest 0. */
static inline void nn_softmax_causal_row(float *row, size_t i, size_t S)
{
    float mx = row[0];
    for (size_t j = 1; j <= i; j++)
        mx = row[j] > mx ? row[j] : mx;
    float s = 0;
    for (size_t j = 0; j <= i; j++) {
        row[j] = expf(row[j] - mx);
        s += row[j];
    }
    float inv = 1.0f / s;
    for (size_t j = 0; j <= i; j++)
        row[j] *= inv;
    for (size_t j = i + 1; j < S; j++)
        row[j] = 0;
}

/* Layer norm's statistics of one row, summed in double: its mean and
 * 1 / sqrt(variance + eps). */
static inline void nn_row_mean_rstd(const float *x, size_t cols, float eps, float *mu, float *rs)
{
    double s = 0, ss = 0;
    for (size_t c = 0; c < cols; c++)
        s += x[c];
    double mean = s / (double)cols;
    for (size_t c = 0; c < cols; c++) {
        double d = x[c] - mean;
        ss += d * d;
    }
    *rs = (float)(1.0 / sqrt(ss / (double)cols + eps));
    *mu = (float)mean;
}

#endif
