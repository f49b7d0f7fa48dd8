/* The model's machine rates, measured in the run with every rank at once
 * (all ranks share the machine): dgemm FLOP/s and memcpy bytes/s. */
#include "polybench.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

void mb_pb_measure_rates(MPI_Comm comm, double *dgemm_flops_s, double *memcpy_bytes_s)
{
    const int n = 384;
    const size_t bytes = (size_t)32 << 20;
    double *a = malloc((size_t)n * n * sizeof(double)), *b = malloc((size_t)n * n * sizeof(double)),
           *c = calloc((size_t)n * n, sizeof(double));
    char *x = malloc(bytes), *y = malloc(bytes);
    if (!a || !b || !c || !x || !y)
        mb_die(1, "out of memory measuring the dgemm and memcpy rates");
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = (double)(i % 7), b[i] = (double)(i % 5);
    memset(x, 1, bytes);
    memset(y, 2, bytes);
    double gemm_best = 1e30, copy_best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
        double t1 = MPI_Wtime();
        MPI_Barrier(comm);
        double t2 = MPI_Wtime();
        memcpy(y, x, bytes);
        double t3 = MPI_Wtime();
        if (rep) { /* the first is a warm-up */
            gemm_best = t1 - t0 < gemm_best ? t1 - t0 : gemm_best;
            copy_best = t3 - t2 < copy_best ? t3 - t2 : copy_best;
        }
    }
    /* the slowest rank's best: all ranks share the machine */
    MPI_Allreduce(MPI_IN_PLACE, &gemm_best, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &copy_best, 1, MPI_DOUBLE, MPI_MAX, comm);
    *dgemm_flops_s = 2.0 * n * n * n / gemm_best;
    *memcpy_bytes_s = 2.0 * (double)bytes / copy_best; /* read + write */
    free(a), free(b), free(c), free(x), free(y);
}

double mb_pb_copy_rate(MPI_Comm comm, double ws_bytes)
{
    size_t half = ws_bytes > 8192 ? (size_t)(ws_bytes / 2) : 4096;
    half = (half + 63) & ~(size_t)63;
    /* about 64 MiB copied per round, the same count on every rank */
    long reps = (long)((64.0 * (1 << 20)) / (2.0 * (double)half)) + 1;
    char *x = malloc(half), *y = malloc(half);
    if (!x || !y)
        mb_die(1, "out of memory measuring the copy rate of a %.0f-byte working set", ws_bytes);
    memset(x, 1, half);
    memset(y, 2, half);
    double best = 1e30;
    for (int round = 0; round < 4; round++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (long r = 0; r < reps; r++) {
            memcpy(r & 1 ? x : y, r & 1 ? y : x, half); /* back and forth: both halves stay the working set */
            __asm__ volatile("" ::: "memory");
        }
        double t = MPI_Wtime() - t0;
        if (round && t < best) /* the first is a warm-up */
            best = t;
    }
    MPI_Allreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE, MPI_MAX, comm); /* the slowest rank's best */
    free(x), free(y);
    return 2.0 * (double)half * (double)reps / best; /* read + write */
}
