/* k2mm (polybench 2mm), D = alpha A B C + beta D with A M x K, B K x N,
 * C N x R, D M x R; variant summa: tmp = alpha A B, then D = tmp C + beta D,
 * two SUMMA products (summa.h; tmp's blocks are the second product's A). */
#include "summa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 1.5
#define BETA 1.2

struct k2mm {
    long long m, n, k, r;
    double *a, *b, *c, *d, *tmp;
    struct mb_pb_summa su;
};

/* polybench's init (ni = M, nj = N, nk = K, nl = R), at global indices */
static double a_at(const void *p, long long i, long long k) { const struct k2mm *s = p; return (double)((i * k + 1) % s->m) / (double)s->m; }
static double b_at(const void *p, long long k, long long j) { const struct k2mm *s = p; return (double)(k * (j + 1) % s->n) / (double)s->n; }
static double c_at(const void *p, long long j, long long l) { const struct k2mm *s = p; return (double)((j * (l + 3) + 1) % s->r) / (double)s->r; }
static double d_at(const void *p, long long i, long long l) { const struct k2mm *s = p; return (double)(i * (l + 2) % s->k) / (double)s->k; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    long long m = s->d[0], n = s->d[1], k = s->d[2], r = s->d[3];
    if (mb_pb_summa_divides(m, n, k, px, py) && mb_pb_summa_divides(m, r, n, px, py))
        return 0;
    snprintf(why, len, "k2mm M=%lld, N=%lld, K=%lld, R=%lld: the %dx%d grid needs M %% %d, N and R %% %d, K and N %% %lld == 0",
             m, n, k, r, px, py, px, py, mb_pb_lcm(px, py));
    return -1;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct k2mm *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    s->m = in->s.d[0], s->n = in->s.d[1], s->k = in->s.d[2], s->r = in->s.d[3];
    s->a = mb_pb_block_alloc(g, s->m, s->k);
    s->b = mb_pb_block_alloc(g, s->k, s->n);
    s->c = mb_pb_block_alloc(g, s->n, s->r);
    s->d = mb_pb_block_alloc(g, s->m, s->r);
    s->tmp = mb_pb_block_alloc(g, s->m, s->n);
    long long maxn = s->n > s->r ? s->n : s->r, maxk = s->k > s->n ? s->k : s->n;
    s->su.pblas = strcmp(in->k->variant, "pblas") == 0; /* pdgemm instead of SUMMA (pblas.c) */
    if (mb_pb_summa_init(&s->su, g, s->m, maxn, maxk) != 0 || !s->a || !s->b || !s->c || !s->d || !s->tmp) {
        snprintf(in->err, sizeof(in->err), "out of memory for the blocks");
        return -1;
    }
    in->nout = 1;
    in->out[0] = mb_pb_block_out("D", s->d, g, s->m, s->r);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct k2mm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    mb_pb_block_fill(g, s->a, s->m, s->k, a_at, s);
    mb_pb_block_fill(g, s->b, s->k, s->n, b_at, s);
    mb_pb_block_fill(g, s->c, s->n, s->r, c_at, s);
    mb_pb_block_fill(g, s->d, s->m, s->r, d_at, s);
}

static int run(struct mb_pb_inst *in)
{
    struct k2mm *s = in->priv;
    int rc = mb_pb_summa(&s->su, in->g, s->m, s->n, s->k, ALPHA, s->a, s->b, 0.0, s->tmp);
    return rc == MPI_SUCCESS ? mb_pb_summa(&s->su, in->g, s->m, s->r, s->n, 1.0, s->tmp, s->c, BETA, s->d) : rc;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    (void)o;
    const struct mb_pb_block *b = &in->out[0];
    const struct k2mm *s = in->priv;
    double *tmp = malloc((size_t)s->n * sizeof(double));
    for (long long i = 0; i < b->rows; i++) {
        long long gi = b->row0 + i;
        for (long long j = 0; j < s->n && tmp; j++) {
            double sum = 0;
            for (long long k = 0; k < s->k; k++)
                sum += a_at(s, gi, k) * b_at(s, k, j);
            tmp[j] = ALPHA * sum;
        }
        for (long long l = 0; l < b->cols; l++) {
            double sum = 0;
            for (long long j = 0; j < s->n && tmp; j++)
                sum += tmp[j] * c_at(s, j, b->col0 + l);
            ref[i * b->cols + l] = tmp ? BETA * d_at(s, gi, b->col0 + l) + sum : 0.0 / 0.0;
        }
    }
    free(tmp);
}

static double flops(const struct mb_pb_sizes *s)
{
    double m = s->d[0], n = s->d[1], k = s->d[2], r = s->d[3];
    return 2.0 * m * n * k + 2.0 * m * r * n + m * n + 2.0 * m * r;
}

/* the arrays (A, B, C, D, tmp) once: the working set */
static double footprint(const struct mb_pb_sizes *s)
{
    double m = s->d[0], n = s->d[1], k = s->d[2], r = s->d[3];
    return 8.0 * (m * k + k * n + n * r + m * r + m * n);
}

static double bytes(const struct mb_pb_sizes *s)
{
    double m = s->d[0], n = s->d[1], k = s->d[2], r = s->d[3];
    return 8.0 * (m * k + k * n + n * r + 2.0 * m * r + 2.0 * m * n);
}

/* of those written: tmp (M x N) and D (M x R); read: A, B, C, D, tmp */
static double written(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[1] + (double)s->d[0] * (double)s->d[3]); }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    mb_pb_summa_traffic(s->d[0], s->d[1], s->d[2], g, t);
    mb_pb_summa_traffic(s->d[0], s->d[3], s->d[1], g, t);
}

static void fini(struct mb_pb_inst *in)
{
    struct k2mm *s = in->priv;
    if (!s)
        return;
    free(s->a), free(s->b), free(s->c), free(s->d), free(s->tmp);
    mb_pb_summa_fini(&s->su, in->g);
    free(s);
}

/* the local products of one call (the model's dgemm rate is theirs): SUMMA's panels or pdgemm's updates */
static int gemms(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out, int pblas)
{
    const long long p[][3] = {
        {s->d[0], s->d[1], s->d[2]},
        {s->d[0], s->d[3], s->d[1]},
    };
    return mb_pb_products_gemms(p, (int)(sizeof(p) / sizeof(p[0])), g, pblas, out);
}
static int gemms_summa(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(s, g, out, 0); }
static int gemms_pblas(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(s, g, out, 1); }

/* one row per variant: SUMMA through the registry, or ScaLAPACK's pdgemm */
#define ROW(VARIANT, GEMMS) { \
    .name = "k2mm", .variant = VARIANT, .nd = 4, .dim_names = {"M", "N", "K", "R"}, \
    .base = {6400, 7200, 4400, 4800}, .scaled = 15, .scale = MB_PB_CBRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = traffic, .fini = fini, \
    .gemms = GEMMS, \
}
const struct mb_pb_kernel mb_pb_kernel_k2mm = ROW("summa", gemms_summa);
const struct mb_pb_kernel mb_pb_kernel_k2mm_pblas = ROW("pblas", gemms_pblas);
