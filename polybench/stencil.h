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

#endif
