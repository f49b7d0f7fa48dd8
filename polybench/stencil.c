/* The stencils' time loop. */
#include "stencil.h"

int mb_pb_stencil_run(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st)
{
    for (long long t = 1; t < in->s.tsteps; t++) {
        int rc = in->skip_halo ? MPI_SUCCESS : st->halo(in, state, st->a);
        if (rc != MPI_SUCCESS)
            return rc;
        st->sweep(state, st->a, st->b);
        if ((rc = in->skip_halo ? MPI_SUCCESS : st->halo(in, state, st->b)) != MPI_SUCCESS)
            return rc;
        st->sweep(state, st->b, st->a);
    }
    return MPI_SUCCESS;
}
