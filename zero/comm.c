/* The workers' collective requests: mb_coll_start's ring allgather and
 * reduce_scatter_block, paced and counted by the pacing hook, advanced by
 * the compute thread (poll) or by a progress thread (thread). A waiter
 * polls and sleeps 20 us between rounds while a transfer is under way
 * (else until the pacer's next send time), never spins. */
#include "zero.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAP_S 20e-6

struct zero_req {
    struct mb_coll_req *q;
    int kind;                  /* MB_COLL_ALLGATHER or MB_COLL_REDUCE_SCATTER */
    int layer;
    uint64_t recv_bytes;       /* the ring's (W-1) blocks, counted at completion */
    int done, failed;          /* set by whoever advances it (under mu in THREAD) */
    int paced;                 /* its last advance stopped at the pacer (a send not yet due) */
    int held;                  /* its send's bytes reserved on the link, not yet released */
    double ready_at;           /* when those bytes have passed */
    double t_issue, t_rel, t_done; /* started, first send released, finished (the wire lane) */
    float *spare;              /* an allgather into a second buffer (the layer's first in use) */
    struct zero_req *next;
};

struct zero_comm {
    struct zero_run *z;
    enum zero_progress how;
    /* pacing: one owner (the thread that advances), a token bucket; each
     * request holds its own reservation, so sends queue on the link in the
     * order they became ready (a FIFO wire) and a late release does not push
     * back the sends queued behind it */
    struct mb_rate rate;
    double late_s;             /* sum over paced sends of (release - ready_at) */
    uint64_t sent;             /* bytes the hook let go */
    struct zero_req *cur;      /* the request being advanced (the hook's caller) */
    struct mb_coll_pace hook;
    /* in flight, in start order */
    struct zero_req *head;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t thr;
    int thread_on, stop;
    int hooked;                /* poll_hook set on z->ws */
    uint64_t polls;            /* poll_hook calls that found requests in flight */
};

static void nap(double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The pacing hook. Issue 19: with one reservation for the whole engine,
 * a request whose send was ready while another was held could not reserve
 * until that one was released, and every late release (the progress
 * thread's wake-up, the compute thread's next poll) left the link idle for
 * as long: 6-12 ms a step at the auto link. Each request now reserves its
 * own send's bytes when it first asks, behind those reserved before it. */
static int pace_fn(void *ctx, size_t bytes)
{
    struct zero_comm *c = ctx;
    struct zero_req *r = c->cur;
    double now = mb_now();
    if (c->rate.rate > 0 && r) {
        if (!r->held) {
            r->ready_at = mb_rate_reserve(&c->rate, (double)bytes);
            r->held = 1;
        }
        if (now < r->ready_at)
            return r->paced = 1, 0;
        r->held = 0;
        c->late_s += now - r->ready_at; /* the advancing thread came back late */
    }
    if (r && !r->t_rel)
        r->t_rel = now;
    c->sent += bytes;
    return 1;
}

/* Advances every request in flight once (the owner thread): 1 when any
 * finished. Finished ones are freed from MPI's side here. Under THREAD the
 * caller holds mu, released around the MPI calls: a request that is not
 * done is never unlinked (zero_req_wait unlinks done ones, under mu). */
static int advance_all(struct zero_comm *c)
{
    int any = 0, locked = c->how == ZERO_PROGRESS_THREAD;
    for (struct zero_req *r = c->head; r; r = r->next) {
        if (r->done)
            continue;
        if (locked)
            pthread_mutex_unlock(&c->mu);
        c->cur = r; /* the owner thread's own: pace_fn marks it */
        r->paced = 0;
        int rc = mb_coll_progress(r->q), ok = 1;
        c->cur = NULL;
        if (rc != 0) {
            ok = mb_coll_req_wait(r->q) == MPI_SUCCESS && rc == 1;
            r->q = NULL;
        }
        if (locked)
            pthread_mutex_lock(&c->mu);
        if (rc == 0)
            continue;
        r->failed = !ok;
        r->done = 1;
        r->t_done = mb_now();
        if (locked)
            pthread_cond_broadcast(&c->done);
        any = 1;
    }
    return any;
}

/* How long to sleep before the next round: a short nap while any request
 * waits on MPI (its send posted, the peer's message or a rendezvous to
 * advance: this thread is the only one that advances it), else the
 * pacer's send time when a send is held. Sleeping to the send time while
 * another request's transfer was under way left that transfer unadvanced
 * for up to 1 ms (issue 19: with the next gathers and a reduce-scatter in
 * flight together, one of them is nearly always held). */
static double next_nap(struct zero_comm *c)
{
    double due = 0;
    for (struct zero_req *r = c->head; r; r = r->next) {
        if (!r->done && !r->paced)
            return NAP_S;
        if (!r->done && r->held && (!due || r->ready_at < due))
            due = r->ready_at;
    }
    double left = due ? due - mb_now() : NAP_S;
    return left > NAP_S ? (left < 1e-3 ? left : 1e-3) : NAP_S;
}

static void *progress_main(void *arg)
{
    struct zero_comm *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        int pending = 0;
        for (struct zero_req *r = c->head; r; r = r->next)
            pending |= !r->done;
        if (c->stop && !pending)
            break;
        if (!pending) {
            pthread_cond_wait(&c->work, &c->mu);
            continue;
        }
        if (!advance_all(c)) {
            double t = next_nap(c);
            pthread_mutex_unlock(&c->mu);
            nap(t);
            pthread_mutex_lock(&c->mu);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* nn's hook between a layer's GEMMs (--progress poll in an overlapping
 * mode): the compute thread advances what is in flight mid-layer, not
 * only between layers. Its time counts as compute. */
static void poll_hook(void *ctx)
{
    struct zero_comm *c = ctx;
    if (c->head) {
        c->polls++;
        advance_all(c);
    }
}

struct zero_comm *zero_comm_new(struct zero_run *z, char *err, size_t len)
{
    struct zero_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return snprintf(err, len, "out of memory: the request engine"), NULL;
    c->z = z;
    c->how = z->mode->uses_progress ? z->o.progress : ZERO_PROGRESS_POLL;
    /* no burst: every send waits for its own bytes to pass at the rate */
    mb_rate_init(&c->rate, z->o.link_bps, 0);
    c->hook = (struct mb_coll_pace){pace_fn, c};
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->done, NULL);
    if (c->how == ZERO_PROGRESS_THREAD) {
        if (pthread_create(&c->thr, NULL, progress_main, c) != 0) {
            snprintf(err, len, "cannot start the progress thread");
            free(c);
            return NULL;
        }
        c->thread_on = 1;
    }
    if (c->how == ZERO_PROGRESS_POLL && z->mode->uses_progress && z->ws) {
        nn_workspace_set_progress(z->ws, poll_hook, c);
        c->hooked = 1;
    }
    return c;
}

void zero_comm_free(struct zero_comm *c)
{
    if (!c)
        return;
    if (c->hooked)
        nn_workspace_set_progress(c->z->ws, NULL, NULL);
    if (c->thread_on) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_cond_broadcast(&c->work);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thr, NULL);
    }
    while (c->head) { /* only after a failed step: finish what is left */
        struct zero_req *r = c->head;
        c->head = r->next;
        if (r->q)
            mb_coll_req_wait(r->q);
        free(r);
    }
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static struct zero_req *start(struct zero_run *z, int i, int kind, char *err, size_t len)
{
    struct zero_comm *c = z->cc;
    struct zero_layer *ly = &z->layer[i];
    struct zero_req *r = calloc(1, sizeof(*r));
    if (!r)
        return snprintf(err, len, "out of memory: a request"), NULL;
    struct mb_coll_args a = {.kind = kind, .op = MB_COLL_SUM};
    size_t esz;
    /* the layer's parameters still bound (the head's forward computing
     * while its backward's gather starts): into a second buffer, bound when
     * the gather is waited for, after the forward gave the first back */
    if (kind == MB_COLL_ALLGATHER && (ly->full ? !(r->spare = zero_params_spare(z, i)) : zero_params_get(z, i) != 0)) {
        free(r);
        return snprintf(err, len, "layer %d: no parameter buffer free for its gather", i), NULL;
    }
    if (kind == MB_COLL_ALLGATHER) {
        /* the fp32 parameters as bytes, in place: own block at off */
        a.sendbuf = NULL, a.recvbuf = r->spare ? r->spare : ly->full, a.dtype = MB_COLL_INT8, a.count = ly->S * 4;
        esz = 1;
    } else {
        int fixed = z->o.agg == ZERO_AGG_FIXED;
        a.sendbuf = fixed ? (void *)ly->acc : (void *)ly->grad, a.recvbuf = ly->red;
        a.dtype = fixed ? MB_COLL_INT32 : MB_COLL_FLOAT, a.count = ly->S, esz = 4;
    }
    if (kind == MB_COLL_REDUCE_SCATTER)
        zero_checksum_send(z, i);
    r->kind = kind, r->layer = i;
    r->t_issue = mb_now();
    r->recv_bytes = (uint64_t)(z->o.lay.W - 1) * a.count * esz;
    if (mb_coll_start(z->coll, &a, &c->hook, &r->q, err, len) != 0) {
        zero_params_drop(z, r->spare);
        free(r);
        return NULL;
    }
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_lock(&c->mu);
    struct zero_req **tail = &c->head;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    if (c->how == ZERO_PROGRESS_THREAD) {
        pthread_cond_signal(&c->work);
        pthread_mutex_unlock(&c->mu);
    } else {
        advance_all(c); /* posts the first step's receive and send */
    }
    return r;
}

struct zero_req *zero_gather_start(struct zero_run *z, int i, char *err, size_t len)
{
    return start(z, i, MB_COLL_ALLGATHER, err, len);
}

struct zero_req *zero_reduce_start(struct zero_run *z, int i, char *err, size_t len)
{
    return start(z, i, MB_COLL_REDUCE_SCATTER, err, len);
}

int zero_comm_poll(struct zero_comm *c)
{
    if (c->how == ZERO_PROGRESS_POLL)
        advance_all(c);
    return 0;
}

int zero_req_wait(struct zero_run *z, struct zero_req *r, char *err, size_t len)
{
    struct zero_comm *c = z->cc;
    double t0 = mb_now(), cpu0 = mb_cpu_s(1);
    if (c->how == ZERO_PROGRESS_THREAD) {
        pthread_mutex_lock(&c->mu);
        while (!r->done)
            pthread_cond_wait(&c->done, &c->mu);
    } else {
        while (!r->done)
            if (!advance_all(c) && !r->done)
                nap(next_nap(c));
    }
    struct zero_req **p = &c->head;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_unlock(&c->mu);
    double t1 = mb_now();
    z->st.comm_wait_s += t1 - t0;
    z->st.comm_cpu_s += mb_cpu_s(1) - cpu0;
    const char *what = r->kind == MB_COLL_ALLGATHER ? "allgather" : "reduce_scatter";
    zero_span(z, "comm-wait", what, t0, t1);
    /* the request's life on the wire lane: queued on the link (started, its
     * first send not yet released by the pacer), then moving until done */
    if (r->t_rel > r->t_issue)
        zero_span(z, "wire-queued", what, r->t_issue, r->t_rel);
    if (r->t_done > (r->t_rel ? r->t_rel : r->t_issue))
        zero_span(z, "wire", what, r->t_rel ? r->t_rel : r->t_issue, r->t_done);
    int failed = r->failed;
    if (!failed)
        z->st.recv_bytes += r->recv_bytes;
    if (!failed && r->kind == MB_COLL_REDUCE_SCATTER)
        zero_checksum_recv(z, r->layer);
    if (!failed && r->kind == MB_COLL_REDUCE_SCATTER)
        zero_grads_put(z, r->layer); /* summed into red: the full-size gradient goes back */
    if (!failed && r->spare && zero_params_adopt(z, r->layer, r->spare) != 0) {
        zero_params_drop(z, r->spare);
        snprintf(err, len, "layer %d: its second parameter buffer arrived while the first was bound", r->layer);
        free(r);
        return -1;
    }
    if (failed) {
        zero_params_drop(z, r->spare);
        snprintf(err, len, "layer %d: %s failed", r->layer,
                 r->kind == MB_COLL_ALLGATHER ? "the parameter allgather" : "the gradient reduce-scatter");
    }
    free(r);
    return failed ? -1 : 0;
}

void zero_comm_set_rate(struct zero_comm *c, double bps)
{
    mb_rate_init(&c->rate, bps, 0); /* before any request: no owner yet */
}

double zero_comm_pace_late_s(struct zero_comm *c)
{
    if (!c)
        return 0;
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_lock(&c->mu);
    double s = c->late_s;
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_unlock(&c->mu);
    return s;
}

uint64_t zero_comm_polls(const struct zero_comm *c)
{
    return c ? c->polls : 0;
}

uint64_t zero_comm_sent(struct zero_comm *c)
{
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_lock(&c->mu);
    uint64_t n = c->sent;
    if (c->how == ZERO_PROGRESS_THREAD)
        pthread_mutex_unlock(&c->mu);
    return n;
}

double zero_comm_thread_cpu_s(struct zero_comm *c)
{
    return c && c->thread_on ? mb_thread_cpu_s((unsigned long)c->thr) : 0;
}
