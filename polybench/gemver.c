/* gemver (polybench, A N x N): A += u1 v1^T + u2 v2^T on each block (two
 * daxpys per row, the row in cache between them),
 * x = beta A^T y + z summed over each grid column (x's block cy), then
 * w = alpha A x summed over each grid row (w's block cx), through the
 * registry's allreduce. */
#include "matvec.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#define ALPHA 1.5
#define BETA 1.2

struct gemver {
    struct mb_pb_mv v;           /* v.yin: y over the rows */
    double *u1, *u2, *w;         /* ml */
    double *v1, *v2, *z, *x;     /* nl */
};

static double a_at(long long m, long long n, long long i, long long j)
{
    (void)m;
    return (double)(i * j % n) / (double)n;
}
/* polybench's vectors: u1 = i, the others ((i + 1) / n) / div */
static double vec_at(long long n, long long i, double div) { return div == 0 ? (double)i : ((double)(i + 1) / (double)n) / div; }
static double ahat_at(long long n, long long i, long long j)
{
    return a_at(n, n, i, j) + vec_at(n, i, 0) * vec_at(n, j, 4) + vec_at(n, i, 2) * vec_at(n, j, 6);
}

static int init(struct mb_pb_inst *in)
{
    struct gemver *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s || mb_pb_mv_init(in, &s->v) != 0) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    size_t ml = (size_t)s->v.ml, nl = (size_t)s->v.nl;
    s->u1 = calloc(ml, sizeof(double)), s->u2 = calloc(ml, sizeof(double)), s->w = calloc(ml, sizeof(double));
    s->v1 = calloc(nl, sizeof(double)), s->v2 = calloc(nl, sizeof(double)), s->z = calloc(nl, sizeof(double));
    s->x = calloc(nl, sizeof(double));
    if (!s->u1 || !s->u2 || !s->w || !s->v1 || !s->v2 || !s->z || !s->x) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->nout = 2;
    in->out[0] = mb_pb_mv_colvec("x", s->x, &s->v, in->g);
    in->out[1] = mb_pb_mv_rowvec("w", s->w, &s->v, in->g);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct gemver *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    long long i0 = in->g->cx * v->ml, j0 = in->g->cy * v->nl, n = v->n;
    mb_pb_mv_fill(in->g, v, v->a, a_at);
    for (long long i = 0; i < v->ml; i++) {
        s->u1[i] = vec_at(n, i0 + i, 0), s->u2[i] = vec_at(n, i0 + i, 2);
        v->yin[i] = vec_at(n, i0 + i, 8), s->w[i] = 0;
    }
    for (long long j = 0; j < v->nl; j++) {
        s->v1[j] = vec_at(n, j0 + j, 4), s->v2[j] = vec_at(n, j0 + j, 6);
        s->z[j] = vec_at(n, j0 + j, 9), s->x[j] = 0;
    }
}

static int run(struct mb_pb_inst *in)
{
    struct gemver *s = in->priv;
    struct mb_pb_mv *v = &s->v;
    /* the update row by row, two axpys while the row is in cache: one pass over A in memory. The plain
     * C loop (a[i][j] += u1[i] v1[j] + u2[i] v2[j]) read and wrote A at 13.6 GB/s on this host's EPYC
     * against daxpy's 23.0 (N = 10000, one rank, the same run), 0.12 s of gemver's 0.24 at P = 1 */
    for (long long i = 0; i < v->ml; i++) {
        cblas_daxpy((int)v->nl, s->u1[i], s->v1, 1, v->a + i * v->nl, 1);
        cblas_daxpy((int)v->nl, s->u2[i], s->v2, 1, v->a + i * v->nl, 1);
    }
    int rc = mb_pb_mv_colsum(in, v, v->yin);
    if (rc != MPI_SUCCESS)
        return rc;
    for (long long j = 0; j < v->nl; j++)
        s->x[j] += BETA * v->colsum[j] + s->z[j];
    if ((rc = mb_pb_mv_rowsum(in, v, s->x)) != MPI_SUCCESS)
        return rc;
    for (long long i = 0; i < v->ml; i++)
        s->w[i] += ALPHA * v->rowsum[i];
    return MPI_SUCCESS;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_mv *v = &((const struct gemver *)in->priv)->v;
    const struct mb_pb_block *b = &in->out[o];
    long long n = v->n;
    double *x = malloc((size_t)n * sizeof(double));
    if (!x) { /* NaN: the check then fails */
        for (long long e = 0; e < b->cols; e++)
            ref[e] = 0.0 / 0.0;
        return;
    }
    for (long long j = 0; j < n; j++) {
        double sum = 0;
        for (long long i = 0; i < n; i++)
            sum += ahat_at(n, i, j) * vec_at(n, i, 8);
        x[j] = BETA * sum + vec_at(n, j, 9);
    }
    for (long long e = 0; e < b->cols; e++) {
        long long g = b->col0 + e;
        if (o == 0) {
            ref[e] = x[g];
            continue;
        }
        double sum = 0;
        for (long long j = 0; j < n; j++)
            sum += ahat_at(n, g, j) * x[j];
        ref[e] = ALPHA * sum;
    }
    free(x);
}

static double flops(const struct mb_pb_sizes *s) { return 10.0 * (double)s->d[0] * (double)s->d[0]; }

/* A read and written by the update, read by each product; the vectors */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[0] + 8.0 * (double)s->d[0]); }

static double bytes(const struct mb_pb_sizes *s) { return 8.0 * (4.0 * (double)s->d[0] * (double)s->d[0] + 10.0 * (double)s->d[0]); }

/* of those written: A once (the update), x and w (N each); read: A three times, u1, u2, v1, v2, y, z, x, w */
static double written(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[0] + 2.0 * (double)s->d[0]); }

static void fini(struct mb_pb_inst *in)
{
    struct gemver *s = in->priv;
    if (!s)
        return;
    mb_pb_mv_fini(in, &s->v);
    free(s->u1), free(s->u2), free(s->w), free(s->v1), free(s->v2), free(s->z), free(s->x), free(s);
}

/* the model's local term: this call's local compute on this rank's block (matvec.h) */
static double local_time(struct mb_pb_inst *in, MPI_Comm comm)
{
    return mb_pb_mv_local_time(in, &((struct gemver *)in->priv)->v, comm);
}

/* one row per variant: the registry's allreduce, or ScaLAPACK's pdgemv (matvec.h) */
#define ROW(VARIANT) { \
    .name = "gemver", .variant = VARIANT, .nd = 1, .dim_names = {"N"}, \
    .base = {10000}, .scaled = 1, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = mb_pb_mv_divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = mb_pb_mv_traffic, .fini = fini, .local_time = local_time, \
}
const struct mb_pb_kernel mb_pb_kernel_gemver = ROW("allreduce");
const struct mb_pb_kernel mb_pb_kernel_gemver_pblas = ROW("pblas");
