/* The reduce-scatter's linear checksum: a sum is linear, so each chunk of
 * a reduced shard must add up to the sum, over the senders, of their
 * inputs' same chunk. Senders' chunk sums are taken as each reduce-scatter
 * starts, the receiver's when it lands; zero_checksum_verify compares them
 * (exactly for int32 fixed point, within fp32 rounding of the absolute
 * sums otherwise). MB_FAULT_INJECT=corrupt-grad flips one element of a
 * reduced chunk as it lands (worker, layer, chunk and element from the
 * seed, in the first step): the check must name it. */
#include "zero.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 1024 /* elements per checksummed chunk */

static size_t nchunks(size_t S) { return (S + CHUNK - 1) / CHUNK; }

int zero_checksum_alloc(struct zero_run *z, char *err, size_t len)
{
    for (int i = 0; i < z->L; i++) {
        struct zero_layer *ly = &z->layer[i];
        size_t nc = nchunks(ly->S) ? nchunks(ly->S) : 1;
        ly->sum_send = calloc((size_t)z->o.lay.W * nc * 2, sizeof(double));
        ly->sum_recv = calloc(nc, sizeof(double));
        if (!ly->sum_send || !ly->sum_recv)
            return snprintf(err, len, "out of memory: layer %d's checksums", i), -1;
    }
    return 0;
}

/* Sum (exact in double for int32 terms of one chunk: |sum| < 2^41) and
 * absolute sum of n values of the reduce-scatter's input. */
static void chunk_sum(const struct zero_run *z, const void *p, size_t n, double *sum, double *abs_sum)
{
    double s = 0, a = 0;
    if (z->o.agg == ZERO_AGG_FIXED)
        for (size_t k = 0; k < n; k++)
            s += ((const int32_t *)p)[k], a += fabs((double)((const int32_t *)p)[k]);
    else
        for (size_t k = 0; k < n; k++)
            s += ((const float *)p)[k], a += fabs((double)((const float *)p)[k]);
    *sum = s, *abs_sum = a;
}

void zero_checksum_send(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    const char *in = z->o.agg == ZERO_AGG_FIXED ? (const char *)ly->acc : (const char *)ly->grad;
    size_t nc = nchunks(ly->S);
    for (int b = 0; b < z->o.lay.W; b++)
        for (size_t c = 0; c < nc; c++) {
            size_t lo = (size_t)b * ly->S + c * CHUNK, n = ly->S - c * CHUNK < CHUNK ? ly->S - c * CHUNK : CHUNK;
            double *o = &ly->sum_send[2 * ((size_t)b * nc + c)];
            chunk_sum(z, in + lo * 4, n, &o[0], &o[1]);
        }
}

static int fault_here(const struct zero_run *z, int i, size_t *chunk, size_t *elem)
{
    const char *f = getenv("MB_FAULT_INJECT");
    if (!f || strcmp(f, "corrupt-grad") != 0 || z->step != 0 || z->o.reference)
        return 0;
    uint64_t h = mb_mix64(z->o.seed ^ 0x67726164ULL);
    const struct zero_layer *ly = &z->layer[i];
    if ((int)(h % (uint64_t)z->o.lay.W) != z->index || (int)((h >> 16) % (uint64_t)z->L) != i || !ly->n)
        return 0;
    *elem = (size_t)((h >> 32) % ly->n);
    *chunk = *elem / CHUNK;
    return 1;
}

void zero_checksum_recv(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    size_t c, k, nc = nchunks(ly->S);
    if (fault_here(z, i, &c, &k)) {
        if (z->o.agg == ZERO_AGG_FIXED)
            ((int32_t *)ly->red)[k] ^= 1 << 20;
        else
            ((uint32_t *)ly->red)[k] ^= 1u << 28;
    }
    for (c = 0; c < nc; c++) {
        double a;
        size_t n = ly->S - c * CHUNK < CHUNK ? ly->S - c * CHUNK : CHUNK;
        chunk_sum(z, (const char *)ly->red + c * CHUNK * 4, n, &ly->sum_recv[c], &a);
    }
}

int zero_checksum_verify(struct zero_run *z, char *msg, size_t len)
{
    int bad = 0;
    for (int i = z->L - 1; i >= 0; i--) {
        struct zero_layer *ly = &z->layer[i];
        size_t nc = nchunks(ly->S), n = (size_t)z->o.lay.W * nc * 2;
        double *tot = malloc(n * sizeof(double) + 8);
        if (!tot || MPI_Allreduce(ly->sum_send, tot, (int)n, MPI_DOUBLE, MPI_SUM, z->workers) != MPI_SUCCESS) {
            free(tot);
            return snprintf(msg, len, "layer %d: the checksum exchange failed", i), 1;
        }
        for (size_t c = 0; c < nc && !bad; c++) {
            double want = tot[2 * ((size_t)z->index * nc + c)], abs_sum = tot[2 * ((size_t)z->index * nc + c) + 1];
            double got = ly->sum_recv[c];
            /* fixed: integers, exact; fp32: each of the W-1 additions of an
             * element rounds by at most 2^-24 of the running magnitude */
            double tol = z->o.agg == ZERO_AGG_FIXED ? 0 : abs_sum * z->o.lay.W * 0x1p-23;
            if (!(fabs(got - want) <= tol)) {
                snprintf(msg, len, "step %lld: layer %d chunk %zu of rank %d's gradient shard: reduced sum %.17g, "
                         "the senders' sums add to %.17g (linear checksum)", z->step, i, c, z->rank, got, want);
                bad = 1;
            }
        }
        free(tot);
    }
    return bad;
}
