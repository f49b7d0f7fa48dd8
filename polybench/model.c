/* The communication term of mb-polybench's model, and the run's grid
 * (DaCe's table or --grid). */
#include "polybench.h"

#include <math.h>
#include <stdio.h>

double mb_pb_model_comm(const struct mb_pb_traffic *t, int px, int py, const struct mb_coll_profile *prof,
                        const char *algo, const struct mb_coll_shape shape[2])
{
    double comm = 0;
    for (int i = 0; i < t->ncoll; i++) {
        if ((t->coll[i].axis == MB_PB_ROW ? py : px) < 2)
            continue; /* a one-rank axis moves nothing */
        if (!prof)
            return NAN;
        struct mb_coll_args a = {.kind = t->coll[i].kind, .sendbuf = &a, .count = t->coll[i].count,
                                 .dtype = MB_COLL_DOUBLE, .op = MB_COLL_SUM, .root = 0};
        const struct mb_coll_algo *al = mb_pb_algo_for(algo, t->coll[i].kind);
        comm += al ? t->coll[i].calls * mb_coll_model(prof, al->name, &a, &shape[t->coll[i].axis]) : NAN;
    }
    if (t->halos > 0 && px * py > 1)
        comm += prof ? t->halos * (prof->p2p_alpha + t->halo_bytes * prof->p2p.mem) : NAN;
    return comm;
}

double mb_pb_model_time(const struct mb_pb_kernel *k, const struct mb_pb_sizes *s, int nranks, double flops_s,
                        double bytes_s, double read_s, double cells_s, double local_s, double comm,
                        double *compute, double *memory)
{
    if (k->cells) /* a stencil's loop: its cells at its own sweep's rate, not FLOPs at dgemm's */
        *compute = cells_s > 0 ? k->cells(s) / nranks / cells_s : NAN;
    else
        *compute = k->flops(s) / nranks / flops_s;
    if (k->written) { /* reads at the read stream's rate, writes at the copy rate */
        double w = k->written(s);
        *memory = read_s > 0 && bytes_s > 0 ? (k->bytes(s) - w) / nranks / read_s + w / nranks / bytes_s : NAN;
    } else {
        *memory = bytes_s > 0 ? k->bytes(s) / nranks / bytes_s : NAN;
    }
    if (k->local_time) { /* the timed local loop is compute and memory together: the model adds the communication */
        *compute = local_s > 0 ? local_s : NAN;
        return isnan(*compute) ? NAN : *compute + comm;
    }
    if (isnan(*compute) || isnan(*memory))
        return NAN;
    return (*compute > *memory ? *compute : *memory) + comm;
}

int mb_pb_grid_choose(int nranks, const char *grid, int *px, int *py, char *err, size_t len)
{
    if (grid) {
        if (mb_pb_grid_parse(grid, px, py) != 0) {
            snprintf(err, len, "--grid %s: expected PxQ with P, Q >= 1", grid);
            return -1;
        }
        if ((long long)*px * *py != nranks) {
            snprintf(err, len, "--grid %s: %lld ranks, but the run has %d", grid, (long long)*px * *py, nranks);
            return -1;
        }
        return 0;
    }
    if (mb_pb_grid_table(nranks, px, py) == 0)
        return 0;
    snprintf(err, len, "--grid: %d ranks are not in DaCe's grid table (1, 2, 4 ... 256); name the grid with --grid PxQ",
             nranks);
    return -1;
}
