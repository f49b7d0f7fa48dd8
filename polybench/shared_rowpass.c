/* The fused variants of atax, bicg and mvt: both matrix-vector products
 * that read A in one pass over its rows, each row's dot product and its
 * axpy while the row is in cache (NumPy, and two dgemv, sweep A twice). */
#include "shared_ops.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define RB 4 /* rows per block: x read once per 4 dot products, acc once per 4 axpys */

/* Built for x86-64-v3 (AVX2) as well as the baseline (the build's -O2 is
 * SSE2 only, and one thread's SSE2 loop falls short of the memory's
 * rate), picked at load by the CPU; -std=c11 keeps FMA contraction off,
 * so both clones round alike. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RP_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define RP_CLONES
#endif

/* rows [lo, hi) into acc (cols doubles) */
RP_CLONES static void pass(const double *A, long lo, long hi, long cols, const double *dx, double *dy, double dbeta,
                 const double *ax, double *acc)
{
    long i = lo;
    for (; i + RB <= hi; i += RB) {
        const double *r0 = A + i * cols, *r1 = r0 + cols, *r2 = r1 + cols, *r3 = r2 + cols;
        double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#pragma omp simd reduction(+ : d0, d1, d2, d3)
        for (long j = 0; j < cols; j++) {
            double x = dx[j];
            d0 += r0[j] * x, d1 += r1[j] * x, d2 += r2[j] * x, d3 += r3[j] * x;
        }
        double d[RB] = {d0, d1, d2, d3}, c[RB];
        for (int b = 0; b < RB; b++) {
            if (dy)
                dy[i + b] = dbeta == 0 ? d[b] : d[b] + dbeta * dy[i + b];
            c[b] = ax ? ax[i + b] : d[b];
        }
#pragma omp simd
        for (long j = 0; j < cols; j++)
            acc[j] += c[0] * r0[j] + c[1] * r1[j] + c[2] * r2[j] + c[3] * r3[j];
    }
    for (; i < hi; i++) {
        const double *r = A + i * cols;
        double d = 0;
#pragma omp simd reduction(+ : d)
        for (long j = 0; j < cols; j++)
            d += r[j] * dx[j];
        if (dy)
            dy[i] = dbeta == 0 ? d : d + dbeta * dy[i];
        double c = ax ? ax[i] : d;
#pragma omp simd
        for (long j = 0; j < cols; j++)
            acc[j] += c * r[j];
    }
}

void pbs_rowpass(const double *A, long rows, long cols, const double *dx, double *dy, double dbeta,
                 const double *ax, double *ay)
{
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    /* one thread, or no room for the partials: straight into ay */
    double *part = nt > 1 ? malloc((size_t)nt * (size_t)cols * sizeof(double)) : NULL;
    if (!part) {
        pass(A, 0, rows, cols, dx, dy, dbeta, ax, ay);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int t = 0, n = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), n = omp_get_num_threads();
#endif
        /* contiguous row blocks of RB rows, the same split for a given thread count */
        long blocks = (rows + RB - 1) / RB, lo = blocks * t / n * RB, hi = blocks * (t + 1) / n * RB;
        hi = hi < rows ? hi : rows;
        double *acc = part + (size_t)t * (size_t)cols;
        memset(acc, 0, (size_t)cols * sizeof(double));
        if (lo < hi)
            pass(A, lo, hi, cols, dx, dy, dbeta, ax, acc);
#pragma omp barrier
        /* the partials added in thread order: the same sums at a given thread count */
#pragma omp for schedule(static)
        for (long j = 0; j < cols; j++) {
            double s = ay[j];
            for (int p = 0; p < n; p++)
                s += part[(size_t)p * (size_t)cols + (size_t)j];
            ay[j] = s;
        }
    }
    free(part);
}
