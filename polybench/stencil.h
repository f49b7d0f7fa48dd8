/* What jacobi_1d, jacobi_2d and heat_3d share: DaCe's time loop (TSTEPS -
 * 1 steps; each exchanges A's halo, sweeps A into B, exchanges B's, sweeps
 * B into A), with each exchange in flight while the cells that read no
 * ghost are swept: start the exchange, sweep the interior, wait, sweep the
 * edge cells. Every cell is computed by the same expression from the same
 * inputs as a sweep after the exchange: the same result bit for bit.
 * Internal to polybench/. */
#ifndef MB_PB_STENCIL_H
#define MB_PB_STENCIL_H

#include "polybench.h"

/* Cells i0..i1 x j0..j1 of a block (inclusive; empty when i0 > i1 or j0 > j1). */
struct mb_pb_rect {
    long long i0, i1, j0, j1;
};

struct mb_pb_stencil {
    double *a, *b;
    /* start exchanging x's ghosts: its requests (at most 8) into rq, how
     * many into *n; MPI_SUCCESS or an error */
    int (*halo)(const struct mb_pb_inst *in, const void *state, double *x, MPI_Request *rq, int *n);
    /* y = one step of x on the cells of r */
    void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r);
    /* the cells each sweep updates, and the block's rows and columns
     * (ghosts at 0 and rl + 1, 0 and cl + 1; rl 0: no ghost rows, 1-D) */
    struct mb_pb_rect upd;
    long long rl, cl;
};

int mb_pb_stencil_run(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st);

/* The model's loop term: cells per second of sweep over r (cells cells a
 * sweep) back and forth between x and y, every rank of comm sweeping from
 * one barrier: a warm-up, then 11 passes of 20 ms, each timed on the
 * rank's CPU clock (mb_pb_window_cpu_rate: time another process had the
 * core is not counted); the median over the passes of each pass's slowest
 * rank (NaN if none counts). The kernels call it on their own block (the
 * kernel's cell_rate, from mb-polybench's set-up of the case, right
 * before its samples). Calibration only, never the timed samples.
 * Collective. */
double mb_pb_stencil_cell_rate(MPI_Comm comm, const void *state,
                               void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r),
                               double *x, double *y, const struct mb_pb_rect *r, double cells);
/* the same on in's own halo2d block (in->priv, a struct mb_pb_halo2d):
 * its arrays a and b, its update region ilo..ihi x jlo..jhi (what
 * mb_pb_halo2d_run sweeps), per_column cells counted per (i, j) (jacobi_2d
 * 1; heat_3d depth - 2, its sweep skipping the first and last of depth).
 * Overwrites a and b. Collective. */
double mb_pb_halo2d_cell_rate(struct mb_pb_inst *in, MPI_Comm comm, double per_column,
                              void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r));

/* Splits upd into part[0], the cells whose stencil reads no ghost (rows
 * 2..rl-1, columns 2..cl-1; every row when rl is 0), and part[1..4], the
 * rest: every cell of upd in exactly one part, each part possibly empty. */
void mb_pb_stencil_split(const struct mb_pb_rect *upd, long long rl, long long cl, struct mb_pb_rect part[5]);

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
/* starts exchanging x's ghost frame: 8 requests (i faces contiguous, j faces as jface) */
int mb_pb_halo2d_exchange(const struct mb_pb_inst *in, const void *state, double *x, MPI_Request *rq, int *n);
/* the time loop on in's halo2d block (jacobi_2d, heat_3d) with its sweep
 * (r's columns in units of depth, state the struct mb_pb_halo2d) */
int mb_pb_halo2d_run(struct mb_pb_inst *in,
                     void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r));
void mb_pb_halo2d_fini(struct mb_pb_inst *in);
/* the model's traffic of N x N (x depth) halo2d blocks (s->d[0] = N): two
 * exchanges a step, the largest face 8 * max(N/Px, N/Py) * depth bytes */
void mb_pb_halo2d_traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, double depth,
                          struct mb_pb_traffic *t);

#endif
