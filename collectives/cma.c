/* CMA single-copy collectives: process_vm_readv from peers' private buffers.
 * Each call publishes its buffer addresses in the node's flag area before
 * `arrive` (pids are exchanged once, at the first use). Allreduce: each
 * rank reads its slice of every peer's input chunk by chunk into a
 * cache-resident temporary and reduces it into its own output, then reads
 * the reduced slices straight from the peers' outputs; reduce_scatter_block
 * is the first half, allgather and bcast read the blocks straight into the
 * output, reduce is pulled and reduced by the root. Where the kernel refuses
 * (ptrace policy: Yama, containers without CAP_SYS_PTRACE), the algorithm
 * reports itself unavailable with the kernel's reason. */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static ssize_t peer_read(pid_t pid, void *dst, uint64_t src, size_t bytes)
{
    size_t got = 0;
    while (got < bytes) {
        struct iovec l = {(char *)dst + got, bytes - got}, r = {(void *)(uintptr_t)(src + got), bytes - got};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* The node's pids (cma's state), exchanged once by the probe. */
static int *pids_of(struct mb_coll_ctx *c) { return mb_coll_slot(c, &mb_coll_algo_cma)->state; }

/* Exchanges the node's pids and reads a word from the next node rank: the
 * kernel's ptrace policy decides, and every rank gives the lowest refused
 * rank's reason. */
static int cma_probe(struct mb_coll_ctx *c, void **state, char *why, size_t len)
{
    int p = c->node_size;
    struct { int pid; uint64_t addr; } me, all[p]; /* one entry per node rank: small */
    static volatile uint64_t probe = 0x6d6f766562656e63ull;
    me.pid = (int)getpid();
    me.addr = (uint64_t)(uintptr_t)&probe;
    MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, c->node_comm);
    int *pids = *state = malloc(sizeof(int) * (size_t)p);
    for (int q = 0; q < p && pids; q++)
        pids[q] = all[q].pid;
    int peer = (c->node_rank + 1) % p, ok = 1;
    uint64_t v = 0;
    if (!pids) {
        errno = ENOMEM;
        ok = 0;
    } else if (mb_coll_fault("cma-refused")) { /* tests: the kernel's answer under ptrace_scope 3 */
        errno = EPERM;
        ok = 0;
    } else if (peer_read(all[peer].pid, &v, all[peer].addr, sizeof(v)) < 0 || v != probe)
        ok = 0;
    char reason[200] = "";
    if (!ok)
        snprintf(reason, sizeof(reason), "process_vm_readv from node rank %d: %s (ptrace policy: see "
                 "/proc/sys/kernel/yama/ptrace_scope)", peer, strerror(errno));
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    /* every rank gives the same reason: the lowest refused rank's */
    int src = 0;
    MPI_Allreduce(ok ? &c->size : &c->rank, &src, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        if (src == c->size)
            src = 0;
        MPI_Bcast(reason, sizeof(reason), MPI_CHAR, src, c->comm);
        snprintf(why, len, "CMA refused: %s", reason);
        return -1;
    }
    return 0;
}

static void cma_free(struct mb_coll_ctx *c, void *state)
{
    (void)c;
    free(state);
}

static int cma_available(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nnodes != 1) {
        snprintf(why, len, "the communicator spans %d nodes; CMA reaches one", c->nnodes);
        return 0;
    }
    return 1;
}

/* Reads elements [lo, hi) of every node rank's `addr_in` (plus base bytes)
 * chunk by chunk and reduces them with this rank's own `in` into dst (dst
 * indexed from lo; it may be `in` itself). */
static int pull_reduce(struct mb_coll_ctx *c, const struct mb_coll_args *a, const char *in, size_t base,
                       size_t lo, size_t hi, char *dst, int publish, uint64_t seq)
{
    int p = c->node_size, r = c->node_rank, rc = 0, *pids = pids_of(c);
    size_t es = mb_coll_dtype_size(a->dtype), ce = MB_COLL_CHUNK / es;
    char *tmp = mb_coll_tmp(c, MB_COLL_CHUNK);
    uint64_t k = 0;
    for (size_t off = lo; off < hi; off += ce, k++) {
        size_t len = hi - off < ce ? hi - off : ce;
        char *d = dst + (off - lo) * es;
        if (d != in + off * es)
            memcpy(d, in + off * es, len * es);
        for (int j = 1; j < p; j++) {
            int q = (r + j) % p;
            if (peer_read(pids[q], tmp, c->peer_flags[q]->addr_in + base + off * es, len * es) < 0)
                rc = -1;
            mb_coll_reduce2(a->dtype, a->op, d, tmp, len);
        }
        if (publish)
            mb_coll_post(c->peer_flags[r], &c->peer_flags[r]->progress, seq << 32 | (k + 1));
    }
    return rc;
}

static int cma_allreduce(struct mb_coll_ctx *c, const struct mb_coll_args *a, const char *in, char *out,
                         uint64_t seq)
{
    int p = c->node_size, r = c->node_rank, *pids = pids_of(c);
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count, ce = MB_COLL_CHUNK / es;
    size_t lo = mb_coll_slice_bound(n, p, r, es), hi = mb_coll_slice_bound(n, p, r + 1, es);
    int rc = pull_reduce(c, a, in, 0, lo, hi, out + lo * es, 1, seq);
    for (int j = 1; j < p; j++) {
        int s = (r + j) % p;
        size_t slo = mb_coll_slice_bound(n, p, s, es), shi = mb_coll_slice_bound(n, p, s + 1, es);
        uint64_t k = 0;
        for (size_t off = slo; off < shi; off += ce, k++) {
            size_t len = shi - off < ce ? shi - off : ce;
            mb_coll_wait(c, c->peer_flags[s], &c->peer_flags[s]->progress, seq << 32 | (k + 1));
            if (peer_read(pids[s], out + off * es, c->peer_flags[s]->addr_out + off * es, len * es) < 0)
                rc = -1;
        }
    }
    return rc;
}

/* Every kind: addresses published before `arrive`, reads from the peers'
 * private memory, `done` once nobody reads mine any more. */
static int cma_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    int p = c->node_size, r = c->node_rank, rc = 0, *pids = pids_of(c);
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count, bytes = n * es;
    char *out = a->recvbuf;
    const char *in = a->sendbuf && a->kind != MB_COLL_BCAST ? a->sendbuf : a->recvbuf;
    if (a->kind == MB_COLL_ALLGATHER && !a->sendbuf)
        in = out + (size_t)r * bytes;
    struct mb_coll_flags *me = c->peer_flags[r];
    uint64_t seq = ++c->seq;
    mb_coll_spin(c, bytes * (size_t)(a->kind == MB_COLL_BCAST ? 1 : p));
    me->addr_in = (uint64_t)(uintptr_t)in;
    me->addr_out = (uint64_t)(uintptr_t)out;
    mb_coll_post(me, &me->arrive, seq);
    mb_coll_wait_all(c, 0, seq);
    switch (a->kind) {
    case MB_COLL_ALLREDUCE: rc = cma_allreduce(c, a, in, out, seq); break;
    case MB_COLL_REDUCE_SCATTER: {
        /* in place, my block lands on block 0 of my input, which rank 0
         * reads: reduce into a temporary, copy after `done` */
        int late = !a->sendbuf && r != 0;
        char *dst = late ? (char *)mb_coll_tmp(c, MB_COLL_CHUNK + bytes) + MB_COLL_CHUNK : out;
        rc = pull_reduce(c, a, in, 0, (size_t)r * n, (size_t)(r + 1) * n, dst, 0, seq);
        mb_coll_post(me, &me->done, seq);
        mb_coll_wait_all(c, 1, seq);
        if (late)
            memcpy(out, dst, bytes);
        goto out;
    }
    case MB_COLL_ALLGATHER:
        if (a->sendbuf)
            memcpy(out + (size_t)r * bytes, in, bytes);
        for (int j = 1; j < p; j++) {
            int q = (r + j) % p;
            if (bytes && peer_read(pids[q], out + (size_t)q * bytes, c->peer_flags[q]->addr_in, bytes) < 0)
                rc = -1;
        }
        break;
    case MB_COLL_BCAST:
        if (r != a->root && bytes && peer_read(pids[a->root], out, c->peer_flags[a->root]->addr_in, bytes) < 0)
            rc = -1;
        break;
    case MB_COLL_REDUCE: /* the root pulls and reduces every input */
        if (r == a->root)
            rc = pull_reduce(c, a, in, 0, 0, n, out, 0, seq);
        break;
    default: return -1;
    }
    mb_coll_post(me, &me->done, seq);
    mb_coll_wait_all(c, 1, seq);
out:
    if (rc)
        mb_warn("collectives: cma: process_vm_readv failed: %s", strerror(errno));
    return rc;
}

/* The model: entry and exit flags, this rank's slice of every peer's input
 * read chunk by chunk and reduced, the peers' reduced slices read. */
static double m_cma(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE || m->N != 1)
        return NAN;
    const struct mb_coll_profile *p = m->p;
    double slice = m->n / m->L, chunks = ceil(slice / MB_COLL_CHUNK), rd = mb_coll_blend(p, p->cma, m->ws);
    double read = chunks * p->cma_alpha + slice * rd; /* one peer's slice, chunk by chunk */
    return 2 * m->fl + (m->oop ? mb_coll_C(m, slice) : 0) + (m->L - 1) * (2 * read + mb_coll_R(m, slice));
}

const struct mb_coll_algo mb_coll_algo_cma = {
    .name = "cma", .kinds = MB_COLL_ALL_KINDS, .model = m_cma,
    .description = "single copy with process_vm_readv (Linux CMA) from peers' private buffers",
    .available = cma_available, .run = cma_run, .setup = cma_probe, .teardown = cma_free,
};
