/* heat_3d (polybench; the SC'21 scaling script's extra kernel): N x N x N,
 * i split over Px and j over Py (k whole, so the 2-D table grids serve),
 * blocks with one ghost plane per side exchanged as jacobi_2d's frame
 * (stencil.h's halo2d, depth N); the global boundary is never updated. TSTEPS - 1 steps of A -> B -> A as DaCe's loop. Base
 * sizes: SC'21's are not in our notes, so N = 500, TSTEPS = 100 (2 GB at
 * P = 1), chosen so DaCe's validation sizes (/100) keep an interior. */
#include "stencil.h"

#include <stdlib.h>
#include <string.h>

#define C 0.125

/* polybench's init: A = B = (i + j + (N - k)) * 10 / N */
static double init_at(long long n, long long i, long long j, long long k)
{
    return (double)(i + j + (n - k)) * 10.0 / (double)n;
}

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    return mb_pb_halo2d_divides("heat_3d", s, px, py, why, len);
}

/* as 2-D blocks: row i holds j0..j0+cl-1 times all k, i.e. global columns j * N + k */
static int init(struct mb_pb_inst *in) { return mb_pb_halo2d_init(in, in->s.d[0]); }

static void reset(struct mb_pb_inst *in)
{
    struct mb_pb_halo2d *s = in->priv;
    mb_pb_halo2d_clear(s);
    for (long long i = 0; i < s->rl; i++)
        for (long long j = 0; j < s->cl; j++)
            for (long long k = 0; k < s->n; k++) {
                size_t e = (size_t)((i + 1) * s->ld + (j + 1) * s->n + k);
                s->a[e] = s->b[e] = init_at(s->n, s->i0 + i, s->j0 + j, k);
            }
}

/* one point of polybench's update; jd is the j stride, id the i stride */
static inline double update(const double *x, long long e, long long id, long long jd)
{
    return C * (x[e + id] - 2.0 * x[e] + x[e - id]) + C * (x[e + jd] - 2.0 * x[e] + x[e - jd]) +
           C * (x[e + 1] - 2.0 * x[e] + x[e - 1]) + x[e];
}

static void sweep(const void *state, const double *x, double *y, const struct mb_pb_rect *r)
{
    const struct mb_pb_halo2d *s = state;
    long long ld = s->ld, n = s->n;
    for (long long i = r->i0; i <= r->i1; i++)
        for (long long j = r->j0; j <= r->j1; j++)
            for (long long k = 1; k < n - 1; k++) {
                long long e = i * ld + j * n + k;
                y[e] = update(x, e, ld, n);
            }
}

static int run(struct mb_pb_inst *in) { return mb_pb_halo2d_run(in, sweep); }

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct mb_pb_halo2d *s = in->priv;
    long long n = s->n, nn = n * n;
    double *a = malloc((size_t)(nn * n) * sizeof(double)), *b = malloc((size_t)(nn * n) * sizeof(double));
    if (!a || !b) { /* NaN: the check then fails */
        for (long long e = 0; e < s->rl * s->cl * n; e++)
            ref[e] = 0.0 / 0.0;
        free(a), free(b);
        return;
    }
    for (long long i = 0; i < n; i++)
        for (long long j = 0; j < n; j++)
            for (long long k = 0; k < n; k++)
                a[i * nn + j * n + k] = b[i * nn + j * n + k] = init_at(n, i, j, k);
    for (long long t = 1; t < in->s.tsteps; t++)
        for (int half = 0; half < 2; half++) {
            const double *x = half ? b : a;
            double *y = half ? a : b;
            for (long long i = 1; i < n - 1; i++)
                for (long long j = 1; j < n - 1; j++)
                    for (long long k = 1; k < n - 1; k++)
                        y[i * nn + j * n + k] = update(x, i * nn + j * n + k, nn, n);
        }
    const double *r = o == 0 ? a : b;
    for (long long i = 0; i < s->rl; i++)
        memcpy(ref + i * s->cl * n, r + (s->i0 + i) * nn + s->j0 * n, (size_t)(s->cl * n) * sizeof(double));
    free(a), free(b);
}

/* 15 per point per sweep (three second differences of 4, three adds), two sweeps a step */
static double flops(const struct mb_pb_sizes *s)
{
    double in = (double)(s->d[0] - 2);
    return 30.0 * in * in * in * (double)(s->tsteps - 1);
}

/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 16.0 * (double)s->d[0] * (double)s->d[0] * (double)s->d[0]; }

static double bytes(const struct mb_pb_sizes *s)
{
    double n = (double)s->d[0];
    return 32.0 * n * n * n * (double)(s->tsteps - 1);
}

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    mb_pb_halo2d_traffic(s, g, (double)s->d[0], t);
}

/* two sweeps a step over the (N - 2)^3 inner cells */
static double cells(const struct mb_pb_sizes *s)
{
    double in = (double)(s->d[0] - 2);
    return 2.0 * in * in * in * (double)(s->tsteps - 1);
}

/* the sweep on this rank's own block: rl x cl columns of depth N, N - 2 of each updated */
static double cell_rate(struct mb_pb_inst *in, MPI_Comm comm)
{
    const struct mb_pb_halo2d *h = in->priv;
    return mb_pb_halo2d_cell_rate(in, comm, (double)(h->depth - 2), sweep);
}

const struct mb_pb_kernel mb_pb_kernel_heat_3d = {
    .name = "heat_3d", .variant = "halo", .nd = 1, .dim_names = {"N"}, .base = {500}, .scaled = 1,
    .tsteps = 100, .scale = MB_PB_CBRT, .divisor = MB_PB_DIV_MAXGRID,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .footprint = footprint, .traffic = traffic, .fini = mb_pb_halo2d_fini,
    .cells = cells, .cell_rate = cell_rate,
};
