/* Deterministic random numbers: xoshiro256** seeded by splitmix64. */
#include "nn.h"
#include "../common/common.h"

#include <math.h>
#include <stdlib.h>

void nn_rng_seed(struct nn_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = mb_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t nn_rng_next(struct nn_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double nn_rng_uniform(struct nn_rng *r) { return (double)(nn_rng_next(r) >> 11) * 0x1.0p-53; }

static double box_muller(double u1, double u2)
{
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double nn_rng_normal(struct nn_rng *r)
{
    double u1 = nn_rng_uniform(r);
    return box_muller(u1, nn_rng_uniform(r));
}

/* The stream stays serial (xoshiro has no cheap skip to draw i); its
 * transform, log and cos, was most of a 161M-parameter model's setup and
 * runs on every core. Same values as nn_rng_normal one at a time. */
void nn_normal_f32(float *x, size_t n, double std, struct nn_rng *r)
{
    enum { CHUNK = 1 << 16 };
    uint64_t *u = n > CHUNK / 4 ? malloc(2 * CHUNK * sizeof(*u)) : NULL;
    if (!u) {
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(std * nn_rng_normal(r));
        return;
    }
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t len = n - i < CHUNK ? n - i : CHUNK;
        for (size_t k = 0; k < 2 * len; k++)
            u[k] = nn_rng_next(r);
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < len; k++)
            x[i + k] = (float)(std * box_muller((double)(u[2 * k] >> 11) * 0x1.0p-53,
                                                (double)(u[2 * k + 1] >> 11) * 0x1.0p-53));
    }
    free(u);
}

void nn_fill_normal(void *dst, enum nn_dtype dt, size_t n, double std, struct nn_rng *r)
{
    /* large chunks so nn_normal_f32 runs parallel; a stack one without memory */
    float small[1024], *buf = n > 1024 ? malloc((n < 1u << 18 ? n : 1u << 18) * sizeof(float)) : NULL;
    size_t chunk = buf ? 1u << 18 : 1024;
    if (!buf)
        buf = small;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        nn_normal_f32(buf, len, std, r);
        nn_store_f32((char *)dst + i * nn_dtype_size(dt), dt, buf, len);
    }
    if (buf != small)
        free(buf);
}

void nn_fill_hashed(float *x, size_t n, uint64_t seed, double scale)
{
#pragma omp parallel for schedule(static) if (n >= 1 << 20)
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * (2.0 * (double)((i * 2654435761u + seed * 40503u) % 1000003u) / 1000003.0 - 1.0));
}
