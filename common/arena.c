/* Capped bump arena over one region (see common.h): an overrun is an error
 * naming the tier and the bytes, so a program reports which budget was too
 * small instead of silently growing past it. */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_arena {
    char name[32];
    char *base;
    size_t cap, used, peak;
    int owned;
    pthread_mutex_t mu;
    char error[160];
};

struct mb_arena *mb_arena_new(const char *name, size_t bytes, void *mem, char *err, size_t errlen)
{
    struct mb_arena *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "%s: out of memory for the arena", name);
        return NULL;
    }
    snprintf(a->name, sizeof(a->name), "%s", name);
    a->cap = bytes;
    a->base = mem;
    if (!mem && bytes) {
        void *p = NULL;
        if (posix_memalign(&p, MB_ALIGN, bytes) != 0) {
            snprintf(err, errlen, "%s: cannot allocate the arena's %zu bytes", name, bytes);
            free(a);
            return NULL;
        }
        a->base = p;
        a->owned = 1;
    }
    pthread_mutex_init(&a->mu, NULL);
    return a;
}

void *mb_arena_alloc(struct mb_arena *a, size_t bytes, size_t align, char *err, size_t errlen)
{
    if (align == 0)
        align = 64;
    if (align & (align - 1)) {
        if (err)
            snprintf(err, errlen, "%s: alignment %zu is not a power of two", a->name, align);
        return NULL;
    }
    pthread_mutex_lock(&a->mu);
    /* align the address, not the offset: a caller's region may be unaligned */
    uintptr_t at = (uintptr_t)a->base + a->used;
    size_t pad = (size_t)(-at & (align - 1));
    size_t free_bytes = a->cap - a->used;
    void *p = NULL;
    if (pad <= free_bytes && bytes <= free_bytes - pad) {
        p = a->base + a->used + pad;
        a->used += pad + bytes;
        if (a->used > a->peak)
            a->peak = a->used;
    } else {
        snprintf(a->error, sizeof(a->error), "%s: arena overrun: asked %zu bytes, %zu free of %zu", a->name,
                 bytes, free_bytes, a->cap);
        if (err)
            snprintf(err, errlen, "%s", a->error);
    }
    pthread_mutex_unlock(&a->mu);
    return p;
}

size_t mb_arena_mark(struct mb_arena *a)
{
    pthread_mutex_lock(&a->mu);
    size_t m = a->used;
    pthread_mutex_unlock(&a->mu);
    return m;
}

void mb_arena_release(struct mb_arena *a, size_t mark)
{
    pthread_mutex_lock(&a->mu);
    if (mark < a->used)
        a->used = mark;
    pthread_mutex_unlock(&a->mu);
}

void mb_arena_reset(struct mb_arena *a) { mb_arena_release(a, 0); }

size_t mb_arena_used(struct mb_arena *a) { return mb_arena_mark(a); }

size_t mb_arena_free_bytes(struct mb_arena *a) { return a->cap - mb_arena_mark(a); }

size_t mb_arena_peak(struct mb_arena *a)
{
    pthread_mutex_lock(&a->mu);
    size_t p = a->peak;
    pthread_mutex_unlock(&a->mu);
    return p;
}

size_t mb_arena_capacity(const struct mb_arena *a) { return a->cap; }

const char *mb_arena_name(const struct mb_arena *a) { return a->name; }

const char *mb_arena_error(struct mb_arena *a) { return a->error; }

void mb_arena_free(struct mb_arena *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->mu);
    if (a->owned)
        free(a->base);
    free(a);
}
