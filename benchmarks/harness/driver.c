/* The one main loop: options, validation, output probe, plan, then per
 * case set-up, warm-up, timed iterations with counters, checks, statistics
 * and a table row; finally the result file. Programs only fill a table. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct case_outcome {
    int check;         /* enum mb_check */
    double *samples;   /* rank 0: [iters x nranks] */
    long long *counts; /* rank 0: [nranks x nevents] */
};

/* Prints to rank 0's stdout unless quiet. */
#define OUT(run, ...)                                                                              \
    do {                                                                                           \
        if ((run)->rank == 0 && !(run)->common.quiet)                                              \
            printf(__VA_ARGS__);                                                                   \
    } while (0)

/* Rank 0's result file, written case by case (output.c). */
static struct {
    struct mb_output *file;
    int failed;
    char err[4608];
} out;

/* Out of memory ends the run with one line and status 1; on rank 0 the
 * cases finished so far stay in the result file (output.c's exit path).
 * MB_FAULT_INJECT=oom-<what> makes the allocation named <what> fail. */
static void *xcalloc(size_t n, size_t size, const char *what)
{
    const char *f = mb_fault();
    void *p = f && strncmp(f, "oom-", 4) == 0 && strcmp(f + 4, what) == 0 ? NULL
                                                                            : calloc(n ? n : 1, size);
    if (!p)
        mb_die(1, "out of memory: %zu x %zu bytes for %s", n, size, what);
    return p;
}

static char *xstrdup(const char *s, const char *what)
{
    char *p = xcalloc(strlen(s) + 1, 1, what);
    return memcpy(p, s, strlen(s) + 1);
}

static int agree_max(MPI_Comm comm, int v)
{
    int out;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, comm);
    return out;
}

static char *default_out_path(const char *bench)
{
    char stamp[32], path[256];
    mb_utc_iso8601(stamp, sizeof(stamp));
    for (char *p = stamp; *p; p++)
        if (*p == ':')
            *p = '-';
    mkdir("results", 0755);
    snprintf(path, sizeof(path), "results/%s-%s.h5", bench, stamp);
    char *p = mb_output_unique(path);
    if (!p)
        mb_die(1, "out of memory: the result file's name");
    return p;
}

/* Batched timing: a sample of auto (--agg-iters auto) lasts about this long,
 * far above the timer's resolution and the barrier's exit skew. */
#define MB_BATCH_TARGET_S 100e-6

/* The calls per sample of a case: --agg-iters N (up to what the program can
 * hold), or auto: ceil(target / per-call time), the per-call time being
 * the slowest rank's median over the warm-up (the same on every rank). */
static long long choose_batch(struct mb_run *run, const struct mb_case *c, double *warm, long long nwarm)
{
    long long limit = run->bench->max_batch;
    if (c->max_batch > 0 && c->max_batch < limit)
        limit = c->max_batch;
    if (limit <= 1)
        return 1;
    if (run->common.batch > 0)
        return run->common.batch < limit ? run->common.batch : limit;
    double t = 0; /* no warm-up: nothing to go by, each call alone */
    if (nwarm > 0) {
        mb_sort_doubles(warm, (size_t)nwarm);
        t = warm[nwarm / 2];
    }
    double slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, run->comm);
    if (!(slowest > 0))
        return 1;
    double k = ceil(MB_BATCH_TARGET_S / slowest);
    return k < 1 ? 1 : k > (double)limit ? limit : (long long)k;
}

/* A case's calls per sample, chosen in its first round and kept for the
 * others; recorded as the case's metric "agg_iters" (every rank keeps it,
 * rank 0's reaches the file). */
static long long case_batch(struct mb_run *run, const struct mb_case *c, double *warm, long long nwarm)
{
    const struct mb_metric *m = mb_metric_find(&run->result, c->name, "agg_iters");
    if (m)
        return m->i[0];
    long long k = choose_batch(run, c, warm, nwarm);
    mb_metric_case_int(&run->result, c->name, "agg_iters", k);
    return k;
}

static void check_one(struct mb_run *run, void *state, int *check_failed, const struct mb_case *c, long long it)
{
    const struct mb_bench *b = run->bench;
    if (!run->common.check || !b->check || c->uncheckable || *check_failed)
        return;
    char msg[512] = "";
    if (b->check(state, it, msg, sizeof(msg)) != 0) {
        *check_failed = 1;
        mb_warn("check failed: %s: rank %d, iteration %lld: %s", c->name, run->rank, it, msg);
    }
}

/* MB_FAULT_INJECT=hang (tests of --timeout): one rank stops for good
 * before one iteration, all three drawn from --seed; its watchdog thread
 * goes on reporting, so the rank is alive but behind. Rank 0 says where
 * on stderr at the start. The case is never the first when there are
 * several, so finished cases exist to be kept. */
static struct {
    int on, rank;
    size_t case_index;
    long long iter;
} hang;

static void plan_hang(struct mb_run *run)
{
    const char *f = mb_fault();
    if (!f || strcmp(f, "hang") != 0 || !run->ncases)
        return;
    uint64_t st = (uint64_t)run->common.seed ^ 0x68616e67u; /* "hang" */
    hang.on = 1;
    hang.rank = (int)(mb_splitmix64(&st) % (uint64_t)run->nranks);
    hang.case_index = run->ncases > 1 ? 1 + mb_splitmix64(&st) % (run->ncases - 1) : 0;
    long long n = run->common.warmup + run->common.iters;
    hang.iter = (long long)(mb_splitmix64(&st) % (uint64_t)n);
    if (run->rank == 0)
        fprintf(stderr, "%s: MB_FAULT_INJECT=hang: rank %d stops before case %s, iteration %lld\n",
                run->bench->name, hang.rank, run->cases[hang.case_index].name, hang.iter);
}

static void maybe_hang(struct mb_run *run, size_t ci, long long it)
{
    if (hang.on && run->rank == hang.rank && ci == hang.case_index && it == hang.iter)
        for (;;)
            pause();
}

/* Runs the warm-up and timed samples [first, first + count) of one case on
 * this rank (a round: --rounds). Each warm-up call is timed alone; then a
 * sample times k calls back to back (case_batch) and stores the block's
 * time / k. Every call has its own iteration index (warm-up: 0..warmup-1;
 * sample s, call j: warmup + s*k + j, the same in every round), is
 * prepared before its block and checked after it. */
static int measure(struct mb_run *run, void *state, struct mb_counters *ctr, double *times,
                   long long *counts, int *check_failed, const struct mb_case *c, long long first,
                   long long count)
{
    const struct mb_bench *b = run->bench;
    size_t nev = mb_counters_nevents(ctr);
    long long *now = nev ? xcalloc(nev, sizeof(*now), "counter values") : NULL;
    long long warmup = run->common.warmup;
    double *warm = xcalloc((size_t)(warmup > 0 ? warmup : 1), sizeof(double), "warm-up times");
    int err = 0;
    size_t ci = (size_t)(c - run->cases);
    run->batch = 1;
    for (long long it = 0; it < warmup && !err; it++) {
        mb_watchdog_progress(ci, it, 0);
        maybe_hang(run, ci, it);
        if (b->prepare)
            b->prepare(state, it);
        mb_watchdog_progress(ci, it, 1);
        MPI_Barrier(run->comm);
        double elapsed = -1, t0 = MPI_Wtime();
        err = b->iterate(state, it, &elapsed);
        double t1 = MPI_Wtime();
        warm[it] = elapsed >= 0 ? elapsed : t1 - t0;
        if (!err)
            check_one(run, state, check_failed, c, it);
    }
    /* every rank takes part in choosing k, also one whose warm-up failed */
    long long k = case_batch(run, c, warm, err ? 0 : warmup);
    run->batch = k;
    for (long long i = 0; i < count && !err; i++) {
        long long s = first + i, base = warmup + s * k, done = 0;
        mb_watchdog_progress(ci, base, 0);
        maybe_hang(run, ci, base);
        for (long long j = 0; j < k && b->prepare; j++)
            b->prepare(state, base + j);
        mb_watchdog_progress(ci, base, 1);
        MPI_Barrier(run->comm);
        if (nev)
            mb_counters_start(ctr);
        double device = 0;
        int timed_by_device = 1;
        double t0 = MPI_Wtime();
        for (; done < k && !err; done++) {
            double elapsed = -1;
            if (done) {
                mb_watchdog_progress(ci, base + done, 0);
                maybe_hang(run, ci, base + done);
                mb_watchdog_progress(ci, base + done, 1);
            }
            err = b->iterate(state, base + done, &elapsed);
            if (elapsed >= 0)
                device += elapsed;
            else
                timed_by_device = 0;
        }
        double t1 = MPI_Wtime();
        if (nev) {
            mb_counters_stop(ctr, now);
            for (size_t e = 0; e < nev; e++)
                counts[e] += now[e];
        }
        times[s] = (timed_by_device ? device : t1 - t0) / (double)k;
        for (long long j = 0; j < done - (err != 0); j++)
            check_one(run, state, check_failed, c, base + j);
    }
    free(warm);
    free(now);
    return err;
}

/* ===== before MPI_Finalize (harness.h) ============================ */

#define MB_FINALIZERS 8
static struct {
    void (*fn)(void *);
    void *arg;
} finalizers[MB_FINALIZERS];
static int nfinalizers;

int mb_finalize_add(void (*fn)(void *arg), void *arg)
{
    if (nfinalizers >= MB_FINALIZERS)
        return -1;
    finalizers[nfinalizers].fn = fn;
    finalizers[nfinalizers++].arg = arg;
    return 0;
}

/* The program's MPI-time clean-up, then the signal-safe hooks, then MPI's
 * end. Every rank's output is written out before it: once a rank has left
 * MPI_Finalize, mpirun may end the others (one exited non-zero) before
 * exit() would have flushed their stdout. */
static void finalize(void)
{
    while (nfinalizers > 0) {
        nfinalizers--;
        finalizers[nfinalizers].fn(finalizers[nfinalizers].arg);
    }
    mb_cleanup_run();
    fflush(NULL);
    MPI_Finalize();
}

/* The root's "emulation": the program's stand-ins, and the emulated
 * cluster's network when tools/vcluster launched the run. */
static void record_emulation(struct mb_run *run)
{
    const char *vc = getenv("MB_VCLUSTER_EMULATION");
    if (!vc || !*vc) {
        mb_kv_str(&run->result.root, "emulation", run->emulation);
    } else if (strcmp(run->emulation, "none") == 0) {
        mb_kv_str(&run->result.root, "emulation", vc);
    } else {
        size_t n = strlen(run->emulation) + strlen(vc) + 3;
        char *both = xcalloc(n, 1, "the emulation text");
        snprintf(both, n, "%s; %s", run->emulation, vc);
        mb_kv_str(&run->result.root, "emulation", both);
        free(both);
    }
}

/* Gathers times and counts to rank 0, fills the case's result and
 * writes it to the result file. The counts fit MPI's int: start() refused
 * a larger -n/--iters, and nev is a handful of events. */
static void collect(struct mb_run *run, const struct mb_case *c, const double *times,
                    const long long *counts, int check, size_t nev)
{
    size_t iters = (size_t)run->common.iters, p = (size_t)run->nranks;
    double *all = run->rank == 0 ? xcalloc(iters * p, sizeof(double), "gathered samples") : NULL;
    long long *allc = run->rank == 0 && nev ? xcalloc(p * nev, sizeof(long long), "gathered counters") : NULL;
    MPI_Gather(times, (int)iters, MPI_DOUBLE, all, (int)iters, MPI_DOUBLE, 0, run->comm);
    if (nev)
        MPI_Gather(counts, (int)nev, MPI_LONG_LONG, allc, (int)nev, MPI_LONG_LONG, 0, run->comm);
    if (run->rank != 0)
        return;

    struct mb_case_result *cr = mb_result_add_case(&run->result, c->name);
    for (size_t l = 0; l < run->result.nlabels; l++)
        cr->labels[l] = xstrdup(c->labels[l] ? c->labels[l] : "", "a label");
    cr->bytes = c->bytes;
    cr->count = c->count;
    cr->iters = iters;
    cr->nranks = p;
    cr->samples = xcalloc(iters * p, sizeof(double), "samples");
    double *slowest = xcalloc(iters, sizeof(double), "slowest-rank times");
    for (size_t i = 0; i < iters; i++) {
        slowest[i] = 0;
        for (size_t r = 0; r < p; r++) {
            double t = all[r * iters + i];
            cr->samples[i * p + r] = t; /* [iterations x ranks] */
            if (t > slowest[i])
                slowest[i] = t;
        }
    }
    mb_stats_compute(slowest, iters, &cr->stats);
    double algbw = cr->stats.median > 0 ? (double)c->bytes / cr->stats.median / 1e9 : 0;
    cr->algbw = algbw;
    cr->busbw = algbw * (run->bench->busbw_factor ? run->bench->busbw_factor(run, c) : 1.0);
    cr->model_s = run->bench->model ? run->bench->model(run, c) : NAN;
    cr->check = check;
    cr->counters = allc;
    free(slowest);
    free(all);
    if (out.file && !out.failed) {
        record_emulation(run);
        out.failed = mb_output_add(out.file, &run->result, run->result.ncases - 1, out.err,
                                   sizeof(out.err)) != 0;
    }
}

int mb_run_flush(struct mb_run *run)
{
    mb_trace_gather(run->comm, &run->result);
    int failed = 0;
    if (run->rank == 0 && out.file && !out.failed) {
        record_emulation(run);
        out.failed = failed = mb_output_sync(out.file, &run->result, out.err, sizeof(out.err)) != 0;
        if (failed)
            mb_warn("writing the result file mid-case failed: %s", out.err);
    }
    return agree_max(run->comm, failed) ? -1 : 0;
}

static void print_row(struct mb_run *run, const struct mb_case_result *cr)
{
    OUT(run, "%12llu %12llu %12.2f %12.2f %12.2f %10.3f %10.3f  ", (unsigned long long)cr->bytes,
        (unsigned long long)cr->count, cr->stats.median * 1e6, cr->stats.min * 1e6, cr->stats.max * 1e6,
        cr->algbw, cr->busbw);
    if (run->bench->model) /* the model column only for programs with a model */
        OUT(run, "%10.2f  ", cr->model_s * 1e6);
    OUT(run, "%s\n", mb_check_name(cr->check));
}

static void progress(struct mb_run *run, size_t done, size_t total, double start)
{
    if (run->rank != 0 || run->common.quiet || !isatty(STDERR_FILENO))
        return;
    double el = mb_now() - start;
    double left = done ? el / (double)done * (double)(total - done) : 0;
    fprintf(stderr, "\r%s: case %zu/%zu, %.1f s elapsed, ~%.0f s left   %s", run->bench->name, done,
            total, el, left, done == total ? "\n" : "");
    fflush(stderr);
}

/* Parses and validates; 0 to go on, otherwise the exit status. */
static int start(struct mb_run *run, char **out_path)
{
    int parse = mb_options_parse(run->bench, &run->common, run->argc, run->argv,
                                 run->rank == 0 ? stderr : NULL);
    if (parse == 1) {
        if (run->rank == 0)
            mb_options_help(run->bench, stdout);
        return -1; /* help: exit 0 */
    }
    if (parse != 0)
        return parse;
    if (!mb_count_fits((size_t)run->common.iters)) {
        if (run->rank == 0)
            mb_warn("-n/--iters: %lld iterations exceed what one MPI call can gather (%d)",
                    run->common.iters, 2147483647);
        return MB_EXIT_USAGE;
    }
    char err[512] = "";
    if (run->common.device == MB_DEV_CUDA && mb_cuda_probe(err, sizeof(err)) != 0) {
        if (run->rank == 0)
            mb_warn("-d/--device cuda: %s", err);
        return MB_EXIT_USAGE;
    }
    int bad = run->bench->validate ? run->bench->validate(run) : 0;
    if (agree_max(run->comm, bad))
        return MB_EXIT_USAGE;
    /* The output path is checked before any work. */
    int probe = 0;
    if (run->rank == 0) {
        *out_path = run->common.out ? xstrdup(run->common.out, "the result file's name")
                                    : default_out_path(run->bench->name);
        probe = mb_output_probe(*out_path, run->common.out != NULL, err, sizeof(err));
        if (probe)
            mb_warn("%s", err);
    }
    return agree_max(run->comm, probe ? MB_EXIT_USAGE : 0);
}

static const char *thread_level_name(int level)
{
    return level == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                            : "unknown";
}

/* 1 (with one line from rank 0) when the MPI library provides a lower
 * thread level than the program asked for: a progress thread would race
 * the library. MB_FAULT_INJECT=thread-single plays a library that
 * provides only MPI_THREAD_SINGLE (this Open MPI provides every level). */
static int refuse_thread_level(struct mb_run *run)
{
    const char *f = mb_fault();
    if (f && strcmp(f, "thread-single") == 0)
        run->thread_provided = MPI_THREAD_SINGLE;
    if (!agree_max(run->comm, run->thread_provided < run->thread_requested))
        return 0;
    if (run->rank == 0)
        mb_warn("MPI thread level: the MPI library provides %s, %s needs %s",
                thread_level_name(run->thread_provided), run->bench->name,
                thread_level_name(run->thread_requested));
    return 1;
}

static void fill_metadata(struct mb_run *run, struct mb_counters *ctr)
{
    struct mb_result *r = &run->result;
    mb_provenance_collect(run->comm, run->bench->name, run->argc, run->argv, r);
    if (run->rank != 0)
        return;
    mb_kv_str(&r->root, "device", run->common.device == MB_DEV_CUDA ? "cuda" : "host");
    mb_kv_int(&r->root, "seed", run->common.seed);
    mb_kv_str(&r->root, "papi_unavailable", mb_counters_unavailable(ctr));
    mb_options_config(run->bench, &run->common, &r->config);
    mb_kv_str(&r->config, "mpi_thread_requested", thread_level_name(run->thread_requested));
    mb_kv_str(&r->config, "mpi_thread_provided", thread_level_name(run->thread_provided));
    if (run->bench->config)
        run->bench->config(run, &r->config);
    for (const char *const *l = run->bench->label_names; l && *l && r->nlabels < MB_MAX_LABELS; l++)
        r->label_names[r->nlabels++] = xstrdup(*l, "a label name");
    r->nevents = mb_counters_nevents(ctr);
    r->event_names = r->nevents ? xcalloc(r->nevents, sizeof(char *), "event names") : NULL;
    for (size_t e = 0; e < r->nevents; e++)
        r->event_names[e] = xstrdup(mb_counters_name(ctr, e), "an event name");
}

/* One round's share of the timed iterations: [*first, *first + *count). */
static void round_share(long long iters, long long rounds, long long r, long long *first, long long *count)
{
    long long base = iters / rounds, extra = iters % rounds;
    *first = r * base + (r < extra ? r : extra);
    *count = base + (r < extra);
}

/* Every case, --rounds times over: each round sets a case up, warms it up,
 * times its share of the iterations and tears it down; the last round
 * prints the case's row. With one round, case after case as OSU does. */
static int run_cases(struct mb_run *run, struct mb_counters *ctr, int *any_fail)
{
    size_t nev = mb_counters_nevents(ctr), nc = run->ncases, iters = (size_t)run->common.iters;
    long long rounds = run->common.rounds > 0 ? run->common.rounds : 1;
    /* a case's samples must outlive its round only with several rounds */
    size_t slots = rounds > 1 && nc ? nc : 1, ne = nev ? nev : 1;
    double *times = calloc(slots * iters, sizeof(double)); /* 0: never timed */
    long long *counts = calloc(slots * ne, sizeof(long long));
    int *failed = calloc(nc ? nc : 1, sizeof(int));
    const char *group = "";
    double t_start = mb_now();
    int err = !times || !counts || !failed;
    if (err)
        mb_warn("out of memory for %zu cases x %zu iterations", nc, iters);
    for (long long r = 0; r < rounds && !err; r++) {
        long long first, count;
        round_share((long long)iters, rounds, r, &first, &count);
        for (size_t k = 0; k < nc && !err; k++) {
            const struct mb_case *c = &run->cases[k];
            void *state = NULL;
            mb_watchdog_progress(k, -1, 0);
            err = agree_max(run->comm, run->bench->setup(run, c, &state));
            if (err) {
                if (state && run->bench->teardown)
                    run->bench->teardown(state);
                break;
            }
            int last = r == rounds - 1;
            if (last && strcmp(group, c->group) != 0) {
                group = c->group;
                OUT(run, "\n# %s\n%12s %12s %12s %12s %12s %10s %10s  ", group, "size(B)", "count",
                    "median(us)", "min(us)", "max(us)", "algbw(GB/s)", "busbw(GB/s)");
                if (run->bench->model)
                    OUT(run, "%10s  ", "model(us)");
                OUT(run, "check\n");
            }
            size_t slot = slots > 1 ? k : 0;
            long long *ck = counts + slot * ne;
            double *tk = times + slot * iters;
            if (r == 0)
                memset(ck, 0, ne * sizeof(*ck));
            err = agree_max(run->comm, measure(run, state, ctr, tk, ck, &failed[k], c, first, count));
            if (run->bench->teardown)
                run->bench->teardown(state);
            if (err) {
                if (run->rank == 0)
                    mb_warn("%s: the benchmark reported an error; stopping", c->name);
                break;
            }
            if (last) {
                int f = agree_max(run->comm, failed[k]);
                *any_fail |= f;
                int check = !run->common.check || !run->bench->check ? MB_CHECK_SKIPPED
                            : c->uncheckable                          ? MB_CHECK_NA
                            : f                                       ? MB_CHECK_FAIL
                                                                      : MB_CHECK_PASS;
                collect(run, c, tk, ck, check, nev);
                if (run->rank == 0) {
                    print_row(run, &run->result.cases[run->result.ncases - 1]);
                    fflush(stdout);
                }
            }
            progress(run, (size_t)r * nc + k + 1, nc * (size_t)rounds, t_start);
        }
    }
    free(times);
    free(counts);
    free(failed);
    return err;
}

int mb_main(const struct mb_bench *bench, int argc, char **argv)
{
    mb_set_progname(bench->name);
    int requested = bench->thread_level ? bench->thread_level : MPI_THREAD_SINGLE, provided;
    MPI_Init_thread(&argc, &argv, requested, &provided);
    struct mb_run run = {.bench = bench, .comm = MPI_COMM_WORLD, .argc = argc, .argv = argv, .emulation = "none",
                         .thread_requested = requested, .thread_provided = provided};
    MPI_Comm_rank(run.comm, &run.rank);
    MPI_Comm_size(run.comm, &run.nranks);
    if (refuse_thread_level(&run)) {
        finalize();
        return MB_EXIT_USAGE;
    }
    mb_result_init(&run.result);

    char *out_path = NULL;
    int status = start(&run, &out_path);
    if (status == 0) {
        int planned = bench->plan(&run);
        status = planned == MB_PLAN_DONE ? -1 : planned ? MB_EXIT_USAGE : 0;
    }
    if (status != 0) {
        free(out_path);
        mb_result_free(&run.result);
        finalize();
        return status < 0 ? 0 : status;
    }

    struct mb_counters *ctr = mb_counters_open(run.comm, run.common.papi);
    if (!ctr)
        mb_die(1, "out of memory: hardware counters");
    fill_metadata(&run, ctr);
    /* The file exists from the start, complete=0 until the end, so a run
     * cut short keeps every case it finished. */
    int open_failed = 0;
    if (run.rank == 0) {
        record_emulation(&run);
        mb_kv_int(&run.result.root, "complete", 0);
        mb_kv_int(&run.result.root, "cases_planned", (long long)run.ncases);
        out.file = mb_output_open(&run.result, out_path, out.err, sizeof(out.err));
        if (!out.file) {
            mb_warn("cannot create the result file: %s", out.err);
            open_failed = 1;
        }
    }
    if (agree_max(run.comm, open_failed)) {
        mb_counters_close(ctr);
        free(out_path);
        mb_result_free(&run.result);
        finalize();
        return 1;
    }
    OUT(&run, "# %s: %d ranks, device %s, %zu cases, %lld warm-up + %lld timed iterations, check %s\n",
        bench->name, run.nranks, run.common.device == MB_DEV_CUDA ? "cuda" : "host", run.ncases,
        run.common.warmup, run.common.iters, run.common.check ? "on" : "off");
    if (bench->table_header)
        OUT(&run, "%s", bench->table_header);

    int any_fail = 0;
    plan_hang(&run);
    int err = agree_max(run.comm, mb_watchdog_start(&run) != 0);
    if (!err)
        err = run_cases(&run, ctr, &any_fail);
    mb_watchdog_stop();
    mb_counters_close(ctr);
    if (bench->finish)
        bench->finish(&run);
    mb_trace_gather(run.comm, &run.result); /* spans of every rank, for /trace */

    if (run.rank == 0) {
        record_emulation(&run);
        char stamp[32], msg[4608];
        mb_utc_iso8601(stamp, sizeof(stamp));
        mb_kv_str(&run.result.root, "end_time_utc", stamp);
        mb_kv_int(&run.result.root, "complete", !err);
        char *final = mb_output_close(out.file, &run.result, msg, sizeof(msg));
        out.file = NULL;
        if (!final) {
            /* the measurements must not be lost with the file: CSV on stdout */
            mb_warn("writing the result file failed: %s; the summary follows as CSV on stdout", msg);
            fflush(stderr);
            mb_result_csv(&run.result, stdout);
            err = 1;
        } else {
            if (strcmp(final, out_path) != 0)
                mb_warn("%s appeared during the run; wrote %s instead", out_path, final);
            OUT(&run, "# result file: %s\n", final);
            free(final);
        }
    }
    err = agree_max(run.comm, err);
    if (any_fail && run.rank == 0)
        mb_warn("FAILED: at least one case gave a wrong result (see above)");
    free(out_path);
    mb_result_free(&run.result);
    finalize();
    return err || any_fail ? 1 : 0;
}
