/* One validated case: its buffers sized from the collective's layout, each
 * iteration's inputs, the device staging, the test fault and the check. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int mb_coll_vcase_init(struct mb_coll_vcase *v, struct mb_coll_ctx *ctx, enum mb_coll_layout layout,
                       enum mb_coll_op op, enum mb_coll_dtype dtype, size_t count, int root, int inplace,
                       uint64_t seed, size_t nsets, int registered, int device, const char *fault, char *err,
                       size_t errlen)
{
    int p = ctx->size, rank = ctx->rank;
    memset(v, 0, sizeof(*v));
    int reducing = layout == MB_COLL_OUT_REDUCED || layout == MB_COLL_OUT_REDUCED_ROOT ||
                   layout == MB_COLL_OUT_REDUCED_BLOCK;
    mb_coll_data_init(&v->data, reducing, op, dtype, p, seed);
    v->layout = layout, v->dtype = dtype, v->count = count, v->blk = count / (size_t)p;
    v->rank = rank, v->root = root, v->inplace = inplace;
    switch (layout) {
    case MB_COLL_OUT_NONE: break;
    case MB_COLL_OUT_REDUCED: case MB_COLL_OUT_REDUCED_ROOT: case MB_COLL_OUT_EXCHANGED:
        v->send_n = count, v->recv_n = count; break;
    case MB_COLL_OUT_REDUCED_BLOCK: v->send_n = count, v->recv_n = inplace ? count : v->blk; break;
    case MB_COLL_OUT_GATHERED: v->send_n = v->blk, v->recv_n = count; break;
    case MB_COLL_OUT_ROOT: v->send_n = 0, v->recv_n = count; break;
    }
    if (inplace)
        v->send_n = 0;
    v->fault_rank = -1;
    v->fault_iter = -1;
    if (fault && (!strcmp(fault, "corrupt") || !strcmp(fault, "nan") || !strcmp(fault, "inf")) &&
        layout != MB_COLL_OUT_NONE)
        v->fault_rank = layout == MB_COLL_OUT_REDUCED_ROOT ? root : p - 1;
    size_t es = mb_coll_dtype_size(dtype);
    return mb_coll_bufs_alloc(&v->bufs, ctx, v->send_n * es, v->recv_n * es, nsets, registered, device, err,
                              errlen);
}

struct mb_coll_args mb_coll_case_args(enum mb_coll_kind kind, size_t count, int nranks, int inplace,
                                      enum mb_coll_dtype dtype, enum mb_coll_op op, int root, const void *send,
                                      void *recv)
{
    int block = kind == MB_COLL_REDUCE_SCATTER || kind == MB_COLL_ALLGATHER;
    struct mb_coll_args a = {
        .kind = kind,
        .sendbuf = inplace || kind == MB_COLL_BCAST ? NULL : send,
        .recvbuf = recv,
        .count = block ? count / (size_t)nranks : count,
        .dtype = dtype,
        .op = op,
        .root = root,
    };
    return a;
}

void mb_coll_join_names(char *buf, size_t len, const char *const *names, size_t n)
{
    size_t used = 0;
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", names[i]);
}

void mb_coll_vcase_select(struct mb_coll_vcase *v, long long iter)
{
    mb_coll_bufs_set(&v->bufs, iter, &v->send, &v->recv);
}

/* Device buffers from (to_device 0) or to (1) the current set. */
static void device_copy(struct mb_coll_vcase *v, int to_device, int send, int recv)
{
    size_t es = mb_coll_dtype_size(v->dtype);
    if (send)
        to_device ? mb_buf_copy(v->bufs.dsend.ptr, MB_MEM_DEVICE, v->send, MB_MEM_PINNED, v->send_n * es)
                  : mb_buf_copy(v->send, MB_MEM_PINNED, v->bufs.dsend.ptr, MB_MEM_DEVICE, v->send_n * es);
    if (recv)
        to_device ? mb_buf_copy(v->bufs.drecv.ptr, MB_MEM_DEVICE, v->recv, MB_MEM_PINNED, v->recv_n * es)
                  : mb_buf_copy(v->recv, MB_MEM_PINNED, v->bufs.drecv.ptr, MB_MEM_DEVICE, v->recv_n * es);
}

void mb_coll_vcase_prepare(struct mb_coll_vcase *v, long long iter)
{
    if (v->layout == MB_COLL_OUT_NONE)
        return;
    mb_coll_vcase_select(v, iter);
    size_t es = mb_coll_dtype_size(v->dtype);
    /* Poison the output so a collective that writes nothing is caught. */
    memset(v->recv, 0x5a, v->recv_n * es);
    /* this rank's input: where it lies, and the global index of its first element (0) */
    char *buf = v->inplace ? v->recv : v->send;
    size_t n = v->count;
    if (v->layout == MB_COLL_OUT_GATHERED) {
        n = v->blk;
        if (v->inplace)
            buf = (char *)v->recv + (size_t)v->rank * v->blk * es;
    } else if (v->layout == MB_COLL_OUT_ROOT) {
        buf = v->recv;
        n = v->rank == v->root ? v->count : 0;
    }
    mb_coll_data_fill(&v->data, v->dtype, v->rank, 0, n, iter, buf);
    if (v->bufs.device)
        device_copy(v, 1, 1, 1);
}

void mb_coll_vcase_stage(struct mb_coll_vcase *v, int to_host)
{
    if (to_host)
        device_copy(v, 0, 1, v->inplace || v->layout == MB_COLL_OUT_ROOT);
    else
        device_copy(v, 1, 0, 1);
}

void mb_coll_vcase_fault(struct mb_coll_vcase *v, long long iter, const char *fault)
{
    if (iter != v->fault_iter || v->recv_n == 0)
        return;
    size_t i = v->layout == MB_COLL_OUT_REDUCED_BLOCK ? v->blk / 2 : v->recv_n / 2;
    if (v->bufs.device)
        device_copy(v, 0, 0, 1);
    mb_coll_store_fault(v->dtype, v->recv, i, fault);
    if (v->bufs.device)
        device_copy(v, 1, 0, 1);
}

int mb_coll_vcase_verify(struct mb_coll_vcase *v, long long iter, char *msg, size_t mlen)
{
    if (v->layout == MB_COLL_OUT_NONE || (v->layout == MB_COLL_OUT_REDUCED_ROOT && v->rank != v->root))
        return 0;
    mb_coll_vcase_select(v, iter);
    if (v->bufs.device)
        device_copy(v, 0, 0, 1);
    size_t n = v->layout == MB_COLL_OUT_REDUCED_BLOCK ? v->blk : v->count;
    return mb_coll_data_verify(&v->data, v->layout, v->dtype, v->recv, n, v->blk, v->rank, v->root, iter, msg,
                               mlen);
}

void mb_coll_vcase_free(struct mb_coll_vcase *v) { mb_coll_bufs_free(&v->bufs); }

size_t mb_coll_forms(int reduction, int bcast, unsigned dtypes, unsigned ops, int inplace, struct mb_coll_form *out)
{
    size_t n = 0;
    int first_op = ops ? __builtin_ctz(ops) : 0;
    for (int d = 0; d < MB_COLL_NDTYPE; d++) {
        if (!(dtypes & (1u << d)))
            continue;
        for (int o = 0; o < MB_COLL_NOP; o++) {
            if (reduction ? !(ops & (1u << o)) : o != first_op) /* the op matters only to reductions */
                continue;
            for (int ip = 0; ip < 2; ip++)
                if (bcast ? ip == (inplace == 1) : inplace == 2 || inplace == ip) /* bcast: one form */
                    out[n++] = (struct mb_coll_form){(enum mb_coll_dtype)d, (enum mb_coll_op)o, ip};
        }
    }
    return n;
}

size_t mb_coll_largest(const size_t *sizes, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m = sizes[i] > m ? sizes[i] : m;
    return m;
}
