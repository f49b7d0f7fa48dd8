/* gnn/'s trainer driven directly on a tiny generated dataset: the systems
 * table holds mb-gnn's systems in their order, builds the --system
 * choices and finds no unknown name; every system profiles, trains two
 * epochs with every element of every feature row verified, scores the
 * held-out nodes, and reads its misses again; all systems train on the
 * same batches (the same losses), the cached ones serve hits and the
 * others none, the engine systems are predicted and mmap's are not; a
 * feature row corrupted on storage fails the check (not an error). MPI
 * runs as a singleton (no mpirun). */
#include "check.h"
#include "../../gnn/gnn.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void test_table(void)
{
    /* the systems the paper compares, first and in this order; a row added
     * later joins the walk below with no change here */
    static const char *const names[] = {"inmem", "hyperion", "topo-first", "feat-first",
                                        "nopipe", "nocache",  "mmap",       "mmap-random"};
    size_t n = gnn_nsystems(), nn = sizeof(names) / sizeof(names[0]);
    EXPECT(n >= nn);
    for (size_t i = 0; i < nn && i < n; i++)
        EXPECT(!strcmp(gnn_system_at(i)->name, names[i]));
    char choices[1024], want[1024] = "";
    for (size_t i = 0; i < n; i++) {
        const struct gnn_system *s = gnn_system_at(i);
        EXPECT(gnn_system_find(s->name) == s); /* names unique: each finds its own row */
        EXPECT(s->upper_bound == (i == 0));    /* inmem alone, and first */
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", i ? "|" : "", s->name);
    }
    EXPECT(gnn_system_at(n) == NULL);
    EXPECT(gnn_system_find("hyperion2") == NULL);
    EXPECT(gnn_system_find("") == NULL);
    EXPECT(gnn_system_find(NULL) == NULL);
    gnn_system_choices(choices, sizeof(choices));
    EXPECT(!strcmp(choices, want));
    const char *paper = "inmem|hyperion|topo-first|feat-first|nopipe|nocache|mmap|mmap-random";
    EXPECT(!strncmp(choices, paper, strlen(paper)));
    EXPECT(!gnn_system_find("nopipe")->pipelined && gnn_system_find("nopipe")->cached);
    EXPECT(!gnn_system_find("nocache")->cached && gnn_system_find("nocache")->feat == GNN_AIO);
    EXPECT(gnn_system_find("topo-first")->placement == GNN_PLACE_TOPO_FIRST);
    EXPECT(gnn_system_find("mmap-random")->advice == GNN_ADVICE_RANDOM);
    EXPECT(gnn_system_find("mmap")->feat == GNN_MMAP && gnn_system_find("inmem")->feat == GNN_MEM);
}

static struct gnn_trainer_cfg small_cfg(const struct gnn_system *sys, int verify)
{
    struct gnn_trainer_cfg c = {.data = dir, .sys = sys, .batch = 64, .hidden = 32, .lr = 0.01f,
                                .cache_dev = 64 << 10, .cache_host = 192 << 10, .cache_fill = 1, .slots = 3,
                                .sub_threads = 2, .comp_threads = 2, .sample_instances = 2, .overlap = 1,
                                .eval_nodes = 200, .profile_batches = 4, .verify = verify, .seed = 1,
                                .comm = MPI_COMM_WORLD};
    EXPECT(gnn_parse_fanouts("5,5", &c.scfg) == 0);
    return c;
}

static void test_systems(void)
{
    double loss0 = NAN;
    for (size_t i = 0; i < gnn_nsystems(); i++) {
        const struct gnn_system *sys = gnn_system_at(i);
        struct gnn_trainer_cfg c = small_cfg(sys, 2);
        struct gnn_trainer *t;
        char err[512] = "";
        int rc = gnn_trainer_create(&c, &t, err, sizeof(err));
        if (rc)
            fprintf(stderr, "%s: %s\n", sys->name, err);
        EXPECT(rc == 0);
        if (rc) {
            gnn_trainer_destroy(t);
            continue;
        }
        int mmap = sys->feat == GNN_MMAP;
        EXPECT(gnn_trainer_profile(t) == (mmap ? 1 : 0));
        EXPECT(gnn_trainer_profile(t) == 1); /* once */
        if (!mmap) { /* the profile's progress line names the system and ends with the steal */
            char line[1024], want[64];
            gnn_trainer_profile_text(t, sys->name, line, sizeof(line));
            snprintf(want, sizeof(want), "profile %s: ", sys->name);
            EXPECT(!strncmp(line, want, strlen(want)) && !strchr(line, '\n'));
            EXPECT(strstr(line, " batches serial") && strstr(line, ", host steal "));
        }
        struct gnn_trainer_stats s;
        for (uint64_t e = 0; e < 2; e++) {
            double dt = -1;
            gnn_trainer_prepare(t, e);
            EXPECT(gnn_trainer_epoch(t, e, &dt) == 0);
            EXPECT(dt >= 0);
            EXPECT(gnn_trainer_read_misses(t) == 0);
            EXPECT(gnn_trainer_evaluate(t) == 0);
            EXPECT(!gnn_trainer_error(t));
            gnn_trainer_stats(t, &s);
            EXPECT(!s.failed);
            EXPECT(s.rs.feat_rows > 0 && s.rs.verified_rows == s.rs.feat_rows && !s.rs.verify_failures);
            EXPECT(isfinite(s.loss) && s.loss > 0);
            EXPECT(s.acc_train >= 0 && s.acc_train <= 1 && s.acc_val >= 0 && s.acc_val <= 1);
            EXPECT(s.epoch_s == dt);
            char msg[256] = "";
            EXPECT(gnn_trainer_check(t, msg, sizeof(msg)) == 0 && !msg[0]);
        }
        /* ~102 training nodes in batches of 64 */
        EXPECT(s.nbatches == 2);
        EXPECT(s.nslots == (sys->pipelined ? 3 : 1));
        EXPECT(s.overlap == (sys->pipelined && sys->feat == GNN_AIO));
        EXPECT(s.verify == 2);
        /* the same batches whatever the system: the same losses */
        if (i == 0)
            loss0 = s.loss;
        EXPECT_NEAR(s.loss, loss0, 1e-9 * loss0);
        uint64_t hits = s.rs.feat_dev_hits + s.rs.feat_host_hits;
        EXPECT((s.cache != NULL) == (sys->cached != 0));
        EXPECT(sys->cached ? hits > 0 : hits == 0);
        EXPECT(sys->feat == GNN_MEM ? s.rs.ssd_bytes == 0 : s.rs.ssd_bytes > 0);
        EXPECT(sys->feat == GNN_AIO ? s.miss_rate > 0 && s.miss_read_rows == s.rs.feat_misses : isnan(s.miss_rate));
        EXPECT(s.profiled == !mmap);
        EXPECT(!s.profiled || (s.prof.batches == 2 && s.prof_phases == (sys->pipelined ? 2 : 1)));
        const char *bound;
        struct gnn_prediction pr;
        double pred = gnn_trainer_predict(t, &bound, &pr);
        EXPECT(mmap ? isnan(pred) && !strcmp(bound, "n/a") : pred > 0 && strcmp(bound, "n/a") != 0);
        gnn_trainer_destroy(t);
    }
}

/* A row of the first training node overwritten on disk: the profiling
 * run (which reads every training node) fails its check, not with an error. */
static void test_corrupt(void)
{
    struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
    char err[512];
    struct gnn_dataset *ds = gnn_open(dir, &o, err, sizeof(err));
    EXPECT(ds != NULL);
    if (!ds)
        return;
    const struct gnn_header h = *gnn_dataset_header(ds);
    size_t ntr;
    uint64_t v = gnn_train_ids(ds, &ntr)[0];
    gnn_close(ds);
    /* one data file: the logical volume is the file */
    char path[128];
    snprintf(path, sizeof(path), "%s/data.0", dir);
    int fd = open(path, O_WRONLY);
    float *zero = calloc(1, h.row_bytes);
    EXPECT(fd >= 0 && zero);
    EXPECT(pwrite(fd, zero, h.row_bytes, (off_t)(h.off_feat + v * h.row_bytes)) == (ssize_t)h.row_bytes);
    close(fd);
    free(zero);
    struct gnn_trainer_cfg c = small_cfg(gnn_system_find("nocache"), 1);
    struct gnn_trainer *t;
    EXPECT(gnn_trainer_create(&c, &t, err, sizeof(err)) == 0);
    EXPECT(gnn_trainer_profile(t) == -1);
    EXPECT(!gnn_trainer_error(t));
    struct gnn_trainer_stats s;
    gnn_trainer_stats(t, &s);
    EXPECT(s.failed && strstr(s.fail_msg, "is wrong at element") != NULL);
    char msg[512] = "";
    EXPECT(gnn_trainer_check(t, msg, sizeof(msg)) == 1 && strstr(msg, "is wrong at element") != NULL);
    gnn_trainer_destroy(t);
}

/* docs/models.md's floor estimate and the steal's text, by hand */
static void test_floor(void)
{
    double miss = 0;
    EXPECT(gnn_floor_estimate(1, 2.5, NAN, 100, 50, &miss) == 2.5 && miss == 2); /* the upper bound: itself */
    EXPECT(gnn_floor_estimate(0, 9, NAN, 100, 50, &miss) == 2 && miss == 2);     /* no upper bound yet: reads */
    EXPECT(gnn_floor_estimate(0, 9, 3, 100, 50, &miss) == 3);                    /* the longer of the two */
    EXPECT(gnn_floor_estimate(0, 9, 1, 100, 50, &miss) == 2);
    EXPECT(isnan(gnn_floor_estimate(0, 9, NAN, 100, 0, &miss)) && isnan(miss)); /* no rate: unknown */
    EXPECT(gnn_floor_estimate(0, 9, 4, 100, NAN, &miss) == 4 && isnan(miss));
    char b[16];
    EXPECT(!strcmp(gnn_steal_text(b, sizeof(b), 0.0153), "1.5%"));
    EXPECT(!strcmp(gnn_steal_text(b, sizeof(b), NAN), "n/a"));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_table();
    test_floor();
    snprintf(dir, sizeof(dir), "/tmp/mb-gnn-trainer.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.scale = 10;
    p.classes = 4;
    p.train_frac = 0.1;
    p.ndev = 1;
    p.quiet = 1;
    char err[512];
    if (gnn_generate(dir, &p, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    test_systems();
    test_corrupt();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    MPI_Finalize();
    return TEST_EXIT();
}
