/* The dtypes (sizes, names, MPI types, count limits) and the reduction kernels for every dtype and op. */
#include "internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#pragma GCC optimize("O3")

size_t mb_coll_dtype_size(enum mb_coll_dtype d)
{
    static const size_t s[] = {1, 4, 8, 4, 8};
    return d < MB_COLL_NDTYPE ? s[d] : 0;
}

const char *const mb_coll_dtype_names[MB_COLL_NDTYPE] = {"int8", "int32", "int64", "float", "double"};
const char *const mb_coll_op_names[MB_COLL_NOP] = {"sum", "prod", "min", "max"};

MPI_Datatype mb_coll_mpi_dtype(enum mb_coll_dtype d)
{
    static const MPI_Datatype t[] = {MPI_INT8_T, MPI_INT32_T, MPI_INT64_T, MPI_FLOAT, MPI_DOUBLE};
    return t[d];
}

MPI_Op mb_coll_mpi_op(enum mb_coll_op o)
{
    static const MPI_Op t[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return t[o];
}

#define OPS(T, NAME)                                                                              \
    static void NAME##_2(enum mb_coll_op op, T *restrict d, const T *restrict s, size_t n)        \
    {                                                                                             \
        switch (op) {                                                                             \
        case MB_COLL_SUM: for (size_t i = 0; i < n; i++) d[i] = d[i] + s[i]; break;               \
        case MB_COLL_PROD: for (size_t i = 0; i < n; i++) d[i] = d[i] * s[i]; break;              \
        case MB_COLL_MIN: for (size_t i = 0; i < n; i++) d[i] = s[i] < d[i] ? s[i] : d[i]; break; \
        case MB_COLL_MAX: for (size_t i = 0; i < n; i++) d[i] = s[i] > d[i] ? s[i] : d[i]; break; \
        default: break;                                                                           \
        }                                                                                         \
    }                                                                                             \
    static void NAME##_3(enum mb_coll_op op, T *d,       const T *a, const T *b, size_t n)     \
    {                                                                                             \
        switch (op) {                                                                             \
        case MB_COLL_SUM: for (size_t i = 0; i < n; i++) d[i] = a[i] + b[i]; break;               \
        case MB_COLL_PROD: for (size_t i = 0; i < n; i++) d[i] = a[i] * b[i]; break;              \
        case MB_COLL_MIN: for (size_t i = 0; i < n; i++) d[i] = b[i] < a[i] ? b[i] : a[i]; break; \
        case MB_COLL_MAX: for (size_t i = 0; i < n; i++) d[i] = b[i] > a[i] ? b[i] : a[i]; break; \
        default: break;                                                                           \
        }                                                                                         \
    }

OPS(int8_t, i8)
OPS(int32_t, i32)
OPS(int64_t, i64)
OPS(float, f32)
OPS(double, f64)

void mb_coll_reduce2(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *src, size_t n)
{
    switch (d) {
    case MB_COLL_INT8: i8_2(op, dst, src, n); break;
    case MB_COLL_INT32: i32_2(op, dst, src, n); break;
    case MB_COLL_INT64: i64_2(op, dst, src, n); break;
    case MB_COLL_FLOAT: f32_2(op, dst, src, n); break;
    case MB_COLL_DOUBLE: f64_2(op, dst, src, n); break;
    default: break;
    }
}

static void reduce3(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *a, const void *b,
                    size_t n)
{
    switch (d) {
    case MB_COLL_INT8: i8_3(op, dst, a, b, n); break;
    case MB_COLL_INT32: i32_3(op, dst, a, b, n); break;
    case MB_COLL_INT64: i64_3(op, dst, a, b, n); break;
    case MB_COLL_FLOAT: f32_3(op, dst, a, b, n); break;
    case MB_COLL_DOUBLE: f64_3(op, dst, a, b, n); break;
    default: break;
    }
}

/* dst may be one of the sources (in place). */
void mb_coll_reduce_many(enum mb_coll_dtype d, enum mb_coll_op op, void *dst, const void *const *srcs,
                         int nsrc, size_t n)
{
    if (nsrc <= 0 || n == 0)
        return;
    if (nsrc == 1) {
        if (dst != srcs[0])
            memmove(dst, srcs[0], n * mb_coll_dtype_size(d));
        return;
    }
    int alias = -1;
    for (int k = 0; k < nsrc; k++)
        if (srcs[k] == dst)
            alias = k;
    if (alias >= 0) { /* dst already holds that source */
        for (int k = 0; k < nsrc; k++)
            if (k != alias)
                mb_coll_reduce2(d, op, dst, srcs[k], n);
        return;
    }
    reduce3(d, op, dst, srcs[0], srcs[1], n);
    for (int k = 2; k < nsrc; k++)
        mb_coll_reduce2(d, op, dst, srcs[k], n);
}

/* Non-temporal copy: the stores bypass the cache, so a destination that is
 * not read again soon costs no read-for-ownership and evicts nothing. The
 * caller fences (mb_coll_copy_fence) before publishing the data. */
void mb_coll_copy_stream(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes)
        head = bytes;
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, bytes);
#else
    memcpy(dst, src, bytes);
#endif
}

void mb_coll_copy_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

int mb_coll_count_fits(size_t bytes, enum mb_coll_dtype dtype, int lib_algos, char *why, size_t len)
{
    size_t count = bytes / mb_coll_dtype_size(dtype);
    if (count > INT_MAX)
        snprintf(why, len, " of %s is %zu elements, more than MPI's count limit %d (use a smaller size or a wider "
                           "--dtype)", mb_coll_dtype_names[dtype], count, INT_MAX);
    else if (lib_algos && bytes > INT_MAX)
        snprintf(why, len, " is more than the %d bytes the collectives library's algorithms pass to MPI (use a "
                           "smaller size or --algo mpi)", INT_MAX);
    else
        return 0;
    return -1;
}
