/* Ordered key/value lists for /config, provenance and /environment.
 * Insertion order is kept (the result file preserves it); lists are short,
 * so lookup is a linear scan. Out of memory is fatal, as elsewhere in the
 * harness, so callers need not check every set. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        mb_die(1, "out of memory");
    return p;
}

/* The entry for key, created (typed MB_KV_INT, 0) when absent; an existing
 * entry's old string is released so the caller can set any type. */
static struct mb_kv *slot(struct mb_kvlist *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            free(l->v[i].s);
            l->v[i].s = NULL;
            l->v[i].i = 0;
            l->v[i].d = 0;
            return &l->v[i];
        }
    }
    if (mb_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
        mb_die(1, "out of memory: the result's attributes");
    struct mb_kv *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    e->key = xstrdup(key);
    return e;
}

void mb_kv_str(struct mb_kvlist *l, const char *key, const char *val)
{
    char *copy = xstrdup(val); /* before slot(): val may alias the old value */
    struct mb_kv *e = slot(l, key);
    e->type = MB_KV_STR;
    e->s = copy;
}

void mb_kv_int(struct mb_kvlist *l, const char *key, long long val)
{
    struct mb_kv *e = slot(l, key);
    e->type = MB_KV_INT;
    e->i = val;
}

void mb_kv_dbl(struct mb_kvlist *l, const char *key, double val)
{
    struct mb_kv *e = slot(l, key);
    e->type = MB_KV_DBL;
    e->d = val;
}

const struct mb_kv *mb_kv_get(const struct mb_kvlist *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].key, key) == 0)
            return &l->v[i];
    return NULL;
}

void mb_kv_free(struct mb_kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].s);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
