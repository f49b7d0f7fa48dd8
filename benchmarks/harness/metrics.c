/* The result's measurements (schema 2's /metrics): run-level values as a
 * kv list, per-case values and series as struct mb_metric. Out of memory
 * is fatal, as elsewhere in the harness. */
#include "result_h5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_name(const char *name)
{
    if (!name || !name[0] || strchr(name, '/') || strcmp(name, "case") == 0)
        mb_die(1, "bug: metric name '%s' is empty, holds '/' or is 'case'", name ? name : "(null)");
}

void mb_metric_run_str(struct mb_result *r, const char *name, const char *val)
{
    check_name(name);
    mb_kv_str(&r->metrics, name, val);
}

void mb_metric_run_int(struct mb_result *r, const char *name, long long val)
{
    check_name(name);
    mb_kv_int(&r->metrics, name, val);
}

void mb_metric_run_dbl(struct mb_result *r, const char *name, double val)
{
    check_name(name);
    mb_kv_dbl(&r->metrics, name, val);
}

const struct mb_metric *mb_metric_find(const struct mb_result *r, const char *case_name, const char *name)
{
    for (size_t k = 0; k < r->nseries; k++)
        if (strcmp(r->series[k].name, name) == 0 && strcmp(r->series[k].case_name, case_name) == 0)
            return &r->series[k];
    return NULL;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        mb_die(1, "out of memory: the result's metrics");
    return p;
}

/* The series, made with this type when absent, holding at least index + 1
 * entries (new ones NaN, "" or 0). */
static struct mb_metric *series_at(struct mb_result *r, const char *case_name, const char *name,
                                   enum mb_kv_type type, size_t index)
{
    check_name(name);
    if (!case_name || !case_name[0])
        mb_die(1, "bug: metric '%s' without a case", name);
    struct mb_metric *m = (struct mb_metric *)mb_metric_find(r, case_name, name);
    if (!m) {
        if (mb_grow((void **)&r->series, &r->series_cap, r->nseries + 1, sizeof(*r->series)) != 0)
            mb_die(1, "out of memory: the result's metrics");
        m = &r->series[r->nseries++];
        memset(m, 0, sizeof *m);
        m->case_name = xstrdup(case_name);
        m->name = xstrdup(name);
        m->type = type;
    } else if (m->type != type) {
        mb_die(1, "bug: metric '%s' of case %s set with two types", name, case_name);
    }
    if (index >= m->n) {
        size_t cap = m->cap, want = index + 1;
        int bad = 0;
        switch (type) {
        case MB_KV_DBL: bad = mb_grow((void **)&m->d, &cap, want, sizeof(*m->d)); break;
        case MB_KV_INT: bad = mb_grow((void **)&m->i, &cap, want, sizeof(*m->i)); break;
        case MB_KV_STR: bad = mb_grow((void **)&m->s, &cap, want, sizeof(*m->s)); break;
        }
        if (bad)
            mb_die(1, "out of memory: the result's metrics");
        m->cap = cap;
        for (size_t j = m->n; j < want; j++) {
            if (type == MB_KV_DBL)
                m->d[j] = NAN;
            else if (type == MB_KV_INT)
                m->i[j] = 0;
            else
                m->s[j] = xstrdup("");
        }
        m->n = want;
    }
    m->version++;
    return m;
}

void mb_metric_at_str(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      const char *val)
{
    char *copy = xstrdup(val);
    struct mb_metric *m = series_at(r, case_name, name, MB_KV_STR, index);
    free(m->s[index]);
    m->s[index] = copy;
}

void mb_metric_at_int(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      long long val)
{
    series_at(r, case_name, name, MB_KV_INT, index)->i[index] = val;
}

void mb_metric_at_dbl(struct mb_result *r, const char *case_name, const char *name, size_t index,
                      double val)
{
    series_at(r, case_name, name, MB_KV_DBL, index)->d[index] = val;
}

void mb_metric_case_str(struct mb_result *r, const char *case_name, const char *name, const char *val)
{
    mb_metric_at_str(r, case_name, name, 0, val);
}

void mb_metric_case_int(struct mb_result *r, const char *case_name, const char *name, long long val)
{
    mb_metric_at_int(r, case_name, name, 0, val);
}

void mb_metric_case_dbl(struct mb_result *r, const char *case_name, const char *name, double val)
{
    mb_metric_at_dbl(r, case_name, name, 0, val);
}

double mb_metric_value(const struct mb_result *r, const char *case_name, const char *name, size_t index)
{
    const struct mb_metric *m = mb_metric_find(r, case_name, name);
    if (!m || index >= m->n)
        return NAN;
    return m->type == MB_KV_DBL ? m->d[index] : m->type == MB_KV_INT ? (double)m->i[index] : NAN;
}

void mb_metric_free_all(struct mb_result *r)
{
    mb_kv_free(&r->metrics);
    for (size_t k = 0; k < r->nseries; k++) {
        struct mb_metric *m = &r->series[k];
        if (m->s)
            for (size_t j = 0; j < m->n; j++)
                free(m->s[j]);
        free(m->s);
        free(m->d);
        free(m->i);
        free(m->case_name);
        free(m->name);
    }
    free(r->series);
    r->series = NULL;
    r->nseries = r->series_cap = 0;
}
