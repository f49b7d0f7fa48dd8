/* Block matrix-vector products with row and column reductions (atax,
 * bicg, gemver, gesummv, mvt), or pdgemv for their pblas rows. */
#include "matvec.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* M x N, or N x N for the kernels with one size */
static long long rows_of(const struct mb_pb_sizes *s) { return s->d[0]; }
static long long cols_of(const struct mb_pb_sizes *s) { return s->nd == 1 ? s->d[0] : s->d[1]; }

int mb_pb_mv_divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (rows_of(s) % px || cols_of(s) % py) {
        if (s->nd == 1)
            snprintf(why, len, "N=%lld: the %dx%d grid needs N %% %d and N %% %d == 0", s->d[0], px, py, px, py);
        else
            snprintf(why, len, "M=%lld, N=%lld: the %dx%d grid needs M %% %d and N %% %d == 0", s->d[0], s->d[1], px,
                     py, px, py);
        return -1;
    }
    return 0;
}

int mb_pb_mv_init(struct mb_pb_inst *in, struct mb_pb_mv *v)
{
    const struct mb_pb_grid *g = in->g;
    v->m = rows_of(&in->s), v->n = cols_of(&in->s), v->ml = v->m / g->px, v->nl = v->n / g->py;
    v->a = malloc((size_t)(v->ml * v->nl) * sizeof(double));
    v->xin = calloc((size_t)v->nl + 1, sizeof(double));
    v->yin = calloc((size_t)v->ml + 1, sizeof(double));
    v->rowpart = mb_pb_buf(g, MB_PB_ROW, (size_t)v->ml);
    v->rowsum = mb_pb_buf(g, MB_PB_ROW, (size_t)v->ml);
    v->colpart = mb_pb_buf(g, MB_PB_COL, (size_t)v->nl);
    v->colsum = mb_pb_buf(g, MB_PB_COL, (size_t)v->nl);
    if (!v->a || !v->xin || !v->yin || !v->rowpart || !v->rowsum || !v->colpart || !v->colsum) {
        snprintf(in->err, sizeof(in->err), "out of memory for the %lldx%lld block", v->ml, v->nl);
        return -1;
    }
    v->blacs = -1;
    v->pblas = strcmp(in->k->variant, "pblas") == 0;
    if (v->pblas && mb_pb_mv_pblas_init(v, g) != 0) {
        v->pblas = 0;
        snprintf(in->err, sizeof(in->err), "no BLACS grid for pdgemv (built without ScaLAPACK?)");
        return -1;
    }
    return 0;
}

/* v->local (mb_pb_mv_local_time): the same product into the sum buffer, which the kernel's next step reads,
 * and no reduction */
int mb_pb_mv_rowsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *xin)
{
    if (v->pblas)
        return mb_pb_pdgemv(v, 0, 1.0, v->a, xin, 0.0, v->rowsum);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)v->ml, (int)v->nl, 1.0, v->a, (int)v->nl, xin, 1, 0.0,
                v->local ? v->rowsum : v->rowpart, 1);
    return v->local ? MPI_SUCCESS : mb_pb_allreduce(in->g, MB_PB_ROW, v->rowpart, v->rowsum, (size_t)v->ml);
}

int mb_pb_mv_colsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *yin)
{
    if (v->pblas)
        return mb_pb_pdgemv(v, 1, 1.0, v->a, yin, 0.0, v->colsum);
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)v->ml, (int)v->nl, 1.0, v->a, (int)v->nl, yin, 1, 0.0,
                v->local ? v->colsum : v->colpart, 1);
    return v->local ? MPI_SUCCESS : mb_pb_allreduce(in->g, MB_PB_COL, v->colpart, v->colsum, (size_t)v->nl);
}

static void local_call(void *ctx, long k)
{
    (void)k;
    mb_pb_run(ctx); /* no communication in it, so nothing to fail but a pdgemv descriptor the samples would fail too */
}

double mb_pb_mv_local_time(struct mb_pb_inst *in, struct mb_pb_mv *v, MPI_Comm comm)
{
    v->local = 1;
    /* 20 ms windows, as the stencils': a medium-scale call (0.1-0.2 s) is one call a pass */
    double calls_s = mb_pb_window_cpu_rate(comm, 0.02, 1.0, local_call, in);
    v->local = 0;
    return calls_s > 0 ? 1.0 / calls_s : NAN;
}

void mb_pb_mv_traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    t->ncoll = 2;
    t->coll[0].kind = t->coll[1].kind = MB_COLL_ALLREDUCE;
    t->coll[0].axis = MB_PB_ROW, t->coll[0].count = (size_t)(rows_of(s) / g->px), t->coll[0].calls = 1;
    t->coll[1].axis = MB_PB_COL, t->coll[1].count = (size_t)(cols_of(s) / g->py), t->coll[1].calls = 1;
}

void mb_pb_mv_fini(struct mb_pb_inst *in, struct mb_pb_mv *v)
{
    mb_pb_mv_pblas_fini(v);
    free(v->a), free(v->xin), free(v->yin);
    mb_pb_buf_free(in->g, MB_PB_ROW, v->rowpart);
    mb_pb_buf_free(in->g, MB_PB_ROW, v->rowsum);
    mb_pb_buf_free(in->g, MB_PB_COL, v->colpart);
    mb_pb_buf_free(in->g, MB_PB_COL, v->colsum);
}

struct mb_pb_block mb_pb_mv_rowvec(const char *name, double *data, const struct mb_pb_mv *v,
                                   const struct mb_pb_grid *g)
{
    return (struct mb_pb_block){.name = name, .data = data, .rows = 1, .cols = v->ml, .ld = v->ml,
                                .col0 = g->cx * v->ml};
}

struct mb_pb_block mb_pb_mv_colvec(const char *name, double *data, const struct mb_pb_mv *v,
                                   const struct mb_pb_grid *g)
{
    return (struct mb_pb_block){.name = name, .data = data, .rows = 1, .cols = v->nl, .ld = v->nl,
                                .col0 = g->cy * v->nl};
}

void mb_pb_mv_fill(const struct mb_pb_grid *g, const struct mb_pb_mv *v, double *a,
                   double (*at)(long long m, long long n, long long i, long long j))
{
    long long i0 = g->cx * v->ml, j0 = g->cy * v->nl;
    for (long long i = 0; i < v->ml; i++)
        for (long long j = 0; j < v->nl; j++)
            a[i * v->nl + j] = at(v->m, v->n, i0 + i, j0 + j);
}
