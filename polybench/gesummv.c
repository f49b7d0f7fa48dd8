/* gesummv, y = alpha A x + beta B x (polybench, A and B N x N): both
 * local products into one partial vector, summed over each grid row
 * (y's block cx) through the registry's allreduce. */
#include "matvec.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 1.5
#define BETA 1.2

struct gesummv {
    struct mb_pb_mv v; /* v.a is A */
    double *b;         /* B's block */
};

/* A and B (N x N; m unused) */
static double a_at(long long m, long long n, long long i, long long j)
{
    (void)m;
    return (double)((i * j + 1) % n) / (double)n;
}
static double b_at(long long m, long long n, long long i, long long j)
{
    (void)m;
    return (double)((i * j + 2) % n) / (double)n;
}
static double x_at(long long n, long long i) { return (double)(i % n) / (double)n; }

static int init(struct mb_pb_inst *in)
{
    struct gesummv *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s || mb_pb_mv_init(in, &s->v) != 0 || !(s->b = malloc((size_t)(s->v.ml * s->v.nl) * sizeof(double)))) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->nout = 1;
    in->out[0] = mb_pb_mv_rowvec("y", s->v.rowsum, &s->v, in->g);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct gesummv *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    long long j0 = in->g->cy * v->nl, n = v->n;
    mb_pb_mv_fill(in->g, v, v->a, a_at);
    mb_pb_mv_fill(in->g, v, s->b, b_at);
    for (long long j = 0; j < v->nl; j++)
        v->xin[j] = x_at(n, j0 + j);
}

static int run(struct mb_pb_inst *in)
{
    struct gesummv *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    if (v->pblas) { /* y = alpha A x, then y = beta B x + y */
        int rc = mb_pb_pdgemv(v, 0, ALPHA, v->a, v->xin, 0.0, v->rowsum);
        return rc == MPI_SUCCESS ? mb_pb_pdgemv(v, 0, BETA, s->b, v->xin, 1.0, v->rowsum) : rc;
    }
    double *y = v->local ? v->rowsum : v->rowpart; /* v->local: the local part only (mb_pb_mv_local_time) */
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)v->ml, (int)v->nl, ALPHA, v->a, (int)v->nl, v->xin, 1, 0.0, y, 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)v->ml, (int)v->nl, BETA, s->b, (int)v->nl, v->xin, 1, 1.0, y, 1);
    return v->local ? MPI_SUCCESS : mb_pb_allreduce(in->g, MB_PB_ROW, v->rowpart, v->rowsum, (size_t)v->ml);
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_mv *v = &((const struct gesummv *)in->priv)->v;
    const struct mb_pb_block *b = &in->out[o];
    long long n = v->n;
    for (long long e = 0; e < b->cols; e++) {
        long long g = b->col0 + e;
        double ta = 0, tb = 0;
        for (long long j = 0; j < n; j++)
            ta += a_at(n, n, g, j) * x_at(n, j), tb += b_at(n, n, g, j) * x_at(n, j);
        ref[e] = ALPHA * ta + BETA * tb;
    }
}

static double flops(const struct mb_pb_sizes *s) { return 4.0 * (double)s->d[0] * (double)s->d[0] + 3.0 * (double)s->d[0]; }

/* the arrays once (A, B, x, y): the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * (2.0 * (double)s->d[0] * (double)s->d[0] + 2.0 * (double)s->d[0]); }

static double bytes(const struct mb_pb_sizes *s) { return 8.0 * (2.0 * (double)s->d[0] * (double)s->d[0] + 2.0 * (double)s->d[0]); }

/* of those written: y (N); read: A, B, x */
static double written(const struct mb_pb_sizes *s) { return 8.0 * (double)s->d[0]; }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    mb_pb_mv_traffic(s, g, t);
    t->ncoll = 1; /* the row sum only */
}

static void fini(struct mb_pb_inst *in)
{
    struct gesummv *s = in->priv;
    if (!s)
        return;
    mb_pb_mv_fini(in, &s->v);
    free(s->b), free(s);
}

/* the model's local term: this call's local compute on this rank's block (matvec.h) */
static double local_time(struct mb_pb_inst *in, MPI_Comm comm)
{
    return mb_pb_mv_local_time(in, &((struct gesummv *)in->priv)->v, comm);
}

/* one row per variant: the registry's allreduce, or ScaLAPACK's pdgemv (matvec.h) */
#define ROW(VARIANT) { \
    .name = "gesummv", .variant = VARIANT, .nd = 1, .dim_names = {"N"}, \
    .base = {22400}, .scaled = 1, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = mb_pb_mv_divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = traffic, .fini = fini, .local_time = local_time, \
}
const struct mb_pb_kernel mb_pb_kernel_gesummv = ROW("allreduce");
const struct mb_pb_kernel mb_pb_kernel_gesummv_pblas = ROW("pblas");
