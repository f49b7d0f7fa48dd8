/* The generator's CSR build, two ways with byte-identical output:
 * sorted (all 2T directed entries as (src << scale | dst) keys, a parallel
 * LSD radix sort, then dedup: streaming memory access, 32 B per tuple) and
 * range passes (within topo_mem: per vertex range, regenerate the tuples
 * and scatter the range's entries, then sort and dedup each list). */
#include "gnn_internal.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tuple e's two ends; 0 for a self-loop (which the range passes drop). */
static inline int tuple(const struct gnn_scrambler *sc, uint64_t seed, int scale, uint64_t e, uint32_t *a,
                        uint32_t *b)
{
    uint64_t u, v;
    gnn_rmat_edge(seed, scale, e, &u, &v);
    *a = (uint32_t)gnn_scramble_fast(sc, u);
    *b = (uint32_t)gnn_scramble_fast(sc, v);
    return *a != *b;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void gnn_sort_u32(uint32_t *l, uint64_t d)
{
    if (d > 48) {
        qsort(l, d, 4, cmp_u32);
        return;
    }
    for (uint64_t i = 1; i < d; i++) {
        uint32_t x = l[i];
        uint64_t j = i;
        while (j > 0 && l[j - 1] > x) {
            l[j] = l[j - 1];
            j--;
        }
        l[j] = x;
    }
}

/* Stable parallel LSD radix sort of a[0..N) on the low `bits` bits; returns
 * the buffer holding the result (a or tmp). */
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, size_t N, int bits)
{
    enum { D = 11, NB = 1 << D };
    int nt = omp_get_max_threads();
    size_t *hist = malloc(sizeof(size_t) * NB * (size_t)nt);
    if (!hist)
        return NULL;
    for (int shift = 0; shift < bits; shift += D) {
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), P = omp_get_num_threads();
            size_t lo = N * (size_t)t / (size_t)P, hi = N * (size_t)(t + 1) / (size_t)P;
            size_t *h = hist + (size_t)t * NB;
            memset(h, 0, sizeof(size_t) * NB);
            for (size_t i = lo; i < hi; i++)
                h[(a[i] >> shift) & (NB - 1)]++;
#pragma omp barrier
#pragma omp single
            {
                size_t pos = 0;
                for (int d = 0; d < NB; d++)
                    for (int q = 0; q < P; q++) {
                        size_t c = hist[(size_t)q * NB + d];
                        hist[(size_t)q * NB + d] = pos;
                        pos += c;
                    }
            }
            for (size_t i = lo; i < hi; i++)
                tmp[h[(a[i] >> shift) & (NB - 1)]++] = a[i];
        }
        uint64_t *s = a;
        a = tmp;
        tmp = s;
    }
    free(hist);
    return a;
}

static int build_sorted(const struct gnn_vol *vol, uint64_t off_neigh, uint64_t seed, int scale, uint64_t T,
                        uint64_t *offs, uint64_t *m_out, uint64_t *sum_out)
{
    const uint64_t n = 1ULL << scale, N = 2 * T, mask = n - 1;
    uint64_t *keys = malloc(N * 8), *tmp = malloc(N * 8);
    if (!keys || !tmp) {
        free(keys);
        free(tmp);
        return -ENOMEM;
    }
    struct gnn_scrambler scr;
    gnn_scrambler_init(&scr, seed, scale);
#pragma omp parallel for schedule(static)
    for (uint64_t e = 0; e < T; e++) {
        uint32_t a, b;
        tuple(&scr, seed, scale, e, &a, &b);
        keys[2 * e] = (uint64_t)a << scale | b;     /* self-loops too: dropped below */
        keys[2 * e + 1] = (uint64_t)b << scale | a;
    }
    uint64_t *s = radix_sort(keys, tmp, N, 2 * scale);
    if (!s) {
        free(keys);
        free(tmp);
        return -ENOMEM;
    }
    uint32_t *nb = (uint32_t *)(s == keys ? tmp : keys); /* the other buffer */
    memset(offs, 0, 8 * (n + 1));
    uint64_t m = 0, prev = ~0ULL;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t k = s[i], src = k >> scale, dst = k & mask;
        if (src == dst || k == prev)
            continue;
        prev = k;
        nb[m++] = (uint32_t)dst;
        offs[src + 1]++;
    }
    for (uint64_t v = 0; v < n; v++)
        offs[v + 1] += offs[v];
    *sum_out = gnn_checksum(nb, m * 4, 8 * (n + 1));
    int e = gnn_vol_pwrite(vol, off_neigh, nb, m * 4);
    *m_out = m;
    free(keys);
    free(tmp);
    return e;
}

static int build_passes(const struct gnn_vol *vol, uint64_t off_neigh, uint64_t seed, int scale, uint64_t T,
                        uint64_t topo_mem, uint64_t *offs, uint64_t *m_out, uint64_t *sum_out, int *passes_out)
{
    const uint64_t n = 1ULL << scale;
    struct gnn_scrambler scr;
    gnn_scrambler_init(&scr, seed, scale);
    uint64_t *raw = calloc(n + 1, sizeof(*raw));
    uint64_t *cur = malloc(sizeof(uint64_t) * (n + 1));
    uint32_t *nb = NULL;
    int rc = -ENOMEM;
    if (!raw || !cur)
        goto out;
    /* raw degrees (both directions, self-loops dropped) */
#pragma omp parallel for schedule(static)
    for (uint64_t e = 0; e < T; e++) {
        uint32_t a, b;
        if (!tuple(&scr, seed, scale, e, &a, &b))
            continue;
#pragma omp atomic
        raw[a]++;
#pragma omp atomic
        raw[b]++;
    }
    uint64_t acc = 0, maxdeg = 0;
    for (uint64_t v = 0; v < n; v++) {
        uint64_t d = raw[v];
        raw[v] = acc;
        acc += d;
        if (d > maxdeg)
            maxdeg = d;
    }
    raw[n] = acc;
    uint64_t cap = topo_mem / 4;
    if (cap < maxdeg)
        cap = maxdeg;
    if (cap < 1)
        cap = 1;
    nb = malloc((cap < acc ? cap : acc) * 4 + 4);
    if (!nb)
        goto out;
    uint64_t m = 0, sum = 0;
    int passes = 0;
    offs[0] = 0;
    for (uint64_t lo = 0; lo < n;) {
        uint64_t hi = lo;
        while (hi < n && raw[hi + 1] - raw[lo] <= cap)
            hi++;
        if (hi == lo)
            hi = lo + 1;
        uint64_t base = raw[lo];
        for (uint64_t v = lo; v < hi; v++)
            cur[v] = raw[v] - base;
#pragma omp parallel for schedule(static)
        for (uint64_t e = 0; e < T; e++) {
            uint32_t a, b;
            if (!tuple(&scr, seed, scale, e, &a, &b))
                continue;
            if (a >= lo && a < hi) {
                uint64_t s;
#pragma omp atomic capture
                s = cur[a]++;
                nb[s] = b;
            }
            if (b >= lo && b < hi) {
                uint64_t s;
#pragma omp atomic capture
                s = cur[b]++;
                nb[s] = a;
            }
        }
#pragma omp parallel for schedule(dynamic, 1024)
        for (uint64_t v = lo; v < hi; v++) {
            uint32_t *l = nb + (raw[v] - base);
            uint64_t d = raw[v + 1] - raw[v], k = 0;
            gnn_sort_u32(l, d);
            for (uint64_t i = 0; i < d; i++)
                if (k == 0 || l[i] != l[k - 1])
                    l[k++] = l[i];
            offs[v + 1] = k;
        }
        uint64_t w = 0;
        for (uint64_t v = lo; v < hi; v++) {
            memmove(nb + w, nb + (raw[v] - base), offs[v + 1] * 4);
            w += offs[v + 1];
            offs[v + 1] += offs[v];
        }
        /* the neighbours follow the offsets in the checksummed stream */
        sum += gnn_checksum(nb, w * 4, 8 * (n + 1) + 4 * m);
        rc = gnn_vol_pwrite(vol, off_neigh + 4 * m, nb, w * 4);
        if (rc)
            goto out;
        m += w;
        passes++;
        lo = hi;
    }
    *m_out = m;
    *sum_out = sum;
    *passes_out = passes;
    rc = 0;
out:
    free(raw);
    free(cur);
    free(nb);
    return rc;
}

int gnn_gen_topology(const struct gnn_vol *vol, uint64_t off_neigh, uint64_t seed, int scale, uint64_t T,
                     uint64_t topo_mem, uint64_t *offs, uint64_t *m, uint64_t *sum, int *passes)
{
    uint64_t need = 32 * T;
    if (topo_mem == 0) {
        /* unlimited: still keep the sorted build within half the memory */
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
        if (phys && need > phys / 2)
            topo_mem = phys / 4;
    }
    if (topo_mem == 0 || topo_mem >= need) {
        *passes = 0;
        int e = build_sorted(vol, off_neigh, seed, scale, T, offs, m, sum);
        if (e != -ENOMEM)
            return e;
        if (!topo_mem)
            topo_mem = need / 4;
    }
    return build_passes(vol, off_neigh, seed, scale, T, topo_mem, offs, m, sum, passes);
}
