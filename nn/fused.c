/* The decoder block's elementwise work fused into as few sweeps over
 * memory as the math allows, OpenMP-parallel (the unfused ops in ops.c
 * stay as the reference the tests compare against):
 *   residual + bias + layer norm forward in one sweep;
 *   layer norm backward + residual + the LN and bias gradients in one;
 *   bias + GELU forward in one, GELU backward + bias gradient in one.
 * Column sums (bias and LN gain gradients) are reduced per fixed chunk of
 * rows, and the chunks added in chunk order: the chunking depends only on
 * the shape, so the bits depend neither on the thread count nor on
 * timing. */
#include "nn.h"
#include "row_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parallel above this many elements, as ops.c's PAR_ELEMS: OpenBLAS's
 * pthreads keep spinning for a while after each GEMM on the same cores,
 * so a parallel sweep between two GEMMs oversubscribes them (measured
 * with mb-nn on 2 loaded cores at gpt-bench: block/sgemm 0.99 and 0.82
 * with the fused sweeps serial, 0.72 and 0.62 parallel above 256K
 * elements). NN_PAR_ELEMS overrides it, to measure the trade-off on a
 * quiet machine (reproduce/nn/README.md). */
static size_t par_elems(void)
{
    static size_t v;
    if (!v) {
        const char *e = getenv("NN_PAR_ELEMS");
        long long x = e ? atoll(e) : 0;
        v = x > 0 ? (size_t)x : (size_t)1 << 22;
    }
    return v;
}

/* At most this many chunks of at least CHUNK_MIN rows: the partial sums
 * are nchunk x cols floats per summed quantity. */
#define CHUNK_MAX 64
#define CHUNK_MIN 8

struct chunks {
    size_t n, rows_per;
};

static struct chunks chunking(size_t rows)
{
    struct chunks c;
    c.n = (rows + CHUNK_MIN - 1) / CHUNK_MIN;
    if (c.n > CHUNK_MAX)
        c.n = CHUNK_MAX;
    if (c.n == 0)
        c.n = 1;
    c.rows_per = (rows + c.n - 1) / c.n;
    return c;
}

/* out[j] += sum over chunks k (in order) of part[k][j], for nq quantities
 * laid out as part[k * nq * cols + q * cols + j]. Each column's sum starts
 * at 0 and adds the chunks in order (so the bits depend on the shape
 * only); the columns go ADD_COLS at a time, the chunk loop outside the
 * column loop, so it reads each chunk's row contiguously and vectorizes
 * (column by column it strided across the chunks: 0.6% of a one-thread
 * gpt-small block pass in perf, as much as a layer norm sweep). Parallel
 * over column blocks. */
#define ADD_COLS 256
static void add_partials(const float *part, size_t nchunk, size_t nq, size_t cols, float *const out[])
{
    size_t nblk = (cols + ADD_COLS - 1) / ADD_COLS;
#pragma omp parallel for schedule(static) if (nchunk * nq * cols >= par_elems())
    for (size_t bi = 0; bi < nblk; bi++) {
        size_t j0 = bi * ADD_COLS, w = cols - j0 < ADD_COLS ? cols - j0 : ADD_COLS;
        for (size_t q = 0; q < nq; q++) {
            if (!out[q])
                continue;
            float s[ADD_COLS];
            for (size_t j = 0; j < w; j++)
                s[j] = 0;
            for (size_t k = 0; k < nchunk; k++) {
                const float *pk = part + k * nq * cols + q * cols + j0;
#pragma omp simd
                for (size_t j = 0; j < w; j++)
                    s[j] += pk[j];
            }
            float *o = out[q] + j0;
#pragma omp simd
            for (size_t j = 0; j < w; j++)
                o[j] += s[j];
        }
    }
}

/* The first row of chunk k (rows for k = n). */
static size_t chunk_lo(struct chunks c, size_t k, size_t rows)
{
    size_t lo = k * c.rows_per;
    return lo < rows ? lo : rows;
}

static float *partials(struct chunks c, size_t nq, size_t cols)
{
    return calloc(c.n * nq * cols, sizeof(float));
}

/* y = LN(a + res + bias): the residual sum is written to sum (may alias
 * a) when res or bias is given. The additions are in the reference's
 * order, (res + a) + bias, and the statistics in double as in
 * nn_layernorm_fwd, so the result equals the unfused sequence bit for
 * bit when a holds the same values. */
void nn_residual_layernorm_fwd(const float *a, const float *res, const float *bias, float *sum,
                               const float *g, const float *b, float *y, float *xhat, float *rstd,
                               size_t rows, size_t cols, float eps)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++) {
        const float *ar = a + r * cols;
        const float *xr = ar;
        if (res || bias) {
            /* one loop per case: a load under a condition keeps a loop scalar */
            float *sr = sum + r * cols;
            const float *rr = res ? res + r * cols : NULL;
            if (rr && bias) {
#pragma omp simd
                for (size_t c = 0; c < cols; c++)
                    sr[c] = (rr[c] + ar[c]) + bias[c];
            } else if (rr) {
#pragma omp simd
                for (size_t c = 0; c < cols; c++)
                    sr[c] = rr[c] + ar[c];
            } else {
#pragma omp simd
                for (size_t c = 0; c < cols; c++)
                    sr[c] = ar[c] + bias[c];
            }
            xr = sr;
        }
        float mu, rs;
        nn_row_mean_rstd(xr, cols, eps, &mu, &rs);
        rstd[r] = rs;
        float *xh = xhat + r * cols, *yr = y + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++) {
            float v = (xr[c] - mu) * rs;
            xh[c] = v;
            yr[c] = v * g[c] + b[c];
        }
    }
}

/* dx = res + LN'(dy) (dx may be NULL: only the gradients), dg += sum
 * dy * xhat, db += sum dy, dbias += sum dx (the bias feeding the LN's
 * input, reduced in the same sweep; may be NULL). */
int nn_layernorm_bwd_residual(const float *dy, const float *xhat, const float *rstd, const float *g,
                              const float *res, float *dx, float *dg, float *db, float *dbias,
                              size_t rows, size_t cols)
{
    struct chunks ch = chunking(rows);
    float *part = partials(ch, 3, cols);
    if (!part)
        return -1;
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t k = 0; k < ch.n; k++) {
        float *pg = part + k * 3 * cols, *pb = pg + cols, *pd = pb + cols;
        size_t lo = chunk_lo(ch, k, rows), hi = chunk_lo(ch, k + 1, rows);
        for (size_t r = lo; r < hi; r++) {
            const float *dyr = dy + r * cols, *xr = xhat + r * cols;
#pragma omp simd
            for (size_t c = 0; c < cols; c++) {
                pg[c] += dyr[c] * xr[c];
                pb[c] += dyr[c];
            }
            if (!dx)
                continue;
            float a, bb, rs = rstd[r];
            nn_ln_bwd_row_means(dyr, xr, g, cols, &a, &bb);
            float *dxr = dx + r * cols;
            /* two loops, not rr ? rr[c] + v : v in one: a load under a
             * condition kept that loop scalar */
            if (res) {
                const float *rr = res + r * cols;
#pragma omp simd
                for (size_t c = 0; c < cols; c++) {
                    float v = rr[c] + rs * (dyr[c] * g[c] - a - xr[c] * bb);
                    dxr[c] = v;
                    pd[c] += v;
                }
            } else {
#pragma omp simd
                for (size_t c = 0; c < cols; c++) {
                    float v = rs * (dyr[c] * g[c] - a - xr[c] * bb);
                    dxr[c] = v;
                    pd[c] += v;
                }
            }
        }
    }
    float *const out[3] = {dg, db, dx ? dbias : NULL};
    add_partials(part, ch.n, 3, cols, out);
    free(part);
    return 0;
}

/* h += bias; gl = GELU(h), row by row in gelu_simd.c's kernels (the
 * widest vectors this CPU has). */
void nn_bias_gelu_fwd(float *h, const float *bias, float *gl, size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++)
        nn_gelu_fwd_row(h + r * cols, bias, gl + r * cols, cols);
}

/* dbias += column sums of d, chunked and parallel; first d *= GELU'(h)
 * in place when h is given (gelu_simd.c, in the same pass over the row).
 * Without h, d is only read. */
static int colsum_chunked(const float *h, float *d, float *dbias, size_t rows, size_t cols)
{
    struct chunks ch = chunking(rows);
    float *part = partials(ch, 1, cols);
    if (!part)
        return -1;
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t k = 0; k < ch.n; k++) {
        float *pd = part + k * cols;
        size_t lo = chunk_lo(ch, k, rows), hi = chunk_lo(ch, k + 1, rows);
        for (size_t r = lo; r < hi; r++) {
            float *dr = d + r * cols;
            if (h) {
                nn_gelu_bwd_row(h + r * cols, dr, pd, cols);
                continue;
            }
#pragma omp simd
            for (size_t c = 0; c < cols; c++)
                pd[c] += dr[c];
        }
    }
    float *const out[1] = {dbias};
    add_partials(part, ch.n, 1, cols, out);
    free(part);
    return 0;
}

/* d = d * GELU'(h) in place; dbias += column sums of the result. */
int nn_gelu_bias_bwd(const float *h, float *d, float *dbias, size_t rows, size_t cols)
{
    return colsum_chunked(h, d, dbias, rows, cols);
}

/* dbias += column sums of dy (not written: no h), chunked and parallel. */
int nn_bias_bwd_par(const float *dy, float *dbias, size_t rows, size_t cols)
{
    return colsum_chunked(NULL, (float *)dy, dbias, rows, cols);
}

/* y[r, :] += bias, parallel. */
void nn_add_bias_par(float *y, const float *bias, size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++) {
        float *yr = y + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++)
            yr[c] += bias[c];
    }
}

/* y = xhat * g + b (the LN output again, from the saved xhat), parallel. */
void nn_layernorm_apply(const float *xhat, const float *g, const float *b, float *y, size_t rows,
                        size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++) {
        const float *xr = xhat + r * cols;
        float *yr = y + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++)
            yr[c] = xr[c] * g[c] + b[c];
    }
}

/* out = a + res + bias, in the order (res + a) + bias, parallel (out may
 * alias a). */
void nn_residual_bias(const float *a, const float *res, const float *bias, float *out, size_t rows,
                      size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++) {
        const float *ar = a + r * cols, *rr = res + r * cols;
        float *orow = out + r * cols;
#pragma omp simd
        for (size_t c = 0; c < cols; c++)
            orow[c] = (rr[c] + ar[c]) + bias[c];
    }
}

/* out[r, :] = res[r, :] + bias, or bias alone without res: a GEMM's C
 * preloaded, the GEMM then adding its product with beta = 1. That takes
 * the place of the zeroing OpenBLAS does for beta = 0 (a pass writing C)
 * and of the separate pass adding the bias (and residual) afterwards,
 * which read and wrote C again. */
void nn_bias_preload(float *out, const float *res, const float *bias, size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= par_elems())
    for (size_t r = 0; r < rows; r++) {
        float *orow = out + r * cols;
        if (res) {
            const float *rr = res + r * cols;
#pragma omp simd
            for (size_t c = 0; c < cols; c++)
                orow[c] = rr[c] + bias[c];
        } else {
            memcpy(orow, bias, cols * sizeof(float));
        }
    }
}

size_t nn_fused_par_elems(void) { return par_elems(); }
