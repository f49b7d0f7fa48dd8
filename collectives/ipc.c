/* `cuda-ipc`: shm's zero-copy scheme for device buffers. Each call
 * exchanges CUDA IPC handles of the ranks' buffers over the node (opened
 * once per handle and cached), then every rank reduces its slice with one
 * kernel that loads straight from every peer's device buffer, and copies
 * the peers' reduced slices device to device. The phases are separated by
 * MPI barriers on the node: each phase's device work is complete
 * (synchronised) before a rank enters the barrier, and a host flag would
 * buy nothing next to a kernel launch. Buffers must be cudaMalloc bases
 * (as mb-coll's are), since a handle names a whole allocation. */
#include "device.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The set-up (collective): a device per rank. */
static int ipc_setup(struct mb_coll_ctx *c, void **state, char *why, size_t len)
{
    (void)state;
    char reason[250] = "";
    int n = 0, ok = mb_coll_dev_count(&n, reason, sizeof(reason)) == 0 &&
                    mb_coll_dev_select(c->node_rank % n, reason, sizeof(reason)) == 0;
    if (mb_coll_agree(c, ok, reason, sizeof(reason)))
        return 0;
    snprintf(why, len, "CUDA IPC unusable: %s", reason);
    return -1;
}

/* The peers' allocations opened so far (a process-wide cache). */
static void ipc_close(struct mb_coll_ctx *c, void *state)
{
    (void)c, (void)state;
    mb_coll_ipc_close_all();
}

static int ipc_available(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nnodes != 1) {
        snprintf(why, len, "the communicator spans %d nodes; CUDA IPC reaches one", c->nnodes);
        return 0;
    }
    return 1;
}

struct handles {
    char in[MB_COLL_IPC_HANDLE_BYTES], out[MB_COLL_IPC_HANDLE_BYTES];
};

static int ipc_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    int p = c->node_size, r = c->node_rank, rc = 0;
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count, bytes = n * es;
    if (n == 0)
        return 0;
    char err[300] = "";
    char *out = a->recvbuf;
    const char *in = a->sendbuf && a->kind != MB_COLL_BCAST ? a->sendbuf : a->recvbuf;
    struct handles mine, all[p];
    if (mb_coll_ipc_handle(in, mine.in, err, sizeof(err)) != 0 ||
        mb_coll_ipc_handle(out, mine.out, err, sizeof(err)) != 0)
        rc = -1;
    /* the exchange is also the arrival: every input is ready */
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, c->node_comm);
    char *pin[p], *pout[p];
    for (int q = 0; q < p && rc == 0; q++) {
        if (q == r) {
            pin[q] = (char *)in, pout[q] = out;
            continue;
        }
        void *bi, *bo;
        if (mb_coll_ipc_open(all[q].in, &bi, err, sizeof(err)) != 0 ||
            mb_coll_ipc_open(all[q].out, &bo, err, sizeof(err)) != 0)
            rc = -1;
        else
            pin[q] = bi, pout[q] = bo;
    }
    int bad;
    MPI_Allreduce(&rc, &bad, 1, MPI_INT, MPI_MIN, c->node_comm); /* every rank takes the same path */
    if (bad) {
        mb_warn("collectives: cuda-ipc: %s", err[0] ? err : "a peer could not map the buffers");
        return -1;
    }
    int ip_gather = a->kind == MB_COLL_ALLGATHER && !a->sendbuf;
    const void *srcs[p];
    switch (rc == 0 ? (int)a->kind : -1) {
    case MB_COLL_ALLREDUCE: {
        size_t lo = mb_coll_slice_bound(n, p, r, es), hi = mb_coll_slice_bound(n, p, r + 1, es);
        for (int q = 0; q < p; q++)
            srcs[q] = pin[q] + lo * es;
        rc |= mb_coll_dev_reduce(a->dtype, a->op, out + lo * es, srcs, p, hi - lo, err, sizeof(err));
        MPI_Barrier(c->node_comm); /* every slice reduced, every input read */
        for (int j = 1; j < p && rc == 0; j++) {
            int s = (r + j) % p;
            size_t slo = mb_coll_slice_bound(n, p, s, es), shi = mb_coll_slice_bound(n, p, s + 1, es);
            rc |= mb_coll_dev_copy(out + slo * es, pout[s] + slo * es, (shi - slo) * es, err, sizeof(err));
        }
        break;
    }
    case MB_COLL_REDUCE_SCATTER: {
        /* block r of my input is read by me only: reduce it in place there
         * when the output is my input's start, move it after the barrier */
        char *dst = a->sendbuf ? out : (char *)in + (size_t)r * bytes;
        for (int q = 0; q < p; q++)
            srcs[q] = pin[q] + (size_t)r * bytes;
        rc |= mb_coll_dev_reduce(a->dtype, a->op, dst, srcs, p, n, err, sizeof(err));
        MPI_Barrier(c->node_comm);
        if (!a->sendbuf && rc == 0)
            rc |= mb_coll_dev_copy(out, dst, bytes, err, sizeof(err));
        break;
    }
    case MB_COLL_ALLGATHER:
        for (int j = 0; j < p && rc == 0; j++) {
            int q = (r + j) % p;
            if (q != r || !ip_gather)
                rc |= mb_coll_dev_copy(out + (size_t)q * bytes, pin[q] + (ip_gather ? (size_t)q * bytes : 0), bytes,
                                       err, sizeof(err));
        }
        break;
    case MB_COLL_BCAST:
        if (r != a->root)
            rc |= mb_coll_dev_copy(out, pout[a->root], bytes, err, sizeof(err));
        break;
    case MB_COLL_REDUCE:
        if (r == a->root) {
            for (int q = 0; q < p; q++)
                srcs[q] = pin[q];
            rc |= mb_coll_dev_reduce(a->dtype, a->op, out, srcs, p, n, err, sizeof(err));
        }
        break;
    default: rc = -1; break;
    }
    MPI_Barrier(c->node_comm); /* nobody reads my buffers any more */
    if (rc)
        mb_warn("collectives: cuda-ipc: %s", err[0] ? err : "unknown collective");
    return rc;
}

const struct mb_coll_algo mb_coll_algo_cuda_ipc = {
    .name = "cuda-ipc", .kinds = MB_COLL_ALL_KINDS, .device = 1,
    .description = "shm zero-copy for device buffers: CUDA IPC handles, a reduction kernel over peers' memory",
    .available = ipc_available, .run = ipc_run, .setup = ipc_setup, .teardown = ipc_close,
};
