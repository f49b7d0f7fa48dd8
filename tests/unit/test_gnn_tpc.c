/* gnn/ TPC model: the paper's TCOs from the shipped profiles, Eq. 5
 * arithmetic and the bottleneck on hand-computed inputs, the optimiser
 * against a scan, and profile parse errors. Run from the repository root
 * (tests/run.sh does). */
#include "../../gnn/gnn.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_profiles(void)
{
    struct gnn_hw_profile a, b, c;
    char err[256];
    EXPECT(gnn_profile_load("profiles/hyperion-machine-a.txt", &a, err, sizeof(err)) == 0);
    EXPECT(gnn_profile_load("profiles/hyperion-machine-b.txt", &b, err, sizeof(err)) == 0);
    EXPECT(gnn_profile_load("profiles/hyperion-cluster-c.txt", &c, err, sizeof(err)) == 0);
    EXPECT_NEAR(gnn_tco(&a, a.n_ssd), 48971, 1e-6);
    EXPECT_NEAR(gnn_tco(&b, b.n_ssd), 78794, 1e-6);
    EXPECT_NEAR(gnn_tco(&c, c.n_ssd), 45275.0 * 8, 1e-6);
    EXPECT(!strcmp(a.name, "hyperion-machine-a") && a.cls == 64 && a.ssds == 512 && a.max_ssd == 16);
    /* Eq. 2 check from the notes: 12 SSDs x 7.5e5 IOPS x 6.5 us = 58.5 threads */
    EXPECT_NEAR(12 * (a.ssd_bw / 4096) * 6.5e-6, 58.5, 1e-9);
}

static void test_predict(void)
{
    struct gnn_hw_profile p;
    memset(&p, 0, sizeof(p));
    p.ssd_bw = 64e6;   /* 1e6 transactions/s per SSD */
    p.pcie_bw = 6.4e9; /* 1e8 transactions/s */
    p.cls = 64;
    p.ssds = 512;
    p.max_ssd = 12;
    p.n_gpu = 1;
    p.n_mac = 1;
    p.c_mac = 1000;
    p.c_gpu = 2000;
    p.c_ssd = 100;
    p.c_ele = 500;
    struct gnn_workload w = {.batch_size = 8000, .n_ssd_tx = 1e6, .n_mem_tx = 1e6, .alpha = 0.01, .t_train = 0.05};
    struct gnn_prediction r;
    gnn_tpc_predict(&p, &w, 4, &r);
    EXPECT_NEAR(r.t_ssd, 0.26, 1e-12);
    EXPECT_NEAR(r.t_pcie, 0.02, 1e-12);
    EXPECT(r.bound == GNN_BOUND_SSD && !strcmp(gnn_bound_name(r.bound), "ssd"));
    EXPECT_NEAR(r.t_batch, 0.26, 1e-12);
    EXPECT_NEAR(r.cost, 3900, 1e-9);
    EXPECT_NEAR(r.throughput, 8000 / 0.26, 1e-6);
    EXPECT_NEAR(r.tpc, 8000 / 0.26 / 3900, 1e-9);
    /* many SSDs: training bound */
    gnn_tpc_predict(&p, &w, 100, &r);
    EXPECT(r.bound == GNN_BOUND_TRAIN && r.t_batch == 0.05);
    /* a slow link: PCIe bound */
    p.pcie_bw = 6.4e7;
    gnn_tpc_predict(&p, &w, 12, &r);
    EXPECT(r.bound == GNN_BOUND_PCIE && r.t_pcie == 2.0);
    p.pcie_bw = 6.4e9;

    /* optimiser = best of a scan under the budget */
    struct gnn_prediction best;
    EXPECT(gnn_tpc_optimise(&p, &w, 0, &best) == 0);
    double tb = 0;
    int qb = 0;
    for (int q = 1; q <= 12; q++) {
        gnn_tpc_predict(&p, &w, q, &r);
        if (r.tpc > tb)
            tb = r.tpc, qb = q;
    }
    EXPECT(best.q == qb && best.tpc == tb);
    /* the SSD time stops mattering once T_train dominates: 1e6/(1e6 Q) + .01 <= .05 at Q >= 25 (beyond 12) */
    EXPECT(qb == 12);
    EXPECT(gnn_tpc_optimise(&p, &w, 3500 + 100 * 5, &best) == 0 && best.q == 5);
    EXPECT(gnn_tpc_optimise(&p, &w, 3550, &best) == -1);
}

/* The pipelined model's terms, by hand. */
static void test_pipeline(void)
{
    /* MVA: 1 customer = the sum; 2 customers over demands 1 and 2:
     * R = (1*4/3, 2*5/3), X = 2/(14/3) -> period 7/3; many -> the max */
    const double d[2] = {1, 2};
    EXPECT_NEAR(gnn_mva_period(d, 2, 0, 1), 3, 1e-12);
    EXPECT_NEAR(gnn_mva_period(d, 2, 0, 2), 7.0 / 3, 1e-12);
    EXPECT_NEAR(gnn_mva_period(d, 2, 0, 200), 2, 1e-3);
    /* a delay adds to one customer's cycle and queues nowhere: 2 customers,
     * delay 1: X = 1/4 after one, R = (1*(1+X), 2*(1+2X)) plus 1 -> period
     * 2/X(2) = (1*(1+1/4) + 2*(1+2/4) + 1)/2; many -> still max(d) */
    EXPECT_NEAR(gnn_mva_period(d, 2, 0.5, 1), 3.5, 1e-12);
    EXPECT_NEAR(gnn_mva_period(d, 2, 1, 2), (1 * (1 + 1 / 4.0) + 2 * (1 + 2 / 4.0) + 1) / 2, 1e-12);
    EXPECT_NEAR(gnn_mva_period(d, 2, 0.5, 400), 2, 1e-3);

    /* PCIe 6.4 GB/s = 1e8 transactions/s of 64 B */
    struct gnn_hw_profile p = {.cls = 64, .pcie_bw = 6.4e9, .n_ssd = 2, .n_gpu = 1, .n_mac = 1, .c_mac = 1000, .c_ssd = 100};
    /* lookup 1 ms of CPU, training 2 ms, the completion waits 0.5 ms for
     * storage (no CPU), 2 cores */
    struct gnn_profile f;
    memset(&f, 0, sizeof(f));
    f.batch_size = 64;
    f.t_lookup = f.cpu_lookup = 1e-3;
    f.t_train = f.cpu_train = 2e-3;
    f.t_complete = f.io_complete = 0.5e-3;
    f.ssd_bytes = 1e5;
    f.io_rate = 1e9;   /* T_ssd = 0.1 ms */
    f.mem_tx = 1e4;    /* T_pcie = 0.1 ms */
    struct gnn_prediction r;
    /* nopipe: the stages add up */
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 3.5e-3, 1e-12);
    EXPECT(r.bound == GNN_BOUND_SERIAL && !strcmp(gnn_bound_name(r.bound), "serial"));
    EXPECT_NEAR(r.t_ssd, 1e-4, 1e-15);
    EXPECT_NEAR(r.t_pcie, 1e-4, 1e-15);
    EXPECT_NEAR(r.t_cpu, 1.5e-3, 1e-15);
    EXPECT_NEAR(r.cost, 1200, 1e-9);
    EXPECT_NEAR(r.throughput, 64 / 3.5e-3, 1e-6);
    /* nopipe comes from the model's terms, not the stage walls: a lookup
     * wall of 5 ms (the thread preempted) changes nothing; a device slower
     * than the waits (T_ssd = 1 ms > io 0.5 ms) sets the storage station:
     * 0 + 1 + 1 + 0 + 2 = 4 ms; CPU over the cores never below T_cpu:
     * 20 ms of engine CPU on 2 cores -> (3 + 20) / 2 = 11.5 ms */
    f.t_lookup = 5e-3;
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 3.5e-3, 1e-12);
    f.t_lookup = 1e-3;
    f.io_rate = 1e8;
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 4e-3, 1e-12);
    f.io_rate = 1e9;
    f.cpu_other = 20e-3;
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 11.5e-3, 1e-12);
    f.cpu_other = 0;
    /* the sampler's reads join the storage station, its CPU stays its own:
     * 0.3 ms CPU + 0.2 ms of waits -> io = 0.7 ms: 0.3 + 1 + 0.7 + 2 = 4 ms */
    f.cpu_sample = 0.3e-3;
    f.io_sample = 0.2e-3;
    gnn_tpc_predict_pipeline(&p, &f, 1000, 1, &r);
    EXPECT_NEAR(r.t_batch, 4e-3, 1e-12);
    EXPECT_NEAR(r.t_sample, 0.3e-3, 1e-15);
    f.cpu_sample = f.io_sample = 0;
    /* a thread gets half a core (other processes): every CPU demand
     * doubles, the storage waits do not: 2 + 0.5 + 4 = 6.5 ms; T_cpu =
     * (3 ms / 0.5) / 2 cores = 3 ms */
    f.cpu_share = 0.5;
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 6.5e-3, 1e-12);
    EXPECT_NEAR(r.t_cpu, 3e-3, 1e-12);
    EXPECT_NEAR(r.t_train, 4e-3, 1e-15);
    f.cpu_share = 0;
    /* a synchronised allreduce of 0.7 ms joins the training station, in
     * wall time, and no CPU term: 3.5 + 0.7 = 4.2 ms; T_cpu unchanged */
    f.allreduce_s = 0.7e-3;
    gnn_tpc_predict_pipeline(&p, &f, 2, 1, &r);
    EXPECT_NEAR(r.t_batch, 4.2e-3, 1e-12);
    EXPECT_NEAR(r.t_train, 2.7e-3, 1e-15);
    EXPECT_NEAR(r.t_cpu, 1.5e-3, 1e-15);
    /* pipelined, cores to spare: the MVA over the same stations with
     * training at 2 + 0.7 ms (the fixed point's sampler term at its X) */
    gnn_tpc_predict_pipeline(&p, &f, 1000000, 2, &r);
    {
        double x = 1 / r.t_pipe, dd[5] = {x * 1e-4 * 1e-4 / 2, 1e-4, 1e-3, 0, 2.7e-3};
        EXPECT_NEAR(r.t_pipe, gnn_mva_period(dd, 5, 0.4e-3, 2), 1e-9);
        EXPECT_NEAR(r.t_train, 2.7e-3, 1e-15);
    }
    f.allreduce_s = 0;
    /* two slots, cores to spare (no stretch). The 0.5 ms storage wait is
     * 0.1 ms of device occupancy (T_ssd), which queues, and 0.4 ms of
     * latency, a delay; MVA over demands 0.1 (storage), 1, 2 ms and the
     * sampler's wait behind the feature reads in service, one hop:
     * X*0.1ms * 0.1ms/2; fixed point T = 2.46631 ms (by bisection) */
    f.hops = 1;
    gnn_tpc_predict_pipeline(&p, &f, 1000000, 2, &r);
    EXPECT_NEAR(r.t_batch, 2.4663142e-3, 1e-8);
    const double d4[4] = {0.1e-3 * 0.1e-3 / 2.4663142e-3 / 2, 0.1e-3, 1e-3, 2e-3};
    EXPECT_NEAR(r.t_batch, gnn_mva_period(d4, 4, 0.4e-3, 2), 1e-8);
    EXPECT(r.bound == GNN_BOUND_TRAIN);
    /* a device slower than the waits (T_ssd 1 ms >= 0.5 ms): all of the
     * wait holds it and none is latency; T = 2.51470 ms (by bisection) */
    f.io_rate = 1e8;
    gnn_tpc_predict_pipeline(&p, &f, 1000000, 2, &r);
    EXPECT_NEAR(r.t_batch, 2.5146994e-3, 1e-8);
    const double d4s[4] = {0.5e-3 * 0.5e-3 / 2.5146994e-3 / 2, 0.5e-3, 1e-3, 2e-3};
    EXPECT_NEAR(r.t_batch, gnn_mva_period(d4s, 4, 0, 2), 1e-8);
    f.io_rate = 1e9;
    /* two cores: lookup stretched by 1/(1 - (X*2ms/2)^2), training by
     * 1/(1 - (X*1ms/2)^2): T = 2.63123 ms (by bisection) */
    gnn_tpc_predict_pipeline(&p, &f, 2, 2, &r);
    EXPECT_NEAR(r.t_batch, 2.6312321e-3, 1e-8);
    EXPECT_NEAR(r.t_train, 2e-3 / (1 - pow(0.5e-3 / 2.6312321e-3, 2)), 1e-8);
    /* the storage station is the profile's measured waits (io_*), not the
     * completion's wall: without them the period is the CPU stations' */
    f.io_complete = 0;
    gnn_tpc_predict_pipeline(&p, &f, 1000000, 2, &r);
    const double d3[3] = {1e-3, 2e-3, 0};
    EXPECT_NEAR(r.t_batch, gnn_mva_period(d3, 3, 0, 2), 1e-12);
    f.io_complete = 0.5e-3;
    /* one core: processor sharing, 1/(1 - X*(others' CPU)) */
    gnn_tpc_predict_pipeline(&p, &f, 1, 2, &r);
    EXPECT(r.t_batch >= 3e-3 - 1e-12); /* at least all the CPU on one core */
    EXPECT_NEAR(r.t_train, 2e-3 / (1 - 1e-3 / r.t_pipe), 1e-7);
    /* the fixed point: t = MVA over the stretched demands at 1/t */
    {
        double x = 1 / r.t_pipe, dd[5] = {x * 1e-4 * 1e-4 / 2, 1e-4, 1e-3 / (1 - x * 2e-3), 0, 2e-3 / (1 - x * 1e-3)};
        EXPECT_NEAR(r.t_pipe, gnn_mva_period(dd, 5, 0.4e-3, 2), 1e-9);
    }
    /* storage-bound: T_ssd = 10 ms beats the pipeline */
    f.io_rate = 1e7;
    gnn_tpc_predict_pipeline(&p, &f, 2, 2, &r);
    EXPECT(r.bound == GNN_BOUND_SSD && fabs(r.t_batch - 1e-2) < 1e-12);
    /* CPU-bound: 20 ms of engine CPU over 2 cores */
    f.io_rate = 1e9;
    f.cpu_other = 20e-3;
    gnn_tpc_predict_pipeline(&p, &f, 2, 2, &r);
    EXPECT_NEAR(r.t_cpu, 11.5e-3, 1e-12);
    EXPECT(r.t_batch >= r.t_cpu && r.t_batch >= r.t_pipe - 1e-12);
}

/* The machine's ranks share its cores: cores / ranks, rounded down, at least 1. */
static void test_cores_per_rank(void)
{
    EXPECT(gnn_cores_per_rank(2, 1) == 2);
    EXPECT(gnn_cores_per_rank(2, 2) == 1);
    EXPECT(gnn_cores_per_rank(2, 3) == 1);
    EXPECT(gnn_cores_per_rank(16, 3) == 5);
    EXPECT(gnn_cores_per_rank(16, 0) == 16);
    EXPECT(gnn_cores_per_rank(0, 2) == 1);
}

static void test_parse_errors(void)
{
    char path[] = "/tmp/mb-gnn-prof.XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    /* a whole profile, then each fault on it */
    const char *good = "ssd_bw = 1e9\npcie_bw = 2e9\ncls = 64\nssds = 512\nmax_ssd = 4\nn_ssd = 2\nn_gpu = 1\n"
                       "n_mac = 1\nc_mac = 1000\nc_gpu = 0\nc_ssd = 100\nc_ele = 50\n";
    /* each fault: a line of the whole profile dropped (-1: none) and one appended (line 12 or 13) */
    const struct {
        int drop;
        const char *line, *want;
    } bad[] = {{1, "pcie_bw = fast\n", ":12: pcie_bw: not a number"},
               {-1, "warp = 3\n", ":13: unknown key warp"},
               {-1, "ssd_bw 1e9\n", ":13: expected key = value"},
               {1, "", ": missing key pcie_bw"},
               {11, "", ": missing key c_ele"},
               {2, "cls = 64.5\n", ":12: cls: must be a positive integer"},
               {10, "c_ssd = -1\n", ":12: c_ssd: must be a number"},
               {0, "ssd_bw = 0\n", ":12: ssd_bw: must be a positive number"},
               {0, "ssd_bw = nan\n", ":12: ssd_bw: not a number"},
               {-1, "n_ssd = 2\n", ":13: n_ssd given twice"}};
    {
        FILE *f = fopen(path, "w");
        fputs(good, f);
        fclose(f);
        struct gnn_hw_profile p;
        char err[512] = "";
        EXPECT(gnn_profile_load(path, &p, err, sizeof(err)) == 0);
        EXPECT(p.n_ssd == 2 && p.c_gpu == 0 && p.ssd_bw == 1e9 && !strcmp(p.name, path));
        EXPECT_NEAR(gnn_tco(&p, 2), 1250, 1e-9);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        const char *l = good;
        for (int n = 0; *l; n++) {
            const char *e = strchr(l, '\n') + 1;
            if (n != bad[i].drop)
                fwrite(l, 1, (size_t)(e - l), f);
            l = e;
        }
        fputs(bad[i].line, f);
        fclose(f);
        struct gnn_hw_profile p;
        char err[512] = "";
        EXPECT(gnn_profile_load(path, &p, err, sizeof(err)) == -1);
        EXPECT(strstr(err, bad[i].want) != NULL && strstr(err, path) != NULL && !strchr(err, '\n'));
        if (!strstr(err, bad[i].want))
            fprintf(stderr, "case %zu: %s\n", i, err);
    }
    struct gnn_hw_profile p;
    char err[512];
    EXPECT(gnn_profile_load("/nonexistent/x.txt", &p, err, sizeof(err)) == -1 && strstr(err, "/nonexistent/x.txt"));
    close(fd);
    unlink(path);
}

int main(void)
{
    test_cores_per_rank();
    test_profiles();
    test_predict();
    test_pipeline();
    test_parse_errors();
    return TEST_EXIT();
}
