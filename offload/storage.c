/* The storage-mode registry and what every mode shares: opening the
 * volume's files, memory for requests, synchronous access that bypasses
 * the mode. A new mode is a file storage_<name>.c and a row below. */
#include "storage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One row a mode: MODE(name) names mb_storage_<name>, the ops struct of
 * storage_<name>.c; the order is the order programs list them in. */
#define STORAGE_MODES \
    MODE(posix)       \
    MODE(bounce)      \
    MODE(inline)      \
    MODE(mmap)        \
    MODE(sync)        \
    MODE(async)       \
    MODE(memory)

#define MODE(name) extern const struct mb_storage_ops mb_storage_##name;
STORAGE_MODES
#undef MODE
#define MODE(name) &mb_storage_##name,
const struct mb_storage_ops *const mb_storage_modes[] = {STORAGE_MODES NULL};
#undef MODE

const struct mb_storage_ops *mb_storage_find(const char *name)
{
    for (size_t i = 0; mb_storage_modes[i]; i++)
        if (strcmp(mb_storage_modes[i]->name, name) == 0)
            return mb_storage_modes[i];
    return NULL;
}

int storage_inject_nomem(void)
{
    static long long count, fail_at = -1;
    if (fail_at < 0) {
        const char *inj = getenv("MB_AIO_INJECT");
        fail_at = inj && strncmp(inj, "nomem:", 6) == 0 ? atoll(inj + 6) : 0;
    }
    return fail_at > 0 && ++count == fail_at;
}

int mb_storage_open(struct mb_storage *s, const struct mb_storage_ops *ops, const struct mb_storage_params *p,
                    char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->ops = ops;
    s->p = *p;
    for (int d = 0; d < MB_STORAGE_MAX_FILES; d++)
        s->fd[d] = -1;
    if (p->nfiles < 1 || p->nfiles > MB_STORAGE_MAX_FILES) {
        snprintf(err, errlen, "%d files: accepts 1 to %d", p->nfiles, MB_STORAGE_MAX_FILES);
        return -1;
    }
    int want_direct = !p->buffered && !(ops->flags & MB_STORAGE_NO_DIRECT), bad;
    s->direct = want_direct;
    if (mb_aio_open_volume(p->paths, p->nfiles, p->writable ? O_RDWR : O_RDONLY, &s->direct, s->fd, &bad) != 0) {
        snprintf(err, errlen, "%s: %s", p->paths[bad], strerror(errno));
        return -1;
    }
    s->fallback = s->direct || !want_direct ? "none" : "O_DIRECT refused by the file system: buffered I/O";
    if (ops->open && ops->open(s, err, errlen) != 0) {
        mb_storage_close(s);
        return -1;
    }
    return 0;
}

void mb_storage_close(struct mb_storage *s)
{
    if (!s->ops)
        return;
    if (s->ops->close)
        s->ops->close(s);
    for (int d = 0; d < s->p.nfiles && d < MB_STORAGE_MAX_FILES; d++)
        if (s->fd[d] >= 0)
            close(s->fd[d]);
    memset(s, 0, sizeof(*s));
}

void *mb_storage_alloc(struct mb_storage *s, size_t bytes)
{
    void *p = NULL;
    if (s->eng)
        return mb_aio_alloc(s->eng, bytes);
    if (posix_memalign(&p, 4096, bytes ? (bytes + 4095) & ~(size_t)4095 : 4096) != 0)
        return NULL;
    return p;
}

void mb_storage_free(struct mb_storage *s, void *p)
{
    if (s->eng)
        mb_aio_free(s->eng, p);
    else
        free(p);
}

int mb_storage_rw_now(struct mb_storage *s, int op, uint64_t off, size_t len, void *buf)
{
    if (s->ops->flags & MB_STORAGE_IMAGE) {
        struct mb_aio_req r = {off, len, buf, op, 0};
        struct mb_storage_ticket t;
        s->ops->submit(s, &r, 1, &t);
        return r.status;
    }
    return mb_aio_volume_rw(s->fd, s->p.nfiles, s->p.stripe, op, off, len, buf);
}

int storage_each(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t)
{
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++)
        failed = (reqs[i].status = s->ops->rw(s, &reqs[i])) != 0;
    if (t)
        *t = (struct mb_storage_ticket){.reqs = reqs, .n = n, .failed = failed};
    return 0;
}

int storage_blocking_wait(struct mb_storage *s, struct mb_storage_ticket *t)
{
    (void)s;
    return t->failed;
}

size_t mb_storage_paths(const struct mb_storage_ops **out, size_t max, char *choices, size_t len,
                        const char *extra)
{
    size_t n = 0, used = 0;
    if (choices && len)
        choices[0] = 0;
    for (size_t i = 0; mb_storage_modes[i] && n < max; i++) {
        if (mb_storage_modes[i]->flags & MB_STORAGE_IMAGE)
            continue;
        out[n] = mb_storage_modes[i];
        if (choices && used < len)
            used += (size_t)snprintf(choices + used, len - used, "%s%s", n ? "|" : "", out[n]->name);
        n++;
    }
    if (choices && extra && used < len)
        snprintf(choices + used, len - used, "%s%s", n ? "|" : "", extra);
    return n;
}
