/* The stencils' time loop, and the 2-D-decomposed blocks with ghost
 * frames that jacobi_2d and heat_3d share. */
#include "stencil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long max_ll(long long a, long long b) { return a > b ? a : b; }
static long long min_ll(long long a, long long b) { return a < b ? a : b; }

void mb_pb_stencil_split(const struct mb_pb_rect *upd, long long rl, long long cl, struct mb_pb_rect part[5])
{
    const struct mb_pb_rect none = {1, 0, 1, 0};
    for (int p = 0; p < 5; p++)
        part[p] = none;
    long long ia = rl ? max_ll(upd->i0, 2) : upd->i0, ib = rl ? min_ll(upd->i1, rl - 1) : upd->i1;
    long long ja = max_ll(upd->j0, 2), jb = min_ll(upd->j1, cl - 1);
    if (ia > ib || ja > jb) { /* no interior: all of it is edge */
        part[1] = *upd;
        return;
    }
    part[0] = (struct mb_pb_rect){ia, ib, ja, jb};
    part[1] = (struct mb_pb_rect){upd->i0, ia - 1, upd->j0, upd->j1}; /* rows above */
    part[2] = (struct mb_pb_rect){ib + 1, upd->i1, upd->j0, upd->j1}; /* rows below */
    part[3] = (struct mb_pb_rect){ia, ib, upd->j0, ja - 1};           /* left of the interior */
    part[4] = (struct mb_pb_rect){ia, ib, jb + 1, upd->j1};           /* right of it */
}

static int empty(const struct mb_pb_rect *r) { return r->i0 > r->i1 || r->j0 > r->j1; }

/* x -> y: the exchange of x's ghosts in flight while the interior is
 * swept, then the edge cells (exchange time counted as communication,
 * mb_pb_comm_seconds; skip_halo: no exchange) */
static int step(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st,
                const struct mb_pb_rect part[5], double *x, double *y)
{
    MPI_Request rq[8];
    int n = 0, rc = MPI_SUCCESS;
    if (!in->skip_halo) {
        double t0 = MPI_Wtime();
        rc = st->halo(in, state, x, rq, &n);
        mb_pb_comm_add(MPI_Wtime() - t0);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!empty(&part[0]))
        st->sweep(state, x, y, &part[0]);
    if (n) {
        double t0 = MPI_Wtime();
        rc = MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        mb_pb_comm_add(MPI_Wtime() - t0);
    }
    for (int p = 1; p < 5; p++)
        if (!empty(&part[p]))
            st->sweep(state, x, y, &part[p]);
    return rc;
}

int mb_pb_stencil_run(const struct mb_pb_inst *in, const void *state, const struct mb_pb_stencil *st)
{
    struct mb_pb_rect part[5];
    mb_pb_stencil_split(&st->upd, st->rl, st->cl, part);
    for (long long t = 1; t < in->s.tsteps; t++) {
        int rc = step(in, state, st, part, st->a, st->b);
        if (rc == MPI_SUCCESS)
            rc = step(in, state, st, part, st->b, st->a);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int mb_pb_halo2d_divides(const char *kernel, const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (s->d[0] % px || s->d[0] % py) {
        snprintf(why, len, "%s N=%lld: the %dx%d grid needs N %% %d and N %% %d == 0", kernel, s->d[0], px, py, px, py);
        return -1;
    }
    return 0;
}

int mb_pb_halo2d_init(struct mb_pb_inst *in, long long depth)
{
    const struct mb_pb_grid *g = in->g;
    struct mb_pb_halo2d *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    s->jface = MPI_DATATYPE_NULL;
    s->n = in->s.d[0], s->depth = depth, s->rl = s->n / g->px, s->cl = s->n / g->py, s->ld = (s->cl + 2) * depth;
    s->i0 = g->cx * s->rl, s->j0 = g->cy * s->cl;
    s->ilo = s->i0 == 0 ? 2 : 1, s->ihi = s->i0 + s->rl == s->n ? s->rl - 1 : s->rl;
    s->jlo = s->j0 == 0 ? 2 : 1, s->jhi = s->j0 + s->cl == s->n ? s->cl - 1 : s->cl;
    MPI_Cart_shift(g->cart, 0, 1, &s->north, &s->south);
    MPI_Cart_shift(g->cart, 1, 1, &s->west, &s->east);
    MPI_Type_vector((int)s->rl, (int)depth, (int)s->ld, MPI_DOUBLE, &s->jface);
    MPI_Type_commit(&s->jface);
    size_t cells = (size_t)((s->rl + 2) * s->ld);
    s->a = calloc(cells, sizeof(double));
    s->b = calloc(cells, sizeof(double));
    if (!s->a || !s->b) {
        snprintf(in->err, sizeof(in->err), "out of memory for a %lldx%lldx%lld block", s->rl, s->cl, depth);
        return -1;
    }
    in->nout = 2;
    in->out[0] = (struct mb_pb_block){.name = "A", .data = s->a + s->ld + depth, .rows = s->rl,
                                      .cols = s->cl * depth, .ld = s->ld, .row0 = s->i0, .col0 = s->j0 * depth};
    in->out[1] = in->out[0];
    in->out[1].name = "B", in->out[1].data = s->b + s->ld + depth;
    return 0;
}

void mb_pb_halo2d_clear(struct mb_pb_halo2d *h)
{
    size_t cells = (size_t)((h->rl + 2) * h->ld);
    memset(h->a, 0, cells * sizeof(double));
    memset(h->b, 0, cells * sizeof(double));
}

int mb_pb_halo2d_exchange(const struct mb_pb_inst *in, const void *state, double *x, MPI_Request *rq, int *n)
{
    const struct mb_pb_halo2d *s = state;
    MPI_Comm c = in->g->cart;
    long long ld = s->ld, d = s->depth, rl = s->rl, cl = s->cl;
    int face = (int)(cl * d);
    *n = 8;
    MPI_Irecv(x + d, face, MPI_DOUBLE, s->north, 0, c, &rq[0]);
    MPI_Irecv(x + (rl + 1) * ld + d, face, MPI_DOUBLE, s->south, 1, c, &rq[1]);
    MPI_Irecv(x + ld, 1, s->jface, s->west, 2, c, &rq[2]);
    MPI_Irecv(x + ld + (cl + 1) * d, 1, s->jface, s->east, 3, c, &rq[3]);
    MPI_Isend(x + ld + d, face, MPI_DOUBLE, s->north, 1, c, &rq[4]);
    MPI_Isend(x + rl * ld + d, face, MPI_DOUBLE, s->south, 0, c, &rq[5]);
    MPI_Isend(x + ld + d, 1, s->jface, s->west, 3, c, &rq[6]);
    return MPI_Isend(x + ld + cl * d, 1, s->jface, s->east, 2, c, &rq[7]);
}

int mb_pb_halo2d_run(struct mb_pb_inst *in,
                     void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r))
{
    const struct mb_pb_halo2d *s = in->priv;
    const struct mb_pb_stencil st = {.a = s->a, .b = s->b, .halo = mb_pb_halo2d_exchange, .sweep = sweep,
                                     .upd = {s->ilo, s->ihi, s->jlo, s->jhi}, .rl = s->rl, .cl = s->cl};
    return mb_pb_stencil_run(in, s, &st);
}

void mb_pb_halo2d_fini(struct mb_pb_inst *in)
{
    struct mb_pb_halo2d *s = in->priv;
    if (!s)
        return;
    if (s->jface != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->jface);
    free(s->a), free(s->b), free(s);
}

void mb_pb_halo2d_traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, double depth,
                          struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    long long side = s->d[0] / g->px > s->d[0] / g->py ? s->d[0] / g->px : s->d[0] / g->py;
    t->halos = 2.0 * (double)(s->tsteps - 1);
    t->halo_bytes = 8.0 * (double)side * depth;
}

struct sweep_call {
    const void *state;
    void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r);
    double *x, *y;
    const struct mb_pb_rect *r;
};

static void sweep_call(void *ctx, long k)
{
    struct sweep_call *c = ctx; /* back and forth between the two blocks */
    c->sweep(c->state, k & 1 ? c->y : c->x, k & 1 ? c->x : c->y, c->r);
}

double mb_pb_stencil_cell_rate(MPI_Comm comm, const void *state,
                               void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r),
                               double *x, double *y, const struct mb_pb_rect *r, double cells)
{
    struct sweep_call c = {state, sweep, x, y, r};
    /* 20 ms windows: hundreds of sweeps of jacobi_1d's and jacobi_2d's medium blocks, a few of heat_3d's */
    return mb_pb_window_cpu_rate(comm, 0.02, cells, sweep_call, &c);
}

double mb_pb_halo2d_cell_rate(struct mb_pb_inst *in, MPI_Comm comm, double per_column,
                              void (*sweep)(const void *state, const double *x, double *y, const struct mb_pb_rect *r))
{
    struct mb_pb_halo2d *h = in->priv;
    const struct mb_pb_rect r = {h->ilo, h->ihi, h->jlo, h->jhi}; /* what mb_pb_halo2d_run sweeps */
    double cells = (double)(h->ihi - h->ilo + 1) * (double)(h->jhi - h->jlo + 1) * per_column;
    return mb_pb_stencil_cell_rate(comm, h, sweep, h->a, h->b, &r, cells);
}
