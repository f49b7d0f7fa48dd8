/* offload/aio: a CAM-style asynchronous batched storage engine.
 * Compute threads submit batches of (offset, length, buffer) block requests
 * and get a ticket; dedicated I/O threads drain lock-free submission rings
 * and drive one io_uring per device (O_DIRECT, registered buffers and
 * files, batched submission and completion reaping). Several files are
 * striped RAID0-like to stand for several SSDs. Falls back to a pread/pwrite
 * thread pool when io_uring is refused (or MB_AIO_ENGINE=posix), and to
 * buffered I/O when O_DIRECT is refused (tmpfs); both are reported by
 * mb_aio_info(). Errors are per request and reach the waiter. */
#ifndef MB_OFFLOAD_AIO_H
#define MB_OFFLOAD_AIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_AIO_READ 0
#define MB_AIO_WRITE 1
#define MB_AIO_BLOCK 512 /* O_DIRECT alignment of offsets, lengths and buffers */

struct mb_aio_opts {
    int nthreads;        /* I/O threads; 0 = CAM's rule: ndev/4..ndev/2, at least 1 */
    size_t stripe;       /* stripe unit in bytes (multiple of 4096); 0 = 64 KiB */
    size_t arena;        /* registered buffer arena for mb_aio_alloc; 0 = 64 MiB */
    unsigned depth;      /* io_uring entries per device per thread; 0 = 128 */
    int create;          /* create/extend files to `size` bytes each */
    uint64_t size;       /* with create: bytes per file */
    int buffered;        /* never use O_DIRECT */
};

struct mb_aio_req {
    uint64_t offset;     /* logical offset in the striped volume */
    size_t len;
    void *buf;
    int op;              /* MB_AIO_READ / MB_AIO_WRITE */
    int status;          /* out: 0, or -errno (-ENODATA: short file) */
};

struct mb_aio_info {
    const char *engine;  /* "io_uring" or "posix" (pread/pwrite pool) */
    const char *fallback;/* why the fallback engine was chosen, "" when none */
    int direct;          /* 1 when O_DIRECT is in use */
    int nthreads, ndev;
    size_t stripe;
    uint64_t bounce_bytes, direct_bytes, buffered_bytes, requests, batches;
    uint64_t completed;  /* batches completed (monotonic) */
};

struct mb_aio;
typedef struct mb_aio_batch *mb_aio_ticket;

/* Opens the striped volume over paths[0..n). NULL with a message in err. */
struct mb_aio *mb_aio_open(const char *const *paths, int n, const struct mb_aio_opts *o,
                           char *err, size_t errlen);
void mb_aio_close(struct mb_aio *a);
/* Aligned memory from the registered arena (falls back to plain aligned
 * memory when the arena is exhausted); free with mb_aio_free. */
void *mb_aio_alloc(struct mb_aio *a, size_t bytes);
void mb_aio_free(struct mb_aio *a, void *p);
/* Submits reqs[0..n) (the array must live until the wait). 0, or -errno. */
int mb_aio_submit(struct mb_aio *a, struct mb_aio_req *reqs, size_t n, mb_aio_ticket *t);
/* 1 when every request of the batch completed, else 0. */
int mb_aio_test(mb_aio_ticket t);
/* Waits, frees the ticket; returns the number of failed requests (each
 * req's status says why). */
int mb_aio_wait(mb_aio_ticket t);
/* Ticket's completion counter: requests done so far (monotonic). */
uint64_t mb_aio_ticket_count(mb_aio_ticket t);
void mb_aio_info(const struct mb_aio *a, struct mb_aio_info *out);
/* Total volume size (ndev * smallest file, rounded down to stripes). */
uint64_t mb_aio_size(const struct mb_aio *a);

/* Striping: logical offset -> (device, device offset); returns bytes left in this stripe unit. */
size_t mb_aio_map(uint64_t off, size_t stripe, int ndev, int *dev, uint64_t *devoff);
/* CAM's rule for N devices: between N/4 and N/2 I/O threads (at least 1);
 * io_frac is the measured fraction of time spent waiting on I/O (0..1). */
int mb_aio_adaptive_threads(int ndev, double io_frac);

/* Verification pattern: every 512-byte block of the volume carries 64-bit
 * words derived from (seed, logical offset). */
void mb_aio_pattern_fill(void *buf, uint64_t off, size_t len, uint64_t seed);
/* Offset (relative to buf) of the first wrong byte, or len when all right. */
size_t mb_aio_pattern_check(const void *buf, uint64_t off, size_t len, uint64_t seed);

/* CUDA path: destinations in device memory. Reads land in the registered
 * (pinned, in the CUDA build) staging buffer `staging`, which is then copied
 * to `dev` with cudaMemcpyAsync on the runtime's per-thread stream; returns
 * 0, or -1 with the reason in err (always -1 in the CPU build). */
int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err, size_t errlen);
/* Page-locks [p, p + bytes) for DMA (cudaHostRegister); 0, or -1 (CPU build: -1). */
int mb_aio_pin(void *p, size_t bytes, char *err, size_t errlen);

/* ===== Out-of-core applications (CAM's evaluation) ======================
 * Tiled GEMM, external merge sort and random row gather over the striped
 * volume, each runnable in five modes: the engine waited at once (sync) or
 * double-buffered (async: submit the next batch, wait for the previous,
 * compute), the compute thread doing synchronous preads (posix), and the
 * two phases alone: compute with the data already in memory (compute) and
 * the same I/O without the compute (io). mb-aio --app drives them; the
 * gather routine and the Zipf sampler are for other libraries (GNN feature
 * extraction) as well. Data files hold deterministic content (prepare), so
 * every run is verified. Messages name mb-aio's flags. */

enum mb_ooc_app { MB_OOC_GEMM, MB_OOC_SORT, MB_OOC_GATHER };
enum mb_ooc_mode { MB_OOC_POSIX, MB_OOC_SYNC, MB_OOC_ASYNC, MB_OOC_COMPUTE, MB_OOC_IO };
extern const char *const mb_ooc_app_names[];  /* "gemm", "sort", "gather" */
extern const char *const mb_ooc_mode_names[]; /* "posix", "sync", "async", "compute", "io" */

struct mb_ooc_params {
    enum mb_ooc_app app;
    const char *const *paths;  /* the app's data files, striped */
    int nfiles;
    size_t stripe;             /* multiple of 4096 */
    int io_threads;            /* engine I/O threads; 0 = CAM's rule */
    int buffered;              /* no O_DIRECT */
    uint64_t seed;
    size_t mem_budget;         /* sort: bytes of key buffers (runs are this / 4) */
    size_t gemm_n, gemm_tile;  /* C = A x B, n x n floats in tile x tile tiles */
    uint64_t sort_keys;        /* 64-bit keys to sort */
    uint64_t gather_rows;      /* feature matrix: rows x dim floats */
    size_t gather_dim, gather_batch, gather_batches;
    double zipf;               /* row popularity exponent (0 = uniform) */
    int blas_threads;          /* OpenBLAS threads for the compute; 0 = leave as is */
    int prefetch;              /* gemm, gather: steps read ahead (async, io); 0 or 1 =
                                * double buffering, k = k + 1 buffers */
};

struct mb_ooc_stats {
    uint64_t read_bytes, write_bytes, requests; /* per run */
    double flops;              /* per run (gemm, gather's dense layer) */
};

struct mb_ooc;

/* 0, or -1 with one line naming the flag in err. */
int mb_ooc_validate(const struct mb_ooc_params *p, char *err, size_t errlen);
/* Bytes a run reads and writes (the compute mode moves none of them). */
uint64_t mb_ooc_io_bytes(const struct mb_ooc_params *p);
/* Bytes each data file must hold. */
uint64_t mb_ooc_file_bytes(const struct mb_ooc_params *p);
/* Writes the app's input (deterministic content from the seed) into the
 * files, creating them. corrupt: then flip one bit of the input on
 * storage (the fault-injection tests). 0, or -1 with err. */
int mb_ooc_prepare(const struct mb_ooc_params *p, int corrupt, char *err, size_t errlen);
/* One app in one mode over prepared files; NULL with err. */
struct mb_ooc *mb_ooc_open(const struct mb_ooc_params *p, enum mb_ooc_mode m, char *err, size_t errlen);
/* Untimed, before each run: fresh inputs for this iteration (gather's
 * sampled rows), poisoned outputs (so a run that writes nothing fails). */
int mb_ooc_reset(struct mb_ooc *o, long long iter, char *err, size_t errlen);
/* One whole run (the timed part). 0, or -1 with err. */
int mb_ooc_run(struct mb_ooc *o, char *err, size_t errlen);
/* Verifies the last run: 0, or 1 with the first wrong thing in msg. */
int mb_ooc_check(struct mb_ooc *o, char *msg, size_t msglen);
void mb_ooc_stats(const struct mb_ooc *o, struct mb_ooc_stats *s);
/* The engine's report (NULL in the posix and compute modes). */
const struct mb_aio *mb_ooc_engine(const struct mb_ooc *o);
void mb_ooc_close(struct mb_ooc *o);

/* Row gather, for GNN feature extraction: `rows` rows of `dim` floats
 * stored from volume offset `offset`, each in `row_bytes` (dim * 4 rounded
 * up to MB_AIO_BLOCK, so reads land directly). */
struct mb_ooc_features {
    uint64_t offset, rows;
    size_t dim, row_bytes;
};
size_t mb_ooc_row_bytes(size_t dim);
/* Fills reqs[0..n) to read rows ids[0..n) into out (row i at out + i *
 * row_bytes: a dense batch with leading dimension row_bytes / 4 floats). */
void mb_ooc_gather_reqs(const struct mb_ooc_features *f, const uint64_t *ids, size_t n, void *out,
                        struct mb_aio_req *reqs);
/* The same, submitted as one batch: wait on *t, as for mb_aio_submit. */
int mb_ooc_gather_submit(struct mb_aio *a, const struct mb_ooc_features *f, const uint64_t *ids,
                         size_t n, void *out, struct mb_aio_req *reqs, mb_aio_ticket *t);

/* Zipf(s) row popularity over n rows: rank r has probability ~ 1/(r+1)^s;
 * ranks are scattered over the rows by a fixed permutation (hot rows are
 * not neighbours). */
struct mb_ooc_zipf;
struct mb_ooc_zipf *mb_ooc_zipf_new(uint64_t n, double s, uint64_t seed);
/* Next row id; *state is the caller's generator state (any start value). */
uint64_t mb_ooc_zipf_next(const struct mb_ooc_zipf *z, uint64_t *state);
/* The row id of popularity rank r. */
uint64_t mb_ooc_zipf_row(const struct mb_ooc_zipf *z, uint64_t rank);
void mb_ooc_zipf_free(struct mb_ooc_zipf *z);

/* Sorts keys[0..n) ascending (LSD radix); tmp holds n keys. */
void mb_ooc_sort_u64(uint64_t *keys, size_t n, uint64_t *tmp);

#ifdef __cplusplus
}
#endif

#endif
