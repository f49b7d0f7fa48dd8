/* Adam's memcpy peer (mb-nn): a copy whose stores move exactly the bytes
 * it is credited with, like Adam's. Adam's stores go to lines it has just
 * read, so its memory traffic is the 28 B a parameter it counts; a copy
 * with ordinary stores first reads each destination line for ownership,
 * moving 3 bytes for the 2 it counts. glibc's memcpy switches to
 * non-temporal stores only above x86_non_temporal_threshold, which it
 * derives from CPUID's cache size: 240 MiB on this VM (CPUID says a
 * 320 MiB L3; sysfs says 32 MiB), so a 112 MiB share copied with ordinary
 * stores and its rate depended on the share's size against that
 * threshold. This copy always stores non-temporally, in the widest
 * vectors the CPU has (whatever NN_ISA picks for Adam's kernel, so an
 * A/B of Adam's widths runs against the same peer). */
#include "nn.h"

#include "../common/common.h"

#include <omp.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

size_t nn_llc_bytes(void)
{
    size_t v = mb_llc_bytes(); /* hwloc's topology (common/pin.c) */
    return v ? v : (size_t)32 << 20;
}

#define COPY_BODY(VT, LOAD, STREAM, W)                                                             \
    for (; i + W <= n; i += W)                                                                     \
        STREAM((VT *)(d + i), LOAD((const VT *)(s + i)));

#if defined(__x86_64__) && defined(__GNUC__)
#define NN_COPY_X86 1
__attribute__((target("avx2"))) static size_t copy_avx2(char *d, const char *s, size_t n)
{
    size_t i = 0;
    COPY_BODY(__m256i, _mm256_loadu_si256, _mm256_stream_si256, 32)
    return i;
}

__attribute__((target("avx512f,avx2"))) static size_t copy_avx512(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
    return i;
}
#endif

void nn_copy_peer(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t head = (64 - ((uintptr_t)d & 63)) & 63; /* to a 64-byte destination */
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t done = 0;
#ifdef NN_COPY_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        done = copy_avx512(d, s, n);
    else if (__builtin_cpu_supports("avx2"))
        done = copy_avx2(d, s, n);
    else
#endif
    {
#if defined(__SSE2__)
        size_t i = 0;
        COPY_BODY(__m128i, _mm_loadu_si128, _mm_stream_si128, 16)
        done = i;
#endif
    }
    memcpy(d + done, s + done, n - done);
#if defined(__SSE2__)
    _mm_sfence(); /* the streamed lines are ordered before whatever follows */
#endif
}

void nn_byte_share(size_t n, int t, int T, size_t *lo, size_t *hi)
{
    size_t pages = (n + 4095) / 4096, a = pages * (size_t)t / (size_t)T * 4096,
           b = pages * (size_t)(t + 1) / (size_t)T * 4096;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}

int nn_cold_init(struct nn_cold *c)
{
    if (c->buf)
        return 0;
    size_t llc = nn_llc_bytes();
    c->n = 2 * llc > ((size_t)64 << 20) ? 2 * llc : (size_t)64 << 20;
    if (!(c->buf = malloc(c->n)))
        return -1;
#pragma omp parallel
    {
        size_t lo, hi;
        nn_byte_share(c->n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        memset(c->buf + lo, 1, hi - lo);
    }
    return 0;
}

static volatile unsigned cold_sink; /* keeps nn_cold_start's reads */

void nn_cold_start(const struct nn_cold *c)
{
    unsigned sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
        size_t lo, hi;
        nn_byte_share(c->n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (size_t i = lo; i < hi; i += 64)
            sum += (unsigned char)c->buf[i];
    }
    cold_sink = sum;
}

void nn_cold_free(struct nn_cold *c)
{
    free(c->buf);
    c->buf = NULL;
    c->n = 0;
}
