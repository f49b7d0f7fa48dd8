/* gemm, C = alpha A B + beta C (polybench), variant summa: A (M x K) in
 * M/Px x K/Py blocks, B (K x N) in K/Px x N/Py, C in M/Px x N/Py, as
 * DaCe distributes them. K is cut into lcm(Px, Py) panels; panel t of A
 * is broadcast along the grid row from the column that holds it, panel t
 * of B along the grid column from the row that holds it (row and column
 * communicators from MPI_Cart_sub, broadcasts through the registry), and
 * every rank adds its A panel x B panel with dgemm. */
#include "polybench.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 1.5
#define BETA 1.2

struct gemm {
    long long m, n, k, ml, nl, kx, ky, panels, w;
    double *a, *b, *c, *apanel, *bpanel;
};

static long long gcd(long long a, long long b) { return b ? gcd(b, a % b) : a; }
static long long lcm(long long a, long long b) { return a / gcd(a, b) * b; }

/* polybench's init, at global indices */
static double a_at(const struct gemm *s, long long i, long long k) { return (double)(i * (k + 1) % s->k) / (double)s->k; }
static double b_at(const struct gemm *s, long long k, long long j) { return (double)(k * (j + 2) % s->n) / (double)s->n; }
static double c_at(const struct gemm *s, long long i, long long j) { return (double)((i * j + 1) % s->m) / (double)s->m; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    long long l = lcm(px, py);
    if (s->d[0] % px || s->d[1] % py || s->d[2] % l) {
        snprintf(why, len, "gemm M=%lld, N=%lld, K=%lld: the %dx%d grid needs M %% %d, N %% %d and K %% %lld == 0",
                 s->d[0], s->d[1], s->d[2], px, py, px, py, l);
        return -1;
    }
    return 0;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct gemm *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    in->priv = s;
    s->m = in->s.d[0], s->n = in->s.d[1], s->k = in->s.d[2];
    s->ml = s->m / g->px, s->nl = s->n / g->py, s->kx = s->k / g->px, s->ky = s->k / g->py;
    s->panels = lcm(g->px, g->py), s->w = s->k / s->panels;
    s->a = malloc((size_t)(s->ml * s->ky) * sizeof(double));
    s->b = malloc((size_t)(s->kx * s->nl) * sizeof(double));
    s->c = malloc((size_t)(s->ml * s->nl) * sizeof(double));
    /* every rank allocates both (registered buffers are collective) */
    s->apanel = mb_pb_buf(g, MB_PB_ROW, (size_t)(s->ml * s->w));
    s->bpanel = mb_pb_buf(g, MB_PB_COL, (size_t)(s->w * s->nl));
    if (!s->a || !s->b || !s->c || !s->apanel || !s->bpanel) {
        snprintf(in->err, sizeof(in->err), "out of memory for the %lldx%lld blocks", s->ml, s->nl);
        return -1;
    }
    in->nout = 1;
    in->out[0] = (struct mb_pb_block){.name = "C", .data = s->c, .rows = s->ml, .cols = s->nl, .ld = s->nl,
                                      .row0 = g->cx * s->ml, .col0 = g->cy * s->nl};
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    for (long long i = 0; i < s->ml; i++)
        for (long long k = 0; k < s->ky; k++)
            s->a[i * s->ky + k] = a_at(s, g->cx * s->ml + i, g->cy * s->ky + k);
    for (long long k = 0; k < s->kx; k++)
        for (long long j = 0; j < s->nl; j++)
            s->b[k * s->nl + j] = b_at(s, g->cx * s->kx + k, g->cy * s->nl + j);
    for (long long i = 0; i < s->ml; i++)
        for (long long j = 0; j < s->nl; j++)
            s->c[i * s->nl + j] = c_at(s, g->cx * s->ml + i, g->cy * s->nl + j);
}

static int run(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    for (long long t = 0; t < s->panels; t++) {
        long long k0 = t * s->w;
        int acol = (int)(k0 / s->ky), brow = (int)(k0 / s->kx);
        if (g->cy == acol)
            for (long long i = 0; i < s->ml; i++)
                memcpy(s->apanel + i * s->w, s->a + i * s->ky + (k0 - acol * s->ky), (size_t)s->w * sizeof(double));
        if (g->cx == brow)
            memcpy(s->bpanel, s->b + (k0 - brow * s->kx) * s->nl, (size_t)(s->w * s->nl) * sizeof(double));
        int rc = mb_pb_bcast(g, MB_PB_ROW, s->apanel, (size_t)(s->ml * s->w), acol);
        if (rc == MPI_SUCCESS)
            rc = mb_pb_bcast(g, MB_PB_COL, s->bpanel, (size_t)(s->w * s->nl), brow);
        if (rc != MPI_SUCCESS)
            return rc;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->ml, (int)s->nl, (int)s->w, ALPHA,
                    s->apanel, (int)s->w, s->bpanel, (int)s->nl, t == 0 ? BETA : 1.0, s->c, (int)s->nl);
    }
    return MPI_SUCCESS;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    (void)o;
    const struct mb_pb_block *b = &in->out[0];
    const struct gemm *s = in->priv;
    for (long long i = 0; i < b->rows; i++)
        for (long long j = 0; j < b->cols; j++) {
            long long gi = b->row0 + i, gj = b->col0 + j;
            double sum = 0;
            for (long long k = 0; k < s->k; k++)
                sum += a_at(s, gi, k) * b_at(s, k, gj);
            ref[i * b->cols + j] = BETA * c_at(s, gi, gj) + ALPHA * sum;
        }
}

static double flops(const struct mb_pb_sizes *s) { return 2.0 * s->d[0] * s->d[1] * s->d[2] + 2.0 * s->d[0] * s->d[1]; }

static double bytes(const struct mb_pb_sizes *s)
{
    return 8.0 * ((double)s->d[0] * s->d[2] + (double)s->d[2] * s->d[1] + 2.0 * s->d[0] * s->d[1]);
}

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    long long panels = lcm(g->px, g->py), w = s->d[2] / panels;
    memset(t, 0, sizeof(*t));
    t->ncoll = 2;
    t->coll[0].kind = t->coll[1].kind = MB_COLL_BCAST;
    t->coll[0].axis = MB_PB_ROW, t->coll[0].count = (size_t)(s->d[0] / g->px * w), t->coll[0].calls = (double)panels;
    t->coll[1].axis = MB_PB_COL, t->coll[1].count = (size_t)(w * (s->d[1] / g->py)), t->coll[1].calls = (double)panels;
}

static void fini(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    if (!s)
        return;
    free(s->a), free(s->b), free(s->c);
    mb_pb_buf_free(in->g, MB_PB_ROW, s->apanel);
    mb_pb_buf_free(in->g, MB_PB_COL, s->bpanel);
    free(s);
}

const struct mb_pb_kernel mb_pb_kernel_gemm = {
    .name = "gemm", .variant = "summa", .nd = 3, .dim_names = {"M", "N", "K"},
    .base = {8000, 9200, 5200}, .scaled = 7, .scale = MB_PB_CBRT, .divisor = MB_PB_DIV_MAXGRID,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .traffic = traffic, .fini = fini,
};
