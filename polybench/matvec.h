/* What the matrix-vector kernels share: A (M x N) in M/Px x N/Py blocks, a local
 * matrix-vector product in each direction, each summed over the grid row
 * or column with the registry's allreduce. Internal to polybench/. */
#ifndef MB_PB_MATVEC_H
#define MB_PB_MATVEC_H

#include "polybench.h"

struct mb_pb_mv {
    long long m, n, ml, nl;
    double *a;                 /* ml x nl */
    double *xin, *yin;         /* inputs: nl (column block), ml (row block) */
    double *rowpart, *rowsum;  /* ml: A xin, summed over the row */
    double *colpart, *colsum;  /* nl: A^T yin, summed over the column */
    /* the pblas variant (set by mb_pb_mv_init from the kernel's variant):
     * the sums come from ScaLAPACK's pdgemv on a BLACS grid (pblas.c) */
    int pblas, blacs, blacs_sys;
    /* set only while mb_pb_mv_local_time times the kernel's local compute:
     * rowsum/colsum (and mb_pb_pdgemv) then compute this rank's block's part
     * straight into rowsum/colsum and communicate nothing */
    int local;
};

int mb_pb_mv_divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len);
int mb_pb_mv_init(struct mb_pb_inst *in, struct mb_pb_mv *v);
/* rowsum = sum over the row of A_block xin */
int mb_pb_mv_rowsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *xin);
/* colsum = sum over the column of A_block^T yin */
int mb_pb_mv_colsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *yin);
void mb_pb_mv_traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t);
void mb_pb_mv_fini(struct mb_pb_inst *in, struct mb_pb_mv *v);
/* The kernel's local_time hook (polybench.h): in's run() with v->local
 * set, timed by mb_pb_window_cpu_rate (one call the unit of work, 20 ms
 * windows: each pass at least one call); seconds per call, the same on
 * every rank. in's arrays are overwritten: mb_pb_reset before a call. */
double mb_pb_mv_local_time(struct mb_pb_inst *in, struct mb_pb_mv *v, MPI_Comm comm);
/* an output vector over A's rows (ml doubles, block cx of the grid) or
 * over its columns (nl, block cy) */
struct mb_pb_block mb_pb_mv_rowvec(const char *name, double *data, const struct mb_pb_mv *v,
                                   const struct mb_pb_grid *g);
struct mb_pb_block mb_pb_mv_colvec(const char *name, double *data, const struct mb_pb_mv *v,
                                   const struct mb_pb_grid *g);
/* a (ml x nl, ld nl) = this rank's block of the global matrix at(m, n, i, j) */
void mb_pb_mv_fill(const struct mb_pb_grid *g, const struct mb_pb_mv *v, double *a,
                   double (*at)(long long m, long long n, long long i, long long j));

/* pblas.c: the BLACS grid, and y = alpha op(A) x + beta y with pdgemv on
 * A's ml x nl blocks (a: this rank's block, ld nl). trans 0: y over A's
 * rows (ml, block cx) from x over its columns (nl, block cy); trans 1:
 * y = alpha A^T x + beta y, y nl and x ml. y ends on every rank of the
 * grid row (trans 0) or column (trans 1). MPI_SUCCESS or an error.
 * v->local: only the local BLAS call pdgemv makes on the block (a dgemv_
 * interposer saw one per pdgemv at 1x1, 1x2, 2x2: dgemv_("T" for trans 0,
 * "N" for trans 1, nl, ml, alpha, a, nl, x, 1, beta, y, 1)), y the
 * block's part, nothing summed. */
int mb_pb_mv_pblas_init(struct mb_pb_mv *v, const struct mb_pb_grid *g);
void mb_pb_mv_pblas_fini(struct mb_pb_mv *v);
int mb_pb_pdgemv(const struct mb_pb_mv *v, int trans, double alpha, const double *a, const double *x, double beta,
                 double *y);

#endif
