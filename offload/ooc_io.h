/* Internal to offload/: the I/O path shared by the out-of-core apps. One
 * loop per app serves every mode: an op (a batch of requests) is started
 * and later finished through the storage mode the app mode runs on
 * (posix, sync, async, memory for compute, async for io; the registry of
 * aio.h), so a new storage mode needs no change here. */
#ifndef MB_OFFLOAD_OOC_IO_H
#define MB_OFFLOAD_OOC_IO_H

#include "aio.h"
#include "../common/common.h"

#define OOC_MAX_FILES MB_STORAGE_MAX_FILES

struct ooc_io {
    enum mb_ooc_mode mode;
    struct mb_storage st;        /* the volume in the mode's storage mode; st.fd[]
                                  * serve checks and prepare in every mode */
    struct mb_aio *eng;          /* st.eng: sync, async, io */
    char *mem;                   /* compute: the volume's first memsize bytes (st.image) */
    uint64_t memsize;
    uint64_t rbytes, wbytes, requests;
};

struct ooc_op {
    struct mb_aio_req *reqs;     /* caller's array, lives until finished */
    size_t n;
    struct mb_storage_ticket t;
    int pending, err;
};

/* arena: registered buffer bytes the app will allocate; memsize/load: the
 * compute mode's image size and how much of it to read from the files. */
int ooc_io_open(struct ooc_io *io, const struct mb_ooc_params *p, enum mb_ooc_mode m, size_t arena,
                uint64_t memsize, uint64_t load, int create, char *err, size_t errlen);
void ooc_io_close(struct ooc_io *io);
/* Registered (engine modes) or page-aligned buffer, zeroed; NULL when out
 * of memory. */
void *ooc_alloc(struct ooc_io *io, size_t bytes);
/* Every other allocation of the apps goes through these: NULL when out of
 * memory, or when MB_AIO_INJECT=nomem:N makes this the N-th allocation of
 * the process (with ooc_alloc's), so a test reaches every failure path. */
void *ooc_malloc(size_t bytes);
void *ooc_calloc(size_t n, size_t size);
void *ooc_memalign(size_t align, size_t bytes);
/* "what: out of memory (N bytes)" into err; returns -1. */
int ooc_nomem(char *err, size_t errlen, const char *what, size_t bytes);
void ooc_free(struct ooc_io *io, void *p);
/* 0, or -errno of the first failed request (sync, posix and compute
 * finish at once; async and io when ooc_finish waits). */
int ooc_start(struct ooc_io *io, struct ooc_op *op);
int ooc_finish(struct ooc_io *io, struct ooc_op *op);
/* Synchronous read or write bypassing the mode (checks, prepare, poison):
 * the compute mode's image, else pread/pwrite through the stripe map. */
int ooc_rw_now(struct ooc_io *io, int op, uint64_t off, size_t len, void *buf);
/* "what: Input/output error at offset N" into err; returns -1. */
int ooc_fail(char *err, size_t errlen, const char *what, int status, uint64_t off);
/* The same for the first failed request of op. */
int ooc_op_fail(char *err, size_t errlen, const char *what, const struct ooc_op *op);
/* One write of buf to [off, off+len) through the mode, waited for (the
 * apps' prepare, counted as the mode's I/O): 0, or -1 with "what: ..." in
 * err. */
int ooc_write_one(struct ooc_io *io, uint64_t off, size_t len, void *buf, const char *what, char *err,
                  size_t errlen);

/* Per app: the pieces ooc.c dispatches to. */
struct ooc_app {
    int (*validate)(const struct mb_ooc_params *p, char *err, size_t errlen);
    uint64_t (*volume_bytes)(const struct mb_ooc_params *p);
    uint64_t (*io_bytes)(const struct mb_ooc_params *p);
    int (*prepare)(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen);
    uint64_t (*corrupt_offset)(const struct mb_ooc_params *p); /* a byte of the input */
    size_t (*arena_bytes)(const struct mb_ooc_params *p);
    uint64_t (*image_bytes)(const struct mb_ooc_params *p, uint64_t *load);
    void *(*open)(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen);
    int (*reset)(void *st, struct ooc_io *io, long long iter, char *err, size_t errlen);
    int (*run)(void *st, struct ooc_io *io, char *err, size_t errlen);
    int (*check)(void *st, struct ooc_io *io, char *msg, size_t msglen);
    void (*stats)(const void *st, struct mb_ooc_stats *s);
    void (*close)(void *st, struct ooc_io *io);
};

extern const struct ooc_app ooc_gemm_app, ooc_sort_app, ooc_gather_app;

#endif
