/* The out-of-core apps' I/O path in each mode (see ooc_io.h). */
#include "ooc_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* MB_AIO_INJECT=nomem:N: the N-th allocation (1-based) fails. */
static int nomem_now(void)
{
    static long long count, fail_at = -1;
    if (fail_at < 0) {
        const char *inj = getenv("MB_AIO_INJECT");
        fail_at = inj && strncmp(inj, "nomem:", 6) == 0 ? atoll(inj + 6) : 0;
    }
    return fail_at > 0 && ++count == fail_at;
}

void *ooc_malloc(size_t bytes) { return nomem_now() ? NULL : malloc(bytes ? bytes : 1); }

void *ooc_calloc(size_t n, size_t size) { return nomem_now() ? NULL : calloc(n ? n : 1, size ? size : 1); }

void *ooc_memalign(size_t align, size_t bytes)
{
    void *p = NULL;
    if (nomem_now() || posix_memalign(&p, align, bytes ? bytes : align) != 0)
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

/* pread/pwrite through the stripe map, in the caller. */
static int posix_rw(struct ooc_io *io, int op, uint64_t off, size_t len, char *buf)
{
    return mb_aio_volume_rw(io->fd, io->ndev, io->stripe, op, off, len, buf);
}

static int mem_rw(struct ooc_io *io, int op, uint64_t off, size_t len, char *buf)
{
    if (off + len > io->memsize)
        return -ENODATA;
    if (op == MB_AIO_WRITE)
        memcpy(io->mem + off, buf, len);
    else
        memcpy(buf, io->mem + off, len);
    return 0;
}

int ooc_rw_now(struct ooc_io *io, int op, uint64_t off, size_t len, void *buf)
{
    return io->mode == MB_OOC_COMPUTE ? mem_rw(io, op, off, len, buf) : posix_rw(io, op, off, len, buf);
}

int ooc_io_open(struct ooc_io *io, const struct mb_ooc_params *p, enum mb_ooc_mode m, size_t arena,
                uint64_t memsize, uint64_t load, int create, char *err, size_t errlen)
{
    memset(io, 0, sizeof(*io));
    io->mode = m;
    io->ndev = p->nfiles;
    io->stripe = p->stripe;
    for (int d = 0; d < OOC_MAX_FILES; d++)
        io->fd[d] = -1;
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
    if (m == MB_OOC_SYNC || m == MB_OOC_ASYNC || m == MB_OOC_IO) {
        struct mb_aio_opts o = {.nthreads = p->io_threads, .stripe = p->stripe, .arena = arena + (1 << 20),
                                .buffered = p->buffered};
        io->eng = mb_aio_open(p->paths, p->nfiles, &o, err, errlen);
        if (!io->eng)
            return -1;
    }
    io->direct = !p->buffered;
    int bad;
    if (mb_aio_open_volume(p->paths, p->nfiles, O_RDWR, &io->direct, io->fd, &bad) != 0) {
        snprintf(err, errlen, "--dir: %s: %s", p->paths[bad], strerror(errno));
        ooc_io_close(io);
        return -1;
    }
    io->fallback = io->direct || p->buffered ? "none" : "O_DIRECT refused by the file system: buffered I/O";
    if (m == MB_OOC_COMPUTE && memsize) {
        io->memsize = (memsize + 4095) & ~(uint64_t)4095;
        if (!(io->mem = ooc_memalign(4096, io->memsize))) {
            snprintf(err, errlen, "compute mode: no memory for a %llu-byte image of the data",
                     (unsigned long long)io->memsize);
            io->mem = NULL;
            ooc_io_close(io);
            return -1;
        }
        memset(io->mem, 0, io->memsize);
        for (uint64_t off = 0; off < load; off += 1 << 20) {
            size_t n = load - off < (1 << 20) ? (size_t)(load - off) : (size_t)1 << 20;
            int rc = posix_rw(io, MB_AIO_READ, off, n, io->mem + off);
            if (rc) {
                ooc_fail(err, errlen, "loading the data into memory", rc, off);
                ooc_io_close(io);
                return -1;
            }
        }
    }
    return 0;
}

void ooc_io_close(struct ooc_io *io)
{
    if (io->eng)
        mb_aio_close(io->eng);
    for (int d = 0; d < io->ndev; d++)
        if (io->fd[d] >= 0)
            close(io->fd[d]);
    free(io->mem);
    memset(io, 0, sizeof(*io));
}

void *ooc_alloc(struct ooc_io *io, size_t bytes)
{
    void *p = NULL;
    if (nomem_now())
        return NULL;
    if (io->eng)
        p = mb_aio_alloc(io->eng, bytes);
    else if (posix_memalign(&p, 4096, bytes ? (bytes + 4095) & ~(size_t)4095 : 4096) != 0)
        p = NULL;
    if (p)
        memset(p, 0, bytes);
    return p;
}

void ooc_free(struct ooc_io *io, void *p)
{
    if (io->eng)
        mb_aio_free(io->eng, p);
    else
        free(p);
}

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
    switch (io->mode) {
    case MB_OOC_SYNC:
    case MB_OOC_ASYNC:
    case MB_OOC_IO: {
        int rc = mb_aio_submit(io->eng, op->reqs, op->n, &op->t);
        if (rc)
            return op->err = rc;
        op->pending = 1;
        return io->mode == MB_OOC_SYNC ? ooc_finish(io, op) : 0;
    }
    case MB_OOC_POSIX:
    case MB_OOC_COMPUTE:
        for (size_t i = 0; i < op->n && !op->err; i++) {
            struct mb_aio_req *r = &op->reqs[i];
            r->status = ooc_rw_now(io, r->op, r->offset, r->len, r->buf);
            op->err = r->status;
        }
        return op->err;
    }
    return -EINVAL;
}

int ooc_finish(struct ooc_io *io, struct ooc_op *op)
{
    (void)io;
    if (op->pending) {
        op->pending = 0;
        if (mb_aio_wait(op->t) > 0)
            op->err = first_status(op);
    }
    return op->err;
}

int ooc_op_fail(char *err, size_t errlen, const char *what, const struct ooc_op *op)
{
    for (size_t i = 0; i < op->n; i++)
        if (op->reqs[i].status)
            return ooc_fail(err, errlen, what, op->reqs[i].status, op->reqs[i].offset);
    return ooc_fail(err, errlen, what, op->err ? op->err : -EIO, op->n ? op->reqs[0].offset : 0);
}
