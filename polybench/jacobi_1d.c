/* jacobi_1d (polybench, weight 0.33333 as DaCe): N split over the 1-D line
 * of P ranks, one ghost cell per side, exchanged with Isend/Irecv before
 * each sweep (A, then B); MPI_PROC_NULL beyond the ends, and the global
 * end points are never updated. TSTEPS - 1 steps, as DaCe. */
#include "stencil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 0.33333

struct j1 {
    long long n, nl, i0, lo, hi; /* local cells 1..nl; updated lo..hi */
    int left, right;
    double *a, *b;               /* nl + 2 with the ghosts */
};

static double a_at(long long n, long long i) { return ((double)i + 2.0) / (double)n; }
static double b_at(long long n, long long i) { return ((double)i + 3.0) / (double)n; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (s->d[0] % ((long long)px * py)) {
        snprintf(why, len, "jacobi_1d N=%lld: %d ranks need N %% %d == 0", s->d[0], px * py, px * py);
        return -1;
    }
    return 0;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct j1 *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    int me;
    MPI_Comm_rank(g->line, &me);
    MPI_Cart_shift(g->line, 0, 1, &s->left, &s->right);
    s->n = in->s.d[0], s->nl = s->n / g->p, s->i0 = me * s->nl;
    s->lo = s->i0 == 0 ? 2 : 1;                        /* global 0 stays */
    s->hi = s->i0 + s->nl == s->n ? s->nl - 1 : s->nl; /* global N-1 stays */
    s->a = calloc((size_t)s->nl + 2, sizeof(double));
    s->b = calloc((size_t)s->nl + 2, sizeof(double));
    if (!s->a || !s->b) {
        snprintf(in->err, sizeof(in->err), "out of memory for %lld cells", s->nl);
        return -1;
    }
    in->nout = 2;
    in->out[0] = (struct mb_pb_block){.name = "A", .data = s->a + 1, .rows = 1, .cols = s->nl, .ld = s->nl, .col0 = s->i0};
    in->out[1] = (struct mb_pb_block){.name = "B", .data = s->b + 1, .rows = 1, .cols = s->nl, .ld = s->nl, .col0 = s->i0};
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct j1 *s = in->priv;
    s->a[0] = s->b[0] = s->a[s->nl + 1] = s->b[s->nl + 1] = 0;
    for (long long i = 0; i < s->nl; i++) {
        s->a[i + 1] = a_at(s->n, s->i0 + i);
        s->b[i + 1] = b_at(s->n, s->i0 + i);
    }
}

static int halo(const struct mb_pb_inst *in, const void *state, double *x, MPI_Request *rq, int *n)
{
    const struct j1 *s = state;
    *n = 4;
    MPI_Irecv(x, 1, MPI_DOUBLE, s->left, 0, in->g->line, &rq[0]);
    MPI_Irecv(x + s->nl + 1, 1, MPI_DOUBLE, s->right, 1, in->g->line, &rq[1]);
    MPI_Isend(x + 1, 1, MPI_DOUBLE, s->left, 1, in->g->line, &rq[2]);
    return MPI_Isend(x + s->nl, 1, MPI_DOUBLE, s->right, 0, in->g->line, &rq[3]);
}

/* cells r->j0..r->j1 (one row: i unused) */
static void sweep(const void *state, const double *x, double *y, const struct mb_pb_rect *r)
{
    (void)state;
    for (long long i = r->j0; i <= r->j1; i++)
        y[i] = W * (x[i - 1] + x[i] + x[i + 1]);
}

static int run(struct mb_pb_inst *in)
{
    struct j1 *s = in->priv;
    const struct mb_pb_stencil st = {.a = s->a, .b = s->b, .halo = halo, .sweep = sweep,
                                     .upd = {0, 0, s->lo, s->hi}, .rl = 0, .cl = s->nl};
    return mb_pb_stencil_run(in, s, &st);
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    const struct j1 *s = in->priv;
    long long n = s->n;
    double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    if (!a || !b) { /* NaN: the check then fails, saying so */
        for (long long i = 0; i < s->nl; i++)
            ref[i] = 0.0 / 0.0;
        free(a), free(b);
        return;
    }
    for (long long i = 0; i < n; i++)
        a[i] = a_at(n, i), b[i] = b_at(n, i);
    for (long long t = 1; t < in->s.tsteps; t++) {
        for (long long i = 1; i < n - 1; i++)
            b[i] = W * (a[i - 1] + a[i] + a[i + 1]);
        for (long long i = 1; i < n - 1; i++)
            a[i] = W * (b[i - 1] + b[i] + b[i + 1]);
    }
    memcpy(ref, (o == 0 ? a : b) + s->i0, (size_t)s->nl * sizeof(double));
    free(a), free(b);
}

static double flops(const struct mb_pb_sizes *s) { return 6.0 * (double)(s->d[0] - 2) * (double)(s->tsteps - 1); }

/* each sweep reads one array and writes the other */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 16.0 * (double)s->d[0]; }

static double bytes(const struct mb_pb_sizes *s) { return 32.0 * (double)s->d[0] * (double)(s->tsteps - 1); }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    (void)g;
    memset(t, 0, sizeof(*t));
    t->halos = 2.0 * (double)(s->tsteps - 1);
    t->halo_bytes = 8;
}

/* two sweeps a step over the N - 2 inner cells */
static double cells(const struct mb_pb_sizes *s) { return 2.0 * (double)(s->d[0] - 2) * (double)(s->tsteps - 1); }

/* the sweep on this rank's own cells lo..hi of its own arrays (what run sweeps) */
static double cell_rate(struct mb_pb_inst *in, MPI_Comm comm)
{
    struct j1 *s = in->priv;
    const struct mb_pb_rect r = {0, 0, s->lo, s->hi};
    return mb_pb_stencil_cell_rate(comm, s, sweep, s->a, s->b, &r, (double)(s->hi - s->lo + 1));
}

static void fini(struct mb_pb_inst *in)
{
    struct j1 *s = in->priv;
    if (s)
        free(s->a), free(s->b);
    free(s);
}

const struct mb_pb_kernel mb_pb_kernel_jacobi_1d = {
    .name = "jacobi_1d", .variant = "halo", .nd = 1, .dim_names = {"N"}, .base = {24000}, .scaled = 1,
    .tsteps = 1000, .scale = MB_PB_LINEAR, .divisor = MB_PB_DIV_P,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .footprint = footprint, .traffic = traffic, .fini = fini,
    .cells = cells, .cell_rate = cell_rate,
};
