/* mb-gnn: out-of-core GraphSAGE training (Hyperion, ICDE'25) on an R-MAT
 * graph whose topology and features live on storage, under a memory
 * budget, with Hyperion's system and its baselines side by side:
 *   inmem       everything loaded into memory (the upper bound; runs
 *               outside the budget)
 *   hyperion    offload/aio engine + presampled unified static cache
 *               (Hyperion's placement) + pipeline
 *   topo-first, feat-first   the same with another cache placement
 *   nopipe      hyperion with the stages serialised (one batch in flight)
 *   nocache     the engine and pipeline, nothing cached
 *   mmap        topology and features through the page cache (PyG/Ginex)
 *   mmap-random the same with madvise(MADV_RANDOM): each fault reads one
 *               page instead of read_ahead_kb around it (a stronger
 *               baseline where read-ahead is large)
 * One timed iteration is one epoch. Every feature row read is verified
 * against the generator (gnn_verify_row) unless --no-check; a wrong row
 * fails the run. `mb-gnn --generate` writes a dataset instead.
 * The systems, the pipeline and the profiling run are gnn/'s (a row of its
 * systems table and a trainer each); this is options, set-up, callbacks
 * and reporting. */
#include "harness/harness.h"
#include "../gnn/gnn.h"
#include "../offload/aio.h"

#include <cblas.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int generate;
    long long scale, edge_factor, dim, classes, files, gen_threads;
    double train_frac, signal;
    char *data;
    unsigned systems;
    long long epoch_batches, train_threads;
    long long batch, hidden, sub_threads, comp_threads, slots, io_threads, eval_nodes, sample_inst, stage_nice;
    char *fanout;
    double lr;
    size_t mem_budget, cache_dev, cache_host, stripe;
    int budget_how, cache_fill, overlap;
    char *profile, *allreduce, *model_set;
    long long profile_batches;
} opt;

static struct mb_opt gnn_opts[] = {
    {"generate", 0, MB_OPT_FLAG, &opt.generate, NULL, NULL, 0, 0,
     "write a dataset into --data (R-MAT, Graph500 parameters) instead of training", NULL},
    {"scale", 0, MB_OPT_INT, &opt.scale, "14", NULL, 4, 31, "generate: 2^SCALE vertices", "SCALE"},
    {"edge-factor", 0, MB_OPT_INT, &opt.edge_factor, "16", NULL, 1, 1024, "generate: edge tuples per vertex", "N"},
    {"feat-dim", 0, MB_OPT_INT, &opt.dim, "128", NULL, 128, 4096, "generate: feature dimension (multiple of 128)", "D"},
    {"classes", 0, MB_OPT_INT, &opt.classes, "16", NULL, 2, 1024, "generate: label classes", "C"},
    {"train-frac", 0, MB_OPT_DOUBLE, &opt.train_frac, "0.01", NULL, 1e-6, 0.9, "generate: fraction of training nodes", "F"},
    {"signal", 0, MB_OPT_DOUBLE, &opt.signal, "0", NULL, 0, 8,
     "generate: class-centroid amplitude beside noise in [-1,1) (0 = 4 / sqrt(3 dim): SNR 4 per node)", "S"},
    {"files", 0, MB_OPT_INT, &opt.files, "1", NULL, 1, 64, "generate: data files striped together (stand-in SSDs)", "N"},
    {"stripe", 0, MB_OPT_SIZE, &opt.stripe, "64K", NULL, 4096, 1 << 30, "generate: stripe unit", "SIZE"},
    {"gen-threads", 0, MB_OPT_INT, &opt.gen_threads, "0", NULL, 0, 256, "generate: threads (0 = all)", "N"},
    {"data", 0, MB_OPT_STR, &opt.data, "build/gnn-data", NULL, 0, 0, "dataset folder", "DIR"},
    {"system", 0, MB_OPT_LIST, &opt.systems, "inmem,hyperion,nopipe,mmap", NULL /* from gnn/'s systems table */, 0,
     0, "systems to train with, side by side", "LIST"},
    {"batch", 0, MB_OPT_INT, &opt.batch, "1024", NULL, 1, 1 << 20, "seeds per mini-batch (per rank)", "N"},
    {"fanout", 0, MB_OPT_STR, &opt.fanout, "25,10", NULL, 0, 0,
     "fan-outs, PyG order: the first is the hop next to the seeds", "LIST"},
    {"hidden", 0, MB_OPT_INT, &opt.hidden, "256", NULL, 1, 8192, "hidden size of the GraphSAGE layers", "H"},
    {"lr", 0, MB_OPT_DOUBLE, &opt.lr, "0.003", NULL, 1e-6, 1, "Adam learning rate", "LR"},
    {"mem-budget", 0, MB_OPT_SIZE, &opt.mem_budget, "0", NULL, 0, 1e15,
     "memory the run may use, page cache included (0 = unlimited); inmem runs outside it", "SIZE"},
    {"budget-method", 0, MB_OPT_CHOICE, &opt.budget_how, "auto", "auto|cgroup|mlock|none", 0, 0,
     "how the budget is enforced: a memory cgroup, else mlock of the rest (auto)", "M"},
    {"cache-dev", 0, MB_OPT_SIZE, &opt.cache_dev, "0", NULL, 0, 1e15,
     "\"device\" cache tier bytes (host memory standing for GPU memory)", "SIZE"},
    {"cache-host", 0, MB_OPT_SIZE, &opt.cache_host, "16M", NULL, 0, 1e15, "host cache tier bytes", "SIZE"},
    {"cache-fill", 0, MB_OPT_CHOICE, &opt.cache_fill, "degree", "degree|none", 0, 0,
     "capacity the placed chunks leave: filled with the other items, never-presampled nodes by degree "
     "(degree), or left empty (none)", "F"},
    {"sub-threads", 0, MB_OPT_INT, &opt.sub_threads, "1", NULL, 1, GNN_MAX_TEAM,
     "threads submitting a batch's reads (cache lookups + engine submission)", "N"},
    {"comp-threads", 0, MB_OPT_INT, &opt.comp_threads, "1", NULL, 1, GNN_MAX_TEAM,
     "threads completing a batch's reads (wait, copy, verify)", "N"},
    {"overlap", 0, MB_OPT_CHOICE, &opt.overlap, "yes", "yes|no", 0, 0,
     "intra-batch overlap (pipelined storage systems): the features of the nodes known after hop h are read "
     "while hop h+1 samples (nopipe never overlaps)", "Y"},
    {"stage-nice", 0, MB_OPT_INT, &opt.stage_nice, "0", NULL, 0, 19,
     "nice value of the pipeline's stage threads (training keeps 0): on shared cores the training step, "
     "the critical path, gets the larger CPU share", "N"},
    {"sample-instances", 0, MB_OPT_INT, &opt.sample_inst, "2", NULL, 1, 16,
     "batches sampled at once (each instance its own thread; sampling mostly waits for topology reads)", "N"},
    {"slots", 0, MB_OPT_INT, &opt.slots, "3", NULL, 2, 16, "batches in flight in the pipeline (nopipe: 1)", "N"},
    {"io-threads", 0, MB_OPT_INT, &opt.io_threads, "0", NULL, 0, 64, "engine I/O threads (0: engine's rule)", "N"},
    {"train-threads", 0, MB_OPT_INT, &opt.train_threads, "1", NULL, 1, 1024,
     "threads of the training step (OpenMP and OpenBLAS); the pipeline's stage threads run their own "
     "work single-threaded, so cores are partitioned as Hyperion partitions SMs", "N"},
    {"epoch-batches", 0, MB_OPT_INT, &opt.epoch_batches, "0", NULL, 0, 1 << 30,
     "batches per epoch and rank (0 = all the training nodes); the same for every system", "N"},
    {"eval-nodes", 0, MB_OPT_INT, &opt.eval_nodes, "2000", NULL, 0, 1 << 30,
     "held-out (validation) nodes scored after every epoch", "N"},
    {"profile", 0, MB_OPT_STR, &opt.profile, NULL, NULL, 0, 0,
     "TPC model hardware profile file (default: this machine, calibrated in the run)", "FILE"},
    {"model-set", 0, MB_OPT_STR, &opt.model_set, "unlabelled", NULL, 0, 0,
     "this configuration's place in a model study (docs/models.md), recorded as model_point_set: calibration, "
     "heldout or unlabelled", "SET"},
    {"allreduce", 0, MB_OPT_STR, &opt.allreduce, "mpi", NULL, 0, 0, "collectives algorithm for the gradients", "ALGO"},
    {"profile-batches", 0, MB_OPT_INT, &opt.profile_batches, "120", NULL, 1, 1 << 20,
     "batches per phase of the TPC model's profiling run (serial, then through the pipeline; untimed, before the first epoch; at most a whole pass over the training nodes; Hyperion profiles ~10)",
     "N"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"system", "dataset", NULL};

static char system_choices[256];   /* --system's, from the systems table */
static struct gnn_trainer_cfg tcfg; /* every system's trainer, from the options */
static struct gnn_header hdr;        /* of --data (training) */
static struct gnn_budget budget;
static char *budget_ranks; /* rank 0: each rank's host and budget, "; "-separated */
static int precheck = 1; /* the budget's check before any work (MB_GNN_BUDGET_PRECHECK=0: off, tests) */
static struct mb_coll_ctx *coll;
static int model_cores_per_rank; /* the TPC model's cores for one rank (gnn_cores_per_rank), set in plan */
static char ds_label[96];
static struct gnn_rates rates = {NAN, NAN}; /* measured once per run */
static double inmem_epoch_s = NAN;   /* median of the upper bound's case, for the bound */

static int validate(struct mb_run *run)
{
    int r0 = run->rank == 0;
#define BAD(...) do { if (r0) mb_warn(__VA_ARGS__); return MB_EXIT_USAGE; } while (0)
    if (opt.generate) {
        if (opt.dim % GNN_DIM_ALIGN)
            BAD("--feat-dim: %lld is not a multiple of %d", opt.dim, GNN_DIM_ALIGN);
        if (opt.stripe % 4096)
            BAD("--stripe: must be a multiple of 4096");
        run->common.iters = 1;
        run->common.warmup = 0;
        return 0;
    }
    struct gnn_sampler_cfg scfg = {0}; /* seed 0: the sampler's key, as in every reference result */
    if (gnn_parse_fanouts(opt.fanout, &scfg) != 0)
        BAD("--fanout: '%s' is not a list of 1..%d positive fan-outs", opt.fanout, GNN_MAX_HOPS);
    if (scfg.hops > GNN_MAX_LAYERS)
        BAD("--fanout: at most %d hops", GNN_MAX_LAYERS);
    if (!opt.systems)
        BAD("--system: empty list");
    if (run->common.device != MB_DEV_HOST)
        BAD("-d/--device: mb-gnn runs on the host (the \"device\" cache tier is host memory; accepts host)");
    char err[512];
    struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
    struct gnn_dataset *ds = gnn_open(opt.data, &o, err, sizeof(err));
    if (!ds)
        BAD("--data: %s", err);
    hdr = *gnn_dataset_header(ds);
    gnn_close(ds);
    const struct mb_coll_algo *algo = mb_coll_find(opt.allreduce);
    if (!algo)
        BAD("--allreduce: unknown algorithm '%s'", opt.allreduce);
    if (strcmp(opt.model_set, "calibration") && strcmp(opt.model_set, "heldout") && strcmp(opt.model_set, "unlabelled"))
        BAD("--model-set: '%s' is not one of calibration, heldout, unlabelled", opt.model_set);
    if (opt.profile) {
        struct gnn_hw_profile p;
        if (gnn_profile_load(opt.profile, &p, err, sizeof(err)) != 0)
            BAD("--profile: %s", err);
    }
    if (opt.mem_budget && opt.cache_dev + opt.cache_host >= opt.mem_budget)
        BAD("--cache-dev/--cache-host: the caches (%zu B) must leave room in --mem-budget (%zu B)",
            opt.cache_dev + opt.cache_host, opt.mem_budget);
    /* every system's trainer (setup adds the system and the run's own) */
    tcfg = (struct gnn_trainer_cfg){
        .data = opt.data, .header = &hdr, .scfg = scfg, .fanout_text = opt.fanout, .batch = (size_t)opt.batch,
        .hidden = (int)opt.hidden, .lr = (float)opt.lr, .cache_dev = opt.cache_dev, .cache_host = opt.cache_host,
        .cache_fill = opt.cache_fill == 0 /* degree */, .slots = (int)opt.slots, .sub_threads = (int)opt.sub_threads,
        .comp_threads = (int)opt.comp_threads, .sample_instances = (int)opt.sample_inst,
        .io_threads = (int)opt.io_threads, .stage_nice = (int)opt.stage_nice, .overlap = opt.overlap == 0 /* yes */,
        .epoch_batches = (long)opt.epoch_batches, .eval_nodes = (long)opt.eval_nodes,
        .profile_batches = (long)opt.profile_batches, .algo = algo, .budget = &budget, .rates = &rates,
        .hw_profile = opt.profile};
    /* every budgeted system must fit before any work: the cgroup would
     * kill it otherwise (the upper bound runs outside the budget) */
    const char *pre = getenv("MB_GNN_BUDGET_PRECHECK"); /* "0": tests of a limit hit mid-run */
    precheck = !(pre && !strcmp(pre, "0"));
    /* sized from the largest presampled batch (the topology alone is
     * read): where presampling fails, setup fails naming it */
    char msg[1200];
    int rc = precheck && opt.mem_budget && opt.budget_how != MB_BUDGET_NONE
                 ? gnn_plan_check(&tcfg, &hdr, opt.systems, opt.mem_budget, &tcfg.pre_rows, msg, sizeof(msg))
                 : 0;
    if (rc < 0)
        precheck = 0;
    if (rc > 0)
        BAD("%s", msg);
    snprintf(ds_label, sizeof(ds_label), "rmat%d-ef%d-d%d-f%u", hdr.scale, hdr.edge_factor, hdr.dim, hdr.ndev);
    return 0;
#undef BAD
}

static void config(struct mb_run *run, struct mb_kvlist *c)
{
    mb_kv_str(c, "fanout_order", "PyG: the first fan-out is the hop next to the seeds; layer 0 consumes the outermost hop");
    if (opt.generate)
        return;
    mb_kv_int(c, "n", (long long)hdr.n);
    mb_kv_int(c, "m", (long long)hdr.m);
    mb_kv_int(c, "dim", hdr.dim);
    mb_kv_int(c, "classes", hdr.classes);
    mb_kv_int(c, "n_train", (long long)hdr.n_train);
    mb_kv_int(c, "n_val", (long long)hdr.n_val);
    mb_kv_int(c, "ndev", hdr.ndev);
    mb_kv_int(c, "feature_bytes", (long long)gnn_feature_bytes(&hdr));
    mb_kv_int(c, "topology_bytes", (long long)gnn_topology_bytes(&hdr));
    mb_kv_str(c, "epoch_time", "one timed iteration = one epoch over this rank's share of the training nodes");
    mb_kv_int(c, "budget_bytes", (long long)opt.mem_budget);
    mb_kv_int(c, "read_ahead_kb", gnn_read_ahead_kb(opt.data));
    mb_kv_int(c, "model_cores", gnn_usable_cores());
    mb_kv_int(c, "model_cores_per_rank", model_cores_per_rank);
    mb_kv_str(c, "budget_method", budget.on ? budget.b.method : "none");
    mb_kv_str(c, "budget_detail", budget.on ? budget.b.detail : "no --mem-budget given");
    mb_kv_str(c, "budget_ranks", budget_ranks ? budget_ranks : "no budget enforced");
    static const char *const how[] = {"auto", "cgroup", "mlock", "none"};
    mb_kv_str(c, "budget_method_requested", how[opt.budget_how]);
    mb_kv_str(c, "budget_precheck", !opt.mem_budget ? "n/a" : precheck ? "every budgeted system's need checked before any work"
                                                                        : "skipped (MB_GNN_BUDGET_PRECHECK=0)");
    mb_kv_str(c, "budget_scope", "every system but inmem (the in-memory upper bound runs outside the budget)");
    mb_kv_str(c, "budget_inmem", gnn_budget_inmem_text(&budget));
    mb_kv_str(c, "model", gnn_tpc_model_text);
    mb_kv_str(c, "model_profile", opt.profile ? opt.profile : "this-machine (calibrated by this run's profiling run)");
    mb_kv_str(c, "model_point_set", opt.model_set);
    mb_kv_str(c, "floor_estimate", gnn_floor_estimate_text);
    (void)run;
}

/* ---- plan ------------------------------------------------------------- */

static struct mb_case *cases;

/* Before MPI_Finalize (MPI still usable): the collectives context goes,
 * the ranks leave the budget's cgroup, its owner removes it. */
static void at_finalize(void *arg)
{
    (void)arg;
    if (coll)
        mb_coll_ctx_free(coll);
    coll = NULL;
    gnn_budget_release(&budget);
}

static int plan(struct mb_run *run)
{
    cases = calloc(gnn_nsystems() + 1, sizeof(*cases));
    run->cases = cases;
    if (!cases) {
        mb_warn("out of memory for the cases");
        return -1;
    }
    /* however the run ends: a generate's temporary files, the budget's cgroup */
    if (mb_cleanup_add(gnn_cleanup_signal_safe, &budget) != 0 || mb_finalize_add(at_finalize, NULL) != 0) {
        mb_warn("no room for the clean-up hooks");
        return -1;
    }
    if (opt.generate) {
        struct mb_case *c = &cases[run->ncases++];
        snprintf(c->name, sizeof(c->name), "generate/rmat%lld-ef%lld-d%lld-f%lld", opt.scale, opt.edge_factor, opt.dim,
                 opt.files);
        snprintf(c->group, sizeof(c->group), "generate (time = reopening with every checksum; generate_s in /metrics)");
        c->labels[0] = "generate";
        c->labels[1] = c->name + 9;
        c->count = 1ull << opt.scale;
        return 0;
    }
    omp_set_num_threads((int)opt.train_threads); /* the training step (main thread) */
    openblas_set_num_threads((int)opt.train_threads);
    /* the host copy rate's 128 MiB of buffers, once, outside the budget:
     * a measurement of the machine, not the run's working set */
    if (gnn_measure_memcpy(&rates, hdr.row_bytes) != 0) {
        mb_warn("the host copy rate: out of memory for 128 MiB of buffers");
        return -1;
    }
    if (gnn_budget_enforce(&budget, run->comm, opt.mem_budget, (enum mb_budget_how)opt.budget_how) != 0)
        return -1;
    if (budget.on)
        budget_ranks = gnn_budget_ranks(&budget, run->comm);
    char err[256];
    if (run->nranks > 1) {
        coll = mb_coll_ctx_create(run->comm, 0, err, sizeof(err));
        if (!coll) {
            mb_warn("collectives: %s", err);
            return -1;
        }
        if (!mb_coll_usable(tcfg.algo, coll, MB_COLL_ALLREDUCE, err, sizeof(err))) {
            if (run->rank == 0)
                mb_warn("--allreduce: %s", err);
            return -1;
        }
    }
    model_cores_per_rank = gnn_cores_per_rank(gnn_usable_cores(), coll ? mb_coll_ctx_host_ranks(coll) : 1);
    run->emulation = "stand-ins: each data file stands for one NVMe SSD (striped RAID0 by offload/aio); host "
                     "memory stands for GPU memory (the \"device\" cache tier and the training buffers); the "
                     "host-tier copies stand for PCIe transfers; training runs on the CPU (OpenBLAS)";
    for (size_t i = 0; i < gnn_nsystems(); i++) /* the table's order: the upper bound first */
        if (opt.systems & (1u << i)) {
            const char *name = gnn_system_at(i)->name;
            struct mb_case *c = &cases[run->ncases++];
            snprintf(c->name, sizeof(c->name), "%s/%s", name, ds_label);
            snprintf(c->group, sizeof(c->group), "GraphSAGE epochs (count = training seeds per epoch; "
                                                 "time = one epoch)");
            c->labels[0] = name;
            c->labels[1] = ds_label;
            c->user = (void *)(intptr_t)i;
            uint64_t per_epoch = (uint64_t)opt.epoch_batches * (uint64_t)opt.batch * (uint64_t)run->nranks;
            c->count = opt.epoch_batches && per_epoch < hdr.n_train ? per_epoch : hdr.n_train;
        }
    return 0;
}

/* ---- setup / iterate / check / teardown ----------------------------------- */

struct st {
    struct mb_run *run;
    const char *case_name;   /* where its measurements go: /metrics/<case>/ */
    const struct gnn_system *sys;
    struct gnn_trainer *tr;
    long long epoch_idx;
    int gen_failed;          /* --generate: the dataset does not reopen */
    char gen_msg[512];
};

static int setup_generate(struct mb_run *run, void **out)
{
    *out = calloc(1, sizeof(struct st));
    if (!*out) {
        mb_warn("--generate: out of memory");
        return -1;
    }
    ((struct st *)*out)->run = run;
    int rc = 0;
    if (run->rank == 0) {
        struct gnn_gen_params p;
        gnn_gen_defaults(&p);
        p.scale = (int)opt.scale, p.edge_factor = (int)opt.edge_factor, p.dim = (int)opt.dim;
        p.classes = (int)opt.classes, p.seed = (uint64_t)run->common.seed, p.signal = (float)opt.signal;
        p.train_frac = p.val_frac = opt.train_frac;
        p.ndev = (int)opt.files, p.stripe = opt.stripe, p.nthreads = (int)opt.gen_threads;
        p.quiet = run->common.quiet;
        char err[512];
        double t0 = mb_now();
        if (gnn_generate(opt.data, &p, err, sizeof(err)) != 0) {
            mb_warn("--generate: %s", err);
            rc = -1;
        }
        mb_metric_run_dbl(&run->result, "generate_s", mb_now() - t0);
    }
    return rc;
}

static int setup(struct mb_run *run, const struct mb_case *c, void **out)
{
    if (opt.generate)
        return setup_generate(run, out);
    struct st *s = calloc(1, sizeof(*s));
    *out = s;
    if (!s) {
        mb_warn("%s: out of memory", c->name);
        return -1;
    }
    s->run = run;
    s->case_name = c->name;
    s->sys = gnn_system_at((size_t)(intptr_t)c->user);
    char err[512];
    struct gnn_trainer_cfg cfg = tcfg;
    cfg.sys = s->sys;
    cfg.verify = run->common.check ? 1 : 0;
    cfg.seed = (uint64_t)run->common.seed;
    cfg.comm = run->comm;
    cfg.coll = coll;
    if (gnn_trainer_create(&cfg, &s->tr, err, sizeof(err)) != 0) {
        mb_warn("%s: %s", c->name, err);
        return -1;
    }
    return 0;
}

static void prepare(void *st, long long iter)
{
    struct st *s = st;
    if (opt.generate)
        return;
    s->epoch_idx = iter;
    gnn_trainer_prepare(s->tr, (uint64_t)iter);
}

static void profile_report(struct st *s)
{
    char line[1024];
    gnn_trainer_profile_text(s->tr, s->sys->name, line, sizeof(line));
    if (s->run->rank == 0) {
        printf("# %s\n", line);
        fflush(stdout);
    }
}

static void epoch_report(struct st *s);

/* An error in a pass (I/O, corrupted topology, memory): a failure
 * whatever --check says. The ranks that hit it name it in one line; the
 * result file records it, and the harness stops the run (exit 1) without
 * a sample of the epoch. `what` names the step (a format of the epoch
 * number). Returns 1. */
static int epoch_error(struct st *s, const char *what, long long iter)
{
    char step[96], msg[800];
    snprintf(step, sizeof(step), what, iter);
    struct gnn_trainer_stats t;
    gnn_trainer_stats(s->tr, &t);
    if (t.error_msg[0])
        mb_warn("%s/%s: %s: %s", s->sys->name, ds_label, step, t.error_msg);
    if (s->run->rank == 0) {
        snprintf(msg, sizeof(msg), "%s: %s", step, t.error_msg[0] ? t.error_msg : "on another rank");
        mb_metric_case_str(&s->run->result, s->case_name, "error", msg);
    }
    return 1;
}

static int iterate(void *st, long long iter, double *elapsed)
{
    struct st *s = st;
    if (opt.generate) {
        if (s->run->rank == 0) {
            char err[512];
            struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 1, 0, 0, 0, 0};
            struct gnn_dataset *ds = gnn_open(opt.data, &o, err, sizeof(err));
            if (!ds) {
                mb_warn("--generate: reopening: %s", err);
                s->gen_failed = 1;
                snprintf(s->gen_msg, sizeof(s->gen_msg), "%s", err);
            } else {
                hdr = *gnn_dataset_header(ds);
                gnn_close(ds);
            }
        }
        return 0;
    }
    /* the TPC model's profiling run, untimed, right before the first epoch
     * (in the state the epochs run in); a row failing verification there
     * is the check's, not an error */
    int rc = gnn_trainer_profile(s->tr);
    if (rc < 0)
        return gnn_trainer_error(s->tr) ? epoch_error(s, "the profiling run", iter) : 0;
    if (rc == 0)
        profile_report(s);
    if (gnn_trainer_epoch(s->tr, (uint64_t)iter, elapsed) != 0) /* the epoch only */
        return epoch_error(s, "epoch %lld", iter);
    if (gnn_trainer_read_misses(s->tr) != 0)
        return epoch_error(s, "epoch %lld's misses read again", iter);
    if (gnn_trainer_evaluate(s->tr) != 0) /* held-out accuracy (untimed) */
        return epoch_error(s, "epoch %lld's held-out scoring", iter);
    epoch_report(s);
    return 0;
}

static const char *tier_rate(char *buf, size_t len, uint64_t a, uint64_t b, uint64_t total)
{
    snprintf(buf, len, "%.3f/%.3f", total ? (double)a / (double)total : 0, total ? (double)b / (double)total : 0);
    return buf;
}

/* A trainer's values into the case's /metrics: element `at` of each series. */
static void record(struct mb_run *run, const char *case_name, const struct gnn_value *v, size_t n, size_t at)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].type == GNN_VALUE_STR)
            mb_metric_at_str(&run->result, case_name, v[i].name, at, v[i].s);
        else if (v[i].type == GNN_VALUE_INT)
            mb_metric_at_int(&run->result, case_name, v[i].name, at, (long long)v[i].d);
        else
            mb_metric_at_dbl(&run->result, case_name, v[i].name, at, v[i].d);
    }
}

static void epoch_report(struct st *s)
{
    struct mb_run *run = s->run;
    struct gnn_trainer_stats t;
    gnn_trainer_stats(s->tr, &t);
    const struct gnn_read_stats *r = &t.rs;
    const double epoch_s = t.epoch_s;
    double v[4] = {(double)r->ssd_bytes, (double)r->verify_failures, (double)r->verified_rows, (double)t.failed};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_SUM, run->comm);
    const char *bound;
    struct gnn_prediction pr;
    double pred = gnn_trainer_predict(s->tr, &bound, &pr);
    double rate = t.miss_rate > 0 ? t.miss_rate : rates.rand_read_Bps;
    /* every rank's bytes (v[0]) at the engine's rate on the epoch's own
     * misses (mmap: the random-read rate measured at setup), summed over the
     * ranks (they re-read at once): docs/models.md's floor estimate */
    double miss_s, lower = gnn_floor_estimate(s->sys->upper_bound, epoch_s, inmem_epoch_s, v[0], rate, &miss_s);
    if (run->rank != 0)
        return;
    char ft[32], tt[32], st[16], rt[48] = "";
    if (!s->sys->upper_bound && rate > 0)
        snprintf(rt, sizeof(rt), " (storage at %.1f MB/s)", rate / 1e6);
    double nb = (double)t.nbatches;
    printf("# epoch %lld %s: %.3f s, %.2f batches/s, loss %.4f, train acc %.4f, val acc %.4f, feat hit dev/host %s, "
           "topo hit dev/host %s, read %.1f MB, stages/batch ms: sample %.2f submit %.2f complete %.2f train %.2f, "
           "cpu/batch ms: sample %.2f submit %.2f complete %.2f train %.2f all %.2f, "
           "verified %.0f rows (%.0f bad), model %.3f s (%s), floor estimate %.3f s%s, host steal %s\n",
           s->epoch_idx, s->sys->name, epoch_s, nb / epoch_s, t.loss, t.acc_train, t.acc_val,
           tier_rate(ft, sizeof(ft), r->feat_dev_hits, r->feat_host_hits, r->feat_rows),
           tier_rate(tt, sizeof(tt), r->topo_dev_hits, r->topo_host_hits, r->topo_lists), v[0] / 1e6,
           1e3 * t.busy[0] / nb, 1e3 * t.busy[1] / nb, 1e3 * t.busy[2] / nb, 1e3 * t.t_train / nb,
           1e-6 * (double)t.stage_cpu_ns[0] / nb, 1e-6 * (double)t.stage_cpu_ns[1] / nb,
           1e-6 * (double)t.stage_cpu_ns[2] / nb, 1e3 * t.c_train / nb, 1e3 * t.cpu_s / nb, v[2], v[1],
           pred, bound, lower, rt, gnn_steal_text(st, sizeof(st), t.steal));
    fflush(stdout);
    struct gnn_epoch_totals tot = {.ssd_bytes = v[0], .verified_rows = v[2], .miss_read_Bps = rate,
                                   .miss_read_s = miss_s, .model_s = pred, .model_bound = bound, .pred = pr,
                                   .floor_estimate_s = lower};
    struct gnn_value vals[GNN_MAX_VALUES];
    size_t n = gnn_trainer_epoch_values(s->tr, &tot, vals, GNN_MAX_VALUES);
    record(run, s->case_name, vals, n, (size_t)s->epoch_idx);
}

static int check(void *st, long long iter, char *msg, size_t len)
{
    struct st *s = st;
    (void)iter;
    if (opt.generate) {
        if (s->gen_failed) {
            snprintf(msg, len, "the generated dataset does not reopen: %s", s->gen_msg);
            return 1;
        }
        return 0;
    }
    return gnn_trainer_check(s->tr, msg, len);
}

static double model(struct mb_run *run, const struct mb_case *c)
{
    if (opt.generate || !run->result.ncases)
        return NAN;
    const struct mb_case_result *me = &run->result.cases[run->result.ncases - 1];
    const struct gnn_system *sys = gnn_system_at((size_t)(intptr_t)c->user);
    if (sys->upper_bound)
        inmem_epoch_s = me->stats.median;
    /* the last epoch's prediction */
    const struct mb_metric *m = mb_metric_find(&run->result, c->name, "model_s");
    for (size_t e = m ? m->n : 0; e-- > 0;)
        if (!isnan(m->d[e]))
            return m->d[e];
    return NAN;
}

static void teardown(void *st)
{
    struct st *s = st;
    if (!s)
        return;
    if (!opt.generate && s->tr && s->run->rank == 0) { /* what the system set up and its profile */
        struct gnn_value vals[GNN_MAX_VALUES];
        record(s->run, s->case_name, vals, gnn_trainer_setup_values(s->tr, vals, GNN_MAX_VALUES), 0);
    }
    gnn_trainer_destroy(s->tr); /* (the upper bound rejoins the budget) */
    free(s);
}

static const struct mb_bench bench = {
    .name = "mb-gnn",
    .description = "Out-of-core GraphSAGE training (Hyperion) vs mmap, nopipe, nocache, inmem under a memory budget.",
    .opts = gnn_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .model = model,
    .teardown = teardown,
};

int main(int argc, char **argv)
{
    /* Row buffers (MBs each, grown as batches grow) are mapped and unmapped
     * whole: with glibc's default the mmap threshold rises to 32 MiB after
     * the first large free, so freed buffers stayed resident in the heap and
     * counted against --mem-budget (hyperion after inmem reached its 1 GiB
     * cgroup's limit and was killed). A set threshold stays fixed. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    gnn_system_choices(system_choices, sizeof(system_choices));
    for (struct mb_opt *o = gnn_opts; o->name; o++)
        if (!strcmp(o->name, "system"))
            o->choices = system_choices;
    return mb_main(&bench, argc, argv);
}
