/* Internal: the verification pattern's word function, shared by the host
 * (aio_map.c) and the CUDA kernel that checks GPU-posted reads
 * (aio_cuda.cu), so both compute the very same words. */
#ifndef MB_OFFLOAD_AIO_PATTERN_H
#define MB_OFFLOAD_AIO_PATTERN_H

#include <stdint.h>

#ifdef __CUDACC__
#define MB_AIO_HD __host__ __device__
#else
#define MB_AIO_HD
#endif

static inline MB_AIO_HD uint64_t mb_aio_pattern_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The 64-bit word at the 8-aligned logical offset woff. */
static inline MB_AIO_HD uint64_t mb_aio_pattern_word(uint64_t seed, uint64_t woff)
{
    return mb_aio_pattern_mix(woff * 0x9e3779b97f4a7c15ULL + seed * 0xbf58476d1ce4e5b9ULL + 1);
}

#endif
