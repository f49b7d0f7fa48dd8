/* SUMMA over the grid's row and column communicators. */
#include "summa.h"

#include <cblas.h>
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
    su->apanel = mb_pb_buf(g, MB_PB_ROW, su->acap);
    su->bpanel = mb_pb_buf(g, MB_PB_COL, su->bcap);
    return su->apanel && su->bpanel ? 0 : -1;
}

int mb_pb_summa(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                double alpha, const double *a, const double *b, double beta, double *c)
{
    if (su->pblas)
        return mb_pb_pdgemm(su, g, m, n, k, alpha, a, b, beta, c);
    long long ml = m / g->px, nl = n / g->py, kx = k / g->px, ky = k / g->py;
    long long panels = mb_pb_lcm(g->px, g->py), w = k / panels;
    for (long long t = 0; t < panels; t++) {
        long long k0 = t * w;
        int acol = (int)(k0 / ky), brow = (int)(k0 / kx);
        if (g->cy == acol)
            for (long long i = 0; i < ml; i++)
                memcpy(su->apanel + i * w, a + i * ky + (k0 - acol * ky), (size_t)w * sizeof(double));
        if (g->cx == brow)
            memcpy(su->bpanel, b + (k0 - brow * kx) * nl, (size_t)(w * nl) * sizeof(double));
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

void mb_pb_fill_block(double *dst, long long rows, long long cols, long long ld, long long row0, long long col0,
                      double (*f)(const void *ctx, long long i, long long j), const void *ctx)
{
    for (long long i = 0; i < rows; i++)
        for (long long j = 0; j < cols; j++)
            dst[i * ld + j] = f(ctx, row0 + i, col0 + j);
}
