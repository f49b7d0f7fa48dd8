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
 * fails the run. `mb-gnn --generate` writes a dataset instead. */
#include "harness/harness.h"
#include "../gnn/gnn.h"
#include "../offload/aio.h"

#include <cblas.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

enum sys { S_INMEM, S_HYPERION, S_TOPO_FIRST, S_FEAT_FIRST, S_NOPIPE, S_NOCACHE, S_MMAP, S_MMAP_RANDOM, NSYS };
static const char *const sys_names[] = {"inmem",  "hyperion", "topo-first", "feat-first",
                                        "nopipe", "nocache",  "mmap",       "mmap-random"};
#define IS_MMAP(s) ((s) == S_MMAP || (s) == S_MMAP_RANDOM)

#define MAX_SHARES 32

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
    char *profile, *allreduce;
    long long profile_batches;
} opt;

static const struct mb_opt gnn_opts[] = {
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
    {"system", 0, MB_OPT_LIST, &opt.systems, "inmem,hyperion,nopipe,mmap",
     "inmem|hyperion|topo-first|feat-first|nopipe|nocache|mmap|mmap-random", 0, 0, "systems to train with, side by side", "LIST"},
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
    {"sub-threads", 0, MB_OPT_INT, &opt.sub_threads, "1", NULL, 1, MAX_SHARES,
     "threads submitting a batch's reads (cache lookups + engine submission)", "N"},
    {"comp-threads", 0, MB_OPT_INT, &opt.comp_threads, "1", NULL, 1, MAX_SHARES,
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
    {"allreduce", 0, MB_OPT_STR, &opt.allreduce, "mpi", NULL, 0, 0, "collectives algorithm for the gradients", "ALGO"},
    {"profile-batches", 0, MB_OPT_INT, &opt.profile_batches, "120", NULL, 1, 1 << 20,
     "batches per phase of the TPC model's profiling run (serial, then through the pipeline; untimed, before the first epoch; at most a whole pass over the training nodes; Hyperion profiles ~10)",
     "N"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"system", "dataset", NULL};

static struct gnn_sampler_cfg scfg;
static struct gnn_header hdr;        /* of --data (training) */
static struct mb_budget budget;
static int budget_on;
static int precheck = 1; /* the budget's check before any work (MB_GNN_BUDGET_PRECHECK=0: off, tests) */
static struct mb_coll_ctx *coll;
static const struct mb_coll_algo *algo;
static char ds_label[96];
/* measured once per run: the engine's random-read rate and host copy rate */
static double rand_read_Bps = NAN, memcpy_Bps = NAN;
static double inmem_epoch_s = NAN;   /* median of the inmem case, for the bound */

/* ---- validation -------------------------------------------------------- */

static int read_header(const char *dir, struct gnn_header *h, char *err, size_t len)
{
    struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
    struct gnn_dataset *ds = gnn_open(dir, &o, err, len);
    if (!ds)
        return -1;
    *h = *gnn_dataset_header(ds);
    gnn_close(ds);
    return 0;
}

/* The most feature rows one batch can hold: the seeds and, hop after
 * hop, fanout[h] new nodes for each node known (no duplicates assumed),
 * at most the graph. A slot's row buffer never grows beyond it
 * (slot_rows). */
static uint64_t batch_rows_bound(void)
{
    double rows = (double)opt.batch, frontier = rows;
    for (int h = 0; h < scfg.hops; h++) {
        frontier *= (double)scfg.fanout[h];
        rows += frontier;
    }
    return rows < (double)hdr.n ? (uint64_t)rows : hdr.n;
}

/* What the presampling (the cached systems' first step) finds, taken in
 * validate from the topology alone, before any feature I/O, cgroup or
 * result: it is deterministic from the seed, so setup finds the same. */
static uint64_t pre_rows;   /* the largest presampled batch's feature rows (0: not known) */
static uint64_t pre_placed; /* bytes the caches' chunked placement holds of the presampled items */

/* The rows a slot's buffer comes to hold: the largest presampled batch
 * and the quarter slot_rows adds for other epochs' batches (the profile
 * sizes every slot so; an epoch's largest batch lies within it), at most
 * the bound. */
static uint64_t slot_rows_need(void)
{
    uint64_t bound = batch_rows_bound(), rows = pre_rows ? pre_rows + pre_rows / 4 : bound;
    return rows < bound ? rows : bound;
}

/* Presamples one epoch as setup does, through the topology only (mmap).
 * 0, or -1 with err (the run then fails in setup, where it names it). */
static int presample_plan(char *err, size_t len)
{
    struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
    struct gnn_dataset *ds = gnn_open(opt.data, &o, err, len);
    if (!ds)
        return -1;
    struct gnn_reader *r = gnn_reader_new(ds, NULL, 0);
    struct gnn_hotness h;
    int rc = r ? gnn_presample(r, &scfg, (size_t)opt.batch, 0, &h) : -1;
    if (rc)
        snprintf(err, len, "presampling: %s", r ? gnn_reader_error(r) : "out of memory");
    if (!rc) {
        pre_rows = h.max_batch_rows;
        struct gnn_cache_cfg cc;
        struct gnn_cache_info info;
        memset(&cc, 0, sizeof(cc));
        cc.cap[GNN_TIER_DEV] = opt.cache_dev;
        cc.cap[GNN_TIER_HOST] = opt.cache_host;
        /* the device tier's fill takes its whole capacity (--cache-fill
         * degree); the host tier's is held to what the budget leaves */
        if (opt.cache_dev + opt.cache_host && gnn_cache_plan(ds, &h, &cc, &info, err, len) == 0)
            pre_placed = (opt.cache_fill == 0 ? opt.cache_dev
                                              : info.feat_bytes[GNN_TIER_DEV] + info.topo_bytes[GNN_TIER_DEV]) +
                         info.feat_bytes[GNN_TIER_HOST] + info.topo_bytes[GNN_TIER_HOST];
        else
            pre_placed = opt.cache_dev + opt.cache_host;
        gnn_hotness_free(&h);
    }
    if (r)
        gnn_reader_free(r);
    gnn_close(ds);
    return rc;
}

#define ENGINE_ARENA ((uint64_t)64 << 20) /* offload/aio's default arena, touched at open */
/* beyond the terms counted: threads' stacks, io_uring rings, OpenBLAS's
 * buffers, the sampler's arrays, the chunked placement's lists (measured:
 * hyperion at 20% cache of reproduce/hyperion's small scale, 8 slots under
 * 1 GiB, peaks at 1006.6 MiB of anonymous memory, 46 MiB above the terms) */
#define BUDGET_SLACK ((uint64_t)48 << 20)

/* What system `sys` needs under --mem-budget, from what is known before
 * any work: dataset arrays, the caches (where the fill adapts to the
 * budget, what their placement of the presampled items holds; else their
 * capacity) and their index, and the larger of two phases: the cache's
 * build (the presampling's counts) and the epochs (every slot's rows at
 * the size of the largest presampled batch, in or beside the engine's
 * arena, with the storage-rate buffers where the slots cannot lend
 * theirs), the model's weights and activations, and a fixed slack. Fills
 * a one-line account of it. */
static uint64_t budget_need(int sys, char *what, size_t len)
{
    const uint64_t rb = hdr.row_bytes, n = hdr.n, rows = slot_rows_need();
    const int engine = sys != S_MMAP && sys != S_MMAP_RANDOM;
    const int cached = sys == S_HYPERION || sys == S_TOPO_FIRST || sys == S_FEAT_FIRST || sys == S_NOPIPE;
    const uint64_t slots = sys == S_NOPIPE ? 1 : (uint64_t)opt.slots;
    uint64_t data = 8 * (n + 1) + 4 * n + 12 * (hdr.n_train + hdr.n_val);
    uint64_t held = pre_rows ? pre_placed : opt.cache_dev + opt.cache_host;
    uint64_t cache = cached ? held + 16 * n : 0; /* + index */
    uint64_t build = cached ? 8 * n + 8 * hdr.n_train : 0; /* presample counts and order */
    uint64_t slot_bytes = slots * rows * rb;
    /* the storage rate's two buffers: borrowed from two idle slots where
     * there are two (measure_io_rate), else at most a slot's rows each */
    uint64_t mrows = slots >= 2 ? (rows < 512 ? 512 : 0) : (rows < 512 ? 512 : rows);
    uint64_t measure = engine ? 2 * mrows * rb : 0;
    uint64_t arena = engine ? ENGINE_ARENA : 0;
    uint64_t epochs = slot_bytes + measure > arena ? slot_bytes + measure - arena : 0;
    uint64_t params = 0, act = 0, tgt = opt.batch, frontier = opt.batch;
    for (int l = scfg.hops - 1; l >= 0; l--) { /* layer l's targets: the nodes within hops-1-l hops */
        uint64_t in = l == 0 ? (uint64_t)hdr.dim : (uint64_t)opt.hidden;
        uint64_t out = l == scfg.hops - 1 ? (uint64_t)hdr.classes : (uint64_t)opt.hidden;
        uint64_t t = tgt < rows ? tgt : rows;
        params += 2 * in * out + out;
        /* the aggregate and the output, and for layers past the first their
         * gradients (the features need none) */
        act += l == 0 ? 4 * t * (in + 3 * out) : 4 * t * (2 * in + 2 * out);
        frontier *= (uint64_t)scfg.fanout[scfg.hops - 1 - l];
        tgt += frontier;
    }
    uint64_t model = 16 * params + act; /* weights, gradients, Adam's two moments */
    uint64_t need = data + cache + arena + (epochs + model > build ? epochs + model : build) + BUDGET_SLACK;
    snprintf(what, len,
             "%s needs %.1f MiB: --slots %llu x %llu rows (--batch %lld, --fanout %s: the largest presampled batch "
             "%s) x %llu B = %.1f MiB%s, caches (--cache-dev + --cache-host%s) and their index %.1f MiB, model "
             "%.1f MiB, dataset arrays %.1f MiB, %.0f MiB slack",
             sys_names[sys], (double)need / 1048576.0, (unsigned long long)slots, (unsigned long long)rows, opt.batch,
             opt.fanout, pre_rows ? "and a quarter" : "unknown: at most", (unsigned long long)rb,
             (double)slot_bytes / 1048576.0, engine ? " in or beside the engine's 64 MiB arena" : "",
             pre_rows ? ": what the placement holds" : "", (double)cache / 1048576.0,
             (double)model / 1048576.0, (double)data / 1048576.0, (double)BUDGET_SLACK / 1048576.0);
    return need;
}

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
    if (gnn_parse_fanouts(opt.fanout, &scfg) != 0)
        BAD("--fanout: '%s' is not a list of 1..%d positive fan-outs", opt.fanout, GNN_MAX_HOPS);
    if (scfg.hops > GNN_MAX_LAYERS)
        BAD("--fanout: at most %d hops", GNN_MAX_LAYERS);
    if (!opt.systems)
        BAD("--system: empty list");
    if (run->common.device != MB_DEV_HOST)
        BAD("-d/--device: mb-gnn runs on the host (the \"device\" cache tier is host memory; accepts host)");
    char err[512];
    if (read_header(opt.data, &hdr, err, sizeof(err)) != 0)
        BAD("--data: %s", err);
    algo = mb_coll_find(opt.allreduce);
    if (!algo)
        BAD("--allreduce: unknown algorithm '%s'", opt.allreduce);
    if (opt.profile) {
        struct gnn_hw_profile p;
        if (gnn_profile_load(opt.profile, &p, err, sizeof(err)) != 0)
            BAD("--profile: %s", err);
    }
    if (opt.mem_budget && opt.cache_dev + opt.cache_host >= opt.mem_budget)
        BAD("--cache-dev/--cache-host: the caches (%zu B) must leave room in --mem-budget (%zu B)",
            opt.cache_dev + opt.cache_host, opt.mem_budget);
    /* every budgeted system must fit before any work: the cgroup would
     * kill it otherwise (inmem, the upper bound, runs outside the budget) */
    const char *pre = getenv("MB_GNN_BUDGET_PRECHECK"); /* "0": tests of a limit hit mid-run */
    precheck = !(pre && !strcmp(pre, "0"));
    /* sized from the largest presampled batch (the topology alone is
     * read): where presampling fails, setup fails naming it */
    if (precheck && opt.mem_budget && opt.budget_how != MB_BUDGET_NONE && presample_plan(err, sizeof(err)) != 0)
        precheck = 0;
    for (int sys = 0; precheck && opt.mem_budget && opt.budget_how != MB_BUDGET_NONE && sys < NSYS; sys++) {
        char what[600];
        uint64_t need = budget_need(sys, what, sizeof(what));
        if ((opt.systems & (1u << sys)) && sys != S_INMEM && need > opt.mem_budget)
            BAD("--mem-budget %.1f MiB (%zu B): %s (%llu B); give fewer --slots, a smaller --batch, --fanout or "
                "--cache-host, or a larger --mem-budget", (double)opt.mem_budget / 1048576.0, opt.mem_budget, what,
                (unsigned long long)need);
    }
    snprintf(ds_label, sizeof(ds_label), "rmat%d-ef%d-d%d-f%u", hdr.scale, hdr.edge_factor, hdr.dim, hdr.ndev);
    return 0;
#undef BAD
}

/* The kernel's read-ahead of the data's block device: what mmap's page
 * faults read around each miss (-1 when unknown). */
static long long read_ahead_kb(void)
{
    char path[1100];
    struct stat st;
    snprintf(path, sizeof(path), "%s/data.0", opt.data);
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

static int usable_cores(void);

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
    mb_kv_int(c, "read_ahead_kb", read_ahead_kb());
    mb_kv_int(c, "model_cores", usable_cores());
    mb_kv_str(c, "budget_method", budget_on ? budget.method : "none");
    mb_kv_str(c, "budget_detail", budget_on ? budget.detail : "no --mem-budget given");
    static const char *const how[] = {"auto", "cgroup", "mlock", "none"};
    mb_kv_str(c, "budget_method_requested", how[opt.budget_how]);
    mb_kv_str(c, "budget_precheck", !opt.mem_budget ? "n/a" : precheck ? "every budgeted system's need checked before any work"
                                                                        : "skipped (MB_GNN_BUDGET_PRECHECK=0)");
    mb_kv_str(c, "budget_scope", "every system but inmem (the in-memory upper bound runs outside the budget)");
    /* inmem's exemption, as each method allows it */
    mb_kv_str(c, "budget_inmem",
              !budget_on                ? "no budget enforced"
              : budget.cgroup[0]        ? "exempt: inmem leaves the budget's cgroup and rejoins it after"
              : strcmp(budget.method, "mlock") != 0 ? "no budget enforced (--budget-method none)"
              : budget.pinned || budget.pinned_bytes
                  ? "exempt: the first rank of the node releases its pin for inmem and pins the same bytes again after"
                  : "exempt: nothing was pinned (available memory already within the budget)");
    mb_kv_str(c, "model", "TPC model (Hyperion Eq. 3-4, extended; gnn_tpc_predict_pipeline): epoch = batches x "
                          "max(T_pipe, T_ssd = storage bytes / the engine's rate at the pipeline's depth, T_pcie, "
                          "T_cpu = every thread's CPU time / cores); T_pipe = mean-value analysis of the slots "
                          "circulating through sampler, storage, lookup, completion and training, CPU demands "
                          "stretched by core sharing; inputs per batch from a serial profiling run of "
                          "--profile-batches batches before the first epoch (profile/ keys); nopipe: the profiled "
                          "stages added up");
    mb_kv_str(c, "bound", "max(inmem epoch time, storage bytes read / the engine's rate on the epoch's own misses, "
                          "read again after it (mmap: its random-read rate measured at setup))");
    (void)run;
}

/* ---- budget: the node's first rank creates the cgroup, the others join -- */

static int enforce_budget(struct mb_run *run)
{
    if (!opt.mem_budget)
        return 0;
    MPI_Comm node;
    MPI_Comm_split_type(run->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int lr;
    MPI_Comm_rank(node, &lr);
    char err[700] = "";
    int rc = 0;
    if (lr == 0)
        rc = mb_budget_enforce(&budget, opt.mem_budget, (enum mb_budget_how)opt.budget_how, err, sizeof(err));
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    MPI_Bcast(&budget, (int)sizeof(budget), MPI_BYTE, 0, node);
    budget.owner = lr == 0 && !rc;
    if (lr != 0) { /* the pin and the settings to restore are the first rank's own */
        budget.pinned = NULL;
        budget.pinned_bytes = 0;
        budget.subtree_added = 0;
    }
    if (!rc && lr != 0)
        rc = mb_budget_join(&budget, err, sizeof(err));
    if (!rc && budget.cgroup[0] && mb_budget_watch(&budget) != 0) {
        snprintf(err, sizeof(err), "no thread to watch %s", budget.cgroup);
        rc = -1;
    }
    MPI_Comm_free(&node);
    int any = rc != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, run->comm);
    if (any) {
        if (rc)
            mb_warn("--mem-budget: cannot enforce %zu bytes: %s", opt.mem_budget, err);
        if (!rc || budget.cgroup[0])
            mb_budget_release(&budget); /* (the others leave before the owner removes it) */
        return -1;
    }
    budget_on = 1;
    return 0;
}

/* A limit hit (the watcher lifted the limit rather than let the kernel
 * kill the run): one line naming the budget and the peak into msg; 1, or 0. */
static int budget_hit(char *msg, size_t len)
{
    uint64_t peak = 0;
    if (!budget_on || !mb_budget_exceeded(&budget, &peak))
        return 0;
    snprintf(msg, len,
             "--mem-budget %zu B (%.1f MiB) exceeded: %llu B (%.1f MiB) charged at the limit (%s); the run stops "
             "here, the cases finished are kept",
             opt.mem_budget, (double)opt.mem_budget / 1048576.0, (unsigned long long)peak, (double)peak / 1048576.0,
             budget.method);
    return 1;
}

/* SIGINT, SIGTERM, SIGHUP: the budget's cgroup and a generate's temporary
 * files go, then the signal takes its course (an earlier handler, e.g. the
 * harness's, runs next). */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction prior_action[3];

static void on_signal(int sig)
{
    gnn_generate_cleanup();
    if (budget_on)
        mb_budget_release_signal(&budget);
    for (int i = 0; i < 3; i++)
        if (cleanup_signals[i] == sig) {
            const struct sigaction *o = &prior_action[i];
            if (o->sa_flags & SA_SIGINFO || (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN)) {
                if (!(o->sa_flags & SA_SIGINFO))
                    o->sa_handler(sig);
                return; /* (a SA_SIGINFO handler cannot be called without its siginfo: ends the run below) */
            }
            if (o->sa_handler == SIG_IGN)
                return;
        }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_cleanup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    for (int i = 0; i < 3; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(cleanup_signals[i], &sa, &prior_action[i]);
    }
}

/* inmem is the upper bound: it leaves the budget's cgroup and comes back */
static char budget_broken[400]; /* why the budget no longer holds ("" while it does) */
static int budget_leave(char *err, size_t len)
{
    return budget_on ? mb_budget_suspend(&budget, err, len) : 0;
}
static void budget_enter(void)
{
    char err[300];
    if (budget_on && mb_budget_resume(&budget, err, sizeof(err)) != 0) {
        snprintf(budget_broken, sizeof(budget_broken), "after inmem, the budget could not be restored: %s", err);
        mb_warn("--mem-budget: %s", budget_broken);
    }
}

static void release_budget(void)
{
    if (!budget_on)
        return;
    int owner = budget.owner;
    if (!owner)
        mb_budget_release(&budget);
    MPI_Barrier(MPI_COMM_WORLD); /* the node's others leave before the owner removes it */
    if (owner)
        mb_budget_release(&budget);
    budget_on = 0;
}

/* ---- plan ------------------------------------------------------------- */

static struct mb_case *cases;

/* At the start of MPI_Finalize (MPI still usable): the collectives
 * context goes, the ranks leave the budget's cgroup, its owner removes it. */
static int at_finalize(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    if (coll)
        mb_coll_ctx_free(coll);
    coll = NULL;
    release_budget();
    return MPI_SUCCESS;
}

static int measure_memcpy(void);

static int plan(struct mb_run *run)
{
    cases = calloc(NSYS + 1, sizeof(*cases));
    run->cases = cases;
    if (!cases) {
        mb_warn("out of memory for the cases");
        return -1;
    }
    install_cleanup();
    if (opt.generate) {
        struct mb_case *c = &cases[run->ncases++];
        snprintf(c->name, sizeof(c->name), "generate/rmat%lld-ef%lld-d%lld-f%lld", opt.scale, opt.edge_factor, opt.dim,
                 opt.files);
        snprintf(c->group, sizeof(c->group), "generate (time = reopening with every checksum; generate_s in /config)");
        c->labels[0] = "generate";
        c->labels[1] = c->name + 9;
        c->count = 1ull << opt.scale;
        return 0;
    }
    omp_set_num_threads((int)opt.train_threads); /* the training step (main thread) */
    openblas_set_num_threads((int)opt.train_threads);
    int key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    /* the host copy rate's 128 MiB of buffers, once, outside the budget:
     * a measurement of the machine, not the run's working set */
    if (measure_memcpy() != 0) {
        mb_warn("the host copy rate: out of memory for 128 MiB of buffers");
        return -1;
    }
    if (enforce_budget(run) != 0)
        return -1;
    char err[256];
    if (run->nranks > 1) {
        coll = mb_coll_ctx_create(run->comm, 0, err, sizeof(err));
        if (!coll) {
            mb_warn("collectives: %s", err);
            return -1;
        }
        if (!mb_coll_usable(algo, coll, MB_COLL_ALLREDUCE, err, sizeof(err))) {
            if (run->rank == 0)
                mb_warn("--allreduce: %s", err);
            return -1;
        }
    }
    run->emulation = "stand-ins: each data file stands for one NVMe SSD (striped RAID0 by offload/aio); host "
                     "memory stands for GPU memory (the \"device\" cache tier and the training buffers); the "
                     "host-tier copies stand for PCIe transfers; training runs on the CPU (OpenBLAS)";
    for (int s = 0; s < NSYS; s++) /* inmem first: the bound needs its time */
        if (opt.systems & (1u << s)) {
            struct mb_case *c = &cases[run->ncases++];
            snprintf(c->name, sizeof(c->name), "%s/%s", sys_names[s], ds_label);
            snprintf(c->group, sizeof(c->group), "GraphSAGE epochs (count = training seeds per epoch; "
                                                 "time = one epoch)");
            c->labels[0] = sys_names[s];
            c->labels[1] = ds_label;
            c->user = (void *)(intptr_t)s;
            uint64_t per_epoch = (uint64_t)opt.epoch_batches * (uint64_t)opt.batch * (uint64_t)run->nranks;
            c->count = opt.epoch_batches && per_epoch < hdr.n_train ? per_epoch : hdr.n_train;
        }
    return 0;
}

/* ---- per-system state ---------------------------------------------------- */

struct slot {
    struct gnn_sample smp;
    float *x;
    size_t x_rows;
    int32_t *labels;
    size_t n_seeds;
    struct gnn_reader *rd[MAX_SHARES];
    struct gnn_reader *srd;  /* the sampler's (topology) reader: sampling instances run at once */
    /* intra-batch overlap: hop h's gather of nodes[fed_before .. hop_end[h]) */
    struct gnn_reader *hrd[GNN_MAX_HOPS];
    int hpending[GNN_MAX_HOPS];
    size_t fed;              /* rows [0, fed) are gathered by the sample stage */
    char err[300];
    int err_verify;          /* err is a row failing verification (a check), not an error */
    double t_sample, t_submit, t_complete;
};

struct st {
    struct mb_run *run;
    enum sys sys;
    struct gnn_dataset *ds;
    struct gnn_cache *cache;
    struct gnn_cache_info cinfo;
    double presample_s, cache_build_s;
    uint64_t fill_limit;     /* host-tier bytes the fill may reach under the budget (0: cap) */
    uint64_t max_batch_rows; /* the largest presampled batch's feature rows */
    int nslots, nshares, overlap;
    struct slot slot[16];
    struct mb_pipe *pipe;
    struct gnn_model model;
    int64_t *order;          /* this epoch's permutation of the training ids */
    size_t n_train;
    int64_t *eval_ids;
    size_t n_eval;
    int eval_mode;
    long nbatches;           /* per rank, equal on every rank */
    long all_batches;        /* in a whole pass over the training nodes (--epoch-batches may cut an epoch short) */
    uint64_t epoch;
    int verify;
    /* per epoch */
    struct gnn_read_stats rs;
    double t_train, loss, acc_train, acc_val, last_epoch_s;
    int epoch_failed;
    char fail_msg[600];
    /* the last pass hit an error (I/O, corrupted topology, memory), not
     * just a failed verification: a failure whatever --check says (agreed
     * by every rank) */
    int pass_error;
    char error_msg[600];     /* this rank's first error ("" where another rank's) */
    /* CPU seconds of the pass by stage (sample, submit, complete: every
     * team thread; train: the training thread), summed atomically */
    _Atomic long long stage_cpu_ns[3];
    double c_train;
    double cpu_s;            /* process CPU seconds of the last epoch */
    double steal;            /* share of the machine's CPU time the host took in it */
    double miss_rate;        /* the engine's rate on its misses, read again after it */
    size_t miss_read_rows;   /* this rank's rows in that reading */
    double busy[3], wait_s;  /* the training pass's stage and wait times (the
                                held-out pass after it restarts the pipe's) */
    struct gnn_profile prof; /* the TPC model's inputs (profiling run) */
    double prof_steal;       /* share of CPU time the host took during the profile */
    size_t prof_pool_rows;   /* row reads the storage rate drew from (the profile's misses) */
    const char *prof_t_source; /* how the profile's stage walls were taken */
    double *rec;             /* profiling: per batch sample, submit, complete, train walls */
    long nrec, rec_cap;
    int profiled;
    long long epoch_idx;
};

/* --stage-nice: once per stage thread (Linux: nice is per thread) */
static void stage_thread_nice(void)
{
    static _Thread_local int done;
    if (done || !opt.stage_nice)
        return;
    done = 1;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), (int)opt.stage_nice) != 0)
        mb_warn("--stage-nice: %s (stage threads keep their priority)", strerror(errno));
}

/* Completes the slot's intra-batch gathers in flight; the first error
 * goes to sl->err. 0, or 1. */
static int wait_hop_gathers(struct slot *sl, long b)
{
    int rc = 0;
    for (int h = 0; h < scfg.hops; h++)
        if (sl->hpending[h]) {
            int e = gnn_gather_wait(sl->hrd[h]);
            if (e && !rc) {
                snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->hrd[h]));
                sl->err_verify = e == GNN_ERR_VERIFY;
                rc = 1;
            }
            sl->hpending[h] = 0;
        }
    return rc;
}

/* Room for `rows` feature rows in the slot: a larger buffer keeps the
 * rows gathered so far (their reads are completed first). 0, or 1. */
static int slot_rows(struct st *s, struct slot *sl, size_t rows, long b)
{
    if (rows <= sl->x_rows)
        return 0;
    size_t want = rows + rows / 4, bound = (size_t)batch_rows_bound(); /* (what the budget check counted) */
    if (want > bound)
        want = rows > bound ? rows : bound;
    float *x = gnn_alloc_rows(s->ds, want);
    if (!x) {
        snprintf(sl->err, sizeof(sl->err), "batch %ld: out of memory for %zu feature rows", b, rows);
        return 1;
    }
    int rc = wait_hop_gathers(sl, b);
    if (sl->fed)
        memcpy(x, sl->x, sl->fed * hdr.row_bytes);
    gnn_free_rows(s->ds, sl->x);
    sl->x = x;
    sl->x_rows = want;
    return rc;
}

static void add_cpu(struct st *s, int stage, double c0)
{
    atomic_fetch_add(&s->stage_cpu_ns[stage], (long long)(1e9 * (mb_cpu_s(1) - c0)));
}

static int sample_stage_run(struct st *s, int slot, long b);

static int sample_stage(void *ctx, int slot, long b, int tid, int nt)
{
    stage_thread_nice();
    (void)tid; (void)nt;
    struct st *s = ctx;
    double c0 = mb_cpu_s(1);
    int rc = sample_stage_run(s, slot, b);
    add_cpu(s, 0, c0);
    return rc;
}

static int sample_stage_run(struct st *s, int slot, long b)
{
    omp_set_num_threads(1); /* this stage thread's own work only (per-thread setting) */
    struct slot *sl = &s->slot[slot];
    double t0 = mb_now();
    const int64_t *seeds = NULL;
    size_t n;
    if (s->eval_mode) {
        size_t lo = ((size_t)b * (size_t)s->run->nranks + (size_t)s->run->rank) * (size_t)opt.batch;
        n = lo < s->n_eval ? s->n_eval - lo : 0;
        if (n > (size_t)opt.batch)
            n = (size_t)opt.batch;
        seeds = s->eval_ids + (n ? lo : 0);
    } else {
        n = gnn_batch_seeds(s->order, s->n_train, (size_t)opt.batch, s->run->rank, s->run->nranks, (size_t)b, &seeds);
    }
    sl->n_seeds = n;
    sl->err[0] = 0;
    sl->err_verify = 0;
    if (n == 0) {
        sl->t_sample = mb_now() - t0;
        return 0;
    }
    uint64_t ep = s->eval_mode ? 1000000 + s->epoch : s->epoch;
    wait_hop_gathers(sl, b); /* left by a failed batch: its error is already reported */
    sl->err[0] = 0;
    sl->err_verify = 0;
    sl->fed = 0;
    if (!s->overlap) {
        if (gnn_sample(&sl->smp, &scfg, sl->srd, seeds, n, ep, (uint64_t)b) < 0) {
            snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
            return 1;
        }
    } else {
        /* each hop's topology reads in flight while the features of the
         * nodes known so far are looked up and sent to the engine */
        const size_t dim = (size_t)hdr.dim;
        if (gnn_sample_begin(&sl->smp, &scfg, seeds, n, ep, (uint64_t)b)) {
            snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: out of memory", b);
            return 1;
        }
        for (int h = 0; h < scfg.hops; h++) {
            if (gnn_sample_hop_submit(&sl->smp, &scfg, sl->srd)) {
                snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
                return 1;
            }
            size_t known = sl->smp.hop_end[h];
            if (known > sl->fed) {
                if (slot_rows(s, sl, known, b))
                    return 1;
                if (gnn_gather_submit(sl->hrd[h], sl->smp.nodes + sl->fed, known - sl->fed, sl->x + sl->fed * dim)) {
                    snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->hrd[h]));
                    return 1;
                }
                sl->hpending[h] = 1;
                sl->fed = known;
            }
            if (gnn_sample_hop_finish(&sl->smp, &scfg, sl->srd) < 0) {
                snprintf(sl->err, sizeof(sl->err), "sampling batch %ld: %s", b, gnn_reader_error(sl->srd));
                return 1;
            }
        }
    }
    const int32_t *lab = gnn_labels(s->ds);
    for (size_t i = 0; i < n; i++)
        sl->labels[i] = lab[seeds[i]];
    if (slot_rows(s, sl, sl->smp.block[0].n_src, b))
        return 1;
    sl->t_sample = mb_now() - t0;
    return 0;
}

/* share k of a batch's input rows */
static void share(size_t rows, int k, int K, size_t *lo, size_t *hi)
{
    *lo = rows * (size_t)k / (size_t)K;
    *hi = rows * (size_t)(k + 1) / (size_t)K;
}

static int submit_stage(void *ctx, int slot, long b, int tid, int nt)
{
    omp_set_num_threads(1); /* this stage thread's own work only (per-thread setting) */
    stage_thread_nice();
    struct st *s = ctx;
    struct slot *sl = &s->slot[slot];
    if (!sl->n_seeds)
        return 0;
    double t0 = mb_now(), c0 = mb_cpu_s(1);
    size_t rows = sl->smp.block[0].n_src, dim = (size_t)hdr.dim, fed = sl->fed;
    for (int k = tid; k < s->nshares; k += nt) {
        size_t lo, hi;
        share(rows - fed, k, s->nshares, &lo, &hi);
        lo += fed, hi += fed;
        if (hi > lo && gnn_gather_submit(sl->rd[k], sl->smp.nodes + lo, hi - lo, sl->x + lo * dim) != 0) {
            snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->rd[k]));
            return 1;
        }
    }
    if (tid == 0)
        sl->t_submit = mb_now() - t0;
    add_cpu(s, 1, c0);
    return 0;
}

static int complete_stage(void *ctx, int slot, long b, int tid, int nt)
{
    omp_set_num_threads(1); /* this stage thread's own work only (per-thread setting) */
    stage_thread_nice();
    struct st *s = ctx;
    struct slot *sl = &s->slot[slot];
    if (!sl->n_seeds)
        return 0;
    double t0 = mb_now(), c0 = mb_cpu_s(1);
    size_t rows = sl->smp.block[0].n_src, fed = sl->fed;
    int rc = tid == 0 ? wait_hop_gathers(sl, b) : 0;
    for (int k = tid; k < s->nshares; k += nt) {
        size_t lo, hi;
        share(rows - fed, k, s->nshares, &lo, &hi);
        int e = hi > lo ? gnn_gather_wait(sl->rd[k]) : 0;
        if (e) {
            snprintf(sl->err, sizeof(sl->err), "batch %ld: %s", b, gnn_reader_error(sl->rd[k]));
            sl->err_verify = e == GNN_ERR_VERIFY;
            return 1;
        }
    }
    if (tid == 0)
        sl->t_complete = mb_now() - t0;
    add_cpu(s, 2, c0);
    return rc;
}

/* Adds reader r's counts to acc (r may be NULL), and resets them. */
static void add_reader_stats(struct gnn_read_stats *acc, struct gnn_reader *r, int reset)
{
    if (!r)
        return;
    struct gnn_read_stats one;
    gnn_reader_stats(r, &one);
    gnn_read_stats_add(acc, &one);
    if (reset)
        gnn_reader_reset_stats(r);
}

static void collect_stats(struct st *s, struct gnn_read_stats *acc, int reset)
{
    memset(acc, 0, sizeof(*acc));
    for (int i = 0; i < s->nslots; i++) {
        add_reader_stats(acc, s->slot[i].srd, reset);
        for (int h = 0; h < GNN_MAX_HOPS; h++)
            add_reader_stats(acc, s->slot[i].hrd[h], reset);
        for (int k = 0; k < s->nshares; k++)
            add_reader_stats(acc, s->slot[i].rd[k], reset);
    }
}

/* Records an error of this rank's pass (the first one's message). */
static void pass_error(struct st *s, const char *msg)
{
    if (!s->pass_error)
        snprintf(s->error_msg, sizeof(s->error_msg), "%s", msg);
    s->pass_error = 1;
}

/* Whether any rank failed (rc != 0) or hit an error; s->pass_error then
 * says whether one was an error, on every rank. */
static int agree_error(struct st *s, int rc)
{
    int v[2] = {rc != 0, s->pass_error};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, s->run->comm);
    s->pass_error = v[1];
    return v[0] || v[1];
}

/* Runs one pass (training or evaluation) over nb batches through the
 * pipeline. Returns 0, or -1 after a failed batch on any rank (message in
 * fail_msg; s->pass_error set where one was an error, not a check). */
static int run_pass(struct st *s, long nb, int eval, long limit)
{
    s->eval_mode = eval;
    s->pass_error = 0;
    s->error_msg[0] = 0;
    s->fail_msg[0] = 0;
    if (limit > 0 && limit < nb)
        nb = limit;
    int slot, status, failed = 0;
    if (mb_pipe_start(s->pipe, nb) != 0) {
        snprintf(s->fail_msg, sizeof(s->fail_msg), "pipeline not drained");
        pass_error(s, s->fail_msg);
        failed = 1;
    }
    int started = !failed;
    long b;
    double loss = 0;
    size_t correct = 0, seen = 0;
    s->t_train = 0;
    s->c_train = 0;
    for (int k = 0; k < 3; k++)
        atomic_store(&s->stage_cpu_ns[k], 0);
    while (started && mb_pipe_next(s->pipe, &slot, &b, &status)) {
        struct slot *sl = &s->slot[slot];
        /* every rank takes part in every step's allreduce, so a rank with a
         * failed batch trains on nothing and reports the failure after */
        if (status && !failed) {
            failed = 1;
            snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", sl->err[0] ? sl->err : "a pipeline stage failed");
        }
        if (status && !sl->err_verify)
            pass_error(s, sl->err[0] ? sl->err : "a pipeline stage failed");
        char hit[300];
        if (budget_hit(hit, sizeof(hit))) {
            if (!failed)
                snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", hit);
            failed = 1;
            pass_error(s, hit);
        }
        size_t n = status || failed ? 0 : sl->n_seeds;
        double l = 0, t0 = mb_now(), c0 = mb_cpu_s(1);
        size_t ok = 0;
        char err[256] = "";
        int rc = eval ? gnn_model_eval(&s->model, sl->smp.block, sl->x, sl->labels, n, &l, &ok)
                      : gnn_model_step(&s->model, sl->smp.block, sl->x, sl->labels, n, &l, &ok, err, sizeof(err));
        s->t_train += mb_now() - t0;
        s->c_train += mb_cpu_s(1) - c0;
        if (s->rec && s->nrec < s->rec_cap && !status) {
            double *r = s->rec + 4 * s->nrec++;
            r[0] = sl->t_sample, r[1] = sl->t_submit, r[2] = sl->t_complete, r[3] = mb_now() - t0;
        }
        if (rc && !failed) {
            failed = 1;
            snprintf(s->fail_msg, sizeof(s->fail_msg), "training batch %ld failed%s%s", b, eval ? "" : ": ",
                     eval ? "" : err);
        }
        if (rc)
            pass_error(s, s->fail_msg);
        loss += l;
        correct += ok;
        seen += n;
        mb_pipe_release(s->pipe, slot);
    }
    /* (failures agreed: every rank takes the same path after a pass) */
    double v[5] = {loss, (double)correct, (double)seen, (double)failed, (double)s->pass_error};
    MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_DOUBLE, MPI_SUM, s->run->comm);
    failed = v[3] > 0;
    s->pass_error = v[4] > 0;
    if (failed && !s->fail_msg[0])
        snprintf(s->fail_msg, sizeof(s->fail_msg), "another rank failed");
    if (eval)
        s->acc_val = v[2] > 0 ? v[1] / v[2] : 0;
    else {
        s->loss = v[2] > 0 ? v[0] / v[2] : 0;
        s->acc_train = v[2] > 0 ? v[1] / v[2] : 0;
    }
    return failed ? -1 : 0;
}

static long eval_batches(const struct st *s)
{
    size_t per = (size_t)opt.batch * (size_t)s->run->nranks;
    return (long)((s->n_eval + per - 1) / per);
}

/* ---- the engine's random-read rate and the host copy rate -------------- */

/* 0, or -1 with the failed read or allocation in err (an error: a rate
 * from fewer reads would not be the one measured). */
static int measure_rates(struct st *s, char *err, size_t errlen)
{
    if (!isnan(rand_read_Bps))
        return 0;
    struct gnn_reader *r = gnn_reader_new(s->ds, NULL, 0);
    size_t n = 4096 < hdr.n ? 4096 : (size_t)hdr.n;
    int64_t *ids = malloc(n * sizeof(int64_t));
    float *x = gnn_alloc_rows(s->ds, n);
    double best = 0;
    int failed = !r || !ids || !x;
    if (failed)
        snprintf(err, errlen, "the engine's random-read rate: out of memory for %zu rows", n);
    for (int rep = 0; rep < 3 && !failed; rep++) {
        for (size_t i = 0; i < n; i++)
            ids[i] = (int64_t)(gnn_hash4(77, (uint64_t)rep, i, 0) % hdr.n);
        double t0 = mb_now();
        /* the engine path: a few large batches, as the pipeline submits them */
        int rc = gnn_gather(r, ids, n, x);
        double dt = mb_now() - t0;
        if (rc) {
            snprintf(err, errlen, "the engine's random-read rate: %s", gnn_reader_error(r));
            failed = 1;
        } else if (dt > 0 && (double)n * (double)hdr.row_bytes / dt > best)
            best = (double)n * (double)hdr.row_bytes / dt;
    }
    if (!failed)
        rand_read_Bps = best;
    free(ids);
    if (x)
        gnn_free_rows(s->ds, x);
    gnn_reader_free(r);
    return failed ? -1 : 0;
}

static int measure_memcpy(void)
{
    if (!isnan(memcpy_Bps))
        return 0;
    /* host copy rate (the "PCIe" of the emulation): rows copied out of a
     * buffer larger than the caches, every destination page read back */
    size_t bytes = 64u << 20;
    char *a = malloc(bytes), *c = malloc(bytes);
    if (!a || !c) {
        free(a);
        free(c);
        return -1;
    }
    memset(a, 1, bytes);
    memset(c, 2, bytes);
    double t0 = mb_now();
    for (size_t off = 0; off + hdr.row_bytes <= bytes; off += hdr.row_bytes)
        memcpy(c + off, a + (bytes - hdr.row_bytes - off), hdr.row_bytes);
    double dt = mb_now() - t0;
    volatile unsigned sink = 0;
    for (size_t off = 0; off < bytes; off += 4096)
        sink += (unsigned char)c[off];
    memcpy_Bps = dt > 0 ? (double)bytes / dt : NAN;
    free(a);
    free(c);
    return 0;
}

/* The feature rows the first `nb` batches of the last pass (s->order,
 * s->epoch) read from storage (misses of the cache), found by sampling
 * those batches again (sampling is a function of seed, epoch and batch).
 * NULL when none. */
static int64_t *miss_rows(struct st *s, long nb, size_t *n_out, char *err, size_t errlen)
{
    struct gnn_sample smp;
    gnn_sample_init(&smp);
    struct gnn_reader *r = gnn_reader_new(s->ds, s->cache, 0);
    int64_t *rows = NULL;
    size_t n = 0, cap = 0;
    if (!r)
        snprintf(err, errlen, "finding the misses again: out of memory");
    for (long b = 0; r && b < nb; b++) {
        const int64_t *seeds;
        size_t k = gnn_batch_seeds(s->order, s->n_train, (size_t)opt.batch, s->run->rank, s->run->nranks, (size_t)b,
                                   &seeds);
        if (k == 0)
            break;
        if (gnn_sample(&smp, &scfg, r, seeds, k, s->epoch, (uint64_t)b) < 0) {
            snprintf(err, errlen, "finding the misses again: sampling batch %ld: %s", b, gnn_reader_error(r));
            break;
        }
        for (size_t i = 0; i < smp.n_nodes; i++) {
            const float *row;
            if (s->cache && gnn_cache_feat(s->cache, (uint64_t)smp.nodes[i], &row) != GNN_TIER_NONE)
                continue;
            if (mb_grow((void **)&rows, &cap, n + 1, sizeof(int64_t)) != 0) {
                snprintf(err, errlen, "finding the misses again: out of memory for %zu rows", n + 1);
                goto out;
            }
            rows[n++] = smp.nodes[i];
        }
    }
out:
    gnn_sample_free(&smp);
    if (r)
        gnn_reader_free(r);
    *n_out = n;
    if (!n) {
        free(rows);
        rows = NULL;
    }
    return rows;
}

/* The rate storage sustains for row reads with `depth` requests per round
 * and the next round submitted before the last one is waited for, as the
 * pipeline's slots keep reads in flight (a barrier between rounds would
 * let the queue drain at every round's tail). The rows are drawn from
 * pool[0..npool), the rows the profile read from storage (the misses the
 * epochs draw from), or uniformly when there is no pool: on an SSD either
 * gives the same rate, but a VM's disk is a file on its host, whose cached
 * blocks read several times faster than the rest, and the epochs re-read
 * their misses (seen: 66 MB/s on uniform rows, 240 MB/s in the epochs). At
 * least 4 rounds, 4096 rows and 0.25 s, so that a few slow moments of a
 * shared disk average out; with `once`, the pool itself, each row once, in
 * order. Bytes/s; NAN with the failed read or allocation in err. */
static double measure_io_rate(struct st *s, size_t depth, const int64_t *pool, size_t npool, int once, char *err,
                              size_t errlen)
{
    if (depth < 1)
        depth = 1;
    if (depth > 65536)
        depth = 65536;
    /* the pipeline is stopped here: two slots lend their row buffers, so
     * the rounds hold at most a slot's rows each (what the budget check
     * counted); without two slots, as many rows of their own */
    int lend = s->nslots >= 2 && s->slot[0].x && s->slot[1].x;
    size_t most = lend ? (s->slot[0].x_rows < s->slot[1].x_rows ? s->slot[0].x_rows : s->slot[1].x_rows)
                       : (size_t)(slot_rows_need() < 512 ? 512 : slot_rows_need());
    if (depth > most)
        depth = most;
    if (once && npool && depth > npool)
        depth = npool;
    struct gnn_reader *r[2] = {gnn_reader_new(s->ds, NULL, 0), gnn_reader_new(s->ds, NULL, 0)};
    int64_t *ids[2] = {malloc(depth * sizeof(int64_t)), malloc(depth * sizeof(int64_t))};
    float *x[2] = {lend ? s->slot[0].x : gnn_alloc_rows(s->ds, depth), lend ? s->slot[1].x : gnn_alloc_rows(s->ds, depth)};
    double bytes = 0, t0 = mb_now(), secs = 0;
    int rc = r[0] && r[1] && ids[0] && ids[1] && x[0] && x[1] && (!once || npool) ? 0 : -1, pending[2] = {0, 0};
    if (rc)
        snprintf(err, errlen, "the storage rate: out of memory for %zu rows", depth);
    size_t count[2] = {0, 0};
    for (uint64_t round = 0; rc == 0; round++) {
        int k = (int)(round & 1);
        secs = mb_now() - t0;
        int more = once ? round * depth < npool : round < 4 || bytes < 4096.0 * (double)hdr.row_bytes || secs < 0.25;
        if (more) {
            count[k] = once && npool - round * depth < depth ? npool - round * depth : depth;
            for (size_t i = 0; i < count[k]; i++)
                ids[k][i] = once    ? pool[round * depth + i]
                            : npool ? pool[gnn_hash4(78, round, i, depth) % npool]
                                    : (int64_t)(gnn_hash4(78, round, i, depth) % hdr.n);
            rc = gnn_gather_submit(r[k], ids[k], count[k], x[k]);
            pending[k] = rc == 0;
            if (rc)
                snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[k]));
        }
        if (rc == 0 && pending[!k]) { /* the previous round, while this one is in flight */
            rc = gnn_gather_wait(r[!k]);
            pending[!k] = 0;
            if (rc)
                snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[!k]));
            bytes += (double)count[!k] * (double)hdr.row_bytes;
        }
        if (!more && !pending[k])
            break;
    }
    secs = mb_now() - t0;
    for (int k = 0; k < 2; k++) {
        if (pending[k] && gnn_gather_wait(r[k]) && rc == 0) {
            snprintf(err, errlen, "the storage rate: %s", gnn_reader_error(r[k]));
            rc = -1;
        }
        free(ids[k]);
        if (x[k] && !lend)
            gnn_free_rows(s->ds, x[k]);
        if (r[k])
            gnn_reader_free(r[k]);
    }
    return rc == 0 && secs > 0 ? bytes / secs : NAN;
}

/* The bound's storage side: the engine's rate on the epoch just run's own
 * misses, read again right after it (untimed), each row once, 512 rows a
 * round and two rounds in flight (4 MiB of buffers: at 20% cache and 8
 * slots, hyperion runs within 16 MiB of a 1 GiB budget). A VM's
 * disk is a file on a shared host: random rows read at 41 MB/s on a cold
 * host cache and 314 MB/s warm within a day, so one rate taken before the
 * epochs bounded them wrongly both ways. Ranks read at once and their rates
 * add up (the disk is shared). NAN where features are not read through the
 * engine or nothing missed. */
static double epoch_miss_rate(struct st *s)
{
    s->miss_read_rows = 0;
    if (!s->ds || gnn_dataset_feat_access(s->ds) != GNN_AIO)
        return NAN;
    size_t n = 0;
    char err[400] = "";
    int64_t *rows = s->epoch_failed ? NULL : miss_rows(s, s->nbatches, &n, err, sizeof(err));
    s->miss_read_rows = n;
    MPI_Barrier(s->run->comm);
    double rate = rows ? measure_io_rate(s, 512, rows, n, 1, err, sizeof(err)) : 0;
    free(rows);
    if (err[0])
        pass_error(s, err);
    agree_error(s, 0);
    if (isnan(rate))
        rate = 0;
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_SUM, s->run->comm);
    return rate > 0 ? rate : NAN;
}

/* The three stage teams; `sample_instances` batches sampled at once. */
static const struct mb_stage *stage_defs(int sample_instances)
{
    static struct mb_stage st[3];
    st[0] = (struct mb_stage){"sample", 1, sample_stage, sample_instances};
    st[1] = (struct mb_stage){"submit", (int)opt.sub_threads, submit_stage, 1};
    st[2] = (struct mb_stage){"complete", (int)opt.comp_threads, complete_stage, 1};
    return st;
}

#define PROFILE_EPOCH 0x70726f66ull /* sampling epoch of the profiling run ("prof") */

/* The next pass runs `epoch`: its order of the training nodes in s->order,
 * and s->epoch, which keys the sampling. */
static void use_epoch(struct st *s, uint64_t epoch)
{
    size_t ntr;
    const uint32_t *tr = gnn_train_ids(s->ds, &ntr);
    gnn_epoch_order(tr, ntr, (uint64_t)s->run->common.seed, epoch, s->order);
    s->epoch = epoch;
}

/* The share of this machine's CPU time the host took since steal0 (from
 * mb_host_steal_s), over dt seconds; NAN where it is not reported, or where
 * the interval is too short to resolve it: /proc/stat counts steal in ticks,
 * and below 20 ticks of the machine's CPU time one tick is over 5% (a 2 ms
 * epoch on 2 CPUs that caught one tick read as 250%). */
static double steal_share(double steal0, double dt)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
    double now = mb_host_steal_s();
    if (ncpu <= 0 || hz <= 0 || dt * (double)ncpu * (double)hz < 20)
        return NAN;
    return (now - steal0) / (dt * (double)ncpu);
}

/* A steal share for the progress lines: "n/a" where steal_share could not
 * resolve it. */
static const char *steal_text(char *buf, size_t len, double share)
{
    if (share == share)
        snprintf(buf, len, "%.1f%%", 100 * share);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

/* Mean of column c of n rows of 4 without stalls: values above 4x the
 * median are left out (a batch another process held up on this shared
 * machine; skewed but real costs, e.g. a hub's long list, stay in). */
static double robust_mean_col(const double *rec, long n, int c)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!v)
        return NAN; /* (profile_run fails the run on it) */
    for (long i = 0; i < n; i++)
        v[i] = rec[4 * i + c];
    double med = mb_median(v, (size_t)(n > 0 ? n : 0)), sum = 0;
    long k = 0;
    for (long i = 0; i < n; i++)
        if (v[i] <= 4 * med)
            sum += v[i], k++;
    free(v);
    return k ? sum / (double)k : med;
}

/* The profile's CPU per batch from the last pass of n batches that took
 * `cpu` process CPU seconds: stage threads, training, the rest. */
static void profile_cpu(struct st *s, double cpu, double n)
{
    struct gnn_profile *f = &s->prof;
    f->cpu_sample = 1e-9 * (double)atomic_load(&s->stage_cpu_ns[0]) / n;
    f->cpu_lookup = 1e-9 * (double)atomic_load(&s->stage_cpu_ns[1]) / n;
    f->cpu_complete = 1e-9 * (double)atomic_load(&s->stage_cpu_ns[2]) / n;
    f->cpu_train = s->c_train / n;
    f->cpu_other = fmax(0, cpu / n - f->cpu_sample - f->cpu_lookup - f->cpu_complete - f->cpu_train);
}

/* The TPC model's profiling run (untimed, before the first epoch), with
 * a throwaway copy of the model (the measured model is untouched):
 * - serial phase: --profile-batches batches with one batch in flight, so
 *   each stage is timed alone. Stage walls are means over the batches
 *   without stalls (robust_mean_col); I/O waits are walls less CPU.
 * - pipelined phase (pipelined systems): as many other batches through the
 *   pipeline itself, for the CPU each stage spends per batch while they
 *   share the cores and caches.
 * CPU times and traffic are plain means (traffic over both phases: with
 * small batches 20 of them read 10% less than an epoch's mean). Then the
 * storage rate, on rows the last phase read from storage. The host steal
 * over the whole run is recorded beside it. Fills s->prof. 0 or -1. */
static int profile_run(struct st *s)
{
    /* (more than an epoch's batches where the training set has them: a
     * longer profile averages a shared host's slow moments out) */
    long nb = opt.profile_batches < s->all_batches ? (long)opt.profile_batches : s->all_batches;
    struct mb_pipe *serial = mb_pipe_new(stage_defs(1), 3, 1, s), *keep_pipe = s->pipe;
    struct gnn_model keep_model = s->model;
    memset(&s->model, 0, sizeof(s->model));
    s->pass_error = 0;
    s->error_msg[0] = 0;
    int bad = !serial || gnn_model_init(&s->model, scfg.hops, hdr.dim, (int)opt.hidden, hdr.classes, (float)opt.lr,
                                        (uint64_t)s->run->common.seed, coll, algo, s->run->nranks) != 0;
    if (bad)
        pass_error(s, "profiling run: out of memory for its pipeline or model");
    if (agree_error(s, bad)) {
        if (serial)
            mb_pipe_free(serial);
        if (!bad)
            gnn_model_free(&s->model);
        s->model = keep_model;
        return -1;
    }
    use_epoch(s, PROFILE_EPOCH);
    double p0 = mb_now(), steal0 = mb_host_steal_s();
    struct gnn_read_stats rs, rs_pipe;
    memset(&rs_pipe, 0, sizeof(rs_pipe));
    s->pipe = serial;
    /* one batch first, untimed: it touches the slot's buffers for the first time */
    int rc = run_pass(s, 1, 0, 0);
    s->epoch = PROFILE_EPOCH + 1; /* other batches than the warm-up's */
    collect_stats(s, &rs, 1);
    s->rec = malloc((size_t)nb * 4 * sizeof(double));
    s->nrec = 0;
    s->rec_cap = s->rec ? nb : 0;
    double c0 = mb_cpu_s(0);
    if (rc == 0)
        rc = run_pass(s, nb, 0, 0);
    double cpu = mb_cpu_s(0) - c0;
    collect_stats(s, &rs, 1);
    struct gnn_profile *f = &s->prof;
    memset(f, 0, sizeof(*f));
    double n = (double)nb, phases = 1;
    f->batches = n;
    f->batch_size = (double)opt.batch;
    f->hops = scfg.hops;
    if (!s->rec && rc == 0) {
        pass_error(s, "profiling run: out of memory for the per-batch stage times");
        rc = -1;
    }
    s->prof_t_source = "means over the batches without stalls (robust_mean_col)";
    if (s->nrec == nb) {
        f->t_sample = robust_mean_col(s->rec, nb, 0);
        f->t_lookup = robust_mean_col(s->rec, nb, 1);
        f->t_complete = robust_mean_col(s->rec, nb, 2);
        f->t_train = robust_mean_col(s->rec, nb, 3);
        if (rc == 0 && (isnan(f->t_sample) || isnan(f->t_lookup) || isnan(f->t_complete) || isnan(f->t_train))) {
            pass_error(s, "profiling run: out of memory for the stage-time means");
            rc = -1;
        }
    } else { /* (a batch without seeds) */
        s->prof_t_source = "plain means of the stages' busy time (a batch had no seeds: no per-batch times)";
        f->t_sample = mb_pipe_stage_busy(serial, 0) / n;
        f->t_lookup = mb_pipe_stage_busy(serial, 1) / n;
        f->t_complete = mb_pipe_stage_busy(serial, 2) / n;
        f->t_train = s->t_train / n;
    }
    free(s->rec);
    s->rec = NULL;
    s->pipe = keep_pipe;
    mb_pipe_free(serial);
    profile_cpu(s, cpu, n);
    f->io_sample = fmax(0, f->t_sample - f->cpu_sample);
    f->io_complete = fmax(0, f->t_complete - f->cpu_complete);
    rc = agree_error(s, rc) ? -1 : 0; /* (every rank takes the same path from here) */
    if (rc == 0 && s->nslots > 1) { /* the pipelined phase */
        /* every slot's row buffer at the size the budget allows for it
         * (the largest presampled batch), touched: otherwise the lookups
         * here page-fault into buffers still growing, which the epochs'
         * steady state does not (8 ms of lookup CPU per batch against 3) */
        for (int i = 0; i < s->nslots && rc == 0; i++) {
            struct slot *sl = &s->slot[i];
            rc = slot_rows(s, sl, (size_t)s->max_batch_rows, -1) ? -1 : 0;
            if (rc)
                pass_error(s, sl->err);
            else if (sl->x)
                memset(sl->x, 0, sl->x_rows * hdr.row_bytes);
        }
        rc = agree_error(s, rc) ? -1 : 0;
        /* then, untimed, two batches per slot, as in the epochs' steady state */
        use_epoch(s, PROFILE_EPOCH + 2);
        if (rc == 0)
            rc = run_pass(s, 2 * s->nslots < s->nbatches ? 2 * s->nslots : s->nbatches, 0, 0);
        collect_stats(s, &rs_pipe, 1); /* (the warm-up's traffic is left out) */
        use_epoch(s, PROFILE_EPOCH + 3);
        c0 = mb_cpu_s(0);
        if (rc == 0)
            rc = run_pass(s, nb, 0, 0);
        cpu = mb_cpu_s(0) - c0;
        collect_stats(s, &rs_pipe, 1);
        profile_cpu(s, cpu, n);
        phases = 2;
    }
    f->ssd_bytes = (double)(rs.ssd_bytes + rs_pipe.ssd_bytes) / (phases * n);
    f->ssd_requests = (double)(rs.ssd_requests + rs_pipe.ssd_requests) / (phases * n);
    f->ssd_tx = (double)(rs.ssd_tx + rs_pipe.ssd_tx) / (phases * n);
    f->mem_tx = (double)(rs.mem_tx + rs_pipe.mem_tx) / (phases * n);
    gnn_model_free(&s->model);
    s->model = keep_model;
    if (rc == 0 && f->ssd_requests > 0) { /* the depth the pipeline keeps: up to two batches' reads */
        size_t npool;
        char err[400] = "";
        int64_t *pool = miss_rows(s, nb < 16 ? nb : 16, &npool, err, sizeof(err));
        if (!err[0])
            f->io_rate = measure_io_rate(s, (size_t)llround(f->ssd_requests * (s->nslots > 1 ? 2 : 1)), pool,
                                         npool, 0, err, sizeof(err));
        s->prof_pool_rows = npool;
        free(pool);
        if (err[0]) {
            pass_error(s, err);
            rc = -1;
        }
    }
    rc = agree_error(s, rc) ? -1 : 0;
    s->prof_steal = steal_share(steal0, mb_now() - p0);
    s->profiled = rc == 0;
    if (s->profiled && s->run->rank == 0) {
        char st[16];
        printf("# profile %s: %ld batches serial%s, per batch ms: sample %.2f lookup %.2f complete %.2f train %.2f "
               "(waits: sample %.2f complete %.2f); cpu ms%s: sample %.2f lookup %.2f complete %.2f train %.2f "
               "other %.2f; read %.0f B in %.0f requests, io rate %.1f MB/s (%zu of the profile's row reads); "
               "host steal %s\n",
               sys_names[s->sys], nb, phases > 1 ? " + pipelined" : "", 1e3 * f->t_sample, 1e3 * f->t_lookup,
               1e3 * f->t_complete, 1e3 * f->t_train, 1e3 * f->io_sample, 1e3 * f->io_complete,
               phases > 1 ? " (pipelined)" : "", 1e3 * f->cpu_sample, 1e3 * f->cpu_lookup, 1e3 * f->cpu_complete,
               1e3 * f->cpu_train, 1e3 * f->cpu_other, f->ssd_bytes, f->ssd_requests, f->io_rate / 1e6,
               s->prof_pool_rows, steal_text(st, sizeof(st), s->prof_steal));
        fflush(stdout);
    }
    return rc;
}

/* ---- setup / iterate / check / teardown ----------------------------------- */

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
        p.scale = (int)opt.scale;
        p.edge_factor = (int)opt.edge_factor;
        p.dim = (int)opt.dim;
        p.classes = (int)opt.classes;
        p.seed = (uint64_t)run->common.seed;
        p.train_frac = opt.train_frac;
        p.val_frac = opt.train_frac;
        p.signal = (float)opt.signal;
        p.ndev = (int)opt.files;
        p.stripe = opt.stripe;
        p.nthreads = (int)opt.gen_threads;
        p.quiet = run->common.quiet;
        char err[512];
        double t0 = mb_now();
        if (gnn_generate(opt.data, &p, err, sizeof(err)) != 0) {
            mb_warn("--generate: %s", err);
            rc = -1;
        }
        mb_kv_dbl(&run->result.config, "generate_s", mb_now() - t0);
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
    s->sys = (enum sys)(intptr_t)c->user;
    s->verify = run->common.check ? 1 : 0;
    if (budget_broken[0]) { /* (the systems after inmem would run outside it) */
        mb_warn("%s: --mem-budget: %s", c->name, budget_broken);
        return -1;
    }
    char berr[300];
    if (s->sys == S_INMEM && budget_leave(berr, sizeof(berr)) != 0) {
        mb_warn("%s: leaving the budget (inmem runs outside it): %s", c->name, berr);
        return -1;
    }
    /* this case's reads are charged to it: nothing of the data in the page cache */
    char path[1200], err[512];
    snprintf(path, sizeof(path), "%s/graph.meta", opt.data);
    mb_drop_file_cache(path);
    for (unsigned d = 0; d < hdr.ndev; d++) {
        snprintf(path, sizeof(path), "%s/data.%u", opt.data, d);
        mb_drop_file_cache(path);
    }
    struct gnn_open_opts oo;
    memset(&oo, 0, sizeof(oo));
    enum gnn_access acc = s->sys == S_INMEM ? GNN_MEM : IS_MMAP(s->sys) ? GNN_MMAP : GNN_AIO;
    oo.topo = oo.feat = acc;
    oo.aio_threads = (int)opt.io_threads;
    s->ds = gnn_open(opt.data, &oo, err, sizeof(err));
    if (!s->ds) {
        mb_warn("%s: %s", c->name, err);
        return -1;
    }
    if (s->sys == S_MMAP_RANDOM) {
        int e = gnn_map_advise(s->ds, GNN_ADVICE_RANDOM);
        if (e) {
            mb_warn("%s: madvise(MADV_RANDOM): %s", c->name, strerror(-e));
            return -1;
        }
    }
    int cached = s->sys == S_HYPERION || s->sys == S_TOPO_FIRST || s->sys == S_FEAT_FIRST || s->sys == S_NOPIPE;
    if (cached && opt.cache_dev + opt.cache_host > 0) {
        struct gnn_reader *r = gnn_reader_new(s->ds, NULL, s->verify);
        struct gnn_hotness h;
        double t0 = mb_now();
        if (gnn_presample(r, &scfg, (size_t)opt.batch, 0, &h) != 0) {
            mb_warn("%s: presampling: %s", c->name, gnn_reader_error(r));
            gnn_reader_free(r);
            return -1;
        }
        s->presample_s = mb_now() - t0;
        s->max_batch_rows = h.max_batch_rows;
        struct gnn_cache_cfg cc;
        memset(&cc, 0, sizeof(cc));
        cc.cap[GNN_TIER_DEV] = opt.cache_dev;
        cc.cap[GNN_TIER_HOST] = opt.cache_host;
        cc.fill_rest = opt.cache_fill == 0;
        if (cc.fill_rest && budget_on) {
            /* the fill may not push the run over its budget: what is
             * charged now, the cache's index, every slot's feature rows
             * (each slot ends up holding the largest batch it saw, grown
             * by 1/4 as slot_rows grows it: the largest presampled batch,
             * a quarter more for other epochs' batches) and 64 MiB of slack */
            int nsl = (int)opt.slots; /* nopipe too: the same cache as hyperion */
            double need = (double)mb_budget_usage(&budget) + 16.0 * (double)hdr.n +
                          (double)nsl * (double)h.max_batch_rows * 1.25 * 1.25 * (double)hdr.row_bytes +
                          (double)(64u << 20) + (double)opt.cache_dev;
            double lim = (double)opt.mem_budget - need;
            s->fill_limit = lim > 1 ? (uint64_t)lim : 1;
            cc.fill_limit[GNN_TIER_HOST] = s->fill_limit;
        }
        cc.policy = s->sys == S_TOPO_FIRST ? GNN_PLACE_TOPO_FIRST
                    : s->sys == S_FEAT_FIRST ? GNN_PLACE_FEAT_FIRST
                                             : GNN_PLACE_HYPERION;
        t0 = mb_now();
        s->cache = gnn_cache_build(r, &h, &cc, err, sizeof(err));
        s->cache_build_s = mb_now() - t0;
        gnn_hotness_free(&h);
        gnn_reader_free(r);
        if (!s->cache) {
            mb_warn("%s: cache: %s", c->name, err);
            return -1;
        }
        gnn_cache_info(s->cache, &s->cinfo);
    }
    s->nslots = s->sys == S_NOPIPE ? 1 : (int)opt.slots;
    char hit[300];
    if (budget_hit(hit, sizeof(hit))) {
        mb_warn("%s: setting up (opening, presampling, the cache): %s", c->name, hit);
        return -1;
    }
    if (budget_on && s->max_batch_rows) {
        /* every slot comes to hold the largest batch's rows (more, as it
         * grows by a quarter): where even that cannot fit beside what is
         * charged now, the cgroup would kill the run mid-epoch (seen:
         * --slots 12 beside an 819 MiB cache under 1 GiB) */
        double held = (double)mb_budget_anon(&budget), slot = (double)s->max_batch_rows * (double)hdr.row_bytes;
        if (held + s->nslots * slot > (double)opt.mem_budget) {
            mb_warn("%s: --slots %d: %d slots of the largest presampled batch (%llu rows, %.1f MiB each) beside the "
                    "%.0f MiB held now (the cache included) exceed --mem-budget (%.0f MiB); give fewer --slots, a "
                    "smaller --cache-host or a larger --mem-budget",
                    c->name, s->nslots, s->nslots, (unsigned long long)s->max_batch_rows, slot / 1048576.0,
                    held / 1048576.0, (double)opt.mem_budget / 1048576.0);
            return -1;
        }
    }
    /* the overlap needs the engine (memory and mmap copy in submit) and a pipeline */
    s->overlap = opt.overlap == 0 && s->nslots > 1 && gnn_dataset_feat_access(s->ds) == GNN_AIO;
    s->nshares = (int)(opt.sub_threads > opt.comp_threads ? opt.sub_threads : opt.comp_threads);
    size_t seeds_cap = (size_t)opt.batch;
    for (int i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slot[i];
        gnn_sample_init(&sl->smp);
        int ok = (sl->labels = malloc(seeds_cap * sizeof(int32_t))) != NULL;
        ok = ok && (sl->srd = gnn_reader_new(s->ds, s->cache, s->verify)) != NULL;
        for (int h = 0; ok && s->overlap && h < scfg.hops; h++)
            ok = (sl->hrd[h] = gnn_reader_new(s->ds, s->cache, s->verify)) != NULL;
        for (int k = 0; ok && k < s->nshares; k++)
            ok = (sl->rd[k] = gnn_reader_new(s->ds, s->cache, s->verify)) != NULL;
        if (!ok) {
            mb_warn("%s: out of memory for slot %d's readers", c->name, i);
            return -1;
        }
    }
    s->pipe = mb_pipe_new(stage_defs((int)opt.sample_inst), 3, s->nslots, s);
    size_t ntr;
    gnn_train_ids(s->ds, &ntr);
    s->n_train = ntr;
    s->order = malloc((ntr ? ntr : 1) * sizeof(int64_t));
    size_t nval;
    const uint32_t *val = gnn_val_ids(s->ds, &nval);
    s->n_eval = nval < (size_t)opt.eval_nodes ? nval : (size_t)opt.eval_nodes;
    s->eval_ids = malloc((s->n_eval ? s->n_eval : 1) * sizeof(int64_t));
    if (!s->pipe || !s->order || !s->eval_ids) {
        mb_warn("%s: out of memory for the pipeline and the node orders", c->name);
        return -1;
    }
    for (size_t i = 0; i < s->n_eval; i++)
        s->eval_ids[i] = val[i];
    long nb = (long)gnn_num_batches(ntr, (size_t)opt.batch, run->rank, run->nranks);
    MPI_Allreduce(MPI_IN_PLACE, &nb, 1, MPI_LONG, MPI_MAX, run->comm);
    s->all_batches = nb;
    if (opt.epoch_batches > 0 && opt.epoch_batches < nb)
        nb = (long)opt.epoch_batches;
    s->nbatches = nb;
    if (gnn_model_init(&s->model, scfg.hops, hdr.dim, (int)opt.hidden, hdr.classes, (float)opt.lr,
                       (uint64_t)run->common.seed, coll, algo, run->nranks) != 0) {
        mb_warn("%s: model: out of memory", c->name);
        return -1;
    }
    if (s->sys != S_INMEM && !IS_MMAP(s->sys) && measure_rates(s, err, sizeof(err)) != 0) {
        mb_warn("%s: %s", c->name, err);
        return -1;
    }
    if (measure_memcpy() != 0) {
        mb_warn("%s: the host copy rate: out of memory for 128 MiB of buffers", c->name);
        return -1;
    }
    if (budget_hit(hit, sizeof(hit))) {
        mb_warn("%s: setting up: %s", c->name, hit);
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
    use_epoch(s, (uint64_t)iter);
    struct gnn_read_stats drop;
    collect_stats(s, &drop, 1);
}

static void epoch_report(struct st *s, double epoch_s);

/* An error in a pass (I/O, corrupted topology, memory): a failure
 * whatever --check says. The ranks that hit it name it in one line; the
 * result file records it, and the harness stops the run (exit 1) without
 * a sample of the epoch. Returns 1. */
static int epoch_error(struct st *s, const char *what)
{
    if (s->error_msg[0])
        mb_warn("%s/%s: %s: %s", sys_names[s->sys], ds_label, what, s->error_msg);
    if (s->run->rank == 0) {
        char key[200], msg[800];
        snprintf(key, sizeof(key), "%s/error", sys_names[s->sys]);
        snprintf(msg, sizeof(msg), "%s: %s", what, s->error_msg[0] ? s->error_msg : "on another rank");
        mb_kv_str(&s->run->result.config, key, msg);
    }
    s->epoch_failed = 1;
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
                s->epoch_failed = 1;
                snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", err);
            } else {
                hdr = *gnn_dataset_header(ds);
                gnn_close(ds);
            }
        }
        return 0;
    }
    /* the TPC model's profiling run, untimed, right before the first epoch
     * (in the state the epochs run in) */
    if (!s->profiled && !IS_MMAP(s->sys) && profile_run(s) != 0) {
        if (s->pass_error) /* (not a row failing verification: that is the check's) */
            return epoch_error(s, "the profiling run");
        s->epoch_failed = 1;
        return 0;
    }
    if (s->profiled && s->epoch != (uint64_t)iter) { /* the profile left its own order */
        use_epoch(s, (uint64_t)iter);
        struct gnn_read_stats drop;
        collect_stats(s, &drop, 1);
    }
    double t0 = mb_now(), c0 = mb_cpu_s(0), steal0 = mb_host_steal_s();
    s->epoch_failed = run_pass(s, s->nbatches, 0, 0) != 0;
    double dt = mb_now() - t0;
    if (s->pass_error) { /* the epoch's time is no sample: it did not run through */
        char what[64];
        snprintf(what, sizeof(what), "epoch %lld", iter);
        return epoch_error(s, what);
    }
    s->cpu_s = mb_cpu_s(0) - c0;
    s->steal = steal_share(steal0, dt);
    *elapsed = dt; /* the epoch only: the held-out scoring below is untimed */
    s->last_epoch_s = dt;
    collect_stats(s, &s->rs, 0);
    for (int k = 0; k < 3; k++)
        s->busy[k] = mb_pipe_stage_busy(s->pipe, k);
    s->pass_error = 0;
    s->miss_rate = epoch_miss_rate(s);
    if (s->pass_error) {
        char what[64];
        snprintf(what, sizeof(what), "epoch %lld's misses read again", iter);
        return epoch_error(s, what);
    }
    s->wait_s = mb_pipe_wait_time(s->pipe);
    /* held-out accuracy (untimed) */
    struct gnn_read_stats keep = s->rs;
    double tt = s->t_train, ct = s->c_train;
    long long cns[3];
    for (int k = 0; k < 3; k++)
        cns[k] = atomic_load(&s->stage_cpu_ns[k]);
    if (!s->epoch_failed && s->n_eval)
        s->epoch_failed = run_pass(s, eval_batches(s), 1, 0) != 0;
    if (s->pass_error) {
        char what[64];
        snprintf(what, sizeof(what), "epoch %lld's held-out scoring", iter);
        return epoch_error(s, what);
    }
    s->rs = keep;
    s->t_train = tt;
    s->c_train = ct;
    for (int k = 0; k < 3; k++)
        atomic_store(&s->stage_cpu_ns[k], cns[k]);
    epoch_report(s, dt);
    (void)iter;
    return 0;
}

static const char *tier_rate(char *buf, size_t len, uint64_t a, uint64_t b, uint64_t total)
{
    snprintf(buf, len, "%.3f/%.3f", total ? (double)a / (double)total : 0, total ? (double)b / (double)total : 0);
    return buf;
}

/* The cores this process may run on (its affinity mask: mpirun binds a
 * rank to one core unless told otherwise), which the stages share. */
static int usable_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* TPC model for this system (gnn_tpc_predict_pipeline): Hyperion's
 * max(T_ssd, T_pcie, T_train) per batch plus the sampler's stage and the
 * CPU shared by every thread, inputs from the serial profiling run; nopipe
 * adds the stages up. With --profile the storage rate is the profile's
 * per-SSD rate x the data files; otherwise everything is measured here. */
static double predict_epoch(const struct st *s, const char **bound, struct gnn_prediction *pr)
{
    *bound = "n/a";
    memset(pr, 0, sizeof(*pr));
    if (!s->profiled || IS_MMAP(s->sys))
        return NAN;
    struct gnn_hw_profile p;
    memset(&p, 0, sizeof(p));
    struct gnn_profile f = s->prof;
    char err[256];
    if (opt.profile && gnn_profile_load(opt.profile, &p, err, sizeof(err)) == 0) {
        f.io_rate = p.ssd_bw * (double)(hdr.ndev ? hdr.ndev : 1);
    } else {
        snprintf(p.name, sizeof(p.name), "this-machine");
        p.cls = 64;
        p.ssds = 512;
        p.ssd_bw = f.io_rate / (hdr.ndev ? hdr.ndev : 1);
        p.pcie_bw = isfinite(memcpy_Bps) ? memcpy_Bps : 0;
        p.max_ssd = 64;
        p.n_gpu = 1;
        p.n_mac = 1;
        p.c_mac = 14098;
        p.c_ssd = 1;
    }
    p.n_ssd = (int)hdr.ndev;
    gnn_tpc_predict_pipeline(&p, &f, usable_cores(), s->nslots, pr);
    *bound = gnn_bound_name(pr->bound);
    return pr->t_batch * (double)s->nbatches;
}

static void epoch_report(struct st *s, double epoch_s)
{
    struct mb_run *run = s->run;
    const struct gnn_read_stats *r = &s->rs;
    double v[4] = {(double)r->ssd_bytes, (double)r->verify_failures, (double)r->verified_rows, (double)s->epoch_failed};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_SUM, run->comm);
    const char *bound;
    struct gnn_prediction pr;
    double pred = predict_epoch(s, &bound, &pr);
    double rate = s->miss_rate > 0 ? s->miss_rate : rand_read_Bps;
    double miss_s = rate > 0 ? (double)r->ssd_bytes / rate : NAN;
    /* inmem is its own bound; the others are bound by inmem (measured
     * first) and by their storage reads at the engine's rate on the epoch's
     * own misses (mmap: the random-read rate measured at setup) */
    double lower = s->sys == S_INMEM ? epoch_s : isnan(inmem_epoch_s) ? miss_s : fmax(inmem_epoch_s, miss_s);
    if (run->rank != 0)
        return;
    char ft[32], tt[32], st[16], rt[48] = "";
    if (s->sys != S_INMEM && rate > 0)
        snprintf(rt, sizeof(rt), " (storage at %.1f MB/s)", rate / 1e6);
    double nb = (double)s->nbatches;
    printf("# epoch %lld %s: %.3f s, %.2f batches/s, loss %.4f, train acc %.4f, val acc %.4f, feat hit dev/host %s, "
           "topo hit dev/host %s, read %.1f MB, stages/batch ms: sample %.2f submit %.2f complete %.2f train %.2f, "
           "cpu/batch ms: sample %.2f submit %.2f complete %.2f train %.2f all %.2f, "
           "verified %.0f rows (%.0f bad), model %.3f s (%s), bound %.3f s%s, host steal %s\n",
           s->epoch_idx, sys_names[s->sys], epoch_s, nb / epoch_s, s->loss, s->acc_train, s->acc_val,
           tier_rate(ft, sizeof(ft), r->feat_dev_hits, r->feat_host_hits, r->feat_rows),
           tier_rate(tt, sizeof(tt), r->topo_dev_hits, r->topo_host_hits, r->topo_lists), v[0] / 1e6,
           1e3 * s->busy[0] / nb, 1e3 * s->busy[1] / nb,
           1e3 * s->busy[2] / nb, 1e3 * s->t_train / nb,
           1e-6 * (double)atomic_load(&s->stage_cpu_ns[0]) / nb, 1e-6 * (double)atomic_load(&s->stage_cpu_ns[1]) / nb,
           1e-6 * (double)atomic_load(&s->stage_cpu_ns[2]) / nb, 1e3 * s->c_train / nb, 1e3 * s->cpu_s / nb, v[2], v[1],
           pred, bound, lower, rt, steal_text(st, sizeof(st), s->steal));
    fflush(stdout);
    char key[200];
    struct mb_kvlist *c = &run->result.config;
#define K(fmt_) (snprintf(key, sizeof(key), "%s/epoch%lld/" fmt_, sys_names[s->sys], s->epoch_idx), key)
    mb_kv_dbl(c, K("time_s"), epoch_s);
    mb_kv_dbl(c, K("batches_per_s"), nb / epoch_s);
    mb_kv_dbl(c, K("loss"), s->loss);
    mb_kv_dbl(c, K("train_acc"), s->acc_train);
    mb_kv_dbl(c, K("val_acc"), s->acc_val);
    mb_kv_dbl(c, K("feat_hit_dev"), r->feat_rows ? (double)r->feat_dev_hits / (double)r->feat_rows : 0);
    mb_kv_dbl(c, K("feat_hit_host"), r->feat_rows ? (double)r->feat_host_hits / (double)r->feat_rows : 0);
    mb_kv_dbl(c, K("topo_hit_dev"), r->topo_lists ? (double)r->topo_dev_hits / (double)r->topo_lists : 0);
    mb_kv_dbl(c, K("topo_hit_host"), r->topo_lists ? (double)r->topo_host_hits / (double)r->topo_lists : 0);
    mb_kv_int(c, K("storage_bytes"), (long long)v[0]);
    mb_kv_int(c, K("ssd_requests"), (long long)r->ssd_requests);
    mb_kv_dbl(c, K("mem_tx"), (double)r->mem_tx);
    mb_kv_dbl(c, K("ssd_tx"), (double)r->ssd_tx);
    mb_kv_dbl(c, K("stage_sample_s"), s->busy[0]);
    mb_kv_dbl(c, K("stage_submit_s"), s->busy[1]);
    mb_kv_dbl(c, K("stage_complete_s"), s->busy[2]);
    mb_kv_dbl(c, K("stage_train_s"), s->t_train);
    mb_kv_dbl(c, K("cpu_s"), s->cpu_s);
    mb_kv_dbl(c, K("host_steal"), s->steal);
    mb_kv_dbl(c, K("miss_read_Bps"), rate);
    mb_kv_dbl(c, K("miss_read_s"), miss_s);
    mb_kv_int(c, K("miss_read_rows"), (long long)s->miss_read_rows);
    mb_kv_int(c, K("feat_miss_rows"), (long long)r->feat_misses);
    mb_kv_dbl(c, K("train_wait_s"), s->wait_s);
    mb_kv_dbl(c, K("allreduce_s"), s->model.allreduce_s);
    mb_kv_dbl(c, K("model_s"), pred);
    mb_kv_dbl(c, K("model_t_ssd_s"), pr.t_ssd * nb);
    mb_kv_dbl(c, K("model_t_pcie_s"), pr.t_pcie * nb);
    mb_kv_dbl(c, K("model_t_train_s"), pr.t_train * nb);
    mb_kv_dbl(c, K("model_t_sample_s"), pr.t_sample * nb);
    mb_kv_dbl(c, K("model_t_cpu_s"), pr.t_cpu * nb);
    mb_kv_dbl(c, K("model_t_pipe_s"), pr.t_pipe * nb);
    mb_kv_str(c, K("model_bound"), bound);
    mb_kv_dbl(c, K("bound_s"), lower);
    mb_kv_dbl(c, K("verified_rows"), v[2]);
#undef K
}

static int check(void *st, long long iter, char *msg, size_t len)
{
    struct st *s = st;
    (void)iter;
    if (opt.generate) {
        if (s->epoch_failed) {
            snprintf(msg, len, "the generated dataset does not reopen: %s", s->fail_msg);
            return 1;
        }
        return 0;
    }
    if (s->epoch_failed) {
        snprintf(msg, len, "%s", s->fail_msg[0] ? s->fail_msg : "another rank failed");
        return 1;
    }
    if (s->rs.verify_failures) {
        snprintf(msg, len, "%llu feature rows failed verification (first: node %llu)",
                 (unsigned long long)s->rs.verify_failures, (unsigned long long)s->rs.first_bad_node);
        return 1;
    }
    if (s->verify && s->rs.feat_rows && !s->rs.verified_rows) {
        snprintf(msg, len, "no feature row was verified");
        return 1;
    }
    return 0;
}

static double model(struct mb_run *run, const struct mb_case *c)
{
    (void)c;
    if (opt.generate || !run->result.ncases)
        return NAN;
    const struct mb_case_result *me = &run->result.cases[run->result.ncases - 1];
    double v = NAN;
    const struct mb_kv *kv = NULL;
    char key[200];
    enum sys sys = (enum sys)(intptr_t)c->user;
    if (sys == S_INMEM)
        inmem_epoch_s = me->stats.median;
    /* the last epoch's prediction */
    for (long long e = run->common.warmup + run->common.iters - 1; e >= 0 && !kv; e--) {
        snprintf(key, sizeof(key), "%s/epoch%lld/model_s", sys_names[sys], e);
        kv = mb_kv_get(&run->result.config, key);
    }
    if (kv)
        v = kv->d;
    return v;
}

static void teardown(void *st)
{
    struct st *s = st;
    if (!s)
        return;
    struct mb_run *run = s->run;
    if (!opt.generate && run->rank == 0) {
        struct mb_kvlist *c = &run->result.config;
        char key[200];
#define K(name) (snprintf(key, sizeof(key), "%s/%s", sys_names[s->sys], name), key)
        mb_kv_dbl(c, K("presample_s"), s->presample_s);
        mb_kv_dbl(c, K("cache_build_s"), s->cache_build_s);
        mb_kv_str(c, K("access"), s->ds ? gnn_access_name(gnn_dataset_feat_access(s->ds)) : "");
        mb_kv_int(c, K("slots"), s->nslots);
        mb_kv_int(c, K("sample_instances"), opt.sample_inst);
        mb_kv_str(c, K("overlap"), s->overlap ? "intra-batch" : "none");
        if (s->ds && IS_MMAP(s->sys)) {
            mb_kv_str(c, K("mmap_advice"), gnn_map_advice_name(s->ds));
            mb_kv_int(c, K("read_ahead_kb"), read_ahead_kb());
        }
        mb_kv_int(c, K("dataset_mem_bytes"), s->ds ? (long long)gnn_dataset_mem_bytes(s->ds) : 0);
        if (s->ds && gnn_dataset_aio(s->ds)) { /* the engine as it ran, fallbacks included */
            struct mb_aio_info ai;
            mb_aio_info(gnn_dataset_aio(s->ds), &ai);
            mb_kv_str(c, K("engine"), ai.engine);
            mb_kv_int(c, K("engine_direct"), ai.direct);
            mb_kv_str(c, K("engine_fallback"), ai.fallback && ai.fallback[0] ? ai.fallback : "none");
        }
        if (s->cache) {
            mb_kv_str(c, K("placement"), s->sys == S_TOPO_FIRST ? "topo-first" : s->sys == S_FEAT_FIRST ? "feat-first" : "hyperion");
            for (int t = 1; t <= 2; t++) {
                const char *tn = t == 1 ? "dev" : "host";
                char k2[64];
                snprintf(k2, sizeof(k2), "cache_%s_topo_bytes", tn);
                mb_kv_int(c, K(k2), (long long)s->cinfo.topo_bytes[t]);
                snprintf(k2, sizeof(k2), "cache_%s_feat_bytes", tn);
                mb_kv_int(c, K(k2), (long long)s->cinfo.feat_bytes[t]);
                snprintf(k2, sizeof(k2), "cache_%s_mem_bytes", tn);
                mb_kv_int(c, K(k2), (long long)gnn_cache_mem_bytes(s->cache, (enum gnn_tier)t));
            }
            mb_kv_str(c, K("cache_fill"), opt.cache_fill == 0 ? "degree" : "none");
            mb_kv_int(c, K("cache_fill_limit_bytes"), (long long)s->fill_limit);
            mb_kv_int(c, K("presample_max_batch_rows"), (long long)s->max_batch_rows);
            mb_kv_dbl(c, K("cache_pred_hit_feat"), s->cinfo.hit_feat[1] + s->cinfo.hit_feat[2]);
            mb_kv_dbl(c, K("cache_pred_hit_topo"), s->cinfo.hit_topo[1] + s->cinfo.hit_topo[2]);
            mb_kv_dbl(c, K("cache_pred_tx_mem"), s->cinfo.tx_mem);
            mb_kv_dbl(c, K("cache_pred_tx_ssd"), s->cinfo.tx_ssd);
        }
        if (budget_on && s->sys != S_INMEM) {
            mb_kv_int(c, K("budget_peak_bytes"), (long long)mb_budget_peak(&budget));
            mb_kv_int(c, K("budget_limit_hits"), (long long)mb_budget_limit_hits(&budget));
        }
        const struct gnn_profile *f = &s->prof;
        const struct {
            const char *k;
            double v;
        } pk[] = {{"batches", f->batches}, {"t_sample_s", f->t_sample}, {"t_lookup_s", f->t_lookup},
                  {"t_complete_s", f->t_complete}, {"t_train_s", f->t_train}, {"io_sample_s", f->io_sample},
                  {"io_complete_s", f->io_complete}, {"cpu_sample_s", f->cpu_sample},
                  {"cpu_lookup_s", f->cpu_lookup}, {"cpu_complete_s", f->cpu_complete},
                  {"cpu_train_s", f->cpu_train}, {"cpu_other_s", f->cpu_other}, {"ssd_bytes", f->ssd_bytes},
                  {"ssd_requests", f->ssd_requests}, {"ssd_tx", f->ssd_tx}, {"mem_tx", f->mem_tx},
                  {"io_rate_Bps", f->io_rate}};
        for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++) {
            char k2[64];
            snprintf(k2, sizeof(k2), "profile/%s", pk[i].k); /* per batch, from the profiling run */
            mb_kv_dbl(c, K(k2), pk[i].v);
        }
        if (s->profiled) {
            mb_kv_str(c, K("profile/t_source"), s->prof_t_source ? s->prof_t_source : "");
            mb_kv_dbl(c, K("profile/host_steal"), s->prof_steal);
            mb_kv_int(c, K("profile/io_rate_rows"), (long long)s->prof_pool_rows);
        }
        mb_kv_dbl(c, K("engine_random_read_Bps"), rand_read_Bps);
        mb_kv_dbl(c, K("memcpy_Bps"), memcpy_Bps);
#undef K
    }
    if (s->pipe)
        mb_pipe_free(s->pipe);
    for (int i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slot[i];
        gnn_sample_free(&sl->smp);
        if (s->ds)
            gnn_free_rows(s->ds, sl->x);
        free(sl->labels);
        for (int k = 0; k < s->nshares; k++)
            gnn_reader_free(sl->rd[k]);
        gnn_reader_free(sl->srd);
        for (int h = 0; h < GNN_MAX_HOPS; h++)
            gnn_reader_free(sl->hrd[h]);
    }
    gnn_cache_free(s->cache);
    if (s->model.nlayers)
        gnn_model_free(&s->model);
    if (s->ds)
        gnn_close(s->ds);
    free(s->order);
    free(s->eval_ids);
    if (!opt.generate && s->sys == S_INMEM)
        budget_enter();
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
    return mb_main(&bench, argc, argv);
}
