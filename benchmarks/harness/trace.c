/* Trace spans: the per-process recorder and the gather to rank 0 (see
 * harness.h). A rank's spans travel as one packed message: a header, the
 * numbers, then the names NUL-terminated. */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int on;
static double epoch, epoch_wall;   /* mb_now() and the wall clock when enabled */
static struct mb_span *spans;
static size_t nspans, spans_cap;
static char **lanes;
static size_t nlanes, lanes_cap;
static double first_wall; /* rank 0: the wall clock that is time 0 in r->trace */

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        mb_die(1, "out of memory: the trace");
    return p;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mb_trace_enable(int enable)
{
    pthread_mutex_lock(&mu);
    if (enable && !atomic_load(&on) && nspans == 0) {
        epoch = mb_now();
        epoch_wall = wall_now();
    }
    atomic_store(&on, enable ? 1 : 0);
    pthread_mutex_unlock(&mu);
}

int mb_trace_enabled(void) { return atomic_load(&on); }

int mb_trace_lane(const char *name)
{
    pthread_mutex_lock(&mu);
    size_t k = 0;
    while (k < nlanes && strcmp(lanes[k], name) != 0)
        k++;
    if (k == nlanes) {
        if (mb_grow((void **)&lanes, &lanes_cap, nlanes + 1, sizeof(*lanes)) != 0)
            mb_die(1, "out of memory: the trace");
        lanes[nlanes++] = xstrdup(name);
    }
    pthread_mutex_unlock(&mu);
    return (int)k;
}

double mb_trace_now(void) { return atomic_load(&on) ? mb_now() - epoch : 0; }

double mb_trace_clock(double t_now) { return atomic_load(&on) ? t_now - epoch : 0; }

void mb_trace_span(int lane, const char *name, double start, double end)
{
    if (!atomic_load(&on))
        return;
    char *copy = xstrdup(name);
    pthread_mutex_lock(&mu);
    if (mb_grow((void **)&spans, &spans_cap, nspans + 1, sizeof(*spans)) != 0)
        mb_die(1, "out of memory: the trace");
    spans[nspans++] = (struct mb_span){copy, start, end, lane};
    pthread_mutex_unlock(&mu);
}

void mb_trace_end(int lane, const char *name, double begin)
{
    if (atomic_load(&on))
        mb_trace_span(lane, name, begin, mb_trace_now());
}

/* header: nspans, nlanes (uint64), epoch_wall (double); then per span
 * start, end (double), lane (int64); then span names, then lane names */
struct pack_head {
    uint64_t nspans, nlanes;
    double wall;
};

static char *pack(size_t *len)
{
    size_t n = sizeof(struct pack_head) + nspans * 24;
    for (size_t k = 0; k < nspans; k++)
        n += strlen(spans[k].name) + 1;
    for (size_t k = 0; k < nlanes; k++)
        n += strlen(lanes[k]) + 1;
    char *buf = malloc(n), *p = buf;
    if (!buf)
        mb_die(1, "out of memory: the trace");
    struct pack_head h = {nspans, nlanes, epoch_wall};
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (size_t k = 0; k < nspans; k++) {
        int64_t lane = spans[k].lane;
        memcpy(p, &spans[k].start, 8);
        memcpy(p + 8, &spans[k].end, 8);
        memcpy(p + 16, &lane, 8);
        p += 24;
    }
    for (size_t k = 0; k < nspans; k++)
        p = stpcpy(p, spans[k].name) + 1;
    for (size_t k = 0; k < nlanes; k++)
        p = stpcpy(p, lanes[k]) + 1;
    *len = n;
    return buf;
}

static void unpack(const char *p, int rank, double shift, struct mb_trace_rank *t)
{
    struct pack_head h;
    memcpy(&h, p, sizeof h);
    p += sizeof h;
    t->rank = rank;
    t->nspans = h.nspans;
    t->nlanes = h.nlanes;
    t->spans = calloc(h.nspans ? h.nspans : 1, sizeof(*t->spans));
    t->lanes = calloc(h.nlanes ? h.nlanes : 1, sizeof(*t->lanes));
    if (!t->spans || !t->lanes)
        mb_die(1, "out of memory: the trace");
    for (size_t k = 0; k < h.nspans; k++) {
        int64_t lane;
        memcpy(&t->spans[k].start, p, 8);
        memcpy(&t->spans[k].end, p + 8, 8);
        memcpy(&lane, p + 16, 8);
        t->spans[k].start += shift;
        t->spans[k].end += shift;
        t->spans[k].lane = lane;
        p += 24;
    }
    for (size_t k = 0; k < h.nspans; k++) {
        t->spans[k].name = xstrdup(p);
        p += strlen(p) + 1;
    }
    for (size_t k = 0; k < h.nlanes; k++) {
        t->lanes[k] = xstrdup(p);
        p += strlen(p) + 1;
    }
}

/* A later gather of a rank already in r: its spans appended; its lanes
 * replaced (a process's lane list only grows, so the indices stay). */
static void merge(struct mb_trace_rank *into, struct mb_trace_rank *got)
{
    struct mb_span *s = realloc(into->spans, (into->nspans + got->nspans) * sizeof(*s));
    if (!s)
        mb_die(1, "out of memory: the trace");
    memcpy(s + into->nspans, got->spans, got->nspans * sizeof(*s));
    into->spans = s;
    into->nspans += got->nspans;
    free(got->spans);
    for (size_t k = 0; k < into->nlanes; k++)
        free(into->lanes[k]);
    free(into->lanes);
    into->lanes = got->lanes;
    into->nlanes = got->nlanes;
}

void mb_trace_gather(MPI_Comm comm, struct mb_result *r)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    pthread_mutex_lock(&mu);
    size_t len;
    char *mine = pack(&len);
    for (size_t k = 0; k < nspans; k++)
        free(spans[k].name);
    nspans = 0;
    pthread_mutex_unlock(&mu);
    if (len > (size_t)1 << 30)
        mb_die(1, "the trace of rank %d holds %zu bytes: more than one message carries", rank, len);

    int ilen = (int)len, *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = calloc((size_t)n, sizeof(int));
        displs = calloc((size_t)n, sizeof(int));
        if (!lens || !displs)
            mb_die(1, "out of memory: the trace");
    }
    MPI_Gather(&ilen, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        long long total = 0;
        for (int k = 0; k < n; k++) {
            displs[k] = (int)total;
            total += lens[k];
        }
        if (total > INT32_MAX)
            mb_die(1, "the trace holds %lld bytes over the ranks: more than one message carries", total);
        all = malloc((size_t)total);
        if (!all)
            mb_die(1, "out of memory: the trace");
    }
    MPI_Gatherv(mine, ilen, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, comm);
    free(mine);
    if (rank == 0) {
        /* the earliest start of tracing among ranks with spans: time 0,
         * kept while r holds spans so later gathers line up with earlier */
        if (!r->ntrace)
            first_wall = 0;
        for (int k = 0; k < n && !r->ntrace; k++) {
            struct pack_head h;
            memcpy(&h, all + displs[k], sizeof h);
            if (h.nspans && (first_wall == 0 || h.wall < first_wall))
                first_wall = h.wall;
        }
        for (int k = 0; k < n; k++) {
            struct pack_head h;
            memcpy(&h, all + displs[k], sizeof h);
            if (!h.nspans)
                continue;
            if (first_wall == 0)
                first_wall = h.wall;
            /* a rank that began tracing later is shifted right */
            struct mb_trace_rank got;
            unpack(all + displs[k], k, h.wall - first_wall, &got);
            size_t at = 0;
            while (at < r->ntrace && r->trace[at].rank != k)
                at++;
            if (at < r->ntrace) {
                merge(&r->trace[at], &got);
                continue;
            }
            struct mb_trace_rank *t = realloc(r->trace, (r->ntrace + 1) * sizeof(*t));
            if (!t)
                mb_die(1, "out of memory: the trace");
            r->trace = t;
            r->trace[r->ntrace++] = got;
        }
    }
    free(all);
    free(lens);
    free(displs);
}

void mb_trace_free(struct mb_result *r)
{
    for (size_t t = 0; t < r->ntrace; t++) {
        struct mb_trace_rank *tr = &r->trace[t];
        for (size_t k = 0; k < tr->nspans; k++)
            free(tr->spans[k].name);
        for (size_t k = 0; k < tr->nlanes; k++)
            free(tr->lanes[k]);
        free(tr->spans);
        free(tr->lanes);
    }
    free(r->trace);
    r->trace = NULL;
    r->ntrace = 0;
}
