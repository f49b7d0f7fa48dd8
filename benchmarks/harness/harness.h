/* movebench benchmark harness: options, timing loop, statistics, result
 * files (HDF5), hardware counters (PAPI) and provenance, written once and
 * used by every program. A program fills a struct mb_bench (a table of
 * callbacks) and calls mb_main(); it never writes its own main loop. */
#ifndef MB_HARNESS_H
#define MB_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "../../common/common.h"

#define MB_SCHEMA_VERSION 2

/* ===== key/value lists (config, provenance, environment) ============== */

enum mb_kv_type { MB_KV_STR, MB_KV_INT, MB_KV_DBL };

struct mb_kv {
    char *key;
    enum mb_kv_type type;
    char *s;
    long long i;
    double d;
};

struct mb_kvlist {
    struct mb_kv *v;
    size_t n, cap;
};

/* Setting an existing key replaces its value. */
void mb_kv_str(struct mb_kvlist *l, const char *key, const char *val);
void mb_kv_int(struct mb_kvlist *l, const char *key, long long val);
void mb_kv_dbl(struct mb_kvlist *l, const char *key, double val);
const struct mb_kv *mb_kv_get(const struct mb_kvlist *l, const char *key);
void mb_kv_free(struct mb_kvlist *l);

/* ===== statistics ====================================================== */

struct mb_stats {
    size_t n;
    double min, median, p95, max, mean;
    double ci_lo, ci_hi; /* nonparametric 95% CI of the median */
};

/* Sorts a copy of x[0..n); n == 0 gives all-NaN fields. */
void mb_stats_compute(const double *x, size_t n, struct mb_stats *out);
/* Order-statistic ranks (0-based, inclusive) bounding the median at 95%. */
void mb_stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi);
/* Linear-interpolated quantile of sorted[0..n), q in [0,1]. */
double mb_stats_quantile_sorted(const double *sorted, size_t n, double q);

/* ===== result file ====================================================== */

/* n/a: the program cannot check this case (e.g. an external tool's run);
 * never "pass" for what was not checked */
enum mb_check { MB_CHECK_SKIPPED = 0, MB_CHECK_PASS = 1, MB_CHECK_FAIL = 2, MB_CHECK_NA = 3 };
const char *mb_check_name(int check);

#define MB_MAX_LABELS 8

/* One measured case. */
struct mb_case_result {
    char *name;                       /* unique in the file, e.g. "allreduce/float/sum/oop/mpi/1024" */
    char *labels[MB_MAX_LABELS];      /* values of mb_result.label_names, in order */
    uint64_t bytes, count;
    size_t iters, nranks;
    double *samples;                  /* [iters x nranks], seconds */
    struct mb_stats stats;            /* of the per-iteration slowest-rank time */
    double algbw, busbw;              /* GB/s (1e9 bytes/s) from the median */
    double model_s;                   /* predicted time, NaN when no model */
    int check;                        /* enum mb_check */
    long long *counters;              /* [nranks x mb_result.nevents], NULL if nevents == 0 */
};

/* One measured series, /metrics/<case>/<name>: a 1-D dataset of n values,
 * one for a per-case measurement, one per epoch (or step) for a series.
 * Entries never set read as NaN, "" or 0. */
struct mb_metric {
    char *case_name, *name;
    enum mb_kv_type type;
    size_t n, cap;
    double *d;          /* MB_KV_DBL */
    long long *i;       /* MB_KV_INT */
    char **s;           /* MB_KV_STR */
    unsigned long version; /* bumped on every change (the writer rewrites changed ones) */
};

/* One traced span of work: [start, end) in seconds on the trace's clock
 * (see mb_trace_*), on lane `lane` (an index into its rank's lanes: a
 * thread, a queue or a device direction). */
struct mb_span {
    char *name;
    double start, end;
    long long lane;
};

/* One rank's spans, /trace/rank<R>. */
struct mb_trace_rank {
    int rank;
    size_t nspans;
    struct mb_span *spans;
    size_t nlanes;
    char **lanes;                 /* lane names, by lane index */
};

/* Everything one file holds. Rank 0 fills it; mb_result_write stores it. */
struct mb_result {
    struct mb_kvlist root;        /* "/" attributes: provenance (schema_version added by writer) */
    struct mb_kvlist config;      /* "/config" attributes: parameters only */
    struct mb_kvlist metrics;     /* "/metrics" attributes: the run's own measurements */
    size_t nseries, series_cap;   /* "/metrics/<case>/<name>" datasets */
    struct mb_metric *series;
    struct mb_kvlist environment; /* "/environment" attributes */
    char *topology_xml;           /* "/topology", may be NULL */
    size_t nlabels;
    char *label_names[MB_MAX_LABELS];
    size_t nevents;
    char **event_names;
    size_t ncases, cap;
    struct mb_case_result *cases;
    size_t ntrace;                /* "/trace/rank<R>": ranks that recorded spans */
    struct mb_trace_rank *trace;
};

void mb_result_init(struct mb_result *r);
/* Appends a zeroed case (name copied) and returns it. */
struct mb_case_result *mb_result_add_case(struct mb_result *r, const char *name);
void mb_result_free(struct mb_result *r);

/* Measurements go to /metrics, never /config (schema 2). Names are
 * identifiers (no '/'; a bad one is a bug and fatal). Run-level values are
 * attributes of /metrics; a case's are datasets of /metrics/<case>: one
 * value (mb_metric_case_*), or element `index` of a series (mb_metric_at_*,
 * e.g. per epoch; the series grows, unset entries read NaN, "" or 0).
 * Setting again replaces the value; a series keeps its first type. */
void mb_metric_run_str(struct mb_result *r, const char *name, const char *val);
void mb_metric_run_int(struct mb_result *r, const char *name, long long val);
void mb_metric_run_dbl(struct mb_result *r, const char *name, double val);
void mb_metric_case_str(struct mb_result *r, const char *case_name, const char *name, const char *val);
void mb_metric_case_int(struct mb_result *r, const char *case_name, const char *name, long long val);
void mb_metric_case_dbl(struct mb_result *r, const char *case_name, const char *name, double val);
void mb_metric_at_str(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      const char *val);
void mb_metric_at_int(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      long long val);
void mb_metric_at_dbl(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      double val);
/* The series of a case, or NULL. */
const struct mb_metric *mb_metric_find(const struct mb_result *r, const char *case_name, const char *name);
/* Its element index as a double (NaN when absent, out of range or a string). */
double mb_metric_value(const struct mb_result *r, const char *case_name, const char *name, size_t index);

/* Writes exactly `path` (creating it, failing if it exists). 0 or -1 with
 * a message in err. The harness wraps this in tmp-then-link. */
int mb_result_write(const struct mb_result *r, const char *path, char *err, size_t errlen);
/* The same, case by case, so a run cut short keeps its finished cases:
 * begin creates `path` (O_EXCL: never an existing file nor through a
 * link) with r's attributes, /topology and an empty /summary; append adds
 * r->cases[k] (samples, counters, a /summary row), rewrites "/" from
 * r->root, writes /metrics as r holds it now (so finished cases keep their
 * measurements) and flushes; end rewrites "/", /config, /environment and
 * /metrics from r and closes (r NULL: close without writing, after a failure). Each
 * returns 0 or -1 with a message naming the path in err; a failed begin
 * leaves no file. */
struct mb_result_writer;
struct mb_result_writer *mb_result_begin(const struct mb_result *r, const char *path, char *err,
                                         size_t errlen);
int mb_result_append(struct mb_result_writer *w, const struct mb_result *r, size_t k, char *err,
                     size_t errlen);
/* "/", /metrics and /trace rewritten from r, then a flush (mid-case). */
int mb_result_sync(struct mb_result_writer *w, const struct mb_result *r, char *err, size_t errlen);
int mb_result_end(struct mb_result_writer *w, const struct mb_result *r, char *err, size_t errlen);
/* A close-on-exec duplicate of the open file's descriptor (for fsync), or -1. */
int mb_result_writer_fd(const struct mb_result_writer *w);
/* Reads a file written by mb_result_write back into r (for mb-report and
 * the round-trip test). 0 or -1 with a message in err. */
int mb_result_read(const char *path, struct mb_result *r, char *err, size_t errlen);

/* ===== trace spans ======================================================
 * Off until mb_trace_enable(1); then every thread may record spans (a
 * mutex-protected list per process). Times are seconds since the process
 * enabled tracing (mb_now); mb_trace_gather aligns the ranks by the wall
 * clock read at that moment (0 is the earliest rank's), so spans of ranks
 * on different hosts are as aligned as their clocks (NTP). The driver gathers after the last case
 * and the result file keeps them in /trace; mb-report --chrome-trace
 * turns them into Chrome's trace-event JSON (chrome://tracing, Perfetto). */
void mb_trace_enable(int on);
int mb_trace_enabled(void);
/* The lane called name (made on first use): an index for mb_trace_end. */
int mb_trace_lane(const char *name);
/* Now on the trace's clock (0 while tracing is off). */
double mb_trace_now(void);
/* An mb_now() time on the trace's clock (libraries report mb_now() times:
 * mb_link's on_copy, mb_ostore's on_span). */
double mb_trace_clock(double t_now);
/* Records [begin, now) as `name` on lane (nothing while off). */
void mb_trace_end(int lane, const char *name, double begin);
/* Records [start, end) (trace clock) as `name` on lane. */
void mb_trace_span(int lane, const char *name, double start, double end);
/* Collective over comm: rank 0 appends every rank's spans (ranks without
 * any are left out) to r->trace; each rank's own list is emptied. */
void mb_trace_gather(MPI_Comm comm, struct mb_result *r);
struct mb_run;
/* Collective, from a case's prepare/check (every rank at the same call):
 * gathers the spans recorded so far (a later gather appends to a rank's
 * list) and, on rank 0, rewrites "/", /metrics and /trace in the result
 * file and flushes it, so a run killed mid-case keeps its finished steps'
 * spans and measurements (the case itself is written when it ends;
 * complete=0 until the run does). 0, or -1 with one line when the write
 * failed (the run's file is then broken, as a failed case write is). */
int mb_run_flush(struct mb_run *run);
/* Frees r->trace (part of mb_result_free). */
void mb_trace_free(struct mb_result *r);

/* ===== counters (PAPI) ================================================== */

struct mb_counters;

/* Collective over comm. spec: comma-separated PAPI event names; NULL means
 * $MB_PAPI_EVENTS, else the defaults (hardware presets, falling back to
 * perf:: software events). Each event is tried; the ones that fail on any
 * rank are dropped on every rank and listed by mb_counters_unavailable(),
 * never fatal. Returns NULL only when out of memory. */
struct mb_counters *mb_counters_open(MPI_Comm comm, const char *spec);
size_t mb_counters_nevents(const struct mb_counters *c);
const char *mb_counters_name(const struct mb_counters *c, size_t i);
/* "EVENT: reason; EVENT: reason" or "" */
const char *mb_counters_unavailable(const struct mb_counters *c);
/* Start counting (zeroes the counts). */
void mb_counters_start(struct mb_counters *c);
/* Stop and store this rank's counts into values[nevents]. */
void mb_counters_stop(struct mb_counters *c, long long *values);
void mb_counters_close(struct mb_counters *c);
/* PAPI version string ("7.0.0.0"). */
const char *mb_counters_papi_version(void);

/* ===== provenance ======================================================= */

/* Collective over comm. Rank 0 receives in r->root the provenance
 * attributes of DESIGN.md (benchmark, command_line, start_time_utc,
 * git_commit, git_dirty, nranks, nnodes, hostnames, versions, compiler,
 * cflags, kernel, perf_event_paranoid, slurm_*), in r->environment the
 * whitelisted environment (OMPI_*, UCX_*, SLURM_*, PAPI_*, HDF5_*, CUDA_*,
 * MB_*), and in r->topology_xml hwloc's XML of its node. The caller adds
 * device, seed and emulation. */
void mb_provenance_collect(MPI_Comm comm, const char *benchmark, int argc, char **argv,
                           struct mb_result *r);
/* Baked in at build time. */
const char *mb_build_git_commit(void);
int mb_build_git_dirty(void);
const char *mb_build_compiler(void);
const char *mb_build_cflags(void);

/* ===== options ========================================================== */

enum mb_opt_kind {
    MB_OPT_FLAG,   /* no argument; int* set to 1 (a "no-" form sets 0) */
    MB_OPT_INT,    /* long long* within [min, max] */
    MB_OPT_SIZE,   /* size_t*, K/M/G suffixes (powers of 1024), within [min, max] */
    MB_OPT_DOUBLE, /* double* within [min, max] */
    MB_OPT_STR,    /* char** (not copied) */
    MB_OPT_CHOICE, /* int* index into choices ("a|b|c") */
    MB_OPT_LIST,   /* unsigned* bit mask over choices, comma-separated, "all" = every choice
                    * before a ';' in choices ("a|b;c": c is named only explicitly) */
};

struct mb_opt {
    const char *name;    /* long name without "--" */
    int short_name;      /* 0 for none */
    enum mb_opt_kind kind;
    void *dst;
    const char *def;     /* default, as the user would type it (parsed like input); NULL = unset */
    const char *choices; /* CHOICE/LIST: "a|b|c" */
    double min, max;     /* INT/SIZE/DOUBLE bounds */
    const char *help;
    const char *metavar;
};

/* Parses a size with an optional K/M/G suffix (powers of 1024, optional
 * trailing B/iB). 0 on success, -1 otherwise. */
int mb_parse_size(const char *s, size_t *out);
/* Formats bytes as "64M", "4K", "17". */
void mb_format_size(size_t bytes, char *buf, size_t len);

/* ===== benchmark table and driver ======================================= */

enum mb_device { MB_DEV_HOST = 0, MB_DEV_CUDA = 1 };

/* The flags every program shares (DESIGN.md). */
struct mb_common {
    size_t minbytes, maxbytes;
    long long stepfactor;
    long long iters, warmup;
    long long rounds;   /* --rounds: the timed iterations split into rounds over all cases */
    int check;          /* on by default */
    int device;         /* enum mb_device */
    char *out;          /* -o; NULL = results/<bench>-<utc>.h5 */
    char *papi;         /* --papi */
    int quiet;
    long long seed;
    char *sizes;        /* --sizes: explicit list, overrides -b/-e/-f */
    char *batch_arg;    /* --agg-iters as typed: N or auto */
    long long batch;    /* --agg-iters (nccl-tests' name): calls timed back to back per sample; 0 = auto */
    double timeout;     /* --timeout (default $MB_TIMEOUT): seconds without progress before the run ends; 0 = off */
};
#define MB_BATCH_MAX 65536 /* --agg-iters' largest N */

/* The message sizes of this run: --sizes if given, else minbytes times
 * stepfactor^k up to maxbytes (0 is followed by 1). Returns a malloc'd
 * array (never NULL: out of memory ends the run with one line) and its
 * length in *n. */
size_t *mb_sizes(const struct mb_common *common, size_t *n);

/* One case the benchmark wants measured. */
struct mb_case {
    char name[160];
    char group[160];     /* table section heading; a new heading when it changes */
    const char *labels[MB_MAX_LABELS];
    uint64_t bytes, count;
    void *user;          /* the benchmark's own description of the case */
    int max_batch;       /* this case's limit on calls per sample (its buffers); 0: the bench's */
    int uncheckable;     /* the program has no check for this case: recorded "n/a", check() not called */
};

struct mb_bench;

/* State of one run, passed to every callback. */
struct mb_run {
    const struct mb_bench *bench;
    struct mb_common common;
    MPI_Comm comm;
    int rank, nranks;
    int argc;
    char **argv;
    const char *emulation; /* set by setup; default "none" */
    struct mb_result result;
    struct mb_case *cases;
    size_t ncases;
    long long batch;       /* calls per timed sample of the case being measured (1 in its warm-up) */
    int thread_requested, thread_provided; /* MPI_Init_thread's (struct mb_bench.thread_level) */
};

struct mb_bench {
    const char *name;           /* "mb-coll" */
    const char *description;    /* one line for --help */
    const struct mb_opt *opts;  /* program flags, terminated by name == NULL */
    const char *const *label_names; /* case columns of /summary, NULL-terminated */
    const char *table_header;   /* optional: printed by rank 0 before the first case */
    /* Batched timing (--agg-iters): how many iterations' inputs and outputs the
     * program holds at once, apart by iteration index % max_batch. 0 or 1:
     * each iteration is timed alone. With k > 1 calls per sample, the
     * driver prepares k iterations, times their k iterate calls back to
     * back (the sample is the block's time / k) and then checks each. */
    int max_batch;
    /* The MPI thread level mb_main asks MPI_Init_thread for (MPI_THREAD_*;
     * 0, unset, asks for MPI_THREAD_SINGLE): a program that calls MPI from
     * a thread of its own (a progress thread: MPI_THREAD_MULTIPLE) says so
     * here. A library that provides less ends the run before any work, one
     * line and exit 2; both levels are recorded in /config. */
    int thread_level;

    /* After parsing, before any work: return 0, or print one line naming
     * the flag and return MB_EXIT_USAGE. Runs on every rank. */
    int (*validate)(struct mb_run *run);
    /* Record the program's parameters into /config (common ones are added). */
    void (*config)(struct mb_run *run, struct mb_kvlist *config);
    /* Fill run->cases/run->ncases. Allocation owned by the program.
     * MB_PLAN_DONE: the program did all its work here (e.g. a calibration)
     * and exits 0 without cases or a result file. */
    int (*plan)(struct mb_run *run);
    /* Per case: allocate buffers, set *state. Non-zero aborts the run. */
    int (*setup)(struct mb_run *run, const struct mb_case *c, void **state);
    /* Untimed, before each iteration (warm-up included): make this
     * iteration's input (data differs every iteration). */
    void (*prepare)(void *state, long long iter);
    /* Timed: one iteration. Returns 0, or non-zero on an error.
     * If *elapsed is set (>= 0) it is used instead of the host timer
     * (device work timed by CUDA events). */
    int (*iterate)(void *state, long long iter, double *elapsed);
    /* Untimed, after each iteration: 0 if this rank's output is right;
     * otherwise write the first wrong index into msg and return 1. */
    int (*check)(void *state, long long iter, char *msg, size_t msglen);
    /* Bytes moved for algbw and the bus-bandwidth factor (nccl-tests). */
    double (*busbw_factor)(struct mb_run *run, const struct mb_case *c);
    /* Model prediction in seconds or NaN. Optional; when set, the table
     * prints a model(us) column. */
    double (*model)(struct mb_run *run, const struct mb_case *c);
    void (*teardown)(void *state);
    /* Optional, on every rank after the last case and before the result
     * file is written; rank 0 holds run->result (e.g. to add attributes
     * derived from all cases). */
    void (*finish)(struct mb_run *run);
};

#define MB_PLAN_DONE (-1)

/* The whole program: MPI_Init, options, validation, output probe, plan,
 * per case {setup, warm-up, timed iterations with counters, check,
 * statistics, table row}, result file, MPI_Finalize. Returns the exit
 * status: 0, 1 when a check failed, 2 on bad input. */
int mb_main(const struct mb_bench *bench, int argc, char **argv);

/* ===== clean-up that runs however the run ends ========================= */

/* Registers fn(arg) to run once, most recent first, whichever way the
 * process ends: mb_main's end (before MPI_Finalize), exit(), SIGINT or
 * SIGTERM while the result file is open, the --timeout watchdog. It
 * removes what the run made outside its result (temporary files, a
 * cgroup it joined), so it must be async-signal-safe and idempotent.
 * At most 8; 0, or -1 when full. */
int mb_cleanup_add(void (*fn)(void *arg), void *arg);
/* Runs the hooks now (once; later calls return at once). */
void mb_cleanup_run(void);
/* Registers fn(arg) to run on every rank at mb_main's end, whichever path
 * it takes after the options were read, just before MPI_Finalize, most
 * recent first and before the clean-up hooks: MPI is still usable (free a
 * communicator, a barrier before a shared resource goes). Never from a
 * signal. At most 8; 0, or -1 when full. */
int mb_finalize_add(void (*fn)(void *arg), void *arg);

/* ===== the --timeout watchdog =========================================== */

/* Collective over run->comm; nothing when --timeout is 0. Each rank's
 * thread reports its progress (the case and iteration it is at) to rank 0
 * by UDP every second, to 127.0.0.1 from rank 0's host and to rank 0's
 * non-loopback IPv4 addresses from other hosts. When rank 0 makes no
 * progress for --timeout seconds, it ends the run (mb_output_abort,
 * exit 1) with a line naming the case, the iteration and the silent
 * rank and host: one not heard from for --timeout seconds (its process
 * or link gone), else the one furthest behind. A rank that makes no
 * progress for twice as long ends itself, naming rank 0. 0 or -1 (a
 * socket could not be made: the line says why, on every rank). */
int mb_watchdog_start(struct mb_run *run);
/* Where this rank is: case index (into run->cases), iteration (-1: the
 * case's setup), and whether it is inside the part shared with the other
 * ranks (the iteration's barrier and the measured call) or on its own
 * part before it (prepare). A few relaxed atomic stores; nothing when off. */
void mb_watchdog_progress(size_t case_index, long long iter, int waiting);
/* Progress where this rank is (case, iteration and part unchanged): a
 * milestone of a long setup (a calibration pass done), so a setup that
 * moves on is not taken for a hang while one that stops still is. A
 * relaxed atomic add; nothing when off. */
void mb_watchdog_tick(void);
/* A detail of where this rank is inside an iteration, e.g. ("layer", 3):
 * sent with its progress (not progress itself) and named in the line for
 * the silent rank and for rank 0 ("rank 3 was last at layer 5"). label
 * lives as long as the run (a literal; 15 characters sent); value < 0:
 * none. Relaxed atomic stores, any thread; nothing when off. */
void mb_watchdog_detail(const char *label, long long value);
void mb_watchdog_stop(void);

/* ===== internal pieces, exposed for the unit tests ====================== */

/* Parses argv against the common flags and bench->opts. Returns 0, 1 when
 * --help was printed, or MB_EXIT_USAGE after printing one line. Does not
 * need MPI. */
int mb_options_parse(const struct mb_bench *bench, struct mb_common *common, int argc,
                     char **argv, FILE *err);
void mb_options_help(const struct mb_bench *bench, FILE *out);
/* Adds every option's value (defaults included) to config. */
void mb_options_config(const struct mb_bench *bench, const struct mb_common *common,
                       struct mb_kvlist *config);

/* Output naming: the final name that does not exist yet. If `path` exists,
 * tries NAME.1.h5, NAME.2.h5, ... Returns a malloc'd path. */
char *mb_output_unique(const char *path);

/* A result file built as the run goes (DESIGN.md, "Result files"): open
 * creates it under a unique temporary name PATH.tmp.<pid>.<random>
 * (O_EXCL, never through a link) holding r's attributes (the caller sets
 * complete=0); add writes r->cases[k] and flushes; close rewrites the
 * attributes from r, fsyncs the file, links it to `path` (or NAME.k.h5 if
 * `path` appeared meanwhile; never replacing a file), removes the
 * temporary, fsyncs the folder and returns the final name (malloc'd), or
 * NULL with err set ("PATH: reason") and nothing left behind.
 * From open to close, SIGINT and SIGTERM (and exit() without close) keep
 * what was flushed: the temporary is fsynced and linked to its final name
 * with the finished cases and complete=0, and the process ends with
 * status 128 + signal; it says so in one line naming the file and "N of M
 * cases" (M: r->root's cases_planned). HDF5 is never called from the
 * handler. Only rank 0
 * opens one; one at a time. MB_FAULT_INJECT=result-enospc makes add fail
 * from the second case on (as a full disk would). */
struct mb_output;
struct mb_output *mb_output_open(const struct mb_result *r, const char *path, char *err,
                                 size_t errlen);
int mb_output_add(struct mb_output *o, const struct mb_result *r, size_t k, char *err,
                  size_t errlen);
/* Rewrites "/", /metrics and /trace from r and flushes (mid-case: see
 * mb_run_flush); the cases written stay as they are. */
int mb_output_sync(struct mb_output *o, const struct mb_result *r, char *err, size_t errlen);
char *mb_output_close(struct mb_output *o, const struct mb_result *r, char *err, size_t errlen);
/* Closes and removes the temporary, keeping nothing (o may be NULL). */
void mb_output_discard(struct mb_output *o);
/* open, add every case, close. */
char *mb_output_commit(const struct mb_result *r, const char *path, char *err, size_t errlen);
/* The summary as CSV, for when the file could not be written: one header
 * row, one row per case (case, labels, bytes, count, t_min, t_median,
 * t_p95, t_max, algbw, busbw, model, check). */
void mb_result_csv(const struct mb_result *r, FILE *out);
/* One CSV field (RFC 4180: quoted when it holds a comma, quote or line
 * break, quotes doubled), then ',' or, for the last, a newline. */
void mb_csv_field(FILE *out, const char *s, int last);

/* Ends the process now with `status` (the --timeout watchdog, from its own
 * thread while the others may be blocked in MPI): one line on stderr,
 * "PROGRAM: LINE: N of M cases kept in FILE (complete=0)" on the rank
 * holding the result file (the finished cases linked to the final name,
 * as a signal does; a case being written is flushed first), else
 * "PROGRAM: LINE"; then the clean-up hooks. */
_Noreturn void mb_output_abort(const char *line, int status);

/* Before the run: 0 if `path` can be created (a unique temporary beside
 * it is created and removed); -1 with the reason naming -o/--out.
 * must_not_exist: an existing `path` is an error (an explicit -o). */
int mb_output_probe(const char *path, int must_not_exist, char *err, size_t errlen);

/* Whether an element count fits the count argument of MPI calls (int):
 * callers refuse a larger one (exit 2 naming the flag) or split it. */
int mb_count_fits(size_t count);

/* Fault injection for the tests: $MB_FAULT_INJECT names a fault ("corrupt"),
 * NULL when unset. */
const char *mb_fault(void);

#endif
