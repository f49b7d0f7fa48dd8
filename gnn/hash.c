/* Counter-based hashing: the generator, the row verifier and the sampler
 * all derive their randomness from (seed, indices), never from a stream,
 * so results do not depend on how work is split over threads or ranks. */
#include "gnn.h"
#include "../common/common.h"

#include <math.h>

uint64_t gnn_hash4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = mb_mix64(seed ^ 0x6a09e667f3bcc909ULL);
    h = mb_mix64(h ^ a);
    h = mb_mix64(h ^ (b + 0x3c6ef372fe94f82bULL));
    return mb_mix64(h ^ (c + 0xa54ff53a5f1d36f1ULL));
}

/* Bijection on [0, 2^scale): rounds of (odd multiply + add) and xor-shift,
 * each invertible modulo 2^scale. */
void gnn_scrambler_init(struct gnn_scrambler *s, uint64_t seed, int scale)
{
    s->mask = scale >= 64 ? ~0ULL : ((1ULL << scale) - 1);
    s->sh = scale / 2 > 0 ? scale / 2 : 1;
    for (int r = 0; r < 3; r++) {
        uint64_t k = gnn_hash4(seed, 0x5c7a3b1eULL, (uint64_t)r, 0);
        s->mul[r] = k | 1;
        s->add[r] = k >> 17;
    }
}

uint64_t gnn_scramble(uint64_t seed, int scale, uint64_t x)
{
    struct gnn_scrambler s;
    gnn_scrambler_init(&s, seed, scale);
    return gnn_scramble_fast(&s, x);
}

/* Graph500 initiator as 32-bit thresholds. */
#define P32 4294967296.0
static const uint64_t T_AB = (uint64_t)(0.76 * P32);            /* A+B */
static const uint64_t T_A_AB = (uint64_t)(0.57 / 0.76 * P32);   /* A/(A+B) */
static const uint64_t T_C_CD = (uint64_t)(0.19 / 0.24 * P32);   /* C/(C+D) */

void gnn_rmat_edge(uint64_t seed, int scale, uint64_t e, uint64_t *u, uint64_t *v)
{
    uint64_t s = 0, t = 0;
    uint64_t k = gnn_hash4(seed, 0x72aa7ULL, e, 0);
    for (int ib = 0; ib < scale; ib++) {
        uint64_t r = mb_mix64(k + (uint64_t)ib * 0x9e3779b97f4a7c15ULL);
        uint64_t u1 = r & 0xffffffffULL, u2 = r >> 32;
        uint64_t sb = u1 >= T_AB;
        uint64_t tb = u2 >= (sb ? T_C_CD : T_A_AB);
        s |= sb << ib;
        t |= tb << ib;
    }
    *u = s;
    *v = t;
}

int32_t gnn_node_class(uint64_t seed, int classes, uint64_t v)
{
    return (int32_t)(gnn_hash4(seed, 0x1abe1ULL, v, 0) % (uint64_t)classes);
}

int32_t gnn_node_label(uint64_t seed, int classes, uint64_t v, const uint32_t *nbrs, uint64_t deg,
                       uint32_t *scratch)
{
    /* scores x 2*deg: self deg, each neighbour of class k 2 -> 0.5 [z(v)=k] + share_k */
    int32_t self = gnn_node_class(seed, classes, v), best = self;
    uint64_t best_score = deg;
    for (uint64_t i = 0; i < deg; i++)
        scratch[gnn_node_class(seed, classes, nbrs[i])] += 2;
    for (uint64_t i = 0; i < deg; i++) {
        int32_t k = gnn_node_class(seed, classes, nbrs[i]);
        uint64_t sc = scratch[k] + (k == self ? deg : 0);
        if (sc > best_score || (sc == best_score && best != self && k < best))
            best = k, best_score = sc;
    }
    for (uint64_t i = 0; i < deg; i++)
        scratch[gnn_node_class(seed, classes, nbrs[i])] = 0;
    return best;
}

int gnn_node_split(uint64_t seed, double train_frac, double val_frac, uint64_t v)
{
    double u = (double)(gnn_hash4(seed, 0x5b117ULL, v, 0) >> 11) * (1.0 / 9007199254740992.0);
    if (u < train_frac)
        return 1;
    if (u < train_frac + val_frac)
        return 2;
    return 0;
}

/* Element j of a node: the centroid sign is bit j%64 of a hash of (class
 * key, j/64), the noise 24 bits (-> [-1, 1), exact in float) of a hash of
 * (node key, j/2), two elements per hash; the keys hash (seed, label) and
 * (seed, v). About half a mix per element. */
static inline uint64_t class_key(uint64_t seed, int32_t y) { return gnn_hash4(seed, 0xce47ULL, (uint64_t)y, 0); }
static inline uint64_t node_key(uint64_t seed, uint64_t v) { return gnn_hash4(seed, 0xfea7ULL, v, 0); }
static inline float elem_of(uint64_t signs, uint64_t noise, float signal, uint32_t j)
{
    uint32_t bits = (uint32_t)((j & 1) ? (noise >> 8) : (noise >> 40)) & 0xffffffu;
    float u = (float)(int32_t)bits * (1.0f / 8388608.0f) - 1.0f;
    return (((signs >> (j & 63)) & 1) ? signal : -signal) + u;
}
static inline uint64_t sign_word(uint64_t ck, uint32_t j) { return mb_mix64(ck + (uint64_t)(j >> 6) * 0x9e3779b97f4a7c15ULL); }
static inline uint64_t noise_word(uint64_t nk, uint32_t j) { return mb_mix64(nk ^ ((uint64_t)(j >> 1) * 0xc2b2ae3d27d4eb4fULL)); }
static inline float feature_elem(uint64_t ck, uint64_t nk, float signal, uint32_t j)
{
    return elem_of(sign_word(ck, j), noise_word(nk, j), signal, j);
}

/* Element j of a row read from j = 0 on: the words are drawn again only
 * where j enters a new one (64 signs, 2 noise values a word). */
static inline float next_elem(uint64_t ck, uint64_t nk, float signal, uint32_t j, uint64_t *signs,
                              uint64_t *noise)
{
    if ((j & 63) == 0)
        *signs = sign_word(ck, j);
    if ((j & 1) == 0)
        *noise = noise_word(nk, j);
    return elem_of(*signs, *noise, signal, j);
}

float gnn_feature_value(uint64_t seed, int classes, float signal, uint64_t v, uint32_t j)
{
    return feature_elem(class_key(seed, gnn_node_class(seed, classes, v)), node_key(seed, v), signal, j);
}

void gnn_feature_row(const struct gnn_header *h, uint64_t v, float *row)
{
    uint64_t ck = class_key(h->seed, gnn_node_class(h->seed, h->classes, v)), nk = node_key(h->seed, v);
    uint64_t signs = 0, noise = 0;
    for (uint32_t j = 0; j < (uint32_t)h->dim; j++)
        row[j] = next_elem(ck, nk, h->signal, j, &signs, &noise);
}

size_t gnn_verify_row(const struct gnn_header *h, uint64_t v, const float *row, int full)
{
    uint64_t ck = class_key(h->seed, gnn_node_class(h->seed, h->classes, v)), nk = node_key(h->seed, v);
    if (full) {
        uint64_t signs = 0, noise = 0;
        for (uint32_t j = 0; j < (uint32_t)h->dim; j++)
            if (row[j] != next_elem(ck, nk, h->signal, j, &signs, &noise))
                return (size_t)j + 1;
        return 0;
    }
    /* first and last element plus two node-dependent positions */
    uint64_t r = mb_mix64(v ^ h->seed);
    uint32_t pos[4] = {0, (uint32_t)(r % (uint64_t)h->dim), (uint32_t)((r >> 32) % (uint64_t)h->dim),
                       (uint32_t)h->dim - 1};
    for (int i = 0; i < 4; i++)
        if (row[pos[i]] != feature_elem(ck, nk, h->signal, pos[i]))
            return (size_t)pos[i] + 1;
    return 0;
}

uint64_t gnn_checksum(const void *p, size_t len, uint64_t pos)
{
    const uint32_t *w = p;
    size_t nw = len / 4;
    uint64_t base = pos / 4, sum = 0;
    for (size_t i = 0; i < nw; i++)
        sum += mb_mix64(((uint64_t)w[i] << 32 | 0x5bd1e995u) ^ ((base + i) * 0xd6e8feb86659fd93ULL));
    return sum;
}
