/* Random row gather: the feature-extraction step of GNN training. A
 * feature matrix (rows x dim floats, each row padded to a multiple of 512
 * bytes so it lands directly) lives on the striped volume; each batch
 * gathers rows drawn with Zipf popularity into a dense batch, then a dense
 * layer (batch x dim times dim x dim, OpenBLAS) stands for the training
 * step. async: batch b+1 (up to b+prefetch) is submitted before batch b
 * is waited for (CAM's sampling -> read -> train pipeline). Every gathered row is compared with
 * the features regenerated from the seed. */
#include "ooc_io.h"

#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS (1ULL << 26)

/* ---- the reusable pieces ------------------------------------------------ */

size_t mb_ooc_row_bytes(size_t dim) { return (dim * 4 + MB_AIO_BLOCK - 1) / MB_AIO_BLOCK * MB_AIO_BLOCK; }

void mb_ooc_gather_reqs(const struct mb_ooc_features *f, const uint64_t *ids, size_t n, void *out,
                        struct mb_aio_req *reqs)
{
    for (size_t i = 0; i < n; i++)
        reqs[i] = (struct mb_aio_req){f->offset + ids[i] * f->row_bytes, f->row_bytes,
                                      (char *)out + i * f->row_bytes, MB_AIO_READ, 0};
}

int mb_ooc_gather_submit(struct mb_aio *a, const struct mb_ooc_features *f, const uint64_t *ids, size_t n,
                         void *out, struct mb_aio_req *reqs, mb_aio_ticket *t)
{
    mb_ooc_gather_reqs(f, ids, n, out, reqs);
    return mb_aio_submit(a, reqs, n, t);
}

struct mb_ooc_zipf {
    uint64_t n, mul, add;  /* rank -> row: (rank * mul + add) mod n */
    double *cdf;           /* NULL: uniform */
};

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

struct mb_ooc_zipf *mb_ooc_zipf_new(uint64_t n, double s, uint64_t seed)
{
    if (n == 0 || n > MAX_ROWS)
        return NULL;
    struct mb_ooc_zipf *z = ooc_calloc(1, sizeof(*z));
    if (!z)
        return NULL;
    z->n = n;
    z->mul = n > 1 ? mb_mix64(seed) % n : 0;
    while (n > 1 && (z->mul == 0 || gcd(z->mul, n) != 1))
        z->mul = (z->mul + 1) % n;
    z->add = mb_mix64(seed + 1) % n;
    if (s > 0) {
        z->cdf = ooc_malloc(n * sizeof(double));
        if (!z->cdf) {
            free(z);
            return NULL;
        }
        double sum = 0;
        for (uint64_t r = 0; r < n; r++)
            z->cdf[r] = sum += pow((double)(r + 1), -s);
        for (uint64_t r = 0; r < n; r++)
            z->cdf[r] /= sum;
    }
    return z;
}

uint64_t mb_ooc_zipf_row(const struct mb_ooc_zipf *z, uint64_t rank)
{
    return (uint64_t)(((unsigned __int128)rank * z->mul + z->add) % z->n);
}

uint64_t mb_ooc_zipf_next(const struct mb_ooc_zipf *z, uint64_t *state)
{
    uint64_t x = mb_mix64(*state += 0x9e3779b97f4a7c15ULL);
    if (!z->cdf)
        return mb_ooc_zipf_row(z, x % z->n);
    double u = (double)(x >> 11) * 0x1.0p-53;
    uint64_t lo = 0, hi = z->n - 1;
    while (lo < hi) { /* the first rank whose cdf exceeds u */
        uint64_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return mb_ooc_zipf_row(z, lo);
}

void mb_ooc_zipf_free(struct mb_ooc_zipf *z)
{
    if (z)
        free(z->cdf);
    free(z);
}

/* ---- the application ----------------------------------------------------- */

struct gather {
    struct mb_ooc_features f;
    size_t batch, nbatch;
    uint64_t seed;
    struct mb_ooc_zipf *z;
    uint64_t *ids;           /* nbatch * batch */
    char *bufs;              /* nbatch * batch rows */
    float *w, *y;            /* the dense layer: dim x dim weights, batch x dim output */
    struct mb_aio_req *reqs;
    struct ooc_op *ops;
    int mode, ahead;
};

static float feature(uint64_t seed, size_t dim, uint64_t row, size_t c)
{
    uint64_t h = mb_mix64(seed * 0x94d049bb133111ebULL + row * dim + c);
    return (float)((int)(h % 2001) - 1000) * 0.001f;
}

static void fill_row(char *dst, uint64_t seed, size_t dim, size_t row_bytes, uint64_t row)
{
    float *x = (float *)dst;
    for (size_t c = 0; c < dim; c++)
        x[c] = feature(seed, dim, row, c);
    memset(dst + dim * 4, 0, row_bytes - dim * 4);
}

static int gather_validate(const struct mb_ooc_params *p, char *err, size_t errlen)
{
    if (p->prefetch < 0 || p->prefetch > 64) {
        snprintf(err, errlen, "--prefetch: %d, must be 1 to 64", p->prefetch);
        return -1;
    }
    if (p->gather_rows < 1 || p->gather_rows > MAX_ROWS) {
        snprintf(err, errlen, "--gather-rows: %" PRIu64 ", must be 1 to %llu", p->gather_rows, MAX_ROWS);
        return -1;
    }
    if (p->gather_dim < 1 || p->gather_dim > 65536) {
        snprintf(err, errlen, "--gather-dim: %zu, must be 1 to 65536", p->gather_dim);
        return -1;
    }
    if (!(p->zipf >= 0 && p->zipf <= 10)) {
        snprintf(err, errlen, "--zipf: %g, must be 0 (uniform) to 10", p->zipf);
        return -1;
    }
    double bytes = (double)p->gather_batch * (double)p->gather_batches * (double)mb_ooc_row_bytes(p->gather_dim);
    if (bytes > (double)(1ULL << 30)) {
        snprintf(err, errlen, "--gather-batch x --gather-batches x row size: %.0f bytes of batches, at most 1 GiB",
                 bytes);
        return -1;
    }
    return 0;
}

static uint64_t gather_volume(const struct mb_ooc_params *p)
{
    return p->gather_rows * mb_ooc_row_bytes(p->gather_dim);
}

static uint64_t gather_io(const struct mb_ooc_params *p)
{
    return (uint64_t)p->gather_batch * p->gather_batches * mb_ooc_row_bytes(p->gather_dim);
}

static int gather_prepare(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    size_t rb = mb_ooc_row_bytes(p->gather_dim), per = (1u << 20) / rb ? (1u << 20) / rb : 1;
    char *buf = ooc_alloc(io, per * rb);
    int rc = buf ? 0 : ooc_nomem(err, errlen, "writing the features", per * rb);
    for (uint64_t r = 0; r < p->gather_rows && !rc; r += per) {
        size_t k = p->gather_rows - r < per ? (size_t)(p->gather_rows - r) : per;
        for (size_t i = 0; i < k; i++)
            fill_row(buf + i * rb, p->seed, p->gather_dim, rb, r + i);
        rc = ooc_write_one(io, r * rb, k * rb, buf, "writing the features", err, errlen);
    }
    ooc_free(io, buf);
    return rc;
}

static uint64_t gather_corrupt(const struct mb_ooc_params *p)
{
    /* the hottest row: every batch of a Zipf draw holds it */
    struct mb_ooc_zipf *z = mb_ooc_zipf_new(p->gather_rows, p->zipf, p->seed);
    uint64_t row = z ? mb_ooc_zipf_row(z, 0) : 0; /* out of memory: row 0, still a row read */
    mb_ooc_zipf_free(z);
    return row * mb_ooc_row_bytes(p->gather_dim) + 3;
}

static size_t gather_arena(const struct mb_ooc_params *p)
{
    return p->gather_batch * p->gather_batches * mb_ooc_row_bytes(p->gather_dim);
}

static uint64_t gather_image(const struct mb_ooc_params *p, uint64_t *load) { return *load = gather_volume(p); }

static void gather_close(void *st, struct ooc_io *io)
{
    struct gather *g = st;
    ooc_free(io, g->bufs);
    mb_ooc_zipf_free(g->z);
    free(g->ids);
    free(g->w);
    free(g->y);
    free(g->reqs);
    free(g->ops);
    free(g);
}

static void *gather_open(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    struct gather *g = ooc_calloc(1, sizeof(*g));
    if (!g) {
        ooc_nomem(err, errlen, "--gather-rows: the gather's state", sizeof(*g));
        return NULL;
    }
    g->f = (struct mb_ooc_features){0, p->gather_rows, p->gather_dim, mb_ooc_row_bytes(p->gather_dim)};
    g->batch = p->gather_batch;
    g->nbatch = p->gather_batches;
    g->seed = p->seed;
    g->mode = io->mode;
    g->ahead = p->prefetch > 1 ? p->prefetch : 1;
    size_t total = g->batch * g->nbatch;
    g->z = mb_ooc_zipf_new(p->gather_rows, p->zipf, p->seed);
    g->ids = ooc_calloc(total, sizeof(uint64_t));
    g->bufs = ooc_alloc(io, total * g->f.row_bytes);
    g->w = ooc_malloc(g->f.dim * g->f.dim * sizeof(float));
    g->y = ooc_malloc(g->batch * g->f.dim * sizeof(float));
    g->reqs = ooc_calloc(total, sizeof(*g->reqs));
    g->ops = ooc_calloc(g->nbatch, sizeof(*g->ops));
    if (!g->z || !g->ids || !g->bufs || !g->w || !g->y || !g->reqs || !g->ops) {
        snprintf(err, errlen, "--gather-rows, --gather-batch: out of memory (%zu rows of %zu bytes in batches)",
                 total, g->f.row_bytes);
        gather_close(g, io);
        return NULL;
    }
    for (size_t i = 0; i < g->f.dim * g->f.dim; i++)
        g->w[i] = feature(p->seed + 7, g->f.dim, i / g->f.dim, i % g->f.dim);
    return g;
}

/* This iteration's sampled rows; the batches poisoned. */
static int gather_reset(void *st, struct ooc_io *io, long long iter, char *err, size_t errlen)
{
    (void)io, (void)err, (void)errlen;
    struct gather *g = st;
    uint64_t state = mb_mix64(g->seed ^ ((uint64_t)iter * 0x2545f4914f6cdd1dULL));
    size_t total = g->batch * g->nbatch;
    for (size_t i = 0; i < total; i++)
        g->ids[i] = mb_ooc_zipf_next(g->z, &state);
    memset(g->bufs, 0xa5, total * g->f.row_bytes);
    return 0;
}

static int gather_run(void *st, struct ooc_io *io, char *err, size_t errlen)
{
    struct gather *g = st;
    size_t rb = g->f.row_bytes, ld = rb / 4;
    for (size_t b = 0; b < g->nbatch; b++) {
        mb_ooc_gather_reqs(&g->f, g->ids + b * g->batch, g->batch, g->bufs + b * g->batch * rb,
                           g->reqs + b * g->batch);
        g->ops[b] = (struct ooc_op){.reqs = g->reqs + b * g->batch, .n = g->batch};
    }
    int rc = 0;
    size_t bad = 0, ahead = (size_t)g->ahead;
    for (size_t b = 0; b < ahead && b < g->nbatch && !rc; b++)
        if ((rc = ooc_start(io, &g->ops[b])) != 0)
            bad = b;
    for (size_t b = 0; b < g->nbatch && !rc; b++) {
        if (b + ahead < g->nbatch && (rc = ooc_start(io, &g->ops[b + ahead])) != 0) {
            bad = b + ahead;
            break;
        }
        if ((rc = ooc_finish(io, &g->ops[b])) != 0) {
            bad = b;
            break;
        }
        if (io->mode != MB_OOC_IO)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->batch, (int)g->f.dim, (int)g->f.dim,
                        1.0f, (const float *)(g->bufs + b * g->batch * rb), (int)ld, g->w, (int)g->f.dim, 0.0f,
                        g->y, (int)g->f.dim);
    }
    if (rc) {
        ooc_op_fail(err, errlen, "gathering rows", &g->ops[bad]);
        for (size_t b = 0; b < g->nbatch; b++)
            ooc_finish(io, &g->ops[b]);
        return -1;
    }
    return 0;
}

static int gather_check(void *st, struct ooc_io *io, char *msg, size_t len)
{
    (void)io;
    struct gather *g = st;
    size_t rb = g->f.row_bytes, total = g->batch * g->nbatch;
    char *want = ooc_malloc(rb);
    if (!want) {
        ooc_nomem(msg, len, "checking the rows", rb);
        return 1;
    }
    for (size_t i = 0; i < total; i++) {
        fill_row(want, g->seed, g->f.dim, rb, g->ids[i]);
        const char *got = g->bufs + i * rb;
        if (memcmp(want, got, g->f.dim * 4) != 0) {
            size_t c = 0;
            while (c < g->f.dim && memcmp(want + 4 * c, got + 4 * c, 4) == 0)
                c++;
            snprintf(msg, len, "batch %zu, position %zu: row %" PRIu64 " column %zu is %g, the feature is %g", i / g->batch,
                     i % g->batch, g->ids[i], c, (double)((const float *)got)[c], (double)((const float *)want)[c]);
            free(want);
            return 1;
        }
    }
    free(want);
    return 0;
}

static void gather_stats(const void *st, struct mb_ooc_stats *s)
{
    const struct gather *g = st;
    int mem = g->mode == MB_OOC_COMPUTE;
    s->read_bytes = mem ? 0 : (uint64_t)g->batch * g->nbatch * g->f.row_bytes;
    s->requests = mem ? 0 : (uint64_t)g->batch * g->nbatch;
    s->flops = g->mode == MB_OOC_IO ? 0 : 2.0 * (double)g->batch * (double)g->nbatch * (double)g->f.dim * (double)g->f.dim;
}

const struct ooc_app ooc_gather_app = {
    .validate = gather_validate,
    .volume_bytes = gather_volume,
    .io_bytes = gather_io,
    .prepare = gather_prepare,
    .corrupt_offset = gather_corrupt,
    .arena_bytes = gather_arena,
    .image_bytes = gather_image,
    .open = gather_open,
    .reset = gather_reset,
    .run = gather_run,
    .check = gather_check,
    .stats = gather_stats,
    .close = gather_close,
};
