/* The machine the trainer runs on: the cores it may use, the data's
 * read-ahead, the host's CPU steal, and its hardware profile for the TPC
 * model (measured rates where no profile file is given). */
#include "trainer_internal.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int gnn_usable_cores(void)
{
    /* (mpirun binds a rank to one core unless told otherwise) */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int gnn_cores_per_rank(int cores, int host_ranks)
{
    if (cores < 1)
        return 1;
    int per = host_ranks > 1 ? cores / host_ranks : cores;
    return per < 1 ? 1 : per;
}

/* What mmap's page faults read around each miss. */
long long gnn_read_ahead_kb(const char *dir)
{
    char path[1100];
    struct stat st;
    snprintf(path, sizeof(path), "%s/data.0", dir);
    if (stat(path, &st) != 0)
        return -1;
    const char *fmt[] = {"/sys/dev/block/%u:%u/queue/read_ahead_kb", "/sys/dev/block/%u:%u/../queue/read_ahead_kb"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), fmt[i], major(st.st_dev), minor(st.st_dev));
        FILE *f = fopen(path, "r");
        long long v = -1;
        if (f) {
            int ok = fscanf(f, "%lld", &v) == 1;
            fclose(f);
            if (ok)
                return v;
        }
    }
    return -1;
}

/* NAN too where the interval is too short to resolve it: /proc/stat counts
 * steal in ticks, and below 20 ticks of the machine's CPU time one tick is
 * over 5% (a 2 ms epoch on 2 CPUs that caught one tick read as 250%). */
double gnn_steal_share(double steal0, double dt)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
    double now = mb_host_steal_s();
    if (ncpu <= 0 || hz <= 0 || dt * (double)ncpu * (double)hz < 20)
        return NAN;
    return (now - steal0) / (dt * (double)ncpu);
}

/* TPC model for this system (gnn_tpc_predict_pipeline): Hyperion's
 * max(T_ssd, T_pcie, T_train) per batch plus the sampler's stage and the
 * CPU shared by every thread, inputs from the profiling run; nopipe adds
 * the stages up. With a profile file the storage rate is the profile's
 * per-SSD rate x the data files; otherwise everything is measured here. */
double gnn_trainer_predict(const struct gnn_trainer *t, const char **bound, struct gnn_prediction *pr)
{
    *bound = "n/a";
    memset(pr, 0, sizeof(*pr));
    if (!t->st.profiled || t->sys->feat == GNN_MMAP)
        return NAN;
    const struct gnn_header *h = &t->h;
    struct gnn_hw_profile p;
    memset(&p, 0, sizeof(p));
    struct gnn_profile f = t->st.prof;
    char err[256];
    if (t->cfg.hw_profile && gnn_profile_load(t->cfg.hw_profile, &p, err, sizeof(err)) == 0) {
        f.io_rate = p.ssd_bw * (double)(h->ndev ? h->ndev : 1);
    } else { /* this machine, its rates measured in the run */
        snprintf(p.name, sizeof(p.name), "this-machine");
        p.cls = 64;   /* the readers count transactions in 64 B units (struct gnn_read_stats) */
        p.ssds = 512; /* O_DIRECT's granularity: the readers' SSD unit */
        p.ssd_bw = f.io_rate / (h->ndev ? h->ndev : 1); /* measured, per data file */
        p.pcie_bw = isfinite(t->cfg.rates->memcpy_Bps) ? t->cfg.rates->memcpy_Bps : 0; /* measured host copy */
        /* the rest only prices the machine (TCO, TPC), never the time:
         * machine A's chassis price (profiles/hyperion-machine-a.txt) and a
         * unit SSD price, so TPC ranks Q here without a vendor quote */
        p.max_ssd = 64;
        p.n_gpu = 1;
        p.n_mac = 1;
        p.c_mac = 14098;
        p.c_ssd = 1;
    }
    p.n_ssd = (int)h->ndev;
    /* the machine's other ranks run the same pipeline on the same cores */
    int host_ranks = t->cfg.coll ? mb_coll_ctx_host_ranks(t->cfg.coll) : 1;
    gnn_tpc_predict_pipeline(&p, &f, gnn_cores_per_rank(gnn_usable_cores(), host_ranks), t->st.nslots, pr);
    *bound = gnn_bound_name(pr->bound);
    return pr->t_batch * (double)t->st.nbatches;
}
