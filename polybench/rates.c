/* The model's machine rates, measured in the run's calibration (before
 * any timed sample) with every rank at once, as the kernels run (all
 * ranks share the machine): dgemm FLOP/s, memcpy bytes/s and the
 * read stream of a dgemv (bytes of A read per second; the products' reads are priced at it). */
#include "polybench.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/common.h"

double mb_pb_median_rate(const double *work, const double *secs, int n)
{
    double r[64];
    int m = 0;
    for (int i = 0; i < n && m < 64; i++)
        if (secs[i] > 0 && work[i] > 0) /* a pass that finished no work tells nothing */
            r[m++] = work[i] / secs[i];
    return mb_median(r, (size_t)m); /* NaN when no pass counted */
}

void mb_pb_cpu_pass(double work_per_call, long done, double cpu0, double cpu1, double *work, double *secs)
{
    *work = work_per_call * (double)(done + 1); /* every call ran on this rank's clock, the one past the window too */
    *secs = cpu1 > cpu0 ? cpu1 - cpu0 : 0;      /* 0: mb_pb_median_rate skips the pass */
}

static double thread_cpu(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + 1e-9 * (double)t.tv_nsec : NAN;
}

double mb_pb_slowest_median(const double *rates, int nranks, int n)
{
    double r[64];
    int m = 0;
    for (int p = 0; p < n && m < 64; p++) {
        double slowest = INFINITY;
        int counted = nranks > 0;
        for (int q = 0; q < nranks && counted; q++) {
            double x = rates[(size_t)q * (size_t)n + (size_t)p];
            if (!(x > 0)) /* NaN or 0 on any rank: the pass is not counted */
                counted = 0;
            else if (x < slowest)
                slowest = x;
        }
        if (counted)
            r[m++] = slowest;
    }
    return mb_median(r, (size_t)m); /* NaN when no pass counted */
}

/* The wall-clocked passes (dgemm, read stream): PASSES_WALL passes, each rank's median, then the slowest
 * rank's. The CPU-clocked ones (the stencils' cell rates): PASSES_CPU passes, the slowest rank's rate in
 * each pass (as the timed kernel's slowest rank in each call), then the median over the passes. */
enum { PASSES_WALL = 5, PASSES_CPU = 11 };

static double window_rate(MPI_Comm comm, double window, double work_per_call, void (*call)(void *ctx, long k),
                          void *ctx, int cpu)
{
    const int passes = cpu ? PASSES_CPU : PASSES_WALL;
    double work[PASSES_CPU], secs[PASSES_CPU];
    for (int p = -1; p < passes; p++) { /* p = -1: the warm-up */
        MPI_Barrier(comm);
        double t0 = MPI_Wtime(), last = t0, c0 = cpu ? thread_cpu() : 0;
        long done = 0;
        for (;;) {
            call(ctx, done);
            double t = MPI_Wtime();
            if (t - t0 > window)
                break;
            done++, last = t;
        }
        double c1 = cpu ? thread_cpu() : 0;
        if (p >= 0 && cpu)
            mb_pb_cpu_pass(work_per_call, done, c0, c1, &work[p], &secs[p]);
        else if (p >= 0)
            work[p] = work_per_call * (double)done, secs[p] = last - t0;
    }
    if (cpu) {
        int nranks;
        MPI_Comm_size(comm, &nranks);
        double mine[PASSES_CPU], *all = malloc((size_t)nranks * PASSES_CPU * sizeof(double));
        if (!all)
            mb_die(1, "out of memory gathering %d ranks' calibration passes", nranks);
        for (int p = 0; p < passes; p++)
            mine[p] = secs[p] > 0 && work[p] > 0 ? work[p] / secs[p] : 0; /* 0: the pass is not counted */
        MPI_Allgather(mine, passes, MPI_DOUBLE, all, passes, MPI_DOUBLE, comm);
        double rate = mb_pb_slowest_median(all, nranks, passes); /* the same on every rank */
        free(all);
        return rate;
    }
    double rate = mb_pb_median_rate(work, secs, passes);
    if (!(rate > 0)) /* a rank without a rate counts 0: the result is then NaN */
        rate = 0;
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, comm); /* the slowest rank's */
    return rate > 0 ? rate : NAN;
}

double mb_pb_window_rate(MPI_Comm comm, double window, double work_per_call, void (*call)(void *ctx, long k),
                         void *ctx)
{
    return window_rate(comm, window, work_per_call, call, ctx, 0);
}

double mb_pb_window_cpu_rate(MPI_Comm comm, double window, double work_per_call, void (*call)(void *ctx, long k),
                             void *ctx)
{
    return window_rate(comm, window, work_per_call, call, ctx, 1);
}

struct dgemm_call {
    int n;
    const double *a, *b;
    double *c;
};

static void dgemm_call(void *ctx, long k)
{
    (void)k;
    struct dgemm_call *d = ctx;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d->n, d->n, d->n, 1.0, d->a, d->n, d->b, d->n, 1.0, d->c,
                d->n);
}

/* The read stream: OpenBLAS's dgemv over one panel of a matrix far beyond
 * the LLC (each panel beyond it too), call k the panel k mod npanels, NoTrans and Trans alternating
 * (the matrix-vector kernels make one of each over their block, except
 * gesummv's two NoTrans): a call reads a panel no cache holds. */
struct read_call {
    long rows, cols, npanels;
    const double *a, *x; /* a: npanels * rows x cols; x: max(rows, cols) */
    double *y;           /* max(rows, cols) */
};

static void read_call(void *ctx, long k)
{
    struct read_call *r = ctx;
    const double *p = r->a + (size_t)(k % r->npanels) * (size_t)(r->rows * r->cols);
    cblas_dgemv(CblasRowMajor, k & 1 ? CblasTrans : CblasNoTrans, (int)r->rows, (int)r->cols, 1.0, p, (int)r->cols,
                r->x, 1, 0.0, r->y, 1);
}

double mb_pb_read_rate(MPI_Comm comm, size_t total_bytes, long cols)
{
    /* a panel: 1024 rows of cols doubles (64 MiB at 8192, twice the L3), as the kernels' blocks have
     * thousands of rows: 128-row panels read 5-10% faster than 1024-row ones (NoTrans and Trans, 8192 and
     * 11000 columns, one rank, CPU time, load 18) */
    const long rows = 1024;
    long npanels = (long)(total_bytes / ((size_t)rows * (size_t)cols * sizeof(double)));
    if (npanels < 1)
        npanels = 1;
    size_t n = (size_t)npanels * (size_t)(rows * cols), nv = (size_t)(cols > rows ? cols : rows);
    double *a = malloc(n * sizeof(double)), *x = malloc(nv * sizeof(double)), *y = calloc(nv, sizeof(double));
    if (!a || !x || !y)
        mb_die(1, "out of memory measuring the read-stream rate (%zu bytes)", n * sizeof(double));
    for (size_t i = 0; i < n; i++) /* every page touched before the warm-up */
        a[i] = (double)(i % 7) * 1e-3;
    for (size_t i = 0; i < nv; i++)
        x[i] = 1e-3;
    struct read_call r = {rows, cols, npanels, a, x, y};
    /* 40 ms windows: about 10 panels of 64 MiB at 17 GB/s */
    double rate = mb_pb_window_rate(comm, 0.04, (double)rows * (double)cols * sizeof(double), read_call, &r);
    free(a), free(x), free(y);
    return rate;
}

void mb_pb_measure_rates(MPI_Comm comm, double *dgemm_flops_s, double *memcpy_bytes_s, double *read_bytes_s)
{
    const int n = 384;
    const double window = 0.04; /* s: about 15 products at 40 GFLOP/s */
    double *a = malloc((size_t)n * n * sizeof(double)), *b = malloc((size_t)n * n * sizeof(double)),
           *c = calloc((size_t)n * n, sizeof(double));
    if (!a || !b || !c)
        mb_die(1, "out of memory measuring the dgemm rate");
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = (double)(i % 7) * 1e-3, b[i] = (double)(i % 5) * 1e-3;
    struct dgemm_call d = {n, a, b, c};
    *dgemm_flops_s = mb_pb_window_rate(comm, window, 2.0 * n * n * n, dgemm_call, &d);
    /* collectives' memcpy bandwidth: the best of three 32 MiB copies on
     * every rank at once, each timed to the last rank's end (GB/s summed
     * over the ranks) */
    int nranks;
    MPI_Comm_size(comm, &nranks);
    double copy_gbps = mb_coll_memcpy_gbps(comm, (size_t)32 << 20, NULL);
    *memcpy_bytes_s = 2.0 * copy_gbps * 1e9 / nranks; /* per rank, read + write */
    free(a), free(b), free(c);
    /* 256 MiB per rank: 8 times this host's 32 MiB L3, at P = 2 16 times */
    *read_bytes_s = mb_pb_read_rate(comm, (size_t)256 << 20, 8192);
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
