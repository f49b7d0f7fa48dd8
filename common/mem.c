/* One allocator for host, node-shared, pinned and device buffers. */
#include "common.h"
#include "cuda_rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const char *mb_mem_kind_name(enum mb_mem_kind kind)
{
    switch (kind) {
    case MB_MEM_HOST: return "host";
    case MB_MEM_SHARED: return "shared";
    case MB_MEM_PINNED: return "pinned";
    case MB_MEM_DEVICE: return "device";
    }
    return "?";
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static int alloc_host(struct mb_buf *buf, size_t bytes, int huge, char *err, size_t errlen)
{
    /* Huge pages want 2 MiB alignment for THP to back the range. */
    size_t align = huge ? (size_t)2 << 20 : MB_ALIGN;
    size_t len = round_up(bytes ? bytes : 1, align);
    void *p = NULL;
    int rc = posix_memalign(&p, align, len);
    if (rc != 0) {
        snprintf(err, errlen, "cannot allocate %zu bytes of host memory: %s", bytes, strerror(rc));
        return -1;
    }
    if (huge && madvise(p, len, MADV_HUGEPAGE) != 0)
        buf->huge = 0; /* THP unavailable: keep going on small pages */
    else
        buf->huge = huge;
    buf->ptr = p;
    return 0;
}

static int alloc_shared(struct mb_buf *buf, size_t bytes, MPI_Comm comm, char *err, size_t errlen)
{
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &buf->node_comm) !=
        MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
        return -1;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    /* Each segment is addressed separately; contiguity buys nothing. */
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void *p = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)round_up(bytes ? bytes : 1, MB_ALIGN), 1, info,
                                     buf->node_comm, &p, &buf->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&buf->node_comm);
        snprintf(err, errlen, "MPI_Win_allocate_shared of %zu bytes failed", bytes);
        return -1;
    }
    buf->ptr = p;
    return 0;
}

int mb_buf_alloc(struct mb_buf *buf, enum mb_mem_kind kind, size_t bytes, int huge,
                 MPI_Comm comm, char *err, size_t errlen)
{
    memset(buf, 0, sizeof(*buf));
    buf->kind = kind;
    buf->bytes = bytes;
    buf->win = MPI_WIN_NULL;
    buf->node_comm = MPI_COMM_NULL;
    switch (kind) {
    case MB_MEM_HOST: return alloc_host(buf, bytes, huge, err, errlen);
    case MB_MEM_SHARED: return alloc_shared(buf, bytes, comm, err, errlen);
    case MB_MEM_PINNED: return mb_cuda_rt_alloc_pinned(&buf->ptr, bytes, err, errlen);
    case MB_MEM_DEVICE: return mb_cuda_rt_alloc_device(&buf->ptr, bytes, err, errlen);
    }
    snprintf(err, errlen, "unknown memory kind %d", (int)kind);
    return -1;
}

void *mb_buf_peer(const struct mb_buf *buf, int peer)
{
    if (buf->kind != MB_MEM_SHARED)
        return NULL;
    MPI_Aint size;
    int disp;
    void *p = NULL;
    if (MPI_Win_shared_query(buf->win, peer, &size, &disp, &p) != MPI_SUCCESS)
        return NULL;
    return p;
}

void mb_buf_free(struct mb_buf *buf)
{
    if (!buf->ptr && buf->win == MPI_WIN_NULL)
        return;
    switch (buf->kind) {
    case MB_MEM_HOST: free(buf->ptr); break;
    case MB_MEM_SHARED:
        MPI_Win_free(&buf->win);
        MPI_Comm_free(&buf->node_comm);
        break;
    case MB_MEM_PINNED: mb_cuda_rt_free_pinned(buf->ptr); break;
    case MB_MEM_DEVICE: mb_cuda_rt_free_device(buf->ptr); break;
    }
    buf->ptr = NULL;
}

int mb_buf_copy(void *dst, enum mb_mem_kind dst_kind, const void *src, enum mb_mem_kind src_kind,
                size_t bytes)
{
    int dst_dev = dst_kind == MB_MEM_DEVICE, src_dev = src_kind == MB_MEM_DEVICE;
    if (!dst_dev && !src_dev) {
        memcpy(dst, src, bytes);
        return 0;
    }
    return mb_cuda_rt_copy(dst, src, bytes, (src_dev ? 2 : 0) + (dst_dev ? 1 : 0));
}

int mb_cuda_built(void) { return mb_cuda_rt_built(); }
int mb_cuda_probe(char *err, size_t errlen) { return mb_cuda_rt_probe(err, errlen); }
void mb_cuda_describe(char *buf, size_t len) { mb_cuda_rt_describe(buf, len); }
