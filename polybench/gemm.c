/* gemm, C = alpha A B + beta C (polybench; A M x K, B K x N), variant
 * summa: one SUMMA product on DaCe's blocks (summa.h). */
#include "summa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 1.5
#define BETA 1.2

struct gemm {
    long long m, n, k;
    double *a, *b, *c;
    struct mb_pb_summa su;
};

/* polybench's init, at global indices */
static double a_at(const void *p, long long i, long long k) { const struct gemm *s = p; return (double)(i * (k + 1) % s->k) / (double)s->k; }
static double b_at(const void *p, long long k, long long j) { const struct gemm *s = p; return (double)(k * (j + 2) % s->n) / (double)s->n; }
static double c_at(const void *p, long long i, long long j) { const struct gemm *s = p; return (double)((i * j + 1) % s->m) / (double)s->m; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (mb_pb_summa_divides(s->d[0], s->d[1], s->d[2], px, py))
        return 0;
    snprintf(why, len, "gemm M=%lld, N=%lld, K=%lld: the %dx%d grid needs M %% %d, N %% %d and K %% %lld == 0",
             s->d[0], s->d[1], s->d[2], px, py, px, py, mb_pb_lcm(px, py));
    return -1;
}

static int init(struct mb_pb_inst *in)
{
    const struct mb_pb_grid *g = in->g;
    struct gemm *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    s->m = in->s.d[0], s->n = in->s.d[1], s->k = in->s.d[2];
    long long ml = s->m / g->px, nl = s->n / g->py;
    s->a = mb_pb_block_alloc(g, s->m, s->k);
    s->b = mb_pb_block_alloc(g, s->k, s->n);
    s->c = mb_pb_block_alloc(g, s->m, s->n);
    s->su.pblas = strcmp(in->k->variant, "pblas") == 0; /* pdgemm instead of SUMMA (pblas.c) */
    if (mb_pb_summa_init(&s->su, g, s->m, s->n, s->k) != 0 || !s->a || !s->b || !s->c) {
        snprintf(in->err, sizeof(in->err), "out of memory for the %lldx%lld blocks", ml, nl);
        return -1;
    }
    in->nout = 1;
    in->out[0] = mb_pb_block_out("C", s->c, g, s->m, s->n);
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    const struct mb_pb_grid *g = in->g;
    mb_pb_block_fill(g, s->a, s->m, s->k, a_at, s);
    mb_pb_block_fill(g, s->b, s->k, s->n, b_at, s);
    mb_pb_block_fill(g, s->c, s->m, s->n, c_at, s);
}

static int run(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    return mb_pb_summa(&s->su, in->g, s->m, s->n, s->k, ALPHA, s->a, s->b, BETA, s->c);
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

/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * s->d[2] + (double)s->d[2] * s->d[1] + (double)s->d[0] * s->d[1]); }

static double bytes(const struct mb_pb_sizes *s)
{
    return 8.0 * ((double)s->d[0] * s->d[2] + (double)s->d[2] * s->d[1] + 2.0 * s->d[0] * s->d[1]);
}

/* of those written: C once (M x N); read: A, B, C */
static double written(const struct mb_pb_sizes *s) { return 8.0 * (double)s->d[0] * (double)s->d[1]; }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    memset(t, 0, sizeof(*t));
    mb_pb_summa_traffic(s->d[0], s->d[1], s->d[2], g, t);
}

static void fini(struct mb_pb_inst *in)
{
    struct gemm *s = in->priv;
    if (!s)
        return;
    free(s->a), free(s->b), free(s->c);
    mb_pb_summa_fini(&s->su, in->g);
    free(s);
}

/* the local products of one call (the model's dgemm rate is theirs): SUMMA's panels or pdgemm's updates */
static int gemms(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out, int pblas)
{
    const long long p[][3] = {
        {s->d[0], s->d[1], s->d[2]},
    };
    return mb_pb_products_gemms(p, (int)(sizeof(p) / sizeof(p[0])), g, pblas, out);
}
static int gemms_summa(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(s, g, out, 0); }
static int gemms_pblas(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out) { return gemms(s, g, out, 1); }

/* one row per variant: SUMMA through the registry, or ScaLAPACK's pdgemm */
#define ROW(VARIANT, GEMMS) { \
    .name = "gemm", .variant = VARIANT, .nd = 3, .dim_names = {"M", "N", "K"}, \
    .base = {8000, 9200, 5200}, .scaled = 7, .scale = MB_PB_CBRT, .divisor = MB_PB_DIV_MAXGRID, \
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference, \
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = traffic, .fini = fini, \
    .gemms = GEMMS, \
}
const struct mb_pb_kernel mb_pb_kernel_gemm = ROW("summa", gemms_summa);
const struct mb_pb_kernel mb_pb_kernel_gemm_pblas = ROW("pblas", gemms_pblas);
