/* Out-of-core tiled GEMM, C = A x B: A and B are stored tile by tile on the
 * striped volume, C (n x n floats) is accumulated in memory. Step s reads
 * tiles A(i,k) and B(k,j) as one batch and multiplies them with OpenBLAS;
 * in the async mode the next step's tiles are submitted before this one's
 * are waited for (CAM's double-buffered pattern; prefetch k keeps k steps
 * in flight with k + 1 buffers). Entries are multiples of
 * 1/4 in [-1, 1], so every sum is exact in float and double whatever the
 * order: C is checked exactly, by all its row and column sums (any
 * corrupted element changes them) and against an in-memory GEMM (every
 * entry up to n = 1024, sampled entries above). */
#include "ooc_io.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FULL_CHECK_N 1024
#define SAMPLES 2048
#define MAX_AHEAD 8
#define NSLOT (MAX_AHEAD + 1)

struct gemm {
    size_t n, t, nt, tb;     /* tb: bytes per tile */
    uint64_t seed, a_off, b_off, steps;
    float *c;
    int ahead, nslot;        /* steps read ahead; buffers = ahead + 1 */
    float *slot[NSLOT][2];   /* [buffer][A or B] */
    uint64_t slot_step[NSLOT];
    struct mb_aio_req reqs[NSLOT][2];
    struct ooc_op op[NSLOT];
    double *row_ref, *col_ref; /* exact row and column sums of A x B */
    float *ref;              /* n <= FULL_CHECK_N: the whole product */
    size_t *sample;          /* else: SAMPLES entries (i * n + j) */
    double *sample_ref;
    int mode;
};

static float gval(uint64_t seed, int which, size_t n, size_t r, size_t c)
{
    uint64_t h = mb_mix64(seed * 0x632be59bd9b4e019ULL + (uint64_t)which * 0x8cb92ba72f3d8dd7ULL + (uint64_t)r * n + c);
    return (float)((int)(h % 9) - 4) * 0.25f;
}

static uint64_t b_offset(size_t n) { return ((uint64_t)n * n * 4 + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1); }

static int gemm_validate(const struct mb_ooc_params *p, char *err, size_t errlen)
{
    if (p->prefetch < 0 || p->prefetch > MAX_AHEAD) {
        snprintf(err, errlen, "--prefetch: %d, must be 1 to %d", p->prefetch, MAX_AHEAD);
        return -1;
    }
    if (p->gemm_tile < 32 || p->gemm_tile > 1024 || p->gemm_tile % 32) {
        snprintf(err, errlen, "--gemm-tile: %zu, must be a multiple of 32 from 32 to 1024", p->gemm_tile);
        return -1;
    }
    if (p->gemm_n < p->gemm_tile || p->gemm_n % p->gemm_tile || p->gemm_n > 65536) {
        snprintf(err, errlen, "--gemm-n: %zu, must be a multiple of --gemm-tile %zu, at most 65536", p->gemm_n,
                 p->gemm_tile);
        return -1;
    }
    return 0;
}

static uint64_t gemm_volume(const struct mb_ooc_params *p)
{
    return b_offset(p->gemm_n) + (uint64_t)p->gemm_n * p->gemm_n * 4;
}

/* Tile (bi, bk) of matrix `which` (0: A, 1: B), row-major inside. */
static void fill_tile(float *dst, uint64_t seed, int which, size_t n, size_t t, size_t bi, size_t bk)
{
    for (size_t r = 0; r < t; r++)
        for (size_t c = 0; c < t; c++)
            dst[r * t + c] = gval(seed, which, n, bi * t + r, bk * t + c);
}

static uint64_t gemm_io(const struct mb_ooc_params *p)
{
    uint64_t nt = p->gemm_n / p->gemm_tile;
    return 2 * nt * nt * nt * (uint64_t)p->gemm_tile * p->gemm_tile * 4;
}

static int gemm_prepare(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    size_t n = p->gemm_n, t = p->gemm_tile, nt = n / t, tb = t * t * 4;
    float *buf = ooc_alloc(io, tb);
    int rc = buf ? 0 : ooc_nomem(err, errlen, "writing the GEMM input", tb);
    for (int which = 0; which < 2 && !rc; which++)
        for (size_t bi = 0; bi < nt && !rc; bi++)
            for (size_t bk = 0; bk < nt && !rc; bk++) {
                fill_tile(buf, p->seed, which, n, t, bi, bk);
                uint64_t off = (which ? b_offset(n) : 0) + (bi * nt + bk) * tb;
                rc = ooc_write_one(io, off, tb, buf, "writing the GEMM input", err, errlen);
            }
    ooc_free(io, buf);
    return rc;
}

static uint64_t gemm_corrupt(const struct mb_ooc_params *p)
{
    /* the sign/exponent byte of an element in the middle of A's first tile */
    size_t t = p->gemm_tile;
    return (uint64_t)((t / 2) * t + t / 3) * 4 + 3;
}

static int ahead_of(const struct mb_ooc_params *p) { return p->prefetch > 1 ? p->prefetch : 1; }

static size_t gemm_arena(const struct mb_ooc_params *p)
{
    return (size_t)(ahead_of(p) + 1) * 2 * p->gemm_tile * p->gemm_tile * 4;
}

static uint64_t gemm_image(const struct mb_ooc_params *p, uint64_t *load)
{
    return *load = gemm_volume(p);
}

static void gemm_close(void *st, struct ooc_io *io)
{
    struct gemm *g = st;
    for (int b = 0; b < g->nslot; b++)
        for (int m = 0; m < 2; m++)
            ooc_free(io, g->slot[b][m]);
    free(g->c);
    free(g->row_ref);
    free(g->col_ref);
    free(g->ref);
    free(g->sample);
    free(g->sample_ref);
    free(g);
}

/* The references, from the generator (never from the files). 0, or -1
 * out of memory. */
static int references(struct gemm *g)
{
    size_t n = g->n;
    double *acol = ooc_calloc(n, sizeof(double)), *brow = ooc_calloc(n, sizeof(double));
    g->row_ref = ooc_calloc(n, sizeof(double));
    g->col_ref = ooc_calloc(n, sizeof(double));
    if (!acol || !brow || !g->row_ref || !g->col_ref) {
        free(acol);
        free(brow);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++)
            acol[k] += gval(g->seed, 0, n, i, k);
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < n; j++) {
            double b = gval(g->seed, 1, n, k, j);
            g->col_ref[j] += acol[k] * b;
            brow[k] += b;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++)
            g->row_ref[i] += gval(g->seed, 0, n, i, k) * brow[k];
    free(acol);
    free(brow);
    if (n <= FULL_CHECK_N) { /* the in-memory GEMM */
        float *a = ooc_malloc(n * n * sizeof(float)), *b = ooc_malloc(n * n * sizeof(float));
        g->ref = ooc_calloc(n * n, sizeof(float));
        if (!a || !b || !g->ref) {
            free(a);
            free(b);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                a[i * n + j] = gval(g->seed, 0, n, i, j);
                b[i * n + j] = gval(g->seed, 1, n, i, j);
            }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a, (int)n, b,
                    (int)n, 0.0f, g->ref, (int)n);
        free(a);
        free(b);
        return 0;
    }
    g->sample = ooc_malloc(SAMPLES * sizeof(size_t));
    g->sample_ref = ooc_calloc(SAMPLES, sizeof(double));
    if (!g->sample || !g->sample_ref)
        return -1;
    for (size_t s = 0; s < SAMPLES; s++) {
        size_t i = (size_t)(mb_mix64(g->seed + 2 * s) % n), j = (size_t)(mb_mix64(g->seed + 2 * s + 1) % n);
        g->sample[s] = i * n + j;
        for (size_t k = 0; k < n; k++)
            g->sample_ref[s] += (double)gval(g->seed, 0, n, i, k) * gval(g->seed, 1, n, k, j);
    }
    return 0;
}

static void *gemm_open(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    struct gemm *g = ooc_calloc(1, sizeof(*g));
    if (!g) {
        ooc_nomem(err, errlen, "--gemm-n: the GEMM's state", sizeof(*g));
        return NULL;
    }
    g->n = p->gemm_n;
    g->t = p->gemm_tile;
    g->nt = g->n / g->t;
    g->tb = g->t * g->t * 4;
    g->seed = p->seed;
    g->a_off = 0;
    g->b_off = b_offset(g->n);
    g->steps = (uint64_t)g->nt * g->nt * g->nt;
    g->mode = io->mode;
    g->ahead = ahead_of(p);
    g->nslot = g->ahead + 1;
    if (!(g->c = ooc_memalign(64, g->n * g->n * sizeof(float)))) {
        snprintf(err, errlen, "--gemm-n: no memory for C (%zu x %zu floats)", g->n, g->n);
        gemm_close(g, io);
        return NULL;
    }
    for (int b = 0; b < g->nslot; b++)
        for (int m = 0; m < 2; m++)
            if (!(g->slot[b][m] = ooc_alloc(io, g->tb))) {
                ooc_nomem(err, errlen, "--gemm-tile, --prefetch: the tile buffers", g->tb);
                gemm_close(g, io);
                return NULL;
            }
    if (references(g) != 0) {
        snprintf(err, errlen, "--gemm-n: no memory for the reference product (%zu x %zu)", g->n, g->n);
        gemm_close(g, io);
        return NULL;
    }
    return g;
}

static int gemm_reset(void *st, struct ooc_io *io, long long iter, char *err, size_t errlen)
{
    (void)io, (void)iter, (void)err, (void)errlen;
    struct gemm *g = st;
    memset(g->c, 0xff, g->n * g->n * sizeof(float)); /* NaN: the run must clear and fill it */
    for (int b = 0; b < NSLOT; b++)
        g->slot_step[b] = UINT64_MAX;
    return 0;
}

static void step_tiles(const struct gemm *g, uint64_t s, size_t *i, size_t *j, size_t *k)
{
    *i = (size_t)(s / (g->nt * g->nt));
    *j = (size_t)(s / g->nt % g->nt);
    *k = (size_t)(s % g->nt);
}

static int start_step(struct gemm *g, struct ooc_io *io, uint64_t s)
{
    int b = (int)(s % (uint64_t)g->nslot);
    size_t i, j, k;
    step_tiles(g, s, &i, &j, &k);
    g->reqs[b][0] = (struct mb_aio_req){g->a_off + (i * g->nt + k) * g->tb, g->tb, g->slot[b][0], MB_AIO_READ, 0};
    g->reqs[b][1] = (struct mb_aio_req){g->b_off + (k * g->nt + j) * g->tb, g->tb, g->slot[b][1], MB_AIO_READ, 0};
    g->op[b] = (struct ooc_op){.reqs = g->reqs[b], .n = 2};
    g->slot_step[b] = s;
    return ooc_start(io, &g->op[b]);
}

static int gemm_run(void *st, struct ooc_io *io, char *err, size_t errlen)
{
    struct gemm *g = st;
    size_t n = g->n, t = g->t;
    memset(g->c, 0, n * n * sizeof(float));
    int rc = 0;
    /* the first `ahead` steps in flight; then step s + ahead goes into the
     * buffer step s - 1 used, which is computed already */
    for (uint64_t s = 0; io->mode != MB_OOC_COMPUTE && s < (uint64_t)g->ahead && s < g->steps && !rc; s++)
        if ((rc = start_step(g, io, s)) != 0)
            ooc_op_fail(err, errlen, "reading tiles", &g->op[s]);
    for (uint64_t s = 0; s < g->steps && !rc; s++) {
        int b = (int)(s % (uint64_t)g->nslot);
        size_t i, j, k;
        step_tiles(g, s, &i, &j, &k);
        const float *a, *bt;
        if (io->mode == MB_OOC_COMPUTE) { /* the tiles are in memory already */
            a = (const float *)(io->mem + g->a_off + (i * g->nt + k) * g->tb);
            bt = (const float *)(io->mem + g->b_off + (k * g->nt + j) * g->tb);
        } else {
            uint64_t next = s + (uint64_t)g->ahead;
            if (next < g->steps && (rc = start_step(g, io, next)) != 0) {
                ooc_op_fail(err, errlen, "reading tiles", &g->op[next % (uint64_t)g->nslot]);
                break;
            }
            if ((rc = ooc_finish(io, &g->op[b])) != 0) {
                ooc_op_fail(err, errlen, "reading tiles", &g->op[b]);
                break;
            }
            a = g->slot[b][0];
            bt = g->slot[b][1];
        }
        if (io->mode != MB_OOC_IO)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)t, (int)t, (int)t, 1.0f, a, (int)t, bt,
                        (int)t, 1.0f, g->c + i * t * n + j * t, (int)n);
    }
    if (rc) /* nothing may land in the buffers after the run */
        for (int b = 0; b < g->nslot; b++)
            ooc_finish(io, &g->op[b]);
    return rc ? -1 : 0;
}

static int check_tiles(struct gemm *g, char *msg, size_t len)
{
    float *want = ooc_malloc(g->tb);
    if (!want) {
        ooc_nomem(msg, len, "checking the tiles", g->tb);
        return 1;
    }
    for (int b = 0; b < g->nslot; b++) {
        if (g->slot_step[b] == UINT64_MAX)
            continue;
        size_t i, j, k;
        step_tiles(g, g->slot_step[b], &i, &j, &k);
        for (int m = 0; m < 2; m++) {
            fill_tile(want, g->seed, m, g->n, g->t, m ? k : i, m ? j : k);
            if (memcmp(want, g->slot[b][m], g->tb) != 0) {
                snprintf(msg, len, "tile %s(%zu,%zu) read at step %llu differs from the input", m ? "B" : "A",
                         m ? k : i, m ? j : k, (unsigned long long)g->slot_step[b]);
                free(want);
                return 1;
            }
        }
    }
    free(want);
    return 0;
}

static int gemm_check(void *st, struct ooc_io *io, char *msg, size_t len)
{
    struct gemm *g = st;
    size_t n = g->n;
    if (io->mode == MB_OOC_IO) /* no product: the last steps' tiles, one per buffer */
        return check_tiles(g, msg, len);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < n; j++)
            s += g->c[i * n + j];
        if (s != g->row_ref[i]) {
            snprintf(msg, len, "row %zu of C sums to %.17g, expected %.17g (tile row %zu)", i, s, g->row_ref[i],
                     i / g->t);
            return 1;
        }
    }
    for (size_t j = 0; j < n; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += g->c[i * n + j];
        if (s != g->col_ref[j]) {
            snprintf(msg, len, "column %zu of C sums to %.17g, expected %.17g (tile column %zu)", j, s,
                     g->col_ref[j], j / g->t);
            return 1;
        }
    }
    if (g->ref) {
        for (size_t e = 0; e < n * n; e++)
            if (g->c[e] != g->ref[e]) {
                snprintf(msg, len, "C[%zu][%zu] = %g, the in-memory GEMM gives %g", e / n, e % n, g->c[e],
                         g->ref[e]);
                return 1;
            }
    } else {
        for (size_t s = 0; s < SAMPLES; s++)
            if ((double)g->c[g->sample[s]] != g->sample_ref[s]) {
                snprintf(msg, len, "C[%zu][%zu] = %g, expected %g", g->sample[s] / n, g->sample[s] % n,
                         g->c[g->sample[s]], g->sample_ref[s]);
                return 1;
            }
    }
    return 0;
}

static void gemm_stats(const void *st, struct mb_ooc_stats *s)
{
    const struct gemm *g = st;
    s->read_bytes = g->mode == MB_OOC_COMPUTE ? 0 : 2 * g->steps * g->tb;
    s->requests = g->mode == MB_OOC_COMPUTE ? 0 : 2 * g->steps;
    s->flops = g->mode == MB_OOC_IO ? 0 : 2.0 * (double)g->n * (double)g->n * (double)g->n;
}

const struct ooc_app ooc_gemm_app = {
    .validate = gemm_validate,
    .volume_bytes = gemm_volume,
    .io_bytes = gemm_io,
    .prepare = gemm_prepare,
    .corrupt_offset = gemm_corrupt,
    .arena_bytes = gemm_arena,
    .image_bytes = gemm_image,
    .open = gemm_open,
    .reset = gemm_reset,
    .run = gemm_run,
    .check = gemm_check,
    .stats = gemm_stats,
    .close = gemm_close,
};
