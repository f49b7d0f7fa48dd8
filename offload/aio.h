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

#define MB_AIO_ADAPTIVE (-1) /* opts.nthreads: CAM's rule, re-decided every window */

struct mb_aio_opts {
    int nthreads;        /* I/O threads; 0 = CAM's rule at its upper end, ceil(ndev/2);
                          * MB_AIO_ADAPTIVE: ceil(ndev/2) threads started, and every
                          * `adapt_window` waits the number in use is re-chosen in
                          * [ceil(ndev/4), ceil(ndev/2)] from the measured fraction of
                          * the compute threads' time spent waiting (mb_aio_adaptive_threads) */
    unsigned adapt_window; /* adaptive: waits per decision; 0 = 32 */
    size_t stripe;       /* stripe unit in bytes (multiple of 4096); 0 = 64 KiB */
    size_t arena;        /* registered buffer arena for mb_aio_alloc; 0 = 64 MiB; 2 MiB-
                          * aligned, transparent huge pages asked for with madvise
                          * (environment MB_AIO_NOHUGE=1: not) */
    unsigned depth;      /* io_uring entries per device per thread; 0 = 128 */
    unsigned inflight;   /* cap on requests in flight per I/O thread over all its
                          * devices (the device queue depth; refilled on every
                          * completion); 0 = only `depth` per device */
    unsigned submit_batch; /* SQEs per io_uring_enter (fio's iodepth_batch_submit);
                          * 0 = everything prepared in one call */
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
    double inflight_mean;/* mean requests in flight per I/O thread right after each submission */
    int adaptive;        /* 1 in MB_AIO_ADAPTIVE mode */
    int active_threads;  /* I/O threads that receive new batches now */
    size_t decisions;    /* adaptive decisions taken (mb_aio_thread_history) */
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
/* Adaptive mode: the thread count chosen at each decision, oldest first;
 * writes at most max, returns how many decisions were taken. */
size_t mb_aio_thread_history(struct mb_aio *a, int *counts, size_t max);
/* Total volume size (ndev * smallest file, rounded down to stripes). */
uint64_t mb_aio_size(const struct mb_aio *a);

/* Striping: logical offset -> (device, device offset); returns bytes left in this stripe unit. */
size_t mb_aio_map(uint64_t off, size_t stripe, int ndev, int *dev, uint64_t *devoff);
/* Reads (op MB_AIO_READ) or writes len bytes at logical offset off of the
 * volume striped over fds[0..ndev) in units of stripe, with pread/pwrite
 * in the caller (partial transfers resumed, EINTR retried). 0, or -errno;
 * -ENODATA: past the end of a file, -ENOSPC: a write that wrote nothing. */
int mb_aio_volume_rw(const int *fds, int ndev, size_t stripe, int op, uint64_t off, size_t len, void *buf);
/* Opens the files of a volume for pread/pwrite in the caller, with flags
 * (O_NOFOLLOW and O_CLOEXEC added) and O_DIRECT while *direct is set. Where
 * the file system refuses O_DIRECT (EINVAL; MB_AIO_INJECT=nodirect imitates
 * it in tests) every file is opened buffered instead and *direct cleared,
 * so all of them take the same path. 0, or -1 with errno and the failing
 * file's index in *bad (the files opened are closed again, fds[] all -1). */
int mb_aio_open_volume(const char *const *paths, int n, int flags, int *direct, int *fds, int *bad);
/* CAM's rule for N devices: between ceil(N/4) and ceil(N/2) I/O threads,
 * linear in io_frac, the measured fraction of the compute threads' time
 * spent waiting on I/O (0..1; compute-bound work hides I/O with fewer
 * threads). */
int mb_aio_adaptive_threads(int ndev, double io_frac);
/* Parses an I/O-thread count as programs take it: 0..64 or "adaptive"
 * (MB_AIO_ADAPTIVE) into *out. 0, or -1 when it is neither. */
int mb_aio_parse_threads(const char *s, int *out);
/* io_frac from measured times: wait / (wait + compute); 1 when both are 0. */
double mb_aio_io_fraction(uint64_t wait_ns, uint64_t compute_ns);

/* ---- How a measured run lays out its requests (aio_plan.c) ---- */
/* The engine's options for a device queue depth qd: the in-flight cap qd
 * split over the I/O threads (nthreads, or CAM's rule for nfiles when 0 or
 * adaptive), depth qd per device, at most min(batch, 4) SQEs per
 * io_uring_enter, an arena of `arena` bytes. */
struct mb_aio_opts mb_aio_opts_for_qd(int nthreads, int nfiles, unsigned qd, unsigned batch, size_t arena);
/* Buffers (slots) for n requests of bs bytes, qd in flight, request i in
 * slot i % slots: one per request up to 64 MiB of them, and never fewer
 * than mb_storage_driver_run posts at once (2 x qd; fewer where that would
 * take more than 256 MiB, but at least qd). */
size_t mb_aio_slots(size_t n, size_t bs, size_t qd);
/* Offsets of n requests of bs bytes in a volume of vol bytes, bs-aligned:
 * random (the same for seed, iter and bs), or sequential from *seqpos,
 * wrapping at the end (*seqpos advanced). */
void mb_aio_offsets(uint64_t *off, size_t n, size_t bs, uint64_t vol, int sequential, uint64_t seed,
                    long long iter, uint64_t *seqpos);
/* h[0..n) run-length coded into buf: "4x12 3x2" (empty for n = 0). */
void mb_aio_runs_text(const int *h, size_t n, char *buf, size_t len);
/* The adaptive thread counts chosen so far, run-length coded in buf; or a
 * fixed text saying there were none, or out of memory. */
const char *mb_aio_thread_history_text(struct mb_aio *a, char *buf, size_t len);

/* Verification pattern: every 512-byte block of the volume carries 64-bit
 * words derived from (seed, logical offset). */
void mb_aio_pattern_fill(void *buf, uint64_t off, size_t len, uint64_t seed);
/* Offset (relative to buf) of the first wrong byte, or len when all right. */
size_t mb_aio_pattern_check(const void *buf, uint64_t off, size_t len, uint64_t seed);

/* Data files of a striped volume holding the pattern: file f keeps its
 * stripe units' pattern in [0, file_size), then a trailer block naming the
 * layout, the seed and a state. */
struct mb_aio_volume {
    const char *const *paths;
    int nfiles;
    uint64_t file_size, stripe, seed;
};
#define MB_AIO_VOLUME_TRAILER 4096
enum { MB_AIO_VOLUME_COMPLETE = 1, MB_AIO_VOLUME_WRITING = 2 };
/* 1 when every file is a regular file of the right size whose trailer says
 * complete for this layout and seed, and nsample random 512-byte blocks per
 * file (positions from sample_seed) hold the pattern; else 0 with the first
 * reason in why. */
int mb_aio_volume_check(const struct mb_aio_volume *v, size_t nsample, uint64_t sample_seed, char *why,
                        size_t len);
/* 1 when every file that exists may be written as a data file: a regular
 * file (not a link) that is empty or holds our trailer; else 0 naming it. */
int mb_aio_volume_owned(const struct mb_aio_volume *v, char *why, size_t len);
/* Writes every file (state "writing" first, the pattern, fsync, then
 * "complete"). A file is created with O_EXCL | O_NOFOLLOW; an existing one
 * is overwritten only when it holds our trailer or is empty. 0 or -1 with
 * the file and the reason in err. */
int mb_aio_volume_prepare(const struct mb_aio_volume *v, char *err, size_t len);
/* Sets every file's state: "writing" before a write run, "complete" after
 * a run whose writes were all read back and verified. */
int mb_aio_volume_mark(const struct mb_aio_volume *v, int state, char *err, size_t len);

/* CUDA path: destinations in device memory. Reads land in the registered
 * (pinned, in the CUDA build) staging buffer `staging`, which is then copied
 * to `dev` with cudaMemcpyAsync on the runtime's per-thread stream; returns
 * 0, or -1 with the reason in err (always -1 in the CPU build). */
int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err, size_t errlen);
/* Page-locks [p, p + bytes) for DMA (cudaHostRegister); 0, or -1 (CPU build: -1). */
int mb_aio_pin(void *p, size_t bytes, char *err, size_t errlen);

/* ---- GPU-posted batches: CAM's protocol through mapped host memory --------
 * The mailbox lives in memory both sides see: cudaHostAllocMapped host
 * memory when a CUDA kernel posts (mb_aio_mailbox_alloc(1, ...)), plain
 * memory when a CPU thread plays the GPU. The poster (the GPU's leader
 * thread) fills slot[seq % MB_AIO_POST_SLOTS] (region 1: requests, region 2:
 * their count), makes them visible (__threadfence_system / a release
 * store) and rings the doorbell, a sequence counter: doorbell = seq + 1
 * (region 3). A host polling thread (mb_aio_poller_start) submits the batch
 * through the engine; when every request is done (and, for destinations in
 * device memory, copied there from pinned staging by cudaMemcpyAsync), it
 * writes each request's status, then the slot's 64-bit completion counter
 * done = seq + 1 (region 4), then `completed` (batches done, in order). The
 * poster spins on done; it may reuse a slot once done covers its previous
 * batch. Every word is written by one side only. */
#define MB_AIO_POST_SLOTS 4
#define MB_AIO_POST_MAXREQ 64

struct mb_aio_post_req {
    uint64_t offset;     /* logical offset in the striped volume */
    uint64_t dst;        /* byte offset in the poller's destination region */
    uint32_t len, op;    /* op: MB_AIO_READ / MB_AIO_WRITE */
    int32_t status;      /* out: 0 or -errno (-EINVAL: outside the destination region) */
    uint32_t pad;
};

struct mb_aio_post_slot {
    uint64_t done;       /* region 4: seq + 1 once batch seq is complete (host writes) */
    uint32_t n;          /* region 2: requests in this batch (poster writes) */
    uint32_t failed;     /* requests with status != 0 (host writes, before done) */
    uint64_t pad[6];
    struct mb_aio_post_req req[MB_AIO_POST_MAXREQ]; /* region 1 (poster writes) */
};

struct mb_aio_mailbox {
    uint64_t doorbell;   /* region 3: batches posted (poster writes) */
    uint64_t pad0[7];
    uint64_t completed;  /* batches completed, in order (host writes) */
    uint32_t mapped;     /* allocated with cudaHostAllocMapped */
    uint32_t pad1[13];
    struct mb_aio_post_slot slot[MB_AIO_POST_SLOTS];
};

/* A zeroed mailbox; mapped = 1: cudaHostAllocMapped (CUDA build with a
 * device), else plain aligned memory. NULL with the reason in err. */
struct mb_aio_mailbox *mb_aio_mailbox_alloc(int mapped, char *err, size_t errlen);
void mb_aio_mailbox_free(struct mb_aio_mailbox *mb);

struct mb_aio_poller;
/* Starts the host polling thread serving mb through engine a. Destinations
 * are dst + req.dst; dst_device = 1: dst is device memory, so reads land in
 * a registered staging buffer (max_req bytes per request; pinned in the
 * CUDA build) and are copied with cudaMemcpyAsync, writes are staged the
 * other way. NULL with the reason in err. */
struct mb_aio_poller *mb_aio_poller_start(struct mb_aio *a, struct mb_aio_mailbox *mb, void *dst,
                                          size_t dst_bytes, int dst_device, size_t max_req,
                                          char *err, size_t errlen);
/* Serves what was posted, stops the thread; returns the batches served. */
uint64_t mb_aio_poller_stop(struct mb_aio_poller *p);

/* CUDA twins (aio_cuda.cu; aio_nocuda.c answers -1 "built without CUDA"). */
int mb_aio_mapped_alloc(void **p, size_t bytes, char *err, size_t errlen);
void mb_aio_unpin(void *p); /* undoes mb_aio_pin */
void mb_aio_mapped_free(void *p);
int mb_aio_stage_from_device(void *staging, const void *dev, size_t bytes, char *err, size_t errlen);
/* CAM's GPU side: a kernel posts nbatch batches of n (<= MB_AIO_POST_MAXREQ)
 * reads of bs bytes at block-aligned offsets ((b * n + i) * 7919 mod
 * vol/bs) * bs into mb (mapped), destinations in device memory dst (2 * n * bs
 * bytes, double-buffered: prefetch batch b + 1, wait for batch b, check it),
 * and checks every word against the pattern of seed. Returns the number of
 * wrong words (plus requests that failed), or -1 with the reason in err. */
long long mb_aio_gpu_post_run(struct mb_aio_mailbox *mb, void *dst, uint64_t vol, size_t bs, int n,
                              int nbatch, uint64_t seed, char *err, size_t errlen);

/* ===== Storage modes: one registry of I/O paths (fio's ioengine_ops) =====
 * Each way of moving a batch of (offset, length, buffer) requests between
 * memory and the striped volume is one ops struct in its own file
 * (offload/storage_<name>.c) and one row of mb_storage_modes[]: the
 * synchronous POSIX baseline, the bounce copy, mmap, an io_uring owned by
 * the compute thread (BaM-like), the engine waited at once or later, and a
 * RAM image of the volume. mb-aio measures them, the out-of-core apps run
 * on them, gnn's reader can open its volume through them. Every mode opens
 * the files for pread/pwrite in the caller (mb_aio_open_volume: O_DIRECT
 * unless buffered or the mode says never, the fallback recorded), so
 * checks and set-up can bypass the mode (mb_storage_rw_now). */
#define MB_STORAGE_MAX_FILES 64

#define MB_STORAGE_BLOCKING 1u   /* submit completes every request before it returns;
                                  * wait only reports the failures */
#define MB_STORAGE_ENGINE 2u     /* runs on the mb_aio engine (s->eng); mb_storage_alloc
                                  * hands out its registered memory */
#define MB_STORAGE_ANY_ORDER 4u  /* reap returns completions in any order without
                                  * waiting, so a caller refills as they come */
#define MB_STORAGE_IMAGE 8u      /* a RAM image of the volume, no device (the apps'
                                  * compute phase); not a storage path to measure */
#define MB_STORAGE_NO_DIRECT 16u /* never O_DIRECT: the page cache is the path (mmap) */

struct mb_storage_params {
    const char *const *paths;   /* the volume's files, striped */
    int nfiles;                 /* 1..MB_STORAGE_MAX_FILES */
    size_t stripe;              /* stripe unit in bytes */
    uint64_t file_size;         /* mmap: bytes mapped per file */
    int writable;               /* opened for writes too */
    int buffered;               /* never O_DIRECT */
    unsigned qd;                /* inline: requests in flight (ring of 2 x qd entries) */
    struct mb_aio_opts engine;  /* engine modes: mb_aio_open's options as given */
    uint64_t image_bytes;       /* image: bytes of RAM image (rounded up to 4096) */
    uint64_t image_load;        /* image: bytes of it read from the files at open */
};

struct mb_storage_ops;

/* One volume open in one mode. */
struct mb_storage {
    const struct mb_storage_ops *ops;
    struct mb_storage_params p;
    int fd[MB_STORAGE_MAX_FILES]; /* pread/pwrite descriptors, every mode */
    int direct;                 /* fd[] use O_DIRECT */
    const char *fallback;       /* "none", or why not O_DIRECT where it was asked for */
    struct mb_aio *eng;         /* engine modes */
    char *image;                /* image mode: the volume's first image_bytes */
    uint64_t image_bytes;
    void *priv;                 /* the mode's own state */
};

/* A batch in flight: submit fills it, wait consumes it. */
struct mb_storage_ticket {
    mb_aio_ticket eng;          /* engine modes */
    struct mb_aio_req *reqs;
    size_t n;
    int failed;                 /* blocking modes: requests that failed */
};

struct mb_storage_ops {
    const char *name;           /* --mode's word */
    const char *description;
    unsigned flags;             /* MB_STORAGE_* */
    /* After the files are open (s->fd, s->direct): the mode's own set-up.
     * 0, or -1 with the reason in err. */
    int (*open)(struct mb_storage *s, char *err, size_t errlen);
    /* Starts reqs[0..n) (the array lives until waited for or reaped; each
     * status ends 0 or -errno, -ENODATA past the end). 0, or -errno when
     * the batch could not be started. t may be NULL in ANY_ORDER modes. */
    int (*submit)(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t);
    /* BLOCKING modes that take one request at a time: request r now, 0 or
     * -errno; such a mode's submit is storage_each (storage_internal.h). */
    int (*rw)(struct mb_storage *s, struct mb_aio_req *r);
    /* Waits for t's batch; returns the number of failed requests. */
    int (*wait)(struct mb_storage *s, struct mb_storage_ticket *t);
    /* ANY_ORDER modes: up to max completed requests into done[] (not waiting). */
    size_t (*reap)(struct mb_storage *s, struct mb_aio_req **done, size_t max);
    /* Optional: writes reach the files (mmap: msync). 0, or -1 with err. */
    int (*flush)(struct mb_storage *s, char *err, size_t errlen);
    void (*close)(struct mb_storage *s);
};

/* The registry, NULL-terminated, in the order programs list the modes. */
extern const struct mb_storage_ops *const mb_storage_modes[];
/* The mode called name, or NULL. */
const struct mb_storage_ops *mb_storage_find(const char *name);
/* Opens p's volume in mode ops: the files (O_RDWR with writable, else
 * O_RDONLY), then the mode. 0, or -1 with the reason in err ("PATH:
 * reason" for a file) and s closed. */
int mb_storage_open(struct mb_storage *s, const struct mb_storage_ops *ops, const struct mb_storage_params *p,
                    char *err, size_t errlen);
void mb_storage_close(struct mb_storage *s);
/* Page-aligned memory for requests: the engine's registered arena in
 * engine modes, else posix_memalign; NULL when out of memory. */
void *mb_storage_alloc(struct mb_storage *s, size_t bytes);
void mb_storage_free(struct mb_storage *s, void *p);
/* A synchronous read or write bypassing the mode (checks, set-up): the RAM
 * image in image modes, else pread/pwrite through the stripe map. */
int mb_storage_rw_now(struct mb_storage *s, int op, uint64_t off, size_t len, void *buf);
/* The modes that are storage paths (not IMAGE), in the registry's order:
 * up to max into out; returns how many. With choices: their names joined
 * by '|', then "|extra" when extra is not NULL (a program's --mode list). */
size_t mb_storage_paths(const struct mb_storage_ops **out, size_t max, char *choices, size_t len,
                        const char *extra);

/* ---- Driving a mode: n requests kept qd in flight, as its flags say ----
 * (storage_drive.c; what mb-aio times). BLOCKING modes take one request at
 * a time; ENGINE modes take tickets of `batch` requests, waited for at once
 * (sync) or keeping min(2 x qd, nslot) requests posted (async); ANY_ORDER
 * modes are refilled as completions come. Requests i and i + nslot share a
 * buffer: i + nslot is posted only once i has completed. */
struct mb_storage_hooks {
    void *ctx;
    /* Optional: just before request i is posted (its write data), inside
     * the time. */
    void (*before_post)(void *ctx, size_t i);
    /* Request i completed after `seconds` (engine modes: its ticket's). */
    void (*done)(void *ctx, size_t i, double seconds);
};
struct mb_storage_driver;
/* The scratch for driving n requests of s (n, qd, batch, nslot >= 1);
 * NULL when out of memory or given a zero. */
struct mb_storage_driver *mb_storage_driver_new(struct mb_storage *s, size_t n, size_t qd, size_t batch,
                                                size_t nslot);
/* Runs reqs[0..n) through the mode. 0, or -1 with the first failure in err
 * ("MODE: request at OFFSET: reason"); every request posted is completed
 * before it returns, and writes have reached the files (the mode's flush,
 * mmap's msync, ran). */
int mb_storage_driver_run(struct mb_storage_driver *d, struct mb_aio_req *reqs, const struct mb_storage_hooks *h,
                          char *err, size_t errlen);
void mb_storage_driver_free(struct mb_storage_driver *d);

/* ---- fio's io_uring engine on the same volume (aio_fio.c) ----------------
 * The outside reference: fio started from an argument vector (no shell),
 * its terse output read from a pipe. fio's data is its own: nothing is
 * checked. */
struct mb_aio_fio_job {
    const char *const *paths;  /* the volume's files, striped by fio's own rule */
    int nfiles;                /* 1..MB_STORAGE_MAX_FILES */
    const char *suffix;        /* appended to every path (NULL: none) */
    int write, sequential, direct;
    size_t bs;
    long long qd, batch;       /* --iodepth, --iodepth_batch_submit */
    uint64_t size, io_size;    /* bytes over all the files; bytes moved */
};
struct mb_aio_fio_argv {
    char filename[MB_STORAGE_MAX_FILES * 1040 + 16];
    char a[8][64];
    char *argv[20];
};
/* fio's argument vector for j in v (argv points into v). 0, or -1 when the
 * files do not fit. */
int mb_aio_fio_argv(const struct mb_aio_fio_job *j, struct mb_aio_fio_argv *v);
/* One line of fio's terse v3 output: 1 with the read (write) IOPS and fio's
 * error code when it is a result line, else 0. Splits line in place. */
int mb_aio_fio_terse(char *line, int write, double *iops, int *fio_err);
/* Runs fio once: 0 with its IOPS, or -1 with "fio ..." in err. */
int mb_aio_fio_run(const struct mb_aio_fio_job *j, double *iops, char *err, size_t errlen);

/* ===== Out-of-core applications (CAM's evaluation) ======================
 * Tiled GEMM, external merge sort and random row gather over the striped
 * volume, each runnable in five modes: the engine waited at once (sync) or
 * double-buffered (async: submit the next batch, wait for the previous,
 * compute), the compute thread doing synchronous preads (posix), and the
 * two phases alone: compute with the data already in memory (compute) and
 * the same I/O without the compute (io). mb-ooc drives them; the
 * gather routine and the Zipf sampler are for other libraries (GNN feature
 * extraction) as well. Data files hold deterministic content (prepare), so
 * every run is verified. Messages name mb-ooc's flags. */

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
/* Whether the posix reads and the checks bypass the page cache (O_DIRECT):
 * 1 or 0; *fallback says why not where O_DIRECT was asked for ("none"). */
int mb_ooc_direct(const struct mb_ooc *o, const char **fallback);
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

/* Sorts keys[0..n) ascending (LSD radix); tmp holds n keys. 0, or -1
 * out of memory (keys untouched). */
int mb_ooc_sort_u64(uint64_t *keys, size_t n, uint64_t *tmp);

/* ===== Offloaded model states (mb_ostore, Ratel's optimizer store) =======
 * Named extents on a striped volume of files the store creates in a
 * folder (O_EXCL | O_NOFOLLOW; removed at close): per tensor its fp32
 * master weights, Adam moments and fp16 working copy ("<name>.P32", ".m",
 * ".v", ".P16"), plus named blobs (activations). Every extent starts on a
 * block; each block carries a CRC32C kept in memory, computed on every
 * write and checked on every read (a mismatch is an error naming the
 * extent and the offset). I/O runs on the mb_aio engine. A per-file rate
 * cap (a token bucket per file, reserved at submission and waited for at
 * completion) lets N files on one disk stand for N slower SSDs: an
 * emulation, which mb_ostore_emulation states. mb_ostore_step(i, grad)
 * reads tensor i's P32, m and v, calls the update (nn's Adam plugs in) and
 * writes P32, m, v and P16 back, in one of three orders:
 *   serial     in the caller, each transfer waited for (ZeRO-Infinity's
 *              optimizer after backward);
 *   naive      on the store's thread, read, update, write per tensor, each
 *              transfer waited for, so the caller's backward runs meanwhile;
 *   optimized  on the store's thread: R(i), R(i-1), W(i): tensor i-1 (the
 *              next in backward order) is read ahead while i is updated and
 *              i's write is waited for only when its buffers are needed.
 *              mb_ostore_read_ahead fills the store's idle sets earlier
 *              (forward, when the storage would idle) with the tensors
 *              backward updates first; a step finds its tensor there.
 * Faults (tests): MB_FAULT_INJECT=corrupt-state flips a bit of a seeded
 * random block of a seeded tensor's state after its first write (the next
 * read reports it); write-error fails the first write of a seeded tensor's
 * state with EIO (reported with the errno text); corrupt-act flips a seeded
 * bit of the first blob (activation) write to complete, in the blocks it
 * wrote (the read back of that blob reports it, naming blob and offset). */
#define MB_OSTORE_SETS 3 /* step buffer sets (P32, m, v, P16 of the largest tensor each) */
enum mb_ostore_field { MB_OSTORE_P32, MB_OSTORE_M, MB_OSTORE_V, MB_OSTORE_P16, MB_OSTORE_NFIELDS };
enum mb_ostore_order { MB_OSTORE_SERIAL, MB_OSTORE_NAIVE, MB_OSTORE_OPTIMIZED };
extern const char *const mb_ostore_order_names[]; /* "serial", "naive", "optimized" */
extern const char *const mb_ostore_field_names[]; /* "P32", "m", "v", "P16" */
/* Parses an order's name: 0 and *out, or -1. */
int mb_ostore_parse_order(const char *s, enum mb_ostore_order *out);

struct mb_ostore_tensor {
    const char *name;
    uint64_t n;                 /* elements: P32, m, v are fp32, P16 two bytes each */
};
struct mb_ostore_blob {
    const char *name;
    uint64_t bytes;
};
/* A chunk of tensor i's state in the store's buffers during an update:
 * elements [off, off + n) of the tensor (off 0 and n the whole tensor
 * without a chunk size); p32[0] is element off. */
struct mb_ostore_state {
    float *p32, *m, *v;
    uint16_t *p16;
    uint64_t n, off;
};
/* The update: reads grad (the whole tensor's: its element st->off is
 * the chunk's first) and st's P32, m, v; writes P32, m, v and P16.
 * 0, or non-zero with the reason in err (the step fails with it). */
typedef int (*mb_ostore_update_fn)(void *ctx, int i, const struct mb_ostore_state *st, const void *grad,
                                   char *err, size_t errlen);

struct mb_ostore_opts {
    const char *dir;            /* folder for the files (must exist) */
    int nfiles;                 /* 1..MB_STORAGE_MAX_FILES; 0 = 1 */
    size_t stripe;              /* multiple of 4096; 0 = 1 MiB */
    size_t block;               /* CRC block, multiple of 4096; 0 = 64 KiB */
    double file_gbps;           /* per-file cap in 1e9 bytes/s; <= 0: none */
    int io_threads;             /* engine threads; 0 = CAM's rule */
    int buffered;               /* never O_DIRECT */
    enum mb_ostore_order order;
    /* Elements per update at most (DeepSpeed's sub-group): a tensor's step
     * runs its chunks last to first, each read, updated and written alone,
     * so the buffer sets hold a chunk, not the largest tensor; rounded up
     * to the block's alignment (mb_ostore_unit_elems). 0: whole tensors. */
    uint64_t chunk;
    mb_ostore_update_fn update;
    void *ctx;
    const struct mb_ostore_tensor *tensors;
    int ntensors;
    const struct mb_ostore_blob *blobs;
    int nblobs;
    uint64_t seed;              /* fault positions */
    /* Optional: called after each transfer ("read", "write": the extent's
     * name, from submission to completion) and each update ("update": the
     * tensor's name), with mb_now() times, from the thread that waited or
     * updated (a program's trace spans). */
    void (*on_span)(void *ctx, const char *what, const char *name, double start, double end);
    void *span_ctx;
};

struct mb_ostore_stats {
    uint64_t read_bytes, write_bytes, reads, writes, steps;
    double read_busy_s, write_busy_s; /* time with a read (write) in flight */
    double io_busy_s;           /* time with either in flight (they share a file) */
    double update_s;            /* in the update callback */
    double stall_s;             /* steps waiting for their reads */
    double thread_cpu_s;        /* CPU seconds of the store's thread (naive, optimized) */
    uint64_t read_aheads;       /* mb_ostore_read_ahead's reads submitted (a tensor's three) */
    uint64_t read_aheads_dropped; /* read ahead (either way) and never used by a step */
};

struct mb_ostore;
struct mb_ostore_io;

/* The host memory mb_ostore_open takes for its step buffers and I/O (the
 * engine's arena): MB_OSTORE_SETS sets of the largest update unit's P32,
 * m, v and P16 with their blocks' tails, and 4 MiB; what a caller's host
 * budget must leave the store. max_n: that unit's elements
 * (mb_ostore_unit_elems; 0: blobs only); block: the CRC block (0: the
 * default). */
uint64_t mb_ostore_host_bytes(uint64_t max_n, size_t block);
/* The largest update unit's elements at most, what mb_ostore_host_bytes
 * takes: max_n (the largest tensor) without a chunk size, else the chunk
 * rounded up to a multiple of block / 2 (every field's chunk starts on a
 * block) when that is smaller. A tensor is cut into as few chunks as
 * that allows, of equal length (aligned) but its last. */
uint64_t mb_ostore_unit_elems(uint64_t max_n, uint64_t chunk, size_t block);
/* The elements of the unit a step of a tensor of n runs first (its last
 * chunk; what mb_ostore_read_ahead reads). */
uint64_t mb_ostore_first_unit_elems(uint64_t n, uint64_t chunk, size_t block);
/* Creates the files and opens the engine. NULL with the reason in err
 * (a file that exists, a bad folder, a bad option). */
struct mb_ostore *mb_ostore_open(const struct mb_ostore_opts *o, char *err, size_t errlen);
/* Extent id of "<tensor>.<field>" or of a blob name; -1 when unknown. */
int mb_ostore_extent(const struct mb_ostore *s, const char *name);
/* Extent id of tensor i's field. */
int mb_ostore_tensor_extent(const struct mb_ostore *s, int i, enum mb_ostore_field f);
uint64_t mb_ostore_extent_bytes(const struct mb_ostore *s, int ext);
const char *mb_ostore_extent_name(const struct mb_ostore *s, int ext);
/* Asynchronous read (op MB_AIO_READ) or write of [off, off + len) of an
 * extent: off a multiple of the block, len a multiple of it or reaching the
 * extent's end; buf lives until the wait. 0 and *io, or -1 with err. */
int mb_ostore_submit(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf,
                     struct mb_ostore_io **io, char *err, size_t errlen);
/* Waits (the rate cap included), checks every block read against its
 * CRC32C; frees io. 0, or -1 with err naming the extent and offset. */
int mb_ostore_wait(struct mb_ostore_io *io, char *err, size_t errlen);
/* mb_ostore_wait on each of list[0..n) that is not NULL, set to NULL
 * after; 0, or -1 with the first failure's reason in err. */
int mb_ostore_wait_all(struct mb_ostore_io **list, int n, char *err, size_t errlen);
/* Synchronous submit + wait. */
int mb_ostore_rw(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf, char *err,
                 size_t errlen);
/* Updates tensor i with grad (which lives until mb_ostore_drain) in the
 * store's order; naive and optimized return once the step is queued.
 * 0, or -1 with the first failure of any step so far. */
int mb_ostore_step(struct mb_ostore *s, int i, const void *grad, char *err, size_t errlen);
/* The optimized order only: tensor i's P32, m and v read now into one of
 * the store's idle buffer sets (MB_OSTORE_SETS: no memory beyond the
 * steps'), for a step of i that comes later; queued to the store's thread
 * like a step. A no-op when i is read already or no set is idle; a read
 * no step used is dropped by mb_ostore_drain (counted in the stats). The
 * caller must not write i meanwhile (every step of i since the last drain
 * done). 0, or -1 (a bad i, another order, the first failure). */
int mb_ostore_read_ahead(struct mb_ostore *s, int i, char *err, size_t errlen);
/* Waits until the first n steps since open have run their update (so
 * their gradients may be reused: a caller double-buffers them); 0, or -1
 * with the first failure. */
int mb_ostore_wait_updated(struct mb_ostore *s, uint64_t n, char *err, size_t errlen);
/* Waits until every queued step is done; 0, or -1 with the first failure. */
int mb_ostore_drain(struct mb_ostore *s, char *err, size_t errlen);
void mb_ostore_stats(struct mb_ostore *s, struct mb_ostore_stats *out);
/* The emulation statement for the result file ("" without a rate cap). */
void mb_ostore_emulation(const struct mb_ostore *s, char *buf, size_t len);
/* The engine's report (fallbacks). */
const struct mb_aio *mb_ostore_engine(const struct mb_ostore *s);
/* Drains, closes the engine and removes the files. */
void mb_ostore_close(struct mb_ostore *s);
/* Removes the files now (unlinkat only: async-signal-safe, so a program
 * registers it as a clean-up hook for a run ended by a signal); a second
 * call, or the close after it, removes nothing more. */
void mb_ostore_unlink(struct mb_ostore *s);
/* The path of the store's file f (0..nfiles-1) when the store made it,
 * else NULL: another process on the host can remove the files of a store
 * whose process was killed (SIGKILL runs no clean-up). */
const char *mb_ostore_path(const struct mb_ostore *s, int f);

#ifdef __cplusplus
}
#endif

#endif
