/* What jacobi_1d and jacobi_2d share: DaCe's time loop (TSTEPS - 1 steps;
 * each exchanges A's halo, sweeps A into B, exchanges B's, sweeps B into
 * A). Internal to polybench/. */
#ifndef MB_PB_STENCIL_H
#define MB_PB_STENCIL_H

#include "polybench.h"

struct mb_pb_stencil {
    double *a, *b;
    /* exchange x's ghosts (nothing when in->skip_halo): MPI_SUCCESS or an error */
    int (*halo)(const struct mb_pb_inst *in, const void *state, double *x);
    void (*sweep)(const void *state, const double *x, double *y);
};

int mb_pb_stencil_run(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st);

/* jacobi_2d's and heat_3d's arrays: N x N (x depth) split N/Px x N/Py over
 * the grid (i, j; the depth whole), each block with a ghost frame: (rl + 2)
 * rows of (cl + 2) * depth doubles; ilo..ihi, jlo..jhi the local rows and
 * columns to update (the global boundary never is); four neighbours from
 * MPI_Cart_shift (MPI_PROC_NULL at the edges). */
struct mb_pb_halo2d {
    long long n, depth, rl, cl, ld, i0, j0, ilo, ihi, jlo, jhi;
    int north, south, west, east;
    MPI_Datatype jface; /* one ghost column (x depth) of the block */
    double *a, *b;
};
/* 0 if the grid divides N both ways, else -1 and why (naming kernel) */
int mb_pb_halo2d_divides(const char *kernel, const struct mb_pb_sizes *s, int px, int py, char *why, size_t len);
/* allocates in->priv = a struct mb_pb_halo2d and sets out[0] (A) and
 * out[1] (B) as 2-D blocks of rl x cl * depth; 0 or -1 with in->err */
int mb_pb_halo2d_init(struct mb_pb_inst *in, long long depth);
/* zeroes both arrays (ghosts included) */
void mb_pb_halo2d_clear(struct mb_pb_halo2d *h);
/* exchanges x's ghost frame: 8 requests (i faces contiguous, j faces as jface) */
int mb_pb_halo2d_exchange(const struct mb_pb_inst *in, const void *state, double *x);
void mb_pb_halo2d_fini(struct mb_pb_inst *in);

#endif
