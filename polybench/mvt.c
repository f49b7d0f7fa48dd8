/* mvt, x1 += A y1 and x2 += A^T y2 (polybench, A N x N): A y1 summed over
 * each grid row (x1's block cx), A^T y2 over each grid column (x2's
 * block cy), through the registry's allreduce. */
#include "matvec.h"

#include <stdio.h>
#include <stdlib.h>

struct mvt {
    struct mb_pb_mv v;
    double *x1, *x2; /* ml, nl */
};

static double a_at(long long m, long long n, long long i, long long j)
{
    (void)m;
    return (double)(i * j % n) / (double)n;
}
static double vec_at(long long n, long long i, long long shift) { return (double)((i + shift) % n) / (double)n; }

static int init(struct mb_pb_inst *in)
{
    struct mvt *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s || mb_pb_mv_init(in, &s->v) != 0 || !(s->x1 = calloc((size_t)s->v.ml, sizeof(double))) ||
        !(s->x2 = calloc((size_t)s->v.nl, sizeof(double)))) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->nout = 2;
    in->out[0] = mb_pb_mv_rowvec("x1", s->x1, &s->v, in->g);
    in->out[1] = mb_pb_mv_colvec("x2", s->x2, &s->v, in->g);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct mvt *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    long long i0 = in->g->cx * v->ml, j0 = in->g->cy * v->nl, n = v->n;
    mb_pb_mv_fill(in->g, v, v->a, a_at);
    for (long long i = 0; i < v->ml; i++)
        s->x1[i] = vec_at(n, i0 + i, 0), v->yin[i] = vec_at(n, i0 + i, 4); /* y2 over the rows */
    for (long long j = 0; j < v->nl; j++)
        s->x2[j] = vec_at(n, j0 + j, 1), v->xin[j] = vec_at(n, j0 + j, 3); /* y1 over the columns */
}

static int run(struct mb_pb_inst *in)
{
    struct mvt *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    int rc = mb_pb_mv_rowsum(in, v, v->xin);
    if (rc == MPI_SUCCESS)
        rc = mb_pb_mv_colsum(in, v, v->yin);
    for (long long i = 0; i < v->ml; i++)
        s->x1[i] += v->rowsum[i];
    for (long long j = 0; j < v->nl; j++)
        s->x2[j] += v->colsum[j];
    return rc;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_mv *v = &((const struct mvt *)in->priv)->v;
    const struct mb_pb_block *b = &in->out[o];
    long long n = v->n;
    for (long long e = 0; e < b->cols; e++) {
        long long g = b->col0 + e;
        double sum = 0;
        for (long long j = 0; j < n; j++) /* x1[g] += A[g][j] y1[j]; x2[g] += A[j][g] y2[j] */
            sum += o == 0 ? a_at(n, n, g, j) * vec_at(n, j, 3) : a_at(n, n, j, g) * vec_at(n, j, 4);
        ref[e] = vec_at(n, g, o == 0 ? 0 : 1) + sum;
    }
}

static double flops(const struct mb_pb_sizes *s) { return 4.0 * (double)s->d[0] * (double)s->d[0]; }

/* A read twice (two products) and the six vectors */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[0] + 4.0 * (double)s->d[0]); }

static double bytes(const struct mb_pb_sizes *s) { return 8.0 * (2.0 * (double)s->d[0] * (double)s->d[0] + 6.0 * (double)s->d[0]); }

/* of those written: x1 and x2 (N each); read: A twice, y1, y2, x1, x2 */
static double written(const struct mb_pb_sizes *s) { return 8.0 * 2.0 * (double)s->d[0]; }

static void fini(struct mb_pb_inst *in)
{
    struct mvt *s = in->priv;
    if (!s)
        return;
    mb_pb_mv_fini(in, &s->v);
    free(s->x1), free(s->x2), free(s);
}

/* the model's local term: this call's local compute on this rank's block (matvec.h) */
static double local_time(struct mb_pb_inst *in, MPI_Comm comm)
{
    return mb_pb_mv_local_time(in, &((struct mvt *)in->priv)->v, comm);
}

/* one row per variant: the registry's allreduce, or ScaLAPACK's pdgemv (matvec.h) */
#define ROW(VARIANT) { \
    .name = "mvt", .variant = VARIANT, .nd = 1, .dim_names = {"N"}, \
    .base = {22000}, .scaled = 1, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = mb_pb_mv_divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = mb_pb_mv_traffic, .fini = fini, .local_time = local_time, \
}
const struct mb_pb_kernel mb_pb_kernel_mvt = ROW("allreduce");
const struct mb_pb_kernel mb_pb_kernel_mvt_pblas = ROW("pblas");
