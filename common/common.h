/* movebench common library: errors and logging, clocks and CPU time,
 * sorting and medians of samples, growing arrays, "key = value" lines,
 * hashing (splitmix64), memory (host, node-shared, pinned, device), the
 * memory budget (cgroup or mlock), the stage-pipeline runtime, CRC32C, a
 * token bucket, a capped arena, an emulated device-host link and thread
 * pinning. Shared by every library and program; depends only on MPI,
 * pthreads, hwloc and libc (and on the CUDA runtime in the CUDA build,
 * behind MB_HAVE_CUDA). */
#ifndef MB_COMMON_H
#define MB_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* ---- errors and logging ---------------------------------------------- */

/* Exit status for bad input (a flag, a file): DESIGN.md's convention. */
#define MB_EXIT_USAGE 2

/* Program name used as the prefix of every message ("mb-coll"). */
void mb_set_progname(const char *name);
const char *mb_progname(void);

/* "mb-coll: <msg>" on stderr. */
void mb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print, then abort the whole MPI job with the given status (or exit if MPI
 * is not initialised). */
_Noreturn void mb_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- clocks ----------------------------------------------------------- */

/* Monotonic seconds (CLOCK_MONOTONIC). */
double mb_now(void);
/* UTC wall-clock time as ISO 8601 ("2026-12-02T13:53:31Z"). */
void mb_utc_iso8601(char *buf, size_t len);
/* CPU seconds the hypervisor has given other guests while this machine's
 * CPUs wanted to run ("steal" in /proc/stat), summed over the CPUs since
 * boot; NAN where the kernel does not report it. The difference over an
 * interval / (interval x online CPUs) is the share of the machine lost to
 * the host: a timing taken while it is large measured the neighbours. */
double mb_host_steal_s(void);

/* CPU seconds used by the calling thread (thread = 1) or by the whole
 * process, every thread included (thread = 0). */
double mb_cpu_s(int thread);

/* Makes *p (an array of *cap elements of elem bytes) hold at least need,
 * doubling its capacity: 0, or -1 out of memory (*p unchanged). */
int mb_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Sorts x ascending in place (NaN last). */
void mb_sort_doubles(double *x, size_t n);
/* The median of x[0..n) (sorting x in place; the mean of the middle two
 * for even n); NaN for n = 0. */
double mb_median(double *x, size_t n);

/* ---- "key = value" text ------------------------------------------------ */

/* s without its leading and trailing white space (isspace), cut in place. */
char *mb_trim(char *s);
/* One line of "key = value" text (a profile, a rates file), in place: cuts a
 * '#' comment and the white space around key and value. 0 for a blank or
 * comment-only line; 1 with *key and *val set; -1 when the line has text but
 * no '=' (*key is then that text, for the message). */
int mb_kv_line(char *line, char **key, char **val);

/* ---- hashing and random numbers ---------------------------------------- */

/* splitmix64's output function of x + 0x9e3779b97f4a7c15: a bijective
 * 64-bit mix. Counter-based randomness (a hash of seed and indices) gives
 * the same bits whatever the threads, ranks or order of the work. */
static inline uint64_t mb_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The next number of the splitmix64 stream whose state is *state. */
static inline uint64_t mb_splitmix64(uint64_t *state)
{
    uint64_t r = mb_mix64(*state);
    *state += 0x9e3779b97f4a7c15ULL;
    return r;
}

/* ---- memory ----------------------------------------------------------- */

enum mb_mem_kind {
    MB_MEM_HOST,    /* aligned host memory (huge pages when asked) */
    MB_MEM_SHARED,  /* node-shared: one MPI-3 shared window per node */
    MB_MEM_PINNED,  /* page-locked host memory (CUDA build) */
    MB_MEM_DEVICE,  /* CUDA device memory (CUDA build) */
};

/* One allocation. For MB_MEM_SHARED every rank of the node's shared
 * communicator calls mb_buf_alloc collectively and can reach the peers'
 * segments through mb_buf_peer(). */
struct mb_buf {
    void *ptr;
    size_t bytes;
    enum mb_mem_kind kind;
    int huge;             /* host: backed by huge pages */
    MPI_Win win;          /* shared: the window */
    MPI_Comm node_comm;   /* shared: ranks of this node (duplicated) */
};

#define MB_ALIGN 4096

const char *mb_mem_kind_name(enum mb_mem_kind kind);
/* Returns 0, or -1 with a message in err. comm is used by MB_MEM_SHARED
 * only (it is split by node). huge asks for transparent huge pages. */
int mb_buf_alloc(struct mb_buf *buf, enum mb_mem_kind kind, size_t bytes,
                 int huge, MPI_Comm comm, char *err, size_t errlen);
/* Address of node-peer `peer`'s segment of a shared buffer (NULL otherwise). */
void *mb_buf_peer(const struct mb_buf *buf, int peer);
void mb_buf_free(struct mb_buf *buf);

/* Copies between any two kinds (cudaMemcpy where a side is on the device). */
int mb_buf_copy(void *dst, enum mb_mem_kind dst_kind, const void *src,
                enum mb_mem_kind src_kind, size_t bytes);

/* ---- CUDA presence ---------------------------------------------------- */

/* 1 when built with CUDA. */
int mb_cuda_built(void);
/* 0 when a usable device exists; otherwise -1 and the reason in err
 * (a CPU build, or the runtime's error such as "no CUDA-capable driver"). */
int mb_cuda_probe(char *err, size_t errlen);
/* Runtime and driver versions and device name, "" in a CPU build. */
void mb_cuda_describe(char *buf, size_t len);

/* Device-side timing with CUDA events on the default stream, for work that
 * the GPU does: start records an event, stop records another, waits for it
 * and returns the seconds between them (-1 in a CPU build or on error). */
struct mb_cuda_timer {
    void *start, *stop; /* cudaEvent_t */
};
int mb_cuda_timer_init(struct mb_cuda_timer *t, char *err, size_t errlen);
void mb_cuda_timer_start(struct mb_cuda_timer *t);
double mb_cuda_timer_stop(struct mb_cuda_timer *t);
void mb_cuda_timer_free(struct mb_cuda_timer *t);

/* ---- memory budget (cgroup or mlock) -----------------------------------
 * The budget holds for everything the process touches, the page cache of
 * mmap'd files included: a child memory cgroup (v2 memory.max, or v1
 * memory.limit_in_bytes) that the process joins before it loads data.
 * Where cgroups are refused, the rest of memory is pinned (mlock), as
 * Ratel's evaluation does, so the kernel has only the budget left. */

enum mb_budget_how { MB_BUDGET_AUTO, MB_BUDGET_CGROUP, MB_BUDGET_MLOCK, MB_BUDGET_NONE };

struct mb_budget {
    size_t bytes;
    char method[16];      /* "cgroup-v2", "cgroup-v1", "mlock", "none" */
    char detail[600];     /* the cgroup folder, or what was pinned, or why none */
    char cgroup[512];     /* the child cgroup folder ("" when none) */
    char home[512];       /* the folder we came from (to move back) */
    int v2;
    void *pinned;         /* this process's own pin (mlock), never another rank's */
    size_t pinned_bytes;
    int owner;            /* created the cgroup: removes it on release */
    int subtree_added;    /* v2: this run enabled +memory in home's subtree_control */
    int repin;            /* mlock: the pin was released by mb_budget_suspend */
    uint64_t limit_read;  /* the limit as the kernel reads it back (page-rounded) */
    /* the watcher (mb_budget_watch): a limit hit lifts the limit, so the
     * kernel never kills the run, and is reported to the caller instead */
    _Atomic int exceeded;
    _Atomic int watch_stop;
    uint64_t exceeded_peak;
    int watching;
    unsigned long watcher;  /* pthread_t */
};

/* Creates the limit for `bytes` and moves this process in. AUTO tries a
 * cgroup then mlock. 0, or -1 with the reason in err. MLOCK pins
 * MemAvailable - bytes ($MB_GNN_MEMAVAILABLE overrides MemAvailable, for
 * tests on a shared machine). */
int mb_budget_enforce(struct mb_budget *b, size_t bytes, enum mb_budget_how how, char *err,
                      size_t errlen);
/* This process (re)joins the cgroup `b` describes (MPI ranks: the node's
 * first rank creates, the others join a copy with owner = 0). 0 or -1. */
int mb_budget_join(struct mb_budget *b, char *err, size_t errlen);
/* Charged bytes now and the peak since enforcement (cgroup), else 0. */
uint64_t mb_budget_usage(const struct mb_budget *b);
uint64_t mb_budget_peak(const struct mb_budget *b);
/* Anonymous memory, which no budget can reclaim the way it reclaims page
 * cache: charged to the cgroup (memory.stat rss, v2 anon), else this
 * process's RssAnon; 0 where it is not reported. */
uint64_t mb_budget_anon(const struct mb_budget *b);
/* Times the kernel hit the limit (v1 failcnt, v2 events "max"), else 0. */
uint64_t mb_budget_limit_hits(const struct mb_budget *b);
/* Starts this process's watcher of the cgroup (every 10 ms): where the
 * kernel cannot keep the charge under the limit (v1: the group is under
 * OOM, its OOM killer disabled at enforcement; v2: anonymous memory past
 * memory.high, which throttles instead of killing), it records the peak,
 * lifts the limit so the run is not killed, and sets `exceeded`. 0, or -1
 * (no cgroup, or no thread). */
int mb_budget_watch(struct mb_budget *b);
/* Whether the limit was hit (the watcher lifted it); *peak: the charge then. */
int mb_budget_exceeded(const struct mb_budget *b, uint64_t *peak);
/* The in-memory upper bound runs outside the budget: suspend moves this
 * process back to home (cgroup) or releases its pin (mlock), resume
 * rejoins or pins the same bytes again. 0, or -1 with the reason in err
 * (the budget then no longer holds). */
int mb_budget_suspend(struct mb_budget *b, char *err, size_t errlen);
int mb_budget_resume(struct mb_budget *b, char *err, size_t errlen);
/* Moves back, removes the cgroup (owner) and restores the settings the run
 * changed (subtree_control), unpins. Failures are reported on stderr. */
void mb_budget_release(struct mb_budget *b);
/* For a signal handler (async-signal-safe): moves this process back to
 * home and, for the owner, removes the cgroup (a few tries while other
 * ranks leave) and restores subtree_control. */
void mb_budget_release_signal(struct mb_budget *b);
/* Writes back and evicts a file's pages from the page cache, so its pages
 * are charged to whoever reads them next. 0 or -1. */
int mb_drop_file_cache(const char *path);

/* ---- checksums --------------------------------------------------------- */

/* CRC32C (Castagnoli, iSCSI/ext4's polynomial) of buf, continuing from crc
 * (start with 0): SSE4.2's crc32 instruction where the CPU has it, else a
 * table. mb_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t mb_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- rate limiting (a token bucket) -------------------------------------
 * Models a link or device slower than the machine's, and only where a
 * reproduction says so (DESIGN.md: declared as emulation). Virtual time:
 * the bucket refills at `rate` bytes/s up to `burst` bytes; reserving n
 * bytes returns the time (mb_now) at which they have passed, which the
 * caller waits for with mb_rate_pace. Not thread-safe: one owner. */
struct mb_rate {
    double rate;      /* bytes per second; <= 0: unlimited */
    double burst;     /* bucket depth in bytes */
    double t_free;    /* when the bytes reserved so far have passed */
};
void mb_rate_init(struct mb_rate *r, double bytes_per_s, double burst_bytes);
/* Reserves n bytes; returns when they have passed (now when unlimited). */
double mb_rate_reserve(struct mb_rate *r, double n);
/* Reserves n more bytes right behind the previous reservation (the rest of
 * one transfer), whatever the time now: a pacer that woke late catches up
 * instead of losing the time (a loaded machine's wake-ups are late). */
double mb_rate_reserve_more(struct mb_rate *r, double n);
/* Waits (clock_nanosleep) until mb_now() >= t: the bucket's pacing. */
void mb_rate_pace(double t);

/* ---- capped arena ------------------------------------------------------
 * A capped allocator over one region (a tier's memory: the emulated GPU's,
 * say): bump allocation with any power-of-two alignment, marks to release
 * back to, reset. Asking more than is free is an error that names the
 * tier, the bytes asked and the bytes free (mb_arena_error), never a
 * fallback to malloc. Thread-safe. */
struct mb_arena;
/* An arena of `bytes` over memory it allocates (page-aligned), or over the
 * caller's region when mem is not NULL (not freed by mb_arena_free). name:
 * the tier in messages ("dev-mem"). NULL with the reason in err. */
struct mb_arena *mb_arena_new(const char *name, size_t bytes, void *mem, char *err, size_t errlen);
/* bytes from the arena aligned to align (0: 64; a power of two), or NULL:
 * the message ("dev-mem: arena overrun: asked N bytes, M free of C") in
 * mb_arena_error and, when err is not NULL, in err. */
void *mb_arena_alloc(struct mb_arena *a, size_t bytes, size_t align, char *err, size_t errlen);
/* The position to come back to, and coming back (frees what came after). */
size_t mb_arena_mark(struct mb_arena *a);
void mb_arena_release(struct mb_arena *a, size_t mark);
void mb_arena_reset(struct mb_arena *a);
size_t mb_arena_used(struct mb_arena *a);
size_t mb_arena_free_bytes(struct mb_arena *a);
size_t mb_arena_peak(struct mb_arena *a);
size_t mb_arena_capacity(const struct mb_arena *a);
const char *mb_arena_name(const struct mb_arena *a);
/* The last overrun's message, "" when none. */
const char *mb_arena_error(struct mb_arena *a);
void mb_arena_free(struct mb_arena *a);

/* ---- emulated device-host link -----------------------------------------
 * Emulation of a PCIe link between the host and a device that is not here
 * (its memory is an mb_arena in host memory): one copy thread per
 * direction does a real memcpy, chunk by chunk, each chunk paced by a token
 * bucket at the direction's rate (mb_rate): no sleep stands for the copy
 * itself. Copies in one direction complete in order; a ticket is waited
 * for. Counters per direction: bytes, copies, busy time (the copy thread
 * working or pacing), pacing time and the thread's CPU time. */
enum { MB_LINK_H2D = 0, MB_LINK_D2H = 1 };
struct mb_link_opts {
    double gbps[2];     /* per direction, 1e9 bytes/s; <= 0: as fast as memcpy */
    size_t chunk;       /* bytes copied per pacing step; 0 = 256 KiB */
    int cpu[2];         /* hwloc PU (logical index) to pin each copy thread to; -1: not pinned */
    /* Optional: called by the copy thread after each copy, with its
     * direction, bytes and mb_now() times (a program's trace spans). */
    void (*on_copy)(void *ctx, int dir, size_t bytes, double start, double end);
    void *ctx;
};
struct mb_link_stats {
    uint64_t bytes, copies;
    double busy_s, paced_s, cpu_s;
};
struct mb_link;
/* The emulation statement a result file's `emulation` attribute records. */
#define MB_LINK_EMULATION "device-host link: memcpy by one copy thread per direction, paced by a token bucket (mb_link)"
struct mb_link *mb_link_new(const struct mb_link_opts *o, char *err, size_t errlen);
typedef uint64_t mb_link_ticket;
/* Queues a copy of bytes from src to dst in direction dir; the memory
 * lives until the ticket is waited for. Returns its ticket. */
mb_link_ticket mb_link_copy(struct mb_link *l, int dir, void *dst, const void *src, size_t bytes);
/* 1 when the copy (and every earlier one in its direction) is done. */
int mb_link_test(struct mb_link *l, mb_link_ticket t);
void mb_link_wait(struct mb_link *l, mb_link_ticket t);
void mb_link_stats(struct mb_link *l, int dir, struct mb_link_stats *s);
/* Waits for what is queued, stops the threads. */
void mb_link_free(struct mb_link *l);

/* ---- threads: pinning and CPU time -------------------------------------- */

/* Processing units (hwloc PUs) this process may run on; 0 when unknown. */
int mb_pu_count(void);
/* The largest data cache hwloc reports (the last level), in bytes; 0 when
 * unknown. */
size_t mb_llc_bytes(void);
/* Binds the calling thread to PU `pu` (hwloc logical index among the
 * allowed PUs). 0, or -1 with the reason in err. */
int mb_pin_thread(int pu, char *err, size_t errlen);
/* CPU seconds used so far by thread tid (a pthread_t of this process);
 * NAN when the kernel does not say. */
double mb_thread_cpu_s(unsigned long tid);

/* ---- pipeline runtime ---------------------------------------------------
 * Stages run in order on every batch; each stage is a team of threads
 * (its leader takes the next batch from the stage's input queue, the team
 * runs fn together, the leader passes the batch on). Batches live in
 * `nslots` slots, which bounds every queue: with nslots = 1 the stages
 * and training are serialised (nopipe), with more, preparation of batch i
 * overlaps training of batch i-1. The caller (training) takes finished
 * batches in order with mb_pipe_next and gives the slot back with
 * mb_pipe_release. */

/* One stage's work on one batch: thread tid of nthreads. Returns 0, or
 * non-zero to mark the batch failed (later stages skip it). */
typedef int (*mb_stage_fn)(void *ctx, int slot, long batch, int tid, int nthreads);

struct mb_stage {
    const char *name;
    int nthreads;
    mb_stage_fn fn;
    int instances;  /* teams working on different batches at once (0 = 1);
                       batches still leave the stage in order */
};

#define MB_PIPE_MAX_STAGES 8

struct mb_pipe;
struct mb_pipe *mb_pipe_new(const struct mb_stage *stages, int nstages, int nslots, void *ctx);
/* Starts a pass over batches 0..nbatches-1 (the previous pass must be
 * drained). 0 or -1. */
int mb_pipe_start(struct mb_pipe *p, long nbatches);
/* Next finished batch, in order: 1 with *slot, *batch and *status (the
 * first failing stage's return, 0 when fine); 0 when the pass is done. */
int mb_pipe_next(struct mb_pipe *p, int *slot, long *batch, int *status);
void mb_pipe_release(struct mb_pipe *p, int slot);
/* Stops feeding new batches; the caller drains what is in flight with
 * mb_pipe_next/mb_pipe_release (after an error). */
void mb_pipe_abort(struct mb_pipe *p);
/* Seconds stage s spent working during the current pass (wall time of its
 * teams on the batches, summed over instances), and the time
 * mb_pipe_next waited. */
double mb_pipe_stage_busy(const struct mb_pipe *p, int s);
double mb_pipe_wait_time(const struct mb_pipe *p);
int mb_pipe_nstages(const struct mb_pipe *p);
const char *mb_pipe_stage_name(const struct mb_pipe *p, int s);
void mb_pipe_free(struct mb_pipe *p);

#endif
