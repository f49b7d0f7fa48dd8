/* atax, y = A^T (A x) (polybench): A x summed over each grid row, then
 * A^T of that summed over each grid column; y's block cy is on every
 * rank of grid column cy. */
#include "matvec.h"

#include <stdio.h>
#include <stdlib.h>

struct atax {
    struct mb_pb_mv v;
};

static double a_at(long long m, long long n, long long i, long long j) { return (double)((i + j) % n) / (5.0 * (double)m); }
static double x_at(long long n, long long j) { return 1.0 + (double)j / (double)n; }

static int init(struct mb_pb_inst *in)
{
    struct atax *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s || mb_pb_mv_init(in, &s->v) != 0) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->nout = 1;
    in->out[0] = mb_pb_mv_colvec("y", s->v.colsum, &s->v, in->g);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct mb_pb_mv *v = &((struct atax *)in->priv)->v;
    long long j0 = in->g->cy * v->nl;
    mb_pb_mv_fill(in->g, v, v->a, a_at);
    for (long long j = 0; j < v->nl; j++)
        v->xin[j] = x_at(v->n, j0 + j);
}

static int run(struct mb_pb_inst *in)
{
    struct mb_pb_mv *v = &((struct atax *)in->priv)->v;
    int rc = mb_pb_mv_rowsum(in, v, v->xin);
    return rc == MPI_SUCCESS ? mb_pb_mv_colsum(in, v, v->rowsum) : rc;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_mv *v = &((const struct atax *)in->priv)->v;
    const struct mb_pb_block *b = &in->out[o];
    for (long long j = 0; j < b->cols; j++)
        ref[j] = 0;
    for (long long i = 0; i < v->m; i++) {
        double t = 0;
        for (long long j = 0; j < v->n; j++)
            t += a_at(v->m, v->n, i, j) * x_at(v->n, j);
        for (long long j = 0; j < b->cols; j++)
            ref[j] += a_at(v->m, v->n, i, b->col0 + j) * t;
    }
}

static double flops(const struct mb_pb_sizes *s) { return 4.0 * s->d[0] * s->d[1]; }

/* A read twice (two products), x, the temporary and y */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[1] + 2.0 * (double)s->d[1] + (double)s->d[0]); }

static double bytes(const struct mb_pb_sizes *s) { return 8.0 * (2.0 * s->d[0] * s->d[1] + 2.0 * s->d[0] + 2.0 * s->d[1]); }

/* of those written: the temporary A x (M) and y (N); read: A twice, x (N), the temporary (M) */
static double written(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] + (double)s->d[1]); }

static void fini(struct mb_pb_inst *in)
{
    struct atax *s = in->priv;
    if (s)
        mb_pb_mv_fini(in, &s->v);
    free(s);
}

/* the model's local term: this call's local compute on this rank's block (matvec.h) */
static double local_time(struct mb_pb_inst *in, MPI_Comm comm)
{
    return mb_pb_mv_local_time(in, &((struct atax *)in->priv)->v, comm);
}

/* one row per variant: the registry's allreduce, or ScaLAPACK's pdgemv (matvec.h) */
#define ROW(VARIANT) { \
    .name = "atax", .variant = VARIANT, .nd = 2, .dim_names = {"M", "N"}, \
    .base = {20000, 25000}, .scaled = 3, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = mb_pb_mv_divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = mb_pb_mv_traffic, .fini = fini, .local_time = local_time, \
}
const struct mb_pb_kernel mb_pb_kernel_atax = ROW("allreduce");
const struct mb_pb_kernel mb_pb_kernel_atax_pblas = ROW("pblas");
