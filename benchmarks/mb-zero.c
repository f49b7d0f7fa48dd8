/* mb-zero: model-sharded data parallelism (ZeRO-3 and DisDP, issue 19) on
 * a GPT from nn/: W workers, K switch ranks, N parameter servers; the mode
 * (zero/'s ops table) says how a step gathers parameters, reduces
 * gradients and runs Adam. One case; each iteration is one synchronous
 * training step of the global batch. Validated by default: after every
 * step rank 0 runs the same training on one rank (every micro-batch in
 * turn, zero3-serial on MPI_COMM_SELF) and every layer's gathered fp32
 * parameters must equal it bit for bit with --agg fixed, or within a
 * relative error of 1e-5 with fp32 sums (zero/README.md argues it). */
#include "harness/harness.h"
#include "../zero/zero.h"
#include "../offload/aio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    char *model, *mode, *link, *dir, *dump;
    long long batch, micro, workers, sw, ps, adam_threads, compute_threads, files;
    int compute_got[2];       /* this rank's OpenBLAS and OpenMP threads after --compute-threads */
    int agg, progress, trace, interference, paper_table;
    size_t mem_budget;
    struct zero_opts zo;
    const struct zero_mode_ops *ops;
    int link_auto;
} opt;

static const struct mb_opt zero_opts_table[] = {
    {"model", 0, MB_OPT_STR, &opt.model, "gpt-tiny", NULL, 0, 0,
     "a preset (gpt-tiny, gpt-small, ...) or layers=,hidden=,heads=,seq=,vocab= (after a preset: overrides)", "SPEC"},
    {"mode", 0, MB_OPT_STR, &opt.mode, "zero3-serial", NULL, 0, 0, "how a step runs (zero/modes.def)", "MODE"},
    {"batch", 0, MB_OPT_INT, &opt.batch, "0", NULL, 0, 1 << 20,
     "global batch in sequences, a multiple of --micro x workers (0: one micro-batch per worker)", "N"},
    {"micro", 0, MB_OPT_INT, &opt.micro, "1", NULL, 1, 1 << 16, "sequences per micro-batch", "N"},
    {"workers", 0, MB_OPT_INT, &opt.workers, "0", NULL, 0, 1 << 20, "workers W (0: the ranks left after --switch and --ps)", "W"},
    {"switch", 0, MB_OPT_INT, &opt.sw, "0", NULL, 0, 1 << 20, "switch (aggregator) ranks K", "K"},
    {"ps", 0, MB_OPT_INT, &opt.ps, "0", NULL, 0, 1 << 20, "parameter-server ranks N", "N"},
    {"agg", 0, MB_OPT_CHOICE, &opt.agg, "fp32", "fp32|fixed", 0, 0,
     "gradient sums: fp32, or int32 fixed point (exact, order-independent: bit-identical across modes)", "HOW"},
    {"progress", 0, MB_OPT_CHOICE, &opt.progress, "poll", "poll|thread", 0, 0,
     "who advances overlapped collectives: the compute thread between GEMMs and layers, or a progress thread", "WHO"},
    {"link-gbps", 0, MB_OPT_STR, &opt.link, "0", NULL, 0, 0,
     "pace every worker's sends per direction at R (1e9 B/s); auto: wire time per layer = compute; 0: off", "R|auto"},
    {"adam-threads", 0, MB_OPT_INT, &opt.adam_threads, "1", NULL, 1, 256, "zero-offload's optimizer threads", "N"},
    {"compute-threads", 0, MB_OPT_INT, &opt.compute_threads, "0", NULL, 0, 1 << 20,
     "a worker's OpenBLAS and OpenMP threads for its compute (0: the defaults, every PU); not the switch's, PS's or "
     "agents'", "N"},
    {"mem-budget", 0, MB_OPT_SIZE, &opt.mem_budget, "0", NULL, 0, 1e18,
     "refuse a model whose worker needs more bytes than this (shards, a few full-size layers, activations; 0: no limit)", "SIZE"},
    {"dir", 0, MB_OPT_STR, &opt.dir, NULL, NULL, 0, 0, "folder for parameter-server state (must be writable)", "DIR"},
    {"files", 0, MB_OPT_INT, &opt.files, "1", NULL, 1, MB_STORAGE_MAX_FILES,
     "files of each parameter server's mb_ostore in --dir (its tensors striped over them)", "N"},
    {"dump-params", 0, MB_OPT_STR, &opt.dump, NULL, NULL, 0, 0,
     "write every layer's final fp32 parameters (raw, layer order) to a new FILE", "FILE"},
    {"trace", 0, MB_OPT_FLAG, &opt.trace, NULL, NULL, 0, 0, "record spans (mb-report --chrome-trace)", NULL},
    {"interference", 0, MB_OPT_FLAG, &opt.interference, NULL, NULL, 0, 0,
     "first measure an allgather alone and beside a GEMM, a GEMM alone and beside a copy (zero/interference.c)", NULL},
    {"paper-table", 0, MB_OPT_FLAG, &opt.paper_table, NULL, NULL, 0, 0,
     "record and print the step model on the DisDP paper's inputs (gpt-175b, W=8, 100/200 Gb/s)", NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"mode", "agg", "progress", NULL};

static int usage(struct mb_run *run, const char *line)
{
    if (run->rank == 0)
        mb_warn("%s", line);
    return MB_EXIT_USAGE;
}

static int parse_link(struct mb_run *run, char *err, size_t len)
{
    char *end;
    if (strcmp(opt.link, "auto") == 0)
        return opt.link_auto = 1, 0;
    errno = 0;
    double g = strtod(opt.link, &end);
    if (errno || end == opt.link || *end || !(g >= 0) || isinf(g))
        return snprintf(err, len, "--link-gbps: '%.100s' is not a rate: give R >= 0 (1e9 B/s), auto or 0", opt.link),
               usage(run, err);
    opt.zo.link_bps = g * 1e9;
    return 0;
}

static int validate(struct mb_run *run)
{
    char err[700], line[800];
    struct stat st;
    struct zero_opts *o = &opt.zo;
    if (nn_gpt_config_parse(opt.model, &o->cfg, err, sizeof(err)) != 0)
        return snprintf(line, sizeof(line), "--model: %.600s", err), usage(run, line);
    if (!(opt.ops = zero_mode_find(opt.mode)))
        return snprintf(line, sizeof(line), "--mode: unknown mode '%.100s' (%s)", opt.mode, zero_mode_names()),
               usage(run, line);
    if (run->common.device == MB_DEV_CUDA)
        return usage(run, "-d cuda: refused until nn's blocks run on CUDA");
    o->lay = (struct zero_layout){(int)opt.workers, (int)opt.sw, (int)opt.ps};
    if (!opt.workers)
        o->lay.W = run->nranks - o->lay.K - o->lay.N;
    if (zero_layout_check(&o->lay, run->nranks, opt.ops->needs_ps, err, sizeof(err)) != 0)
        return usage(run, err);
    if (opt.ops == &zero_mode_disdp && o->lay.K < 1)
        return usage(run, "--switch 0: --mode disdp needs a switch rank to sum and multicast (--switch 1 or more)");
    o->micro = (int)opt.micro;
    o->batch = opt.batch ? (int)opt.batch : o->micro * o->lay.W;
    if (!zero_micro_per_worker(o))
        return snprintf(err, sizeof(err), "--batch %d: not a multiple of --micro %d x %d workers", o->batch, o->micro,
                        o->lay.W), usage(run, err);
    if (parse_link(run, err, sizeof(err)) != 0)
        return MB_EXIT_USAGE;
    o->agg = (enum zero_agg)opt.agg;
    o->progress = (enum zero_progress)opt.progress;
    o->seed = (uint64_t)run->common.seed;
    o->hp = nn_adam_default();
    o->adam_threads = (int)opt.adam_threads;
    if (zero_compute_threads_check(opt.compute_threads, err, sizeof(err)) != 0)
        return usage(run, err);
    o->compute_threads = (int)opt.compute_threads;
    o->dir = opt.dir;
    o->ps_files = (int)opt.files;
    o->trace = opt.trace;
    o->stall_s = run->common.timeout / 2; /* before the watchdog ends the run, the wait says what it waits for */
    if (zero_mode_needs_threads(opt.ops, o) && run->thread_provided < MPI_THREAD_MULTIPLE)
        return snprintf(err, sizeof(err), "--mode %s%s: needs MPI_THREAD_MULTIPLE, which the MPI library does not provide",
                        opt.ops->name, opt.ops->uses_progress ? " --progress thread" : ""), usage(run, err);
    uint64_t need = zero_worker_bytes(o);
    if (opt.mem_budget && need > opt.mem_budget)
        return snprintf(err, sizeof(err), "--mem-budget %zu: a worker of --model %.100s needs %llu bytes", opt.mem_budget,
                        opt.model, (unsigned long long)need), usage(run, err);
    if (opt.dir && (stat(opt.dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(opt.dir, W_OK | X_OK) != 0))
        return snprintf(err, sizeof(err), "--dir: %.500s: %s", opt.dir,
                        stat(opt.dir, &st) != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a folder" : "not writable"),
               usage(run, err);
    if (opt.dump && access(opt.dump, F_OK) == 0)
        return snprintf(err, sizeof(err), "--dump-params: %.500s exists (never overwritten)", opt.dump), usage(run, err);
    int passive, here;
    MPI_Comm host;
    MPI_Comm_split_type(run->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &here);
    MPI_Comm_free(&host);
    zero_omp_wait_policy(err, sizeof(err), &passive);
    /* the worker's compute threads, before its calibration and steps (the
     * model's compute rates are measured at the count the steps use) */
    if (zero_role_of(&o->lay, run->rank, NULL) == ZERO_WORKER)
        zero_compute_threads_apply(o->compute_threads, opt.compute_got);
    if (here > 1 && !passive && run->rank == 0) /* recorded in /config as omp_wait_policy */
        mb_warn("OMP_WAIT_POLICY %s: %d ranks share this host and their OpenMP threads spin on each other's cores; "
                "launch with OMP_WAIT_POLICY=passive (GOMP reads it at load)", err, here);
    return 0;
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    (void)run;
    const struct zero_opts *o = &opt.zo;
    mb_kv_str(cfg, "model_shape", opt.model);
    mb_kv_int(cfg, "layers", o->cfg.layers);
    mb_kv_int(cfg, "hidden", o->cfg.hidden);
    mb_kv_int(cfg, "heads", o->cfg.heads);
    mb_kv_int(cfg, "seq", o->cfg.seq);
    mb_kv_int(cfg, "vocab", o->cfg.vocab);
    mb_kv_int(cfg, "W", o->lay.W);
    mb_kv_int(cfg, "K", o->lay.K);
    mb_kv_int(cfg, "N", o->lay.N);
    mb_kv_int(cfg, "global_batch", o->batch);
    mb_kv_int(cfg, "micro_per_worker", zero_micro_per_worker(o));
    mb_kv_int(cfg, "fixed_frac_bits", ZERO_FIXED_FRAC_BITS);
    mb_kv_str(cfg, "precision", "parameters, gradients, activations, master and moments fp32");
    char wp[160];
    int passive;
    mb_kv_str(cfg, "omp_wait_policy", zero_omp_wait_policy(wp, sizeof(wp), &passive));
    /* rank 0 is a worker: the counts its compute got (--compute-threads) */
    mb_kv_int(cfg, "compute_threads_blas", opt.compute_got[0]);
    mb_kv_int(cfg, "compute_threads_omp", opt.compute_got[1]);
}

static int plan(struct mb_run *run)
{
    run->cases = calloc(1, sizeof(*run->cases));
    if (!run->cases)
        mb_die(1, "out of memory planning the case");
    struct mb_case *c = &run->cases[run->ncases++];
    c->labels[0] = opt.ops->name;
    c->labels[1] = opt.agg ? "fixed" : "fp32";
    c->labels[2] = opt.ops->uses_progress ? (opt.progress ? "thread" : "poll") : "-";
    c->count = (uint64_t)opt.zo.batch * (uint64_t)opt.zo.cfg.seq; /* tokens per step */
    snprintf(c->name, sizeof(c->name), "%s/%s/%s", c->labels[0], c->labels[1], c->labels[2]);
    snprintf(c->group, sizeof(c->group),
             "%.60s W=%d K=%d N=%d batch=%d micro=%d link-gbps=%.20s compute-threads=%lld (blas %d, omp %d)", opt.model,
             opt.zo.lay.W, opt.zo.lay.K, opt.zo.lay.N, opt.zo.batch, opt.zo.micro, opt.link, opt.compute_threads,
             opt.compute_got[0], opt.compute_got[1]);
    return 0;
}

struct st {
    struct mb_run *run;
    const char *name;
    struct zero_run *z;
    struct zero_run *ref;     /* rank 0's one-rank reference (check) */
    double worst_rel;
    int check_off;            /* a worker's check failed: the checks end everywhere */
    struct zero_model_in rates; /* rank 0: calibrated in this run */
    double sgemm_flops;       /* rank 0: cblas_sgemm over the block's GEMM shapes (the model's compute
                                 rate is a block's own passes, rates.gemm_flops) */
    struct mb_coll_profile prof; /* the unpaced link's model (when loaded) */
    struct zero_prediction pred; /* rank 0 */
    int predicted;
    char model_why[400];      /* rank 0: why there is no prediction */
    struct zero_ps_rate ps_rate; /* rank 0: the PS's update, calibrated */
    struct zero_model_host *hosts; /* rank 0: who shares which cores (the model's CPU term) */
    struct zero_interference inter;
    struct zero_loaded loaded; /* the roles' sharing, timed (the model's compute_load_x, PS loaded) */
    struct zero_paper_row paper[ZERO_PAPER_ROWS];
    struct zero_paper_inputs paper_in;
    int have_paper;
    char err[700];
};

static void on_span(void *ctx, const char *what, const char *name, double start, double end)
{
    (void)ctx;
    if (mb_trace_enabled())
        mb_trace_span(mb_trace_lane(what), name, mb_trace_clock(start), mb_trace_clock(end));
}

/* The layer a disdp rank waits for, in the --timeout watchdog's line. */
static void on_layer(void *ctx, int layer)
{
    (void)ctx;
    mb_watchdog_detail("layer", layer);
}

static void sleep_barrier(MPI_Comm comm) { zero_nap_barrier(comm, 1000000); }

/* The PS's update rate (zero_model_measure_ps): an mb_ostore with the
 * disdp PS's options in dir, tensors of the model's largest layer (at
 * most 8M parameters), 3 passes; disdp only (the other modes have no
 * PS to price). The model prices the PS with it, and
 * its storage with the store's own transfer rate (O_DIRECT, CRC32C):
 * disdp measures no plain file. */
static struct zero_ps_calib ps_calib(const char *dir)
{
    const struct nn_gpt_config *cfg = &opt.zo.cfg;
    size_t big = 0;
    for (int i = 0; i < cfg->layers + 2; i++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, opt.zo.micro, (struct nn_precision){NN_F32, NN_F32, NN_F32}, i, &a);
        big = a.params > big ? a.params : big;
    }
    return (struct zero_ps_calib){.dir = dir, .numel = big < ((size_t)8 << 20) ? big : (size_t)8 << 20,
                                  .nfiles = opt.zo.ps_files,
                                  .reps = 3};
}

static int measure_ps(struct st *s, const char *dir, char *err, size_t len)
{
    struct zero_ps_calib pc = ps_calib(dir);
    if (zero_model_measure_ps(&pc, &s->ps_rate, err, len) != 0)
        return -1;
    mb_watchdog_tick();
    s->rates.ps_params_s = s->ps_rate.params_s;
    s->rates.storage_Bps = s->ps_rate.storage_Bps;
    s->rates.cpu_ps_params_s = s->ps_rate.cpu_params_s;
    return 0;
}

/* The step model, calibrated once in this run and its prediction for this
 * mode. GEMM and Adam rates: every worker measures at once (in the run
 * they compute side by side on shared cores), the slowest worker's rate;
 * the other roles sleep meanwhile. Storage: rank 0, in --dir (else
 * $TMPDIR or /tmp): the ZeRO-3 modes a 16 MiB plain-file pass, disdp the
 * PS's mb_ostore (measure_ps) instead. The link: the paced rate in use or,
 * unpaced, the collectives profile. Collective over the run; a refusal is
 * recorded, not fatal: the model informs, the check validates. */
static void predict(struct st *s)
{
    struct mb_run *run = s->run;
    char path[512], err[400];
    int prof = 0;
    if (!(opt.zo.link_bps > 0) && !opt.link_auto)
        prof = mb_coll_profile_load(run->comm, NULL, 0, 0, path, sizeof(path), &s->prof, err, sizeof(err)) == 1;
    double mine[2] = {INFINITY, INFINITY}, slowest[2], r[4] = {0}, cpu_rates[2] = {0};
    if (s->z->role == ZERO_WORKER) {
        zero_model_measure_worker(&opt.zo.cfg, opt.zo.micro, 3, (size_t)4 << 20, r); /* wall and CPU rates */
        mb_watchdog_tick(); /* each calibration done is progress for --timeout (a loaded host's setup is long) */
        mine[0] = r[0], mine[1] = r[2], cpu_rates[0] = r[1], cpu_rates[1] = r[3];
        for (int k = 0; k < 2; k++)
            mine[k] = mine[k] > 0 ? mine[k] : -1; /* NaN: a failed check, refused below */
    }
    sleep_barrier(run->comm);
    MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MIN, run->comm);
    /* The compute term's rate: one block's forward + backward in the
     * layer's own code, the workers side by side as in the run (the
     * median pass, the slowest worker): cblas_sgemm's rate alone priced
     * compute at 0.4-0.9x what the run's compute took (issue 19) */
    double block_flops = 0, block_cpu = 0, block_s = zero_block_pass(s->z, &block_flops, &block_cpu);
    mb_watchdog_tick();
    if (s->z->role == ZERO_WORKER && block_cpu > 0 && block_flops > 0)
        cpu_rates[0] = block_flops / block_cpu; /* the CPU floor's compute: the block's own CPU seconds */
    /* The same pass with the mode's other roles beside it on the same
     * cores (zero_model_measure_loaded): disdp's agents, switches and PS,
     * zero3-overlap's progress thread, the idle ranks' naps (issue 19:
     * each term above is timed with its role alone) */
    const char *dir = opt.dir ? opt.dir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int disdp = opt.ops == &zero_mode_disdp;
    struct zero_ps_calib lpc = ps_calib(dir);
    struct zero_loaded_opts lo = {.worker_poller = zero_mode_needs_threads(opt.ops, &opt.zo),
                                  .worker_nap_s = 20e-6, /* mb_disdp_nap's and the progress thread's */
                                  .others_nap_s = disdp ? 20e-6 : 100e-6, /* the switch and PS; else the harness's */
                                  .ps = disdp ? &lpc : NULL};
    char load_err[300];
    int loaded = zero_model_measure_loaded(s->z, &lo, &s->loaded, load_err, sizeof load_err);
    mb_watchdog_tick();
    char cpu_err[300];
    int cpu = zero_model_calibrate_cpu(run->comm, s->z->role, cpu_rates, &s->rates, &s->hosts, cpu_err, sizeof(cpu_err));
    mb_watchdog_tick();
    /* unpaced: a tc link's rate, if any, each role's from its ranks' own
     * nodes (tools/vcluster --node-gbps shapes some nodes at their own rate) */
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int hl = 0;
    MPI_Get_processor_name(host, &hl);
    double my_gbps = zero_tc_node_gbps(getenv("MB_VCLUSTER_EMULATION"), host), role_gbps[3] = {0};
    double *all_gbps = run->rank == 0 ? calloc((size_t)run->nranks, sizeof *all_gbps) : NULL;
    MPI_Gather(&my_gbps, 1, MPI_DOUBLE, all_gbps, 1, MPI_DOUBLE, 0, run->comm);
    if (all_gbps)
        zero_role_tc_gbps(&opt.zo.lay, all_gbps, role_gbps);
    free(all_gbps);
    s->rates.link_gbps = role_gbps[ZERO_WORKER];
    s->rates.switch_gbps = role_gbps[ZERO_SWITCH], s->rates.ps_gbps = role_gbps[ZERO_PS];
    if (run->rank == 0) {
        double w = 0, r = 0;
        s->rates.compute_load_x = s->loaded.compute_x; /* NaN when a side failed: the model refuses it */
        s->sgemm_flops = slowest[0];
        s->rates.gemm_flops = block_s > 0 && block_flops > 0 ? block_flops / block_s : NAN;
        s->rates.adam_params_s = s->rates.pool_adam_params_s = slowest[1];
        s->rates.ps_bytes_per_param = 26;
        s->rates.coll = prof ? &s->prof : NULL;
        if (!(slowest[0] > 0) || !(slowest[1] > 0) || !(s->rates.gemm_flops > 0))
            snprintf(s->model_why, sizeof(s->model_why), "model calibration: the %s failed its check",
                     !(slowest[0] > 0) ? "GEMM rate" : !(slowest[1] > 0) ? "Adam rate" : "block's pass");
        else if (cpu != 0)
            snprintf(s->model_why, sizeof(s->model_why), "%s", cpu_err);
        else if (loaded != 0)
            snprintf(s->model_why, sizeof(s->model_why), "%s", load_err);
        else if ((opt.ops == &zero_mode_disdp ? measure_ps(s, dir, err, sizeof(err)) != 0
                  : zero_model_measure_storage(dir, (size_t)16 << 20, &w, &r, err, sizeof(err)) != 0 ||
                        !((s->rates.storage_Bps = zero_model_storage_Bps(12, 14, r, w)) > 0)) ||
                 zero_predict(&s->z->o, opt.ops->name, &s->rates, &s->pred, err, sizeof(err)) != 0)
            snprintf(s->model_why, sizeof(s->model_why), "%s", err);
        else
            s->predicted = 1;
        if (s->predicted && s->loaded.ps_x > 0) { /* disdp: the PS's rate alone (measure_ps) / the round's ratio */
            s->rates.ps_loaded_params_s = s->rates.ps_params_s / s->loaded.ps_x;
            if (zero_predict(&s->z->o, opt.ops->name, &s->rates, &s->pred, err, sizeof(err)) != 0)
                s->predicted = 0, snprintf(s->model_why, sizeof(s->model_why), "%s", err);
        }
        if (!run->common.quiet && s->predicted) {
            const struct zero_model_step *m = &s->pred.model;
            char ps[160] = "", role_link[160] = "";
            if (!(s->z->o.link_bps > 0) && s->rates.link_gbps > 0)
                snprintf(role_link, sizeof role_link, " (workers %g, switch %g, PS %g Gbit/s)", s->rates.link_gbps,
                         s->rates.switch_gbps, s->rates.ps_gbps);
            if (s->rates.ps_params_s > 0)
                snprintf(ps, sizeof ps, "; PS update %.3g Mparam/s through mb_ostore (its Adam %.3g Mparam/s), "
                         "%.3g with the workers computing",
                         s->ps_rate.params_s / 1e6, s->ps_rate.adam_params_s / 1e6, s->rates.ps_loaded_params_s / 1e6);
            printf("# model (calibrated here: compute %.3g GFLOP/s (a block's passes; sgemm %.3g; x%.3f beside the mode's other roles), Adam %.3g Mparam/s per worker%s; storage %.3g "
                   "GB/s; link %s%s): step %.4f s = compute %.4f, wire %.4f (exposed %.4f), optimizer %.4f (exposed "
                   "%.4f), storage %.4f; CPU floor %.4f (worker %.4f, switch %.4f, PS %.4f CPU s; bytes moved at %.3g GB "
                   "per CPU s; %d host(s), %g cores on the first)\n", s->rates.gemm_flops / 1e9, s->sgemm_flops / 1e9, s->rates.compute_load_x, s->rates.adam_params_s / 1e6, ps,
                   s->rates.storage_Bps / 1e9,
                   zero_model_link_name(&s->z->o, &s->rates), role_link, m->step, m->compute,
                   m->wire, m->exposed_wire, m->optimizer, m->exposed_optimizer, m->storage, m->cpu_floor,
                   m->cpu_worker, m->cpu_switch, m->cpu_ps, s->rates.cpu_copy_Bps / 1e9, s->rates.nhosts, s->rates.hosts[0].cores);
            printf("# closed form per worker per step: send %llu, receive %llu bytes\n",
                   (unsigned long long)s->pred.bytes.send, (unsigned long long)s->pred.bytes.recv);
        } else if (!run->common.quiet)
            printf("# model: none (%s)\n", s->model_why);
    }
    sleep_barrier(run->comm);
}

static int measure_interference(struct st *s)
{
    struct zero_interference_opts io = {.coll_bytes = (size_t)4 << 20, .gemm_n = 512,
                                        .copy_bytes = (size_t)64 << 20, .reps = 5};
    char err[400];
    if (zero_interference_run(s->run->comm, &io, &s->inter, err, sizeof(err)) != 0) {
        if (s->run->rank == 0)
            mb_warn("--interference: %s", err);
        return -1;
    }
    const struct zero_interference *v = &s->inter;
    if (s->run->rank == 0 && !s->run->common.quiet)
        printf("# interference: allgather %zu B/rank alone %.4g s, beside a GEMM %.4g s (%+.0f%%; paper +41%%); "
               "GEMM %d^3 on %d threads alone %.4g s, beside a copy on PU %d %.4g s (%+.0f%%, copy %.3g GB/s)\n",
               io.coll_bytes, v->coll_alone, v->coll_with_gemm, 100 * v->coll_slowdown, io.gemm_n, v->gemm_threads,
               v->gemm_alone, v->copy_pu, v->gemm_with_copy, 100 * v->gemm_slowdown, v->copy_GBps);
    return 0;
}

static int paper_table(struct st *s)
{
    char err[400];
    zero_paper_inputs_default(&s->paper_in);
    if (zero_paper_table(&s->paper_in, s->paper, err, sizeof(err)) != 0)
        return mb_warn("--paper-table: %s", err), -1;
    s->have_paper = 1;
    if (!s->run->common.quiet)
        zero_paper_table_print(stdout, &s->paper_in, s->paper);
    return 0;
}

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    struct st *s = calloc(1, sizeof(*s));
    if (!s)
        return mb_warn("out of memory: the case's state"), -1;
    *state = s;
    s->run = run;
    s->name = c->name;
    if (opt.trace)
        mb_trace_enable(1);
    static int hooked;
    if (!hooked++ && mb_cleanup_add(zero_disdp_remove_files, NULL) != 0)
        return mb_warn("no room for the clean-up of a killed PS's files"), -1;
    if (!(s->z = zero_run_new(&opt.zo, opt.ops, run->comm, s->err, sizeof(s->err))))
        return mb_warn("%s", s->err), -1;
    mb_watchdog_tick();
    s->z->on_span = on_span;
    s->z->on_layer = on_layer;
    s->z->timed_from = run->common.warmup; /* the medians are over the timed steps */
    if (opt.link_auto) {
        double bps = zero_link_auto(s->z);
        mb_watchdog_tick();
        if (run->rank == 0 && !run->common.quiet)
            printf("# --link-gbps auto: %.6g GB/s per direction (wire time per layer = compute per layer)\n", bps / 1e9);
    }
    predict(s);
    mb_watchdog_tick();
    if (opt.interference && measure_interference(s) != 0)
        return -1;
    mb_watchdog_tick();
    if (opt.paper_table && run->rank == 0 && paper_table(s) != 0)
        return -1;
    if (run->common.check && run->rank == 0) {
        struct zero_opts r = opt.zo;
        r.lay = (struct zero_layout){1, 0, 0};
        r.link_bps = 0;
        r.reference = 1;
        if (!(s->ref = zero_run_new(&r, &zero_mode_zero3_serial, MPI_COMM_SELF, s->err, sizeof(s->err))))
            return mb_warn("the one-rank reference: %s (--no-check skips it)", s->err), -1;
    }
    static char emulation[1000];
    const struct mb_kv *hosts = mb_kv_get(&run->result.root, "hostnames"); /* rank 0's provenance */
    zero_emulation(&opt.zo.lay, hosts && hosts->type == MB_KV_STR ? hosts->s : NULL, opt.ops == &zero_mode_disdp,
                   opt.zo.link_bps > 0 || opt.link_auto, emulation, sizeof(emulation));
    run->emulation = emulation;
    return 0;
}

static int iterate(void *state, long long iter, double *elapsed)
{
    (void)iter, (void)elapsed;
    struct st *s = state;
    if (zero_run_step(s->z, s->err, sizeof(s->err)) != 0) {
        mb_warn("%s: rank %d (%s): step %lld: %s", s->name, s->run->rank, zero_role_name(s->z->role), s->z->step,
                s->err);
        return -1;
    }
    /* The harness's MPI_Barrier before the next step busy-polls: a rank
     * done early (the ZeRO-3 modes' idle switch and PS ranks at once, the
     * disdp workers while the PS drains) would spin there on the cores
     * the others compute on (the quiet run of b88fb21: zero3-serial's
     * worker Adam 33 ms instead of 0.8 ms beside two idle ranks). So
     * every rank meets here first, napping; the measured step (the
     * worker's own clock inside zero_run_step) does not include it. */
    zero_nap_barrier(s->run->comm, 100000);
    return 0;
}

/* Every worker's shards gathered, against the reference's (rank 0). */
static int check(void *state, long long iter, char *msg, size_t len)
{
    (void)iter;
    struct st *s = state;
    struct zero_run *z = s->z;
    if (zero_run_sync(z, s->err, sizeof(s->err)) != 0)
        return snprintf(msg, len, "%s", s->err), 1;
    if (z->role != ZERO_WORKER || s->check_off)
        return 0;
    while (s->ref && s->ref->step < z->step)
        if (zero_run_step(s->ref, s->err, sizeof(s->err)) != 0)
            return snprintf(msg, len, "the reference step failed: %s", s->err), 1;
    int bad = zero_checksum_verify(z, msg, len);
    for (int i = 0; i < z->L; i++) {
        size_t n = z->layer[i].numel;
        float *p = malloc(n * 4 + 4);
        if (!p || zero_layer_params(z, i, p) != 0) {
            free(p);
            return snprintf(msg, len, "layer %d: gathering the parameters failed", i), 1;
        }
        if (s->ref && !bad) {
            float *q = s->ref->layer[i].master; /* one rank: the shard is the layer */
            double d2 = 0, r2 = 0;
            for (size_t k = 0; k < n; k++) {
                d2 += ((double)p[k] - q[k]) * ((double)p[k] - q[k]);
                r2 += (double)q[k] * q[k];
            }
            double rel = sqrt(d2) / (r2 > 0 ? sqrt(r2) : 1);
            s->worst_rel = rel > s->worst_rel || rel != rel ? rel : s->worst_rel;
            if (opt.zo.agg == ZERO_AGG_FIXED && memcmp(p, q, n * 4) != 0) {
                size_t k = 0;
                while (k < n && memcmp(&p[k], &q[k], 4) == 0)
                    k++;
                snprintf(msg, len, "step %lld: layer %d parameter %zu: %.9g, one-rank reference %.9g (fixed: "
                         "must be bit-identical)", z->step, i, k, p[k], q[k]);
                bad = 1;
            } else if (!(rel <= 1e-5)) {
                snprintf(msg, len, "step %lld: layer %d: relative error %.3g over 1e-5 against the one-rank "
                         "reference", z->step, i, rel);
                bad = 1;
            }
        }
        free(p);
    }
    if (!(z->st.loss == z->st.loss) && !bad) {
        snprintf(msg, len, "step %lld: loss is %g", z->step, z->st.loss);
        bad = 1;
    }
    /* the harness stops checking on a rank whose check failed; the
     * workers' checks are collective, so they all stop together */
    int any = bad;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, z->workers);
    s->check_off = any;
    return bad;
}

static int dump_params(struct st *s)
{
    struct zero_run *z = s->z;
    int fd = -1, bad = 0;
    if (s->run->rank == 0 && (fd = open(opt.dump, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
        bad = (mb_warn("--dump-params: %s: %s", opt.dump, strerror(errno)), 1);
    for (int i = 0; i < z->L; i++) {
        size_t n = z->layer[i].numel;
        float *p = malloc(n * 4 + 4);
        if (!p || zero_layer_params(z, i, p) != 0)
            bad = 1;
        else if (fd >= 0 && write(fd, p, n * 4) != (ssize_t)(n * 4))
            bad = (mb_warn("--dump-params: %s: %s", opt.dump, strerror(errno)), 1);
        free(p);
    }
    if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0))
        bad = 1;
    return bad;
}

/* One value of the case's result (zero_report_metrics) into the file. */
static void put_metric(void *ctx, const struct zero_metric *m)
{
    struct st *s = ctx;
    struct mb_result *r = &s->run->result;
    if (m->idx < 0)
        m->kind == ZERO_M_INT   ? mb_metric_case_int(r, s->name, m->key, m->i)
        : m->kind == ZERO_M_DBL ? mb_metric_case_dbl(r, s->name, m->key, m->d)
                                : mb_metric_case_str(r, s->name, m->key, m->s);
    else
        m->kind == ZERO_M_INT   ? mb_metric_at_int(r, s->name, m->key, (size_t)m->idx, m->i)
        : m->kind == ZERO_M_DBL ? mb_metric_at_dbl(r, s->name, m->key, (size_t)m->idx, m->d)
                                : mb_metric_at_str(r, s->name, m->key, (size_t)m->idx, m->s);
}

/* --interference's and --paper-table's values (rank 0). */
static void record_extras(struct st *s)
{
    struct mb_result *r = &s->run->result;
    if (opt.interference) {
        const struct zero_interference *v = &s->inter;
        mb_metric_run_dbl(r, "interference_coll_alone_s", v->coll_alone);
        mb_metric_run_dbl(r, "interference_coll_with_gemm_s", v->coll_with_gemm);
        mb_metric_run_dbl(r, "interference_gemm_alone_s", v->gemm_alone);
        mb_metric_run_dbl(r, "interference_gemm_with_copy_s", v->gemm_with_copy);
        mb_metric_run_dbl(r, "interference_coll_slowdown", v->coll_slowdown);
        mb_metric_run_dbl(r, "interference_gemm_slowdown", v->gemm_slowdown);
        mb_metric_run_dbl(r, "interference_copy_GBps", v->copy_GBps);
        mb_metric_run_int(r, "interference_gemm_threads", v->gemm_threads);
        mb_metric_run_int(r, "interference_copy_pu", v->copy_pu);
    }
    for (int i = 0; s->have_paper && i < ZERO_PAPER_ROWS; i++) {
        const struct zero_paper_row *p = &s->paper[i];
        mb_metric_at_str(r, s->name, "paper_model_mode", (size_t)i, zero_model_mode_names[p->mode]);
        mb_metric_at_dbl(r, s->name, "paper_model_link_gbps", (size_t)i, p->link_gbps);
        mb_metric_at_dbl(r, s->name, "paper_model_step_s", (size_t)i, p->model.step);
        mb_metric_at_dbl(r, s->name, "paper_model_over_disdp", (size_t)i, p->over_disdp);
    }
}

/* Every rank's counters gathered (zero/results.c), recorded and printed
 * by rank 0 beside the model. */
static void record(struct st *s)
{
    struct zero_results res;
    zero_results_gather(s->z, &res);
    if (s->run->rank != 0)
        return;
    struct zero_report rep = {.res = &res, .pred = s->predicted ? &s->pred : NULL, .model_why = s->model_why,
                              .rates = &s->rates, .ps_rate = &s->ps_rate, .worst_rel = s->worst_rel,
                              .sgemm_flops = s->sgemm_flops,
                              .link = opt.link_auto ? "auto" : s->z->o.link_bps > 0 ? "paced" : "off"};
    zero_report_metrics(s->z, &rep, put_metric, s);
    record_extras(s);
    if (!s->run->common.quiet)
        zero_report_print(stdout, s->z, &rep);
    zero_results_free(&res);
}

static void teardown(void *state)
{
    struct st *s = state;
    if (s->z && s->z->st.steps) {
        if (zero_run_sync(s->z, s->err, sizeof(s->err)) != 0)
            mb_warn("rank %d: %s", s->run->rank, s->err);
        record(s);
        if (opt.dump && dump_params(s) && s->run->rank == 0)
            mb_warn("--dump-params: %s not written", opt.dump);
    }
    zero_run_free(s->ref);
    zero_run_free(s->z);
    free(s->hosts);
    free(s);
}

static const struct mb_bench bench = {
    .name = "mb-zero",
    .description = "ZeRO-3 / DisDP: model-sharded data parallelism on a GPT, workers, switches and parameter servers",
    .opts = zero_opts_table,
    .label_names = label_names,
    /* asked always: --progress thread and disdp's agents call MPI from
     * threads of their own; validate refuses those modes without it */
    .thread_level = MPI_THREAD_MULTIPLE,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
};

int main(int argc, char **argv) { return mb_main(&bench, argc, argv); }
