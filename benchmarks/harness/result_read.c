/* Reading a result file back into struct mb_result (mb-report, tests).
 * Tolerant of what a newer minor writer might add (extra attributes,
 * fields, datasets), strict about schema_version and about everything the
 * struct needs: /summary rows, and /samples for every case, of the shapes
 * /summary gives. Layout: result.c. */
#include "result_h5.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

static herr_t rd(hid_t obj, int is_attr, hid_t mtype, void *buf)
{
    if (is_attr)
        return H5Aread(obj, mtype, buf);
    return H5Dread(obj, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
}

/* n strings of an attribute or dataset, variable- or fixed-length, into
 * out[0..n) (malloc'd). */
static int get_strs(struct h5 *c, hid_t obj, int is_attr, const char *what, char **out, size_t n)
{
    int rc = -1;
    hid_t ft = is_attr ? H5Aget_type(obj) : H5Dget_type(obj), mt = -1;
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
        mb_h5_fail(c, "%s: not a string", what);
        goto out;
    }
    if (H5Tis_variable_str(ft) > 0) {
        char **v = mb_h5_xmalloc(n * sizeof *v);
        memset(v, 0, n * sizeof *v);
        if (n == 0 || rd(obj, is_attr, c->str, v) >= 0) {
            for (size_t i = 0; i < n; i++) {
                out[i] = mb_h5_xstrdup(v[i]);
                H5free_memory(v[i]);
            }
            rc = 0;
        } else {
            mb_h5_fail(c, "read %s", what);
        }
        free(v);
    } else {
        size_t sz = H5Tget_size(ft) + 1;
        mt = H5Tcopy(H5T_C_S1);
        if (mt < 0 || H5Tset_size(mt, sz) < 0 || H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0) {
            mb_h5_fail(c, "read %s", what);
            goto out;
        }
        char *buf = mb_h5_xmalloc(n * sz);
        memset(buf, 0, n * sz);
        if (n == 0 || rd(obj, is_attr, mt, buf) >= 0) {
            for (size_t i = 0; i < n; i++)
                out[i] = mb_h5_xstrdup(buf + i * sz);
            rc = 0;
        } else {
            mb_h5_fail(c, "read %s", what);
        }
        free(buf);
    }
out:
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    return rc;
}

/* Number of elements of an attribute's or dataset's dataspace, -1 on error. */
static long long npoints(struct h5 *c, hid_t obj, int is_attr, const char *what)
{
    hid_t sp = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
    hssize_t n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (n < 0)
        mb_h5_fail(c, "dataspace of %s", what);
    if (sp >= 0)
        H5Sclose(sp);
    return n;
}

/* A 1-D string array attribute; *n = 0 and no error when absent. */
static int get_attr_strs(struct h5 *c, hid_t loc, const char *where, const char *name, char ***out,
                         size_t *n)
{
    *out = NULL;
    *n = 0;
    htri_t ex = H5Aexists(loc, name);
    if (ex < 0)
        return mb_h5_fail(c, "look for attribute '%s' of %s", name, where);
    if (ex == 0)
        return 0;
    char what[256];
    snprintf(what, sizeof what, "attribute '%s' of %s", name, where);
    int rc = -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) {
        mb_h5_fail(c, "open %s", what);
        return -1;
    }
    long long np = npoints(c, a, 1, what);
    if (np >= 0) {
        char **v = mb_h5_xmalloc((size_t)np * sizeof *v);
        if (get_strs(c, a, 1, what, v, (size_t)np) == 0) {
            *out = v;
            *n = (size_t)np;
            rc = 0;
        } else {
            free(v);
        }
    }
    H5Aclose(a);
    return rc;
}

struct kv_iter {
    struct h5 *c;
    struct mb_kvlist *l;
    const char *where, *skip;
    int failed;
};

/* One scalar attribute into the kv list; other shapes and types (none
 * written by this schema) are skipped so newer writers stay readable. */
static herr_t kv_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    struct kv_iter *it = data;
    struct h5 *c = it->c;
    if (it->skip && strcmp(name, it->skip) == 0)
        return 0;
    char what[256];
    snprintf(what, sizeof what, "attribute '%s' of %s", name, it->where);
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = -1, sp = -1;
    int rc = -1;
    if (a < 0 || (t = H5Aget_type(a)) < 0 || (sp = H5Aget_space(a)) < 0) {
        mb_h5_fail(c, "open %s", what);
        goto out;
    }
    rc = 0;
    if (H5Sget_simple_extent_type(sp) != H5S_SCALAR)
        goto out;
    switch (H5Tget_class(t)) {
    case H5T_STRING: {
        char *s = NULL;
        if ((rc = get_strs(c, a, 1, what, &s, 1)) == 0) {
            mb_kv_str(it->l, name, s);
            free(s);
        }
        break;
    }
    case H5T_INTEGER: {
        long long v;
        if (H5Aread(a, H5T_NATIVE_LLONG, &v) < 0)
            rc = mb_h5_fail(c, "read %s", what);
        else
            mb_kv_int(it->l, name, v);
        break;
    }
    case H5T_FLOAT: {
        double v;
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
            rc = mb_h5_fail(c, "read %s", what);
        else
            mb_kv_dbl(it->l, name, v);
        break;
    }
    default:
        break;
    }
out:
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    if (rc < 0)
        it->failed = 1;
    return rc;
}

static int get_kvlist(struct h5 *c, hid_t loc, const char *where, struct mb_kvlist *l,
                      const char *skip)
{
    struct kv_iter it = {c, l, where, skip, 0};
    if (H5Aiterate2(loc, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, kv_attr, &it) >= 0)
        return 0;
    if (it.failed)
        return -1;
    /* No creation-order index (a file from another writer): by name. */
    mb_kv_free(l);
    if (H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, NULL, kv_attr, &it) >= 0)
        return 0;
    return it.failed ? -1 : mb_h5_fail(c, "list attributes of %s", where);
}

static int get_group_kv(struct h5 *c, hid_t f, const char *name, struct mb_kvlist *l)
{
    htri_t ex = H5Lexists(f, name, H5P_DEFAULT);
    if (ex < 0)
        return mb_h5_fail(c, "look for %s", name);
    if (ex == 0)
        return 0;
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    if (g < 0)
        return mb_h5_fail(c, "open group %s", name);
    int rc = get_kvlist(c, g, name, l, NULL);
    H5Gclose(g);
    return rc;
}

/* The link iteration API's names before and since HDF5 1.12. */
#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t mb_h5_link_info;
typedef H5L_iterate2_t mb_h5_link_fn;
#define mb_h5_literate H5Literate2
#else
typedef H5L_info_t mb_h5_link_info;
typedef H5L_iterate_t mb_h5_link_fn;
#define mb_h5_literate H5Literate
#endif

/* The type of the object at g/name (H5I_GROUP, H5I_DATASET, ...), or -1. */
static H5I_type_t object_type(hid_t g, const char *name)
{
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0)
        return H5I_BADID;
    H5I_type_t t = H5Iget_type(o);
    H5Oclose(o);
    return t;
}

/* One /metrics/<case>/<name> dataset into r's series. */
struct series_iter {
    struct h5 *c;
    struct mb_result *r;
    const char *case_name, *where;
    int failed;
};

static herr_t series_link(hid_t g, const char *name, const mb_h5_link_info *info, void *data)
{
    (void)info;
    struct series_iter *it = data;
    struct h5 *c = it->c;
    char what[600];
    snprintf(what, sizeof what, "%s/%s", it->where, name);
    H5I_type_t ot = object_type(g, name);
    if (ot == H5I_BADID) {
        it->failed = 1;
        return mb_h5_fail(c, "open %s", what);
    }
    if (ot != H5I_DATASET || !name[0] || strchr(name, '/'))
        return 0; /* not this schema's: a newer writer's, skipped */
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT), t = d < 0 ? -1 : H5Dget_type(d);
    H5T_class_t cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    long long n = d < 0 ? -1 : npoints(c, d, 0, what);
    int rc = d < 0 || n < 0 ? -1 : 0;
    if (rc == 0 && n > 0 && cls == H5T_FLOAT) {
        double *v = mb_h5_xmalloc((size_t)n * sizeof *v);
        rc = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ? -1 : 0;
        for (long long j = n - 1; rc == 0 && j >= 0; j--)
            mb_metric_at_dbl(it->r, it->case_name, name, (size_t)j, v[j]);
        free(v);
    } else if (rc == 0 && n > 0 && cls == H5T_INTEGER) {
        long long *v = mb_h5_xmalloc((size_t)n * sizeof *v);
        rc = H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ? -1 : 0;
        for (long long j = n - 1; rc == 0 && j >= 0; j--)
            mb_metric_at_int(it->r, it->case_name, name, (size_t)j, v[j]);
        free(v);
    } else if (rc == 0 && n > 0 && cls == H5T_STRING) {
        char **v = mb_h5_xmalloc((size_t)n * sizeof *v);
        rc = get_strs(c, d, 0, what, v, (size_t)n);
        for (long long j = n - 1; rc == 0 && j >= 0; j--)
            mb_metric_at_str(it->r, it->case_name, name, (size_t)j, v[j]);
        for (long long j = 0; rc == 0 && j < n; j++)
            free(v[j]);
        free(v);
    }
    if (rc < 0)
        mb_h5_fail(c, "read %s", what);
    if (t >= 0)
        H5Tclose(t);
    if (d >= 0)
        H5Dclose(d);
    if (rc < 0)
        it->failed = 1;
    return rc;
}

/* Walks a group's links in creation order, else (another writer) by name. */
static int iterate_links(struct h5 *c, hid_t g, const char *where, mb_h5_link_fn fn, void *data,
                         int *failed)
{
    if (mb_h5_literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, fn, data) >= 0)
        return 0;
    if (*failed)
        return -1;
    H5Eclear2(H5E_DEFAULT);
    if (mb_h5_literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, fn, data) >= 0)
        return 0;
    return *failed ? -1 : mb_h5_fail(c, "list %s", where);
}

struct case_iter {
    struct h5 *c;
    struct mb_result *r;
    int failed;
};

static herr_t metrics_case(hid_t g, const char *name, const mb_h5_link_info *info, void *data)
{
    (void)info;
    struct case_iter *it = data;
    struct h5 *c = it->c;
    char where[600];
    snprintf(where, sizeof where, "/metrics/%s", name);
    H5I_type_t ot = object_type(g, name);
    if (ot == H5I_BADID) {
        it->failed = 1;
        return mb_h5_fail(c, "open %s", where);
    }
    if (ot != H5I_GROUP)
        return 0;
    hid_t cg = H5Gopen2(g, name, H5P_DEFAULT);
    char **cn = NULL;
    size_t ncn = 0;
    int rc = cg < 0 ? mb_h5_fail(c, "open %s", where) : get_attr_strs(c, cg, where, "case", &cn, &ncn);
    if (rc == 0 && ncn != 1)
        rc = mb_h5_fail(c, "%s: no 'case' attribute", where);
    if (rc == 0) {
        struct series_iter si = {c, it->r, cn[0], where, 0};
        rc = iterate_links(c, cg, where, series_link, &si, &si.failed);
    }
    for (size_t i = 0; i < ncn; i++)
        free(cn[i]);
    free(cn);
    if (cg >= 0)
        H5Gclose(cg);
    if (rc < 0)
        it->failed = 1;
    return rc;
}

/* An optional top-level group: its attributes into kv (when not NULL),
 * then fn over its links. */
static int walk_group(struct h5 *c, hid_t f, const char *name, struct mb_kvlist *kv, mb_h5_link_fn fn,
                      struct mb_result *r)
{
    htri_t ex = H5Lexists(f, name, H5P_DEFAULT);
    if (ex <= 0)
        return ex < 0 ? mb_h5_fail(c, "look for %s", name) : 0;
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    if (g < 0)
        return mb_h5_fail(c, "open group %s", name);
    struct case_iter it = {c, r, 0};
    int rc = kv ? get_kvlist(c, g, name, kv, NULL) : 0;
    if (rc == 0)
        rc = iterate_links(c, g, name, fn, &it, &it.failed);
    H5Gclose(g);
    return rc;
}

/* Schema 2's /metrics; a schema-1 file has none (its measurements are in /config). */
static int get_metrics(struct h5 *c, hid_t f, struct mb_result *r)
{
    return walk_group(c, f, "/metrics", &r->metrics, metrics_case, r);
}

/* A 1-D dataset of n numbers (mtype) of group g into buf; -1 when its size is not n. */
static int get_column(struct h5 *c, hid_t g, const char *where, const char *name, hid_t mtype, void *buf,
                      size_t n)
{
    char what[128];
    snprintf(what, sizeof what, "%s/%s", where, name);
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0)
        return mb_h5_fail(c, "open %s", what);
    long long np = npoints(c, d, 0, what);
    int rc = np < 0 ? -1 : (size_t)np != n ? mb_h5_fail(c, "%s: %lld values, expected %zu", what, np, n) : 0;
    if (rc == 0 && n > 0 && (mtype == c->str ? get_strs(c, d, 0, what, buf, n)
                                             : H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0)
        rc = mtype == c->str ? -1 : mb_h5_fail(c, "read %s", what);
    H5Dclose(d);
    return rc;
}

static herr_t trace_rank(hid_t g, const char *name, const mb_h5_link_info *info, void *data)
{
    (void)info;
    struct case_iter *it = data;
    struct h5 *c = it->c;
    char where[128];
    snprintf(where, sizeof where, "/trace/%s", name);
    if (object_type(g, name) != H5I_GROUP || strncmp(name, "rank", 4) != 0)
        return 0; /* not this schema's */
    hid_t rg = H5Gopen2(g, name, H5P_DEFAULT);
    if (rg < 0) {
        it->failed = 1;
        return mb_h5_fail(c, "open %s", where);
    }
    struct mb_trace_rank tr = {0};
    long long rank = -1, np = -1;
    hid_t a = H5Aopen(rg, "rank", H5P_DEFAULT), d = H5Dopen2(rg, "start", H5P_DEFAULT);
    int rc = a < 0 || H5Aread(a, H5T_NATIVE_LLONG, &rank) < 0 ? mb_h5_fail(c, "read attribute 'rank' of %s", where)
                                                               : 0;
    if (rc == 0)
        rc = d < 0 ? mb_h5_fail(c, "open %s/start", where) : (np = npoints(c, d, 0, where)) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    if (d >= 0)
        H5Dclose(d);
    if (rc == 0)
        rc = get_attr_strs(c, rg, where, "lanes", &tr.lanes, &tr.nlanes);
    size_t n = np > 0 ? (size_t)np : 0;
    char **names = mb_h5_xmalloc(n * sizeof *names);
    double *start = mb_h5_xmalloc(n * sizeof *start), *end = mb_h5_xmalloc(n * sizeof *end);
    long long *lane = mb_h5_xmalloc(n * sizeof *lane);
    memset(names, 0, n * sizeof *names);
    if (rc == 0)
        rc = get_column(c, rg, where, "start", H5T_NATIVE_DOUBLE, start, n);
    if (rc == 0)
        rc = get_column(c, rg, where, "end", H5T_NATIVE_DOUBLE, end, n);
    if (rc == 0)
        rc = get_column(c, rg, where, "lane", H5T_NATIVE_LLONG, lane, n);
    if (rc == 0)
        rc = get_column(c, rg, where, "name", c->str, names, n);
    H5Gclose(rg);
    tr.rank = (int)rank;
    tr.nspans = n;
    tr.spans = mb_h5_xmalloc(n * sizeof *tr.spans);
    for (size_t k = 0; k < n; k++)
        tr.spans[k] = (struct mb_span){names[k] ? names[k] : mb_h5_xstrdup(""), start[k], end[k], lane[k]};
    free(names);
    free(start);
    free(end);
    free(lane);
    struct mb_trace_rank *grown = realloc(it->r->trace, (it->r->ntrace + 1) * sizeof *grown);
    if (!grown)
        mb_die(1, "out of memory");
    it->r->trace = grown;
    it->r->trace[it->r->ntrace++] = tr; /* kept even when failed: mb_result_free frees it */
    if (rc < 0)
        it->failed = 1;
    return rc;
}

/* /trace when spans were recorded. */
static int get_trace(struct h5 *c, hid_t f, struct mb_result *r)
{
    return walk_group(c, f, "/trace", NULL, trace_rank, r);
}

static int get_topology(struct h5 *c, hid_t f, char **xml)
{
    htri_t ex = H5Lexists(f, "/topology", H5P_DEFAULT);
    if (ex <= 0)
        return ex < 0 ? mb_h5_fail(c, "look for /topology") : 0;
    hid_t d = H5Dopen2(f, "/topology", H5P_DEFAULT);
    if (d < 0)
        return mb_h5_fail(c, "open /topology");
    int rc = -1;
    long long n = npoints(c, d, 0, "/topology");
    if (n == 1)
        rc = get_strs(c, d, 0, "/topology", xml, 1);
    else if (n >= 0)
        mb_h5_fail(c, "/topology: %lld elements, expected 1", n);
    H5Dclose(d);
    if (rc == 0 && !(*xml)[0]) {
        free(*xml);
        *xml = NULL;
    }
    return rc;
}

static int get_schema(struct h5 *c, hid_t f)
{
    htri_t ex = H5Aexists(f, "schema_version");
    if (ex < 0)
        return mb_h5_fail(c, "look for attribute 'schema_version' of /");
    if (ex == 0)
        return mb_h5_fail(c, "not a movebench result file (no schema_version attribute on /)");
    long long v = 0;
    hid_t a = H5Aopen(f, "schema_version", H5P_DEFAULT);
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    int ok = t >= 0 && H5Tget_class(t) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0;
    if (!ok)
        mb_h5_fail(c, "read attribute 'schema_version' of / (an integer)");
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    if (!ok)
        return -1;
    if (v > MB_SCHEMA_VERSION)
        return mb_h5_fail(c, "schema_version %lld is newer than this reader's %d; update movebench",
                          v, MB_SCHEMA_VERSION);
    if (v < 1)
        return mb_h5_fail(c, "invalid schema_version %lld", v);
    return 0;
}

static int get_summary(struct h5 *c, hid_t f, struct mb_result *r)
{
    hid_t d = H5Dopen2(f, "/summary", H5P_DEFAULT);
    if (d < 0)
        return mb_h5_fail(c, "open /summary");
    int rc = -1;
    char **labels = NULL;
    size_t nl = 0;
    hid_t t = -1, sp = -1;
    unsigned char *rows = NULL;
    if (get_attr_strs(c, d, "/summary", "labels", &labels, &nl) < 0)
        goto out;
    if (nl > MB_MAX_LABELS) {
        mb_h5_fail(c, "/summary: %zu labels, at most %d", nl, MB_MAX_LABELS);
        goto out;
    }
    for (size_t i = 0; i < nl; i++) {
        r->label_names[i] = labels[i];
        labels[i] = NULL;
    }
    r->nlabels = nl;
    if ((t = mb_h5_summary_type(c, r->label_names, nl)) < 0)
        goto out;
    long long n = npoints(c, d, 0, "/summary");
    if (n < 0 || (sp = H5Dget_space(d)) < 0) {
        mb_h5_fail(c, "dataspace of /summary");
        goto out;
    }
    size_t rowsize = (1 + nl + MB_SUM_NFIXED) * MB_SUM_SLOT;
    rows = mb_h5_xmalloc((size_t)n * rowsize);
    memset(rows, 0, (size_t)n * rowsize);
    if (n > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
        mb_h5_fail(c, "read /summary (fields missing?)");
        goto out;
    }
    rc = 0;
    for (size_t k = 0; k < (size_t)n; k++) {
        const unsigned char *row = rows + k * rowsize;
        char *s;
        mb_h5_slot_get(row, 0, &s, sizeof s);
        struct mb_case_result *cr = mb_result_add_case(r, s);
        for (size_t i = 0; i < nl; i++) {
            mb_h5_slot_get(row, 1 + i, &s, sizeof s);
            cr->labels[i] = mb_h5_xstrdup(s);
        }
        uint64_t u[4];
        double v[10];
        for (size_t i = 0; i < 4; i++)
            mb_h5_slot_get(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_U64 + i), &u[i], sizeof u[i]);
        for (size_t i = 0; i < 10; i++)
            mb_h5_slot_get(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_F64 + i), &v[i], sizeof v[i]);
        cr->bytes = u[0];
        cr->count = u[1];
        cr->iters = (size_t)u[2];
        cr->nranks = (size_t)u[3];
        cr->stats.n = cr->iters;
        cr->stats.min = v[0];
        cr->stats.median = v[1];
        cr->stats.p95 = v[2];
        cr->stats.max = v[3];
        cr->stats.mean = v[4];
        cr->stats.ci_lo = v[5];
        cr->stats.ci_hi = v[6];
        cr->algbw = v[7];
        cr->busbw = v[8];
        cr->model_s = v[9];
        mb_h5_slot_get(row, MB_SUM_FIXED_SLOT(nl, MB_SUM_CHECK), &s, sizeof s);
        cr->check = -1;
        for (int ch = MB_CHECK_SKIPPED; ch <= MB_CHECK_NA; ch++)
            if (s && strcmp(s, mb_check_name(ch)) == 0)
                cr->check = ch;
        if (cr->check < 0 && rc == 0)
            rc = mb_h5_fail(c, "/summary: case %s: unknown check status '%s'", cr->name,
                            s ? s : "");
        if (cr->iters != 0 && cr->nranks > SIZE_MAX / sizeof(double) / cr->iters && rc == 0)
            rc = mb_h5_fail(c, "/summary: case %s: size overflows", cr->name);
    }
    if (n > 0)
        mb_h5_reclaim(t, sp, rows);
out:
    for (size_t i = 0; i < nl; i++)
        free(labels[i]);
    free(labels);
    free(rows);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    H5Dclose(d);
    return rc;
}

/* grp/key as a rows x cols matrix into *data (malloc'd), after checking
 * its shape and its "case" attribute against /summary. */
static int get_matrix(struct h5 *c, hid_t grp, const char *where, const char *name,
                      const char *key, hid_t mtype, size_t esize, size_t rows, size_t cols,
                      void **data)
{
    char what[512];
    snprintf(what, sizeof what, "%s/%s", where, key);
    hid_t d = H5Dopen2(grp, key, H5P_DEFAULT), sp = -1, a = -1;
    int rc = -1;
    char *cname = NULL;
    hsize_t dims[2] = {0, 0};
    if (d < 0 || (sp = H5Dget_space(d)) < 0) {
        mb_h5_fail(c, "open %s (case %s)", what, name);
        goto out;
    }
    if (H5Sget_simple_extent_ndims(sp) != 2 || H5Sget_simple_extent_dims(sp, dims, NULL) != 2 ||
        dims[0] != rows || dims[1] != cols) {
        mb_h5_fail(c, "%s: shape %llux%llu, /summary says %zux%zu", what,
                   (unsigned long long)dims[0], (unsigned long long)dims[1], rows, cols);
        goto out;
    }
    if ((a = H5Aopen(d, "case", H5P_DEFAULT)) < 0) {
        mb_h5_fail(c, "open attribute 'case' of %s", what);
        goto out;
    }
    if (get_strs(c, a, 1, what, &cname, 1) < 0)
        goto out;
    if (strcmp(cname, name) != 0) {
        mb_h5_fail(c, "%s: attribute case is '%s', expected '%s'", what, cname, name);
        goto out;
    }
    *data = mb_h5_xmalloc(rows * cols * esize);
    if (rows * cols > 0 && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
        mb_h5_fail(c, "read %s", what);
        free(*data);
        *data = NULL;
        goto out;
    }
    rc = 0;
out:
    free(cname);
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static int get_case_data(struct h5 *c, hid_t f, struct mb_result *r)
{
    int rc = -1;
    hid_t samples = H5Gopen2(f, "/samples", H5P_DEFAULT), counters = -1;
    if (samples < 0)
        return mb_h5_fail(c, "open group /samples");
    htri_t ex = H5Lexists(f, "/counters", H5P_DEFAULT);
    if (ex < 0) {
        mb_h5_fail(c, "look for /counters");
        goto out;
    }
    if (ex > 0) {
        if ((counters = H5Gopen2(f, "/counters", H5P_DEFAULT)) < 0) {
            mb_h5_fail(c, "open group /counters");
            goto out;
        }
        if (get_attr_strs(c, counters, "/counters", "events", &r->event_names, &r->nevents) < 0)
            goto out;
    }
    for (size_t k = 0; k < r->ncases; k++) {
        struct mb_case_result *cr = &r->cases[k];
        char *key = mb_h5_key(cr->name);
        void *p = NULL;
        int bad = get_matrix(c, samples, "/samples", cr->name, key, H5T_NATIVE_DOUBLE,
                             sizeof(double), cr->iters, cr->nranks, &p) < 0;
        if (!bad && cr->iters * cr->nranks == 0) {
            free(p);
            p = NULL;
        }
        cr->samples = p;
        if (!bad && r->nevents > 0) {
            ex = H5Lexists(counters, key, H5P_DEFAULT);
            if (ex < 0)
                bad = mb_h5_fail(c, "look for /counters/%s", key);
            else if (ex > 0) {
                p = NULL;
                bad = get_matrix(c, counters, "/counters", cr->name, key, H5T_NATIVE_LLONG,
                                 sizeof(long long), cr->nranks, r->nevents, &p) < 0;
                cr->counters = p;
            }
        }
        free(key);
        if (bad)
            goto out;
    }
    rc = 0;
out:
    if (counters >= 0)
        H5Gclose(counters);
    H5Gclose(samples);
    return rc;
}

/* The HDF5 signature at 0, 512, 1024, ... (a user block may precede it). */
static int has_hdf5_signature(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return 0;
    int found = 0;
    unsigned char buf[8];
    for (long off = 0; !found && off <= (1L << 30); off = off ? 2 * off : 512)
        if (fseek(fp, off, SEEK_SET) != 0 || fread(buf, 1, 8, fp) != 8)
            break;
        else
            found = memcmp(buf, sig, 8) == 0;
    fclose(fp);
    return found;
}

int mb_result_read(const char *path, struct mb_result *r, char *err, size_t errlen)
{
    struct h5 c;
    hid_t fapl = -1, f = -1;
    mb_result_init(r);
    int rc = mb_h5_begin(&c, path, err, errlen);
    if (rc < 0)
        goto out;
    rc = -1;
    struct stat st;
    if (stat(path, &st) < 0) {
        mb_h5_fail(&c, "%s", strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        mb_h5_fail(&c, "is a directory");
        goto out;
    }
    if ((fapl = mb_h5_fapl(&c, 0)) < 0)
        goto out;
    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        if (!has_hdf5_signature(path)) {
            H5Eclear2(H5E_DEFAULT);
            mb_h5_fail(&c, "not an HDF5 file");
        } else {
            mb_h5_fail(&c, "open (damaged or truncated HDF5 file?)");
        }
        goto out;
    }
    if (get_schema(&c, f) < 0 || get_kvlist(&c, f, "/", &r->root, "schema_version") < 0 ||
        get_group_kv(&c, f, "/config", &r->config) < 0 || get_metrics(&c, f, r) < 0 ||
        get_group_kv(&c, f, "/environment", &r->environment) < 0 ||
        get_topology(&c, f, &r->topology_xml) < 0 || get_summary(&c, f, r) < 0 ||
        get_case_data(&c, f, r) < 0 || get_trace(&c, f, r) < 0)
        goto out;
    rc = 0;
out:
    if (f >= 0 && H5Fclose(f) < 0 && rc == 0)
        rc = mb_h5_fail(&c, "close");
    if (fapl >= 0)
        H5Pclose(fapl);
    mb_h5_end(&c);
    if (rc < 0)
        mb_result_free(r);
    return rc;
}
