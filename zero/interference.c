/* The --interference measurements (zero.h): a collective beside a GEMM on
 * the same cores, and a GEMM beside a copy on another core. Both run the
 * disturbing work continuously on a second thread and time the other
 * repeatedly, so the slowdown is the steady state, not a start-up race. */
#include "zero.h"

#include "../common/common.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gemm_job {
    int n;
    float *A, *B, *C;
};

/* A = B = 1: every element of C is exactly n (n < 2^24). */
static void gemm_once(struct gemm_job *g)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->A, g->n, g->B, g->n, 0.0f,
                g->C, g->n);
}

static long gemm_bad(const struct gemm_job *g)
{
    size_t nn = (size_t)g->n * (size_t)g->n;
    for (size_t i = 0; i < nn; i++)
        if (!(g->C[i] == (float)g->n))
            return (long)i;
    return -1;
}

struct disturber {
    atomic_int stop, running;
    int pu;                    /* copy: the PU to pin to, -1 none */
    struct gemm_job gemm;      /* gemm mode */
    char *src, *dst;           /* copy mode */
    size_t bytes;
    double copied, seconds;    /* copy mode: its rate */
    long gemms;
};

static void *gemm_loop(void *arg)
{
    struct disturber *d = arg;
    atomic_store(&d->running, 1);
    while (!atomic_load(&d->stop)) {
        gemm_once(&d->gemm);
        d->gemms++;
    }
    return NULL;
}

static void *copy_loop(void *arg)
{
    struct disturber *d = arg;
    char err[128];
    if (d->pu >= 0 && mb_pin_thread(d->pu, err, sizeof err) != 0)
        d->pu = -1;
    /* In chunks, so a short measurement still sees whole copies counted. */
    size_t off = 0, chunk = 256 << 10;
    double t0 = mb_now();
    atomic_store(&d->running, 1);
    while (!atomic_load(&d->stop)) {
        size_t n = d->bytes - off < chunk ? d->bytes - off : chunk;
        memcpy(d->dst + off, d->src + off, n);
        d->copied += (double)n;
        off = off + n == d->bytes ? 0 : off + n;
    }
    d->seconds = mb_now() - t0;
    return NULL;
}

/* Waits (napping, not spinning: the thread needs the core) until the
 * disturbing thread runs. */
static void wait_running(struct disturber *d)
{
    struct timespec nap = {0, 50000};
    while (!atomic_load(&d->running))
        nanosleep(&nap, NULL);
}

/* The slowest rank's time of this repetition. */
static double slowest(MPI_Comm comm, double t)
{
    double m = t;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
    return m;
}

/* Agrees on a verdict: the lowest failing rank's message reaches every rank. */
static int agree(MPI_Comm comm, int bad, char *err, size_t errlen)
{
    int rank, first, me;
    MPI_Comm_rank(comm, &rank);
    me = bad ? rank : 1 << 30;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == 1 << 30)
        return 0;
    char msg[256] = "";
    if (rank == first)
        snprintf(msg, sizeof msg, "%s", err);
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, comm);
    snprintf(err, errlen, "%s", msg);
    return -1;
}

static int coll_reps(MPI_Comm comm, struct mb_coll_ctx *ctx, const struct zero_interference_opts *o,
                     uint8_t *send, uint8_t *recv, int fault, double *median, char *err, size_t errlen)
{
    int rank, W, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &W);
    const struct mb_coll_algo *ring = mb_coll_find("ring");
    double *t = calloc((size_t)o->reps, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "interference: out of memory");
        bad = 1;
    }
    /* Every rank makes every call even after a failed check, so no rank
     * waits in a collective the others have left. */
    for (int r = 0; r < o->reps; r++) {
        for (size_t i = 0; i < o->coll_bytes; i++)
            send[i] = (uint8_t)(rank * 31 + i * 7 + (size_t)r);
        struct mb_coll_args a = {.kind = MB_COLL_ALLGATHER, .sendbuf = send, .recvbuf = recv,
                                 .count = o->coll_bytes, .dtype = MB_COLL_INT8, .op = MB_COLL_SUM};
        MPI_Barrier(comm);
        double t0 = mb_now();
        int rc = ring->run(ctx, &a);
        double tr = slowest(comm, mb_now() - t0);
        if (t)
            t[r] = tr;
        if (fault && r == o->reps - 1 && o->coll_bytes)
            recv[o->coll_bytes / 2] ^= 0x10;
        if (rc != MPI_SUCCESS && !bad) {
            snprintf(err, errlen, "interference: rank %d: ring allgather failed (%d)", rank, rc);
            bad = 1;
        }
        for (int s = 0; !bad && s < W; s++)
            for (size_t i = 0; i < o->coll_bytes; i++)
                if (recv[(size_t)s * o->coll_bytes + i] != (uint8_t)(s * 31 + i * 7 + (size_t)r)) {
                    snprintf(err, errlen, "interference: rank %d: allgather repetition %d: byte %zu of rank %d's "
                                          "block is wrong", rank, r, i, s);
                    bad = 1;
                    break;
                }
    }
    if (!bad)
        *median = mb_median(t, (size_t)o->reps);
    free(t);
    return bad;
}

static int gemm_reps(MPI_Comm comm, struct gemm_job *g, const struct zero_interference_opts *o, int fault,
                     double *median, char *err, size_t errlen)
{
    int rank, bad = 0;
    MPI_Comm_rank(comm, &rank);
    double *t = calloc((size_t)o->reps, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "interference: out of memory");
        return 1;
    }
    for (int r = 0; r < o->reps; r++) {
        MPI_Barrier(comm);
        memset(g->C, 0xff, (size_t)g->n * (size_t)g->n * sizeof(float)); /* NaN: a skipped GEMM fails */
        double t0 = mb_now();
        gemm_once(g);
        t[r] = slowest(comm, mb_now() - t0);
        if (fault && r == o->reps - 1)
            g->C[0] += 1;
        long i = gemm_bad(g);
        if (i >= 0 && !bad) {
            snprintf(err, errlen, "interference: rank %d: GEMM repetition %d: C[%ld] = %g, expected %d", rank, r, i,
                     (double)g->C[i], g->n);
            bad = 1;
        }
    }
    if (!bad)
        *median = mb_median(t, (size_t)o->reps);
    free(t);
    return bad;
}

int zero_interference_run(MPI_Comm comm, const struct zero_interference_opts *o, struct zero_interference *out,
                          char *err, size_t errlen)
{
    if (o->gemm_n < 1 || o->gemm_n >= (1 << 12) || o->reps < 1 || o->copy_bytes == 0 || o->gemm_threads < 0) {
        snprintf(err, errlen, "interference: gemm_n %d (1..4095), reps %d (>= 1), copy_bytes %zu (> 0), "
                              "gemm_threads %d (>= 0)", o->gemm_n, o->reps, o->copy_bytes, o->gemm_threads);
        return -1;
    }
    int W, bad = 0;
    MPI_Comm_size(comm, &W);
    struct zero_interference r = {0};
    int pus = mb_pu_count(), blas0 = openblas_get_num_threads(); /* restored at the end: the steps' count */
    r.gemm_threads = o->gemm_threads ? o->gemm_threads : (pus > 1 ? pus - 1 : 1);
    r.copy_pu = pus > 1 ? pus - 1 : -1;
    size_t nn = (size_t)o->gemm_n * (size_t)o->gemm_n;
    struct gemm_job g = {o->gemm_n, malloc(nn * 4), malloc(nn * 4), malloc(nn * 4)};
    struct gemm_job g2 = {o->gemm_n, g.A, g.B, malloc(nn * 4)}; /* the disturbing GEMM's own output */
    uint8_t *send = malloc(o->coll_bytes + 1), *recv = malloc((size_t)W * o->coll_bytes + 1);
    char *src = malloc(o->copy_bytes), *dst = malloc(o->copy_bytes);
    char cerr[256] = "";
    struct mb_coll_ctx *ctx = mb_coll_ctx_create(comm, 0, cerr, sizeof cerr);
    if (!g.A || !g.B || !g.C || !g2.C || !send || !recv || !src || !dst || !ctx) {
        snprintf(err, errlen, "interference: %s", ctx ? "out of memory" : cerr);
        bad = 1;
    } else {
        for (size_t i = 0; i < nn; i++)
            g.A[i] = g.B[i] = 1.0f;
        for (size_t i = 0; i < o->copy_bytes; i++)
            src[i] = (char)(i * 13 + 1);
        openblas_set_num_threads(r.gemm_threads);
    }
    /* (1) the collective alone, then beside a looping GEMM. */
    if (!agree(comm, bad, err, errlen))
        bad = coll_reps(comm, ctx, o, send, recv, 0, &r.coll_alone, err, errlen);
    else
        bad = 1;
    if (!agree(comm, bad, err, errlen)) {
        struct disturber d = {.gemm = g2};
        pthread_t th;
        bad = pthread_create(&th, NULL, gemm_loop, &d) != 0;
        if (bad)
            snprintf(err, errlen, "interference: cannot start the GEMM thread");
        else {
            wait_running(&d);
            bad = coll_reps(comm, ctx, o, send, recv, o->fault == 1, &r.coll_with_gemm, err, errlen);
            atomic_store(&d.stop, 1);
            pthread_join(th, NULL);
            long i = d.gemms ? gemm_bad(&d.gemm) : -1;
            if (!bad && i >= 0) {
                snprintf(err, errlen, "interference: the concurrent GEMM's C[%ld] = %g, expected %d", i,
                         (double)d.gemm.C[i], o->gemm_n);
                bad = 1;
            }
        }
    } else
        bad = 1;
    /* (2) the GEMM alone, then beside a copy stream on the other core. */
    if (!agree(comm, bad, err, errlen))
        bad = gemm_reps(comm, &g, o, 0, &r.gemm_alone, err, errlen);
    else
        bad = 1;
    if (!agree(comm, bad, err, errlen)) {
        struct disturber d = {.pu = r.copy_pu, .src = src, .dst = dst, .bytes = o->copy_bytes};
        pthread_t th;
        bad = pthread_create(&th, NULL, copy_loop, &d) != 0;
        if (bad)
            snprintf(err, errlen, "interference: cannot start the copy thread");
        else {
            wait_running(&d);
            bad = gemm_reps(comm, &g, o, o->fault == 2, &r.gemm_with_copy, err, errlen);
            atomic_store(&d.stop, 1);
            pthread_join(th, NULL);
            r.copy_pu = d.pu;
            r.copy_GBps = d.seconds > 0 ? d.copied / d.seconds / 1e9 : NAN;
            if (!bad && d.copied > 0 && memcmp(src, dst, d.copied < (double)o->copy_bytes ? (size_t)d.copied : o->copy_bytes) != 0) {
                snprintf(err, errlen, "interference: the copy stream's bytes differ from its source");
                bad = 1;
            }
        }
    } else
        bad = 1;
    int rc = agree(comm, bad, err, errlen);
    openblas_set_num_threads(blas0);
    if (ctx)
        mb_coll_ctx_free(ctx);
    free(g.A), free(g.B), free(g.C), free(g2.C), free(send), free(recv), free(src), free(dst);
    if (rc == 0) {
        r.coll_slowdown = r.coll_with_gemm / r.coll_alone - 1;
        r.gemm_slowdown = r.gemm_with_copy / r.gemm_alone - 1;
        *out = r;
    }
    return rc;
}
