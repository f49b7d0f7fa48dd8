/* The pblas variant of the matrix products: ScaLAPACK's pdgemm (what
 * dace.distr.MatMult expands to) on DaCe's blocks, which are a block
 * distribution with one block per process. Our blocks are row-major and
 * ScaLAPACK is column-major, so C = alpha A B + beta C is computed as
 * C^T = alpha B^T A^T + beta C^T on the transposed Py x Px BLACS grid
 * ("C" order puts rank cx * Py + cy at BLACS row cy, column cx): each
 * rank's row-major block is then its column-major block of the transpose
 * and nothing is copied. Without ScaLAPACK (MB_HAVE_SCALAPACK unset) the
 * variant reports itself unavailable and mb-polybench refuses it. */
#include "summa.h"

#include <stdio.h>

#ifdef MB_HAVE_SCALAPACK
/* BLACS and PBLAS have no C header in Debian's package */
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridexit(int ctx);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ctx, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);

int mb_pb_pblas_available(void) { return 1; }

int mb_pb_pblas_init(struct mb_pb_summa *su, const struct mb_pb_grid *g)
{
    su->blacs_sys = Csys2blacs_handle(g->cart);
    su->blacs = su->blacs_sys;
    Cblacs_gridinit(&su->blacs, "C", g->py, g->px);
    return su->blacs >= 0 ? 0 : -1;
}

/* desc of a rows x cols global matrix in rb x cb blocks, local leading dim lld */
static int desc(int *d, long long rows, long long cols, long long rb, long long cb, int ctx, long long lld)
{
    int m = (int)rows, n = (int)cols, mb = (int)rb, nb = (int)cb, zero = 0, ld = (int)(lld > 1 ? lld : 1), info;
    descinit_(d, &m, &n, &mb, &nb, &zero, &zero, &ctx, &ld, &info);
    return info;
}

int mb_pb_pdgemm(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                 double alpha, const double *a, const double *b, double beta, double *c)
{
    long long ml = m / g->px, nl = n / g->py, kx = k / g->px, ky = k / g->py;
    int da[9], db[9], dc[9], one = 1, im = (int)m, in = (int)n, ik = (int)k;
    /* B^T: n x k in nl x kx blocks; A^T: k x m in ky x ml; C^T: n x m in nl x ml */
    if (desc(db, n, k, nl, kx, su->blacs, nl) || desc(da, k, m, ky, ml, su->blacs, ky) ||
        desc(dc, n, m, nl, ml, su->blacs, nl))
        return MPI_ERR_ARG;
    pdgemm_("N", "N", &in, &im, &ik, &alpha, b, &one, &one, db, a, &one, &one, da, &beta, c, &one, &one, dc);
    return MPI_SUCCESS;
}

void mb_pb_pblas_fini(struct mb_pb_summa *su)
{
    if (su->blacs >= 0)
        Cblacs_gridexit(su->blacs);
    Cfree_blacs_system_handle(su->blacs_sys);
    su->blacs = -1;
}

#else

int mb_pb_pblas_available(void) { return 0; }

int mb_pb_pblas_init(struct mb_pb_summa *su, const struct mb_pb_grid *g)
{
    (void)su, (void)g;
    return -1;
}

int mb_pb_pdgemm(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                 double alpha, const double *a, const double *b, double beta, double *c)
{
    (void)su, (void)g, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)beta, (void)c;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

void mb_pb_pblas_fini(struct mb_pb_summa *su) { (void)su; }

#endif
