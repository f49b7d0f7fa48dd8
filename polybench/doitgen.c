/* doitgen (polybench; A K x M x N, C4 N x N): A[r] = A[r] C4 for every r,
 * K split over the P ranks (DaCe's P x 1 grid), C4 replicated: no
 * communication, so it measures the ranks' shared compute and memory. */
#include "polybench.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct doitgen {
    long long k, m, n, kl, r0;
    double *a, *c4, *sum; /* kl x m x n, n x n, m x n */
};

static double a_at(long long n, long long r, long long q, long long p) { return (double)((r * q + p) % n) / (double)n; }
static double c4_at(long long n, long long s, long long p) { return (double)(s * p % n) / (double)n; }

static int divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len)
{
    if (s->d[0] % ((long long)px * py)) {
        snprintf(why, len, "doitgen K=%lld: %d ranks need K %% %d == 0", s->d[0], px * py, px * py);
        return -1;
    }
    return 0;
}

static int init(struct mb_pb_inst *in)
{
    struct doitgen *s = calloc(1, sizeof(*s));
    in->priv = s;
    if (!s) {
        snprintf(in->err, sizeof(in->err), "out of memory");
        return -1;
    }
    int me;
    MPI_Comm_rank(in->g->line, &me);
    s->k = in->s.d[0], s->m = in->s.d[1], s->n = in->s.d[2], s->kl = s->k / in->g->p, s->r0 = me * s->kl;
    s->a = malloc((size_t)(s->kl * s->m * s->n) * sizeof(double));
    s->c4 = malloc((size_t)(s->n * s->n) * sizeof(double));
    s->sum = malloc((size_t)(s->m * s->n) * sizeof(double));
    if (!s->a || !s->c4 || !s->sum) {
        snprintf(in->err, sizeof(in->err), "out of memory for %lld x %lld x %lld", s->kl, s->m, s->n);
        return -1;
    }
    /* the block as (K x M) rows of N: global row r * M + q */
    in->nout = 1;
    in->out[0] = (struct mb_pb_block){.name = "A", .data = s->a, .rows = s->kl * s->m, .cols = s->n, .ld = s->n,
                                      .row0 = s->r0 * s->m};
    return 0;
}

static void reset(struct mb_pb_inst *in)
{
    struct doitgen *s = in->priv;
    for (long long r = 0; r < s->kl; r++)
        for (long long q = 0; q < s->m; q++)
            for (long long p = 0; p < s->n; p++)
                s->a[(r * s->m + q) * s->n + p] = a_at(s->n, s->r0 + r, q, p);
    for (long long i = 0; i < s->n; i++)
        for (long long p = 0; p < s->n; p++)
            s->c4[i * s->n + p] = c4_at(s->n, i, p);
}

static int run(struct mb_pb_inst *in)
{
    struct doitgen *s = in->priv;
    size_t plane = (size_t)(s->m * s->n);
    for (long long r = 0; r < s->kl; r++) {
        double *ar = s->a + (size_t)r * plane;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->n, 1.0, ar, (int)s->n,
                    s->c4, (int)s->n, 0.0, s->sum, (int)s->n);
        memcpy(ar, s->sum, plane * sizeof(double));
    }
    return MPI_SUCCESS;
}

static void reference(const struct mb_pb_inst *in, int o, double *ref)
{
    (void)o;
    const struct doitgen *s = in->priv;
    for (long long r = 0; r < s->kl; r++)
        for (long long q = 0; q < s->m; q++)
            for (long long p = 0; p < s->n; p++) {
                double sum = 0;
                for (long long x = 0; x < s->n; x++)
                    sum += a_at(s->n, s->r0 + r, q, x) * c4_at(s->n, x, p);
                ref[(r * s->m + q) * s->n + p] = sum;
            }
}

static double flops(const struct mb_pb_sizes *s) { return 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2] * (double)s->d[2]; }

/* A read and written, the copy back through sum, C4 once */
/* the arrays once: the working set */
static double footprint(const struct mb_pb_sizes *s) { return 8.0 * ((double)s->d[0] * (double)s->d[1] * (double)s->d[2] + (double)s->d[2] * (double)s->d[2] + (double)s->d[2]); }

static double bytes(const struct mb_pb_sizes *s)
{
    return 8.0 * (4.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2] + (double)s->d[2] * (double)s->d[2]);
}

/* of those written: sum and A, once each per plane (2 K M N); read: A, sum, C4 */
static double written(const struct mb_pb_sizes *s) { return 8.0 * 2.0 * (double)s->d[0] * (double)s->d[1] * (double)s->d[2]; }

static void traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t)
{
    (void)s, (void)g;
    memset(t, 0, sizeof(*t));
}

static void fini(struct mb_pb_inst *in)
{
    struct doitgen *s = in->priv;
    if (s)
        free(s->a), free(s->c4), free(s->sum);
    free(s);
}

/* the local products of one call (the model's dgemm rate is theirs): K/P planes, each M x N times C4 (N x N)
 * into the one sum buffer run() reuses: K/P distinct A, one C */
static int gemms(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out)
{
    long long kl = s->d[0] / g->p;
    out[0] = (struct mb_pb_gemm){s->d[1], s->d[2], s->d[2], kl, kl, 1};
    return kl > 0 ? 1 : 0;
}

const struct mb_pb_kernel mb_pb_kernel_doitgen = {
    .name = "doitgen", .variant = "local", .nd = 3, .dim_names = {"K", "M", "N"},
    .base = {128, 512, 512}, .scaled = 1, .scale = MB_PB_LINEAR, .divisor = MB_PB_DIV_P,
    .divides = divides, .init = init, .reset = reset, .run = run, .reference = reference,
    .flops = flops, .bytes = bytes, .written = written, .footprint = footprint, .traffic = traffic, .fini = fini,
    .gemms = gemms,
};
