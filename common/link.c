/* Emulated device-host link (see common.h): per direction a FIFO of copies
 * served by one thread that copies a chunk, then waits until the token
 * bucket says the chunk has passed at the link's rate. */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct link_job {
    struct link_job *next;
    void *dst;
    const void *src;
    size_t bytes;
};

struct link_dir {
    struct mb_link *l;
    int dir, cpu;
    pthread_t tid;
    int started;
    struct mb_rate rate;
    struct link_job *head, *tail;
    uint64_t queued, done;  /* copies queued and completed (tickets are queued counts) */
    struct mb_link_stats st;
    char pin_err[128];
};

struct mb_link {
    pthread_mutex_t mu;
    pthread_cond_t work, finished;
    int stop;
    size_t chunk;
    void (*on_copy)(void *ctx, int dir, size_t bytes, double start, double end);
    void *ctx;
    struct link_dir d[2];
};

static void *link_main(void *arg)
{
    struct link_dir *d = arg;
    struct mb_link *l = d->l;
    if (d->cpu >= 0 && mb_pin_thread(d->cpu, d->pin_err, sizeof(d->pin_err)) != 0)
        fprintf(stderr, "common/link: warning: copy thread not pinned: %s\n", d->pin_err);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!d->head && !l->stop)
            pthread_cond_wait(&l->work, &l->mu);
        if (!d->head)
            break;
        struct link_job *j = d->head;
        pthread_mutex_unlock(&l->mu);

        double t0 = mb_now(), paced = 0;
        for (size_t off = 0; off < j->bytes;) {
            size_t n = j->bytes - off < l->chunk ? j->bytes - off : l->chunk;
            /* the first chunk starts the transfer on the bucket; the rest follow
             * it back to back, so a late wake-up is caught up, not lost */
            double until = off ? mb_rate_reserve_more(&d->rate, (double)n) : mb_rate_reserve(&d->rate, (double)n);
            memcpy((char *)j->dst + off, (const char *)j->src + off, n);
            double t = mb_now();
            mb_rate_pace(until);
            paced += mb_now() - t;
            off += n;
        }
        double t1 = mb_now(), busy = t1 - t0;
        if (l->on_copy)
            l->on_copy(l->ctx, d->dir, j->bytes, t0, t1);

        pthread_mutex_lock(&l->mu);
        d->head = j->next;
        if (!d->head)
            d->tail = NULL;
        d->done++;
        d->st.bytes += j->bytes;
        d->st.copies++;
        d->st.busy_s += busy;
        d->st.paced_s += paced;
        free(j);
        pthread_cond_broadcast(&l->finished);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

struct mb_link *mb_link_new(const struct mb_link_opts *o, char *err, size_t errlen)
{
    struct mb_link *l = calloc(1, sizeof(*l));
    if (!l) {
        snprintf(err, errlen, "link: out of memory");
        return NULL;
    }
    l->chunk = o->chunk ? o->chunk : 256u << 10;
    l->on_copy = o->on_copy;
    l->ctx = o->ctx;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->finished, NULL);
    for (int k = 0; k < 2; k++) {
        struct link_dir *d = &l->d[k];
        d->l = l;
        d->dir = k;
        d->cpu = o->cpu[k];
        /* bucket depth of one chunk: an idle link sends one chunk at once */
        mb_rate_init(&d->rate, o->gbps[k] * 1e9, (double)l->chunk);
        if (pthread_create(&d->tid, NULL, link_main, d) != 0) {
            snprintf(err, errlen, "link: cannot start a copy thread");
            mb_link_free(l);
            return NULL;
        }
        d->started = 1;
    }
    return l;
}

mb_link_ticket mb_link_copy(struct mb_link *l, int dir, void *dst, const void *src, size_t bytes)
{
    struct link_dir *d = &l->d[dir & 1];
    struct link_job *j = malloc(sizeof(*j));
    if (!j) /* a copy that cannot be queued cannot keep its order: fatal */
        mb_die(1, "link: out of memory queueing a copy of %zu bytes", bytes);
    *j = (struct link_job){NULL, dst, src, bytes};
    pthread_mutex_lock(&l->mu);
    if (d->tail)
        d->tail->next = j;
    else
        d->head = j;
    d->tail = j;
    uint64_t seq = ++d->queued;
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->mu);
    return seq << 1 | (uint64_t)(dir & 1);
}

int mb_link_test(struct mb_link *l, mb_link_ticket t)
{
    pthread_mutex_lock(&l->mu);
    int r = l->d[t & 1].done >= t >> 1;
    pthread_mutex_unlock(&l->mu);
    return r;
}

void mb_link_wait(struct mb_link *l, mb_link_ticket t)
{
    struct link_dir *d = &l->d[t & 1];
    pthread_mutex_lock(&l->mu);
    while (d->done < t >> 1)
        pthread_cond_wait(&l->finished, &l->mu);
    pthread_mutex_unlock(&l->mu);
}

void mb_link_stats(struct mb_link *l, int dir, struct mb_link_stats *s)
{
    struct link_dir *d = &l->d[dir & 1];
    pthread_mutex_lock(&l->mu);
    *s = d->st;
    pthread_mutex_unlock(&l->mu);
    s->cpu_s = d->started ? mb_thread_cpu_s((unsigned long)d->tid) : 0;
}

void mb_link_free(struct mb_link *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->mu);
    for (int k = 0; k < 2; k++)
        if (l->d[k].started)
            pthread_join(l->d[k].tid, NULL);
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->finished);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
