/* movebench common library: memory, errors and logging, clocks.
 * Shared by every library and program; depends only on MPI and libc
 * (and on the CUDA runtime in the CUDA build, behind MB_HAVE_CUDA). */
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

#endif
