/* The CPU-sharing term's inputs (zero.h, zero/model.c): the roles' CPU
 * rates from their own calibration passes (CPU seconds of their own work,
 * never the mode's steps), and which ranks share which cores: ranks on one kernel (the same
 * boot_id: one machine, vcluster's namespaced nodes included) whose CPU
 * sets overlap share the union of those sets. */
#include "zero.h"

#include "../common/common.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void zero_nap_barrier(MPI_Comm comm, long nap_ns)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(comm, &r);
    while (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nanosleep(&(struct timespec){0, nap_ns}, NULL);
}

double zero_model_measure_copy_cpu(size_t bytes, int reps)
{
    char *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    double best = INFINITY;
    int ok = a && b && bytes > 0;
    if (ok) {
        memset(a, 0x5a, bytes);
        memset(b, 0, bytes);
        for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
            a[0] = (char)r;
            double c0 = mb_cpu_s(1);
            memcpy(b, a, bytes);
            double c = mb_cpu_s(1) - c0;
            best = c < best ? c : best;
        }
        ok = b[0] == (char)((reps < 1 ? 1 : reps) - 1) && b[bytes - 1] == 0x5a;
    }
    free(a);
    free(b);
    return ok && best > 0 ? (double)bytes / best : NAN;
}

double zero_model_measure_wire_cpu(MPI_Comm comm, size_t bytes, int reps)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    if (n < 2 || bytes == 0)
        return 0;
    if (me > 1) {
        zero_nap_barrier(comm, 1000000);
        return 0;
    }
    unsigned char *buf = malloc(bytes);
    int ok = buf != NULL;
    double best = INFINITY;
    size_t chunk = (size_t)1 << 20; /* messages of 1 MiB, as the agents' */
    for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
        if (buf)
            memset(buf, me == 0 ? (0x30 + r) : 0, bytes);
        size_t nmsg = (bytes + chunk - 1) / chunk;
        MPI_Request *q = malloc(nmsg * sizeof *q);
        if (!q || !buf) { /* still take part, with nothing to move */
            free(q);
            ok = 0;
            continue;
        }
        double c0 = mb_cpu_s(0);
        for (size_t i = 0; i < nmsg; i++) {
            size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;
            if (me == 0)
                MPI_Isend(buf + off, (int)len, MPI_BYTE, 1, 77, comm, &q[i]);
            else
                MPI_Irecv(buf + off, (int)len, MPI_BYTE, 0, 77, comm, &q[i]);
        }
        int done = 0;
        /* 1 ms naps: few polls counted (a socket buffer holds more than
         * 1 ms at these rates; 100 us naps counted twice the CPU per byte
         * at 0.54 Gbit/s as at 1.08, at load 8-11) */
        while (MPI_Testall((int)nmsg, q, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        double c = mb_cpu_s(0) - c0;
        free(q);
        best = c < best ? c : best;
        if (me == 1)
            ok = ok && buf[0] == (unsigned char)(0x30 + r) && buf[bytes - 1] == (unsigned char)(0x30 + r);
    }
    free(buf);
    double mine[2] = {best, ok ? 1 : 0}, peer[2] = {0, 0};
    MPI_Sendrecv(mine, 2, MPI_DOUBLE, 1 - me, 78, peer, 2, MPI_DOUBLE, 1 - me, 78, comm, MPI_STATUS_IGNORE);
    zero_nap_barrier(comm, 1000000);
    if (me != 0)
        return 0;
    double cpu = mine[0] + peer[0];
    return mine[1] > 0 && peer[1] > 0 && cpu > 0 && isfinite(cpu) ? 2.0 * (double)bytes / cpu : NAN;
}

static void whoami(enum zero_role role, struct zero_cpu_who *w)
{
    memset(w, 0, sizeof *w);
    w->role = (int)role;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(w->key, sizeof w->key, f)) {
        int n = 0;
        char name[MPI_MAX_PROCESSOR_NAME];
        MPI_Get_processor_name(name, &n);
        snprintf(w->key, sizeof w->key, "host %.50s", name);
    }
    if (f)
        fclose(f);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        CPU_SET(0, &set); /* unknown: one core */
    for (int c = 0; c < CPU_SETSIZE && c / 8 < (int)sizeof w->mask; c++)
        if (CPU_ISSET(c, &set))
            w->mask[c / 8] |= (unsigned char)(1u << (c % 8));
}

static int find(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

int zero_cpu_hosts_of(const struct zero_cpu_who *ranks, int n, struct zero_model_host *out)
{
    int *parent = malloc((size_t)(n > 0 ? n : 1) * sizeof *parent), nh = 0;
    if (!parent)
        return -1;
    for (int i = 0; i < n; i++)
        parent[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (strcmp(ranks[i].key, ranks[j].key) != 0)
                continue;
            int overlap = 0;
            for (size_t b = 0; b < sizeof ranks[i].mask && !overlap; b++)
                overlap = (ranks[i].mask[b] & ranks[j].mask[b]) != 0;
            if (overlap)
                parent[find(parent, j)] = find(parent, i);
        }
    for (int i = 0; i < n; i++) {
        if (find(parent, i) != i)
            continue;
        struct zero_model_host h = {0};
        unsigned char u[sizeof ranks[0].mask] = {0};
        for (int j = 0; j < n; j++) {
            if (find(parent, j) != i)
                continue;
            h.workers += ranks[j].role == ZERO_WORKER;
            h.switches += ranks[j].role == ZERO_SWITCH;
            h.ps += ranks[j].role == ZERO_PS;
            for (size_t b = 0; b < sizeof u; b++)
                u[b] |= ranks[j].mask[b];
        }
        for (size_t b = 0; b < sizeof u; b++)
            h.cores += __builtin_popcount(u[b]);
        out[nh++] = h;
    }
    free(parent);
    return nh;
}

int zero_model_calibrate_cpu(MPI_Comm comm, enum zero_role role, const double mine_cpu[2], struct zero_model_in *in,
                             struct zero_model_host **hosts, char *err, size_t errlen)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    double mine[3] = {INFINITY, INFINITY, INFINITY}, slowest[3];
    if (role == ZERO_WORKER)
        mine[0] = mine_cpu[0], mine[1] = mine_cpu[1];
    if (me == 0) /* the others nap in the barrier meanwhile */
        mine[2] = zero_model_measure_copy_cpu((size_t)16 << 20, 3);
    zero_nap_barrier(comm, 1000000);
    /* the transport's CPU cost per byte (ranks 0 and 1; the rest nap):
     * the roles' bytes go through it, not through a memcpy */
    double wire = zero_model_measure_wire_cpu(comm, (size_t)8 << 20, 3);
    if (me == 0 && (isnan(wire) || (wire > 0 && wire < mine[2])))
        mine[2] = wire;
    for (int k = 0; k < 3; k++)
        mine[k] = mine[k] > 0 ? mine[k] : -1; /* NaN: a failed check */
    zero_nap_barrier(comm, 1000000); /* 1 ms naps: never spinning on the cores a measuring rank needs */
    MPI_Allreduce(mine, slowest, 3, MPI_DOUBLE, MPI_MIN, comm);
    struct zero_cpu_who w, *all = me == 0 ? malloc((size_t)n * sizeof *all) : NULL;
    whoami(role, &w);
    MPI_Gather(&w, (int)sizeof w, MPI_BYTE, all, (int)sizeof w, MPI_BYTE, 0, comm);
    if (me != 0)
        return 0;
    *hosts = all ? malloc((size_t)n * sizeof **hosts) : NULL;
    int nh = *hosts ? zero_cpu_hosts_of(all, n, *hosts) : -1;
    free(all);
    if (nh < 1) {
        free(*hosts);
        *hosts = NULL;
        return snprintf(err, errlen, "CPU sharing: out of memory"), -1;
    }
    const char *what[3] = {"GEMM", "Adam", "copy"};
    for (int k = 0; k < 3; k++)
        if (!(slowest[k] > 0)) {
            free(*hosts);
            *hosts = NULL;
            return snprintf(err, errlen, "CPU sharing: the %s CPU rate failed its check", what[k]), -1;
        }
    in->cpu_gemm_flops = slowest[0];
    in->cpu_adam_params_s = slowest[1];
    in->cpu_copy_Bps = slowest[2];
    in->hosts = *hosts;
    in->nhosts = nh;
    return 0;
}
