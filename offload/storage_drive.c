/* Driving a storage mode over a list of requests, qd in flight, the way
 * its flags say: what mb-aio times per mode. The scratch (post times,
 * tickets, slot owners, completions) is allocated once, outside the time. */
#include "aio.h"
#include "../common/common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_storage_driver {
    struct mb_storage *s;
    size_t n, qd, batch, nslot;
    double *t0;                        /* per request (any-order) or ticket (engine) post times */
    struct mb_storage_ticket *tickets; /* engine: one per batch */
    size_t *slot_user;                 /* any-order: the request holding each slot, SIZE_MAX when free */
    struct mb_aio_req **reaped;        /* any-order: completions, qd at a time */
};

struct mb_storage_driver *mb_storage_driver_new(struct mb_storage *s, size_t n, size_t qd, size_t batch,
                                                size_t nslot)
{
    if (n == 0 || qd == 0 || batch == 0 || nslot == 0)
        return NULL;
    struct mb_storage_driver *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    *d = (struct mb_storage_driver){s, n, qd, batch, nslot, NULL, NULL, NULL, NULL};
    d->t0 = calloc(n, sizeof(double));
    d->tickets = calloc(n, sizeof(*d->tickets));
    d->slot_user = calloc(nslot, sizeof(size_t));
    d->reaped = (s->ops->flags & MB_STORAGE_ANY_ORDER) ? calloc(qd, sizeof(*d->reaped)) : NULL;
    if (!d->t0 || !d->tickets || !d->slot_user || ((s->ops->flags & MB_STORAGE_ANY_ORDER) && !d->reaped)) {
        mb_storage_driver_free(d);
        return NULL;
    }
    return d;
}

void mb_storage_driver_free(struct mb_storage_driver *d)
{
    if (!d)
        return;
    free(d->t0);
    free(d->tickets);
    free(d->slot_user);
    free(d->reaped);
    free(d);
}

static void before_post(const struct mb_storage_hooks *h, size_t i)
{
    if (h->before_post)
        h->before_post(h->ctx, i);
}

static const char *req_error(int status) { return status == -ENODATA ? "short" : strerror(-status); }

/* Blocking modes that take one request at a time (posix, bounce, mmap):
 * each request's time includes its before_post. */
static int drive_blocking(struct mb_storage_driver *d, struct mb_aio_req *reqs, const struct mb_storage_hooks *h,
                          char *err, size_t errlen)
{
    struct mb_storage *s = d->s;
    for (size_t i = 0; i < d->n; i++) {
        double t = mb_now();
        struct mb_storage_ticket tk;
        before_post(h, i);
        s->ops->submit(s, &reqs[i], 1, &tk);
        int failed = s->ops->wait(s, &tk);
        h->done(h->ctx, i, mb_now() - t);
        if (failed) {
            snprintf(err, errlen, "%s: request at %llu: %s", s->ops->name, (unsigned long long)reqs[i].offset,
                     req_error(reqs[i].status));
            return -1;
        }
    }
    return 0;
}

/* Any-order modes (inline, BaM-like): the caller posts requests itself and
 * reaps its own completions, qd in flight. */
static int drive_any_order(struct mb_storage_driver *d, struct mb_aio_req *reqs, const struct mb_storage_hooks *h,
                           char *err, size_t errlen)
{
    struct mb_storage *s = d->s;
    size_t next = 0, done = 0, inflight = 0, nslot = d->nslot;
    double *t0 = d->t0;
    int rc = 0;
    for (size_t k = 0; k < nslot; k++)
        d->slot_user[k] = SIZE_MAX;
    while (done < d->n && !rc) {
        /* completions come in any order: a slot is posted again only once
         * the request holding it has completed */
        size_t first = next;
        while (inflight < d->qd && next < d->n && d->slot_user[next % nslot] == SIZE_MAX) {
            before_post(h, next);
            d->slot_user[next % nslot] = next;
            t0[next] = mb_now();
            next++; inflight++;
        }
        int e = s->ops->submit(s, &reqs[first], next - first, NULL);
        if (e == -EXDEV) {
            snprintf(err, errlen, "%s: block crosses a stripe (use --stripe >= size)", s->ops->name);
            return -1;
        }
        if (e < 0) {
            snprintf(err, errlen, "%s: submitting: %s", s->ops->name, strerror(-e));
            return -1;
        }
        size_t n = s->ops->reap(s, d->reaped, d->qd);
        for (size_t k = 0; k < n; k++) {
            size_t i = (size_t)(d->reaped[k] - reqs);
            if (d->reaped[k]->status && !rc) {
                snprintf(err, errlen, "%s: request at %llu: %s", s->ops->name,
                         (unsigned long long)reqs[i].offset, req_error(d->reaped[k]->status));
                rc = -1;
            }
            h->done(h->ctx, i, mb_now() - t0[i]);
            d->slot_user[i % nslot] = SIZE_MAX;
            done++; inflight--;
        }
    }
    return rc;
}

/* Waits for ticket k (the oldest in flight): each of its requests took the
 * ticket's time. Returns the failed requests. */
static int wait_ticket(struct mb_storage_driver *d, size_t k, const struct mb_storage_hooks *h)
{
    int failed = d->s->ops->wait(d->s, &d->tickets[k]);
    double t = mb_now() - d->t0[k];
    size_t b = d->batch, m = d->n - k * b < b ? d->n - k * b : b;
    for (size_t j = 0; j < m; j++)
        h->done(h->ctx, k * b + j, t);
    return failed;
}

/* Engine modes: tickets of `batch` requests; sync waits for each at once,
 * async keeps min(2 x qd, nslot) requests posted, so that the engine always
 * has the next requests at hand when one completes (it caps what is in
 * flight at its own depth). */
static int drive_engine(struct mb_storage_driver *d, struct mb_aio_req *reqs, const struct mb_storage_hooks *h,
                        char *err, size_t errlen)
{
    struct mb_storage *s = d->s;
    int async = !(s->ops->flags & MB_STORAGE_BLOCKING);
    size_t posted = 2 * d->qd < d->nslot ? 2 * d->qd : d->nslot;
    size_t b = d->batch, nb = (d->n + b - 1) / b, depth = async ? posted / b : 1;
    if (depth < 1)
        depth = 1;
    /* a request's slot was last used nslot requests earlier, in a ticket
     * already waited for: posted <= nslot requests are ever in flight */
    size_t waited = 0;
    int failed = 0;
    for (size_t k = 0; k < nb; k++) {
        size_t n = d->n - k * b < b ? d->n - k * b : b;
        for (size_t j = 0; j < n; j++)
            before_post(h, k * b + j);
        d->t0[k] = mb_now();
        if (s->ops->submit(s, &reqs[k * b], n, &d->tickets[k]) != 0) {
            failed++;
            nb = k; /* the tickets before this one are still waited for */
            break;
        }
        while (k + 1 - waited >= depth) /* keep `depth` tickets in flight; wait for the oldest */
            failed += wait_ticket(d, waited++, h);
    }
    while (waited < nb)
        failed += wait_ticket(d, waited++, h);
    if (!failed)
        return 0;
    snprintf(err, errlen, "engine: a batch could not be submitted");
    for (size_t i = 0; i < d->n; i++)
        if (reqs[i].status) {
            snprintf(err, errlen, "engine: request at %llu: %s", (unsigned long long)reqs[i].offset,
                     strerror(-reqs[i].status));
            break;
        }
    return -1;
}

int mb_storage_driver_run(struct mb_storage_driver *d, struct mb_aio_req *reqs, const struct mb_storage_hooks *h,
                          char *err, size_t errlen)
{
    struct mb_storage *s = d->s;
    unsigned fl = s->ops->flags;
    int rc = fl & MB_STORAGE_ENGINE      ? drive_engine(d, reqs, h, err, errlen)
             : fl & MB_STORAGE_ANY_ORDER ? drive_any_order(d, reqs, h, err, errlen)
                                         : drive_blocking(d, reqs, h, err, errlen);
    int wrote = 0;
    for (size_t i = 0; i < d->n && !wrote; i++)
        wrote = reqs[i].op == MB_AIO_WRITE;
    /* mmap's writes reach the files, not only the page cache, inside the run */
    char ferr[512];
    if (rc == 0 && wrote && s->ops->flush && s->ops->flush(s, ferr, sizeof(ferr)) != 0) {
        snprintf(err, errlen, "%s: %s", s->ops->name, ferr);
        rc = -1;
    }
    return rc;
}
