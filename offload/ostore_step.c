/* mb_ostore_step's three orders (see aio.h) and the store's thread that
 * runs naive and optimized steps while the caller computes. */
#include "ostore_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t round_block(const struct mb_ostore *s, uint64_t bytes)
{
    return (bytes + s->block - 1) / s->block * s->block;
}

static void *field_buf(struct ostore_set *b, int f)
{
    return f == MB_OSTORE_P32 ? (void *)b->p32 : f == MB_OSTORE_M ? (void *)b->m : f == MB_OSTORE_V ? (void *)b->v : (void *)b->p16;
}

/* Unit u's elements (its tensor's last chunk may be short). */
static uint64_t unit_n(const struct mb_ostore *s, int u)
{
    int i = s->unit_tensor[u];
    uint64_t end = u + 1 < s->ubase[i + 1] ? s->unit_off[u + 1] : s->o.tensors[i].n;
    return end - s->unit_off[u];
}

/* Unit u's field f from or into set b: its part of the tensor's extent. */
static int submit_field(struct mb_ostore *s, int op, struct ostore_set *b, int u, int f, struct mb_ostore_io **io,
                        char *err, size_t errlen)
{
    uint64_t eb = f == MB_OSTORE_P16 ? 2 : 4;
    int e = mb_ostore_tensor_extent(s, s->unit_tensor[u], (enum mb_ostore_field)f);
    return ostore_submit(s, op, e, s->unit_off[u] * eb, unit_n(s, u) * eb, field_buf(b, f), 1, io, err, errlen);
}

/* Submits unit u's reads (P32, m, v) into set b. */
static int submit_reads(struct mb_ostore *s, struct ostore_set *b, int u, char *err, size_t errlen)
{
    b->unit = u;
    for (int f = 0; f < 3; f++)
        if (submit_field(s, MB_AIO_READ, b, u, f, &b->rd[f], err, errlen) != 0)
            return -1;
    return 0;
}

static int wait_reads(struct mb_ostore *s, struct ostore_set *b, char *err, size_t errlen)
{
    double t0 = mb_now();
    int rc = mb_ostore_wait_all(b->rd, 3, err, errlen);
    pthread_mutex_lock(&s->mu);
    s->st.stall_s += mb_now() - t0;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int update(struct mb_ostore *s, struct ostore_set *b, int u, const void *grad, char *err, size_t errlen)
{
    int i = s->unit_tensor[u];
    struct mb_ostore_state st = {b->p32, b->m, b->v, b->p16, unit_n(s, u), s->unit_off[u]};
    double t0 = mb_now();
    snprintf(err, errlen, "ostore: the update of %s failed", s->o.tensors[i].name);
    int rc = s->o.update(s->o.ctx, i, &st, grad, err, errlen);
    double t1 = mb_now();
    if (s->o.on_span)
        s->o.on_span(s->o.span_ctx, "update", s->o.tensors[i].name, t0, t1);
    pthread_mutex_lock(&s->mu);
    s->st.update_s += t1 - t0;
    pthread_mutex_unlock(&s->mu);
    if (rc != 0)
        return -1;
    return 0;
}

static void count_step(struct mb_ostore *s)
{
    pthread_mutex_lock(&s->mu);
    s->st.steps++;
    pthread_mutex_unlock(&s->mu);
}

static int submit_writes(struct mb_ostore *s, struct ostore_set *b, int u, char *err, size_t errlen)
{
    b->unit = -1;
    for (int f = 0; f < MB_OSTORE_NFIELDS; f++)
        if (submit_field(s, MB_AIO_WRITE, b, u, f, &b->wr[f], err, errlen) != 0)
            return -1;
    return 0;
}

/* serial and naive: per unit, last to first: R(u), wait, update, W(u), wait */
static int step_simple(struct mb_ostore *s, int i, const void *grad, char *err, size_t errlen)
{
    struct ostore_set *b = &s->set[0];
    for (int u = s->ubase[i + 1] - 1; u >= s->ubase[i]; u--) {
        int rc = submit_reads(s, b, u, err, errlen);
        rc = wait_reads(s, b, rc ? NULL : err, rc ? 0 : errlen) || rc;
        b->unit = -1;
        if (rc || update(s, b, u, grad, err, errlen) != 0)
            return -1;
        rc = submit_writes(s, b, u, err, errlen);
        if (mb_ostore_wait_all(b->wr, 4, rc ? NULL : err, rc ? 0 : errlen) || rc)
            return -1;
    }
    count_step(s);
    return 0;
}

static int has_writes(const struct ostore_set *b)
{
    for (int f = 0; f < 4; f++)
        if (b->wr[f])
            return 1;
    return 0;
}

/* A set to read into, other than `not`: one idle, else the one whose
 * writes went out first (waited for). */
static struct ostore_set *free_set(struct mb_ostore *s, struct ostore_set *not, uint64_t *wseq, char *err,
                                   size_t errlen, int *rc)
{
    struct ostore_set *pick = NULL;
    for (int k = 0; k < OSTORE_SETS; k++) {
        struct ostore_set *b = &s->set[k];
        if (b == not || b->unit >= 0)
            continue;
        if (!has_writes(b))
            return b;
        if (!pick || wseq[k] < wseq[pick - s->set])
            pick = b;
    }
    if (pick && mb_ostore_wait_all(pick->wr, 4, err, errlen) != 0)
        *rc = -1;
    return pick;
}

/* The set holding unit u's reads (submitted or done), or NULL. */
static struct ostore_set *holding(struct mb_ostore *s, int u)
{
    for (int k = 0; k < OSTORE_SETS; k++)
        if (s->set[k].unit == u)
            return &s->set[k];
    return NULL;
}

/* A read-ahead no step used: its reads waited for (their buffers are the
 * set's) and forgotten. */
static void drop_reads(struct mb_ostore *s, struct ostore_set *b)
{
    char drop[512];
    mb_ostore_wait_all(b->rd, 3, drop, sizeof(drop));
    b->unit = -1;
    pthread_mutex_lock(&s->mu);
    s->st.read_aheads_dropped++;
    pthread_mutex_unlock(&s->mu);
}

/* A set to read into, other than `not` and the one holding `keep`: a free
 * one (free_set), else one holding a read-ahead, dropped. */
static struct ostore_set *take_set(struct mb_ostore *s, struct ostore_set *not, int keep, char *err,
                                   size_t errlen, int *rc)
{
    struct ostore_set *b = free_set(s, not, s->write_seq, err, errlen, rc);
    for (int k = 0; !b && !*rc && k < OSTORE_SETS; k++)
        if (&s->set[k] != not && s->set[k].unit != keep) {
            b = &s->set[k];
            drop_reads(s, b);
        }
    return b;
}

/* optimized, per unit u of tensor i, last to first: R(u) (read ahead by
 * the previous unit's step or the caller), R(u-1) submitted unless it is
 * read already (u-1 is the next tensor's last chunk past i's first), then
 * wait R(u), update, W(u) submitted and left in flight. Other read-aheads
 * stay for their steps. */
static int step_optimized(struct mb_ostore *s, int i, const void *grad, char *err, size_t errlen)
{
    for (int u = s->ubase[i + 1] - 1; u >= s->ubase[i]; u--) {
        int rc = 0;
        struct ostore_set *cur = holding(s, u);
        if (!cur) {
            cur = take_set(s, NULL, u - 1, err, errlen, &rc);
            if (rc || !cur || submit_reads(s, cur, u, err, errlen) != 0)
                return -1;
        }
        if (u > 0 && !holding(s, u - 1)) {
            struct ostore_set *nxt = take_set(s, cur, -2, err, errlen, &rc);
            if (rc || !nxt || submit_reads(s, nxt, u - 1, err, errlen) != 0)
                return -1;
        }
        if (wait_reads(s, cur, err, errlen) != 0 || update(s, cur, u, grad, err, errlen) != 0) {
            cur->unit = -1;
            return -1;
        }
        s->write_seq[cur - s->set] = ++s->wcount;
        if (submit_writes(s, cur, u, err, errlen) != 0)
            return -1;
    }
    count_step(s);
    return 0;
}

/* mb_ostore_read_ahead on the store's thread: into a free set only (a
 * set holding another read-ahead is not taken from it). */
static int read_ahead(struct mb_ostore *s, int i, char *err, size_t errlen)
{
    int rc = 0, u = s->ubase[i + 1] - 1; /* the unit its step runs first */
    if (holding(s, u))
        return 0;
    struct ostore_set *b = free_set(s, NULL, s->write_seq, err, errlen, &rc);
    if (rc || !b)
        return rc;
    if (submit_reads(s, b, u, err, errlen) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    s->st.read_aheads++;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* Waits for what is in flight in every set (the end of a pass). */
static int flush_sets(struct mb_ostore *s, char *err, size_t errlen)
{
    int rc = 0;
    char drop[512];
    for (int k = 0; k < OSTORE_SETS; k++) {
        if (s->set[k].unit >= 0)
            drop_reads(s, &s->set[k]);
        if (mb_ostore_wait_all(s->set[k].wr, 4, rc ? drop : err, rc ? sizeof(drop) : errlen) != 0)
            rc = -1;
    }
    return rc;
}

static void *store_main(void *arg)
{
    struct mb_ostore *s = arg;
    char err[512];
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->qhead == s->qtail && !s->stop)
            pthread_cond_wait(&s->more, &s->mu);
        if (s->qhead == s->qtail)
            break;
        struct ostore_job j = s->q[s->qhead++];
        s->busy = 1;
        int skip = s->failed;
        pthread_mutex_unlock(&s->mu);

        int rc = 0;
        err[0] = 0;
        if (j.i < 0)
            rc = flush_sets(s, err, sizeof(err));
        else if (j.ahead)
            rc = skip ? 0 : read_ahead(s, j.i, err, sizeof(err));
        else if (!skip)
            rc = s->o.order == MB_OSTORE_OPTIMIZED ? step_optimized(s, j.i, j.grad, err, sizeof(err))
                                                   : step_simple(s, j.i, j.grad, err, sizeof(err));
        if (rc)
            ostore_fail(s, err);

        pthread_mutex_lock(&s->mu);
        if (j.i >= 0 && !j.ahead)
            s->updated++;
        s->busy = 0;
        if (s->qhead == s->qtail)
            s->qhead = s->qtail = 0;
        pthread_cond_broadcast(&s->idle);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static int first_failure(struct mb_ostore *s, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    int f = s->failed;
    if (f)
        snprintf(err, errlen, "%s", s->failure);
    pthread_mutex_unlock(&s->mu);
    return f ? -1 : 0;
}

static int enqueue(struct mb_ostore *s, int i, const void *grad, int ahead, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    int rc = mb_grow((void **)&s->q, &s->qcap, s->qtail + 1, sizeof(*s->q));
    if (rc == 0) {
        s->q[s->qtail++] = (struct ostore_job){i, grad, ahead};
        pthread_cond_broadcast(&s->more);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc)
        snprintf(err, errlen, "ostore: out of memory queueing a step");
    return rc;
}

int mb_ostore_step(struct mb_ostore *s, int i, const void *grad, char *err, size_t errlen)
{
    if (i < 0 || i >= s->o.ntensors)
        return snprintf(err, errlen, "ostore: no tensor %d (of %d)", i, s->o.ntensors), -1;
    if (first_failure(s, err, errlen))
        return -1;
    if (s->o.order == MB_OSTORE_SERIAL) {
        if (step_simple(s, i, grad, err, errlen) != 0) {
            ostore_fail(s, err);
            return -1;
        }
        pthread_mutex_lock(&s->mu);
        s->updated++;
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    return enqueue(s, i, grad, 0, err, errlen);
}

int mb_ostore_read_ahead(struct mb_ostore *s, int i, char *err, size_t errlen)
{
    if (i < 0 || i >= s->o.ntensors)
        return snprintf(err, errlen, "ostore: no tensor %d (of %d)", i, s->o.ntensors), -1;
    if (s->o.order != MB_OSTORE_OPTIMIZED || !s->thread_started)
        return snprintf(err, errlen, "ostore: read-ahead is the optimized order's, not %s's",
                        mb_ostore_order_names[s->o.order]), -1;
    if (first_failure(s, err, errlen))
        return -1;
    return enqueue(s, i, NULL, 1, err, errlen);
}

int mb_ostore_wait_updated(struct mb_ostore *s, uint64_t n, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    while (s->updated < n && s->thread_started)
        pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return first_failure(s, err, errlen);
}

int mb_ostore_drain(struct mb_ostore *s, char *err, size_t errlen)
{
    if (s->thread_started) {
        if (enqueue(s, -1, NULL, 0, err, errlen) != 0)
            return -1;
        pthread_mutex_lock(&s->mu);
        while (s->qhead != s->qtail || s->busy)
            pthread_cond_wait(&s->idle, &s->mu);
        pthread_mutex_unlock(&s->mu);
    }
    return first_failure(s, err, errlen);
}

int ostore_steps_init(struct mb_ostore *s, char *err, size_t errlen)
{
    if (!s->o.ntensors)
        return 0;
    uint64_t n = s->max_unit;
    for (int k = 0; k < OSTORE_SETS; k++) {
        struct ostore_set *b = &s->set[k];
        b->unit = -1;
        b->p32 = mb_aio_alloc(s->eng, round_block(s, 4 * n));
        b->m = mb_aio_alloc(s->eng, round_block(s, 4 * n));
        b->v = mb_aio_alloc(s->eng, round_block(s, 4 * n));
        b->p16 = mb_aio_alloc(s->eng, round_block(s, 2 * n));
        if (!b->p32 || !b->m || !b->v || !b->p16)
            return snprintf(err, errlen, "ostore: out of memory for the step buffers (%llu elements)",
                            (unsigned long long)n),
                   -1;
    }
    if (s->o.order != MB_OSTORE_SERIAL) {
        if (pthread_create(&s->tid, NULL, store_main, s) != 0)
            return snprintf(err, errlen, "ostore: cannot start the store's thread"), -1;
        s->thread_started = 1;
    }
    return 0;
}

void ostore_steps_fini(struct mb_ostore *s)
{
    char err[512];
    if (s->thread_started) {
        mb_ostore_drain(s, err, sizeof(err));
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->more);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->tid, NULL);
        s->thread_started = 0;
    } else if (s->eng) {
        flush_sets(s, err, sizeof(err));
    }
    for (int k = 0; k < OSTORE_SETS; k++) {
        struct ostore_set *b = &s->set[k];
        if (!s->eng)
            break;
        mb_aio_free(s->eng, b->p32);
        mb_aio_free(s->eng, b->m);
        mb_aio_free(s->eng, b->v);
        mb_aio_free(s->eng, b->p16);
    }
    free(s->q);
}
