/* Pipeline runtime: stages as thread teams joined by bounded queues of
 * batch slots. A stage's leader takes a batch, the team runs the stage
 * function on it together (Hyperion splits I/O submission and completion
 * this way), the leader hands it on. A stage may have several teams
 * (instances), each on its own batch, so a stage that mostly waits for
 * storage (sampling's topology reads) overlaps its batches; they still
 * leave in order. The slot count bounds what is in flight: one slot
 * serialises everything (nopipe). */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>


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

/* One team: nthreads threads working on one batch together. */
struct team {
    struct stage_rt *st;
    pthread_barrier_t start, done;
    struct item cur;          /* the batch the team works on; slot -1 = stop */
    int *rc;                  /* per thread */
};

struct stage_rt {
    struct mb_stage def;
    struct mb_pipe *p;
    int index;
    pthread_t *threads;       /* instances x nthreads */
    struct team *teams;       /* instances */
    /* in-order hand-off when several teams (instances) work at once */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long next_out;            /* batch the next stage gets next */
    int exited;               /* teams that stopped */
    double busy;              /* seconds of team work this pass (summed over teams) */
};

struct mb_pipe {
    int nstages, nslots;
    void *ctx;
    struct stage_rt st[MB_PIPE_MAX_STAGES];
    struct queue q[MB_PIPE_MAX_STAGES + 1]; /* q[s]: input of stage s; q[nstages]: finished */
    int *status;              /* per slot */
    long nbatches, next_batch, delivered;
    double wait;
    struct thread_arg {
        struct team *team;
        int tid;
    } *args;
    /* threads wait at the gate until every one was created: 1 runs, -1
     * (one could not be created) makes the others leave at once */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate;
    int nstarted[MB_PIPE_MAX_STAGES]; /* threads created, per stage */
};

static void *stage_main(void *arg)
{
    struct thread_arg *a = arg;
    struct team *tm = a->team;
    struct stage_rt *s = tm->st;
    struct mb_pipe *p = s->p;
    int leader = a->tid == 0, nt = s->def.nthreads;
    pthread_mutex_lock(&p->gate_mu);
    while (p->gate == 0)
        pthread_cond_wait(&p->gate_cv, &p->gate_mu);
    int go = p->gate > 0;
    pthread_mutex_unlock(&p->gate_mu);
    if (!go)
        return NULL;
    for (;;) {
        if (leader) {
            struct item it;
            if (!q_pop(&p->q[s->index], &it))
                it.slot = -1;
            tm->cur = it;
        }
        pthread_barrier_wait(&tm->start);
        struct item it = tm->cur;
        if (it.slot < 0)
            break;
        double t0 = leader ? mb_now() : 0;
        tm->rc[a->tid] = p->status[it.slot] ? 0 : s->def.fn(p->ctx, it.slot, it.batch, a->tid, nt);
        pthread_barrier_wait(&tm->done);
        if (leader) {
            double dt = mb_now() - t0;
            for (int t = 0; t < nt; t++)
                if (tm->rc[t] && !p->status[it.slot])
                    p->status[it.slot] = tm->rc[t];
            /* batches leave in the order they came (another team may
             * still work on an earlier one) */
            pthread_mutex_lock(&s->mu);
            s->busy += dt;
            while (s->next_out != it.batch)
                pthread_cond_wait(&s->cv, &s->mu);
            /* counted before the push: once the caller has the last
             * batch, mb_pipe_start may reset the count */
            s->next_out++;
            q_push(&p->q[s->index + 1], it);
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
    }
    if (leader) {
        pthread_mutex_lock(&s->mu);
        int last = ++s->exited == s->def.instances;
        pthread_mutex_unlock(&s->mu);
        if (last)
            q_close(&p->q[s->index + 1]);
    }
    return NULL;
}

static void pipe_destroy(struct mb_pipe *p);

struct mb_pipe *mb_pipe_new(const struct mb_stage *stages, int nstages, int nslots, void *ctx)
{
    if (nstages < 1 || nstages > MB_PIPE_MAX_STAGES || nslots < 1)
        return NULL;
    struct mb_pipe *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    int nthreads = 0;
    for (int s = 0; s < nstages; s++)
        nthreads += (stages[s].nthreads > 0 ? stages[s].nthreads : 1) *
                    (stages[s].instances > 0 ? stages[s].instances : 1);
    p->args = calloc((size_t)nthreads, sizeof(*p->args));
    p->status = calloc((size_t)nslots, sizeof(int));
    p->nstages = nstages;
    p->nslots = nslots;
    p->ctx = ctx;
    pthread_mutex_init(&p->gate_mu, NULL);
    pthread_cond_init(&p->gate_cv, NULL);
    int ok = p->args && p->status;
    for (int s = 0; s <= nstages; s++)
        ok &= q_init(&p->q[s], nslots) == 0;
    for (int s = 0; s < nstages; s++) {
        struct stage_rt *st = &p->st[s];
        st->def = stages[s];
        if (st->def.nthreads < 1)
            st->def.nthreads = 1;
        if (st->def.instances < 1)
            st->def.instances = 1;
        st->p = p;
        st->index = s;
        pthread_mutex_init(&st->mu, NULL);
        pthread_cond_init(&st->cv, NULL);
        int nt = st->def.nthreads, ni = st->def.instances;
        st->threads = calloc((size_t)(nt * ni), sizeof(pthread_t));
        st->teams = calloc((size_t)ni, sizeof(struct team));
        ok &= st->threads && st->teams;
        for (int i = 0; st->teams && i < ni; i++) {
            struct team *tm = &st->teams[i];
            tm->st = st;
            tm->rc = calloc((size_t)nt, sizeof(int));
            ok &= tm->rc != NULL;
            pthread_barrier_init(&tm->start, NULL, (unsigned)nt);
            pthread_barrier_init(&tm->done, NULL, (unsigned)nt);
        }
    }
    int k = 0;
    for (int s = 0; ok && s < nstages; s++) {
        struct stage_rt *st = &p->st[s];
        int nt = st->def.nthreads, ni = st->def.instances;
        for (int i = 0; ok && i < ni; i++)
            for (int t = 0; ok && t < nt; t++, k++) {
                p->args[k].team = &st->teams[i];
                p->args[k].tid = t;
                ok = pthread_create(&st->threads[i * nt + t], NULL, stage_main, &p->args[k]) == 0;
                if (ok)
                    p->nstarted[s]++;
            }
    }
    pthread_mutex_lock(&p->gate_mu);
    p->gate = ok ? 1 : -1;
    pthread_cond_broadcast(&p->gate_cv);
    pthread_mutex_unlock(&p->gate_mu);
    if (!ok) {
        pipe_destroy(p);
        return NULL;
    }
    return p;
}

int mb_pipe_start(struct mb_pipe *p, long nbatches)
{
    if (p->next_batch != p->delivered)
        return -1;
    p->nbatches = nbatches;
    p->next_batch = p->delivered = 0;
    p->wait = 0;
    for (int s = 0; s < p->nstages; s++) {
        pthread_mutex_lock(&p->st[s].mu);
        p->st[s].busy = 0;
        p->st[s].next_out = 0;
        pthread_mutex_unlock(&p->st[s].mu);
    }
    for (int slot = 0; slot < p->nslots && p->next_batch < nbatches; slot++) {
        p->status[slot] = 0;
        q_push(&p->q[0], (struct item){slot, p->next_batch++});
    }
    return 0;
}

int mb_pipe_next(struct mb_pipe *p, int *slot, long *batch, int *status)
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

void mb_pipe_release(struct mb_pipe *p, int slot)
{
    if (p->next_batch < p->nbatches) {
        p->status[slot] = 0;
        q_push(&p->q[0], (struct item){slot, p->next_batch++});
    }
}

void mb_pipe_abort(struct mb_pipe *p) { p->nbatches = p->next_batch; }

double mb_pipe_stage_busy(const struct mb_pipe *p, int s) { return p->st[s].busy; }
double mb_pipe_wait_time(const struct mb_pipe *p) { return p->wait; }
int mb_pipe_nstages(const struct mb_pipe *p) { return p->nstages; }
const char *mb_pipe_stage_name(const struct mb_pipe *p, int s) { return p->st[s].def.name; }

void mb_pipe_free(struct mb_pipe *p)
{
    if (!p)
        return;
    q_close(&p->q[0]);
    pipe_destroy(p);
}

/* Joins the threads created (at the gate or past it) and frees. */
static void pipe_destroy(struct mb_pipe *p)
{
    for (int s = 0; s < p->nstages; s++) {
        struct stage_rt *st = &p->st[s];
        int ni = st->def.instances;
        for (int t = 0; t < p->nstarted[s]; t++)
            pthread_join(st->threads[t], NULL);
        for (int i = 0; st->teams && i < ni; i++) {
            pthread_barrier_destroy(&st->teams[i].start);
            pthread_barrier_destroy(&st->teams[i].done);
            free(st->teams[i].rc);
        }
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->cv);
        free(st->threads);
        free(st->teams);
    }
    for (int s = 0; s <= p->nstages; s++)
        q_free(&p->q[s]);
    pthread_mutex_destroy(&p->gate_mu);
    pthread_cond_destroy(&p->gate_cv);
    free(p->status);
    free(p->args);
    free(p);
}
