/* The out-of-core apps' public entry points: dispatch to the app, prepare
 * the files, inject a corrupted byte. */
#include "ooc_io.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const mb_ooc_app_names[] = {"gemm", "sort", "gather"};
const char *const mb_ooc_mode_names[] = {"posix", "sync", "async", "compute", "io"};

struct mb_ooc {
    const struct ooc_app *app;
    struct ooc_io io;
    void *st;
};

static const struct ooc_app *app_of(const struct mb_ooc_params *p)
{
    switch (p->app) {
    case MB_OOC_GEMM: return &ooc_gemm_app;
    case MB_OOC_SORT: return &ooc_sort_app;
    case MB_OOC_GATHER: return &ooc_gather_app;
    }
    return NULL;
}

int mb_ooc_validate(const struct mb_ooc_params *p, char *err, size_t errlen)
{
    const struct ooc_app *a = app_of(p);
    if (!a) {
        snprintf(err, errlen, "--app: unknown application %d", (int)p->app);
        return -1;
    }
    if (p->stripe == 0 || p->stripe % 4096) {
        snprintf(err, errlen, "--stripe: must be a multiple of 4096");
        return -1;
    }
    /* the files are rewritten by prepare: never through a link, never a
     * device or a fifo (root) */
    for (int d = 0; d < p->nfiles && d < OOC_MAX_FILES; d++) {
        struct stat st;
        if (lstat(p->paths[d], &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "--dir: %s: %s, refused", p->paths[d],
                     S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
            return -1;
        }
    }
    return a->validate(p, err, errlen);
}

uint64_t mb_ooc_io_bytes(const struct mb_ooc_params *p) { return app_of(p)->io_bytes(p); }

uint64_t mb_ooc_file_bytes(const struct mb_ooc_params *p)
{
    uint64_t vol = app_of(p)->volume_bytes(p), unit = (uint64_t)p->stripe * (uint64_t)p->nfiles;
    return (vol + unit - 1) / unit * p->stripe;
}

int mb_ooc_prepare(const struct mb_ooc_params *p, int corrupt, char *err, size_t errlen)
{
    const struct ooc_app *a = app_of(p);
    struct ooc_io io;
    /* plain pwrite, not the engine: its injected faults are for the runs */
    if (ooc_io_open(&io, p, MB_OOC_POSIX, 0, 0, 0, 1, err, errlen) != 0)
        return -1;
    int rc = a->prepare(p, &io, err, errlen);
    if (rc == 0 && corrupt) {
        /* a bit of the input flipped on storage (a high bit: it changes the
         * value a lot whatever it holds) */
        uint64_t off = a->corrupt_offset(p) & ~(uint64_t)4095;
        size_t in = (size_t)(a->corrupt_offset(p) - off);
        unsigned char *blk = ooc_alloc(&io, 4096);
        int s = blk ? ooc_rw_now(&io, MB_AIO_READ, off, 4096, blk) : 0;
        if (!blk)
            rc = ooc_nomem(err, errlen, "injecting a corrupted byte", 4096);
        else if (!s) {
            blk[in] ^= 0x40;
            s = ooc_rw_now(&io, MB_AIO_WRITE, off, 4096, blk);
        }
        if (s)
            rc = ooc_fail(err, errlen, "injecting a corrupted byte", s, off);
        ooc_free(&io, blk);
    }
    for (int d = 0; d < p->nfiles && rc == 0; d++)
        if (fsync(io.st.fd[d]) != 0) {
            snprintf(err, errlen, "--dir: %s: fsync: %s", p->paths[d], strerror(errno));
            rc = -1;
        }
    /* one read of everything, so that the first case measured does not pay
     * for the storage still settling the writes (a VM's host cache) */
    uint64_t vol = a->volume_bytes(p);
    char *buf = rc == 0 ? ooc_alloc(&io, 1u << 20) : NULL;
    if (rc == 0 && !buf)
        rc = ooc_nomem(err, errlen, "reading the input back", 1u << 20);
    for (uint64_t off = 0; off < vol && rc == 0; off += 1u << 20) {
        size_t n = vol - off < (1u << 20) ? (size_t)(vol - off) : (size_t)1 << 20;
        int s = ooc_rw_now(&io, MB_AIO_READ, off, (n + 4095) & ~(size_t)4095, buf);
        if (s)
            rc = ooc_fail(err, errlen, "reading the input back", s, off);
    }
    ooc_free(&io, buf);
    ooc_io_close(&io);
    return rc;
}

struct mb_ooc *mb_ooc_open(const struct mb_ooc_params *p, enum mb_ooc_mode m, char *err, size_t errlen)
{
    const struct ooc_app *a = app_of(p);
    struct mb_ooc *o = ooc_calloc(1, sizeof(*o));
    if (!o) {
        ooc_nomem(err, errlen, "the app's state", sizeof(*o));
        return NULL;
    }
    o->app = a;
    uint64_t load = 0, image = m == MB_OOC_COMPUTE ? a->image_bytes(p, &load) : 0;
    if (ooc_io_open(&o->io, p, m, a->arena_bytes(p), image, load, 0, err, errlen) != 0) {
        free(o);
        return NULL;
    }
    if (p->blas_threads > 0)
        openblas_set_num_threads(p->blas_threads);
    o->st = a->open(p, &o->io, err, errlen);
    if (!o->st) {
        ooc_io_close(&o->io);
        free(o);
        return NULL;
    }
    return o;
}

int mb_ooc_reset(struct mb_ooc *o, long long iter, char *err, size_t errlen)
{
    return o->app->reset(o->st, &o->io, iter, err, errlen);
}

int mb_ooc_run(struct mb_ooc *o, char *err, size_t errlen) { return o->app->run(o->st, &o->io, err, errlen); }

int mb_ooc_check(struct mb_ooc *o, char *msg, size_t msglen) { return o->app->check(o->st, &o->io, msg, msglen); }

void mb_ooc_stats(const struct mb_ooc *o, struct mb_ooc_stats *s)
{
    memset(s, 0, sizeof(*s));
    o->app->stats(o->st, s);
}

const struct mb_aio *mb_ooc_engine(const struct mb_ooc *o) { return o->io.eng; }

int mb_ooc_direct(const struct mb_ooc *o, const char **fallback)
{
    *fallback = o->io.st.fallback;
    return o->io.st.direct;
}

void mb_ooc_close(struct mb_ooc *o)
{
    if (!o)
        return;
    o->app->close(o->st, &o->io);
    ooc_io_close(&o->io);
    free(o);
}
