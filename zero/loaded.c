/* The CPU-sharing calibration (issue 19, zero.h): a worker's block pass
 * and the disdp PS's update timed again with the mode's other roles
 * running beside them on the same cores, as they wait and work in the
 * run: the workers pass side by side, each with the mode's polling thread
 * (disdp's agent, zero3-overlap's progress thread) napping between MPI
 * polls; the switches poll and nap; the PS runs its update; ranks with
 * nothing to do wait as they do in the mode. Never the mode's steps. */
#include "zero.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* The worker's polling thread: MPI_Test on a receive from itself (as the
 * agent or progress thread tests its requests), a nap between polls. */
struct poller {
    MPI_Request req;
    double nap_s;
    long polls;
};

static void *poll_main(void *arg)
{
    struct poller *p = arg;
    int done = 0;
    while (!done && MPI_Test(&p->req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS) {
        p->polls++;
        if (!done)
            nap(p->nap_s);
    }
    return NULL;
}

/* Passes continue (a load for the PS) until every rank has done its part,
 * ZERO_BLOCK_PASSES more at most: GEMMs without a break starved the PS's
 * update (up to 60 s for gpt-tiny, 3 workers on OpenBLAS's pool over 2
 * cores, load 20), which in the run the workers leave room for while they
 * wait for their pulls. A PS slower than that sees the load for part of
 * its pass only. */
struct until {
    MPI_Comm comm;
    MPI_Request all;
    int posted, extra;
};

static int more(void *ctx)
{
    struct until *u = ctx;
    int done = 0;
    if (!u->posted)
        u->posted = MPI_Ibarrier(u->comm, &u->all) == MPI_SUCCESS;
    return u->posted && u->extra++ < ZERO_BLOCK_PASSES && MPI_Test(&u->all, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           !done;
}

static void wait_napping(struct until *u, double nap_s)
{
    int done = 0;
    if (!u->posted)
        u->posted = MPI_Ibarrier(u->comm, &u->all) == MPI_SUCCESS;
    while (u->posted && MPI_Test(&u->all, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nap(nap_s);
}

/* One loaded phase: this rank's median pass (workers) or PS update rate
 * (PS ranks given ps); 1 in *bad with msg on a failure. */
static void loaded_phase(struct zero_run *z, const struct zero_loaded_opts *o, const struct zero_ps_calib *one,
                         double *t, double *ps, int *bad, char *msg, size_t len)
{
    double f, c;
    struct until u = {.comm = z->comm};
    zero_nap_barrier(z->comm, 1000000); /* start together */
    if (z->role == ZERO_WORKER) {
        struct poller p = {.nap_s = o->worker_nap_s};
        pthread_t th;
        int threaded = 0, token = 0;
        if (o->worker_poller && MPI_Irecv(&token, 1, MPI_INT, 0, 91, MPI_COMM_SELF, &p.req) == MPI_SUCCESS)
            threaded = pthread_create(&th, NULL, poll_main, &p) == 0;
        zero_block_passes(z, more, &u, t, &f, &c);
        if (o->worker_poller) {
            MPI_Send(&token, 1, MPI_INT, 0, 91, MPI_COMM_SELF); /* ends the thread's receive */
            if (threaded)
                pthread_join(th, NULL);
            else {
                MPI_Wait(&p.req, MPI_STATUS_IGNORE);
                *bad = 1;
                snprintf(msg, len, "loaded calibration: rank %d: no polling thread", z->rank);
            }
        }
        wait_napping(&u, o->worker_nap_s);
    } else {
        struct zero_ps_rate r;
        if (z->role == ZERO_PS && one) {
            if (zero_model_measure_ps(one, &r, msg, len) != 0)
                *bad = 1;
            else
                *ps = r.params_s;
        }
        wait_napping(&u, o->others_nap_s);
    }
}

static double median(double *x, int n)
{
    double half = 0.5, m = NAN;
    zero_quantiles(x, (size_t)n, &half, 1, &m);
    return m;
}

int zero_model_measure_loaded(struct zero_run *z, const struct zero_loaded_opts *o, struct zero_loaded *out,
                              char *err, size_t errlen)
{
    enum { R = ZERO_LOADED_ROUNDS };
    double cx[R], px[R], tl[R], pl[R];
    int bad = 0, nps = 0;
    char msg[300] = "";
    struct zero_ps_calib one;
    if (o->ps) {
        one = *o->ps;
        one.reps = 1;
    }
    for (int r = 0; r < R; r++) {
        /* alone: the workers pass side by side, then the PS updates, the
         * others napping 1 ms (as zero_block_pass and measure_ps) */
        double ta = 0, f, c, pa = INFINITY, t = 0, ps = INFINITY;
        zero_nap_barrier(z->comm, 1000000);
        zero_block_passes(z, NULL, NULL, &ta, &f, &c);
        zero_nap_barrier(z->comm, 1000000);
        if (z->role == ZERO_PS && o->ps) {
            struct zero_ps_rate pr;
            if (zero_model_measure_ps(&one, &pr, msg, sizeof msg) != 0)
                bad = 1;
            else
                pa = pr.params_s;
        }
        /* together: the mode's other roles beside the same work */
        loaded_phase(z, o, o->ps ? &one : NULL, &t, &ps, &bad, msg, sizeof msg);
        /* the slowest worker's passes, the slowest PS's rates */
        double in[5] = {ta, t, -pa, -ps, bad ? 1 : 0}, mx[5];
        MPI_Allreduce(in, mx, 5, MPI_DOUBLE, MPI_MAX, z->comm);
        if (mx[4] > 0) {
            int me, first, mine;
            MPI_Comm_rank(z->comm, &me);
            mine = bad ? me : 1 << 30;
            MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, z->comm);
            MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, z->comm);
            snprintf(err, errlen, "%s", msg);
            return -1;
        }
        cx[r] = zero_load_x(mx[1], mx[0]);
        tl[r] = mx[1];
        if (isfinite(mx[2]) && isfinite(mx[3])) {
            px[nps] = zero_load_x(-mx[2], -mx[3]); /* alone rate / loaded rate */
            pl[nps++] = -mx[3];
        }
    }
    out->compute_x = median(cx, R);
    out->block_s = median(tl, R);
    out->ps_x = nps ? median(px, nps) : 0;
    out->ps_params_s = nps ? median(pl, nps) : 0;
    return 0;
}

double zero_load_x(double loaded_s, double alone_s)
{
    return loaded_s > 0 && alone_s > 0 && isfinite(loaded_s) && isfinite(alone_s) ? loaded_s / alone_s : NAN;
}
