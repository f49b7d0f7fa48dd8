/* The products' own dgemm rate: the local dgemm shapes a product kernel
 * runs on one rank at its P (polybench.h, struct mb_pb_gemm), multiplied
 * on calibration operands with every rank at once, the median of 11
 * passes, the slowest rank's. The operands are as many distinct A and C
 * as the kernel's loop has (sets, csets): doitgen writes every plane's
 * product into one buffer, so its calibration has one C, not K/P of them
 * (those were 32 MiB a rank at the medium scale, 256 MiB at DaCe's). */
#include "polybench.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "../common/common.h"

double mb_pb_gemm_work(const struct mb_pb_gemm *g, int n)
{
    double w = 0;
    for (int i = 0; i < n; i++)
        w += 2.0 * (double)g[i].m * (double)g[i].n * (double)g[i].k * (double)g[i].calls;
    return w;
}

long long mb_pb_gemm_pass_calls(double window, double cycle_secs, long long cycle_calls)
{
    if (!(cycle_secs > 0) || cycle_calls < 1)
        return 1;
    double per_call = cycle_secs / (double)cycle_calls, q = ceil(window / per_call);
    return q >= 1 ? (q < 1e9 ? (long long)q : 1000000000LL) : 1;
}

/* a shape's distinct A and C operands: at least 1, C at most as many as A */
static size_t a_sets(const struct mb_pb_gemm *g) { return (size_t)(g->sets > 0 ? g->sets : 1); }
static size_t c_sets(const struct mb_pb_gemm *g)
{
    size_t a = a_sets(g);
    return g->csets < 1 ? 1 : (size_t)g->csets < a ? (size_t)g->csets : a;
}

/* doubles of a shape's operands: A, B, C */
static void counts(const struct mb_pb_gemm *g, size_t *na, size_t *nb, size_t *nc)
{
    *na = a_sets(g) * (size_t)(g->m * g->k), *nb = (size_t)(g->k * g->n), *nc = c_sets(g) * (size_t)(g->m * g->n);
}

double mb_pb_gemm_bytes(const struct mb_pb_gemm *g, int n)
{
    double b = 0;
    for (int i = 0; i < n; i++) {
        size_t na, nb, nc;
        counts(&g[i], &na, &nb, &nc);
        b += 8.0 * ((double)na + (double)nb + (double)nc);
    }
    return b;
}

struct operands {
    double *a, *b, *c; /* sets x m x k, k x n, csets x m x n */
};

enum { PASSES = 11 };
#define WINDOW 0.05 /* s: a pass, or one product when that is longer */

/* product `step` of the cycle (the shapes in order, each its calls): its
 * FLOPs */
static double product(const struct mb_pb_gemm *g, int n, const struct operands *op, long long step,
                      long long cycle)
{
    step %= cycle;
    int e = 0;
    while (e < n - 1 && step >= g[e].calls)
        step -= g[e++].calls;
    const struct mb_pb_gemm *s = &g[e];
    size_t ia = (size_t)step % a_sets(s), ic = (size_t)step % c_sets(s);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 1.0,
                op[e].a + ia * (size_t)(s->m * s->k), (int)s->k, op[e].b, (int)s->n, 1.0,
                op[e].c + ic * (size_t)(s->m * s->n), (int)s->n);
    return 2.0 * (double)s->m * (double)s->n * (double)s->k;
}

double mb_pb_gemm_rate(MPI_Comm comm, const struct mb_pb_gemm *g, int n)
{
    struct operands op[MB_PB_MAXGEMM] = {{0}};
    long long cycle = 0;
    int ok = n > 0 && n <= MB_PB_MAXGEMM;
    for (int e = 0; e < n && ok; e++) {
        size_t na, nb, nc;
        counts(&g[e], &na, &nb, &nc);
        op[e].a = malloc(na * sizeof(double)), op[e].b = malloc(nb * sizeof(double));
        op[e].c = malloc(nc * sizeof(double));
        if (!op[e].a || !op[e].b || !op[e].c)
            mb_die(1, "out of memory for the products' dgemm calibration (%zu doubles)", na + nb + nc);
        for (size_t i = 0; i < na; i++) /* small values: C grows by about k 1e-6 a product */
            op[e].a[i] = (double)(i % 7) * 1e-3;
        for (size_t i = 0; i < nb; i++)
            op[e].b[i] = (double)(i % 5) * 1e-3;
        for (size_t i = 0; i < nc; i++)
            op[e].c[i] = 0;
        cycle += g[e].calls;
    }
    double rate = 0;
    if (ok && cycle > 0) {
        /* the warm-up: the whole cycle once, its time the slowest rank's */
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (long long s = 0; s < cycle; s++)
            product(g, n, op, s, cycle);
        double cyc = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &cyc, 1, MPI_DOUBLE, MPI_MAX, comm);
        long long q = mb_pb_gemm_pass_calls(WINDOW, cyc, cycle), step = 0;
        double work[PASSES], secs[PASSES];
        for (int p = 0; p < PASSES; p++) { /* the same q products on every rank, from one barrier */
            MPI_Barrier(comm);
            double w = 0, c0 = MPI_Wtime();
            for (long long i = 0; i < q; i++)
                w += product(g, n, op, step++, cycle);
            secs[p] = MPI_Wtime() - c0, work[p] = w;
        }
        rate = mb_pb_median_rate(work, secs, PASSES);
    }
    if (!(rate > 0)) /* a rank without a rate counts 0: the result is then NaN */
        rate = 0;
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, comm); /* the slowest rank's */
    for (int e = 0; e < n && e < MB_PB_MAXGEMM; e++)
        free(op[e].a), free(op[e].b), free(op[e].c);
    return rate > 0 ? rate : NAN;
}
