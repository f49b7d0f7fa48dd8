/* Shared mode, NPBench's SCC'22 kernels: lstsqr, specialconvolve, wdist.
 * Their inputs are NPBench's initialize: one np.random.default_rng(42)
 * per kernel, its arrays drawn in order from it (npy_rng.c gives the same
 * doubles), so ours, NumPy's and DaCe's runs work on the same numbers. */
#include "shared_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NPBENCH_SEED 42

/* ---- lstsqr: slope and intercept of the least-squares line ------------- */
enum { LS_X, LS_Y, LS_OUT };

static size_t ls_len(const long long *d, int i) { return (size_t)(i == LS_OUT ? 2 : d[0]); }
static size_t ls_ws(const long long *d, int i) { (void)i; return (size_t)d[0]; }

static void ls_init(struct mb_pbs_inst *in)
{
    struct pbs_rng r; /* x = rng.random((N,)); y = rng.random((N,)) */
    pbs_rng_seed(&r, NPBENCH_SEED);
    pbs_rng_random(&r, in->a[LS_X], (size_t)in->d[0]);
    pbs_rng_random(&r, in->a[LS_Y], (size_t)in->d[0]);
}

/* x_avg = np.average(x); dx = x - x_avg; var_x = np.sum(dx**2); cov_xy = np.sum(dx * dy) */
static void ls_naive(struct mb_pbs_inst *in)
{
    long n = in->d[0];
    struct pbs_view x = pbs_v1(in->a[LS_X], n, 1), y = pbs_v1(in->a[LS_Y], n, 1), dx = pbs_v1(in->ws[0], n, 1),
                    dy = pbs_v1(in->ws[1], n, 1), t = pbs_v1(in->ws[2], n, 1);
    double x_avg = pbs_sum(x) / (double)n, y_avg = pbs_sum(y) / (double)n;
    pbs_ew(PBS_SUBS, dx, x, x, x_avg);
    pbs_ew(PBS_SUBS, dy, y, y, y_avg);
    pbs_ew(PBS_SQUARE, t, dx, dx, 0);
    double var_x = pbs_sum(t);
    pbs_ew(PBS_MUL, t, dx, dy, 0);
    double cov_xy = pbs_sum(t), slope = cov_xy / var_x;
    in->a[LS_OUT][0] = slope, in->a[LS_OUT][1] = y_avg - slope * x_avg;
}

/* two passes: the means, then the variance and covariance */
static void ls_fused(struct mb_pbs_inst *in)
{
    long n = in->d[0];
    const double *x = in->a[LS_X], *y = in->a[LS_Y];
    double sx = 0, sy = 0, var = 0, cov = 0;
#pragma omp parallel for simd reduction(+ : sx, sy) schedule(static)
    for (long i = 0; i < n; i++)
        sx += x[i], sy += y[i];
    double xa = sx / (double)n, ya = sy / (double)n;
#pragma omp parallel for simd reduction(+ : var, cov) schedule(static)
    for (long i = 0; i < n; i++) {
        double dx = x[i] - xa;
        var += dx * dx, cov += dx * (y[i] - ya);
    }
    in->a[LS_OUT][0] = cov / var, in->a[LS_OUT][1] = ya - cov / var * xa;
}

static void ls_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = in->d[0];
    const double *x = in->a0[LS_X], *y = in->a0[LS_Y];
    double sx = 0, sy = 0;
    for (long i = 0; i < n; i++)
        sx += x[i], sy += y[i];
    double xa = sx / (double)n, ya = sy / (double)n, var = 0, cov = 0;
    for (long i = 0; i < n; i++)
        var += (x[i] - xa) * (x[i] - xa), cov += (x[i] - xa) * (y[i] - ya);
    ref[0][0] = cov / var, ref[0][1] = ya - cov / var * xa;
}

static double ls_flops(const long long *d) { return 7.0 * d[0]; }
static double ls_bytes(const long long *d) { return 16.0 * d[0]; }

const struct mb_pbs_kernel mb_pbs_kernel_lstsqr = {
    .name = "lstsqr", .nd = 1, .dim_names = {"N"}, .preset = {{100000}, {1000000}, {10000000}, {10000000}},
    .narr = 3, .arr_names = {"x", "y", "slope_intercept"}, .arr_len = ls_len, .nout = 1, .out = {LS_OUT},
    .nws = 3, .ws_len = ls_ws, .init = ls_init, .run = {ls_naive, ls_fused}, .reference = ls_ref,
    .flops = ls_flops, .bytes = ls_bytes,
};

/* the row loop built for AVX2 as well as the baseline (-O2 is SSE2 only) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SC_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SC_CLONES
#endif

/* ---- specialconvolve: 3x3 box sum minus 9x the centre, (M-2) x (N-2) ---- */
enum { SC_A, SC_OUT };

static size_t sc_len(const long long *d, int i)
{
    return (size_t)(i == SC_A ? d[0] * d[1] : (d[0] - 2) * (d[1] - 2));
}
static size_t sc_ws(const long long *d, int i) { (void)i; return (size_t)((d[0] - 2) * d[1]); }

static void sc_init(struct mb_pbs_inst *in)
{
    struct pbs_rng r; /* a = rng.random((M, N)) */
    pbs_rng_seed(&r, NPBENCH_SEED);
    pbs_rng_random(&r, in->a[SC_A], (size_t)(in->d[0] * in->d[1]));
}

/* rowconvol = a[1:-1,:] + a[:-2,:] + a[2:,:]
 * colconvol = rowconvol[:,1:-1] + rowconvol[:,:-2] + rowconvol[:,2:] - 9*a[1:-1,1:-1] */
static void sc_naive(struct mb_pbs_inst *in)
{
    long m = in->d[0], n = in->d[1];
    double *a = in->a[SC_A], **t = in->ws;
    struct pbs_view r0 = pbs_v2(t[0], m - 2, n, n), rc = pbs_v2(t[1], m - 2, n, n);
    pbs_ew(PBS_ADD, r0, pbs_v2(a + n, m - 2, n, n), pbs_v2(a, m - 2, n, n), 0);
    pbs_ew(PBS_ADD, rc, r0, pbs_v2(a + 2 * n, m - 2, n, n), 0);
    struct pbs_view c0 = pbs_v2(t[0], m - 2, n - 2, n - 2), c1 = pbs_v2(t[2], m - 2, n - 2, n - 2),
                    nine = pbs_v2(t[3], m - 2, n - 2, n - 2);
    pbs_ew(PBS_ADD, c0, pbs_v2(t[1] + 1, m - 2, n - 2, n), pbs_v2(t[1], m - 2, n - 2, n), 0);
    pbs_ew(PBS_ADD, c1, c0, pbs_v2(t[1] + 2, m - 2, n - 2, n), 0);
    pbs_ew(PBS_SCALE, nine, pbs_v2(a + n + 1, m - 2, n - 2, n), nine, 9.0);
    pbs_ew(PBS_SUB, pbs_v2(in->a[SC_OUT], m - 2, n - 2, n - 2), c1, nine, 0);
}

/* one row of out from a's rows i-1, i, i+1 through a row of their column
 * sums v (rowconvol's row, 3 reads and 2 adds per column, then 2 adds and a
 * multiply per output): NumPy's order of additions, so the same doubles as
 * naive, with 4 flops an output instead of 10 */
SC_CLONES static void sc_row(const double *up, const double *mid, const double *dn, double *v, double *o, long n)
{
#pragma omp simd
    for (long j = 0; j < n; j++)
        v[j] = (mid[j] + up[j]) + dn[j];
#pragma omp simd
    for (long j = 1; j < n - 1; j++)
        o[j - 1] = ((v[j] + v[j - 1]) + v[j + 1]) - 9.0 * mid[j];
}

static void sc_fused(struct mb_pbs_inst *in)
{
    long m = in->d[0], n = in->d[1];
    const double *a = in->a[SC_A];
    double *out = in->a[SC_OUT];
#pragma omp parallel
    {
        double *v = malloc((size_t)n * sizeof(double));
#pragma omp for schedule(static)
        for (long i = 1; i < m - 1; i++) {
            const double *up = a + (i - 1) * n, *mid = a + i * n, *dn = a + (i + 1) * n;
            double *o = out + (i - 1) * (n - 2);
            if (v)
                sc_row(up, mid, dn, v, o, n);
            else /* no room for the row of sums: the same sums from a */
                for (long j = 1; j < n - 1; j++)
                    o[j - 1] = (((mid[j] + up[j]) + dn[j]) + ((mid[j - 1] + up[j - 1]) + dn[j - 1]) +
                                ((mid[j + 1] + up[j + 1]) + dn[j + 1])) - 9.0 * mid[j];
        }
        free(v);
    }
}

static void sc_ref(struct mb_pbs_inst *in, double **ref)
{
    long m = in->d[0], n = in->d[1];
    const double *a = in->a0[SC_A];
    for (long i = 1; i < m - 1; i++)
        for (long j = 1; j < n - 1; j++) {
            double s = 0;
            for (int di = -1; di <= 1; di++)
                for (int dj = -1; dj <= 1; dj++)
                    s += a[(i + di) * n + j + dj];
            ref[0][(i - 1) * (n - 2) + j - 1] = s - 9 * a[i * n + j];
        }
}

static double sc_flops(const long long *d) { return 10.0 * (d[0] - 2) * (d[1] - 2); }
static double sc_bytes(const long long *d) { return 8.0 * (d[0] * d[1] + (d[0] - 2) * (d[1] - 2)); }

const struct mb_pbs_kernel mb_pbs_kernel_specialconvolve = {
    .name = "specialconvolve", .nd = 2, .dim_names = {"M", "N"},
    .preset = {{100, 100}, {500, 500}, {2000, 2000}, {10000, 10000}},
    .narr = 2, .arr_names = {"a", "colconvol"}, .arr_len = sc_len, .nout = 1, .out = {SC_OUT},
    .nws = 4, .ws_len = sc_ws, .init = sc_init, .run = {sc_naive, sc_fused}, .reference = sc_ref,
    .flops = sc_flops, .bytes = sc_bytes,
};

/* ---- wdist: D[i,j] = sqrt(sum_k ((A[k,i] - B[k,j]) / W[k,i])^2) --------- */
enum { WD_A, WD_B, WD_W, WD_D };

static size_t wd_len(const long long *d, int i)
{
    long long k = d[0], m = d[1], n = d[2];
    return (size_t)(i == WD_A || i == WD_W ? k * m : i == WD_B ? k * n : m * n);
}

static void wd_init(struct mb_pbs_inst *in)
{
    long long k = in->d[0], m = in->d[1], n = in->d[2];
    struct pbs_rng r; /* A = rng.random((K, M)); B = rng.random((K, N)); W = rng.random((K, M)) */
    pbs_rng_seed(&r, NPBENCH_SEED);
    pbs_rng_random(&r, in->a[WD_A], (size_t)(k * m));
    pbs_rng_random(&r, in->a[WD_B], (size_t)(k * n));
    pbs_rng_random(&r, in->a[WD_W], (size_t)(k * m));
}

/* NumPy's double loop: per (ii, jj) wdiff = (A[:,ii] - B[:,jj]) / W[:,ii],
 * then (wdiff**2).sum(); each a length-K temporary (per thread) */
static void wd_naive(struct mb_pbs_inst *in)
{
    long k = in->d[0], m = in->d[1], n = in->d[2];
    double *A = in->a[WD_A], *B = in->a[WD_B], *W = in->a[WD_W], *D = in->a[WD_D];
#pragma omp parallel
    {
        double *t = malloc(2 * (size_t)k * sizeof(double));
        struct pbs_view t0 = pbs_v1(t, k, 1), t1 = pbs_v1(t ? t + k : t, k, 1);
#pragma omp for schedule(static)
        for (long ii = 0; ii < m; ii++)
            for (long jj = 0; jj < n; jj++) {
                if (!t) {
                    D[ii * n + jj] = NAN; /* out of memory: the check fails the run */
                    continue;
                }
                pbs_ew(PBS_SUB, t0, pbs_v1(A + ii, k, m), pbs_v1(B + jj, k, n), 0);
                pbs_ew(PBS_DIV, t1, t0, pbs_v1(W + ii, k, m), 0);
                pbs_ew(PBS_SQUARE, t0, t1, t1, 0);
                D[ii * n + jj] = sqrt(pbs_sum(t0));
            }
        free(t);
    }
}

/* i, then k, then j: B's and D's rows contiguous, one reciprocal per (k, i) */
static void wd_fused(struct mb_pbs_inst *in)
{
    long k = in->d[0], m = in->d[1], n = in->d[2];
    const double *A = in->a[WD_A], *B = in->a[WD_B], *W = in->a[WD_W];
    double *D = in->a[WD_D];
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; i++) {
        double *d = D + i * n;
        memset(d, 0, (size_t)n * sizeof(double));
        for (long kk = 0; kk < k; kk++) {
            double a = A[kk * m + i], rw = 1.0 / W[kk * m + i];
            const double *b = B + kk * n;
            for (long j = 0; j < n; j++) {
                double e = (a - b[j]) * rw;
                d[j] += e * e;
            }
        }
        for (long j = 0; j < n; j++)
            d[j] = sqrt(d[j]);
    }
}

static void wd_ref(struct mb_pbs_inst *in, double **ref)
{
    long k = in->d[0], m = in->d[1], n = in->d[2];
    const double *A = in->a0[WD_A], *B = in->a0[WD_B], *W = in->a0[WD_W];
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++) {
            double s = 0;
            for (long kk = 0; kk < k; kk++) {
                double e = (A[kk * m + i] - B[kk * n + j]) / W[kk * m + i];
                s += e * e;
            }
            ref[0][i * n + j] = sqrt(s);
        }
}

static double wd_flops(const long long *d) { return 4.0 * d[0] * d[1] * d[2]; }
static double wd_bytes(const long long *d) { return 8.0 * (2.0 * d[0] * d[1] + d[0] * d[2] + d[1] * d[2]); }

const struct mb_pbs_kernel mb_pbs_kernel_wdist = {
    .name = "wdist", .nd = 3, .dim_names = {"K", "M", "N"},
    .preset = {{100, 100, 100}, {200, 200, 200}, {500, 500, 500}, {1000, 1000, 1000}},
    .narr = 4, .arr_names = {"A", "B", "W", "D"}, .arr_len = wd_len, .nout = 1, .out = {WD_D},
    .init = wd_init, .run = {wd_naive, wd_fused}, .reference = wd_ref, .flops = wd_flops, .bytes = wd_bytes,
};
