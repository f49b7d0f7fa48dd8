/* Calibration of the inter-node link (--calibrate-net): MPI_Sendrecv
 * exchanges between the leaders of nodes 0 and 1 over the link, the
 * other ranks idle, timed as calibrate.c times (barrier, both at once, the
 * slower of the two, median over repetitions; three rounds, the median of
 * each parameter): net_alpha_s from 8 B, net_s_per_B fitted over 64 KiB to
 * 32 MiB with the latency removed. A point-to-point microbenchmark across
 * nodes, never a collective the model predicts. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NET_MAX ((size_t)32 << 20)

struct xchg {
    MPI_Comm comm;
    int peer;
    char *a, *b;
    size_t bytes;
};

static int xchg_once(void *p)
{
    struct xchg *x = p;
    return MPI_Sendrecv(x->a, (int)x->bytes, MPI_BYTE, x->peer, 7402, x->b, (int)x->bytes, MPI_BYTE, x->peer, 7402,
                        x->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS;
}

/* Median over reps of the slower leader's exchange of bytes (one warm-up;
 * stops after 5 once 0.3 s are spent: mb_coll_time_median, as calibrate.c's
 * measurements). Called by the two leaders on comm (2 ranks); NaN if a
 * call fails. */
static double exchange(MPI_Comm comm, int peer, char *a, char *b, size_t bytes, int reps)
{
    struct xchg x = {comm, peer, a, b, bytes};
    double m;
    mb_coll_time_median(comm, reps, 0.3, xchg_once, NULL, &x, &m);
    return m;
}

/* One round on the pair: alpha and beta, or NaN. */
static void one_round(MPI_Comm pair, int peer, char *a, char *b, double *alpha, double *beta)
{
    static const size_t sz[] = {64 << 10, 1 << 20, 8 << 20, NET_MAX};
    *alpha = exchange(pair, peer, a, b, 8, 200);
    /* least squares on relative error of t - alpha = bytes * beta */
    double s1 = 0, s2 = 0;
    for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
        double t = exchange(pair, peer, a, b, sz[i], sz[i] <= (1 << 20) ? 30 : 7);
        double rate = (double)sz[i] / fmax(t - *alpha, 1e-9); /* bytes per second */
        s1 += rate, s2 += rate * rate;
    }
    *beta = isfinite(*alpha) && s2 > 0 ? s1 / s2 : NAN;
}

int mb_coll_calibrate_net(struct mb_coll_ctx *c, struct mb_coll_profile *prof, FILE *log, char *err,
                          size_t errlen)
{
    if (c->nnodes < 2 || c->one_host) {
        snprintf(err, errlen, "needs ranks on 2 or more machines (found %d node%s%s)", c->nnodes,
                 c->nnodes == 1 ? "" : "s", c->one_host && c->nnodes > 1 ? ", all on one machine" : "");
        return -1;
    }
    /* the first two node leaders are the pair; everyone else waits */
    int lrank = -1;
    if (c->leader_comm != MPI_COMM_NULL)
        MPI_Comm_rank(c->leader_comm, &lrank);
    MPI_Comm pair;
    MPI_Comm_split(c->comm, lrank == 0 || lrank == 1 ? 0 : MPI_UNDEFINED, c->rank, &pair);
    double got[2] = {NAN, NAN};
    if (pair != MPI_COMM_NULL) {
        char *a = calloc(1, NET_MAX), *b = calloc(1, NET_MAX);
        int ok = a && b, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, pair);
        if (all_ok) {
            enum { ROUNDS = 3 };
            double al[ROUNDS], be[ROUNDS];
            for (int i = 0; i < ROUNDS; i++)
                one_round(pair, 1 - lrank, a, b, &al[i], &be[i]);
            got[0] = mb_median(al, ROUNDS), got[1] = mb_median(be, ROUNDS);
        }
        free(a), free(b);
        MPI_Comm_free(&pair);
    }
    MPI_Bcast(got, 2, MPI_DOUBLE, 0, c->comm); /* rank 0 leads node 0 */
    if (!(isfinite(got[0]) && isfinite(got[1]) && got[1] > 0)) {
        snprintf(err, errlen, "the exchange between the leaders of the first two nodes failed (out of memory for "
                 "2 x %zu bytes, or an MPI call failed)", NET_MAX);
        return -1;
    }
    prof->net_alpha = got[0], prof->net_beta = got[1];
    if (log && c->rank == 0) {
        fprintf(log, "# inter-node link (leaders of nodes 0 and 1, MPI_Sendrecv, median of 3 rounds):\n"
                     "#   latency %8.2f us per 8 B exchange, %8.3f GB/s each direction\n",
                got[0] * 1e6, 1e-9 / got[1]);
        fflush(log);
    }
    return 0;
}
