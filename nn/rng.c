/* Deterministic random numbers: xoshiro256** seeded by splitmix64. */
#include "nn.h"
#include "../common/common.h"

#include <math.h>

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

double nn_rng_normal(struct nn_rng *r)
{
    double u1 = nn_rng_uniform(r), u2 = nn_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void nn_fill_normal(void *dst, enum nn_dtype dt, size_t n, double std, struct nn_rng *r)
{
    float buf[1024];
    for (size_t i = 0; i < n; i += 1024) {
        size_t len = n - i < 1024 ? n - i : 1024;
        for (size_t k = 0; k < len; k++)
            buf[k] = (float)(std * nn_rng_normal(r));
        nn_store_f32((char *)dst + i * nn_dtype_size(dt), dt, buf, len);
    }
}

void nn_fill_hashed(float *x, size_t n, uint64_t seed, double scale)
{
#pragma omp parallel for schedule(static) if (n >= 1 << 20)
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * (2.0 * (double)((i * 2654435761u + seed * 40503u) % 1000003u) / 1000003.0 - 1.0));
}
