/* jacobi_2d (polybench, weight 0.2): N x N in N/Px x N/Py blocks with a
 * ghost frame, four neighbours from MPI_Cart_shift (MPI_PROC_NULL at the
 * edges), 8 requests per exchange (Isend/Irecv; columns as a vector
 * type); the global boundary is never updated. TSTEPS - 1 steps. */
#include "stencil.h"

#include <stdlib.h>
#include <string.h>

#define W 0.2

static double a_at(long long n, long long i, long long j) { return ((double)i * (double)(j + 2) + 2.0) / (double)n; }
static double b_at(long long n, long long i, long long j) { return ((double)i * (double)(j + 3) + 3.0) / (double)n; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    return mb_pb_halo2d_divides("jacobi_2d", s, px, py, why, len);
}

static int init(struct mb_pb_inst *in) { return mb_pb_halo2d_init(in, 1); }

static void reset(struct mb_pb_inst *in)
{
    struct mb_pb_halo2d *s = in->priv;
    mb_pb_halo2d_clear(s);
    for (long long i = 0; i < s->rl; i++)
        for (long long j = 0; j < s->cl; j++) {
            s->a[(i + 1) * s->ld + j + 1] = a_at(s->n, s->i0 + i, s->j0 + j);
            s->b[(i + 1) * s->ld + j + 1] = b_at(s->n, s->i0 + i, s->j0 + j);
        }
}

static void sweep(const void *state, const double *x, double *y, const struct mb_pb_rect *r)
{
    const struct mb_pb_halo2d *s = state;
    long long ld = s->ld;
    for (long long i = r->i0; i <= r->i1; i++)
        for (long long j = r->j0; j <= r->j1; j++)
            y[i * ld + j] = W * (x[i * ld + j] + x[i * ld + j - 1] + x[i * ld + j + 1] + x[(i + 1) * ld + j] +
                                 x[(i - 1) * ld + j]);
}

static int run(struct mb_pb_inst *in) { return mb_pb_halo2d_run(in, sweep); }

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_halo2d *s = in->priv;
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

/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 16.0 * (double)s->d[0] * (double)s->d[0]; }

static double bytes(const struct mb_pb_sizes *s) { return 32.0 * (double)s->d[0] * (double)s->d[0] * (double)(s->tsteps - 1); }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    mb_pb_halo2d_traffic(s, g, 1.0, t);
}

/* two sweeps a step over the (N - 2)^2 inner cells */
static double cells(const struct mb_pb_sizes *s)
{
    return 2.0 * (double)(s->d[0] - 2) * (double)(s->d[0] - 2) * (double)(s->tsteps - 1);
}

/* the sweep on this rank's own block */
static double cell_rate(struct mb_pb_inst *in, MPI_Comm comm) { return mb_pb_halo2d_cell_rate(in, comm, 1.0, sweep); }

const struct mb_pb_kernel mb_pb_kernel_jacobi_2d = {
    .name = "jacobi_2d", .variant = "halo", .nd = 1, .dim_names = {"N"}, .base = {500}, .scaled = 1,
    .tsteps = 1000, .scale = MB_PB_SQRT, .divisor = MB_PB_DIV_P,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .footprint = footprint, .traffic = traffic, .fini = mb_pb_halo2d_fini,
    .cells = cells, .cell_rate = cell_rate,
};
