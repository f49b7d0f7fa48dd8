/* NumPy's np.random.default_rng(seed).random(): SeedSequence(seed) hashes
 * the seed into four 64-bit words, PCG64 (128-bit LCG, XSL-RR output)
 * starts from them, and each double is (next64 >> 11) * 2^-53, in C
 * order, one stream for every array drawn from one generator. Written from
 * NumPy's bit_generator.pyx (SeedSequence) and pcg64.h; the unit test
 * checks the first draws of default_rng(42) that NumPy prints. */
#include "shared_ops.h"

#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u

static uint32_t hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    return value ^ (value >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    uint32_t r = MIX_MULT_L * x - MIX_MULT_R * y;
    return r ^ (r >> 16);
}

static const unsigned __int128 PCG_MULT = ((unsigned __int128)0x2360ed051fc65da4ULL << 64) | 0x4385df649fccf645ULL;

static void step(struct pbs_rng *r) { r->state = r->state * PCG_MULT + r->inc; }

void pbs_rng_seed(struct pbs_rng *r, uint32_t seed)
{
    /* SeedSequence: a pool of four words from the entropy [seed] */
    uint32_t pool[4], hc = INIT_A;
    for (int i = 0; i < 4; i++)
        pool[i] = hashmix(i == 0 ? seed : 0, &hc);
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++)
            if (s != d)
                pool[d] = mix(pool[d], hashmix(pool[s], &hc));
    /* generate_state(4, uint64): eight 32-bit words, little-endian pairs */
    uint32_t w[8];
    uint32_t hb = INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % 4] ^ hb;
        hb *= MULT_B;
        v *= hb;
        w[i] = v ^ (v >> 16);
    }
    uint64_t s[4];
    for (int i = 0; i < 4; i++)
        s[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    /* pcg64_set_seed: state from s[0] (high), s[1]; increment from s[2], s[3] */
    unsigned __int128 init = (unsigned __int128)s[0] << 64 | s[1], seq = (unsigned __int128)s[2] << 64 | s[3];
    r->state = 0;
    r->inc = seq << 1 | 1;
    step(r);
    r->state += init;
    step(r);
}

static uint64_t next64(struct pbs_rng *r)
{
    step(r);
    uint64_t x = (uint64_t)(r->state >> 64) ^ (uint64_t)r->state;
    unsigned rot = (unsigned)(r->state >> 122);
    return (x >> rot) | (x << ((64 - rot) & 63));
}

void pbs_rng_random(struct pbs_rng *r, double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(next64(r) >> 11) * 0x1.0p-53;
}
