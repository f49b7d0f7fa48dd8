/* mb-ooc: CAM's out-of-core applications (offload/aio.h mb_ooc_*: tiled
 * GEMM, external merge sort, row gather) over the striped volume, each run
 * on the storage registry's modes and verified every iteration.
 *
 * Cases, in order: APP/compute and APP/io (the two phases alone: compute
 * with the data already in memory, the same I/O without the compute) when
 * sync or async is asked for, then the asked modes posix, sync, async.
 * The model column is the phases' prediction: compute + io for sync (no
 * overlap), max(compute, io) for async (the overlap bound); /config gets
 * overlap_bound_s and overlap_ratio = async median / bound
 * (overlap_ratio_min: the same from each case's fastest iteration). */
#include "harness/harness.h"
#include "../offload/aio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct {
    unsigned modes;
    int buffered, app;
    long long threads, files, prefetch, blas_threads;
    size_t stripe, mem_budget;
    char *dir, *threads_arg;
    long long gemm_n, gemm_tile, sort_keys, gather_rows, gather_dim, gather_batch, gather_batches;
    double zipf;
} opt;

/* --mode's words, in the order of enum mb_ooc_mode's first three */
static const struct mb_opt ooc_opts[] = {
    {"mode", 0, MB_OPT_LIST, &opt.modes, "posix,sync,async", "posix|sync|async", 0, 0,
     "I/O paths to run the app on (sync/async: the engine; with either, the phases alone too)", "LIST"},
    {"app", 0, MB_OPT_CHOICE, &opt.app, "gemm", "gemm|sort|gather", 0, 0, "out-of-core application", "APP"},
    {"io-threads", 0, MB_OPT_STR, &opt.threads_arg, "1", NULL, 0, 0,
     "engine I/O threads 1..64; 0 = CAM's rule (ceil(files/2)); adaptive = CAM's rule "
     "re-chosen every 32 waits from the measured compute/I/O ratio", "N|adaptive"},
    {"files", 0, MB_OPT_INT, &opt.files, "1", NULL, 1, 64, "files striped together (stand-in SSDs)", "N"},
    {"stripe", 0, MB_OPT_SIZE, &opt.stripe, "1M", NULL, 4096, 1 << 30, "stripe unit", "SIZE"},
    {"dir", 0, MB_OPT_STR, &opt.dir, "build/aio-data", NULL, 0, 0, "folder of the data files", "DIR"},
    {"buffered", 0, MB_OPT_FLAG, &opt.buffered, NULL, NULL, 0, 0, "no O_DIRECT", NULL},
    {"mem-budget", 0, MB_OPT_SIZE, &opt.mem_budget, "16M", NULL, 0, 1e15, "sort: memory for keys", "SIZE"},
    {"gemm-n", 0, MB_OPT_INT, &opt.gemm_n, "2048", NULL, 32, 65536, "gemm: n of the n x n matrices", "N"},
    {"gemm-tile", 0, MB_OPT_INT, &opt.gemm_tile, "512", NULL, 32, 1024, "gemm: tile edge (divides n)", "N"},
    {"sort-keys", 0, MB_OPT_INT, &opt.sort_keys, "8388608", NULL, 512, 1e12, "sort: 64-bit keys (a multiple of 512)", "N"},
    {"gather-rows", 0, MB_OPT_INT, &opt.gather_rows, "262144", NULL, 1, 1LL << 26, "gather: feature matrix rows", "N"},
    {"gather-dim", 0, MB_OPT_INT, &opt.gather_dim, "128", NULL, 1, 65536, "gather: floats per row", "N"},
    {"gather-batch", 0, MB_OPT_INT, &opt.gather_batch, "4096", NULL, 1, 1 << 20, "gather: rows per batch", "N"},
    {"gather-batches", 0, MB_OPT_INT, &opt.gather_batches, "8", NULL, 1, 4096, "gather: batches per iteration", "N"},
    {"zipf", 0, MB_OPT_DOUBLE, &opt.zipf, "1.0", NULL, 0, 10, "gather: row popularity exponent (0: uniform)", "S"},
    {"prefetch", 0, MB_OPT_INT, &opt.prefetch, "1", NULL, 1, 8,
     "gemm, gather: steps read ahead in async (1: double buffering)", "N"},
    {"blas-threads", 0, MB_OPT_INT, &opt.blas_threads, "1", NULL, 0, 256,
     "gemm, gather: OpenBLAS threads (0: OpenBLAS's default)", "N"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

/* the same columns as mb-aio's I/O cases, so that one table holds both */
static const char *const label_names[] = {"mode", "pattern", "rw", "app", NULL};

struct ooc_case { enum mb_ooc_mode mode; };

struct st {
    struct mb_run *run;
    const struct ooc_case *oc;
    const char *name;
    struct mb_ooc *o;
    int reset_failed;
    char err[512];
};

static char paths[64][1100];
static const char *path_ptrs[64];
static const char *const patterns[] = {"tiled", "runs+merge", "zipf"};
static const char *const app_rw[] = {"read", "readwrite", "read"};

static enum mb_ooc_app app_kind(void) { return (enum mb_ooc_app)opt.app; }

static void params(struct mb_run *run, struct mb_ooc_params *p)
{
    for (long long f = 0; f < opt.files; f++) {
        snprintf(paths[f], sizeof(paths[f]), "%.1000s/mb-ooc-%s.%lld", opt.dir, mb_ooc_app_names[app_kind()], f);
        path_ptrs[f] = paths[f];
    }
    *p = (struct mb_ooc_params){
        .app = app_kind(), .paths = path_ptrs, .nfiles = (int)opt.files, .stripe = opt.stripe,
        .io_threads = (int)opt.threads, .buffered = opt.buffered, .seed = (uint64_t)run->common.seed,
        .mem_budget = opt.mem_budget, .gemm_n = (size_t)opt.gemm_n, .gemm_tile = (size_t)opt.gemm_tile,
        .sort_keys = (uint64_t)opt.sort_keys, .gather_rows = (uint64_t)opt.gather_rows,
        .gather_dim = (size_t)opt.gather_dim, .gather_batch = (size_t)opt.gather_batch,
        .gather_batches = (size_t)opt.gather_batches, .zipf = opt.zipf, .blas_threads = (int)opt.blas_threads,
        .prefetch = (int)opt.prefetch};
}

static int validate(struct mb_run *run)
{
    char err[512];
    int threads = 0;
    struct stat stt;
    struct mb_ooc_params p;
    if (mb_aio_parse_threads(opt.threads_arg, &threads) != 0)
        snprintf(err, sizeof(err), "--io-threads: '%s' is neither a count from 0 to 64 nor 'adaptive'",
                 opt.threads_arg);
    else if (run->nranks > 1)
        snprintf(err, sizeof(err), "runs on one rank, not %d", run->nranks);
    else if (stat(opt.dir, &stt) != 0 && mkdir(opt.dir, 0755) != 0)
        snprintf(err, sizeof(err), "--dir: %s: %s", opt.dir, strerror(errno));
    else {
        opt.threads = threads;
        params(run, &p);
        if (mb_ooc_validate(&p, err, sizeof(err)) == 0)
            return 0;
    }
    if (run->rank == 0)
        mb_warn("%s", err);
    return MB_EXIT_USAGE;
}

static int plan(struct mb_run *run)
{
    enum mb_ooc_mode order[] = {MB_OOC_COMPUTE, MB_OOC_IO, MB_OOC_POSIX, MB_OOC_SYNC, MB_OOC_ASYNC};
    int want[] = {0, 0, !!(opt.modes & (1u << MB_OOC_POSIX)), !!(opt.modes & (1u << MB_OOC_SYNC)),
                  !!(opt.modes & (1u << MB_OOC_ASYNC))};
    want[0] = want[1] = want[3] || want[4]; /* the phases alone, for the model */
    struct mb_ooc_params p;
    params(run, &p);
    enum mb_ooc_app k = app_kind();
    run->cases = calloc(5, sizeof(*run->cases));
    if (!run->cases)
        mb_die(1, "out of memory planning the cases");
    for (int i = 0; i < 5; i++) {
        if (!want[i])
            continue;
        struct mb_case *c = &run->cases[run->ncases++];
        struct ooc_case *oc = malloc(sizeof(*oc));
        if (!oc)
            mb_die(1, "out of memory planning the cases");
        oc->mode = order[i];
        c->user = oc;
        c->labels[0] = mb_ooc_mode_names[order[i]];
        c->labels[1] = patterns[k];
        c->labels[2] = app_rw[k];
        c->labels[3] = mb_ooc_app_names[k];
        c->bytes = mb_ooc_io_bytes(&p); /* the app's I/O volume, in every case: algbw compares */
        c->count = 1;                  /* one whole run per iteration */
        snprintf(c->name, sizeof(c->name), "%s/%s", mb_ooc_app_names[k], mb_ooc_mode_names[order[i]]);
        if (k == MB_OOC_GEMM)
            snprintf(c->group, sizeof(c->group), "gemm %s  n=%lld tile=%lld files=%lld io-threads=%lld prefetch=%lld", c->labels[0],
                     opt.gemm_n, opt.gemm_tile, opt.files, opt.threads, opt.prefetch);
        else if (k == MB_OOC_SORT)
            snprintf(c->group, sizeof(c->group), "sort %s  keys=%lld mem-budget=%zu files=%lld io-threads=%lld",
                     c->labels[0], opt.sort_keys, opt.mem_budget, opt.files, opt.threads);
        else
            snprintf(c->group, sizeof(c->group), "gather %s  rows=%lld dim=%lld batch=%lldx%lld zipf=%g files=%lld prefetch=%lld",
                     c->labels[0], opt.gather_rows, opt.gather_dim, opt.gather_batch, opt.gather_batches, opt.zipf,
                     opt.files, opt.prefetch);
    }
    return 0;
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    (void)run;
    mb_kv_int(cfg, "block", MB_AIO_BLOCK);
}

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    static int prepared, warned_direct;
    struct st *s = calloc(1, sizeof(*s));
    if (!s) {
        mb_warn("out of memory: the case's state");
        return -1;
    }
    *state = s;
    s->run = run;
    s->oc = c->user;
    s->name = c->name;
    struct mb_ooc_params p;
    params(run, &p);
    run->emulation = opt.files > 1 ? "several files striped RAID0-like stand in for several SSDs" : "none";
    if (!prepared) { /* the input, once per run (MB_FAULT_INJECT=corrupt: one bit flipped on storage) */
        prepared = 1;
        if (mb_ooc_prepare(&p, mb_fault() && strcmp(mb_fault(), "corrupt") == 0, s->err, sizeof(s->err)) != 0) {
            mb_warn("--dir: preparing the %s input: %s", mb_ooc_app_names[p.app], s->err);
            return -1;
        }
    }
    s->o = mb_ooc_open(&p, s->oc->mode, s->err, sizeof(s->err));
    if (!s->o) {
        mb_warn("%s: %s", c->name, s->err);
        return -1;
    }
    /* the posix reads, the checks and the compute mode's image: page cache or not */
    const char *fallback;
    int direct = mb_ooc_direct(s->o, &fallback);
    mb_metric_run_int(&run->result, "posix_direct", direct);
    mb_metric_run_str(&run->result, "posix_fallback", fallback);
    if (!direct && strcmp(fallback, "none") != 0 && !warned_direct++)
        mb_warn("--dir: %s: %s", opt.dir, fallback);
    const struct mb_aio *eng = mb_ooc_engine(s->o);
    if (eng) {
        struct mb_aio_info inf;
        mb_aio_info(eng, &inf);
        mb_metric_run_str(&run->result, "aio_engine", inf.engine);
        mb_metric_run_str(&run->result, "aio_fallback", inf.fallback);
        mb_metric_run_int(&run->result, "aio_direct", inf.direct);
        mb_metric_run_int(&run->result, "aio_io_threads", inf.nthreads);
    }
    return 0;
}

static void prepare(void *state, long long iter)
{
    struct st *s = state;
    s->reset_failed = mb_ooc_reset(s->o, iter, s->err, sizeof(s->err)) != 0;
}

static int iterate(void *state, long long iter, double *elapsed)
{
    (void)iter, (void)elapsed;
    struct st *s = state;
    if (s->reset_failed || mb_ooc_run(s->o, s->err, sizeof(s->err)) != 0) {
        mb_warn("%s: %s", s->name, s->err);
        return -1;
    }
    return 0;
}

static int check(void *state, long long iter, char *msg, size_t len)
{
    (void)iter;
    struct st *s = state;
    return mb_ooc_check(s->o, msg, len);
}

static void teardown(void *state)
{
    struct st *s = state;
    if (s->o && s->run->rank == 0) {
        struct mb_ooc_stats st;
        struct mb_result *r = &s->run->result;
        mb_ooc_stats(s->o, &st);
        mb_metric_case_int(r, s->name, "read_bytes", (long long)st.read_bytes);
        mb_metric_case_int(r, s->name, "write_bytes", (long long)st.write_bytes);
        mb_metric_case_int(r, s->name, "requests", (long long)st.requests);
        mb_metric_case_dbl(r, s->name, "flops", st.flops);
    }
    mb_ooc_close(s->o);
    free(s);
}

static double case_time(const struct mb_run *run, const char *name, int fastest)
{
    for (size_t i = 0; i < run->result.ncases; i++)
        if (strcmp(run->result.cases[i].name, name) == 0)
            return fastest ? run->result.cases[i].stats.min : run->result.cases[i].stats.median;
    return NAN;
}

static double case_median(const struct mb_run *run, const char *name) { return case_time(run, name, 0); }

/* sync: compute + io; async: max(compute, io), recorded with the ratio. */
static double model(struct mb_run *run, const struct mb_case *c)
{
    const struct ooc_case *oc = c->user;
    const char *app = mb_ooc_app_names[app_kind()];
    char name[200];
    snprintf(name, sizeof(name), "%s/compute", app);
    double tc = case_median(run, name);
    snprintf(name, sizeof(name), "%s/io", app);
    double ti = case_median(run, name);
    if (oc->mode == MB_OOC_SYNC)
        return tc + ti;
    if (oc->mode != MB_OOC_ASYNC)
        return NAN;
    double bound = tc > ti ? tc : ti, ta = case_median(run, c->name);
    mb_metric_case_dbl(&run->result, c->name, "overlap_compute_s", tc);
    mb_metric_case_dbl(&run->result, c->name, "overlap_io_s", ti);
    mb_metric_case_dbl(&run->result, c->name, "overlap_bound_s", bound);
    mb_metric_case_dbl(&run->result, c->name, "overlap_ratio", ta / bound);
    /* the same from each case's fastest iteration: on a shared machine the
     * least disturbed one */
    snprintf(name, sizeof(name), "%s/compute", app);
    double mc = case_time(run, name, 1);
    snprintf(name, sizeof(name), "%s/io", app);
    double mi = case_time(run, name, 1), mbound = mc > mi ? mc : mi, ma = case_time(run, c->name, 1);
    mb_metric_case_dbl(&run->result, c->name, "overlap_ratio_min", ma / mbound);
    if (!run->common.quiet)
        printf("#   %s: compute alone %.4f s, I/O alone %.4f s, overlap bound max() %.4f s, async %.4f s = %.3fx "
               "the bound (fastest iterations: %.3fx)\n", app, tc, ti, bound, ta, ta / bound, ma / mbound);
    return bound;
}

static const struct mb_bench bench = {
    .name = "mb-ooc",
    .description = "CAM's out-of-core applications (tiled GEMM, external sort, row gather) on posix, sync and async I/O",
    .opts = ooc_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
    .model = model,
};

int main(int argc, char **argv) { return mb_main(&bench, argc, argv); }
