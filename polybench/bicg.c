/* bicg, s = A^T r and q = A p (polybench, A is M x N): q's block cx
 * summed over each grid row, s's block cy over each grid column. */
#include "matvec.h"

#include <stdio.h>
#include <stdlib.h>

struct bicg {
    struct mb_pb_mv v;
};

static double a_at(long long m, long long n, long long i, long long j)
{
    (void)n;
    return (double)(i * (j + 1) % m) / (double)m; }
static double p_at(long long n, long long j) { return (double)(j % n) / (double)n; }
static double r_at(long long m, long long i) { return (double)(i % m) / (double)m; }

static int init(struct mb_pb_inst *in)
{
    struct bicg *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s || mb_pb_mv_init(in, &s->v) != 0) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->nout = 2;
    in->out[0] = mb_pb_mv_colvec("s", s->v.colsum, &s->v, in->g);
    in->out[1] = mb_pb_mv_rowvec("q", s->v.rowsum, &s->v, in->g);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct mb_pb_mv *v = &((struct bicg *)in->priv)->v;
    long long i0 = in->g->cx * v->ml, j0 = in->g->cy * v->nl;
    mb_pb_mv_fill(in->g, v, v->a, a_at);
    for (long long j = 0; j < v->nl; j++)
        v->xin[j] = p_at(v->n, j0 + j);
    for (long long i = 0; i < v->ml; i++)
        v->yin[i] = r_at(v->m, i0 + i);
}

static int run(struct mb_pb_inst *in)
{
    struct mb_pb_mv *v = &((struct bicg *)in->priv)->v;
    int rc = mb_pb_mv_rowsum(in, v, v->xin);
    return rc == MPI_SUCCESS ? mb_pb_mv_colsum(in, v, v->yin) : rc;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_mv *v = &((const struct bicg *)in->priv)->v;
    const struct mb_pb_block *b = &in->out[o];
    for (long long e = 0; e < b->cols; e++) {
        double sum = 0;
        long long g = b->col0 + e;
        if (o == 0) /* s[g] = sum_i r[i] A[i][g] */
            for (long long i = 0; i < v->m; i++)
                sum += r_at(v->m, i) * a_at(v->m, v->n, i, g);
        else /* q[g] = sum_j A[g][j] p[j] */
            for (long long j = 0; j < v->n; j++)
                sum += a_at(v->m, v->n, g, j) * p_at(v->n, j);
        ref[e] = sum;
    }
}

static double flops(const struct mb_pb_sizes *s) { return 4.0 * s->d[0] * s->d[1]; }

/* A read twice (two products) and the four vectors */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[1] + 2.0 * (double)s->d[0] + 2.0 * (double)s->d[1]); }

static double bytes(const struct mb_pb_sizes *s) { return 8.0 * (2.0 * s->d[0] * s->d[1] + 2.0 * s->d[0] + 2.0 * s->d[1]); }

/* of those written: q (M) and s (N); read: A twice, p (N), r (M) */
static double written(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] + (double)s->d[1]); }

static void fini(struct mb_pb_inst *in)
{
    struct bicg *s = in->priv;
    if (s)
        mb_pb_mv_fini(in, &s->v);
    free(s);
}

/* the model's local term: this call's local compute on this rank's block (matvec.h) */
static double local_time(struct mb_pb_inst *in, MPI_Comm comm)
{
    return mb_pb_mv_local_time(in, &((struct bicg *)in->priv)->v, comm);
}

/* one row per variant: the registry's allreduce, or ScaLAPACK's pdgemv (matvec.h) */
#define ROW(VARIANT) { \
    .name = "bicg", .variant = VARIANT, .nd = 2, .dim_names = {"M", "N"}, \
    .base = {25000, 20000}, .scaled = 3, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = mb_pb_mv_divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = mb_pb_mv_traffic, .fini = fini, .local_time = local_time, \
}
const struct mb_pb_kernel mb_pb_kernel_bicg = ROW("allreduce");
const struct mb_pb_kernel mb_pb_kernel_bicg_pblas = ROW("pblas");
