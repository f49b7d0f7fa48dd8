/* Shared mode, NPBench's stencils: jacobi_1d, jacobi_2d, heat_3d (TSTEPS-1
 * sweeps of B from A, then A from B). naive: each slice sum, product and
 * the final assignment a materialised array, in NumPy's left-to-right
 * order; fused: one OpenMP loop per sweep, the time loop in one region
 * (sweep_steps, the serial reference's too). */
#include "shared_ops.h"

#include <string.h>

/* d[0] is TSTEPS, d[1] the side */
static size_t j2_len(const long long *d, int i) { (void)i; return (size_t)(d[1] * d[1]); }

/* naive's time loop: TSTEPS - 1 times, B from A, then A from B (a[0] A,
 * a[1] B; the side d[1]; in->ws the temporaries) */
static void naive_steps(struct mb_pbs_inst *in, void (*sweep)(double *dst, double *src, long n, double **t))
{
    for (long long t = 1; t < in->d[0]; t++) {
        sweep(in->a[1], in->a[0], in->d[1], in->ws);
        sweep(in->a[0], in->a[1], in->d[1], in->ws);
    }
}

/* fused's and the reference's time loop: TSTEPS - 1 times B = sweep(A),
 * A = sweep(B), in one OpenMP region (parallel) or on the calling thread;
 * each sweep is an orphaned `omp for` over its rows, whose implicit
 * barrier orders the sweeps */
static void sweep_steps(double *A, double *B, long long tsteps, long n, int parallel,
                        void (*sweep)(double *dst, const double *src, long n))
{
#pragma omp parallel if (parallel)
    for (long long t = 1; t < tsteps; t++) {
        sweep(B, A, n);
        sweep(A, B, n);
    }
}

/* ---- jacobi_1d: B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:]), then A from B */
static size_t j1_len(const long long *d, int i) { (void)i; return (size_t)d[1]; }

static void j1_init(struct mb_pbs_inst *in)
{
    long long n = in->d[1];
    for (long long i = 0; i < n; i++)
        in->a[0][i] = (double)(i + 2) / (double)n, in->a[1][i] = (double)(i + 3) / (double)n;
}

static void j1_naive_sweep(double *dst, double *src, long n, double **t)
{
    long m = n - 2;
    struct pbs_view t0 = pbs_v1(t[0], m, 1), t1 = pbs_v1(t[1], m, 1);
    pbs_ew(PBS_ADD, t0, pbs_v1(src, m, 1), pbs_v1(src + 1, m, 1), 0);
    pbs_ew(PBS_ADD, t1, t0, pbs_v1(src + 2, m, 1), 0);
    pbs_ew(PBS_SCALE, t0, t1, t1, 0.33333);
    pbs_ew(PBS_COPY, pbs_v1(dst + 1, m, 1), t0, t0, 0);
}

static void j1_naive(struct mb_pbs_inst *in) { naive_steps(in, j1_naive_sweep); }

static void j1_sweep(double *dst, const double *src, long n)
{
#pragma omp for schedule(static)
    for (long i = 1; i < n - 1; i++)
        dst[i] = 0.33333 * (src[i - 1] + src[i] + src[i + 1]);
}

static void j1_fused(struct mb_pbs_inst *in) { sweep_steps(in->a[0], in->a[1], in->d[0], in->d[1], 1, j1_sweep); }

static void j1_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = in->d[1];
    memcpy(ref[0], in->a0[0], (size_t)n * sizeof(double));
    memcpy(ref[1], in->a0[1], (size_t)n * sizeof(double));
    sweep_steps(ref[0], ref[1], in->d[0], n, 0, j1_sweep);
}

static double j1_flops(const long long *d) { return 2.0 * (d[0] - 1) * (d[1] - 2) * 3; }
static double j1_bytes(const long long *d) { return 2.0 * (d[0] - 1) * 2 * 8.0 * d[1]; }
static size_t j1_ws(const long long *d, int i) { (void)i; return (size_t)d[1]; }

const struct mb_pbs_kernel mb_pbs_kernel_jacobi_1d = {
    .name = "jacobi_1d", .nd = 2, .dim_names = {"TSTEPS", "N"},
    .preset = {{800, 3200}, {3000, 12000}, {8500, 34000}, {4000, 32000}},
    .narr = 2, .arr_names = {"A", "B"}, .arr_len = j1_len, .nout = 2, .out = {0, 1}, .nws = 2, .ws_len = j1_ws,
    .init = j1_init, .run = {j1_naive, j1_fused}, .reference = j1_ref, .flops = j1_flops, .bytes = j1_bytes,
};

/* ---- jacobi_2d: B[1:-1, 1:-1] = 0.2 * (c + west + east + south + north) - */
static size_t j2_ws(const long long *d, int i) { (void)i; return (size_t)((d[1] - 2) * (d[1] - 2)); }

static void j2_init(struct mb_pbs_inst *in)
{
    long long n = in->d[1];
    for (long long i = 0; i < n; i++)
        for (long long j = 0; j < n; j++) {
            in->a[0][i * n + j] = (double)(i * (j + 2)) / (double)n;
            in->a[1][i * n + j] = (double)(i * (j + 3)) / (double)n;
        }
}

/* the interior shifted by (di, dj) */
static struct pbs_view j2_at(double *a, long n, int di, int dj)
{
    return pbs_v2(a + (1 + di) * n + 1 + dj, n - 2, n - 2, n);
}

static void j2_naive_sweep(double *dst, double *src, long n, double **t)
{
    struct pbs_view t0 = pbs_like(t[0], j2_at(src, n, 0, 0)), t1 = pbs_like(t[1], t0);
    pbs_ew(PBS_ADD, t0, j2_at(src, n, 0, 0), j2_at(src, n, 0, -1), 0);
    pbs_ew(PBS_ADD, t1, t0, j2_at(src, n, 0, 1), 0);
    pbs_ew(PBS_ADD, t0, t1, j2_at(src, n, 1, 0), 0);
    pbs_ew(PBS_ADD, t1, t0, j2_at(src, n, -1, 0), 0);
    pbs_ew(PBS_SCALE, t0, t1, t1, 0.2);
    pbs_ew(PBS_COPY, j2_at(dst, n, 0, 0), t0, t0, 0);
}

static void j2_naive(struct mb_pbs_inst *in) { naive_steps(in, j2_naive_sweep); }

#define J2(S, i, j)                                                                                                   \
    (0.2 * (S[(i) * n + (j)] + S[(i) * n + (j) - 1] + S[(i) * n + (j) + 1] + S[((i) + 1) * n + (j)] +                \
            S[((i) - 1) * n + (j)]))

static void j2_sweep(double *dst, const double *src, long n)
{
#pragma omp for schedule(static)
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < n - 1; j++)
            dst[i * n + j] = J2(src, i, j);
}

static void j2_fused(struct mb_pbs_inst *in) { sweep_steps(in->a[0], in->a[1], in->d[0], in->d[1], 1, j2_sweep); }

static void j2_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = in->d[1];
    memcpy(ref[0], in->a0[0], (size_t)(n * n) * sizeof(double));
    memcpy(ref[1], in->a0[1], (size_t)(n * n) * sizeof(double));
    sweep_steps(ref[0], ref[1], in->d[0], n, 0, j2_sweep);
}

static double j2_flops(const long long *d) { return 2.0 * (d[0] - 1) * (d[1] - 2) * (d[1] - 2) * 5; }
static double j2_bytes(const long long *d) { return 2.0 * (d[0] - 1) * 2 * 8.0 * d[1] * d[1]; }

const struct mb_pbs_kernel mb_pbs_kernel_jacobi_2d = {
    .name = "jacobi_2d", .nd = 2, .dim_names = {"TSTEPS", "N"},
    .preset = {{50, 150}, {80, 350}, {200, 700}, {1000, 2800}},
    .narr = 2, .arr_names = {"A", "B"}, .arr_len = j2_len, .nout = 2, .out = {0, 1}, .nws = 2,
    .ws_len = j2_ws, .init = j2_init, .run = {j2_naive, j2_fused}, .reference = j2_ref, .flops = j2_flops,
    .bytes = j2_bytes,
};

/* ---- heat_3d: B[c] = 0.125 (A[i+] - 2 A[c] + A[i-]) + 0.125 (j) + 0.125 (k) + A[c] */
static size_t h3_len(const long long *d, int i) { (void)i; return (size_t)(d[1] * d[1] * d[1]); }
static size_t h3_ws(const long long *d, int i) { (void)i; return (size_t)((d[1] - 2) * (d[1] - 2) * (d[1] - 2)); }

static void h3_init(struct mb_pbs_inst *in)
{
    long long n = in->d[1];
    for (long long i = 0; i < n; i++)
        for (long long j = 0; j < n; j++)
            for (long long k = 0; k < n; k++)
                in->a[0][(i * n + j) * n + k] = in->a[1][(i * n + j) * n + k] = (double)(i + j + (n - k)) * 10 / (double)n;
}

static struct pbs_view h3_at(double *a, long n, int di, int dj, int dk)
{
    return pbs_v3(a + ((1 + di) * n + 1 + dj) * n + 1 + dk, n - 2, n - 2, n - 2, n * n, n);
}

/* NumPy's order: per axis 2.0*c, plus-side minus it, plus minus-side,
 * times 0.125, added to the running sum; then + c and the copy */
static void h3_naive_sweep(double *dst, double *src, long n, double **t)
{
    struct pbs_view c = h3_at(src, n, 0, 0, 0), sum = pbs_like(t[0], c), a = pbs_like(t[1], c),
                    b = pbs_like(t[2], c);
    static const int dirs[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int ax = 0; ax < 3; ax++) {
        const int *p = dirs[ax];
        pbs_ew(PBS_SCALE, a, c, c, 2.0);
        pbs_ew(PBS_SUB, b, h3_at(src, n, p[0], p[1], p[2]), a, 0);
        pbs_ew(PBS_ADD, a, b, h3_at(src, n, -p[0], -p[1], -p[2]), 0);
        if (ax == 0) {
            pbs_ew(PBS_SCALE, sum, a, a, 0.125);
        } else {
            pbs_ew(PBS_SCALE, b, a, a, 0.125);
            pbs_ew(PBS_ADD, sum, sum, b, 0); /* NumPy's new array for the sum, in t[0]'s place */
        }
    }
    pbs_ew(PBS_ADD, a, sum, c, 0);
    pbs_ew(PBS_COPY, h3_at(dst, n, 0, 0, 0), a, a, 0);
}

static void h3_naive(struct mb_pbs_inst *in) { naive_steps(in, h3_naive_sweep); }

#define H3(S, x)                                                                                                      \
    (0.125 * (S[(x) + nn] - 2.0 * S[x] + S[(x) - nn]) + 0.125 * (S[(x) + n] - 2.0 * S[x] + S[(x) - n]) +            \
     0.125 * (S[(x) + 1] - 2.0 * S[x] + S[(x) - 1]) + S[x])

static void h3_sweep(double *dst, const double *src, long n)
{
    long nn = n * n;
#pragma omp for collapse(2) schedule(static)
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < n - 1; j++)
            for (long k = 1; k < n - 1; k++) {
                long x = (i * n + j) * n + k;
                dst[x] = H3(src, x);
            }
}

static void h3_fused(struct mb_pbs_inst *in) { sweep_steps(in->a[0], in->a[1], in->d[0], in->d[1], 1, h3_sweep); }

static void h3_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = in->d[1];
    memcpy(ref[0], in->a0[0], (size_t)(n * n * n) * sizeof(double));
    memcpy(ref[1], in->a0[1], (size_t)(n * n * n) * sizeof(double));
    sweep_steps(ref[0], ref[1], in->d[0], n, 0, h3_sweep);
}

static double h3_flops(const long long *d)
{
    double m = (double)(d[1] - 2);
    return 2.0 * (d[0] - 1) * m * m * m * 15;
}
static double h3_bytes(const long long *d) { return 2.0 * (d[0] - 1) * 2 * 8.0 * d[1] * d[1] * d[1]; }

const struct mb_pbs_kernel mb_pbs_kernel_heat_3d = {
    .name = "heat_3d", .nd = 2, .dim_names = {"TSTEPS", "N"},
    .preset = {{25, 25}, {50, 40}, {100, 70}, {500, 120}},
    .narr = 2, .arr_names = {"A", "B"}, .arr_len = h3_len, .nout = 2, .out = {0, 1}, .nws = 3, .ws_len = h3_ws,
    .init = h3_init, .run = {h3_naive, h3_fused}, .reference = h3_ref, .flops = h3_flops, .bytes = h3_bytes,
};
