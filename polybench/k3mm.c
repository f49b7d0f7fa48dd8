/* k3mm (polybench 3mm), G = (A B)(C D) with A M x K, B K x N, C N x R,
 * D R x S; variant summa: E = A B, F = C D, G = E F, three SUMMA products
 * (summa.h; E's and F's blocks are the third product's A and B). */
#include "summa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct k3mm {
    long long m, n, k, r, s;
    double *a, *b, *c, *d, *e, *f, *g;
    struct mb_pb_summa su;
};

/* polybench's init (ni = M, nj = N, nk = K, nm = R, nl = S), at global indices */
static double a_at(const void *p, long long i, long long k) { const struct k3mm *s = p; return (double)((i * k + 1) % s->m) / (5.0 * (double)s->m); }
static double b_at(const void *p, long long k, long long j) { const struct k3mm *s = p; return (double)((k * (j + 1) + 2) % s->n) / (5.0 * (double)s->n); }
static double c_at(const void *p, long long j, long long m) { const struct k3mm *s = p; return (double)(j * (m + 3) % s->s) / (5.0 * (double)s->s); }
static double d_at(const void *p, long long m, long long l) { const struct k3mm *s = p; return (double)((m * (l + 2) + 2) % s->k) / (5.0 * (double)s->k); }

static int divides(const struct mb_pb_sizes *z, int px, int py, char *why, size_t len)
{
    long long m = z->d[0], n = z->d[1], k = z->d[2], r = z->d[3], s = z->d[4];
    if (mb_pb_summa_divides(m, n, k, px, py) && mb_pb_summa_divides(n, s, r, px, py) &&
        mb_pb_summa_divides(m, s, n, px, py))
        return 0;
    snprintf(why, len, "k3mm M=%lld, N=%lld, K=%lld, R=%lld, S=%lld: the %dx%d grid needs M and N %% %d, N and S %% %d, "
             "K, R and N %% %lld == 0", m, n, k, r, s, px, py, px, py, mb_pb_lcm(px, py));
    return -1;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct k3mm *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    s->m = in->s.d[0], s->n = in->s.d[1], s->k = in->s.d[2], s->r = in->s.d[3], s->s = in->s.d[4];
    s->a = mb_pb_block_alloc(g, s->m, s->k);
    s->b = mb_pb_block_alloc(g, s->k, s->n);
    s->c = mb_pb_block_alloc(g, s->n, s->r);
    s->d = mb_pb_block_alloc(g, s->r, s->s);
    s->e = mb_pb_block_alloc(g, s->m, s->n);
    s->f = mb_pb_block_alloc(g, s->n, s->s);
    s->g = mb_pb_block_alloc(g, s->m, s->s);
    long long maxm = s->m > s->n ? s->m : s->n, maxn = s->n > s->s ? s->n : s->s;
    long long maxk = s->k > s->r ? s->k : s->r;
    maxk = maxk > s->n ? maxk : s->n;
    s->su.pblas = strcmp(in->k->variant, "pblas") == 0; /* pdgemm instead of SUMMA (pblas.c) */
    if (mb_pb_summa_init(&s->su, g, maxm, maxn, maxk) != 0 || !s->a || !s->b || !s->c || !s->d || !s->e || !s->f ||
        !s->g) {
        snprintf(in->err, sizeof(in->err), "out of memory for the blocks");
        return -1;
    }
    in->nout = 1;
    in->out[0] = mb_pb_block_out("G", s->g, g, s->m, s->s);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct k3mm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    mb_pb_block_fill(g, s->a, s->m, s->k, a_at, s);
    mb_pb_block_fill(g, s->b, s->k, s->n, b_at, s);
    mb_pb_block_fill(g, s->c, s->n, s->r, c_at, s);
    mb_pb_block_fill(g, s->d, s->r, s->s, d_at, s);
}

static int run(struct mb_pb_inst *in)
{
    struct k3mm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    int rc = mb_pb_summa(&s->su, g, s->m, s->n, s->k, 1.0, s->a, s->b, 0.0, s->e);
    if (rc == MPI_SUCCESS)
        rc = mb_pb_summa(&s->su, g, s->n, s->s, s->r, 1.0, s->c, s->d, 0.0, s->f);
    return rc == MPI_SUCCESS ? mb_pb_summa(&s->su, g, s->m, s->s, s->n, 1.0, s->e, s->f, 0.0, s->g) : rc;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    (void)o;
    const struct mb_pb_block *b = &in->out[0];
    const struct k3mm *s = in->priv;
    double *e = malloc((size_t)s->n * sizeof(double)), *f = malloc((size_t)(s->n * b->cols) * sizeof(double));
    if (!e || !f) { /* NaN: the check then fails */
        for (long long x = 0; x < b->rows * b->cols; x++)
            ref[x] = 0.0 / 0.0;
        free(e), free(f);
        return;
    }
    for (long long j = 0; j < s->n; j++) /* F's columns of this block */
        for (long long l = 0; l < b->cols; l++) {
            double sum = 0;
            for (long long m = 0; m < s->r; m++)
                sum += c_at(s, j, m) * d_at(s, m, b->col0 + l);
            f[j * b->cols + l] = sum;
        }
    for (long long i = 0; i < b->rows; i++) {
        for (long long j = 0; j < s->n; j++) {
            double sum = 0;
            for (long long k = 0; k < s->k; k++)
                sum += a_at(s, b->row0 + i, k) * b_at(s, k, j);
            e[j] = sum;
        }
        for (long long l = 0; l < b->cols; l++) {
            double sum = 0;
            for (long long j = 0; j < s->n; j++)
                sum += e[j] * f[j * b->cols + l];
            ref[i * b->cols + l] = sum;
        }
    }
    free(e), free(f);
}

static double flops(const struct mb_pb_sizes *z)
{
    double m = z->d[0], n = z->d[1], k = z->d[2], r = z->d[3], s = z->d[4];
    return 2.0 * (m * n * k + n * s * r + m * s * n);
}

/* the arrays (A, B, C, D, E, F, G) once: the working set */
static double footprint(const struct mb_pb_sizes *z)
{
    double m = z->d[0], n = z->d[1], k = z->d[2], r = z->d[3], s = z->d[4];
    return 8.0 * (m * k + k * n + n * r + r * s + m * n + n * s + m * s);
}

static double bytes(const struct mb_pb_sizes *z)
{
    double m = z->d[0], n = z->d[1], k = z->d[2], r = z->d[3], s = z->d[4];
    return 8.0 * (m * k + k * n + n * r + r * s + 2.0 * m * n + 2.0 * n * s + m * s);
}

/* of those written: E (M x N), F (N x S), G (M x S); read: A, B, C, D, E, F */
static double written(const struct mb_pb_sizes *z)
{
    double m = z->d[0], n = z->d[1], s = z->d[4];
    return 8.0 * (m * n + n * s + m * s);
}

static void traffic(const struct mb_pb_sizes *z, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    mb_pb_summa_traffic(z->d[0], z->d[1], z->d[2], g, t);
    mb_pb_summa_traffic(z->d[1], z->d[4], z->d[3], g, t);
    mb_pb_summa_traffic(z->d[0], z->d[4], z->d[1], g, t);
}

static void fini(struct mb_pb_inst *in)
{
    struct k3mm *s = in->priv;
    if (!s)
        return;
    free(s->a), free(s->b), free(s->c), free(s->d), free(s->e), free(s->f), free(s->g);
    mb_pb_summa_fini(&s->su, in->g);
    free(s);
}

/* the local products of one call (the model's dgemm rate is theirs): SUMMA's panels or pdgemm's updates */
static int gemms(const struct mb_pb_sizes *z, const struct mb_pb_grid *g, struct mb_pb_gemm *out, int pblas)
{
    const long long p[][3] = {
        {z->d[0], z->d[1], z->d[2]},
        {z->d[1], z->d[4], z->d[3]},
        {z->d[0], z->d[4], z->d[1]},
    };
    return mb_pb_products_gemms(p, (int)(sizeof(p) / sizeof(p[0])), g, pblas, out);
}
static int gemms_summa(const struct mb_pb_sizes *z, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(z, g, out, 0); }
static int gemms_pblas(const struct mb_pb_sizes *z, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(z, g, out, 1); }

/* one row per variant: SUMMA through the registry, or ScaLAPACK's pdgemm */
#define ROW(VARIANT, GEMMS) { \
    .name = "k3mm", .variant = VARIANT, .nd = 5, .dim_names = {"M", "N", "K", "R", "S"}, \
    .base = {6400, 7200, 4000, 4400, 4800}, .scaled = 31, .scale = MB_PB_CBRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = traffic, .fini = fini, \
    .gemms = GEMMS, \
}
const struct mb_pb_kernel mb_pb_kernel_k3mm = ROW("summa", gemms_summa);
const struct mb_pb_kernel mb_pb_kernel_k3mm_pblas = ROW("pblas", gemms_pblas);
