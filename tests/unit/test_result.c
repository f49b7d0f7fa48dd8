/* Result file round trip: every attribute, sample, counter and summary
 * field written by mb_result_write comes back bit-exact from
 * mb_result_read; existing files are never touched; junk and truncated
 * files fail with a message; no HDF5 id is left open on any path.
 * Exit 0 pass, 1 fail, 77 skip. Needs no MPI. */
#include "../../benchmarks/harness/harness.h"

#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

__attribute__((format(printf, 1, 2))) static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

/* Bit-exact, NaN == NaN. */
static int same_dbl(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void cmp_kv(const char *where, const struct mb_kvlist *a, const struct mb_kvlist *b)
{
    if (a->n != b->n) {
        bad("%s: %zu entries, read back %zu", where, a->n, b->n);
        return;
    }
    for (size_t i = 0; i < a->n; i++) {
        const struct mb_kv *x = &a->v[i], *y = &b->v[i];
        if (strcmp(x->key, y->key) != 0 || x->type != y->type)
            bad("%s[%zu]: key/type %s/%d vs %s/%d", where, i, x->key, x->type, y->key, y->type);
        else if (x->type == MB_KV_STR && !same_str(x->s, y->s))
            bad("%s.%s: '%s' vs '%s'", where, x->key, x->s, y->s);
        else if (x->type == MB_KV_INT && x->i != y->i)
            bad("%s.%s: %lld vs %lld", where, x->key, x->i, y->i);
        else if (x->type == MB_KV_DBL && !same_dbl(x->d, y->d))
            bad("%s.%s: %.17g vs %.17g", where, x->key, x->d, y->d);
    }
}

/* Every series of a is in b (looked up by case and name: order is not
 * part of the schema) with the same type and values, and b has no more. */
static void cmp_metrics(const struct mb_result *a, const struct mb_result *b)
{
    cmp_kv("/metrics", &a->metrics, &b->metrics);
    if (a->nseries != b->nseries)
        bad("/metrics: %zu series, read back %zu", a->nseries, b->nseries);
    for (size_t k = 0; k < a->nseries; k++) {
        const struct mb_metric *x = &a->series[k], *y = mb_metric_find(b, x->case_name, x->name);
        if (!y) {
            bad("/metrics/%s/%s not read back", x->case_name, x->name);
            continue;
        }
        if (x->type != y->type || x->n != y->n) {
            bad("/metrics/%s/%s: type/n %d/%zu vs %d/%zu", x->case_name, x->name, x->type, x->n, y->type, y->n);
            continue;
        }
        for (size_t j = 0; j < x->n; j++)
            if ((x->type == MB_KV_DBL && !same_dbl(x->d[j], y->d[j])) ||
                (x->type == MB_KV_INT && x->i[j] != y->i[j]) ||
                (x->type == MB_KV_STR && !same_str(x->s[j], y->s[j])))
                bad("/metrics/%s/%s[%zu] differs", x->case_name, x->name, j);
    }
}

static void cmp_result(const struct mb_result *a, const struct mb_result *b)
{
    cmp_kv("/", &a->root, &b->root);
    cmp_kv("/config", &a->config, &b->config);
    cmp_metrics(a, b);
    cmp_kv("/environment", &a->environment, &b->environment);
    if (!same_str(a->topology_xml, b->topology_xml))
        bad("topology differs");
    if (a->nlabels != b->nlabels)
        bad("nlabels %zu vs %zu", a->nlabels, b->nlabels);
    for (size_t i = 0; i < a->nlabels && i < b->nlabels; i++)
        if (!same_str(a->label_names[i], b->label_names[i]))
            bad("label %zu: %s vs %s", i, a->label_names[i], b->label_names[i]);
    if (a->nevents != b->nevents)
        bad("nevents %zu vs %zu", a->nevents, b->nevents);
    for (size_t i = 0; i < a->nevents && i < b->nevents; i++)
        if (!same_str(a->event_names[i], b->event_names[i]))
            bad("event %zu: %s vs %s", i, a->event_names[i], b->event_names[i]);
    if (a->ncases != b->ncases) {
        bad("ncases %zu vs %zu", a->ncases, b->ncases);
        return;
    }
    for (size_t k = 0; k < a->ncases; k++) {
        const struct mb_case_result *x = &a->cases[k], *y = &b->cases[k];
        const char *n = x->name;
        if (!same_str(x->name, y->name))
            bad("case %zu: name '%s' vs '%s'", k, x->name, y->name);
        for (size_t i = 0; i < a->nlabels; i++)
            if (!same_str(x->labels[i], y->labels[i]))
                bad("%s: label %zu '%s' vs '%s'", n, i, x->labels[i], y->labels[i]);
        if (x->bytes != y->bytes || x->count != y->count || x->iters != y->iters ||
            x->nranks != y->nranks || x->check != y->check || x->stats.n != y->stats.n)
            bad("%s: integer fields differ", n);
        const double dx[] = {x->stats.min, x->stats.median, x->stats.p95, x->stats.max,
                             x->stats.mean, x->stats.ci_lo, x->stats.ci_hi, x->algbw,
                             x->busbw, x->model_s};
        const double dy[] = {y->stats.min, y->stats.median, y->stats.p95, y->stats.max,
                             y->stats.mean, y->stats.ci_lo, y->stats.ci_hi, y->algbw,
                             y->busbw, y->model_s};
        for (size_t i = 0; i < sizeof dx / sizeof dx[0]; i++)
            if (!same_dbl(dx[i], dy[i]))
                bad("%s: summary double %zu: %.17g vs %.17g", n, i, dx[i], dy[i]);
        size_t ns = x->iters * x->nranks;
        if (ns && (!y->samples || memcmp(x->samples, y->samples, ns * sizeof(double)) != 0))
            bad("%s: samples differ", n);
        if (!x->counters != !y->counters)
            bad("%s: counters present %d vs %d", n, !!x->counters, !!y->counters);
        else if (x->counters &&
                 memcmp(x->counters, y->counters, x->nranks * a->nevents * sizeof(long long)))
            bad("%s: counters differ", n);
    }
}

/* Every HDF5 id closed? (files, groups, datasets, attributes) */
static void no_open_ids(const char *after)
{
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (n != 0)
        bad("%zd HDF5 ids left open after %s", n, after);
}

static void fill_case(struct mb_result *r, const char *name, size_t iters, size_t nranks,
                      int with_counters, double model, int check, double base)
{
    struct mb_case_result *c = mb_result_add_case(r, name);
    if (!isnan(c->model_s) || c->samples || c->iters)
        bad("add_case: not zeroed with model NaN");
    c->labels[0] = strdup("allreduce");
    c->labels[1] = strdup(name);
    c->bytes = 1024 + (uint64_t)base;
    c->count = 256;
    c->iters = iters;
    c->nranks = nranks;
    c->samples = iters * nranks > 0 ? malloc(iters * nranks * sizeof(double)) : NULL;
    for (size_t i = 0; i < iters * nranks; i++)
        c->samples[i] = base * 1e-6 + (double)i * 1.0000001e-7; /* distinct, not round */
    c->stats = (struct mb_stats){iters, base * 1.1e-6, base * 1.3e-6, base * 1.7e-6,
                                 base * 1.9e-6, base * 1.35e-6, base * 1.2e-6, base * 1.4e-6};
    c->algbw = 1.0 / 3.0 * base;
    c->busbw = 2.0 / 3.0 * base;
    c->model_s = model;
    c->check = check;
    if (with_counters) {
        c->counters = malloc(nranks * r->nevents * sizeof(long long));
        for (size_t i = 0; i < nranks * r->nevents; i++)
            c->counters[i] = (long long)(i * 1000003) - 5; /* one negative */
    }
}

static void build(struct mb_result *r)
{
    mb_result_init(r);
    mb_kv_str(&r->root, "benchmark", "mb-coll");
    mb_kv_str(&r->root, "hostnames", "node1,node2");
    mb_kv_int(&r->root, "nranks", 4);
    mb_kv_int(&r->root, "git_dirty", 0);
    mb_kv_dbl(&r->root, "clock_resolution", 1e-9);
    mb_kv_str(&r->root, "emulation", "none \xc3\xa9"); /* UTF-8 */
    mb_kv_str(&r->root, "empty", "");
    mb_kv_int(&r->root, "seed", -9007199254740993LL); /* not a double */
    mb_kv_dbl(&r->root, "nan", NAN);
    mb_kv_str(&r->root, "nranks_replaced", "x");
    mb_kv_int(&r->root, "nranks_replaced", 7); /* replacement keeps position */
    mb_kv_int(&r->config, "iters", 100);
    mb_kv_dbl(&r->config, "stepfactor", 2.0);
    mb_kv_str(&r->config, "device", "host");
    for (int i = 0; i < 20; i++) { /* more than the compact-attribute limit */
        char k[32];
        snprintf(k, sizeof k, "OMPI_MCA_var_%02d", 19 - i); /* not name order */
        mb_kv_str(&r->environment, k, k + 5);
    }
    r->topology_xml =
        strdup("<?xml version=\"1.0\"?>\n<topology><object type=\"Machine\"/></topology>\n");
    r->nlabels = 2;
    r->label_names[0] = strdup("op");
    r->label_names[1] = strdup("variant");
    r->nevents = 2;
    r->event_names = malloc(2 * sizeof(char *));
    r->event_names[0] = strdup("PAPI_TOT_CYC");
    r->event_names[1] = strdup("perf::TASK-CLOCK");
    fill_case(r, "allreduce/float/sum/oop/mpi/1024", 5, 4, 1, 2.5e-6, MB_CHECK_PASS, 3);
    fill_case(r, "bcast%20/.x", 3, 2, 0, NAN, MB_CHECK_FAIL, 7);
    fill_case(r, ".empty", 0, 4, 1, NAN, MB_CHECK_SKIPPED, 11);
    fill_case(r, "fio/random/read/4096", 4, 1, 0, NAN, MB_CHECK_NA, 13);
    mb_metric_run_dbl(r, "memcpy_GBps", 9.75);
    mb_metric_run_str(r, "aio_engine", "io_uring");
    mb_metric_run_int(r, "auto_cases", -3);
    mb_metric_case_dbl(r, "allreduce/float/sum/oop/mpi/1024", "lat_p50_us", 12.5);
    mb_metric_case_int(r, "allreduce/float/sum/oop/mpi/1024", "bounce_bytes", 1LL << 53 | 1);
    mb_metric_case_str(r, "bcast%20/.x", "io_threads_chosen", "4x12 3x2");
    mb_metric_at_dbl(r, ".empty", "loss", 2, 0.25); /* entries 0, 1 unset: NaN */
    mb_metric_at_dbl(r, ".empty", "loss", 0, 1.5);
    mb_metric_at_str(r, ".empty", "model_bound", 1, "ssd");
    mb_metric_at_int(r, ".empty", "storage_bytes", 3, 4096);
    mb_metric_case_dbl(r, "not a case of the file", "x", NAN);
}

/* Metrics' own rules: unset entries, replacement, lookups. */
static void metric_basics(void)
{
    struct mb_result r;
    build(&r);
    const struct mb_metric *m = mb_metric_find(&r, ".empty", "loss");
    if (!m || m->n != 3 || !same_dbl(m->d[0], 1.5) || !isnan(m->d[1]) || !same_dbl(m->d[2], 0.25))
        bad("series: unset entries are not NaN or values lost");
    m = mb_metric_find(&r, ".empty", "model_bound");
    if (!m || m->n != 2 || strcmp(m->s[0], "") || strcmp(m->s[1], "ssd"))
        bad("string series");
    m = mb_metric_find(&r, ".empty", "storage_bytes");
    if (!m || m->n != 4 || m->i[0] != 0 || m->i[3] != 4096)
        bad("int series");
    mb_metric_case_dbl(&r, "allreduce/float/sum/oop/mpi/1024", "lat_p50_us", 13);
    if (mb_metric_value(&r, "allreduce/float/sum/oop/mpi/1024", "lat_p50_us", 0) != 13 ||
        r.nseries != 7)
        bad("replacing a value added a series or lost the value");
    if (!isnan(mb_metric_value(&r, ".empty", "loss", 1)) || !isnan(mb_metric_value(&r, ".empty", "loss", 9)) ||
        !isnan(mb_metric_value(&r, "nope", "loss", 0)) || !isnan(mb_metric_value(&r, ".empty", "model_bound", 1)))
        bad("mb_metric_value of an unset, out-of-range, absent or string entry is not NaN");
    if (mb_metric_find(&r, "allreduce/float/sum/oop/mpi/1024", "loss"))
        bad("found a series of another case");
    mb_result_free(&r);
}

/* Written case by case: a series set after its case was appended, or
 * changed later, reaches the file; a file abandoned after one append
 * keeps that append's metrics. */
static void metrics_incremental(const char *dir)
{
    struct mb_result a, b;
    char path[4096], err[512];
    build(&a);
    snprintf(path, sizeof path, "%s/inc.h5", dir);
    struct mb_result_writer *w = mb_result_begin(&a, path, err, sizeof err);
    if (!w) {
        bad("begin: %s", err);
        mb_result_free(&a);
        return;
    }
    int rc = mb_result_append(w, &a, 0, err, sizeof err);
    mb_metric_at_dbl(&a, ".empty", "loss", 1, 0.5);          /* after the append */
    mb_metric_case_dbl(&a, "allreduce/float/sum/oop/mpi/1024", "lat_p50_us", 14); /* changed */
    for (size_t k = 1; k < a.ncases && rc == 0; k++)
        rc = mb_result_append(w, &a, k, err, sizeof err);
    mb_metric_run_dbl(&a, "auto_hit_rate", 0.5); /* only at the end */
    if (rc != 0 || mb_result_end(w, &a, err, sizeof err) != 0)
        bad("incremental write: %s", err);
    else if (mb_result_read(path, &b, err, sizeof err) != 0)
        bad("read incremental: %s", err);
    else {
        cmp_result(&a, &b);
        mb_result_free(&b);
    }
    unlink(path);
    /* abandoned after the first append: its metrics are in the file */
    w = mb_result_begin(&a, path, err, sizeof err);
    if (!w || mb_result_append(w, &a, 0, err, sizeof err) != 0)
        bad("begin/append: %s", err);
    mb_metric_case_dbl(&a, "bcast%20/.x", "late", 1); /* after the last flush: lost */
    if (w)
        mb_result_end(w, NULL, NULL, 0);
    if (mb_result_read(path, &b, err, sizeof err) != 0)
        bad("read abandoned: %s", err);
    else {
        if (mb_metric_value(&b, "allreduce/float/sum/oop/mpi/1024", "lat_p50_us", 0) != 14 ||
            mb_metric_value(&b, ".empty", "loss", 1) != 0.5)
            bad("an abandoned file lost the metrics flushed with its case");
        if (mb_metric_find(&b, "bcast%20/.x", "late"))
            bad("an abandoned file holds a metric set after its last flush");
        mb_result_free(&b);
    }
    unlink(path);
    no_open_ids("incremental");
    mb_result_free(&a);
}

static void round_trip(const char *dir)
{
    struct mb_result a, b;
    char path[4096], err[512];
    build(&a);
    snprintf(path, sizeof path, "%s/a.h5", dir);
    if (mb_result_write(&a, path, err, sizeof err) != 0) {
        bad("write: %s", err);
        mb_result_free(&a);
        return;
    }
    no_open_ids("write");
    if (mb_result_read(path, &b, err, sizeof err) != 0) {
        bad("read: %s", err);
    } else {
        cmp_result(&a, &b);
        mb_result_free(&b);
    }
    no_open_ids("read");

    /* An existing file is refused and left byte-identical. */
    struct stat s0, s1;
    stat(path, &s0);
    if (mb_result_write(&a, path, err, sizeof err) == 0)
        bad("overwrote an existing file");
    else if (!strstr(err, path))
        bad("error does not name the path: %s", err);
    stat(path, &s1);
    if (s0.st_size != s1.st_size || s0.st_mtim.tv_nsec != s1.st_mtim.tv_nsec ||
        s0.st_mtim.tv_sec != s1.st_mtim.tv_sec)
        bad("existing file modified");
    no_open_ids("refused write");

    /* Truncated copies of the real file fail cleanly. */
    FILE *in = fopen(path, "rb");
    size_t n = (size_t)s0.st_size;
    char *buf = malloc(n);
    if (!in || fread(buf, 1, n, in) != n)
        bad("cannot reread %s", path);
    if (in)
        fclose(in);
    size_t cuts[] = {n / 2, n - 1, 100, 8};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char tp[4200];
        snprintf(tp, sizeof tp, "%s/trunc%zu.h5", dir, i);
        FILE *o = fopen(tp, "wb");
        fwrite(buf, 1, cuts[i], o);
        fclose(o);
        if (mb_result_read(tp, &b, err, sizeof err) == 0) {
            bad("read a file truncated to %zu bytes", cuts[i]);
            mb_result_free(&b);
        } else if (!strstr(err, tp)) {
            bad("truncated: error does not name the path: %s", err);
        }
        if (b.ncases || b.root.n)
            bad("failed read left data in the struct");
        no_open_ids("truncated read");
        unlink(tp);
    }
    free(buf);

    /* NULL topology, no labels, no events, no cases. */
    struct mb_result e, eb;
    mb_result_init(&e);
    snprintf(path, sizeof path, "%s/empty.h5", dir);
    if (mb_result_write(&e, path, err, sizeof err) != 0)
        bad("write empty: %s", err);
    else if (mb_result_read(path, &eb, err, sizeof err) != 0)
        bad("read empty: %s", err);
    else {
        cmp_result(&e, &eb);
        mb_result_free(&eb);
    }
    no_open_ids("empty");

    /* A bad struct fails before creating the file. */
    a.cases[0].check = 9;
    snprintf(path, sizeof path, "%s/invalid.h5", dir);
    if (mb_result_write(&a, path, err, sizeof err) == 0 || access(path, F_OK) == 0)
        bad("invalid check status accepted or file left behind");
    a.cases[0].check = MB_CHECK_PASS;
    free(a.label_names[1]);
    a.label_names[1] = strdup("bytes");
    if (mb_result_write(&a, path, err, sizeof err) == 0 || access(path, F_OK) == 0)
        bad("label clashing with a summary field accepted or file left behind");
    no_open_ids("invalid writes");
    mb_result_free(&a);
    unlink(path);
}

static void junk_files(const char *dir)
{
    struct mb_result b;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/junk.h5", dir);
    FILE *o = fopen(path, "w");
    fputs("this is not an HDF5 file\n", o);
    fclose(o);
    if (mb_result_read(path, &b, err, sizeof err) == 0) {
        bad("read a text file");
        mb_result_free(&b);
    } else if (!strstr(err, path) || !strstr(err, "not an HDF5 file"))
        bad("junk: unexpected message: %s", err);
    unlink(path);
    snprintf(path, sizeof path, "%s/missing.h5", dir);
    if (mb_result_read(path, &b, err, sizeof err) == 0)
        bad("read a missing file");
    else if (!strstr(err, path))
        bad("missing: unexpected message: %s", err);

    /* An HDF5 file that is not ours, and one from a newer schema. */
    snprintf(path, sizeof path, "%s/foreign.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    if (mb_result_read(path, &b, err, sizeof err) == 0)
        bad("read a file without schema_version");
    else if (!strstr(err, "schema_version"))
        bad("foreign: unexpected message: %s", err);
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "schema_version", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    long long v = MB_SCHEMA_VERSION + 1;
    H5Awrite(a, H5T_NATIVE_LLONG, &v);
    H5Aclose(a);
    H5Sclose(sp);
    H5Fclose(f);
    if (mb_result_read(path, &b, err, sizeof err) == 0)
        bad("read a newer schema");
    else if (!strstr(err, "newer"))
        bad("newer schema: unexpected message: %s", err);
    no_open_ids("junk reads");
    unlink(path);
}

static void kv_basics(void)
{
    struct mb_kvlist l = {0};
    char v[] = "abc";
    mb_kv_str(&l, "k", v);
    v[0] = 'X'; /* copied */
    mb_kv_str(&l, "k", mb_kv_get(&l, "k")->s); /* aliasing its own value */
    const struct mb_kv *e = mb_kv_get(&l, "k");
    if (l.n != 1 || !e || e->type != MB_KV_STR || strcmp(e->s, "abc") != 0)
        bad("kv: string copy or replacement");
    mb_kv_dbl(&l, "k", 0.5);
    e = mb_kv_get(&l, "k");
    if (l.n != 1 || e->type != MB_KV_DBL || e->d != 0.5 || e->s)
        bad("kv: type change on replacement");
    if (mb_kv_get(&l, "nope"))
        bad("kv: found a missing key");
    mb_kv_free(&l);
    if (l.n || l.v)
        bad("kv: free did not reset");
}

int main(void)
{
    char dir[] = "/tmp/mb-test-result.XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char tdir[4096];
    snprintf(tdir, sizeof tdir, "%s/mb-test-result.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *d = mkdtemp(tdir);
    if (!d)
        d = mkdtemp(dir);
    if (!d) {
        fprintf(stderr, "SKIP: cannot make a temporary directory\n");
        return 77;
    }
    if (strcmp(mb_check_name(MB_CHECK_PASS), "pass") ||
        strcmp(mb_check_name(MB_CHECK_FAIL), "fail") ||
        strcmp(mb_check_name(MB_CHECK_SKIPPED), "skipped") || strcmp(mb_check_name(MB_CHECK_NA), "n/a"))
        bad("mb_check_name");
    kv_basics();
    metric_basics();
    round_trip(d);
    metrics_incremental(d);
    junk_files(d);
    char p[4200];
    snprintf(p, sizeof p, "%s/a.h5", d);
    unlink(p);
    snprintf(p, sizeof p, "%s/empty.h5", d);
    unlink(p);
    if (rmdir(d) != 0)
        bad("temporary directory %s not empty", d);
    if (failures) {
        fprintf(stderr, "test_result: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_result: ok\n");
    return 0;
}
