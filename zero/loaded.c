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

/* Passes continue (a load for the PS) until every rank has done its part. */
struct until {
    MPI_Comm comm;
    MPI_Request all;
    int posted;
};

static int more(void *ctx)
{
    struct until *u = ctx;
    int done = 0;
    if (!u->posted)
        u->posted = MPI_Ibarrier(u->comm, &u->all) == MPI_SUCCESS;
    return u->posted && MPI_Test(&u->all, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;
}

static void wait_napping(struct until *u, double nap_s)
{
    int done = 0;
    if (!u->posted)
        u->posted = MPI_Ibarrier(u->comm, &u->all) == MPI_SUCCESS;
    while (u->posted && MPI_Test(&u->all, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nap(nap_s);
}

int zero_model_measure_loaded(struct zero_run *z, const struct zero_loaded_opts *o, struct zero_loaded *out,
                              char *err, size_t errlen)
{
    double t = 0, f = 0, c = 0, ps = INFINITY;
    int bad = 0;
    char msg[300] = "";
    zero_nap_barrier(z->comm, 1000000); /* start together */
    struct until u = {.comm = z->comm};
    if (z->role == ZERO_WORKER) {
        struct poller p = {.nap_s = o->worker_nap_s};
        pthread_t th;
        int threaded = 0, token = 0;
        if (o->worker_poller && MPI_Irecv(&token, 1, MPI_INT, 0, 91, MPI_COMM_SELF, &p.req) == MPI_SUCCESS)
            threaded = pthread_create(&th, NULL, poll_main, &p) == 0;
        zero_block_passes(z, more, &u, &t, &f, &c);
        if (o->worker_poller) {
            MPI_Send(&token, 1, MPI_INT, 0, 91, MPI_COMM_SELF); /* ends the thread's receive */
            if (threaded)
                pthread_join(th, NULL);
            else {
                MPI_Wait(&p.req, MPI_STATUS_IGNORE);
                bad = 1;
                snprintf(msg, sizeof msg, "loaded calibration: rank %d: no polling thread", z->rank);
            }
        }
        wait_napping(&u, o->worker_nap_s);
    } else {
        if (z->role == ZERO_PS && o->ps) {
            struct zero_ps_rate r;
            if (zero_model_measure_ps(o->ps, &r, msg, sizeof msg) != 0)
                bad = 1;
            else
                ps = r.params_s;
        }
        wait_napping(&u, o->others_nap_s);
    }
    double in[4] = {t, c, bad ? 1 : 0, -ps}, mx[4];
    MPI_Allreduce(in, mx, 4, MPI_DOUBLE, MPI_MAX, z->comm); /* -max(-ps) = the slowest PS */
    if (mx[2] > 0) {
        int me, first;
        MPI_Comm_rank(z->comm, &me);
        int mine = bad ? me : 1 << 30;
        MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, z->comm);
        MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, z->comm);
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    out->block_s = mx[0];
    out->block_cpu_s = mx[1];
    out->ps_params_s = isfinite(mx[3]) ? -mx[3] : 0;
    return 0;
}

double zero_load_x(double loaded_s, double alone_s)
{
    return loaded_s > 0 && alone_s > 0 && isfinite(loaded_s) && isfinite(alone_s) ? loaded_s / alone_s : NAN;
}
