/* The result struct and its HDF5 file (DESIGN.md, "Result files").
 *
 * Layout, schema_version 2 (rank 0 only, serial API):
 *   /               attrs: schema_version (int64), then r->root in order
 *   /config         attrs: r->config (parameters)
 *   /metrics        attrs: r->metrics (the run's measurements)
 *   /metrics/<key>  group per case with measurements; attr case (string)
 *   /metrics/<key>/<name>  1-D dataset [n] (float64, int64 or string):
 *                   one value per case, or a series (one per epoch)
 *   /environment    attrs: r->environment
 *   /trace          only when spans were recorded (mb_trace_*), written at
 *                   the end of the run and at each mb_run_flush
 *   /trace/rank<R>  attrs: rank (int64), lanes (string [nlanes]);
 *                   datasets name (string [n]), start, end (float64 [n], s
 *                   since the earliest rank began tracing), lane (int64 [n],
 *                   index into lanes)
 *   /topology       scalar string dataset: r->topology_xml ("" when NULL)
 *   /samples/<key>  float64 [iters x nranks], seconds;
 *                   attrs: case (string), bytes, count (uint64), units "s"
 *   /counters       only when nevents > 0; attr events (string [nevents])
 *   /counters/<key> int64 [nranks x nevents], only for cases with counters;
 *                   attrs: case, events
 *   /summary        compound [ncases] in case order (chunked, one row
 *                   appended per finished case): case, one string
 *                   field per label name, bytes, count, iters, nranks
 *                   (uint64), t_min, t_median, t_p95, t_max, t_mean, ci_lo,
 *                   ci_hi (float64 s), algbw, busbw (float64 GB/s), model
 *                   (float64 s, NaN = none), check ("pass"/"fail"/"skipped");
 *                   attr labels (string [nlabels])
 * Strings are variable-length UTF-8: h5py gives str for attributes and
 * bytes inside datasets. kv values are string, int64 or float64 scalars.
 * Attribute creation order is tracked, so kv lists read back in order.
 *
 * <key> is the case name percent-encoded ('%' -> %25, '/' -> %2F, a
 * leading '.' -> %2E) because HDF5 would read '/' as a path separator;
 * the exact name is in the "case" attribute and in /summary, which the
 * reader follows.
 *
 * Reading: schema_version is consumed, not put into r->root (the writer
 * adds it and ignores a "schema_version" key in r->root), so a round trip
 * gives back r->root exactly. An empty /topology reads back as NULL, a
 * NULL label as "", and stats.n is iters (it is the number of
 * per-iteration times by definition).
 *
 * This file: the struct, the HDF5 plumbing both directions share, and the
 * writer; result_read.c: the reader. */
#include "result_h5.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/* ===== the struct ====================================================== */

const char *mb_check_name(int check)
{
    switch (check) {
    case MB_CHECK_SKIPPED: return "skipped";
    case MB_CHECK_PASS: return "pass";
    case MB_CHECK_FAIL: return "fail";
    case MB_CHECK_NA: return "n/a";
    default: return "unknown";
    }
}

void mb_result_init(struct mb_result *r) { memset(r, 0, sizeof *r); }

struct mb_case_result *mb_result_add_case(struct mb_result *r, const char *name)
{
    if (mb_grow((void **)&r->cases, &r->cap, r->ncases + 1, sizeof(*r->cases)) != 0)
        mb_die(1, "out of memory: the result's cases");
    struct mb_case_result *c = &r->cases[r->ncases++];
    memset(c, 0, sizeof *c);
    c->name = mb_h5_xstrdup(name);
    c->model_s = NAN;
    return c;
}

void mb_result_free(struct mb_result *r)
{
    mb_kv_free(&r->root);
    mb_kv_free(&r->config);
    mb_kv_free(&r->environment);
    mb_metric_free_all(r);
    mb_trace_free(r);
    free(r->topology_xml);
    for (size_t i = 0; i < MB_MAX_LABELS; i++)
        free(r->label_names[i]);
    for (size_t i = 0; i < r->nevents; i++)
        free(r->event_names[i]);
    free(r->event_names);
    for (size_t k = 0; k < r->ncases; k++) {
        struct mb_case_result *c = &r->cases[k];
        free(c->name);
        for (size_t i = 0; i < MB_MAX_LABELS; i++)
            free(c->labels[i]);
        free(c->samples);
        free(c->counters);
    }
    free(r->cases);
    mb_result_init(r);
}

/* ===== HDF5 plumbing (result_h5.h) ===================================== */

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    if (e->desc && e->desc[0])
        snprintf(data, 256, "%s", e->desc);
    return 1; /* walking upward: the first entry is the most specific */
}

int mb_h5_fail(struct h5 *c, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    char step[512], detail[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(step, sizeof step, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail);
    H5Eclear2(H5E_DEFAULT);
    /* A failed system call reads "... errno = 28, error message = 'No
     * space left on device', ..." over two lines: keep the message. */
    char *m = strstr(detail, "error message = '");
    if (m) {
        m += strlen("error message = '");
        char *q = strchr(m, '\'');
        if (q)
            *q = '\0';
        memmove(detail, m, strlen(m) + 1);
    }
    for (char *p = detail; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (c->err && c->errlen) {
        if (detail[0])
            snprintf(c->err, c->errlen, "%s: %s: %s", c->path, step, detail);
        else
            snprintf(c->err, c->errlen, "%s: %s", c->path, step);
    }
    return -1;
}

int mb_h5_begin(struct h5 *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->err = err;
    c->errlen = errlen;
    c->str = c->gcpl = -1;
    if (err && errlen)
        err[0] = '\0';
    H5Eget_auto2(H5E_DEFAULT, &c->old_func, &c->old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    c->str = H5Tcopy(H5T_C_S1);
    if (c->str < 0 || H5Tset_size(c->str, H5T_VARIABLE) < 0 ||
        H5Tset_cset(c->str, H5T_CSET_UTF8) < 0)
        return mb_h5_fail(c, "make string type");
    c->gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (c->gcpl < 0 ||
        H5Pset_attr_creation_order(c->gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        H5Pset_link_creation_order(c->gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0)
        return mb_h5_fail(c, "make group property list");
    return 0;
}

void mb_h5_end(struct h5 *c)
{
    if (c->str >= 0)
        H5Tclose(c->str);
    if (c->gcpl >= 0)
        H5Pclose(c->gcpl);
    H5Eset_auto2(H5E_DEFAULT, c->old_func, c->old_data);
}

hid_t mb_h5_fapl(struct h5 *c, int for_write)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) {
        mb_h5_fail(c, "make file access property list");
        return -1;
    }
    /* 1.8 format: creation-order and dense attribute storage, and readable
     * by every HDF5 since 1.8. */
    if (for_write && H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0) {
        mb_h5_fail(c, "set format version bounds");
        H5Pclose(fapl);
        return -1;
    }
#ifdef MB_H5_LOCKING
    /* Network file systems often refuse locks; one writer, so none needed. */
    H5Pset_file_locking(fapl, 0, 1);
    H5Eclear2(H5E_DEFAULT);
#endif
    return fapl;
}

/* '%' -> %25, '/' -> %2F, leading '.' -> %2E (see the top comment). */
char *mb_h5_key(const char *name)
{
    size_t n = strlen(name);
    char *k = mb_h5_xmalloc(3 * n + 1), *p = k;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '%' || ch == '/' || (i == 0 && ch == '.'))
            p += sprintf(p, "%%%02X", ch);
        else
            *p++ = (char)ch;
    }
    *p = '\0';
    return k;
}

/* ===== writing ========================================================== */

/* A new attribute (attr) or dataset name of loc (which is `where`):
 * scalar (dim NULL) or 1-D of *dim elements. */
static int put_obj(struct h5 *c, hid_t loc, const char *where, const char *name, int attr, hid_t ftype,
                   hid_t mtype, const hsize_t *dim, const void *buf)
{
    int rc = -1;
    hid_t sp = dim ? H5Screate_simple(1, dim, NULL) : H5Screate(H5S_SCALAR);
    hid_t o = sp < 0   ? -1
              : attr ? H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT)
                     : H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (o >= 0 && ((dim && *dim == 0) || (attr ? H5Awrite(o, mtype, buf)
                                               : H5Dwrite(o, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) >= 0))
        rc = 0;
    else if (attr) /* before the closes below: it reads HDF5's error stack */
        mb_h5_fail(c, "write attribute '%s' of %s", name, where);
    else
        mb_h5_fail(c, "write %s/%s", where, name);
    if (o >= 0)
        attr ? H5Aclose(o) : H5Dclose(o);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

static int put_attr_dims(struct h5 *c, hid_t loc, const char *where, const char *name, hid_t ftype,
                         hid_t mtype, const hsize_t *dim, const void *buf)
{
    return put_obj(c, loc, where, name, 1, ftype, mtype, dim, buf);
}

static int put_attr(struct h5 *c, hid_t loc, const char *where, const char *name, hid_t ftype,
                    hid_t mtype, const void *buf)
{
    return put_attr_dims(c, loc, where, name, ftype, mtype, NULL, buf);
}

static int put_str(struct h5 *c, hid_t loc, const char *where, const char *name, const char *s)
{
    const char *v = s ? s : "";
    return put_attr(c, loc, where, name, c->str, c->str, &v);
}

static int put_u64(struct h5 *c, hid_t loc, const char *where, const char *name, uint64_t v)
{
    return put_attr(c, loc, where, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

/* A 1-D string array attribute (labels, events). */
static int put_strs(struct h5 *c, hid_t loc, const char *where, const char *name,
                    char *const *strs, size_t n)
{
    const char **v = mb_h5_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = strs[i] ? strs[i] : "";
    hsize_t dim = n;
    int rc = put_attr_dims(c, loc, where, name, c->str, c->str, &dim, v);
    free(v);
    return rc;
}

/* One entry as a new attribute of loc. */
static int put_kv(struct h5 *c, hid_t loc, const char *where, const struct mb_kv *e)
{
    switch (e->type) {
    case MB_KV_STR:
        return put_str(c, loc, where, e->key, e->s);
    case MB_KV_INT:
        return put_attr(c, loc, where, e->key, H5T_STD_I64LE, H5T_NATIVE_LLONG, &e->i);
    case MB_KV_DBL:
        return put_attr(c, loc, where, e->key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &e->d);
    default:
        return mb_h5_fail(c, "%s: attribute '%s' has an unknown type %d", where, e->key, (int)e->type);
    }
}

static int put_kvlist(struct h5 *c, hid_t loc, const char *where, const struct mb_kvlist *l,
                      const char *skip)
{
    for (size_t i = 0; i < l->n; i++)
        if (!(skip && strcmp(l->v[i].key, skip) == 0) && put_kv(c, loc, where, &l->v[i]) < 0)
            return -1;
    return 0;
}

static int put_group_kv(struct h5 *c, hid_t f, const char *name, const struct mb_kvlist *l)
{
    hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, c->gcpl, H5P_DEFAULT);
    if (g < 0)
        return mb_h5_fail(c, "create group %s", name);
    int rc = put_kvlist(c, g, name, l, NULL);
    H5Gclose(g);
    return rc;
}

static int put_topology(struct h5 *c, hid_t f, const char *xml)
{
    const char *v = xml ? xml : "";
    return put_obj(c, f, "", "topology", 0, c->str, c->str, NULL, &v);
}

/* Creates and fills a 2-D dataset grp/key; returns it open (for attributes). */
static hid_t put_matrix(struct h5 *c, hid_t grp, const char *where, const char *key, hid_t ftype,
                        hid_t mtype, size_t rows, size_t cols, const void *data)
{
    hsize_t dims[2] = {rows, cols};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = sp < 0 ? -1 : H5Dcreate2(grp, key, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || (rows * cols > 0 && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) {
        mb_h5_fail(c, "write %s/%s", where, key);
        if (d >= 0)
            H5Dclose(d);
        d = -1;
    }
    if (sp >= 0)
        H5Sclose(sp);
    return d;
}

static int put_case_data(struct h5 *c, hid_t samples, hid_t counters, const struct mb_result *r,
                         const struct mb_case_result *k)
{
    char *key = mb_h5_key(k->name);
    int rc = -1;
    hid_t d = put_matrix(c, samples, "/samples", key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, k->iters,
                         k->nranks, k->samples);
    if (d < 0)
        goto out;
    rc = put_str(c, d, "/samples", "case", k->name) < 0 ||
                 put_u64(c, d, "/samples", "bytes", k->bytes) < 0 ||
                 put_u64(c, d, "/samples", "count", k->count) < 0 ||
                 put_str(c, d, "/samples", "units", "s") < 0
             ? -1
             : 0;
    H5Dclose(d);
    if (rc < 0 || r->nevents == 0 || !k->counters)
        goto out;
    rc = -1;
    d = put_matrix(c, counters, "/counters", key, H5T_STD_I64LE, H5T_NATIVE_LLONG, k->nranks,
                   r->nevents, k->counters);
    if (d < 0)
        goto out;
    rc = put_str(c, d, "/counters", "case", k->name) < 0 ||
                 put_strs(c, d, "/counters", "events", r->event_names, r->nevents) < 0
             ? -1
             : 0;
    H5Dclose(d);
out:
    free(key);
    return rc;
}

/* The /summary fields after the labels, in slot order. */
enum fkind { FK_U64, FK_F64, FK_STR };
static const struct {
    const char *name;
    enum fkind kind;
} fixed_fields[] = {
    {"bytes", FK_U64},  {"count", FK_U64},    {"iters", FK_U64}, {"nranks", FK_U64},
    {"t_min", FK_F64},  {"t_median", FK_F64}, {"t_p95", FK_F64}, {"t_max", FK_F64},
    {"t_mean", FK_F64}, {"ci_lo", FK_F64},    {"ci_hi", FK_F64}, {"algbw", FK_F64},
    {"busbw", FK_F64},  {"model", FK_F64},    {"check", FK_STR},
};
_Static_assert(sizeof fixed_fields / sizeof fixed_fields[0] == MB_SUM_NFIXED, "summary fields");

static int fixed_field(const char *name)
{
    for (size_t i = 0; i < MB_SUM_NFIXED; i++)
        if (strcmp(fixed_fields[i].name, name) == 0)
            return (int)i;
    return -1;
}

hid_t mb_h5_summary_type(struct h5 *c, char *const *labels, size_t nlabels)
{
    size_t nslots = 1 + nlabels + MB_SUM_NFIXED;
    hid_t t = H5Tcreate(H5T_COMPOUND, nslots * MB_SUM_SLOT);
    if (t < 0) {
        mb_h5_fail(c, "make /summary type");
        return -1;
    }
    int bad = H5Tinsert(t, "case", 0, c->str) < 0;
    for (size_t i = 0; i < nlabels && !bad; i++) {
        const char *l = labels[i];
        if (!l || !l[0] || strcmp(l, "case") == 0 || fixed_field(l) >= 0) {
            mb_h5_fail(c, "label name '%s' is empty or clashes with a /summary field",
                       l ? l : "(null)");
            H5Tclose(t);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[j], l) == 0) {
                mb_h5_fail(c, "label name '%s' appears twice", l);
                H5Tclose(t);
                return -1;
            }
        bad = H5Tinsert(t, l, (1 + i) * MB_SUM_SLOT, c->str) < 0;
    }
    for (size_t i = 0; i < MB_SUM_NFIXED && !bad; i++) {
        hid_t ft = fixed_fields[i].kind == FK_U64   ? H5T_NATIVE_UINT64
                   : fixed_fields[i].kind == FK_F64 ? H5T_NATIVE_DOUBLE
                                                    : c->str;
        size_t off = MB_SUM_FIXED_SLOT(nlabels, i) * MB_SUM_SLOT;
        bad = H5Tinsert(t, fixed_fields[i].name, off, ft) < 0;
    }
    if (bad) {
        mb_h5_fail(c, "make /summary type");
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* One /summary row of case k into row (slots as result_h5.h lays out). */
static void summary_row(const struct mb_result *r, const struct mb_case_result *cr,
                        unsigned char *row)
{
    size_t nl = r->nlabels;
    const char *s = cr->name;
    mb_h5_slot_set(row, 0, &s, sizeof s);
    for (size_t i = 0; i < nl; i++) {
        s = cr->labels[i] ? cr->labels[i] : "";
        mb_h5_slot_set(row, 1 + i, &s, sizeof s);
    }
    uint64_t u[4] = {cr->bytes, cr->count, cr->iters, cr->nranks};
    double d[10] = {cr->stats.min,  cr->stats.median, cr->stats.p95,   cr->stats.max,
                    cr->stats.mean, cr->stats.ci_lo,  cr->stats.ci_hi, cr->algbw,
                    cr->busbw,      cr->model_s};
    for (size_t i = 0; i < 4; i++)
        mb_h5_slot_set(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_U64 + i), &u[i], sizeof u[i]);
    for (size_t i = 0; i < 10; i++)
        mb_h5_slot_set(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_F64 + i), &d[i], sizeof d[i]);
    s = mb_check_name(cr->check);
    mb_h5_slot_set(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_CHECK), &s, sizeof s);
}

/* An empty /summary that grows by one row per finished case (chunked,
 * unlimited), so a file cut short still holds a readable table. */
static hid_t make_summary(struct h5 *c, hid_t f, const struct mb_result *r, hid_t t)
{
    hsize_t dim = 0, maxdim = H5S_UNLIMITED, chunk = 64;
    hid_t sp = H5Screate_simple(1, &dim, &maxdim), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    if (sp >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0)
        d = H5Dcreate2(f, "/summary", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0)
        mb_h5_fail(c, "create /summary");
    else if (put_strs(c, d, "/summary", "labels", r->label_names, r->nlabels) < 0) {
        H5Dclose(d);
        d = -1;
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    return d;
}

static int put_summary_row(struct h5 *c, hid_t d, hid_t t, size_t at, const struct mb_result *r,
                           const struct mb_case_result *cr)
{
    size_t rowsize = (1 + r->nlabels + MB_SUM_NFIXED) * MB_SUM_SLOT;
    unsigned char *row = mb_h5_xmalloc(rowsize);
    summary_row(r, cr, row);
    int rc = -1;
    hsize_t start = at, one = 1, dim = at + 1;
    hid_t fsp = -1, msp = -1;
    if (H5Dset_extent(d, &dim) >= 0 && (fsp = H5Dget_space(d)) >= 0 &&
        H5Sselect_hyperslab(fsp, H5S_SELECT_SET, &start, NULL, &one, NULL) >= 0 &&
        (msp = H5Screate_simple(1, &one, NULL)) >= 0 &&
        H5Dwrite(d, t, msp, fsp, H5P_DEFAULT, row) >= 0)
        rc = 0;
    else
        mb_h5_fail(c, "write /summary row of case %s", cr->name);
    if (msp >= 0)
        H5Sclose(msp);
    if (fsp >= 0)
        H5Sclose(fsp);
    free(row);
    return rc;
}

/* Sets every entry of l on loc, rewriting in place the attributes written
 * before (their creation order, hence the read-back order, is kept). */
static int sync_kvlist(struct h5 *c, hid_t loc, const char *where, const struct mb_kvlist *l,
                       const char *skip)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct mb_kv *e = &l->v[i];
        if (skip && strcmp(e->key, skip) == 0)
            continue;
        htri_t ex = H5Aexists(loc, e->key);
        if (ex < 0)
            return mb_h5_fail(c, "look for attribute '%s' of %s", e->key, where);
        if (ex == 0) {
            if (put_kv(c, loc, where, e) < 0)
                return -1;
            continue;
        }
        hid_t a = H5Aopen(loc, e->key, H5P_DEFAULT), t = a < 0 ? -1 : H5Aget_type(a);
        H5T_class_t cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
        H5T_class_t want = e->type == MB_KV_STR ? H5T_STRING
                           : e->type == MB_KV_INT ? H5T_INTEGER
                                                  : H5T_FLOAT;
        int vlen = t >= 0 && cls == H5T_STRING && H5Tis_variable_str(t) > 0;
        herr_t w = -1;
        if (cls == want && (cls != H5T_STRING || vlen)) {
            const char *s = e->s ? e->s : "";
            w = e->type == MB_KV_STR   ? H5Awrite(a, c->str, &s)
                : e->type == MB_KV_INT ? H5Awrite(a, H5T_NATIVE_LLONG, &e->i)
                                       : H5Awrite(a, H5T_NATIVE_DOUBLE, &e->d);
        }
        if (t >= 0)
            H5Tclose(t);
        if (a >= 0)
            H5Aclose(a);
        if (w >= 0)
            continue;
        /* another type than before: replace it */
        if (H5Adelete(loc, e->key) < 0 || put_kv(c, loc, where, e) < 0)
            return mb_h5_fail(c, "rewrite attribute '%s' of %s", e->key, where);
    }
    return 0;
}

/* The 1-D dataset grp/name of a series, replacing the one written before. */
static int put_series(struct h5 *c, hid_t grp, const char *where, const struct mb_metric *m)
{
    htri_t ex = H5Lexists(grp, m->name, H5P_DEFAULT);
    if (ex < 0 || (ex > 0 && H5Ldelete(grp, m->name, H5P_DEFAULT) < 0))
        return mb_h5_fail(c, "replace %s/%s", where, m->name);
    hid_t ft = m->type == MB_KV_STR ? c->str : m->type == MB_KV_INT ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    hid_t mt = m->type == MB_KV_STR ? c->str : m->type == MB_KV_INT ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE;
    const void *buf = m->type == MB_KV_STR ? (const void *)m->s : m->type == MB_KV_INT ? (const void *)m->i
                                                                                       : (const void *)m->d;
    hsize_t dim = m->n;
    return put_obj(c, grp, where, m->name, 0, ft, mt, &dim, buf);
}

/* /metrics as r holds it: its attributes, and every series changed since
 * the last call (*written[k] is series k's version in the file). */
static int put_metrics(struct h5 *c, hid_t f, const struct mb_result *r, unsigned long **written,
                       size_t *nwritten)
{
    if (r->nseries > *nwritten) {
        unsigned long *w = realloc(*written, r->nseries * sizeof *w);
        if (!w)
            return mb_h5_fail(c, "out of memory for /metrics");
        memset(w + *nwritten, 0, (r->nseries - *nwritten) * sizeof *w);
        *written = w;
        *nwritten = r->nseries;
    }
    hid_t g = H5Gopen2(f, "/metrics", H5P_DEFAULT);
    if (g < 0)
        return mb_h5_fail(c, "open group /metrics");
    int rc = sync_kvlist(c, g, "/metrics", &r->metrics, NULL);
    for (size_t k = 0; k < r->nseries && rc == 0; k++) {
        const struct mb_metric *m = &r->series[k];
        if ((*written)[k] == m->version)
            continue;
        char *key = mb_h5_key(m->case_name), where[300];
        snprintf(where, sizeof where, "/metrics/%s", key);
        htri_t ex = H5Lexists(g, key, H5P_DEFAULT);
        hid_t cg = ex > 0 ? H5Gopen2(g, key, H5P_DEFAULT)
                   : ex == 0 ? H5Gcreate2(g, key, H5P_DEFAULT, c->gcpl, H5P_DEFAULT)
                             : -1;
        if (cg < 0)
            rc = mb_h5_fail(c, "create group %s", where);
        else if (ex == 0)
            rc = put_str(c, cg, where, "case", m->case_name);
        if (rc == 0)
            rc = put_series(c, cg, where, m);
        if (rc == 0)
            (*written)[k] = m->version;
        if (cg >= 0)
            H5Gclose(cg);
        free(key);
    }
    H5Gclose(g);
    return rc;
}

/* /trace: each rank's spans as four 1-D datasets (see the layout above). */
static int put_trace(struct h5 *c, hid_t f, const struct mb_result *r)
{
    if (!r->ntrace)
        return 0;
    htri_t ex = H5Lexists(f, "/trace", H5P_DEFAULT);
    if (ex < 0 || (ex > 0 && H5Ldelete(f, "/trace", H5P_DEFAULT) < 0))
        return mb_h5_fail(c, "replace /trace");
    hid_t g = H5Gcreate2(f, "/trace", H5P_DEFAULT, c->gcpl, H5P_DEFAULT);
    if (g < 0)
        return mb_h5_fail(c, "create group /trace");
    int rc = 0;
    for (size_t t = 0; t < r->ntrace && rc == 0; t++) {
        const struct mb_trace_rank *tr = &r->trace[t];
        char key[32], where[64];
        snprintf(key, sizeof key, "rank%d", tr->rank);
        snprintf(where, sizeof where, "/trace/%s", key);
        hid_t rg = H5Gcreate2(g, key, H5P_DEFAULT, c->gcpl, H5P_DEFAULT);
        if (rg < 0) {
            rc = mb_h5_fail(c, "create group %s", where);
            break;
        }
        size_t n = tr->nspans;
        char **names = mb_h5_xmalloc(n * sizeof *names);
        double *start = mb_h5_xmalloc(n * sizeof *start), *end = mb_h5_xmalloc(n * sizeof *end);
        long long *lane = mb_h5_xmalloc(n * sizeof *lane), rank = tr->rank;
        for (size_t k = 0; k < n; k++) {
            names[k] = tr->spans[k].name;
            start[k] = tr->spans[k].start;
            end[k] = tr->spans[k].end;
            lane[k] = tr->spans[k].lane;
        }
        struct mb_metric cols[4] = {{.name = "name", .type = MB_KV_STR, .n = n, .s = names},
                                    {.name = "start", .type = MB_KV_DBL, .n = n, .d = start},
                                    {.name = "end", .type = MB_KV_DBL, .n = n, .d = end},
                                    {.name = "lane", .type = MB_KV_INT, .n = n, .i = lane}};
        rc = put_attr(c, rg, where, "rank", H5T_STD_I64LE, H5T_NATIVE_LLONG, &rank);
        if (rc == 0)
            rc = put_strs(c, rg, where, "lanes", tr->lanes, tr->nlanes);
        for (int k = 0; k < 4 && rc == 0; k++)
            rc = put_series(c, rg, where, &cols[k]);
        free(names);
        free(start);
        free(end);
        free(lane);
        H5Gclose(rg);
    }
    H5Gclose(g);
    return rc;
}

/* A result file being written case by case (see harness.h). */
struct mb_result_writer {
    struct h5 c;
    hid_t f, samples, counters, summary, stype, fcpl, fapl;
    size_t nrows, nlabels, nevents;
    unsigned long *written; /* [nwritten]: each series' version in the file (0: not there) */
    size_t nwritten;
};

/* HDF5's error printing is off only inside our calls, and each call
 * reports into the caller's buffer. */
static void wr_enter(struct mb_result_writer *w, char *err, size_t errlen)
{
    w->c.err = err;
    w->c.errlen = errlen;
    w->c.failed = 0;
    if (err && errlen)
        err[0] = '\0';
    H5Eget_auto2(H5E_DEFAULT, &w->c.old_func, &w->c.old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void wr_leave(struct mb_result_writer *w)
{
    H5Eset_auto2(H5E_DEFAULT, w->c.old_func, w->c.old_data);
}

/* Closes every id; the file's own close result is returned. */
static herr_t wr_close_ids(struct mb_result_writer *w)
{
    herr_t rc = 0;
    if (w->summary >= 0)
        H5Dclose(w->summary);
    if (w->stype >= 0)
        H5Tclose(w->stype);
    if (w->counters >= 0)
        H5Gclose(w->counters);
    if (w->samples >= 0)
        H5Gclose(w->samples);
    if (w->f >= 0)
        rc = H5Fclose(w->f);
    if (w->fapl >= 0)
        H5Pclose(w->fapl);
    if (w->fcpl >= 0)
        H5Pclose(w->fcpl);
    w->summary = w->stype = w->counters = w->samples = w->f = w->fapl = w->fcpl = -1;
    mb_h5_end(&w->c);
    return rc;
}

struct mb_result_writer *mb_result_begin(const struct mb_result *r, const char *path, char *err,
                                         size_t errlen)
{
    struct mb_result_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    struct h5 *c = &w->c;
    w->f = w->samples = w->counters = w->summary = w->stype = w->fcpl = w->fapl = -1;
    w->nlabels = r->nlabels;
    w->nevents = r->nevents;
    int rc = mb_h5_begin(c, path, err, errlen);
    if (rc < 0)
        goto fail;
    if (r->nlabels > MB_MAX_LABELS) {
        mb_h5_fail(c, "%zu labels, at most %d", r->nlabels, MB_MAX_LABELS);
        goto fail;
    }
    if ((w->stype = mb_h5_summary_type(c, r->label_names, r->nlabels)) < 0)
        goto fail;
    w->fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (w->fcpl < 0 ||
        H5Pset_attr_creation_order(w->fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
        mb_h5_fail(c, "make file creation property list");
        goto fail;
    }
    if ((w->fapl = mb_h5_fapl(c, 1)) < 0)
        goto fail;
    /* H5F_ACC_EXCL is open(O_CREAT | O_EXCL): never an existing file, and
     * never through a symbolic link planted at the name. */
    w->f = H5Fcreate(path, H5F_ACC_EXCL, w->fcpl, w->fapl);
    if (w->f < 0) {
        struct stat st;
        if (lstat(path, &st) == 0) {
            H5Eclear2(H5E_DEFAULT); /* HDF5's errno text says no more */
            mb_h5_fail(c, "create: file exists (never overwritten)");
        } else {
            mb_h5_fail(c, "create");
        }
        goto fail;
    }
    long long ver = MB_SCHEMA_VERSION;
    if (put_attr(c, w->f, "/", "schema_version", H5T_STD_I64LE, H5T_NATIVE_LLONG, &ver) < 0 ||
        put_kvlist(c, w->f, "/", &r->root, "schema_version") < 0 ||
        put_group_kv(c, w->f, "/config", &r->config) < 0 ||
        put_group_kv(c, w->f, "/metrics", &r->metrics) < 0 ||
        put_group_kv(c, w->f, "/environment", &r->environment) < 0 ||
        put_topology(c, w->f, r->topology_xml) < 0)
        goto fail_created;
    w->samples = H5Gcreate2(w->f, "/samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (w->samples < 0) {
        mb_h5_fail(c, "create group /samples");
        goto fail_created;
    }
    if (r->nevents > 0) {
        w->counters = H5Gcreate2(w->f, "/counters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (w->counters < 0) {
            mb_h5_fail(c, "create group /counters");
            goto fail_created;
        }
        if (put_strs(c, w->counters, "/counters", "events", r->event_names, r->nevents) < 0)
            goto fail_created;
    }
    if ((w->summary = make_summary(c, w->f, r, w->stype)) < 0)
        goto fail_created;
    if (H5Fflush(w->f, H5F_SCOPE_LOCAL) < 0) {
        mb_h5_fail(c, "flush");
        goto fail_created;
    }
    wr_leave(w);
    return w;
fail_created:
    wr_close_ids(w);
    unlink(path); /* we created it: leave no half-written file */
    free(w);
    return NULL;
fail:
    wr_close_ids(w);
    free(w);
    return NULL;
}

int mb_result_writer_fd(const struct mb_result_writer *w)
{
    void *h = NULL;
    if (H5Fget_vfd_handle(w->f, w->fapl, &h) < 0 || !h) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    return fcntl(*(int *)h, F_DUPFD_CLOEXEC, 0);
}

/* What HDF5 cannot catch for us, checked before the case is written. */
static int validate_case(struct h5 *c, const struct mb_case_result *cr, size_t k)
{
    if (!cr->name || !cr->name[0])
        return mb_h5_fail(c, "case %zu has no name", k);
    if (cr->check < MB_CHECK_SKIPPED || cr->check > MB_CHECK_NA)
        return mb_h5_fail(c, "case %s: invalid check status %d", cr->name, cr->check);
    if (!cr->samples && cr->iters * cr->nranks > 0)
        return mb_h5_fail(c, "case %s: no samples for %zu x %zu", cr->name, cr->iters, cr->nranks);
    return 0;
}

int mb_result_append(struct mb_result_writer *w, const struct mb_result *r, size_t k, char *err,
                     size_t errlen)
{
    wr_enter(w, err, errlen);
    struct h5 *c = &w->c;
    int rc = -1;
    if (k >= r->ncases || r->nlabels != w->nlabels || r->nevents != w->nevents) {
        mb_h5_fail(c, "case %zu: not a case of this file's layout", k);
        goto out;
    }
    const struct mb_case_result *cr = &r->cases[k];
    if (validate_case(c, cr, k) < 0 || put_case_data(c, w->samples, w->counters, r, cr) < 0 ||
        put_summary_row(c, w->summary, w->stype, w->nrows, r, cr) < 0)
        goto out;
    w->nrows++;
    /* "/" carries what changes as cases run (emulation, complete) */
    if (sync_kvlist(c, w->f, "/", &r->root, "schema_version") < 0 ||
        put_metrics(c, w->f, r, &w->written, &w->nwritten) < 0)
        goto out;
    if (H5Fflush(w->f, H5F_SCOPE_LOCAL) < 0) {
        mb_h5_fail(c, "flush after case %s", cr->name);
        goto out;
    }
    rc = 0;
out:
    wr_leave(w);
    return rc;
}

int mb_result_sync(struct mb_result_writer *w, const struct mb_result *r, char *err, size_t errlen)
{
    wr_enter(w, err, errlen);
    struct h5 *c = &w->c;
    int rc = sync_kvlist(c, w->f, "/", &r->root, "schema_version");
    if (rc == 0)
        rc = put_metrics(c, w->f, r, &w->written, &w->nwritten);
    if (rc == 0)
        rc = put_trace(c, w->f, r);
    if (rc == 0 && H5Fflush(w->f, H5F_SCOPE_LOCAL) < 0)
        rc = mb_h5_fail(c, "flush mid-case");
    wr_leave(w);
    return rc < 0 ? -1 : 0;
}

int mb_result_end(struct mb_result_writer *w, const struct mb_result *r, char *err, size_t errlen)
{
    if (!w)
        return 0;
    int rc = 0;
    if (r) {
        wr_enter(w, err, errlen);
        struct h5 *c = &w->c;
        hid_t g = -1;
        rc = sync_kvlist(c, w->f, "/", &r->root, "schema_version");
        for (int i = 0; i < 2 && rc == 0; i++) {
            const char *name = i ? "/environment" : "/config";
            g = H5Gopen2(w->f, name, H5P_DEFAULT);
            rc = g < 0 ? mb_h5_fail(c, "open group %s", name)
                       : sync_kvlist(c, g, name, i ? &r->environment : &r->config, NULL);
            if (g >= 0)
                H5Gclose(g);
        }
        if (rc == 0)
            rc = put_metrics(c, w->f, r, &w->written, &w->nwritten);
        if (rc == 0)
            rc = put_trace(c, w->f, r);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        if (wr_close_ids(w) < 0 && rc == 0)
            rc = mb_h5_fail(c, "close (flush)");
        H5Eset_auto2(H5E_DEFAULT, c->old_func, c->old_data);
    } else {
        /* abandoned: close quietly, whatever it says */
        H5E_auto2_t f;
        void *d;
        H5Eget_auto2(H5E_DEFAULT, &f, &d);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        wr_close_ids(w);
        H5Eclear2(H5E_DEFAULT);
        H5Eset_auto2(H5E_DEFAULT, f, d);
    }
    free(w->written);
    free(w);
    return rc;
}

int mb_result_write(const struct mb_result *r, const char *path, char *err, size_t errlen)
{
    struct mb_result_writer *w = mb_result_begin(r, path, err, errlen);
    if (!w)
        return -1;
    int rc = 0;
    for (size_t k = 0; k < r->ncases && rc == 0; k++)
        rc = mb_result_append(w, r, k, err, errlen);
    if (rc == 0)
        rc = mb_result_end(w, r, err, errlen);
    else
        mb_result_end(w, NULL, NULL, 0);
    if (rc < 0)
        unlink(path); /* we created it: leave no half-written file */
    return rc;
}
