/* Prepared data files of a striped pattern volume (mb-aio's): each file
 * holds its share of the volume's pattern, then a one-block trailer naming
 * the layout, the seed and the state. A file is reused only when its
 * trailer says "complete" for this very layout and a random sample of its
 * blocks carries the pattern; a preparation or a write run cut short
 * leaves the state "writing", so the next run writes the file again
 * instead of blaming the read path for damaged data. */
#include "aio.h"
#include "../common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRAILER_MAGIC "movebench-aio-volume"
#define TRAILER_VERSION 1

struct trailer {
    char magic[24];
    uint32_t version, state;
    uint64_t seed, file_size, stripe;
    uint32_t nfiles, index;
};

static void trailer_make(const struct mb_aio_volume *v, int f, int state, struct trailer *t)
{
    memset(t, 0, sizeof(*t));
    memcpy(t->magic, TRAILER_MAGIC, sizeof(TRAILER_MAGIC));
    t->version = TRAILER_VERSION;
    t->state = (uint32_t)state;
    t->seed = v->seed;
    t->file_size = v->file_size;
    t->stripe = v->stripe;
    t->nfiles = (uint32_t)v->nfiles;
    t->index = (uint32_t)f;
}

/* 1: t is a trailer of ours (any layout), 0: it is not */
static int trailer_ours(const struct trailer *t)
{
    return memcmp(t->magic, TRAILER_MAGIC, sizeof(TRAILER_MAGIC)) == 0;
}

static const char *state_name(uint32_t s)
{
    return s == MB_AIO_VOLUME_COMPLETE ? "complete" : s == MB_AIO_VOLUME_WRITING ? "writing" : "unknown";
}

/* the volume's logical offset of file f's device offset devoff */
static uint64_t logical_of(const struct mb_aio_volume *v, int f, uint64_t devoff)
{
    uint64_t unit = devoff / v->stripe;
    return (unit * (uint64_t)v->nfiles + (uint64_t)f) * v->stripe + devoff % v->stripe;
}

int mb_aio_volume_check(const struct mb_aio_volume *v, size_t nsample, uint64_t sample_seed, char *why,
                        size_t len)
{
    uint64_t x = sample_seed;
    for (int f = 0; f < v->nfiles; f++) {
        const char *p = v->paths[f];
        int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            snprintf(why, len, "%s: %s", p, strerror(errno));
            return 0;
        }
        struct stat st;
        struct trailer t;
        int ok = 0;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            snprintf(why, len, "%s: not a regular file", p);
        else if ((uint64_t)st.st_size != v->file_size + MB_AIO_VOLUME_TRAILER)
            snprintf(why, len, "%s: %lld bytes, not %llu of data and the trailer", p, (long long)st.st_size,
                     (unsigned long long)v->file_size);
        else if (pread(fd, &t, sizeof(t), (off_t)v->file_size) != (ssize_t)sizeof(t) || !trailer_ours(&t))
            snprintf(why, len, "%s: no movebench trailer", p);
        else if (t.state != MB_AIO_VOLUME_COMPLETE)
            snprintf(why, len, "%s: trailer state '%s' (a preparation or write run did not finish verified)", p,
                     state_name(t.state));
        else if (t.version != TRAILER_VERSION || t.seed != v->seed || t.file_size != v->file_size ||
                 t.stripe != v->stripe || t.nfiles != (uint32_t)v->nfiles || t.index != (uint32_t)f)
            snprintf(why, len, "%s: prepared for another layout or seed", p);
        else
            ok = 1;
        /* random 512-byte blocks: damage spread over the file is noticed */
        uint64_t nblk = v->file_size / 512;
        char blk[512];
        for (size_t i = 0; ok && i < nsample && i < nblk; i++) {
            uint64_t devoff = mb_splitmix64(&x) % nblk * 512;
            if (pread(fd, blk, 512, (off_t)devoff) != 512) {
                snprintf(why, len, "%s: reading block at %llu: %s", p, (unsigned long long)devoff, strerror(errno));
                ok = 0;
            } else if (mb_aio_pattern_check(blk, logical_of(v, f, devoff), 512, v->seed) != 512) {
                snprintf(why, len, "%s: block at byte %llu does not hold the pattern (damaged)", p,
                         (unsigned long long)devoff);
                ok = 0;
            }
        }
        close(fd);
        if (!ok)
            return 0;
    }
    return 1;
}

/* Whether the open file fd may be (over)written as a data file: a regular
 * file that is empty or ends in our trailer. */
static int file_ours(int fd)
{
    struct stat st;
    struct trailer t;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           (st.st_size == 0 ||
            (st.st_size >= (off_t)MB_AIO_VOLUME_TRAILER &&
             pread(fd, &t, sizeof(t), st.st_size - MB_AIO_VOLUME_TRAILER) == (ssize_t)sizeof(t) &&
             trailer_ours(&t)));
}

int mb_aio_volume_owned(const struct mb_aio_volume *v, char *why, size_t len)
{
    for (int f = 0; f < v->nfiles; f++) {
        int fd = open(v->paths[f], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            continue;
        if (fd < 0) {
            snprintf(why, len, "%s: %s", v->paths[f], errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
            return 0;
        }
        int ours = file_ours(fd);
        close(fd);
        if (!ours) {
            snprintf(why, len, "%s: exists and is not a movebench data file (remove it, or choose another folder)",
                     v->paths[f]);
            return 0;
        }
    }
    return 1;
}

/* Opens file f for writing: created exclusively when absent; an existing
 * one is written only when it is ours (file_ours), never through a link. */
static int open_ours(const struct mb_aio_volume *v, int f, char *err, size_t len)
{
    const char *p = v->paths[f];
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) {
        if (fd < 0)
            snprintf(err, len, "%s: %s", p, strerror(errno));
        return fd;
    }
    fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, len, "%s: %s", p, errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
        return -1;
    }
    if (!file_ours(fd)) {
        snprintf(err, len, "%s: exists and is not a movebench data file (remove it, or choose another folder)", p);
        close(fd);
        return -1;
    }
    return fd;
}

static int write_trailer(const struct mb_aio_volume *v, int f, int fd, int state, char *err, size_t len)
{
    char blk[MB_AIO_VOLUME_TRAILER];
    struct trailer t;
    memset(blk, 0, sizeof(blk));
    trailer_make(v, f, state, &t);
    memcpy(blk, &t, sizeof(t));
    if (pwrite(fd, blk, sizeof(blk), (off_t)v->file_size) != (ssize_t)sizeof(blk) || fsync(fd) != 0) {
        snprintf(err, len, "%s: writing the trailer: %s", v->paths[f], strerror(errno));
        return -1;
    }
    return 0;
}

int mb_aio_volume_prepare(const struct mb_aio_volume *v, char *err, size_t len)
{
    size_t chunk = 1 << 20;
    if (chunk > v->file_size)
        chunk = v->file_size;
    char *b = malloc(chunk);
    if (!b) {
        snprintf(err, len, "preparing the data files: out of memory (%zu bytes)", chunk);
        return -1;
    }
    int rc = 0;
    for (int f = 0; f < v->nfiles && rc == 0; f++) {
        int fd = open_ours(v, f, err, len);
        if (fd < 0) {
            rc = -1;
            break;
        }
        /* "writing" first: a preparation cut short is never taken for complete */
        if (ftruncate(fd, (off_t)(v->file_size + MB_AIO_VOLUME_TRAILER)) != 0) {
            snprintf(err, len, "%s: %s", v->paths[f], strerror(errno));
            rc = -1;
        } else {
            rc = write_trailer(v, f, fd, MB_AIO_VOLUME_WRITING, err, len);
        }
        for (uint64_t o = 0; rc == 0 && o < v->file_size; o += chunk) {
            size_t n = v->file_size - o < chunk ? (size_t)(v->file_size - o) : chunk;
            for (size_t k = 0; k < n;) { /* one stripe unit's piece at a time */
                size_t room = v->stripe - (size_t)((o + k) % v->stripe);
                size_t m = room < n - k ? room : n - k;
                mb_aio_pattern_fill(b + k, logical_of(v, f, o + k), m, v->seed);
                k += m;
            }
            ssize_t w = pwrite(fd, b, n, (off_t)o);
            if (w != (ssize_t)n) {
                snprintf(err, len, "%s: writing: %s", v->paths[f], w < 0 ? strerror(errno) : "short write");
                rc = -1;
            }
        }
        if (rc == 0 && fsync(fd) != 0) {
            snprintf(err, len, "%s: fsync: %s", v->paths[f], strerror(errno));
            rc = -1;
        }
        if (rc == 0)
            rc = write_trailer(v, f, fd, MB_AIO_VOLUME_COMPLETE, err, len);
        close(fd);
    }
    free(b);
    return rc;
}

int mb_aio_volume_mark(const struct mb_aio_volume *v, int state, char *err, size_t len)
{
    for (int f = 0; f < v->nfiles; f++) {
        int fd = open(v->paths[f], O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            snprintf(err, len, "%s: %s", v->paths[f], strerror(errno));
            return -1;
        }
        int rc = write_trailer(v, f, fd, state, err, len);
        close(fd);
        if (rc != 0)
            return -1;
    }
    return 0;
}
