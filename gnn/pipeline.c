/* Pipeline runtime: stages as thread teams joined by bounded queues of
 * batch slots. A stage's leader takes a batch, the team runs the stage
 * function on it together (Hyperion splits I/O submission and completion
 * this way), the leader hands it on. The slot count bounds what is in
 * flight: one slot serialises everything (nopipe). */
#include "gnn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

struct item {
    int slot;
    long batch;
};

/* Bounded FIFO of items (capacity = slots, so a push never waits). */
struct queue {
    struct item *v;
    int cap, head, n;
    int closed;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static int q_init(struct queue *q, int cap)
{
    memset(q, 0, sizeof(*q));
    q->v = calloc((size_t)cap, sizeof(*q->v));
    q->cap = cap;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    return q->v ? 0 : -1;
}

static void q_push(struct queue *q, struct item it)
{
    pthread_mutex_lock(&q->mu);
    while (q->n == q->cap)
        pthread_cond_wait(&q->cv, &q->mu);
    q->v[(q->head + q->n) % q->cap] = it;
    q->n++;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* 1 with an item, 0 when closed and empty. */
static int q_pop(struct queue *q, struct item *it)
{
    pthread_mutex_lock(&q->mu);
    while (q->n == 0 && !q->closed)
        pthread_cond_wait(&q->cv, &q->mu);
    int got = q->n > 0;
    if (got) {
        *it = q->v[q->head];
        q->head = (q->head + 1) % q->cap;
        q->n--;
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return got;
}

static void q_close(struct queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void q_free(struct queue *q)
{
    free(q->v);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

struct stage_rt {
    struct gnn_stage def;
    struct gnn_pipe *p;
    int index;
    pthread_t *threads;
    pthread_barrier_t start, done;
    struct item cur;          /* the batch the team works on; slot -1 = stop */
    int *rc;                  /* per thread */
    double busy;              /* seconds this pass */
};

struct gnn_pipe {
    int nstages, nslots;
    void *ctx;
    struct stage_rt st[GNN_PIPE_MAX_STAGES];
    struct queue q[GNN_PIPE_MAX_STAGES + 1]; /* q[s]: input of stage s; q[nstages]: finished */
    int *status;              /* per slot */
    long nbatches, next_batch, delivered;
    double wait;
    struct thread_arg {
        struct stage_rt *st;
        int tid;
    } *args;
};

static void *stage_main(void *arg)
{
    struct thread_arg *a = arg;
    struct stage_rt *s = a->st;
    struct gnn_pipe *p = s->p;
    int leader = a->tid == 0, nt = s->def.nthreads;
    for (;;) {
        if (leader) {
            struct item it;
            if (!q_pop(&p->q[s->index], &it))
                it.slot = -1;
            s->cur = it;
        }
        pthread_barrier_wait(&s->start);
        struct item it = s->cur;
        if (it.slot < 0)
            break;
        double t0 = leader ? mb_now() : 0;
        s->rc[a->tid] = p->status[it.slot] ? 0 : s->def.fn(p->ctx, it.slot, it.batch, a->tid, nt);
        pthread_barrier_wait(&s->done);
        if (leader) {
            s->busy += mb_now() - t0;
            for (int t = 0; t < nt; t++)
                if (s->rc[t] && !p->status[it.slot])
                    p->status[it.slot] = s->rc[t];
            q_push(&p->q[s->index + 1], it);
        }
    }
    if (leader)
        q_close(&p->q[s->index + 1]);
    return NULL;
}

struct gnn_pipe *gnn_pipe_new(const struct gnn_stage *stages, int nstages, int nslots, void *ctx)
{
    if (nstages < 1 || nstages > GNN_PIPE_MAX_STAGES || nslots < 1)
        return NULL;
    struct gnn_pipe *p = calloc(1, sizeof(*p));
    int nthreads = 0;
    for (int s = 0; s < nstages; s++)
        nthreads += stages[s].nthreads > 0 ? stages[s].nthreads : 1;
    p->args = calloc((size_t)nthreads, sizeof(*p->args));
    p->status = calloc((size_t)nslots, sizeof(int));
    p->nstages = nstages;
    p->nslots = nslots;
    p->ctx = ctx;
    for (int s = 0; s <= nstages; s++)
        q_init(&p->q[s], nslots);
    int k = 0;
    for (int s = 0; s < nstages; s++) {
        struct stage_rt *st = &p->st[s];
        st->def = stages[s];
        if (st->def.nthreads < 1)
            st->def.nthreads = 1;
        st->p = p;
        st->index = s;
        st->rc = calloc((size_t)st->def.nthreads, sizeof(int));
        st->threads = calloc((size_t)st->def.nthreads, sizeof(pthread_t));
        pthread_barrier_init(&st->start, NULL, (unsigned)st->def.nthreads);
        pthread_barrier_init(&st->done, NULL, (unsigned)st->def.nthreads);
        for (int t = 0; t < st->def.nthreads; t++, k++) {
            p->args[k].st = st;
            p->args[k].tid = t;
            pthread_create(&st->threads[t], NULL, stage_main, &p->args[k]);
        }
    }
    return p;
}

int gnn_pipe_start(struct gnn_pipe *p, long nbatches)
{
    if (p->next_batch != p->delivered)
        return -1;
    p->nbatches = nbatches;
    p->next_batch = p->delivered = 0;
    p->wait = 0;
    for (int s = 0; s < p->nstages; s++)
        p->st[s].busy = 0;
    for (int slot = 0; slot < p->nslots && p->next_batch < nbatches; slot++) {
        p->status[slot] = 0;
        q_push(&p->q[0], (struct item){slot, p->next_batch++});
    }
    return 0;
}

int gnn_pipe_next(struct gnn_pipe *p, int *slot, long *batch, int *status)
{
    if (p->delivered >= p->nbatches)
        return 0;
    struct item it;
    double t0 = mb_now();
    if (!q_pop(&p->q[p->nstages], &it))
        return 0;
    p->wait += mb_now() - t0;
    p->delivered++;
    *slot = it.slot;
    *batch = it.batch;
    *status = p->status[it.slot];
    return 1;
}

void gnn_pipe_release(struct gnn_pipe *p, int slot)
{
    if (p->next_batch < p->nbatches) {
        p->status[slot] = 0;
        q_push(&p->q[0], (struct item){slot, p->next_batch++});
    }
}

void gnn_pipe_abort(struct gnn_pipe *p) { p->nbatches = p->next_batch; }

double gnn_pipe_stage_busy(const struct gnn_pipe *p, int s) { return p->st[s].busy; }
double gnn_pipe_wait_time(const struct gnn_pipe *p) { return p->wait; }
int gnn_pipe_nstages(const struct gnn_pipe *p) { return p->nstages; }
const char *gnn_pipe_stage_name(const struct gnn_pipe *p, int s) { return p->st[s].def.name; }

void gnn_pipe_free(struct gnn_pipe *p)
{
    if (!p)
        return;
    q_close(&p->q[0]);
    for (int s = 0; s < p->nstages; s++) {
        struct stage_rt *st = &p->st[s];
        for (int t = 0; t < st->def.nthreads; t++)
            pthread_join(st->threads[t], NULL);
        pthread_barrier_destroy(&st->start);
        pthread_barrier_destroy(&st->done);
        free(st->threads);
        free(st->rc);
    }
    for (int s = 0; s <= p->nstages; s++)
        q_free(&p->q[s]);
    free(p->status);
    free(p->args);
    free(p);
}
