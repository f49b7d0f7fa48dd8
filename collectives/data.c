/* Validation data for the collectives: inputs that every dtype and op hold
 * exactly, the expected outputs, element comparison, and the test fault's
 * element and position. */
#include "coll.h"
#include "../common/common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Values are arithmetic progressions modulo small numbers, generated
 * incrementally (no division per element). */
struct progression {
    uint64_t cur, step, mod;
};

static struct progression progression(uint64_t base, uint64_t step, uint64_t mod, uint64_t first)
{
    struct progression g = {(base + (step % mod) * (first % mod)) % mod, step % mod, mod};
    return g;
}

static inline uint64_t next(struct progression *g)
{
    uint64_t v = g->cur;
    g->cur += g->step;
    if (g->cur >= g->mod)
        g->cur -= g->mod;
    return v;
}

void mb_coll_data_init(struct mb_coll_data *d, int reducing, enum mb_coll_op op, enum mb_coll_dtype dtype,
                       int nranks, uint64_t seed)
{
    d->reducing = reducing;
    d->op = op;
    d->nranks = nranks;
    d->seed = seed;
    /* Sums of p values in [-m/2, m/2) stay within the dtype's exact range. */
    int64_t limit = dtype == MB_COLL_INT8 ? 127 : dtype == MB_COLL_FLOAT ? (1 << 24) : (1 << 30);
    int64_t m = 2 * limit / nranks;
    d->sum_mod = m < 1 ? 1 : m > 1000 ? 1000 : m;
}

void mb_coll_data_row(const struct mb_coll_data *d, int r, uint64_t first, size_t n, long long iter,
                      int64_t *out)
{
    uint64_t t = (uint64_t)iter, ur = (uint64_t)r, p = (uint64_t)d->nranks, seed = d->seed;
    if (!d->reducing) {
        struct progression g = progression(ur * 131 + t * 3 + seed, 7, 251, first);
        for (size_t i = 0; i < n; i++)
            out[i] = (int64_t)next(&g) - 125;
        return;
    }
    switch (d->op) {
    case MB_COLL_SUM: {
        uint64_t m = (uint64_t)d->sum_mod;
        struct progression g = progression(ur * 7 + t * 5 + seed, 3, m, first);
        for (size_t i = 0; i < n; i++)
            out[i] = (int64_t)next(&g) - d->sum_mod / 2;
        return;
    }
    case MB_COLL_PROD: { /* one rank gives 2, maybe another -1, the rest 1: products are +-2 */
        struct progression two = progression(t + seed, 1, p, first);
        struct progression neg = progression(t + seed + 1, 3, p + 1, first);
        for (size_t i = 0; i < n; i++) {
            uint64_t a = next(&two), b = next(&neg);
            out[i] = a == ur ? 2 : b == ur ? -1 : 1;
        }
        return;
    }
    default: {
        struct progression g = progression(ur * 7 + t * 5 + seed, 13, 101, first);
        for (size_t i = 0; i < n; i++)
            out[i] = (int64_t)next(&g) - 50;
        return;
    }
    }
}

void mb_coll_data_reduced(const struct mb_coll_data *d, uint64_t first, size_t n, long long iter, int64_t *acc,
                          int64_t *tmp)
{
    mb_coll_data_row(d, 0, first, n, iter, acc);
    for (int r = 1; r < d->nranks; r++) {
        mb_coll_data_row(d, r, first, n, iter, tmp);
        switch (d->op) {
        case MB_COLL_SUM: for (size_t i = 0; i < n; i++) acc[i] += tmp[i]; break;
        case MB_COLL_PROD: for (size_t i = 0; i < n; i++) acc[i] *= tmp[i]; break;
        case MB_COLL_MIN: for (size_t i = 0; i < n; i++) acc[i] = tmp[i] < acc[i] ? tmp[i] : acc[i]; break;
        case MB_COLL_MAX: for (size_t i = 0; i < n; i++) acc[i] = tmp[i] > acc[i] ? tmp[i] : acc[i]; break;
        case MB_COLL_NOP: break;
        }
    }
}

#define FOR_DTYPE(d, T, body)                                                                          \
    switch (d) {                                                                                       \
    case MB_COLL_INT8: { typedef int8_t T; body; } break;                                              \
    case MB_COLL_INT32: { typedef int32_t T; body; } break;                                            \
    case MB_COLL_INT64: { typedef int64_t T; body; } break;                                            \
    case MB_COLL_FLOAT: { typedef float T; body; } break;                                              \
    case MB_COLL_DOUBLE: { typedef double T; body; } break;                                            \
    case MB_COLL_NDTYPE: break;                                                                        \
    }

void mb_coll_store_row(enum mb_coll_dtype d, void *buf, const int64_t *v, size_t n)
{
    FOR_DTYPE(d, T, for (size_t i = 0; i < n; i++) ((T *)buf)[i] = (T)v[i]);
}

size_t mb_coll_compare_row(enum mb_coll_dtype d, const void *buf, const int64_t *want, size_t n)
{
    size_t i = 0;
    FOR_DTYPE(d, T, for (; i < n; i++) if ((double)((const T *)buf)[i] != (double)want[i]) break);
    return i;
}

double mb_coll_load(enum mb_coll_dtype d, const void *buf, size_t i)
{
    double v = NAN;
    FOR_DTYPE(d, T, v = (double)((const T *)buf)[i]);
    return v;
}

static void store(enum mb_coll_dtype d, void *buf, size_t i, int64_t v)
{
    FOR_DTYPE(d, T, ((T *)buf)[i] = (T)v);
}

void mb_coll_store_fault(enum mb_coll_dtype d, void *buf, size_t i, const char *fault)
{
    int nan_ = fault && !strcmp(fault, "nan"), inf_ = fault && !strcmp(fault, "inf");
    if ((nan_ || inf_) && (d == MB_COLL_FLOAT || d == MB_COLL_DOUBLE)) {
        if (d == MB_COLL_FLOAT)
            ((float *)buf)[i] = nan_ ? NAN : INFINITY;
        else
            ((double *)buf)[i] = nan_ ? NAN : INFINITY;
        return;
    }
    store(d, buf, i, (int64_t)mb_coll_load(d, buf, i) + 1);
}

#define CHUNK 4096 /* elements generated at a time: stays in L1/L2 */

void mb_coll_data_fill(const struct mb_coll_data *d, enum mb_coll_dtype dtype, int r, uint64_t first, size_t n,
                       long long iter, void *buf)
{
    int64_t v[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t len = n - i < CHUNK ? n - i : CHUNK;
        mb_coll_data_row(d, r, first + i, len, iter, v);
        mb_coll_store_row(dtype, (char *)buf + i * mb_coll_dtype_size(dtype), v, len);
    }
}

int mb_coll_data_verify(const struct mb_coll_data *d, enum mb_coll_layout layout, enum mb_coll_dtype dtype,
                        const void *buf, size_t n, size_t blk, int rank, int root, long long iter, char *msg,
                        size_t mlen)
{
    static _Thread_local int64_t want[CHUNK], tmp[CHUNK];
    int gathered = layout == MB_COLL_OUT_GATHERED || layout == MB_COLL_OUT_EXCHANGED;
    for (size_t i = 0; i < n;) {
        size_t len = n - i < CHUNK ? n - i : CHUNK;
        /* gathered outputs: a segment never crosses a source rank's block */
        if (gathered)
            len = len < blk - i % blk ? len : blk - i % blk;
        switch (layout) {
        case MB_COLL_OUT_NONE: return 0;
        case MB_COLL_OUT_REDUCED:
        case MB_COLL_OUT_REDUCED_ROOT: mb_coll_data_reduced(d, i, len, iter, want, tmp); break;
        case MB_COLL_OUT_REDUCED_BLOCK: mb_coll_data_reduced(d, (size_t)rank * blk + i, len, iter, want, tmp); break;
        case MB_COLL_OUT_GATHERED: mb_coll_data_row(d, (int)(i / blk), i % blk, len, iter, want); break;
        case MB_COLL_OUT_EXCHANGED:
            mb_coll_data_row(d, (int)(i / blk), (size_t)rank * blk + i % blk, len, iter, want);
            break;
        case MB_COLL_OUT_ROOT: mb_coll_data_row(d, root, i, len, iter, want); break;
        }
        const char *seg = (const char *)buf + i * mb_coll_dtype_size(dtype);
        size_t bad = mb_coll_compare_row(dtype, seg, want, len);
        if (bad < len) {
            snprintf(msg, mlen, "first wrong element at index %zu: got %.17g, expected %lld", i + bad,
                     mb_coll_load(dtype, seg, bad), (long long)want[bad]);
            return 1;
        }
        i += len;
    }
    return 0;
}

long long mb_coll_fault_call(uint64_t seed, size_t count, int coll, int dtype, int algo, int op, int inplace,
                             long long calls)
{
    uint64_t h = mb_mix64(seed ^ mb_mix64(count * 64 + (uint64_t)coll * 8 + (uint64_t)dtype) ^
                          mb_mix64((uint64_t)algo * 4 + (uint64_t)op * 2 + (uint64_t)inplace));
    return (long long)(h % (uint64_t)(calls > 0 ? calls : 1));
}
