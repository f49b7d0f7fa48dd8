/* ZeRO-3 (FSDP) on the workers: every layer's parameters gathered from
 * the shards before its forward and again before its backward, its
 * gradient reduce-scattered after the last micro-batch's backward, Adam
 * on the own shard. Three modes share the pass:
 *   zero3-serial   each collective blocking, where it is needed;
 *   zero3-overlap  the next two uses' gathers and the previous layers'
 *                  reduce-scatters in flight during compute, advanced
 *                  between GEMMs and layers (--progress poll) or by a progress
 *                  thread (thread);
 *   zero-offload   overlap, plus Adam per layer on a CPU thread pool as
 *                  each reduce-scatter lands.
 * Switch and PS ranks have nothing to do in these modes. */
#include "zero.h"

#include <stdlib.h>
#include <string.h>

struct z3 {
    int overlap;
    int nmb, m;               /* micro-batches per worker, the current one */
    int u;                    /* layer uses so far in this step (2L per micro-batch) */
    struct zero_req **gather; /* by use index (nmb * 2L), started ahead */
    struct zero_req **reduce; /* by layer */
    struct adam_pool *pool;   /* zero-offload */
};

/* ---- zero-offload's optimizer pool ------------------------------------- */

struct adam_pool {
    struct zero_run *z;
    pthread_mutex_t mu;
    pthread_cond_t more, idle;
    int *queue, head, tail, busy, stop, nthreads;
    long long t;
    pthread_t *thr;
};

static int gather_for(struct zero_run *z, struct z3 *s, int u, char *err, size_t len)
{
    if (!s->gather[u] && !(s->gather[u] = zero_gather_start(z, zero_use_layer(z, u), err, len)))
        return -1;
    return 0;
}

static int ready(struct zero_run *z, int i, int fwd, char *err, size_t len)
{
    struct z3 *s = z->mode_state;
    int u = s->u++, U = s->nmb * 2 * z->L;
    (void)i, (void)fwd;
    if (gather_for(z, s, u, err, len) != 0)
        return -1;
    /* overlap: the next uses' gathers (ZERO_PREFETCH of them) fly during
     * this layer's compute, up to one that would refill a buffer still in
     * use (the head's forward then backward; layer 0 between micro-batches) */
    for (int k = 1, n = s->overlap ? zero_prefetch_ahead_spare(z, u, U) : 0; k <= n; k++)
        if (gather_for(z, s, u + k, err, len) != 0)
            return -1;
    struct zero_req *r = s->gather[u];
    s->gather[u] = NULL;
    return zero_req_wait(z, r, err, len);
}

static int done_bwd(struct zero_run *z, int i, char *err, size_t len)
{
    struct z3 *s = z->mode_state;
    zero_grad_collect(z, i);
    if (s->m == s->nmb - 1) {
        if (!(s->reduce[i] = zero_reduce_start(z, i, err, len)))
            return -1;
        if (!s->overlap) {
            struct zero_req *r = s->reduce[i];
            s->reduce[i] = NULL;
            return zero_req_wait(z, r, err, len);
        }
    }
    return zero_comm_poll(z->cc);
}

/* The reduce-scatter of layer i done (its gradient buffer back in the
 * pool), and under zero-offload its Adam queued. */
static int finish_reduce(struct zero_run *z, struct z3 *s, int i, char *err, size_t len)
{
    struct zero_req *r = s->reduce[i];
    s->reduce[i] = NULL;
    if (r && zero_req_wait(z, r, err, len) != 0)
        return -1;
    if (r && s->pool) {
        pthread_mutex_lock(&s->pool->mu);
        s->pool->queue[s->pool->tail++] = i;
        pthread_cond_signal(&s->pool->more);
        pthread_mutex_unlock(&s->pool->mu);
    }
    return 0;
}

/* Every gradient buffer held by a reduce in flight: the oldest (they
 * start from the head down) finishes first. */
static int grad_wait(struct zero_run *z, char *err, size_t len)
{
    struct z3 *s = z->mode_state;
    for (int i = z->L - 1; i >= 0; i--)
        if (s->reduce[i])
            return finish_reduce(z, s, i, err, len);
    return snprintf(err, len, "no gradient buffer free and no reduce-scatter in flight"), -1;
}

static const struct zero_pass_hooks hooks = {ready, done_bwd, grad_wait};

static void *pool_main(void *arg)
{
    struct adam_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == p->tail && !p->stop)
            pthread_cond_wait(&p->more, &p->mu);
        if (p->head == p->tail)
            break;
        int i = p->queue[p->head++];
        p->busy++;
        long long t = p->t;
        pthread_mutex_unlock(&p->mu);
        double t0 = mb_now();
        zero_shard_adam(p->z, i, t);
        zero_span(p->z, "optimizer", "adam", t0, mb_now());
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0 && p->head == p->tail)
            pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_free(struct adam_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < p->nthreads; k++)
        pthread_join(p->thr[k], NULL);
    pthread_cond_destroy(&p->more);
    pthread_cond_destroy(&p->idle);
    pthread_mutex_destroy(&p->mu);
    free(p->queue);
    free(p->thr);
    free(p);
}

static struct adam_pool *pool_new(struct zero_run *z, char *err, size_t len)
{
    struct adam_pool *p = calloc(1, sizeof(*p));
    int n = z->o.adam_threads > 0 ? z->o.adam_threads : 1;
    if (!p || !(p->queue = calloc((size_t)z->L, sizeof(int))) || !(p->thr = calloc((size_t)n, sizeof(pthread_t)))) {
        if (p)
            free(p->queue), free(p);
        return snprintf(err, len, "out of memory: the optimizer pool"), NULL;
    }
    p->z = z;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->more, NULL);
    pthread_cond_init(&p->idle, NULL);
    for (; p->nthreads < n; p->nthreads++)
        if (pthread_create(&p->thr[p->nthreads], NULL, pool_main, p) != 0) {
            pool_free(p);
            return snprintf(err, len, "cannot start optimizer thread %d", n), NULL;
        }
    return p;
}

/* ---- the modes ----------------------------------------------------------- */

static int setup(struct zero_run *z, int overlap, int offload, char *err, size_t len)
{
    if (z->role != ZERO_WORKER)
        return 0;
    struct z3 *s = calloc(1, sizeof(*s));
    if (!s)
        return snprintf(err, len, "out of memory: the mode's state"), -1;
    z->mode_state = s;
    s->overlap = overlap;
    s->nmb = zero_micro_per_worker(&z->o);
    s->gather = calloc((size_t)s->nmb * 2 * (size_t)z->L, sizeof(*s->gather));
    s->reduce = calloc((size_t)z->L, sizeof(*s->reduce));
    if (!s->gather || !s->reduce)
        return snprintf(err, len, "out of memory: the mode's requests"), -1;
    if (offload && !(s->pool = pool_new(z, err, len)))
        return -1;
    return 0;
}

static int setup_serial(struct zero_run *z, char *err, size_t len) { return setup(z, 0, 0, err, len); }
static int setup_overlap(struct zero_run *z, char *err, size_t len) { return setup(z, 1, 0, err, len); }
static int setup_offload(struct zero_run *z, char *err, size_t len) { return setup(z, 1, 1, err, len); }

static void teardown(struct zero_run *z)
{
    struct z3 *s = z->mode_state;
    if (!s)
        return;
    pool_free(s->pool);
    free(s->gather);
    free(s->reduce);
    free(s);
    z->mode_state = NULL;
}

static int step(struct zero_run *z, char *err, size_t len)
{
    struct z3 *s = z->mode_state;
    if (z->role != ZERO_WORKER)
        return 0;
    long long t = z->step + 1;
    double loss_sum = 0;
    s->u = 0;
    if (s->pool) { /* idle since the last step's end */
        pthread_mutex_lock(&s->pool->mu);
        s->pool->t = t;
        s->pool->head = s->pool->tail = 0;
        pthread_mutex_unlock(&s->pool->mu);
    }
    for (s->m = 0; s->m < s->nmb; s->m++) {
        double loss = 0;
        zero_tokens(&z->o, z->step, z->index * s->nmb + s->m, z->tok, z->tgt);
        if (zero_micro_pass(z, &hooks, &loss, err, len) != 0)
            return -1;
        loss_sum += loss;
    }
    z->st.loss = loss_sum / s->nmb;
    /* the reduce-scatters left in flight, in the order they started (head
     * first), each layer's Adam as soon as its shard is summed (those a
     * backward waited for, for their gradient buffer, are queued already) */
    /* without the pool, each layer's Adam runs (synchronously, on this
     * thread) as soon as its reduce-scatter is waited for, while the lower
     * layers' are still on the wire: the step's tail no longer adds every
     * layer's Adam after the last transfer (issue 19) */
    double opt_s = 0;
    for (int i = z->L - 1; i >= 0; i--) {
        if (s->reduce[i] && finish_reduce(z, s, i, err, len) != 0)
            return -1;
        if (!s->pool) {
            double t0 = mb_now();
            zero_shard_adam(z, i, t);
            double t1 = mb_now();
            opt_s += t1 - t0;
            zero_span(z, "optimizer", "adam", t0, t1);
        }
    }
    if (s->pool) {
        double t0 = mb_now();
        pthread_mutex_lock(&s->pool->mu);
        while (s->pool->busy || s->pool->head != s->pool->tail)
            pthread_cond_wait(&s->pool->idle, &s->pool->mu);
        pthread_mutex_unlock(&s->pool->mu);
        opt_s = mb_now() - t0;
        zero_span(z, "optimizer", "adam-wait", t0, t0 + opt_s);
    }
    z->st.optimizer_s += opt_s;
    return 0;
}

const struct zero_mode_ops zero_mode_zero3_serial = {
    .name = "zero3-serial",
    .description = "ZeRO-3: per layer a blocking allgather before forward and backward, a blocking reduce-scatter after",
    .setup = setup_serial, .step = step, .teardown = teardown,
};

const struct zero_mode_ops zero_mode_zero3_overlap = {
    .name = "zero3-overlap",
    .description = "ZeRO-3 with the next layers' gathers and the reduce-scatters in flight during compute",
    .uses_progress = 1,
    .setup = setup_overlap, .step = step, .teardown = teardown,
};

const struct zero_mode_ops zero_mode_zero_offload = {
    .name = "zero-offload",
    .description = "zero3-overlap plus Adam per layer on a CPU thread pool as each reduce-scatter lands",
    .uses_progress = 1,
    .setup = setup_offload, .step = step, .teardown = teardown,
};
