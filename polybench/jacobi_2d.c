/* jacobi_2d (polybench, weight 0.2): N x N in N/Px x N/Py blocks with a
 * ghost frame, four neighbours from MPI_Cart_shift (MPI_PROC_NULL at the
 * edges), 8 requests per exchange (Isend/Irecv; columns as a vector
 * type); the global boundary is never updated. TSTEPS - 1 steps. */
#include "stencil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 0.2

struct j2 {
    long long n, rl, cl, ld, i0, j0, ilo, ihi, jlo, jhi;
    int north, south, west, east;
    MPI_Datatype column;
    double *a, *b; /* (rl + 2) x (cl + 2) */
};

static double a_at(long long n, long long i, long long j) { return ((double)i * (double)(j + 2) + 2.0) / (double)n; }
static double b_at(long long n, long long i, long long j) { return ((double)i * (double)(j + 3) + 3.0) / (double)n; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (s->d[0] % px || s->d[0] % py) {
        snprintf(why, len, "jacobi_2d N=%lld: the %dx%d grid needs N %% %d and N %% %d == 0", s->d[0], px, py, px, py);
        return -1;
    }
    return 0;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct j2 *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    s->column = MPI_DATATYPE_NULL;
    s->n = in->s.d[0], s->rl = s->n / g->px, s->cl = s->n / g->py, s->ld = s->cl + 2;
    s->i0 = g->cx * s->rl, s->j0 = g->cy * s->cl;
    s->ilo = s->i0 == 0 ? 2 : 1, s->ihi = s->i0 + s->rl == s->n ? s->rl - 1 : s->rl;
    s->jlo = s->j0 == 0 ? 2 : 1, s->jhi = s->j0 + s->cl == s->n ? s->cl - 1 : s->cl;
    MPI_Cart_shift(g->cart, 0, 1, &s->north, &s->south);
    MPI_Cart_shift(g->cart, 1, 1, &s->west, &s->east);
    MPI_Type_vector((int)s->rl, 1, (int)s->ld, MPI_DOUBLE, &s->column);
    MPI_Type_commit(&s->column);
    size_t cells = (size_t)((s->rl + 2) * s->ld);
    s->a = calloc(cells, sizeof(double));
    s->b = calloc(cells, sizeof(double));
    if (!s->a || !s->b) {
        snprintf(in->err, sizeof(in->err), "out of memory for a %lldx%lld block", s->rl, s->cl);
        return -1;
    }
    in->nout = 2;
    in->out[0] = (struct mb_pb_block){.name = "A", .data = s->a + s->ld + 1, .rows = s->rl, .cols = s->cl,
                                      .ld = s->ld, .row0 = s->i0, .col0 = s->j0};
    in->out[1] = in->out[0];
    in->out[1].name = "B", in->out[1].data = s->b + s->ld + 1;
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct j2 *s = in->priv;
    size_t cells = (size_t)((s->rl + 2) * s->ld);
    memset(s->a, 0, cells * sizeof(double));
    memset(s->b, 0, cells * sizeof(double));
    for (long long i = 0; i < s->rl; i++)
        for (long long j = 0; j < s->cl; j++) {
            s->a[(i + 1) * s->ld + j + 1] = a_at(s->n, s->i0 + i, s->j0 + j);
            s->b[(i + 1) * s->ld + j + 1] = b_at(s->n, s->i0 + i, s->j0 + j);
        }
}

static int halo(const struct mb_pb_inst *in, const void *state, double *x)
{
    const struct j2 *s = state;
    MPI_Comm c = in->g->cart;
    long long ld = s->ld, rl = s->rl, cl = s->cl;
    MPI_Request rq[8];
    MPI_Irecv(x + 1, (int)cl, MPI_DOUBLE, s->north, 0, c, &rq[0]);
    MPI_Irecv(x + (rl + 1) * ld + 1, (int)cl, MPI_DOUBLE, s->south, 1, c, &rq[1]);
    MPI_Irecv(x + ld, 1, s->column, s->west, 2, c, &rq[2]);
    MPI_Irecv(x + ld + cl + 1, 1, s->column, s->east, 3, c, &rq[3]);
    MPI_Isend(x + ld + 1, (int)cl, MPI_DOUBLE, s->north, 1, c, &rq[4]);
    MPI_Isend(x + rl * ld + 1, (int)cl, MPI_DOUBLE, s->south, 0, c, &rq[5]);
    MPI_Isend(x + ld + 1, 1, s->column, s->west, 3, c, &rq[6]);
    MPI_Isend(x + ld + cl, 1, s->column, s->east, 2, c, &rq[7]);
    return MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
}

static void sweep(const void *state, const double *x, double *y)
{
    const struct j2 *s = state;
    long long ld = s->ld;
    for (long long i = s->ilo; i <= s->ihi; i++)
        for (long long j = s->jlo; j <= s->jhi; j++)
            y[i * ld + j] = W * (x[i * ld + j] + x[i * ld + j - 1] + x[i * ld + j + 1] + x[(i + 1) * ld + j] +
                                 x[(i - 1) * ld + j]);
}

static int run(struct mb_pb_inst *in)
{
    struct j2 *s = in->priv;
    const struct mb_pb_stencil st = {.a = s->a, .b = s->b, .halo = halo, .sweep = sweep};
    return mb_pb_stencil_run(in, s, &st);
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct j2 *s = in->priv;
    long long n = s->n;
    double *a = malloc((size_t)(n * n) * sizeof(double)), *b = malloc((size_t)(n * n) * sizeof(double));
    if (!a || !b) { /* NaN: the check then fails */
        for (long long e = 0; e < s->rl * s->cl; e++)
            ref[e] = 0.0 / 0.0;
        free(a), free(b);
        return;
    }
    for (long long i = 0; i < n; i++)
        for (long long j = 0; j < n; j++)
            a[i * n + j] = a_at(n, i, j), b[i * n + j] = b_at(n, i, j);
    for (long long t = 1; t < in->s.tsteps; t++)
        for (int half = 0; half < 2; half++) {
            const double *x = half ? b : a;
            double *y = half ? a : b;
            for (long long i = 1; i < n - 1; i++)
                for (long long j = 1; j < n - 1; j++)
                    y[i * n + j] = W * (x[i * n + j] + x[i * n + j - 1] + x[i * n + j + 1] + x[(i + 1) * n + j] +
                                        x[(i - 1) * n + j]);
        }
    const double *r = o == 0 ? a : b;
    for (long long i = 0; i < s->rl; i++)
        memcpy(ref + i * s->cl, r + (s->i0 + i) * n + s->j0, (size_t)s->cl * sizeof(double));
    free(a), free(b);
}

static double flops(const struct mb_pb_sizes *s)
{
    return 10.0 * (double)(s->d[0] - 2) * (double)(s->d[0] - 2) * (double)(s->tsteps - 1);
}

static double bytes(const struct mb_pb_sizes *s) { return 32.0 * (double)s->d[0] * (double)s->d[0] * (double)(s->tsteps - 1); }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    long long side = s->d[0] / g->px > s->d[0] / g->py ? s->d[0] / g->px : s->d[0] / g->py;
    t->halos = 2.0 * (double)(s->tsteps - 1);
    t->halo_bytes = 8.0 * (double)side;
}

static void fini(struct mb_pb_inst *in)
{
    struct j2 *s = in->priv;
    if (!s)
        return;
    if (s->column != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->column);
    free(s->a), free(s->b), free(s);
}

const struct mb_pb_kernel mb_pb_kernel_jacobi_2d = {
    .name = "jacobi_2d", .variant = "halo", .nd = 1, .dim_names = {"N"}, .base = {500}, .scaled = 1,
    .tsteps = 1000, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_P,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .traffic = traffic, .fini = fini,
};
