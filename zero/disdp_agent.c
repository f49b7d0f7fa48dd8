/* The worker's agent thread (the SmartNIC stand-in, disdp_internal.h): it takes
 * the compute thread's pull/push descriptors from a queue, does all of the
 * worker's MPI traffic, and flags each descriptor done. With a link rate,
 * the bytes cross an mb_link (a paced copy thread per direction) between
 * the worker's memory and the agent's staging buffers, as a NIC's DMA
 * would cross PCIe. */
#include "disdp_internal.h"
#include "../common/common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_PULL, OP_PUSH };
enum { ST_START, ST_WIRE, ST_LINK, ST_DONE };

struct mb_disdp_op {
    int kind, layer, step;
    enum mb_disdp_phase ph;
    void *dst;
    const void *g;
    int stage;
    atomic_int done;
    MPI_Request *req;
    int nreq;
    char *stage_buf;            /* pull: parameters (link on); push: fp32 copy (link on) then packed chunks */
    char *packed;
    mb_link_ticket ticket;
    struct mb_disdp_op *next;
};

struct mb_disdp_agent {
    struct mb_disdp_cfg c;
    struct mb_disdp_agent_opts o;
    int rank;
    pthread_t th;
    pthread_mutex_t mu;
    struct mb_disdp_op *qhead, *qtail; /* posted, not yet taken */
    int stop;
    atomic_int failed;
    char err[512];
    struct mb_link *link;
    int *pushes;                /* per layer: pushes so far (= step of the next) */
    struct mb_disdp_stats st;
    int fault, f_step, f_layer, f_worker;
    size_t f_chunk, f_elem;
};

static void fail(struct mb_disdp_agent *a, const char *fmt, const char *what)
{
    pthread_mutex_lock(&a->mu);
    if (!atomic_load(&a->failed))
        snprintf(a->err, sizeof a->err, fmt, what);
    pthread_mutex_unlock(&a->mu);
    atomic_store(&a->failed, 1);
}

static size_t wire_size(const struct mb_disdp_agent *a)
{
    return nn_dtype_size(a->c.wire);
}

static int post_pull(struct mb_disdp_agent *a, struct mb_disdp_op *op)
{
    size_t nc = mb_disdp_nchunks(&a->c, op->layer), ws = wire_size(a);
    char *into = a->link ? op->stage_buf : op->dst;
    int tag = mb_disdp_tag(&a->c, 0, op->ph, op->layer);
    for (size_t k = 0; k < nc; k++) {
        size_t off, n;
        mb_disdp_chunk_range(&a->c, op->layer, k, &off, &n);
        if (MPI_Irecv(into + off * ws, (int)(n * ws), MPI_BYTE, mb_disdp_switch_rank(&a->c, op->layer, k), tag,
                      a->c.comm, &op->req[k]) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

/* Packs each chunk (its 4-byte elements, then its trailer), injects the
 * fault after the sums, and sends the chunks to their switches. */
static int post_push(struct mb_disdp_agent *a, struct mb_disdp_op *op, const char *g)
{
    size_t nc = mb_disdp_nchunks(&a->c, op->layer);
    int tag = mb_disdp_tag(&a->c, 1, MB_DISDP_FWD, op->layer);
    char *p = op->packed;
    for (size_t k = 0; k < nc; k++) {
        size_t off, n;
        mb_disdp_chunk_range(&a->c, op->layer, k, &off, &n);
        memcpy(p, g + off * 4, n * 4);
        double sums[2];
        mb_disdp_block_sums(p, n, a->c.agg, &sums[0], &sums[1]);
        memcpy(p + n * 4, sums, sizeof sums);
        if (a->fault && op->step == a->f_step && op->layer == a->f_layer && k == a->f_chunk &&
            a->rank == a->f_worker)
            ((uint32_t *)p)[a->f_elem] ^= 1u << 30; /* on the wire, after the sender summed it */
        if (MPI_Isend(p, (int)(n * 4 + MB_DISDP_TRAILER), MPI_BYTE, mb_disdp_switch_rank(&a->c, op->layer, k), tag,
                      a->c.comm, &op->req[k]) != MPI_SUCCESS)
            return -1;
        p += n * 4 + MB_DISDP_TRAILER;
    }
    return 0;
}

/* One state change of op if it can make one: 1 moved, 0 not, -1 failed. */
static int advance(struct mb_disdp_agent *a, struct mb_disdp_op *op)
{
    size_t n = a->c.numel[op->layer];
    int done = 0;
    switch (op->stage) {
    case ST_START:
        if (op->kind == OP_PULL) {
            if (post_pull(a, op) != 0)
                return -1;
            op->stage = ST_WIRE;
        } else if (a->link) {
            op->ticket = mb_link_copy(a->link, MB_LINK_D2H, op->stage_buf, op->g, n * 4);
            op->stage = ST_LINK;
        } else {
            if (post_push(a, op, op->g) != 0)
                return -1;
            op->stage = ST_WIRE;
        }
        return 1;
    case ST_LINK:
        if (!mb_link_test(a->link, op->ticket))
            return 0;
        if (op->kind == OP_PUSH) {
            if (post_push(a, op, op->stage_buf) != 0)
                return -1;
            op->stage = ST_WIRE;
        } else {
            op->stage = ST_DONE;
        }
        return 1;
    case ST_WIRE:
        if (MPI_Testall(op->nreq, op->req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!done)
            return 0;
        pthread_mutex_lock(&a->mu);
        if (op->kind == OP_PULL) {
            a->st.recv_bytes += n * wire_size(a);
            a->st.pulls++;
        } else {
            a->st.sent_bytes += n * 4;
            a->st.trailer_bytes += (uint64_t)op->nreq * MB_DISDP_TRAILER;
            a->st.pushes++;
        }
        pthread_mutex_unlock(&a->mu);
        if (op->kind == OP_PULL && a->link) {
            op->ticket = mb_link_copy(a->link, MB_LINK_H2D, op->dst, op->stage_buf, n * wire_size(a));
            op->stage = ST_LINK;
        } else {
            op->stage = ST_DONE;
        }
        return 1;
    }
    return 0;
}

static void *agent_main(void *arg)
{
    struct mb_disdp_agent *a = arg;
    struct mb_disdp_op *active = NULL, **tail = &active;
    if (a->o.cpu >= 0) {
        char e[256];
        if (mb_pin_thread(a->o.cpu, e, sizeof e) != 0)
            fail(a, "agent: %s", e);
    }
    for (;;) {
        pthread_mutex_lock(&a->mu);
        if (a->qhead) {
            *tail = a->qhead;
            tail = &a->qtail->next;
            a->qhead = a->qtail = NULL;
        }
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        int moved = 0;
        for (struct mb_disdp_op **pp = &active; *pp && !atomic_load(&a->failed);) {
            struct mb_disdp_op *op = *pp;
            int r = advance(a, op);
            if (r < 0) {
                char what[64];
                snprintf(what, sizeof what, "layer %d", op->layer);
                fail(a, "agent: an MPI call failed for %s", what);
                break;
            }
            moved |= r;
            if (op->stage == ST_DONE) {
                *pp = op->next;
                if (!*pp)
                    tail = pp;
                atomic_store(&op->done, 1); /* the op's last touch here: the waiter frees it */
            } else {
                pp = &op->next;
            }
        }
        if (atomic_load(&a->failed) || (stop && !active))
            break;
        if (!moved)
            mb_disdp_nap(&a->c);
    }
    double cpu = mb_cpu_s(1);
    pthread_mutex_lock(&a->mu);
    a->st.agent_cpu_s = cpu;
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

struct mb_disdp_agent *mb_disdp_agent_start(const struct mb_disdp_cfg *c, const struct mb_disdp_agent_opts *o,
                                            char *err, size_t errlen)
{
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
        snprintf(err, errlen, "disdp: the agent thread needs MPI_THREAD_MULTIPLE (this run has level %d)", level);
        return NULL;
    }
    struct mb_disdp_agent *a = calloc(1, sizeof *a);
    if (!a || !(a->pushes = calloc((size_t)c->nlayers, sizeof *a->pushes))) {
        free(a);
        snprintf(err, errlen, "disdp: out of memory");
        return NULL;
    }
    a->c = *c;
    if (o)
        a->o = *o;
    else
        a->o.cpu = -1;
    MPI_Comm_rank(c->comm, &a->rank);
    a->fault = mb_disdp_grad_fault(&a->c, &a->f_step, &a->f_layer, &a->f_chunk, &a->f_worker, &a->f_elem);
    pthread_mutex_init(&a->mu, NULL);
    if (a->o.link_gbps > 0) {
        struct mb_link_opts lo = {.gbps = {a->o.link_gbps, a->o.link_gbps}, .cpu = {-1, -1}};
        if (!(a->link = mb_link_new(&lo, err, errlen)))
            goto fail;
    }
    if (pthread_create(&a->th, NULL, agent_main, a) != 0) {
        snprintf(err, errlen, "disdp: cannot start the agent thread");
        if (a->link)
            mb_link_free(a->link);
        goto fail;
    }
    return a;
fail:
    pthread_mutex_destroy(&a->mu);
    free(a->pushes);
    free(a);
    return NULL;
}

static struct mb_disdp_op *post(struct mb_disdp_agent *a, int kind, int layer, enum mb_disdp_phase ph, void *dst,
                                const void *g)
{
    struct mb_disdp_op *op = calloc(1, sizeof *op);
    size_t n = a->c.numel[layer], nc = mb_disdp_nchunks(&a->c, layer);
    if (!op)
        return NULL;
    op->kind = kind;
    op->layer = layer;
    op->ph = ph;
    op->dst = dst;
    op->g = g;
    op->nreq = (int)nc;
    op->req = calloc(nc ? nc : 1, sizeof *op->req);
    size_t stage = !a->link ? 0 : kind == OP_PULL ? n * wire_size(a) : n * 4;
    if (stage)
        op->stage_buf = malloc(stage);
    if (kind == OP_PUSH)
        op->packed = malloc(n * 4 + nc * MB_DISDP_TRAILER + 1);
    if (!op->req || (stage && !op->stage_buf) || (kind == OP_PUSH && !op->packed)) {
        free(op->req);
        free(op->stage_buf);
        free(op->packed);
        free(op);
        return NULL;
    }
    pthread_mutex_lock(&a->mu);
    if (kind == OP_PUSH)
        op->step = a->pushes[layer]++;
    if (a->qtail)
        a->qtail->next = op;
    else
        a->qhead = op;
    a->qtail = op;
    pthread_mutex_unlock(&a->mu);
    return op;
}

struct mb_disdp_op *mb_disdp_pull(struct mb_disdp_agent *a, int layer, enum mb_disdp_phase ph, void *dst)
{
    return post(a, OP_PULL, layer, ph, dst, NULL);
}

struct mb_disdp_op *mb_disdp_push(struct mb_disdp_agent *a, int layer, const void *g)
{
    return post(a, OP_PUSH, layer, MB_DISDP_FWD, NULL, g);
}

int mb_disdp_test(struct mb_disdp_agent *a, const struct mb_disdp_op *op)
{
    if (atomic_load(&op->done))
        return 1;
    return atomic_load(&a->failed) ? -1 : 0;
}

static void copy_err(struct mb_disdp_agent *a, char *err, size_t errlen)
{
    pthread_mutex_lock(&a->mu);
    snprintf(err, errlen, "%s", a->err);
    pthread_mutex_unlock(&a->mu);
}

int mb_disdp_wait(struct mb_disdp_agent *a, struct mb_disdp_op *op, char *err, size_t errlen)
{
    if (!op) {
        snprintf(err, errlen, "disdp: out of memory posting a descriptor");
        return -1;
    }
    int r;
    while ((r = mb_disdp_test(a, op)) == 0)
        mb_disdp_nap(&a->c);
    if (r < 0) {
        copy_err(a, err, errlen);
        return -1; /* the op may still be the agent's: left to the process's end */
    }
    free(op->req);
    free(op->stage_buf);
    free(op->packed);
    free(op);
    return 0;
}

void mb_disdp_agent_stats(struct mb_disdp_agent *a, struct mb_disdp_stats *s)
{
    pthread_mutex_lock(&a->mu);
    *s = a->st;
    int running = !a->stop;
    pthread_mutex_unlock(&a->mu);
    if (running)
        s->agent_cpu_s = mb_thread_cpu_s((unsigned long)a->th);
    if (a->link) {
        struct mb_link_stats l[2];
        mb_link_stats(a->link, MB_LINK_H2D, &l[0]);
        mb_link_stats(a->link, MB_LINK_D2H, &l[1]);
        s->link_paced_s = l[0].paced_s + l[1].paced_s;
    }
}

int mb_disdp_agent_stop(struct mb_disdp_agent *a, struct mb_disdp_stats *final, char *err, size_t errlen)
{
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    if (final)
        mb_disdp_agent_stats(a, final);
    int rc = atomic_load(&a->failed) ? -1 : 0;
    if (rc)
        copy_err(a, err, errlen);
    if (a->link)
        mb_link_free(a->link);
    pthread_mutex_destroy(&a->mu);
    free(a->pushes);
    free(a);
    return rc;
}
