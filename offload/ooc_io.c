/* The out-of-core apps' I/O path in each mode (see ooc_io.h). */
#include "ooc_io.h"
#include "storage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *ooc_malloc(size_t bytes) { return storage_inject_nomem() ? NULL : malloc(bytes ? bytes : 1); }

void *ooc_calloc(size_t n, size_t size) { return storage_inject_nomem() ? NULL : calloc(n ? n : 1, size ? size : 1); }

void *ooc_memalign(size_t align, size_t bytes)
{
    void *p = NULL;
    if (storage_inject_nomem() || posix_memalign(&p, align, bytes ? bytes : align) != 0)
        return NULL;
    return p;
}

int ooc_nomem(char *err, size_t errlen, const char *what, size_t bytes)
{
    snprintf(err, errlen, "%s: out of memory (%zu bytes)", what, bytes);
    return -1;
}

int ooc_fail(char *err, size_t errlen, const char *what, int status, uint64_t off)
{
    snprintf(err, errlen, "%s: %s at volume offset %llu", what,
             status == -ENODATA ? "short file (no data)" : strerror(-status), (unsigned long long)off);
    return -1;
}

int ooc_rw_now(struct ooc_io *io, int op, uint64_t off, size_t len, void *buf)
{
    return mb_storage_rw_now(&io->st, op, off, len, buf);
}

/* The storage mode each app mode runs on (io: the I/O of async alone). */
static const char *const storage_of[] = {
    [MB_OOC_POSIX] = "posix", [MB_OOC_SYNC] = "sync", [MB_OOC_ASYNC] = "async",
    [MB_OOC_COMPUTE] = "memory", [MB_OOC_IO] = "async",
};

int ooc_io_open(struct ooc_io *io, const struct mb_ooc_params *p, enum mb_ooc_mode m, size_t arena,
                uint64_t memsize, uint64_t load, int create, char *err, size_t errlen)
{
    memset(io, 0, sizeof(*io));
    io->mode = m;
    if (p->nfiles < 1 || p->nfiles > OOC_MAX_FILES) {
        snprintf(err, errlen, "--files: %d, accepts 1 to %d", p->nfiles, OOC_MAX_FILES);
        return -1;
    }
    for (int d = 0; d < p->nfiles && create; d++) { /* prepare: every file at its size */
        /* never through a link, never into a device or a fifo (root) */
        int fd = open(p->paths[d], O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "--dir: %s: not a regular file", p->paths[d]);
            close(fd);
            return -1;
        }
        if (fd < 0 || ftruncate(fd, (off_t)mb_ooc_file_bytes(p)) != 0) {
            snprintf(err, errlen, "--dir: %s: %s", p->paths[d],
                     errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    struct mb_storage_params sp = {
        .paths = p->paths, .nfiles = p->nfiles, .stripe = p->stripe, .writable = 1, .buffered = p->buffered,
        .engine = {.nthreads = p->io_threads, .arena = arena + (1 << 20)},
        .image_bytes = memsize, .image_load = load};
    char why[512];
    if (mb_storage_open(&io->st, mb_storage_find(storage_of[m]), &sp, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s%s", m == MB_OOC_COMPUTE ? "compute mode: " : "--dir: ", why);
        return -1;
    }
    io->eng = io->st.eng;
    io->mem = io->st.image;
    io->memsize = io->st.image_bytes;
    return 0;
}

void ooc_io_close(struct ooc_io *io)
{
    mb_storage_close(&io->st);
    memset(io, 0, sizeof(*io));
}

void *ooc_alloc(struct ooc_io *io, size_t bytes)
{
    void *p = storage_inject_nomem() ? NULL : mb_storage_alloc(&io->st, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void ooc_free(struct ooc_io *io, void *p) { mb_storage_free(&io->st, p); }

static void count(struct ooc_io *io, const struct ooc_op *op)
{
    for (size_t i = 0; i < op->n; i++) {
        if (op->reqs[i].op == MB_AIO_WRITE)
            io->wbytes += op->reqs[i].len;
        else
            io->rbytes += op->reqs[i].len;
    }
    io->requests += op->n;
}

static int first_status(const struct ooc_op *op)
{
    for (size_t i = 0; i < op->n; i++)
        if (op->reqs[i].status)
            return op->reqs[i].status;
    return -EIO;
}

int ooc_start(struct ooc_io *io, struct ooc_op *op)
{
    op->pending = 0;
    op->err = 0;
    count(io, op);
    int rc = io->st.ops->submit(&io->st, op->reqs, op->n, &op->t);
    if (rc)
        return op->err = rc;
    op->pending = 1;
    return io->st.ops->flags & MB_STORAGE_BLOCKING ? ooc_finish(io, op) : 0;
}

int ooc_finish(struct ooc_io *io, struct ooc_op *op)
{
    if (op->pending) {
        op->pending = 0;
        if (io->st.ops->wait(&io->st, &op->t) > 0)
            op->err = first_status(op);
    }
    return op->err;
}

int ooc_write_one(struct ooc_io *io, uint64_t off, size_t len, void *buf, const char *what, char *err,
                  size_t errlen)
{
    struct mb_aio_req r = {off, len, buf, MB_AIO_WRITE, 0};
    struct ooc_op op = {.reqs = &r, .n = 1};
    if (ooc_start(io, &op) != 0 || ooc_finish(io, &op) != 0)
        return ooc_op_fail(err, errlen, what, &op);
    return 0;
}

int ooc_op_fail(char *err, size_t errlen, const char *what, const struct ooc_op *op)
{
    for (size_t i = 0; i < op->n; i++)
        if (op->reqs[i].status)
            return ooc_fail(err, errlen, what, op->reqs[i].status, op->reqs[i].offset);
    return ooc_fail(err, errlen, what, op->err ? op->err : -EIO, op->n ? op->reqs[0].offset : 0);
}
