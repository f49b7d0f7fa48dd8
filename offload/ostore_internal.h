/* mb_ostore's parts shared by ostore.c (extents, I/O, CRCs, faults) and
 * ostore_step.c (the update orders and the store's thread). */
#ifndef MB_OFFLOAD_OSTORE_INTERNAL_H
#define MB_OFFLOAD_OSTORE_INTERNAL_H

#include "../common/common.h"
#include "aio.h"

#include <pthread.h>
#include <signal.h>

struct ostore_extent {
    char name[96];
    uint64_t off, bytes;        /* logical volume offset (block-aligned), bytes */
    uint32_t *crc;              /* per block */
    uint8_t *written;           /* per block: 1 once a write of it completed */
    int fault_corrupt;          /* corrupt-state targets this extent */
    int fault_write;            /* write-error targets this extent */
    uint64_t fault_block, fault_bit;
};

/* One set of step buffers: an update unit's P32, m, v and P16. */
struct ostore_set {
    float *p32, *m, *v;
    uint16_t *p16;
    int unit;                   /* read into it, or -1 */
    struct mb_ostore_io *rd[3]; /* reads in flight (P32, m, v) */
    struct mb_ostore_io *wr[4]; /* writes in flight */
};

#define OSTORE_SETS MB_OSTORE_SETS

struct mb_ostore {
    struct mb_ostore_opts o;
    struct mb_aio *eng;
    int nfiles, dirfd;
    int fd[MB_STORAGE_MAX_FILES];  /* buffered descriptors (faults) */
    char *path[MB_STORAGE_MAX_FILES];
    char *file_name[MB_STORAGE_MAX_FILES];
    volatile sig_atomic_t unlinked; /* mb_ostore_unlink ran (maybe from a signal handler) */
    size_t stripe, block;
    int next;                   /* extents */
    struct ostore_extent *ext;
    int next_t;                 /* tensor extents: 4 per tensor, then blobs */
    /* update units: a tensor's chunks in order, tensor 0's first; a step of
     * tensor i runs units ubase[i + 1] - 1 down to ubase[i] */
    uint64_t max_unit;          /* the largest unit's elements */
    int *ubase, *unit_tensor;
    uint64_t *unit_off;
    int fault_blob;             /* corrupt-act: the first blob write completed gets the flip */

    pthread_mutex_t mu;         /* buckets, stats, CRC tables, first error */
    struct mb_rate rate[MB_STORAGE_MAX_FILES];
    struct mb_ostore_stats st;
    double busy_until[3];       /* read, write, either */
    char failure[512];
    int failed;

    struct ostore_set set[OSTORE_SETS];
    uint64_t write_seq[OSTORE_SETS], wcount; /* optimized: which set's writes went out first */
    /* the store's thread (naive, optimized) */
    pthread_t tid;
    int thread_started, stop;
    uint64_t updated;           /* steps whose update ran (their gradient is free) */
    pthread_cond_t more, idle;
    struct ostore_job { int i; const void *grad; int ahead; } *q; /* ahead: mb_ostore_read_ahead */
    size_t qcap, qhead, qtail;  /* FIFO [qhead, qtail) */
    int busy;
};

/* Starts and stops the store's thread; frees the buffer sets. */
int ostore_steps_init(struct mb_ostore *s, char *err, size_t errlen);
void ostore_steps_fini(struct mb_ostore *s);
/* mb_ostore_submit; from_step: a step's transfer (write-error fires on those only). */
int ostore_submit(struct mb_ostore *s, int op, int ext, uint64_t off, size_t len, void *buf, int from_step,
                  struct mb_ostore_io **iop, char *err, size_t errlen);
/* Records the first failure (later ones are dropped). */
void ostore_fail(struct mb_ostore *s, const char *msg);

#endif
