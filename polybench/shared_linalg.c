/* Shared mode, NPBench's polybench linear algebra: gemm, atax, bicg, mvt,
 * gemver, gesummv, doitgen. naive: NumPy's temporaries (BLAS for each @,
 * one OpenMP loop per element-wise operator); fused: the products that
 * read the same matrix share one pass over it (atax, bicg, mvt:
 * shared_rowpass.c; gemver, gesummv here). Row-major, as NumPy. */
#include "shared_ops.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#define D0 (in->d[0])
#define D1 (in->d[1])
#define D2 (in->d[2])

static double frac(long long num, long long mod, long long den) { return (double)(num % mod) / (double)den; }

/* serial y (+)= op(A) x for the references, op(A)[i,j] = A[j,i] when trans */
static void ref_gemv(const double *A, long rows, long cols, int trans, const double *x, double *y)
{
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++) {
            if (trans)
                y[j] += A[i * cols + j] * x[i];
            else
                y[i] += A[i * cols + j] * x[j];
        }
}

/* ---- gemm: C[:] = alpha * A @ B + beta * C ------------------------------ */
enum { GEMM_C, GEMM_A, GEMM_B };

static size_t gemm_len(const long long *d, int i)
{
    return (size_t)(i == GEMM_C ? d[0] * d[1] : i == GEMM_A ? d[0] * d[2] : d[2] * d[1]);
}
static size_t gemm_ws(const long long *d, int i) { return (size_t)(i == 0 ? d[0] * d[2] : d[0] * d[1]); }

static void gemm_init(struct mb_pbs_inst *in)
{
    long long ni = D0, nj = D1, nk = D2;
    for (long long i = 0; i < ni; i++) {
        for (long long j = 0; j < nj; j++)
            in->a[GEMM_C][i * nj + j] = frac(i * j + 1, ni, ni);
        for (long long k = 0; k < nk; k++)
            in->a[GEMM_A][i * nk + k] = frac(i * (k + 1), nk, nk);
    }
    for (long long k = 0; k < nk; k++)
        for (long long j = 0; j < nj; j++)
            in->a[GEMM_B][k * nj + j] = frac(k * (j + 2), nj, nj);
}

static void gemm_naive(struct mb_pbs_inst *in)
{
    long ni = D0, nj = D1, nk = D2;
    struct pbs_view c = pbs_v1(in->a[GEMM_C], ni * nj, 1), none = c;
    pbs_ew(PBS_SCALE, pbs_v1(in->ws[0], ni * nk, 1), pbs_v1(in->a[GEMM_A], ni * nk, 1), none, in->alpha);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ni, (int)nj, (int)nk, 1.0, in->ws[0], (int)nk,
                in->a[GEMM_B], (int)nj, 0.0, in->ws[1], (int)nj);
    pbs_ew(PBS_SCALE, pbs_v1(in->ws[2], ni * nj, 1), c, none, in->beta);
    pbs_ew(PBS_ADD, pbs_v1(in->ws[3], ni * nj, 1), pbs_v1(in->ws[1], ni * nj, 1), pbs_v1(in->ws[2], ni * nj, 1), 0);
    pbs_ew(PBS_COPY, c, pbs_v1(in->ws[3], ni * nj, 1), none, 0);
}

static void gemm_fused(struct mb_pbs_inst *in)
{
    int ni = (int)D0, nj = (int)D1, nk = (int)D2;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nj, nk, in->alpha, in->a[GEMM_A], nk, in->a[GEMM_B],
                nj, in->beta, in->a[GEMM_C], nj);
}

static void gemm_ref(struct mb_pbs_inst *in, double **ref)
{
    long ni = D0, nj = D1, nk = D2;
    const double *A = in->a0[GEMM_A], *B = in->a0[GEMM_B];
    double *C = ref[0];
    for (long i = 0; i < ni; i++) {
        for (long j = 0; j < nj; j++)
            C[i * nj + j] = in->beta * in->a0[GEMM_C][i * nj + j];
        for (long k = 0; k < nk; k++) {
            double aik = in->alpha * A[i * nk + k];
            for (long j = 0; j < nj; j++)
                C[i * nj + j] += aik * B[k * nj + j];
        }
    }
}

static double gemm_flops(const long long *d) { return 2.0 * d[0] * d[1] * d[2] + 3.0 * d[0] * d[1]; }
static double gemm_bytes(const long long *d) { return 8.0 * (d[0] * d[2] + d[2] * d[1] + 2.0 * d[0] * d[1]); }

const struct mb_pbs_kernel mb_pbs_kernel_gemm = {
    .name = "gemm", .nd = 3, .dim_names = {"NI", "NJ", "NK"},
    .preset = {{1000, 1100, 1200}, {2500, 2750, 3000}, {7000, 7500, 8000}, {2000, 2300, 2600}},
    .narr = 3, .arr_names = {"C", "A", "B"}, .arr_len = gemm_len, .nout = 1, .out = {GEMM_C},
    .nws = 4, .ws_len = gemm_ws, .init = gemm_init, .run = {gemm_naive, gemm_fused}, .reference = gemm_ref,
    .flops = gemm_flops, .bytes = gemm_bytes,
};

/* ---- atax: return (A @ x) @ A ------------------------------------------- */
enum { ATAX_A, ATAX_X, ATAX_Y };

static size_t atax_len(const long long *d, int i) { return (size_t)(i == ATAX_A ? d[0] * d[1] : d[1]); }
static size_t atax_ws(const long long *d, int i) { (void)i; return (size_t)d[0]; }

static void atax_init(struct mb_pbs_inst *in)
{
    long long m = D0, n = D1;
    for (long long i = 0; i < n; i++)
        in->a[ATAX_X][i] = 1 + (double)i / (double)n;
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++)
            in->a[ATAX_A][i * n + j] = frac(i + j, n, 5 * m);
}

static void atax_naive(struct mb_pbs_inst *in)
{
    int m = (int)D0, n = (int)D1;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, in->a[ATAX_A], n, in->a[ATAX_X], 1, 0.0, in->ws[0], 1);
    cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, in->a[ATAX_A], n, in->ws[0], 1, 0.0, in->a[ATAX_Y], 1);
}

/* one pass over A's rows: each row's A[i,:] . x, then y += that * A[i,:]
 * while the row is in cache (NumPy's two dgemv read A twice) */
static void atax_fused(struct mb_pbs_inst *in)
{
    memset(in->a[ATAX_Y], 0, (size_t)D1 * sizeof(double));
    pbs_rowpass(in->a[ATAX_A], D0, D1, in->a[ATAX_X], NULL, 0, NULL, in->a[ATAX_Y]);
}

static void atax_ref(struct mb_pbs_inst *in, double **ref)
{
    long m = D0, n = D1;
    double *t = calloc((size_t)m, sizeof(double));
    if (!t)
        abort();
    memset(ref[0], 0, (size_t)n * sizeof(double));
    ref_gemv(in->a0[ATAX_A], m, n, 0, in->a0[ATAX_X], t);
    ref_gemv(in->a0[ATAX_A], m, n, 1, t, ref[0]);
    free(t);
}

static double atax_flops(const long long *d) { return 4.0 * d[0] * d[1]; }
static double atax_bytes(const long long *d) { return 8.0 * (d[0] * d[1] + 2.0 * d[1]); }

const struct mb_pbs_kernel mb_pbs_kernel_atax = {
    .name = "atax", .nd = 2, .dim_names = {"M", "N"},
    .preset = {{4000, 5000}, {10000, 12500}, {20000, 25000}, {18000, 22000}},
    .narr = 3, .arr_names = {"A", "x", "y"}, .arr_len = atax_len, .nout = 1, .out = {ATAX_Y},
    .nws = 1, .ws_len = atax_ws, .init = atax_init, .run = {atax_naive, atax_fused}, .reference = atax_ref,
    .flops = atax_flops, .bytes = atax_bytes,
};

/* ---- bicg: return r @ A, A @ p (A is N x M) ----------------------------- */
enum { BICG_A, BICG_P, BICG_R, BICG_S, BICG_Q };

static size_t bicg_len(const long long *d, int i)
{
    long long m = d[0], n = d[1];
    return (size_t)(i == BICG_A ? n * m : i == BICG_P || i == BICG_S ? m : n);
}

static void bicg_init(struct mb_pbs_inst *in)
{
    long long m = D0, n = D1;
    for (long long i = 0; i < n; i++) {
        for (long long j = 0; j < m; j++)
            in->a[BICG_A][i * m + j] = frac(i * (j + 1), n, n);
        in->a[BICG_R][i] = frac(i, n, n);
    }
    for (long long i = 0; i < m; i++)
        in->a[BICG_P][i] = frac(i, m, m);
}

static void bicg_naive(struct mb_pbs_inst *in)
{
    int m = (int)D0, n = (int)D1;
    cblas_dgemv(CblasRowMajor, CblasTrans, n, m, 1.0, in->a[BICG_A], m, in->a[BICG_R], 1, 0.0, in->a[BICG_S], 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, n, m, 1.0, in->a[BICG_A], m, in->a[BICG_P], 1, 0.0, in->a[BICG_Q], 1);
}

/* one pass over A's rows: q[i] = A[i,:] . p and s += r[i] * A[i,:] */
static void bicg_fused(struct mb_pbs_inst *in)
{
    memset(in->a[BICG_S], 0, (size_t)D0 * sizeof(double));
    pbs_rowpass(in->a[BICG_A], D1, D0, in->a[BICG_P], in->a[BICG_Q], 0, in->a[BICG_R], in->a[BICG_S]);
}

static void bicg_ref(struct mb_pbs_inst *in, double **ref)
{
    long m = D0, n = D1;
    memset(ref[0], 0, (size_t)m * sizeof(double));
    memset(ref[1], 0, (size_t)n * sizeof(double));
    ref_gemv(in->a0[BICG_A], n, m, 1, in->a0[BICG_R], ref[0]);
    ref_gemv(in->a0[BICG_A], n, m, 0, in->a0[BICG_P], ref[1]);
}

static double bicg_flops(const long long *d) { return 4.0 * d[0] * d[1]; }
static double bicg_bytes(const long long *d) { return 8.0 * (d[0] * d[1] + 2.0 * (d[0] + d[1])); }

const struct mb_pbs_kernel mb_pbs_kernel_bicg = {
    .name = "bicg", .nd = 2, .dim_names = {"M", "N"},
    .preset = {{4000, 5000}, {10000, 12500}, {20000, 25000}, {18000, 22000}},
    .narr = 5, .arr_names = {"A", "p", "r", "s", "q"}, .arr_len = bicg_len, .nout = 2, .out = {BICG_S, BICG_Q},
    .init = bicg_init, .run = {bicg_naive, bicg_fused}, .reference = bicg_ref,
    .flops = bicg_flops, .bytes = bicg_bytes,
};

/* ---- mvt: x1 += A @ y_1; x2 += y_2 @ A ---------------------------------- */
enum { MVT_X1, MVT_X2, MVT_Y1, MVT_Y2, MVT_A };

static size_t mvt_len(const long long *d, int i) { return (size_t)(i == MVT_A ? d[0] * d[0] : d[0]); }
static size_t vec_ws(const long long *d, int i) { (void)i; return (size_t)d[0]; }

static void mvt_init(struct mb_pbs_inst *in)
{
    long long n = D0;
    for (long long i = 0; i < n; i++) {
        in->a[MVT_X1][i] = frac(i, n, n);
        in->a[MVT_X2][i] = frac(i + 1, n, n);
        in->a[MVT_Y1][i] = frac(i + 3, n, n);
        in->a[MVT_Y2][i] = frac(i + 4, n, n);
        for (long long j = 0; j < n; j++)
            in->a[MVT_A][i * n + j] = frac(i * j, n, n);
    }
}

static void mvt_naive(struct mb_pbs_inst *in)
{
    int n = (int)D0;
    struct pbs_view x1 = pbs_v1(in->a[MVT_X1], n, 1), x2 = pbs_v1(in->a[MVT_X2], n, 1), t = pbs_v1(in->ws[0], n, 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, in->a[MVT_A], n, in->a[MVT_Y1], 1, 0.0, in->ws[0], 1);
    pbs_ew(PBS_ADD, x1, x1, t, 0);
    cblas_dgemv(CblasRowMajor, CblasTrans, n, n, 1.0, in->a[MVT_A], n, in->a[MVT_Y2], 1, 0.0, in->ws[0], 1);
    pbs_ew(PBS_ADD, x2, x2, t, 0);
}

/* x1 += A y1 and x2 += y2 A straight into x1 and x2 in one pass over A's
 * rows: x1[i] += A[i,:] . y1 and x2 += y2[i] * A[i,:] (NumPy's two dgemv
 * read A twice and add temporaries) */
static void mvt_fused(struct mb_pbs_inst *in)
{
    pbs_rowpass(in->a[MVT_A], D0, D0, in->a[MVT_Y1], in->a[MVT_X1], 1.0, in->a[MVT_Y2], in->a[MVT_X2]);
}

static void mvt_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = D0;
    memcpy(ref[0], in->a0[MVT_X1], (size_t)n * sizeof(double));
    memcpy(ref[1], in->a0[MVT_X2], (size_t)n * sizeof(double));
    ref_gemv(in->a0[MVT_A], n, n, 0, in->a0[MVT_Y1], ref[0]);
    ref_gemv(in->a0[MVT_A], n, n, 1, in->a0[MVT_Y2], ref[1]);
}

static double mvt_flops(const long long *d) { return 4.0 * d[0] * d[0]; }
static double mvt_bytes(const long long *d) { return 8.0 * (d[0] * d[0] + 6.0 * d[0]); }

const struct mb_pbs_kernel mb_pbs_kernel_mvt = {
    .name = "mvt", .nd = 1, .dim_names = {"N"}, .preset = {{5500}, {11000}, {22000}, {16000}},
    .narr = 5, .arr_names = {"x1", "x2", "y_1", "y_2", "A"}, .arr_len = mvt_len, .nout = 2, .out = {MVT_X1, MVT_X2},
    .nws = 1, .ws_len = vec_ws, .init = mvt_init, .run = {mvt_naive, mvt_fused}, .reference = mvt_ref,
    .flops = mvt_flops, .bytes = mvt_bytes,
};

/* ---- gemver ---------------------------------------------------------------
 * A += np.outer(u1, v1) + np.outer(u2, v2); x += beta * y @ A + z;
 * w += alpha * A @ x */
enum { GV_A, GV_U1, GV_V1, GV_U2, GV_V2, GV_W, GV_X, GV_Y, GV_Z };

static size_t gemver_len(const long long *d, int i) { return (size_t)(i == GV_A ? d[0] * d[0] : d[0]); }
static size_t gemver_ws(const long long *d, int i) { return (size_t)(i < 3 ? d[0] * d[0] : d[0]); }

static void gemver_init(struct mb_pbs_inst *in)
{
    long long n = D0;
    double fn = (double)n;
    for (long long i = 0; i < n; i++) {
        for (long long j = 0; j < n; j++)
            in->a[GV_A][i * n + j] = frac(i * j, n, n);
        in->a[GV_U1][i] = (double)i;
        in->a[GV_U2][i] = ((i + 1) / fn) / 2.0;
        in->a[GV_V1][i] = ((i + 1) / fn) / 4.0;
        in->a[GV_V2][i] = ((i + 1) / fn) / 6.0;
        in->a[GV_W][i] = in->a[GV_X][i] = 0;
        in->a[GV_Y][i] = ((i + 1) / fn) / 8.0;
        in->a[GV_Z][i] = ((i + 1) / fn) / 9.0;
    }
}

static void outer(double *out, const double *u, const double *v, long n)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            out[i * n + j] = u[i] * v[j];
}

static void gemver_naive(struct mb_pbs_inst *in)
{
    long n = D0;
    double **a = in->a, **t = in->ws;
    struct pbs_view A = pbs_v1(a[GV_A], n * n, 1), T0 = pbs_v1(t[0], n * n, 1), T1 = pbs_v1(t[1], n * n, 1),
                    T2 = pbs_v1(t[2], n * n, 1), v3 = pbs_v1(t[3], n, 1), v4 = pbs_v1(t[4], n, 1),
                    x = pbs_v1(a[GV_X], n, 1), w = pbs_v1(a[GV_W], n, 1);
    outer(t[0], a[GV_U1], a[GV_V1], n);
    outer(t[1], a[GV_U2], a[GV_V2], n);
    pbs_ew(PBS_ADD, T2, T0, T1, 0);
    pbs_ew(PBS_ADD, A, A, T2, 0);
    pbs_ew(PBS_SCALE, v3, pbs_v1(a[GV_Y], n, 1), v3, in->beta); /* beta * y */
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)n, 1.0, a[GV_A], (int)n, t[3], 1, 0.0, t[4], 1);
    pbs_ew(PBS_ADD, v3, v4, pbs_v1(a[GV_Z], n, 1), 0); /* ... + z */
    pbs_ew(PBS_ADD, x, x, v3, 0);
    pbs_ew(PBS_SCALE, T0, A, A, in->alpha); /* alpha * A */
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)n, 1.0, t[0], (int)n, a[GV_X], 1, 0.0, t[4], 1);
    pbs_ew(PBS_ADD, w, w, v4, 0);
}

static void gemver_fused(struct mb_pbs_inst *in)
{
    long n = D0;
    double **a = in->a, *A = a[GV_A], beta = in->beta;
    /* one pass: the rank-2 update and x's column sums of the updated row */
#pragma omp parallel
    {
        double *mine = calloc((size_t)n, sizeof(double));
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) {
            double *r = A + i * n, u1 = a[GV_U1][i], u2 = a[GV_U2][i], by = beta * a[GV_Y][i];
            for (long j = 0; j < n; j++)
                r[j] += u1 * a[GV_V1][j] + u2 * a[GV_V2][j];
            if (mine)
                for (long j = 0; j < n; j++)
                    mine[j] += by * r[j];
            else
#pragma omp critical(pbs_gemver)
                for (long j = 0; j < n; j++)
                    a[GV_X][j] += by * r[j];
        }
        if (mine) {
#pragma omp critical(pbs_gemver)
            for (long j = 0; j < n; j++)
                a[GV_X][j] += mine[j];
        }
        free(mine);
    }
    for (long j = 0; j < n; j++)
        a[GV_X][j] += a[GV_Z][j];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)n, in->alpha, A, (int)n, a[GV_X], 1, 1.0, a[GV_W], 1);
}

static void gemver_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = D0;
    double **a0 = in->a0, *A = ref[0], *w = ref[1], *x = ref[2];
    memcpy(w, a0[GV_W], (size_t)n * sizeof(double));
    memcpy(x, a0[GV_X], (size_t)n * sizeof(double));
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            A[i * n + j] = a0[GV_A][i * n + j] + a0[GV_U1][i] * a0[GV_V1][j] + a0[GV_U2][i] * a0[GV_V2][j];
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            x[j] += in->beta * a0[GV_Y][i] * A[i * n + j];
    for (long j = 0; j < n; j++)
        x[j] += a0[GV_Z][j];
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (long j = 0; j < n; j++)
            s += A[i * n + j] * x[j];
        w[i] += in->alpha * s;
    }
}

static double gemver_flops(const long long *d) { return 10.0 * d[0] * d[0]; }
static double gemver_bytes(const long long *d) { return 8.0 * (3.0 * d[0] * d[0] + 10.0 * d[0]); }

const struct mb_pbs_kernel mb_pbs_kernel_gemver = {
    .name = "gemver", .nd = 1, .dim_names = {"N"}, .preset = {{1000}, {3000}, {10000}, {8000}},
    .narr = 9, .arr_names = {"A", "u1", "v1", "u2", "v2", "w", "x", "y", "z"}, .arr_len = gemver_len,
    .nout = 3, .out = {GV_A, GV_W, GV_X}, .nws = 5, .ws_len = gemver_ws, .init = gemver_init,
    .run = {gemver_naive, gemver_fused}, .reference = gemver_ref, .flops = gemver_flops, .bytes = gemver_bytes,
};

/* ---- gesummv: return alpha * A @ x + beta * B @ x ----------------------- */
enum { GS_A, GS_B, GS_X, GS_Y };

static size_t gesummv_len(const long long *d, int i) { return (size_t)(i <= GS_B ? d[0] * d[0] : d[0]); }
static size_t gesummv_ws(const long long *d, int i) { return (size_t)(i == 0 ? d[0] * d[0] : d[0]); }

static void gesummv_init(struct mb_pbs_inst *in)
{
    long long n = D0;
    for (long long i = 0; i < n; i++) {
        for (long long j = 0; j < n; j++) {
            in->a[GS_A][i * n + j] = frac(i * j + 1, n, n);
            in->a[GS_B][i * n + j] = frac(i * j + 2, n, n);
        }
        in->a[GS_X][i] = frac(i, n, n);
    }
}

static void gesummv_naive(struct mb_pbs_inst *in)
{
    long n = D0;
    double **a = in->a, **t = in->ws;
    struct pbs_view M = pbs_v1(t[0], n * n, 1);
    pbs_ew(PBS_SCALE, M, pbs_v1(a[GS_A], n * n, 1), M, in->alpha);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)n, 1.0, t[0], (int)n, a[GS_X], 1, 0.0, t[1], 1);
    pbs_ew(PBS_SCALE, M, pbs_v1(a[GS_B], n * n, 1), M, in->beta);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)n, 1.0, t[0], (int)n, a[GS_X], 1, 0.0, t[2], 1);
    pbs_ew(PBS_ADD, pbs_v1(a[GS_Y], n, 1), pbs_v1(t[1], n, 1), pbs_v1(t[2], n, 1), 0);
}

static void gesummv_fused(struct mb_pbs_inst *in)
{
    long n = D0;
    const double *A = in->a[GS_A], *B = in->a[GS_B], *x = in->a[GS_X];
    double *y = in->a[GS_Y], alpha = in->alpha, beta = in->beta;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double sa = 0, sb = 0;
#pragma omp simd reduction(+ : sa, sb)
        for (long j = 0; j < n; j++)
            sa += A[i * n + j] * x[j], sb += B[i * n + j] * x[j];
        y[i] = alpha * sa + beta * sb;
    }
}

static void gesummv_ref(struct mb_pbs_inst *in, double **ref)
{
    long n = D0;
    for (long i = 0; i < n; i++) {
        double sa = 0, sb = 0;
        for (long j = 0; j < n; j++) {
            sa += in->a0[GS_A][i * n + j] * in->a0[GS_X][j];
            sb += in->a0[GS_B][i * n + j] * in->a0[GS_X][j];
        }
        ref[0][i] = in->alpha * sa + in->beta * sb;
    }
}

static double gesummv_flops(const long long *d) { return 4.0 * d[0] * d[0] + 3.0 * d[0]; }
static double gesummv_bytes(const long long *d) { return 8.0 * (2.0 * d[0] * d[0] + 2.0 * d[0]); }

const struct mb_pbs_kernel mb_pbs_kernel_gesummv = {
    .name = "gesummv", .nd = 1, .dim_names = {"N"}, .preset = {{2000}, {4000}, {14000}, {11200}},
    .narr = 4, .arr_names = {"A", "B", "x", "y"}, .arr_len = gesummv_len, .nout = 1, .out = {GS_Y},
    .nws = 3, .ws_len = gesummv_ws, .init = gesummv_init, .run = {gesummv_naive, gesummv_fused},
    .reference = gesummv_ref, .flops = gesummv_flops, .bytes = gesummv_bytes,
};

/* ---- doitgen: A[:] = reshape(reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP)) */
enum { DG_A, DG_C4 };

static size_t doitgen_len(const long long *d, int i) { return (size_t)(i == DG_A ? d[0] * d[1] * d[2] : d[2] * d[2]); }
static size_t doitgen_ws(const long long *d, int i) { (void)i; return (size_t)(d[0] * d[1] * d[2]); }

static void doitgen_init(struct mb_pbs_inst *in)
{
    long long nr = D0, nq = D1, np = D2;
    for (long long i = 0; i < nr; i++)
        for (long long j = 0; j < nq; j++)
            for (long long k = 0; k < np; k++)
                in->a[DG_A][(i * nq + j) * np + k] = frac(i * j + k, np, np);
    for (long long i = 0; i < np; i++)
        for (long long j = 0; j < np; j++)
            in->a[DG_C4][i * np + j] = frac(i * j, np, np);
}

/* NumPy's stacked matmul: one (1 x NP) @ (NP x NP) product per (r, q) into
 * a new array, then the copy into A */
static void doitgen_naive(struct mb_pbs_inst *in)
{
    long rq = D0 * D1, np = D2;
    for (long i = 0; i < rq; i++)
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)np, (int)np, 1.0, in->a[DG_C4], (int)np, in->a[DG_A] + i * np, 1,
                    0.0, in->ws[0] + i * np, 1);
    pbs_ew(PBS_COPY, pbs_v1(in->a[DG_A], rq * np, 1), pbs_v1(in->ws[0], rq * np, 1), pbs_v1(in->ws[0], 0, 1), 0);
}

/* all (r, q) rows at once: one (NR*NQ x NP) @ (NP x NP) dgemm */
static void doitgen_fused(struct mb_pbs_inst *in)
{
    long rq = D0 * D1, np = D2;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rq, (int)np, (int)np, 1.0, in->a[DG_A], (int)np,
                in->a[DG_C4], (int)np, 0.0, in->ws[0], (int)np);
    memcpy(in->a[DG_A], in->ws[0], (size_t)(rq * np) * sizeof(double));
}

static void doitgen_ref(struct mb_pbs_inst *in, double **ref)
{
    long rq = D0 * D1, np = D2;
    const double *A = in->a0[DG_A], *C4 = in->a0[DG_C4];
    for (long i = 0; i < rq; i++)
        for (long p = 0; p < np; p++) {
            double s = 0;
            for (long k = 0; k < np; k++)
                s += A[i * np + k] * C4[k * np + p];
            ref[0][i * np + p] = s;
        }
}

static double doitgen_flops(const long long *d) { return 2.0 * d[0] * d[1] * d[2] * d[2]; }
static double doitgen_bytes(const long long *d) { return 8.0 * (2.0 * d[0] * d[1] * d[2] + d[2] * d[2]); }

const struct mb_pbs_kernel mb_pbs_kernel_doitgen = {
    .name = "doitgen", .nd = 3, .dim_names = {"NR", "NQ", "NP"},
    .preset = {{60, 60, 128}, {110, 125, 256}, {220, 250, 512}, {220, 250, 270}},
    .narr = 2, .arr_names = {"A", "C4"}, .arr_len = doitgen_len, .nout = 1, .out = {DG_A},
    .nws = 1, .ws_len = doitgen_ws, .init = doitgen_init, .run = {doitgen_naive, doitgen_fused},
    .reference = doitgen_ref, .flops = doitgen_flops, .bytes = doitgen_bytes,
};
