/* mb-report: print or compare movebench result files (DESIGN.md, "Result
 * files"). Reads with mb_result_read, so it checks the schema exactly as the
 * harness writes it. Needs no MPI: it never calls MPI_Init and runs without
 * mpirun. Exit 0, or 2 on bad input (one line on stderr). */
#include "harness/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define PROG "mb-report"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [--csv] [--metrics] FILE...\n"
            "       " PROG " [--csv] --compare A B\n"
            "       " PROG " --chrome-trace OUT.json FILE\n"
            "Print the provenance and summary table of movebench result files (HDF5),\n"
            "or compare two files case by case.\n"
            "  -c, --compare  per-case ratio of medians, ratio = median_B / median_A\n"
            "                 (> 1: B is slower), and the cases found in only one file\n"
            "      --csv      comma-separated values (times in seconds) instead of a table\n"
            "  -m, --metrics  the measurements (/metrics) instead of the summary: the run's\n"
            "                 own, then each case's (a series: one value per epoch);\n"
            "                 CSV: file,case,name,index,value (case empty for the run's)\n"
            "      --chrome-trace OUT.json\n"
            "                 write FILE's trace spans (/trace) as Chrome trace-event\n"
            "                 JSON (chrome://tracing, Perfetto): a process per rank, a\n"
            "                 thread per lane, times in microseconds; OUT is created,\n"
            "                 never overwritten\n"
            "  -h, --help     this help\n"
            "Exit status: 0, 1 when OUT.json could not be written, or 2 on bad input.\n");
}

/* ---- aligned text tables ------------------------------------------------ */

struct table {
    size_t ncols, nrows, cap;
    char **cells; /* nrows x ncols */
};

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        mb_die(1, "out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        mb_die(1, "out of memory");
    return p;
}

static void table_row(struct table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
    }
    for (size_t j = 0; j < t->ncols; j++)
        t->cells[t->nrows * t->ncols + j] = xstrdup(cells[j]);
    t->nrows++;
}

/* First column left-aligned (names), the others right-aligned (numbers). */
static void table_print(struct table *t, FILE *out)
{
    size_t *w = calloc(t->ncols, sizeof *w);
    if (!w)
        mb_die(1, "out of memory");
    for (size_t i = 0; i < t->nrows * t->ncols; i++) {
        size_t n = strlen(t->cells[i]);
        if (n > w[i % t->ncols])
            w[i % t->ncols] = n;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t j = 0; j < t->ncols; j++) {
            const char *s = t->cells[r * t->ncols + j];
            if (j == 0)
                fprintf(out, "%-*s", (int)w[j], s);
            else
                fprintf(out, "  %*s", (int)w[j], s);
        }
        fputc('\n', out);
    }
    free(w);
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

/* ---- formatting ---------------------------------------------------------- */

/* Formats into one of a ring of buffers, so a row can take several. */
__attribute__((format(printf, 1, 2))) static const char *fmt(const char *f, ...)
{
    static char ring[32][128];
    static unsigned next;
    char *b = ring[next++ % 32];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof ring[0], f, ap);
    va_end(ap);
    return b;
}

static const char *us(double s) { return isnan(s) ? "-" : fmt("%.2f", s * 1e6); }
static const char *gbs(double x) { return isnan(x) ? "-" : fmt("%.3f", x); }
static const char *num(double x) { return fmt("%.10g", x); }

static const char *kv_text(const struct mb_result *r, const char *key)
{
    const struct mb_kv *e = mb_kv_get(&r->root, key);
    if (!e)
        return "-";
    switch (e->type) {
    case MB_KV_STR: return e->s && e->s[0] ? e->s : "-";
    case MB_KV_INT: return fmt("%lld", e->i);
    default: return fmt("%g", e->d);
    }
}


/* ---- printing one file ---------------------------------------------------- */

/* "the run was cut short: N of M cases" for a file with complete=0 (a run
 * killed by a signal or ended by an error keeps its finished cases), else
 * NULL. Files without the attribute are older, complete ones. */
static const char *incomplete(const struct mb_result *r)
{
    const struct mb_kv *c = mb_kv_get(&r->root, "complete");
    if (!c || c->type != MB_KV_INT || c->i != 0)
        return NULL;
    const struct mb_kv *p = mb_kv_get(&r->root, "cases_planned");
    if (p && p->type == MB_KV_INT)
        return fmt("the run was cut short: %zu of %lld cases", r->ncases, p->i);
    return fmt("the run was cut short: %zu cases", r->ncases);
}

static void print_header(const char *path, const struct mb_result *r)
{
    static const char *const keys[] = {"benchmark", "start_time_utc", "nranks", "nnodes",
                                       "hostnames", "git_commit",     "device", "emulation"};
    printf("# %s\n", path);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = kv_text(r, keys[i]);
        const struct mb_kv *dirty = mb_kv_get(&r->root, "git_dirty");
        if (strcmp(keys[i], "git_commit") == 0 && dirty && dirty->type == MB_KV_INT && dirty->i)
            v = fmt("%s (dirty)", v);
        printf("%-15s %s\n", keys[i], v);
    }
    const char *cut = incomplete(r);
    if (cut)
        printf("%-15s %s\n", "INCOMPLETE", cut);
}

static void print_table(const struct mb_result *r)
{
    static const char *const head[] = {"case",      "bytes",     "count",     "median(us)",
                                       "min(us)",   "max(us)",   "p95(us)",   "ci_lo(us)",
                                       "ci_hi(us)", "algbw(GB/s)", "busbw(GB/s)", "model(us)",
                                       "check"};
    struct table t = {.ncols = sizeof head / sizeof head[0]};
    table_row(&t, head);
    for (size_t k = 0; k < r->ncases; k++) {
        const struct mb_case_result *c = &r->cases[k];
        const char *row[] = {c->name,
                             fmt("%llu", (unsigned long long)c->bytes),
                             fmt("%llu", (unsigned long long)c->count),
                             us(c->stats.median),
                             us(c->stats.min),
                             us(c->stats.max),
                             us(c->stats.p95),
                             us(c->stats.ci_lo),
                             us(c->stats.ci_hi),
                             gbs(c->algbw),
                             gbs(c->busbw),
                             us(c->model_s),
                             mb_check_name(c->check)};
        table_row(&t, row);
    }
    table_print(&t, stdout);
}

static int same_labels(const struct mb_result *a, const struct mb_result *b)
{
    if (a->nlabels != b->nlabels)
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->label_names[i], b->label_names[i]) != 0)
            return 0;
    return 1;
}

/* One header, repeated only when a file's label columns differ from the
 * previous file's. Times in seconds, bandwidths in GB/s. */
static void print_csv(const char *path, const struct mb_result *r, const struct mb_result *prev)
{
    static const char *const tail[] = {"bytes", "count", "iters",  "nranks", "t_min",
                                       "t_median", "t_p95", "t_max", "t_mean", "ci_lo",
                                       "ci_hi", "algbw", "busbw",  "model", "check"};
    if (!prev || !same_labels(prev, r)) {
        mb_csv_field(stdout, "file", 0);
        mb_csv_field(stdout, "case", 0);
        for (size_t i = 0; i < r->nlabels; i++)
            mb_csv_field(stdout, r->label_names[i], 0);
        for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
            mb_csv_field(stdout, tail[i], i + 1 == sizeof tail / sizeof tail[0]);
    }
    for (size_t k = 0; k < r->ncases; k++) {
        const struct mb_case_result *c = &r->cases[k];
        mb_csv_field(stdout, path, 0);
        mb_csv_field(stdout, c->name, 0);
        for (size_t i = 0; i < r->nlabels; i++)
            mb_csv_field(stdout, c->labels[i] ? c->labels[i] : "", 0);
        const char *v[] = {fmt("%llu", (unsigned long long)c->bytes),
                           fmt("%llu", (unsigned long long)c->count),
                           fmt("%zu", c->iters),
                           fmt("%zu", c->nranks),
                           num(c->stats.min),
                           num(c->stats.median),
                           num(c->stats.p95),
                           num(c->stats.max),
                           num(c->stats.mean),
                           num(c->stats.ci_lo),
                           num(c->stats.ci_hi),
                           num(c->algbw),
                           num(c->busbw),
                           num(c->model_s),
                           mb_check_name(c->check)};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            mb_csv_field(stdout, v[i], i + 1 == sizeof v / sizeof v[0]);
    }
}

/* ---- measurements (/metrics) ------------------------------------------ */

static const char *kv_value(const struct mb_kv *e)
{
    switch (e->type) {
    case MB_KV_STR: return e->s ? e->s : "";
    case MB_KV_INT: return fmt("%lld", e->i);
    default: return num(e->d);
    }
}

static const char *metric_value(const struct mb_metric *m, size_t j)
{
    switch (m->type) {
    case MB_KV_STR: return m->s[j];
    case MB_KV_INT: return fmt("%lld", m->i[j]);
    default: return num(m->d[j]);
    }
}

static void print_metrics(const char *path, const struct mb_result *r, int csv, int first)
{
    if (csv) {
        if (first)
            fputs("file,case,name,index,value\n", stdout);
        for (size_t i = 0; i < r->metrics.n; i++) {
            const char *v[] = {path, "", r->metrics.v[i].key, "0", kv_value(&r->metrics.v[i])};
            for (size_t j = 0; j < 5; j++)
                mb_csv_field(stdout, v[j], j == 4);
        }
        for (size_t k = 0; k < r->nseries; k++) {
            const struct mb_metric *m = &r->series[k];
            for (size_t j = 0; j < m->n; j++) {
                const char *v[] = {path, m->case_name, m->name, fmt("%zu", j), metric_value(m, j)};
                for (size_t i = 0; i < 5; i++)
                    mb_csv_field(stdout, v[i], i == 4);
            }
        }
        return;
    }
    if (!r->metrics.n && !r->nseries) {
        printf("no measurements in /metrics (a schema 1 file keeps them in /config)\n");
        return;
    }
    struct table t = {.ncols = 3};
    static const char *const head[] = {"case", "metric", "value"};
    table_row(&t, head);
    for (size_t i = 0; i < r->metrics.n; i++) {
        const char *row[] = {"(run)", r->metrics.v[i].key, kv_value(&r->metrics.v[i])};
        table_row(&t, row);
    }
    for (size_t k = 0; k < r->nseries; k++) {
        const struct mb_metric *m = &r->series[k];
        char buf[1024] = "";
        for (size_t j = 0, l = 0; j < m->n && l + 1 < sizeof buf; j++, l = strlen(buf))
            snprintf(buf + l, sizeof buf - l, "%s%s", j ? ", " : "", metric_value(m, j));
        const char *row[] = {m->case_name, m->name, buf};
        table_row(&t, row);
    }
    table_print(&t, stdout);
}

/* ---- comparing two files -------------------------------------------------- */

static const struct mb_case_result *find_case(const struct mb_result *r, const char *name)
{
    for (size_t k = 0; k < r->ncases; k++)
        if (strcmp(r->cases[k].name, name) == 0)
            return &r->cases[k];
    return NULL;
}

static double ratio(double a, double b) { return a > 0 && !isnan(b) ? b / a : NAN; }

static void compare(const char *pa, const struct mb_result *a, const char *pb,
                    const struct mb_result *b, int csv)
{
    if (csv) {
        fputs("case,median_a,median_b,ratio\n", stdout);
        for (size_t k = 0; k < a->ncases; k++) {
            const struct mb_case_result *x = &a->cases[k], *y = find_case(b, x->name);
            mb_csv_field(stdout, x->name, 0);
            mb_csv_field(stdout, num(x->stats.median), 0);
            mb_csv_field(stdout, y ? num(y->stats.median) : "", 0);
            mb_csv_field(stdout, y ? num(ratio(x->stats.median, y->stats.median)) : "", 1);
        }
        for (size_t k = 0; k < b->ncases; k++)
            if (!find_case(a, b->cases[k].name)) {
                mb_csv_field(stdout, b->cases[k].name, 0);
                mb_csv_field(stdout, "", 0);
                mb_csv_field(stdout, num(b->cases[k].stats.median), 0);
                mb_csv_field(stdout, "", 1);
            }
        return;
    }
    printf("# A: %s\n# B: %s\n# ratio = median_B / median_A (> 1: B is slower)\n", pa, pb);
    static const char *const head[] = {"case", "median_A(us)", "median_B(us)", "ratio"};
    struct table t = {.ncols = 4};
    table_row(&t, head);
    for (size_t k = 0; k < a->ncases; k++) {
        const struct mb_case_result *x = &a->cases[k], *y = find_case(b, x->name);
        if (!y)
            continue;
        double q = ratio(x->stats.median, y->stats.median);
        const char *row[] = {x->name, us(x->stats.median), us(y->stats.median),
                             isnan(q) ? "-" : fmt("%.3f", q)};
        table_row(&t, row);
    }
    table_print(&t, stdout);
    for (size_t k = 0; k < a->ncases; k++)
        if (!find_case(b, a->cases[k].name))
            printf("only in A: %s\n", a->cases[k].name);
    for (size_t k = 0; k < b->ncases; k++)
        if (!find_case(a, b->cases[k].name))
            printf("only in B: %s\n", b->cases[k].name);
}

/* ---- Chrome trace-event JSON (jansson) ----------------------------------- */

/* json_object_set_new's result for a fresh value; NULL values (a string
 * that is not UTF-8) make it fail too. */
static int put(json_t *o, const char *key, json_t *v) { return json_object_set_new(o, key, v); }

static json_t *meta_event(const char *what, int pid, long long tid, const char *name)
{
    json_t *e = json_object(), *args = json_object();
    if (!e || !args || put(args, "name", json_string(name)) || put(e, "name", json_string(what)) ||
        put(e, "ph", json_string("M")) || put(e, "pid", json_integer(pid)) ||
        (tid >= 0 && put(e, "tid", json_integer(tid))) || put(e, "args", args)) {
        json_decref(e);
        return NULL;
    }
    return e;
}

static json_t *span_event(const struct mb_span *sp, int pid)
{
    json_t *e = json_object();
    if (!e || put(e, "name", json_string(sp->name)) || put(e, "cat", json_string("movebench")) ||
        put(e, "ph", json_string("X")) || put(e, "pid", json_integer(pid)) ||
        put(e, "tid", json_integer(sp->lane)) || put(e, "ts", json_real(sp->start * 1e6)) ||
        put(e, "dur", json_real((sp->end - sp->start) * 1e6))) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The document: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}. */
static json_t *chrome_trace(const char *path, const struct mb_result *r)
{
    json_t *doc = json_object(), *ev = json_array(), *other = json_object();
    const struct mb_kv *bench = mb_kv_get(&r->root, "benchmark");
    if (!doc || !ev || !other || put(doc, "traceEvents", ev) || put(doc, "displayTimeUnit", json_string("ms")) ||
        put(other, "source", json_string(path)) ||
        put(other, "benchmark", json_string(bench && bench->type == MB_KV_STR ? bench->s : "")) ||
        put(doc, "otherData", other)) {
        json_decref(doc);
        return NULL;
    }
    for (size_t t = 0; t < r->ntrace; t++) {
        const struct mb_trace_rank *tr = &r->trace[t];
        char pname[32];
        snprintf(pname, sizeof pname, "rank %d", tr->rank);
        if (json_array_append_new(ev, meta_event("process_name", tr->rank, -1, pname))) {
            json_decref(doc);
            return NULL;
        }
        for (size_t k = 0; k < tr->nlanes; k++)
            if (json_array_append_new(ev, meta_event("thread_name", tr->rank, (long long)k, tr->lanes[k]))) {
                json_decref(doc);
                return NULL;
            }
        for (size_t k = 0; k < tr->nspans; k++)
            if (json_array_append_new(ev, span_event(&tr->spans[k], tr->rank))) {
                json_decref(doc);
                return NULL;
            }
    }
    return doc;
}

/* Writes OUT (created, never through a link nor over a file): 0, or 1 with a line. */
static int write_chrome_trace(const char *out, const char *path, const struct mb_result *r)
{
    json_t *doc = chrome_trace(path, r);
    if (!doc) {
        fprintf(stderr, PROG ": %s: a span or lane name is not UTF-8 text (or out of memory)\n", path);
        return 1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *fp = fd < 0 ? NULL : fdopen(fd, "w");
    int rc = 0;
    if (!fp) {
        fprintf(stderr, PROG ": --chrome-trace %s: %s\n", out, strerror(errno));
        rc = errno == EEXIST ? MB_EXIT_USAGE : 1;
        if (fd >= 0)
            close(fd);
    } else {
        int bad = json_dumpf(doc, fp, JSON_COMPACT) != 0;
        bad |= fputc('\n', fp) == EOF;
        bad |= fclose(fp) != 0;
        if (bad) {
            fprintf(stderr, PROG ": --chrome-trace %s: write failed: %s\n", out, strerror(errno));
            unlink(out);
            rc = 1;
        }
    }
    json_decref(doc);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"compare", no_argument, NULL, 'c'},
        {"csv", no_argument, NULL, 'C'},
        {"metrics", no_argument, NULL, 'm'},
        {"chrome-trace", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int cmp = 0, csv = 0, metrics = 0, ch;
    const char *trace_out = NULL;
    mb_set_progname(PROG);
    opterr = 0; /* our own one-line message */
    while ((ch = getopt_long(argc, argv, "chm", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': cmp = 1; break;
        case 'C': csv = 1; break;
        case 'm': metrics = 1; break;
        case 'T': trace_out = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", argv[optind - 1]);
            return MB_EXIT_USAGE;
        }
    }
    int nfiles = argc - optind;
    if (nfiles == 0) {
        fprintf(stderr, PROG ": no input files (see --help)\n");
        return MB_EXIT_USAGE;
    }
    if (trace_out && (cmp || metrics || csv || nfiles != 1)) {
        fprintf(stderr, PROG ": --chrome-trace takes exactly one FILE and no other option\n");
        return MB_EXIT_USAGE;
    }
    struct stat st;
    if (trace_out && (!trace_out[0] || lstat(trace_out, &st) == 0)) {
        fprintf(stderr, PROG ": --chrome-trace %s: %s\n", trace_out,
                trace_out[0] ? "exists (never overwritten)" : "empty name");
        return MB_EXIT_USAGE;
    }
    if (cmp && metrics) {
        fprintf(stderr, PROG ": --metrics and --compare do not go together\n");
        return MB_EXIT_USAGE;
    }
    if (cmp && nfiles != 2) {
        fprintf(stderr, PROG ": --compare takes exactly 2 files, got %d\n", nfiles);
        return MB_EXIT_USAGE;
    }
    /* Read everything first: bad input prints nothing on stdout. */
    struct mb_result *r = calloc((size_t)nfiles, sizeof *r);
    if (!r)
        mb_die(1, "out of memory");
    int rc = 0;
    for (int i = 0; i < nfiles && rc == 0; i++) {
        char err[1024];
        if (mb_result_read(argv[optind + i], &r[i], err, sizeof err) != 0) {
            fprintf(stderr, PROG ": %s\n", err); /* err starts with the path */
            rc = MB_EXIT_USAGE;
        }
    }
    if (rc == 0 && trace_out) {
        if (r[0].ntrace == 0) {
            fprintf(stderr, PROG ": %s: no trace spans (/trace) in the file\n", argv[optind]);
            rc = MB_EXIT_USAGE;
        } else {
            rc = write_chrome_trace(trace_out, argv[optind], &r[0]);
        }
    } else if (rc == 0 && cmp) {
        compare(argv[optind], &r[0], argv[optind + 1], &r[1], csv);
    } else if (rc == 0) {
        for (int i = 0; i < nfiles; i++) {
            const char *path = argv[optind + i];
            if (metrics && csv) {
                print_metrics(path, &r[i], 1, i == 0);
                continue;
            }
            if (csv) {
                const char *cut = incomplete(&r[i]);
                if (cut) /* the CSV itself stays one table */
                    fprintf(stderr, PROG ": %s: %s\n", path, cut);
                print_csv(path, &r[i], i ? &r[i - 1] : NULL);
                continue;
            }
            if (i)
                putchar('\n');
            print_header(path, &r[i]);
            putchar('\n');
            if (metrics)
                print_metrics(path, &r[i], 0, i == 0);
            else
                print_table(&r[i]);
        }
    }
    for (int i = 0; i < nfiles; i++)
        mb_result_free(&r[i]);
    free(r);
    return rc;
}
