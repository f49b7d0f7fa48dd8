/* SUMMA over the grid's row and column communicators. */
#include "summa.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

static long long gcd(long long a, long long b) { return b ? gcd(b, a % b) : a; }

long long mb_pb_lcm(long long a, long long b) { return a / gcd(a, b) * b; }

int mb_pb_summa_init(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long max_m, long long max_n,
                     long long max_k)
{
    if (su->pblas)
        return mb_pb_pblas_init(su, g);
    long long w = max_k / mb_pb_lcm(g->px, g->py);
    su->acap = (size_t)(max_m / g->px * w);
    su->bcap = (size_t)(w * (max_n / g->py));
    int bufs = g->summa_overlap ? 2 : 1; /* overlap: panel t + 1 arrives while panel t multiplies */
    su->apanel = mb_pb_buf(g, MB_PB_ROW, su->acap * (size_t)bufs);
    su->bpanel = mb_pb_buf(g, MB_PB_COL, su->bcap * (size_t)bufs);
    return su->apanel && su->bpanel ? 0 : -1;
}

/* Panel t of A (k0 = t w) into ap where this rank's grid column holds it,
 * of B into bp where its grid row does; the roots of their broadcasts. */
static void pack(const struct mb_pb_grid *g, long long ml, long long nl, long long kx, long long ky, long long w,
                 long long t, const double *a, const double *b, double *ap, double *bp, int *acol, int *brow)
{
    long long k0 = t * w;
    *acol = (int)(k0 / ky), *brow = (int)(k0 / kx);
    if (g->cy == *acol)
        for (long long i = 0; i < ml; i++)
            memcpy(ap + i * w, a + i * ky + (k0 - *acol * ky), (size_t)w * sizeof(double));
    if (g->cx == *brow)
        memcpy(bp, b + (k0 - *brow * kx) * nl, (size_t)(w * nl) * sizeof(double));
}

/* The blocking form: each panel broadcast through the registry, then multiplied. */
static int summa_blocking(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                          double alpha, const double *a, const double *b, double beta, double *c)
{
    long long ml = m / g->px, nl = n / g->py, kx = k / g->px, ky = k / g->py;
    long long panels = mb_pb_lcm(g->px, g->py), w = k / panels;
    for (long long t = 0; t < panels; t++) {
        int acol, brow;
        pack(g, ml, nl, kx, ky, w, t, a, b, su->apanel, su->bpanel, &acol, &brow);
        int rc = mb_pb_bcast(g, MB_PB_ROW, su->apanel, (size_t)(ml * w), acol);
        if (rc == MPI_SUCCESS)
            rc = mb_pb_bcast(g, MB_PB_COL, su->bpanel, (size_t)(w * nl), brow);
        if (rc != MPI_SUCCESS)
            return rc;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ml, (int)nl, (int)w, alpha, su->apanel, (int)w,
                    su->bpanel, (int)nl, t == 0 ? beta : 1.0, c, (int)nl);
    }
    return MPI_SUCCESS;
}

/* Starts panel t's two broadcasts through the registry's nonblocking
 * broadcast (--algo's; a one-rank axis has nothing to move: NULL). */
static int start_panel(const struct mb_pb_grid *g, long long ml, long long nl, long long w, double *ap, double *bp,
                       int acol, int brow, struct mb_coll_req *rq[2])
{
    rq[0] = rq[1] = NULL;
    int rc = mb_pb_ibcast_start(g, MB_PB_ROW, ap, (size_t)(ml * w), acol, &rq[0]);
    return rc == MPI_SUCCESS ? mb_pb_ibcast_start(g, MB_PB_COL, bp, (size_t)(w * nl), brow, &rq[1]) : rc;
}

static int wait_panel(struct mb_coll_req *rq[2])
{
    int rc = mb_pb_ibcast_wait(&rq[0]), rc1 = mb_pb_ibcast_wait(&rq[1]);
    return rc != MPI_SUCCESS ? rc : rc1;
}

/* Rows of C per dgemm slice while a broadcast is in flight: this Open MPI
 * has no asynchronous progress, so the next panel moves only inside MPI
 * calls; a progress call between slices lets it move during the product. */
#define SLICES 4

/* The overlapped form: panel t + 1's broadcasts fly (the registry's
 * nonblocking broadcast, --algo's) while panel t is multiplied, in slices
 * of C's rows with a progress call on each between them. */
static int summa_overlap(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                         double alpha, const double *a, const double *b, double beta, double *c)
{
    long long ml = m / g->px, nl = n / g->py, kx = k / g->px, ky = k / g->py;
    long long panels = mb_pb_lcm(g->px, g->py), w = k / panels;
    double *ap[2] = {su->apanel, su->apanel + su->acap}, *bp[2] = {su->bpanel, su->bpanel + su->bcap};
    struct mb_coll_req *rq[2] = {NULL, NULL};
    int acol, brow;
    pack(g, ml, nl, kx, ky, w, 0, a, b, ap[0], bp[0], &acol, &brow);
    int rc = start_panel(g, ml, nl, w, ap[0], bp[0], acol, brow, rq);
    for (long long t = 0; t < panels && rc == MPI_SUCCESS; t++) {
        int cur = (int)(t & 1), nxt = cur ^ 1;
        if ((rc = wait_panel(rq)) != MPI_SUCCESS)
            break;
        if (t + 1 < panels) {
            pack(g, ml, nl, kx, ky, w, t + 1, a, b, ap[nxt], bp[nxt], &acol, &brow);
            if ((rc = start_panel(g, ml, nl, w, ap[nxt], bp[nxt], acol, brow, rq)) != MPI_SUCCESS)
                break;
        }
        long long rows = (ml + SLICES - 1) / SLICES;
        for (long long i0 = 0; i0 < ml; i0 += rows) {
            long long r = ml - i0 < rows ? ml - i0 : rows;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)r, (int)nl, (int)w, alpha, ap[cur] + i0 * w,
                        (int)w, bp[cur], (int)nl, t == 0 ? beta : 1.0, c + i0 * nl, (int)nl);
            if (t + 1 < panels) {
                rc = mb_pb_ibcast_test(rq[0]);
                if (rc == MPI_SUCCESS)
                    rc = mb_pb_ibcast_test(rq[1]);
                if (rc != MPI_SUCCESS) {
                    wait_panel(rq); /* never left writing into the panels */
                    return rc;
                }
            }
        }
    }
    return rc;
}

int mb_pb_summa(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                double alpha, const double *a, const double *b, double beta, double *c)
{
    if (su->pblas)
        return mb_pb_pdgemm(su, g, m, n, k, alpha, a, b, beta, c);
    return g->summa_overlap ? summa_overlap(su, g, m, n, k, alpha, a, b, beta, c)
                            : summa_blocking(su, g, m, n, k, alpha, a, b, beta, c);
}

static int add(struct mb_pb_gemm *out, int n, long long m, long long nn, long long k, long long calls,
               long long sets)
{
    if (n >= MB_PB_MAXGEMM || m <= 0 || nn <= 0 || k <= 0 || calls <= 0)
        return n;
    out[n] = (struct mb_pb_gemm){m, nn, k, calls, sets, sets}; /* a C for each A: SUMMA's row slices, pdgemm's block */
    return n + 1;
}

int mb_pb_summa_gemms(long long m, long long n, long long k, int px, int py, int overlap, struct mb_pb_gemm *out,
                      int nout)
{
    long long ml = m / px, nl = n / py, panels = mb_pb_lcm(px, py), w = k / panels;
    if (!overlap)
        return add(out, nout, ml, nl, w, panels, 1);
    long long rows = (ml + SLICES - 1) / SLICES, full = ml / rows; /* summa_overlap's slices */
    nout = add(out, nout, rows, nl, w, panels * full, full);
    return add(out, nout, ml % rows, nl, w, panels, 1);
}

int mb_pb_pdgemm_gemms(long long m, long long n, long long k, int px, int py, struct mb_pb_gemm *out, int nout)
{
    long long ml = m / px, nl = n / py;
    if (px * py == 1)
        return add(out, nout, ml, nl, k, 1, 1);
    nout = add(out, nout, ml, nl, 32, k / 32, 1);
    return add(out, nout, ml, nl, k % 32, 1, 1);
}

int mb_pb_products_gemms(const long long (*mnk)[3], int nprod, const struct mb_pb_grid *g, int pblas,
                         struct mb_pb_gemm *out)
{
    int n = 0;
    for (int i = 0; i < nprod; i++)
        n = pblas ? mb_pb_pdgemm_gemms(mnk[i][0], mnk[i][1], mnk[i][2], g->px, g->py, out, n)
                  : mb_pb_summa_gemms(mnk[i][0], mnk[i][1], mnk[i][2], g->px, g->py, g->summa_overlap, out, n);
    return n;
}

int mb_pb_summa_divides(long long m, long long n, long long k, int px, int py)
{
    return m % px == 0 && n % py == 0 && k % mb_pb_lcm(px, py) == 0;
}

void mb_pb_summa_traffic(long long m, long long n, long long k, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    long long panels = mb_pb_lcm(g->px, g->py), w = k / panels;
    int i = t->ncoll;
    t->coll[i].kind = t->coll[i + 1].kind = MB_COLL_BCAST;
    t->coll[i].axis = MB_PB_ROW, t->coll[i].count = (size_t)(m / g->px * w), t->coll[i].calls = (double)panels;
    t->coll[i + 1].axis = MB_PB_COL, t->coll[i + 1].count = (size_t)(w * (n / g->py)), t->coll[i + 1].calls = (double)panels;
    t->ncoll += 2;
}

void mb_pb_summa_fini(struct mb_pb_summa *su, const struct mb_pb_grid *g)
{
    if (su->pblas) {
        mb_pb_pblas_fini(su);
        return;
    }
    mb_pb_buf_free(g, MB_PB_ROW, su->apanel);
    mb_pb_buf_free(g, MB_PB_COL, su->bpanel);
    su->apanel = su->bpanel = NULL;
}

double *mb_pb_block_alloc(const struct mb_pb_grid *g, long long rows, long long cols)
{
    return malloc((size_t)(rows / g->px) * (size_t)(cols / g->py) * sizeof(double));
}

void mb_pb_block_fill(const struct mb_pb_grid *g, double *dst, long long rows, long long cols,
                      double (*f)(const void *ctx, long long i, long long j), const void *ctx)
{
    long long rl = rows / g->px, cl = cols / g->py, row0 = g->cx * rl, col0 = g->cy * cl;
    for (long long i = 0; i < rl; i++)
        for (long long j = 0; j < cl; j++)
            dst[i * cl + j] = f(ctx, row0 + i, col0 + j);
}

struct mb_pb_block mb_pb_block_out(const char *name, double *data, const struct mb_pb_grid *g, long long rows,
                                   long long cols)
{
    long long rl = rows / g->px, cl = cols / g->py;
    return (struct mb_pb_block){.name = name, .data = data, .rows = rl, .cols = cl, .ld = cl,
                                .row0 = g->cx * rl, .col0 = g->cy * cl};
}
