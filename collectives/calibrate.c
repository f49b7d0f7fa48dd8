/* Calibration of the cost model from microbenchmarks only: memcpy,
 * streaming stores, the reduction kernel, point-to-point exchanges, flag
 * round-trips and process_vm_readv, never a collective the model predicts.
 * Each is timed the way mb-coll times a case (MPI_Barrier, then the
 * operation on every rank at once; the slowest rank counts; the median
 * over repetitions), at sizes on both sides of the cache, and fitted with
 * the model's own working-set blend (model.c). The cache size is the one
 * that best fits the memcpy sweep (a microbenchmark, not a collective). */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define MAXBUF (64 * MIB) /* per rank per buffer */

struct cal {
    struct mb_coll_ctx *c;
    FILE *log;
    char *a, *b; /* MAXBUF each, private */
    int failed;  /* an operation failed on some rank (agreed): every later measurement is skipped */
    char err[300];
};

/* What one repetition does on this rank. */
struct op {
    enum { COPY, STREAM, REDUCE, XCHG, NBX, FLAG, CMA, SHM_COPY, SHM_REDUCE, UCX } what;
    size_t bytes;
    char *mine, *src; /* SHM_*: this rank's node-shared segment, the peer's it reads */
    int gets;         /* UCX: 8 B gets from the registered buffer `reg` before the flag round */
    void *reg;
    struct mb_coll_flags **flags;
    uint64_t seq;
    int peer_pid;
    uint64_t peer_addr;
};

static int reps_for(size_t bytes) { return bytes <= 64 * 1024 ? 60 : bytes <= 4 * MIB ? 15 : 5; }

static void fill_floats(char *buf, size_t bytes);

/* 0, or -1 with the failed call named in k->err. */
static int once(struct cal *k, struct op *o)
{
    struct mb_coll_ctx *c = k->c;
    int r = c->rank, peer = r ^ 1, rc = MPI_SUCCESS;
    switch (o->what) {
    case COPY: memcpy(k->b, k->a, o->bytes); break;
    case STREAM: /* one cached chunk streamed over the buffer, as shm's allreduce pushes */
        for (size_t off = 0; off < o->bytes; off += MB_COLL_CHUNK)
            mb_coll_copy_stream(k->b + off, k->a, o->bytes - off < MB_COLL_CHUNK ? o->bytes - off : MB_COLL_CHUNK);
        mb_coll_copy_fence();
        break;
    case REDUCE: mb_coll_reduce2(MB_COLL_FLOAT, MB_COLL_SUM, k->b, k->a, o->bytes / sizeof(float)); break;
    case SHM_COPY: memcpy(k->b, o->src, o->bytes); break;
    case SHM_REDUCE: mb_coll_reduce2(MB_COLL_FLOAT, MB_COLL_SUM, k->b, o->src, o->bytes / sizeof(float)); break;
    case UCX:
        if (mb_coll_ucx_calibrate_op(c, o->reg, o->gets) != 0) {
            snprintf(k->err, sizeof(k->err), "a UCX request (%d gets and a flag round) failed on rank %d", o->gets, c->rank);
            return -1;
        }
        break;
    case XCHG:
        if (peer < c->size)
            rc = MPI_Sendrecv(k->a, (int)o->bytes, MPI_BYTE, peer, 7401, k->b, (int)o->bytes, MPI_BYTE, peer,
                              7401, c->comm, MPI_STATUS_IGNORE);
        break;
    case NBX: /* one request round, as hier's leader ring posts and waits for its steps */
        if (peer < c->size) {
            MPI_Request rq[2];
            rc = MPI_Irecv(k->b, (int)o->bytes, MPI_BYTE, peer, 7402, c->comm, &rq[0]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Isend(k->a, (int)o->bytes, MPI_BYTE, peer, 7402, c->comm, &rq[1]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        }
        break;
    case FLAG: { /* the entry synchronisation of the shm algorithms */
        uint64_t s = ++o->seq;
        mb_coll_post(o->flags[c->node_rank], &o->flags[c->node_rank]->arrive, s);
        for (int q = 0; q < c->node_size; q++)
            mb_coll_wait(c, o->flags[q], &o->flags[q]->arrive, s);
        break;
    }
    case CMA: /* the peer's buffer in MB_COLL_CHUNK pieces, as cma.c reads; a failed or
               * short read is an error, never a shorter loop that makes CMA look fast */
        for (size_t off = 0; off < o->bytes; off += MB_COLL_CHUNK) {
            size_t len = o->bytes - off < MB_COLL_CHUNK ? o->bytes - off : MB_COLL_CHUNK;
            struct iovec l = {k->b, len}, rv = {(void *)(uintptr_t)(o->peer_addr + off), len};
            ssize_t n = process_vm_readv(o->peer_pid, &l, 1, &rv, 1, 0);
            if (mb_coll_fault("calibrate-cma-fail") && c->node_rank == c->node_size - 1)
                n = -1, errno = EFAULT; /* tests: a read the kernel refuses mid-calibration */
            if (n != (ssize_t)len) {
                snprintf(k->err, sizeof(k->err), "process_vm_readv of %zu bytes from node rank %d (pid %d) on "
                         "rank %d: %s", len, (c->node_rank + 1) % c->node_size, o->peer_pid, c->rank,
                         n < 0 ? strerror(errno) : "short read");
                return -1;
            }
        }
        break;
    }
    if (rc != MPI_SUCCESS) {
        snprintf(k->err, sizeof(k->err), "an MPI call of %zu bytes failed on rank %d (error %d)", o->bytes, c->rank, rc);
        return -1;
    }
    return 0;
}

int mb_coll_time_median(MPI_Comm comm, int reps, double budget_s, int (*once)(void *), void (*before)(void *),
                        void *arg, double *median)
{
    double *t = malloc(sizeof(double) * (size_t)reps), spent = 0;
    int bad = !t, oom = bad;
    *median = NAN;
    for (int i = -1; i < reps; i++) {
        if (before)
            before(arg);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (!bad)
            bad = once(arg) != 0;
        /* the slowest rank's time, and whether any rank failed */
        double mine[2] = {MPI_Wtime() - t0, bad}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (all[1] != 0) {
            free(t);
            return oom ? -2 : -1;
        }
        if (i >= 0)
            t[i] = all[0], spent += all[0];
        if (i >= 4 && spent > budget_s)
            reps = i + 1;
    }
    *median = mb_median(t, (size_t)reps);
    free(t);
    return 0;
}

struct timed_arg {
    struct cal *k;
    struct op *o;
};

static int timed_once(void *p)
{
    struct timed_arg *a = p;
    return once(a->k, a->o);
}

/* untimed: the peer's source is fresh, as a collective's input written before it runs */
static void timed_fill(void *p)
{
    struct op *o = ((struct timed_arg *)p)->o;
    if (o->what == SHM_COPY || o->what == SHM_REDUCE)
        fill_floats(o->mine, o->bytes);
}

/* Median over repetitions of the slowest rank's time (one warm-up). A
 * loaded machine stretches every repetition: after 5, a measurement stops
 * at 0.2 s, so the calibration stays short. */
static double timed(struct cal *k, struct op *o, int reps)
{
    if (k->failed) /* agreed on every rank: all skip alike */
        return NAN;
    struct timed_arg a = {k, o};
    double m;
    int rc = mb_coll_time_median(k->c->comm, reps, 0.2, timed_once, timed_fill, &a, &m);
    if (rc == -2)
        snprintf(k->err, sizeof(k->err), "out of memory for %d repetitions on rank %d", reps, k->c->rank);
    if (rc != 0)
        k->failed = 1;
    return m;
}

/* A measurement for a per-byte fit: `bytes` cost t seconds (latency
 * removed) with the node's working set ws. */
struct pt {
    double bytes, ws, t;
};

static double frac(double cache, double ws) { return mb_coll_cache_fraction(cache, ws); }

/* Least squares on relative error of t = bytes * (f*x + (1-f)*y);
 * returns the sum of squared relative errors. */
static double fit(double cache, const struct pt *p, int n, struct mb_coll_rate *r)
{
    double uu = 0, uv = 0, vv = 0, u1 = 0, v1 = 0;
    for (int i = 0; i < n; i++) {
        double f = frac(cache, p[i].ws), s = p[i].bytes / p[i].t, u = f * s, v = (1 - f) * s;
        uu += u * u, uv += u * v, vv += v * v, u1 += u, v1 += v;
    }
    double det = uu * vv - uv * uv, x, y;
    if (det > 1e-12 * (uu * vv) && det > 0) {
        x = (u1 * vv - v1 * uv) / det;
        y = (v1 * uu - u1 * uv) / det;
    } else {
        x = y = NAN;
    }
    if (!(x > 0 && y > 0)) { /* one side of the cache only, or noise: one rate */
        double s2 = 0, s1 = 0;
        for (int i = 0; i < n; i++) {
            double s = p[i].bytes / p[i].t;
            s2 += s * s, s1 += s;
        }
        x = y = s1 / s2;
    }
    r->cache = x, r->mem = y;
    double e = 0;
    for (int i = 0; i < n; i++) {
        double f = frac(cache, p[i].ws), d = p[i].bytes * (f * x + (1 - f) * y) / p[i].t - 1;
        e += d * d;
    }
    return e;
}

static void say(struct cal *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct cal *k, const char *fmt, ...)
{
    if (!k->log || k->c->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(k->log, fmt, ap);
    va_end(ap);
    fflush(k->log);
}

static void show(struct cal *k, const char *what, struct mb_coll_rate r)
{
    say(k, "#   %-28s %8.2f GB/s in cache, %8.2f GB/s out of cache\n", what, 1e-9 / r.cache, 1e-9 / r.mem);
}

/* A rate from the sizes in sz[] (alpha subtracted per call, `calls` of
 * them per measurement: 1, or the chunk count for CMA). */
static void measure_rate(struct cal *k, struct op *o, const size_t *sz, int nsz, double alpha, int chunked,
                         double cache, struct pt *pts, struct mb_coll_rate *r, double ws_per_byte)
{
    for (int i = 0; i < nsz; i++) {
        o->bytes = sz[i];
        double calls = chunked ? ceil((double)sz[i] / MB_COLL_CHUNK) : 1, t = timed(k, o, reps_for(sz[i]));
        pts[i].bytes = (double)sz[i];
        pts[i].ws = ws_per_byte * (double)sz[i];
        pts[i].t = fmax(t - calls * alpha, 1e-9);
    }
    fit(cache, pts, nsz, r);
}

static void fill_floats(char *buf, size_t bytes)
{
    float *f = (float *)buf;
    for (size_t i = 0; i < bytes / sizeof(float); i++)
        f[i] = 1.0f;
}

static void report(struct mb_coll_ctx *c, const struct mb_coll_profile *p, FILE *log)
{
    struct cal k = {.c = c, .log = log};
    say(&k, "# cost model on %d ranks (each value the median of 3 rounds)\n"
            "#   effective cache of the node: %.1f MiB\n", c->size, p->cache_bytes / MIB);
    show(&k, "memcpy (all ranks at once)", p->copy);
    say(&k, "#   %-28s %8s           %8.2f GB/s out of cache\n", "streaming stores", "", 1e-9 / p->stream);
    show(&k, "reduce (float sum)", p->reduce);
    say(&k, "#   point-to-point exchange      %8.2f us per message (8 B)\n", p->p2p_alpha * 1e6);
    say(&k, "#   per-message overhead         %8.2f us at 1 KiB, %.2f us at 8 KiB\n", p->p2p_msg1k * 1e6,
        p->p2p_msg8k * 1e6);
    say(&k, "#   Irecv+Isend+Waitall round    %8.2f us (8 B)\n", p->p2p_nb_alpha * 1e6);
    show(&k, "point-to-point exchange", p->p2p);
    say(&k, "#   flag synchronisation         %8.2f us\n", p->flag * 1e6);
    for (int i = 0; i < MB_COLL_NWS; i++)
        say(&k, "#   from a peer's fresh buffer   %8.2f GB/s memcpy, %8.2f GB/s reduce (node working set %.0f KiB)\n",
            1e-9 / p->shm_copy[i], 1e-9 / p->shm_reduce[i], mb_coll_ws_point(i) / 1024);
    if (isnan(p->ucx_flag))
        say(&k, "#   UCX: not measured (ucx unavailable)\n");
    else
        say(&k, "#   UCX flag round               %8.2f us, %.2f us per 8 B get\n", p->ucx_flag * 1e6,
            p->ucx_get_alpha * 1e6);
    if (isnan(p->cma_alpha)) {
        say(&k, "#   process_vm_readv: not measured (CMA unavailable)\n");
    } else {
        say(&k, "#   process_vm_readv             %8.2f us per call\n", p->cma_alpha * 1e6);
        show(&k, "process_vm_readv", p->cma);
    }
    if (log && c->rank == 0) { /* every term with its unit and the microbenchmark behind it */
        mb_coll_profile_audit(log, p);
        fflush(log);
    }
}

/* The shm family's tables: each node rank copies (reduces) bytes = ws /
 * (2 L) from the node-shared segment its next peer filled just before into
 * its private buffer, so the node touches ws bytes, for each table size ws. */
static int shm_tables(struct cal *k, struct mb_coll_profile *prof, char *err, size_t errlen)
{
    struct mb_coll_ctx *c = k->c;
    int L = c->node_size;
    size_t most = ((size_t)mb_coll_ws_point(MB_COLL_NWS - 1) / (2 * (size_t)L)) & ~(size_t)63;
    struct mb_buf sb;
    char berr[256] = "";
    int got = mb_buf_alloc(&sb, MB_MEM_SHARED, most, 0, c->node_comm, berr, sizeof(berr)) == 0;
    if (!mb_coll_agree(c, got, berr, sizeof(berr))) {
        snprintf(err, errlen, "the shm tables' node-shared buffers: %s", berr);
        if (got)
            mb_buf_free(&sb);
        return -1;
    }
    struct op o = {.mine = mb_buf_peer(&sb, c->node_rank), .src = mb_buf_peer(&sb, (c->node_rank + 1) % L)};
    for (int i = 0; i < MB_COLL_NWS; i++) {
        o.bytes = ((size_t)mb_coll_ws_point(i) / (2 * (size_t)L)) & ~(size_t)63;
        if (o.bytes < 64)
            o.bytes = 64;
        o.what = SHM_COPY;
        prof->shm_copy[i] = timed(k, &o, reps_for(o.bytes)) / (double)o.bytes;
        o.what = SHM_REDUCE;
        prof->shm_reduce[i] = timed(k, &o, reps_for(o.bytes)) / (double)o.bytes;
    }
    MPI_Barrier(c->comm);
    mb_buf_free(&sb);
    return 0;
}

/* One calibration round; 0, or -1 with the reason in err (the same on
 * every rank: the lowest failing rank's). */
static int one_round(struct mb_coll_ctx *c, struct mb_coll_profile *prof, char *err, size_t errlen)
{
    struct cal k = {.c = c};
    memset(prof, 0, sizeof(*prof));
    if (c->size < 2 || c->nnodes != 1) {
        snprintf(err, errlen, "needs 2 or more ranks on one node (found %d ranks on %d nodes)", c->size, c->nnodes);
        return -1;
    }
    int L = c->node_size;
    k.a = mb_coll_fault("calibrate-nomem") && c->rank == c->size - 1 ? NULL : malloc(MAXBUF);
    k.b = malloc(MAXBUF);
    snprintf(k.err, sizeof(k.err), "out of memory for two buffers of %zu bytes on rank %d", (size_t)MAXBUF, c->rank);
    if (!mb_coll_agree(c, k.a && k.b, k.err, sizeof(k.err))) {
        snprintf(err, errlen, "%s", k.err);
        free(k.a), free(k.b);
        return -1;
    }
    k.err[0] = '\0';
    fill_floats(k.a, MAXBUF);
    fill_floats(k.b, MAXBUF);
    struct pt pts[16];
    struct op o = {0};

    /* memory copy over a size sweep: the effective cache and the copy rate */
    static const size_t copy_sz[] = {256 << 10, 512 << 10, 1 * MIB, 2 * MIB, 4 * MIB, 8 * MIB,
                                     16 * MIB, 32 * MIB, 64 * MIB};
    int ncopy = (int)(sizeof(copy_sz) / sizeof(copy_sz[0]));
    o.what = COPY;
    for (int i = 0; i < ncopy; i++) {
        o.bytes = copy_sz[i];
        pts[i] = (struct pt){(double)copy_sz[i], 2.0 * L * (double)copy_sz[i], timed(&k, &o, reps_for(copy_sz[i]))};
    }
    double best = INFINITY;
    for (double cand = 256 << 10; cand <= (double)(1u << 30); cand *= 1.1892071150027210667) { /* 2^(1/4) */
        struct mb_coll_rate r;
        double e = fit(cand, pts, ncopy, &r);
        if (e < best)
            best = e, prof->cache_bytes = cand, prof->copy = r;
    }
    prof->cache_bytes = floor(prof->cache_bytes);
    double C = prof->cache_bytes;

    o.what = STREAM;
    o.bytes = MAXBUF; /* well out of cache */
    prof->stream = timed(&k, &o, reps_for(MAXBUF)) / (double)MAXBUF;

    static const size_t red_sz[] = {256 << 10, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB};
    o.what = REDUCE;
    measure_rate(&k, &o, red_sz, 5, 0, 0, C, pts, &prof->reduce, 2.0 * L);

    o.what = XCHG;
    o.bytes = 8;
    prof->p2p_alpha = timed(&k, &o, 300);
    /* the per-message overhead at 1 KiB and 8 KiB (the library's protocol
     * for small messages differs from its large one's), and the exchange's
     * per-byte rates from 64 KiB up with the overhead o(8 KiB) taken off */
    o.bytes = 1024;
    double t1k = timed(&k, &o, 300);
    o.bytes = 8192;
    double t8k = timed(&k, &o, 300);
    static const size_t x_sz[] = {64 << 10, 512 << 10, 4 * MIB, 32 * MIB};
    double times[4];
    for (int i = 0; i < 4; i++) {
        o.bytes = x_sz[i];
        times[i] = timed(&k, &o, reps_for(x_sz[i]));
    }
    /* o(8 KiB) depends on beta and beta's fit on o(8 KiB): a few rounds of
     * the two (each moves o by 8 KiB times beta's change, nanoseconds) */
    prof->p2p_msg8k = prof->p2p_alpha;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 4; i++)
            pts[i] = (struct pt){(double)x_sz[i], 2.0 * L * (double)x_sz[i], fmax(times[i] - prof->p2p_msg8k, 1e-9)};
        fit(C, pts, 4, &prof->p2p);
        /* an overhead is not negative: a size whose exchange beats the in-cache rate has none */
        prof->p2p_msg8k = fmax(t8k - 8192 * prof->p2p.cache, 0);
    }
    prof->p2p_msg1k = fmax(t1k - 1024 * prof->p2p.cache, 0);
    o.what = NBX;
    o.bytes = 8;
    prof->p2p_nb_alpha = timed(&k, &o, 300);

    /* flags: private ones, one cache line per rank, node-shared */
    struct mb_buf fb;
    char berr[256] = "";
    int got = mb_buf_alloc(&fb, MB_MEM_SHARED, sizeof(struct mb_coll_flags), 0, c->node_comm, berr, sizeof(berr)) == 0;
    if (!mb_coll_agree(c, got, berr, sizeof(berr))) {
        snprintf(err, errlen, "flags in node-shared memory: %s", berr);
        if (got)
            mb_buf_free(&fb);
        free(k.a), free(k.b);
        return -1;
    }
    struct mb_coll_flags *flags[L];
    for (int q = 0; q < L; q++)
        flags[q] = mb_buf_peer(&fb, q);
    atomic_store(&flags[c->node_rank]->arrive, 0);
    MPI_Barrier(c->comm);
    o.what = FLAG;
    o.flags = flags;
    o.seq = 0;
    prof->flag = timed(&k, &o, 300);
    MPI_Barrier(c->comm);
    mb_buf_free(&fb);
    if (shm_tables(&k, prof, err, errlen) != 0) {
        free(k.a), free(k.b);
        return -1;
    }

    char why[256];
    prof->cma_alpha = prof->cma.cache = prof->cma.mem = NAN;
    prof->net_alpha = prof->net_beta = NAN; /* the link: --calibrate-net, across machines */
    if (mb_coll_usable(&mb_coll_algo_cma, c, MB_COLL_ALLREDUCE, why, sizeof(why))) {
        struct { int pid; uint64_t addr; } me = {(int)getpid(), (uint64_t)(uintptr_t)k.a}, all[L];
        MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, c->node_comm);
        int peer = (c->node_rank + 1) % L;
        o.what = CMA;
        o.peer_pid = all[peer].pid;
        o.peer_addr = all[peer].addr;
        o.bytes = 8;
        prof->cma_alpha = timed(&k, &o, 300);
        static const size_t cma_sz[] = {256 << 10, 2 * MIB, 32 * MIB};
        measure_rate(&k, &o, cma_sz, 3, prof->cma_alpha, 1, C, pts, &prof->cma, (double)L);
    }

    /* UCX's own costs: the flag round alone, then with 16 gets before it (per get: the difference / 16) */
    prof->ucx_flag = prof->ucx_get_alpha = NAN;
    if (!k.failed && mb_coll_usable(&mb_coll_algo_ucx, c, MB_COLL_ALLREDUCE, why, sizeof(why))) {
        enum { GETS = 16 };
        char rerr[256] = "";
        void *reg = mb_coll_alloc(c, 4096, rerr, sizeof(rerr)); /* mapped by ucx as the algorithm's buffers */
        if (!mb_coll_agree(c, reg != NULL, rerr, sizeof(rerr))) {
            snprintf(k.err, sizeof(k.err), "a registered buffer for the UCX gets: %s", rerr);
            k.failed = 1;
        } else {
            o = (struct op){.what = UCX, .gets = 0, .reg = reg};
            prof->ucx_flag = timed(&k, &o, 300);
            o.gets = GETS;
            prof->ucx_get_alpha = fmax(timed(&k, &o, 300) - prof->ucx_flag, 0) / GETS;
        }
        if (reg)
            mb_coll_release(c, reg);
    }

    free(k.a);
    free(k.b);
    if (k.failed) { /* every rank knows; the failing rank's reason goes to all */
        /* the ranks holding a reason count as failing: the lowest one's is told */
        if (mb_coll_agree(c, k.err[0] == '\0', k.err, sizeof(k.err)))
            snprintf(k.err, sizeof(k.err), "a measurement failed");
        snprintf(err, errlen, "%s", k.err);
        return -1;
    }
    return 0;
}

/* The parameters are the doubles from cache_bytes to the end of the struct. */
#define FIRST offsetof(struct mb_coll_profile, cache_bytes)
#define NPARAM ((sizeof(struct mb_coll_profile) - FIRST) / sizeof(double))
_Static_assert((sizeof(struct mb_coll_profile) - FIRST) % sizeof(double) == 0,
               "the profile's parameters are doubles from cache_bytes on");

int mb_coll_calibrate(struct mb_coll_ctx *c, struct mb_coll_profile *prof, FILE *log, char *err, size_t errlen)
{
    /* Three rounds, each parameter the median of them: a burst of load
     * from other processes spoils one round, not the profile. */
    enum { ROUNDS = 3 };
    struct mb_coll_profile round[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        if (one_round(c, &round[i], err, errlen) != 0)
            return -1;
    }
    *prof = round[0];
    for (size_t j = 0; j < NPARAM; j++) {
        double v[ROUNDS];
        for (int i = 0; i < ROUNDS; i++)
            v[i] = ((const double *)((const char *)&round[i] + FIRST))[j];
        ((double *)((char *)prof + FIRST))[j] = mb_median(v, ROUNDS); /* NaN (no CMA): all NaN */
    }
    report(c, prof, log);
    prof->ranks = c->size;
    gethostname(prof->host, sizeof(prof->host) - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(prof->date, sizeof(prof->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return 0;
}
