/* The pblas variants: ScaLAPACK's pdgemm for the matrix products and
 * pdgemv for the matrix-vector kernels. The products: pdgemm (what
 * dace.distr.MatMult expands to) on DaCe's blocks, which are a block
 * distribution with one block per process. Our blocks are row-major and
 * ScaLAPACK is column-major, so C = alpha A B + beta C is computed as
 * C^T = alpha B^T A^T + beta C^T on the transposed Py x Px BLACS grid
 * ("C" order puts rank cx * Py + cy at BLACS row cy, column cx): each
 * rank's row-major block is then its column-major block of the transpose
 * and nothing is copied. Without ScaLAPACK (MB_HAVE_SCALAPACK unset) the
 * variant reports itself unavailable and mb-polybench refuses it. */
#include "matvec.h"
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
void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *x, const int *ix, const int *jx, const int *descx,
             const int *incx, const double *beta, double *y, const int *iy, const int *jy, const int *descy,
             const int *incy);

/* the BLAS call ScaLAPACK's pdgemv makes on the local block */
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a, const int *lda,
            const double *x, const int *incx, const double *beta, double *y, const int *incy);

int mb_pb_pblas_available(void) { return 1; }

/* the transposed Py x Px BLACS grid on the grid's communicator */
static int blacs_open(const struct mb_pb_grid *g, int *blacs, int *sys)
{
    *sys = Csys2blacs_handle(g->cart);
    *blacs = *sys;
    Cblacs_gridinit(blacs, "C", g->py, g->px);
    return *blacs >= 0 ? 0 : -1;
}

static void blacs_close(int *blacs, int sys)
{
    if (*blacs >= 0)
        Cblacs_gridexit(*blacs);
    Cfree_blacs_system_handle(sys);
    *blacs = -1;
}

int mb_pb_pblas_init(struct mb_pb_summa *su, const struct mb_pb_grid *g)
{
    return blacs_open(g, &su->blacs, &su->blacs_sys);
}

int mb_pb_mv_pblas_init(struct mb_pb_mv *v, const struct mb_pb_grid *g)
{
    return blacs_open(g, &v->blacs, &v->blacs_sys);
}

void mb_pb_mv_pblas_fini(struct mb_pb_mv *v)
{
    if (v->pblas)
        blacs_close(&v->blacs, v->blacs_sys);
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

void mb_pb_pblas_fini(struct mb_pb_summa *su) { blacs_close(&su->blacs, su->blacs_sys); }

/* The matrix-vector products on the same transposed view: the rank's
 * row-major ml x nl block of A is the column-major nl x ml block of
 * S = A^T (N x M) at BLACS (cy, cx). A vector over A's columns (length N,
 * block cy) is an N x 1 column of S's row blocks, one over A's rows
 * (length M, block cx) a 1 x M row of its column blocks; both are
 * replicated (source process -1: every rank holds its block), so pdgemv
 * reads the copy each rank has and leaves the sum on every rank of the
 * grid row or column, as the allreduce variant does. */
int mb_pb_pdgemv(const struct mb_pb_mv *v, int trans, double alpha, const double *a, const double *x, double beta,
                 double *y)
{
    if (v->local) { /* the local call pdgemv makes on the block (matvec.h), nothing summed */
        int nl = (int)v->nl, ml = (int)v->ml, inc = 1;
        dgemv_(trans ? "N" : "T", &nl, &ml, &alpha, a, &nl, x, &inc, &beta, y, &inc);
        return MPI_SUCCESS;
    }
    int ds[9], dcol[9], drow[9], one = 1, m = (int)v->m, n = (int)v->n;
    if (desc(ds, v->n, v->m, v->nl, v->ml, v->blacs, v->nl) || desc(dcol, v->n, 1, v->nl, 1, v->blacs, v->nl) ||
        desc(drow, 1, v->m, 1, v->ml, v->blacs, 1))
        return MPI_ERR_ARG;
    dcol[7] = -1; /* CSRC_: replicated over the process columns */
    drow[6] = -1; /* RSRC_: replicated over the process rows */
    if (!trans) /* y (M, over A's rows) = alpha A x + beta y = alpha S^T x + beta y, x over A's columns */
        pdgemv_("T", &n, &m, &alpha, a, &one, &one, ds, x, &one, &one, dcol, &one, &beta, y, &one, &one, drow, &one);
    else /* y (N) = alpha A^T x + beta y = alpha S x + beta y, x over A's rows */
        pdgemv_("N", &n, &m, &alpha, a, &one, &one, ds, x, &one, &one, drow, &one, &beta, y, &one, &one, dcol, &one);
    return MPI_SUCCESS;
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

int mb_pb_mv_pblas_init(struct mb_pb_mv *v, const struct mb_pb_grid *g)
{
    (void)v, (void)g;
    return -1;
}

void mb_pb_mv_pblas_fini(struct mb_pb_mv *v) { (void)v; }

int mb_pb_pdgemv(const struct mb_pb_mv *v, int trans, double alpha, const double *a, const double *x, double beta,
                 double *y)
{
    (void)v, (void)trans, (void)alpha, (void)a, (void)x, (void)beta, (void)y;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

#endif
