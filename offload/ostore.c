/* mb_ostore: named extents on a striped volume of files the store owns, a
 * CRC32C per block checked on every read, a per-file rate cap and the
 * fault hooks (see aio.h). The update orders are in ostore_step.c. */
#include "ostore_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const mb_ostore_order_names[] = {"serial", "naive", "optimized", NULL};
const char *const mb_ostore_field_names[] = {"P32", "m", "v", "P16", NULL};
static const unsigned field_elem_bytes[MB_OSTORE_NFIELDS] = {4, 4, 4, 2};

int mb_ostore_parse_order(const char *s, enum mb_ostore_order *out)
{
    for (int k = 0; mb_ostore_order_names[k]; k++)
        if (strcmp(s, mb_ostore_order_names[k]) == 0) {
            *out = (enum mb_ostore_order)k;
            return 0;
        }
    return -1;
}

struct mb_ostore_io {
    struct mb_ostore *s;
    int op, ext, from_step;
    uint64_t off;
    size_t len, main;           /* main: the whole blocks straight from buf */
    char *buf, *tail;           /* tail: the last partial block, padded */
    struct mb_aio_req req[2];
    int nreq;
    mb_aio_ticket t;
    double t0, until;
};

void ostore_fail(struct mb_ostore *s, const char *msg)
{
    pthread_mutex_lock(&s->mu);
    if (!s->failed) {
        s->failed = 1;
        snprintf(s->failure, sizeof(s->failure), "%s", msg);
    }
    pthread_mutex_unlock(&s->mu);
}

static int bad_opts(const struct mb_ostore_opts *o, char *err, size_t errlen)
{
    if (!o->dir || !o->dir[0])
        return snprintf(err, errlen, "ostore: no folder given"), -1;
    if (o->nfiles < 0 || o->nfiles > MB_STORAGE_MAX_FILES)
        return snprintf(err, errlen, "ostore: %d files: 1..%d", o->nfiles, MB_STORAGE_MAX_FILES), -1;
    if (o->stripe % 4096 || o->block % 4096)
        return snprintf(err, errlen, "ostore: stripe and block must be multiples of 4096"), -1;
    if ((unsigned)o->order > MB_OSTORE_OPTIMIZED)
        return snprintf(err, errlen, "ostore: unknown order %d", (int)o->order), -1;
    if (o->ntensors < 0 || o->nblobs < 0 || (o->ntensors && (!o->tensors || !o->update)) ||
        (o->nblobs && !o->blobs))
        return snprintf(err, errlen, "ostore: tensors need names, sizes and an update"), -1;
    for (int i = 0; i < o->ntensors; i++)
        if (!o->tensors[i].name || !o->tensors[i].n)
            return snprintf(err, errlen, "ostore: tensor %d has no name or no elements", i), -1;
    for (int i = 0; i < o->nblobs; i++)
        if (!o->blobs[i].name || !o->blobs[i].bytes)
            return snprintf(err, errlen, "ostore: blob %d has no name or no bytes", i), -1;
    return 0;
}

static void set_extent(struct mb_ostore *s, int k, const char *a, const char *b, uint64_t bytes, uint64_t *at)
{
    struct ostore_extent *e = &s->ext[k];
    snprintf(e->name, sizeof(e->name), "%s%s%s", a, b ? "." : "", b ? b : "");
    e->off = *at;
    e->bytes = bytes;
    *at += (bytes + s->block - 1) / s->block * s->block;
}

/* MB_FAULT_INJECT: the extent, block and bit from the seed */
static void choose_faults(struct mb_ostore *s)
{
    const char *f = getenv("MB_FAULT_INJECT");
    if (f && strcmp(f, "corrupt-act") == 0 && s->o.nblobs)
        s->fault_blob = 1;
    if (!f || !s->o.ntensors)
        return;
    uint64_t r = mb_mix64(s->o.seed ^ 0x6f73746f7265ull); /* "ostore" */
    int t = (int)(r % (uint64_t)s->o.ntensors);
    if (strcmp(f, "corrupt-state") == 0) {
        struct ostore_extent *e = &s->ext[4 * t + (int)(mb_mix64(r + 1) % 3)]; /* P32, m or v: read back */
        uint64_t nblocks = (e->bytes + s->block - 1) / s->block;
        e->fault_corrupt = 1;
        e->fault_block = mb_mix64(r + 2) % nblocks;
        uint64_t in_block = e->bytes - e->fault_block * s->block < s->block ? e->bytes - e->fault_block * s->block
                                                                             : s->block;
        e->fault_bit = mb_mix64(r + 3) % (in_block * 8);
    } else if (strcmp(f, "write-error") == 0) {
        s->ext[4 * t + (int)(mb_mix64(r + 1) % 4)].fault_write = 1;
    }
}

/* Sizes a store file with its blocks reserved: O_DIRECT writes into a
 * sparse file's holes fell back to buffered ones here (ext4, Linux 6.18),
 * so the initial states cost the kernel's page-cache copy and a writeback
 * that ran on into the first steps. Where the file system cannot
 * preallocate (EOPNOTSUPP) the file stays sparse; a full disk fails here,
 * before any work. */
static int allocate(int fd, uint64_t bytes)
{
    int rc = fallocate(fd, 0, 0, (off_t)bytes);
    if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
        rc = ftruncate(fd, (off_t)bytes);
    return rc;
}

uint64_t mb_ostore_unit_elems(uint64_t max_n, uint64_t chunk, size_t block)
{
    uint64_t align = (block ? block : 64u << 10) / 2;
    uint64_t c = chunk ? (chunk + align - 1) / align * align : max_n;
    return c < max_n ? c : max_n;
}

/* The chunk length of a tensor of n elements: n cut into as few chunks as
 * the chunk size allows, of equal aligned length but the last (so the
 * unit a step runs first, which a read-ahead holds, is not a sliver). */
static uint64_t unit_step(uint64_t n, uint64_t chunk, size_t block)
{
    uint64_t c = mb_ostore_unit_elems(n, chunk, block), align = (block ? block : 64u << 10) / 2;
    if (c >= n)
        return n;
    uint64_t k = (n + c - 1) / c, even = (n + k - 1) / k;
    return (even + align - 1) / align * align;
}

uint64_t mb_ostore_first_unit_elems(uint64_t n, uint64_t chunk, size_t block)
{
    uint64_t step = unit_step(n, chunk, block);
    return n ? n - (n - 1) / step * step : 0;
}

/* The update units (ostore_internal.h): each tensor cut by unit_step. */
static int make_units(struct mb_ostore *s, char *err, size_t errlen)
{
    const struct mb_ostore_opts *o = &s->o;
    uint64_t total = 0;
    for (int i = 0; i < o->ntensors; i++) {
        uint64_t n = o->tensors[i].n, step = unit_step(n, o->chunk, s->block);
        total += (n + step - 1) / step;
    }
    if (total > INT_MAX / 2)
        return snprintf(err, errlen, "ostore: %llu update units: a chunk of %llu elements is too small",
                        (unsigned long long)total, (unsigned long long)o->chunk), -1;
    s->ubase = calloc((size_t)o->ntensors + 1, sizeof(int));
    s->unit_tensor = calloc(total + 1, sizeof(int));
    s->unit_off = calloc(total + 1, sizeof(uint64_t));
    if (!s->ubase || !s->unit_tensor || !s->unit_off)
        return snprintf(err, errlen, "ostore: out of memory"), -1;
    int u = 0;
    for (int i = 0; i < o->ntensors; i++) {
        s->ubase[i] = u;
        uint64_t n = o->tensors[i].n, step = unit_step(n, o->chunk, s->block);
        for (uint64_t off = 0; off < n; off += step, u++) {
            s->unit_tensor[u] = i;
            s->unit_off[u] = off;
            uint64_t len = n - off < step ? n - off : step;
            s->max_unit = len > s->max_unit ? len : s->max_unit;
        }
    }
    s->ubase[o->ntensors] = u;
    return 0;
}

uint64_t mb_ostore_host_bytes(uint64_t max_n, size_t block)
{
    uint64_t b = block ? block : 64u << 10;
    uint64_t set_bytes = max_n * 14 + 4 * b;
    return ((max_n ? OSTORE_SETS * set_bytes : 0) + (4u << 20)) / 4096 * 4096;
}

struct mb_ostore *mb_ostore_open(const struct mb_ostore_opts *o, char *err, size_t errlen)
{
    if (bad_opts(o, err, errlen))
        return NULL;
    struct mb_ostore *s = calloc(1, sizeof(*s));
    if (!s)
        return snprintf(err, errlen, "ostore: out of memory"), NULL;
    s->o = *o;
    s->nfiles = o->nfiles ? o->nfiles : 1;
    s->stripe = o->stripe ? o->stripe : 1u << 20;
    s->block = o->block ? o->block : 64u << 10;
    s->dirfd = -1;
    for (int f = 0; f < MB_STORAGE_MAX_FILES; f++)
        s->fd[f] = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->more, NULL);
    pthread_cond_init(&s->idle, NULL);

    s->next = 4 * o->ntensors + o->nblobs;
    s->ext = calloc((size_t)s->next + 1, sizeof(*s->ext));
    if (!s->ext) {
        snprintf(err, errlen, "ostore: out of memory");
        goto fail;
    }
    uint64_t at = 0;
    for (int i = 0; i < o->ntensors; i++) {
        for (int f = 0; f < MB_OSTORE_NFIELDS; f++)
            set_extent(s, 4 * i + f, o->tensors[i].name, mb_ostore_field_names[f],
                       o->tensors[i].n * field_elem_bytes[f], &at);
    }
    if (make_units(s, err, errlen) != 0)
        goto fail;
    for (int b = 0; b < o->nblobs; b++)
        set_extent(s, 4 * o->ntensors + b, o->blobs[b].name, NULL, o->blobs[b].bytes, &at);
    for (int k = 0; k < s->next; k++) {
        for (int j = 0; j < k; j++)
            if (strcmp(s->ext[j].name, s->ext[k].name) == 0) {
                snprintf(err, errlen, "ostore: extent %s named twice", s->ext[k].name);
                goto fail;
            }
        uint64_t nb = (s->ext[k].bytes + s->block - 1) / s->block;
        s->ext[k].crc = calloc(nb, sizeof(uint32_t));
        s->ext[k].written = calloc(nb, 1);
        if (!s->ext[k].crc || !s->ext[k].written) {
            snprintf(err, errlen, "ostore: out of memory for the CRC tables");
            goto fail;
        }
    }
    choose_faults(s);

    /* the files: ours alone (O_EXCL, never through a link; the names
     * are ostore-PID-SEQ-FILE.dat, SEQ counting the stores this process opened), sized to the layout */
    uint64_t per_file = (at + (uint64_t)s->nfiles - 1) / (uint64_t)s->nfiles;
    per_file = (per_file + s->stripe - 1) / s->stripe * s->stripe;
    if (per_file < s->stripe)
        per_file = s->stripe;
    s->dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dirfd < 0) {
        snprintf(err, errlen, "%s: %s", o->dir, strerror(errno));
        goto fail;
    }
    static _Atomic int stores; /* several stores of one process share a folder */
    int seq = stores++;
    for (int f = 0; f < s->nfiles; f++) {
        char name[64];
        snprintf(name, sizeof(name), "ostore-%ld-%d-%d.dat", (long)getpid(), seq, f);
        size_t plen = strlen(o->dir) + strlen(name) + 2;
        s->path[f] = malloc(plen);
        s->file_name[f] = strdup(name);
        if (!s->path[f] || !s->file_name[f]) {
            snprintf(err, errlen, "ostore: out of memory");
            goto fail;
        }
        snprintf(s->path[f], plen, "%s/%s", o->dir, name);
        s->fd[f] = openat(s->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (s->fd[f] < 0) {
            snprintf(err, errlen, "%s: %s", s->path[f], strerror(errno));
            free(s->file_name[f]); /* not ours: never removed */
            s->file_name[f] = NULL;
            goto fail;
        }
        if (allocate(s->fd[f], per_file) != 0) {
            snprintf(err, errlen, "%s: reserving %llu bytes: %s", s->path[f], (unsigned long long)per_file,
                     strerror(errno));
            goto fail;
        }
        mb_rate_init(&s->rate[f], o->file_gbps * 1e9, (double)s->stripe);
    }
    struct mb_aio_opts ao = {.nthreads = o->io_threads, .stripe = s->stripe, .buffered = o->buffered,
                             .arena = (size_t)mb_ostore_host_bytes(o->ntensors ? s->max_unit : 0, s->block)};
    s->eng = mb_aio_open((const char *const *)s->path, s->nfiles, &ao, err, errlen);
    if (!s->eng)
        goto fail;
    if (ostore_steps_init(s, err, errlen) != 0)
        goto fail;
    return s;
fail:
    mb_ostore_close(s);
    return NULL;
}

int mb_ostore_extent(const struct mb_ostore *s, const char *name)
{
    for (int k = 0; k < s->next; k++)
        if (strcmp(s->ext[k].name, name) == 0)
            return k;
    return -1;
}

int mb_ostore_tensor_extent(const struct mb_ostore *s, int i, enum mb_ostore_field f)
{
    return i >= 0 && i < s->o.ntensors && (unsigned)f < MB_OSTORE_NFIELDS ? 4 * i + (int)f : -1;
}

uint64_t mb_ostore_extent_bytes(const struct mb_ostore *s, int ext)
{
    return ext >= 0 && ext < s->next ? s->ext[ext].bytes : 0;
}

const char *mb_ostore_extent_name(const struct mb_ostore *s, int ext)
{
    return ext >= 0 && ext < s->next ? s->ext[ext].name : "?";
}

/* Reserves the request's bytes on each file's bucket; when they will have passed. */
static double reserve(struct mb_ostore *s, uint64_t off, size_t len)
{
    double until = 0;
    for (uint64_t o = off, end = off + len; o < end;) {
        int dev;
        uint64_t devoff;
        size_t n = mb_aio_map(o, s->stripe, s->nfiles, &dev, &devoff);
        if (n > end - o)
            n = (size_t)(end - o);
        double t = mb_rate_reserve(&s->rate[dev], (double)n);
        if (t > until)
            until = t;
        o += n;
    }
    return until;
}

int mb_ostore_submit(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf,
                     struct mb_ostore_io **iop, char *err, size_t errlen)
{
    return ostore_submit(s, op, ext, off, len, buf, 0, iop, err, errlen);
}

int ostore_submit(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf, int from_step,
                  struct mb_ostore_io **iop, char *err, size_t errlen)
{
    if (ext < 0 || ext >= s->next)
        return snprintf(err, errlen, "ostore: no extent %d", ext), -1;
    struct ostore_extent *e = &s->ext[ext];
    if (off % s->block || off > e->bytes || len > e->bytes - off || (len % s->block && off + len != e->bytes))
        return snprintf(err, errlen, "ostore: %s: [%llu, +%zu) is not whole blocks of %zu within %llu bytes",
                        e->name, (unsigned long long)off, len, s->block, (unsigned long long)e->bytes),
               -1;
    struct mb_ostore_io *io = calloc(1, sizeof(*io));
    if (!io)
        return snprintf(err, errlen, "ostore: out of memory"), -1;
    *io = (struct mb_ostore_io){.s = s, .op = op, .ext = ext, .off = off, .len = len, .buf = buf, .from_step = from_step};
    io->main = len / s->block * s->block;
    if (io->main)
        io->req[io->nreq++] = (struct mb_aio_req){.offset = e->off + off, .len = io->main, .buf = buf, .op = op};
    if (len > io->main) {
        if (posix_memalign((void **)&io->tail, 4096, s->block) != 0) {
            free(io);
            return snprintf(err, errlen, "ostore: out of memory"), -1;
        }
        memset(io->tail, 0, s->block);
        if (op == MB_AIO_WRITE)
            memcpy(io->tail, (char *)buf + io->main, len - io->main);
        io->req[io->nreq++] =
            (struct mb_aio_req){.offset = e->off + off + io->main, .len = s->block, .buf = io->tail, .op = op};
    }
    /* the CRCs of what goes out, valid once the write completes (outside the
     * lock: an extent is not read and written at once) */
    if (op == MB_AIO_WRITE)
        for (uint64_t b = off / s->block, k = 0; k < (len + s->block - 1) / s->block; k++, b++) {
            const char *src = k * s->block < io->main ? (char *)buf + k * s->block : io->tail;
            e->written[b] = 0;
            e->crc[b] = mb_crc32c(0, src, s->block);
        }
    pthread_mutex_lock(&s->mu);
    if (s->o.file_gbps > 0)
        for (int r = 0; r < io->nreq; r++) {
            double t = reserve(s, io->req[r].offset, io->req[r].len);
            if (t > io->until)
                io->until = t;
        }
    pthread_mutex_unlock(&s->mu);
    io->t0 = mb_now();
    if (io->nreq) {
        int rc = mb_aio_submit(s->eng, io->req, (size_t)io->nreq, &io->t);
        if (rc != 0) {
            snprintf(err, errlen, "ostore: %s: submitting at offset %llu: %s", e->name, (unsigned long long)off,
                     strerror(-rc));
            free(io->tail);
            free(io);
            return -1;
        }
    }
    *iop = io;
    return 0;
}

/* The corrupt-state fault: one bit of the chosen block flipped on storage,
 * behind the store's back (buffered descriptors; O_DIRECT reads see it). */
static void corrupt_on_storage(struct mb_ostore *s, struct ostore_extent *e)
{
    char *blk = malloc(s->block);
    uint64_t at = e->off + e->fault_block * s->block;
    if (blk && mb_aio_volume_rw(s->fd, s->nfiles, s->stripe, MB_AIO_READ, at, s->block, blk) == 0) {
        blk[e->fault_bit / 8] ^= (char)(1u << (e->fault_bit % 8));
        if (mb_aio_volume_rw(s->fd, s->nfiles, s->stripe, MB_AIO_WRITE, at, s->block, blk) == 0)
            for (int f = 0; f < s->nfiles; f++)
                fdatasync(s->fd[f]);
    }
    free(blk);
}

static int check_blocks(struct mb_ostore_io *io, char *err, size_t errlen)
{
    struct mb_ostore *s = io->s;
    struct ostore_extent *e = &s->ext[io->ext];
    for (uint64_t b = io->off / s->block, k = 0; k < (io->len + s->block - 1) / s->block; k++, b++) {
        const char *src = k * s->block < io->main ? io->buf + k * s->block : io->tail;
        if (!e->written[b])
            return snprintf(err, errlen, "ostore: %s: the block at offset %llu was read before it was written",
                            e->name, (unsigned long long)(b * s->block)),
                   -1;
        if (mb_crc32c(0, src, s->block) != e->crc[b])
            return snprintf(err, errlen, "ostore: %s: CRC32C mismatch in the block at offset %llu: corrupted on storage",
                            e->name, (unsigned long long)(b * s->block)),
                   -1;
    }
    return 0;
}

int mb_ostore_wait(struct mb_ostore_io *io, char *err, size_t errlen)
{
    struct mb_ostore *s = io->s;
    struct ostore_extent *e = &s->ext[io->ext];
    double t_in = mb_now();
    int failed = io->nreq ? mb_aio_wait(io->t) : 0;
    double t_aio = mb_now();
    mb_rate_pace(io->until);
    double t1 = mb_now();
    /* when the transfer ended, not when the caller came to wait (a
     * read-ahead waited after Adam would count Adam as storage time): the
     * engine's completion if the wait blocked, else before the wait; the
     * capped file's bucket end when later */
    int blocked = t_aio - t_in > 1e-4;
    double end = blocked ? t_aio : s->o.file_gbps > 0 ? io->t0 : t_in;
    if (s->o.file_gbps > 0 && io->until > end)
        end = io->until;
    if (end > t1)
        end = t1;
    int rc = 0;

    pthread_mutex_lock(&s->mu);
    if (io->op == MB_AIO_WRITE && e->fault_write && io->from_step && io->nreq) { /* write-error: once */
        e->fault_write = 0;
        io->req[0].status = -EIO;
        failed++;
    }
    int d = io->op == MB_AIO_WRITE;
    uint64_t *bytes = d ? &s->st.write_bytes : &s->st.read_bytes;
    *bytes += io->len;
    if (d)
        s->st.writes++;
    else
        s->st.reads++;
    double *busy = d ? &s->st.write_busy_s : &s->st.read_busy_s;
    double from = io->t0 > s->busy_until[d] ? io->t0 : s->busy_until[d];
    if (end > from)
        *busy += end - from;
    if (end > s->busy_until[d])
        s->busy_until[d] = end;
    /* either direction in flight: a file's bucket serves both in turn */
    from = io->t0 > s->busy_until[2] ? io->t0 : s->busy_until[2];
    if (end > from)
        s->st.io_busy_s += end - from;
    if (end > s->busy_until[2])
        s->busy_until[2] = end;
    uint64_t b0 = io->off / s->block, nb = (io->len + s->block - 1) / s->block;
    if (failed) {
        for (int r = 0; r < io->nreq; r++)
            if (io->req[r].status) {
                snprintf(err, errlen, "ostore: %s %s at offset %llu: %s", d ? "writing" : "reading", e->name,
                         (unsigned long long)(io->req[r].offset - e->off), strerror(-io->req[r].status));
                break;
            }
        rc = -1;
    } else if (d) {
        memset(e->written + b0, 1, nb);
        if (s->fault_blob && io->ext >= 4 * s->o.ntensors) { /* corrupt-act: this write's blocks */
            uint64_t r = mb_mix64(s->o.seed ^ 0x616374ull ^ (uint64_t)io->ext); /* "act" */
            s->fault_blob = 0;
            e->fault_corrupt = 1;
            e->fault_block = b0 + mb_mix64(r + 1) % nb;
            uint64_t left = e->bytes - e->fault_block * s->block;
            e->fault_bit = mb_mix64(r + 2) % ((left < s->block ? left : s->block) * 8);
        }
        if (e->fault_corrupt && e->fault_block >= b0 && e->fault_block < b0 + nb) {
            e->fault_corrupt = 0;
            corrupt_on_storage(s, e);
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (!failed && !d) /* outside the lock: the blocks are this read's */
        rc = check_blocks(io, err, errlen);
    if (s->o.on_span)
        s->o.on_span(s->o.span_ctx, d ? "write" : "read", e->name, io->t0, t1);
    if (!rc && !d && io->len > io->main)
        memcpy(io->buf + io->main, io->tail, io->len - io->main);
    free(io->tail);
    free(io);
    return rc;
}

int mb_ostore_rw(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf, char *err,
                 size_t errlen)
{
    struct mb_ostore_io *io;
    if (mb_ostore_submit(s, op, ext, off, len, buf, &io, err, errlen) != 0)
        return -1;
    return mb_ostore_wait(io, err, errlen);
}

int mb_ostore_wait_all(struct mb_ostore_io **list, int n, char *err, size_t errlen)
{
    int rc = 0;
    char e2[512];
    for (int k = 0; k < n; k++)
        if (list[k]) {
            if (mb_ostore_wait(list[k], rc ? e2 : err, rc ? sizeof(e2) : errlen) != 0)
                rc = -1;
            list[k] = NULL;
        }
    return rc;
}

void mb_ostore_stats(struct mb_ostore *s, struct mb_ostore_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    out->thread_cpu_s = s->thread_started ? mb_thread_cpu_s((unsigned long)s->tid) : 0;
    pthread_mutex_unlock(&s->mu);
}

void mb_ostore_emulation(const struct mb_ostore *s, char *buf, size_t len)
{
    if (s->o.file_gbps > 0)
        snprintf(buf, len, "ostore: %d files in one folder stand for %d SSDs, each capped at %g GB/s by a token bucket",
                 s->nfiles, s->nfiles, s->o.file_gbps);
    else if (len)
        buf[0] = 0;
}

const struct mb_aio *mb_ostore_engine(const struct mb_ostore *s) { return s->eng; }

const char *mb_ostore_path(const struct mb_ostore *s, int f)
{
    return f >= 0 && f < MB_STORAGE_MAX_FILES && s->file_name[f] ? s->path[f] : NULL;
}

void mb_ostore_unlink(struct mb_ostore *s)
{
    if (s->unlinked)
        return;
    s->unlinked = 1;
    for (int f = 0; f < MB_STORAGE_MAX_FILES; f++)
        if (s->file_name[f] && s->dirfd >= 0)
            unlinkat(s->dirfd, s->file_name[f], 0);
}

void mb_ostore_close(struct mb_ostore *s)
{
    if (!s)
        return;
    ostore_steps_fini(s);
    if (s->eng)
        mb_aio_close(s->eng);
    for (int f = 0; f < MB_STORAGE_MAX_FILES; f++) {
        if (s->fd[f] >= 0)
            close(s->fd[f]);
    }
    mb_ostore_unlink(s);
    for (int f = 0; f < MB_STORAGE_MAX_FILES; f++) {
        free(s->file_name[f]);
        free(s->path[f]);
    }
    if (s->dirfd >= 0)
        close(s->dirfd);
    for (int k = 0; s->ext && k < s->next; k++) {
        free(s->ext[k].crc);
        free(s->ext[k].written);
    }
    free(s->ext);
    free(s->ubase);
    free(s->unit_tensor);
    free(s->unit_off);
    pthread_cond_destroy(&s->more);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
