/* The stencils' time loop. */
#include "stencil.h"

/* one exchange, its time counted as communication (mb_pb_comm_seconds) */
static int exchange(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st, double *x)
{
    if (in->skip_halo)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    int rc = st->halo(in, state, x);
    mb_pb_comm_add(MPI_Wtime() - t0);
    return rc;
}

int mb_pb_stencil_run(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st)
{
    for (long long t = 1; t < in->s.tsteps; t++) {
        int rc = exchange(in, state, st, st->a);
        if (rc != MPI_SUCCESS)
            return rc;
        st->sweep(state, st->a, st->b);
        if ((rc = exchange(in, state, st, st->b)) != MPI_SUCCESS)
            return rc;
        st->sweep(state, st->b, st->a);
    }
    return MPI_SUCCESS;
}
