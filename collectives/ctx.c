/* Communicator contexts: node split, shared flags, scratch, registration. */
#include "internal.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int shared_alloc(MPI_Comm node, struct mb_buf *b, size_t bytes, void ***peers, int nnode,
                        char *err, size_t errlen)
{
    if (mb_buf_alloc(b, MB_MEM_SHARED, bytes, 0, node, err, errlen) != 0)
        return -1;
    if (peers) {
        *peers = calloc((size_t)nnode, sizeof(void *));
        for (int q = 0; q < nnode; q++)
            (*peers)[q] = mb_buf_peer(b, q);
    }
    return 0;
}

struct mb_coll_ctx *mb_coll_ctx_create(MPI_Comm comm, int ranks_per_node, char *err, size_t errlen)
{
    struct mb_coll_ctx *c = calloc(1, sizeof(*c));
    c->slots = calloc(mb_coll_nalgos(), sizeof(*c->slots));
    MPI_Comm_dup(comm, &c->comm);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    if (ranks_per_node > 0)
        MPI_Comm_split(c->comm, c->rank / ranks_per_node, c->rank, &c->node_comm);
    else
        MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->node_comm);
    MPI_Comm_rank(c->node_comm, &c->node_rank);
    MPI_Comm_size(c->node_comm, &c->node_size);
    /* the real machine, for algorithms that care (hier's pipeline); without
     * an override node_comm is that machine already */
    int host_size = c->node_size;
    if (ranks_per_node > 0) {
        MPI_Comm host;
        MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &host);
        MPI_Comm_size(host, &host_size);
        MPI_Comm_free(&host);
    }
    c->one_host = host_size == c->size;
    MPI_Comm_split(c->comm, c->node_rank == 0 ? 0 : MPI_UNDEFINED, c->rank, &c->leader_comm);
    int lead = c->node_rank == 0;
    MPI_Allreduce(&lead, &c->nnodes, 1, MPI_INT, MPI_SUM, c->comm);
    void **pf = NULL;
    if (shared_alloc(c->node_comm, &c->ctrl, sizeof(struct mb_coll_flags), &pf, c->node_size, err,
                     errlen) != 0 ||
        shared_alloc(c->node_comm, &c->small, 2 * MB_COLL_SMALL, &c->peer_small, c->node_size, err,
                     errlen) != 0) {
        free(pf);
        mb_coll_ctx_free(c);
        return NULL;
    }
    c->peer_flags = (struct mb_coll_flags **)pf;
    struct mb_coll_flags *f = c->peer_flags[c->node_rank];
    atomic_store(&f->arrive, 0);
    atomic_store(&f->progress, 0);
    atomic_store(&f->done, 0);
    atomic_store(&f->wake, 0);
    atomic_store(&f->sleepers, 0);
    c->scratch.win = MPI_WIN_NULL;
    mb_coll_spin(c, 0);
    MPI_Barrier(c->comm);
    return c;
}

void mb_coll_ctx_free(struct mb_coll_ctx *c)
{
    if (!c)
        return;
    /* the algorithms first: they may still reach the registered memory
     * (ucx unmaps it, after a barrier, before its worker goes) */
    for (size_t i = 0; i < mb_coll_nalgos(); i++) {
        const struct mb_coll_algo *al = mb_coll_algo_at(i);
        struct mb_coll_slot *s = &c->slots[i];
        if (al->teardown && (s->state || s->setup > 0))
            al->teardown(c, s->state);
        s->state = NULL;
    }
    while (c->regs) {
        struct mb_coll_reg *r = c->regs;
        c->regs = r->next;
        mb_buf_free(&r->buf);
        free(r->algo_state);
        free(r);
    }
    mb_buf_free(&c->scratch);
    mb_buf_free(&c->small);
    mb_buf_free(&c->ctrl);
    free(c->peer_flags);
    free(c->peer_small);
    free(c->peer_scratch);
    free(c->tmp);
    free(c->slots);
    if (c->leader_comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->leader_comm);
    MPI_Comm_free(&c->node_comm);
    MPI_Comm_free(&c->comm);
    free(c);
}

int mb_coll_ctx_nnodes(const struct mb_coll_ctx *c) { return c->nnodes; }
int mb_coll_ctx_host_ranks(const struct mb_coll_ctx *c) { return c->one_host ? c->size : c->node_size; }

void *mb_coll_alloc(struct mb_coll_ctx *c, size_t bytes, char *err, size_t errlen)
{
    struct mb_coll_reg *r = calloc(1, sizeof(*r));
    if (mb_buf_alloc(&r->buf, MB_MEM_SHARED, bytes, 0, c->node_comm, err, errlen) != 0) {
        free(r);
        return NULL;
    }
    r->algo_state = calloc(mb_coll_nalgos(), sizeof(void *));
    r->next = c->regs;
    c->regs = r;
    for (size_t i = 0; i < mb_coll_nalgos(); i++)
        if (mb_coll_algo_at(i)->reg_map && c->slots[i].setup > 0)
            mb_coll_reg_map_all(c, mb_coll_algo_at(i));
    return r->buf.ptr;
}

void mb_coll_reg_map_all(struct mb_coll_ctx *c, const struct mb_coll_algo *al)
{
    size_t i = mb_coll_index(al);
    if (!al->reg_map)
        return;
    for (struct mb_coll_reg *r = c->regs; r; r = r->next) /* the same order on every rank */
        if (!r->algo_state[i] &&
            al->reg_map(c, c->slots[i].state, r->buf.ptr, r->buf.bytes, &r->algo_state[i]) != 0)
            mb_warn("collectives: %s: cannot map a registered buffer of %zu bytes", al->name, r->buf.bytes);
}

void mb_coll_release(struct mb_coll_ctx *c, void *ptr)
{
    for (struct mb_coll_reg **pp = &c->regs; *pp; pp = &(*pp)->next)
        if ((*pp)->buf.ptr == ptr) {
            struct mb_coll_reg *r = *pp;
            *pp = r->next;
            for (size_t i = 0; i < mb_coll_nalgos(); i++)
                if (r->algo_state[i] && mb_coll_algo_at(i)->reg_unmap)
                    mb_coll_algo_at(i)->reg_unmap(c, c->slots[i].state, r->algo_state[i]);
            mb_buf_free(&r->buf);
            free(r->algo_state);
            free(r);
            return;
        }
}

int mb_coll_lookup(struct mb_coll_ctx *c, const void *ptr, void **peers)
{
    for (struct mb_coll_reg *r = c->regs; r; r = r->next) {
        const char *b = r->buf.ptr;
        if ((const char *)ptr >= b && (const char *)ptr <= b + r->buf.bytes) {
            size_t off = (size_t)((const char *)ptr - b);
            for (int q = 0; q < c->node_size; q++)
                peers[q] = (char *)mb_buf_peer(&r->buf, q) + off;
            return 0;
        }
    }
    return -1;
}

void *mb_coll_tmp(struct mb_coll_ctx *c, size_t bytes)
{
    if (bytes > c->tmp_bytes) {
        free(c->tmp);
        c->tmp_bytes = bytes;
        if (posix_memalign(&c->tmp, 4096, bytes ? bytes : 1) != 0)
            c->tmp = NULL, c->tmp_bytes = 0;
    }
    return c->tmp;
}

int mb_coll_scratch(struct mb_coll_ctx *c, size_t bytes)
{
    if (c->scratch.ptr && c->scratch.bytes >= bytes)
        return 0;
    /* every rank of the node calls with the same size: collective is safe */
    mb_buf_free(&c->scratch);
    free(c->peer_scratch);
    c->peer_scratch = NULL;
    char err[256];
    size_t want = bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : bytes;
    if (shared_alloc(c->node_comm, &c->scratch, want, &c->peer_scratch, c->node_size, err,
                     sizeof(err)) != 0) {
        mb_warn("collectives: scratch: %s", err);
        return -1;
    }
    return 0;
}

/* Spinning covers a peer that is running; past this (plus the time to move
 * the call's data, mb_coll_spin) the peer is likely descheduled (more ranks
 * than cores, or a loaded machine), and spinning or sched_yield would only
 * delay it: sleep until it posts. */
#define MB_COLL_SPIN_NS 20000

static long futex(_Atomic uint32_t *w, int op, uint32_t v)
{
    return syscall(SYS_futex, (uint32_t *)w, op, v, NULL, NULL, 0);
}

void mb_coll_post(struct mb_coll_flags *owner, _Atomic uint64_t *f, uint64_t v)
{
    /* seq_cst on both sides: either the waiter sees v, or this rank sees
     * it among the sleepers (and its futex word changed) */
    atomic_store_explicit(f, v, memory_order_seq_cst);
    atomic_fetch_add_explicit(&owner->wake, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&owner->sleepers, memory_order_seq_cst))
        futex(&owner->wake, FUTEX_WAKE, INT_MAX);
}

void mb_coll_spin(struct mb_coll_ctx *c, size_t bytes)
{
    c->spin_ns = MB_COLL_SPIN_NS + bytes / 2; /* a peer copying at 2 GB/s or better */
}

void mb_coll_wait(struct mb_coll_ctx *c, struct mb_coll_flags *owner, _Atomic uint64_t *f, uint64_t want)
{
    double t0 = 0;
    for (unsigned spin = 0; atomic_load_explicit(f, memory_order_acquire) < want; spin++) {
        if (spin % 64 != 63)
            continue;
        if (spin == 63)
            t0 = mb_now();
        else if ((mb_now() - t0) * 1e9 > (double)c->spin_ns)
            break;
    }
    while (atomic_load_explicit(f, memory_order_acquire) < want) {
        atomic_fetch_add_explicit(&owner->sleepers, 1, memory_order_seq_cst);
        uint32_t w = atomic_load_explicit(&owner->wake, memory_order_seq_cst);
        if (atomic_load_explicit(f, memory_order_seq_cst) < want)
            futex(&owner->wake, FUTEX_WAIT, w); /* returns at once if a post came in between */
        atomic_fetch_sub_explicit(&owner->sleepers, 1, memory_order_seq_cst);
    }
}

void mb_coll_wait_all(struct mb_coll_ctx *c, int which_done, uint64_t want)
{
    for (int q = 0; q < c->node_size; q++) {
        struct mb_coll_flags *f = c->peer_flags[q];
        mb_coll_wait(c, f, which_done ? &f->done : &f->arrive, want);
    }
}

int mb_coll_agree(struct mb_coll_ctx *c, int ok, char *reason, size_t len)
{
    int all_ok, src, none = c->size;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (all_ok)
        return 1;
    MPI_Allreduce(ok ? &none : &c->rank, &src, 1, MPI_INT, MPI_MIN, c->comm);
    MPI_Bcast(reason, (int)len, MPI_CHAR, src, c->comm);
    return 0;
}
