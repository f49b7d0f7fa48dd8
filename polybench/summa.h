/* SUMMA on the grid, shared by gemm, k2mm and k3mm. Internal to
 * polybench/. A product C (m x n) = alpha A (m x k) B (k x n) + beta C
 * with DaCe's blocks: A m/Px x k/Py, B k/Px x n/Py, C m/Px x n/Py (so a
 * product's C is laid out as the next product's A). k is cut into
 * lcm(Px, Py) panels: A's panel is broadcast along the grid row from the
 * column holding it, B's along the grid column from the row holding it,
 * then dgemm: blocking, through the registry; or, with g->summa_overlap,
 * panel t + 1's broadcasts as the registry's nonblocking broadcast
 * (mb_pb_ibcast_start, --algo's) in flight during panel t's dgemm
 * (double panels; the dgemm in row slices with a progress call between,
 * as this Open MPI progresses only inside MPI calls). */
#ifndef MB_PB_SUMMA_H
#define MB_PB_SUMMA_H

#include "polybench.h"

struct mb_pb_summa {
    double *apanel, *bpanel;
    size_t acap, bcap; /* doubles */
    /* the pblas variant: set pblas before mb_pb_summa_init, which then
     * makes a BLACS grid instead of panels and mb_pb_summa calls pdgemm */
    int pblas, blacs, blacs_sys;
};

long long mb_pb_lcm(long long a, long long b);
/* Panels for products up to these sizes (every rank: registered buffers
 * are collective). 0 or -1. */
int mb_pb_summa_init(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long max_m, long long max_n,
                     long long max_k);
int mb_pb_summa(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                double alpha, const double *a, const double *b, double beta, double *c);
/* Whether the grid divides m (by Px), n (by Py) and k (by lcm(Px, Py)). */
int mb_pb_summa_divides(long long m, long long n, long long k, int px, int py);
/* The product's registry calls into t (two entries) for the model. */
void mb_pb_summa_traffic(long long m, long long n, long long k, const struct mb_pb_grid *g,
                         struct mb_pb_traffic *t);
/* The local dgemm shapes of one product on a px x py grid, appended to
 * out[n..MB_PB_MAXGEMM): SUMMA's (overlap: each of the lcm(px, py) panels
 * as row slices of ceil(ml / 4) rows, the last one shorter when 4 does not
 * divide ml; blocking: one ml x nl x w product a panel) or pdgemm's
 * (ScaLAPACK 2.2's PBLAS, seen through a dgemm_ interposer at 1x1, 1x2
 * and 2x2: one product of the whole blocks on one process, else
 * rank-32 updates of the local C block over k, the last k mod 32). The
 * new count (n when out is full). */
int mb_pb_summa_gemms(long long m, long long n, long long k, int px, int py, int overlap, struct mb_pb_gemm *out,
                      int nout);
int mb_pb_pdgemm_gemms(long long m, long long n, long long k, int px, int py, struct mb_pb_gemm *out, int nout);
/* A product kernel's shapes: its nprod products mnk[i] = {m, n, k} in
 * order, SUMMA's on g (as g->summa_overlap says) or pdgemm's (pblas), into
 * out; how many. */
int mb_pb_products_gemms(const long long (*mnk)[3], int nprod, const struct mb_pb_grid *g, int pblas,
                         struct mb_pb_gemm *out);

/* dst[rows x cols, ld] = f(ctx, row0 + i, col0 + j): a rank's block of a
 * global array given by its init formula */
/* This rank's block of a global rows x cols matrix on g: rows/Px x cols/Py
 * (ld cols/Py) at row cx rows/Px, column cy cols/Py. _alloc: malloc'd
 * (NULL when out of memory); _fill: dst[i, j] = f(ctx, global i, global j);
 * _out: the block as an output. */
double *mb_pb_block_alloc(const struct mb_pb_grid *g, long long rows, long long cols);
void mb_pb_block_fill(const struct mb_pb_grid *g, double *dst, long long rows, long long cols,
                      double (*f)(const void *ctx, long long i, long long j), const void *ctx);
struct mb_pb_block mb_pb_block_out(const char *name, double *data, const struct mb_pb_grid *g, long long rows,
                                   long long cols);
void mb_pb_summa_fini(struct mb_pb_summa *su, const struct mb_pb_grid *g);

/* pblas.c: ScaLAPACK's pdgemm on the same blocks (MPI_SUCCESS or an error) */
int mb_pb_pblas_init(struct mb_pb_summa *su, const struct mb_pb_grid *g);
int mb_pb_pdgemm(struct mb_pb_summa *su, const struct mb_pb_grid *g, long long m, long long n, long long k,
                 double alpha, const double *a, const double *b, double beta, double *c);
void mb_pb_pblas_fini(struct mb_pb_summa *su);

#endif
