/* Internal: a bounded lock-free multi-producer queue of pointers (Vyukov's
 * sequence-numbered cells), one per I/O thread: compute threads push
 * batches, the I/O thread pops them. */
#ifndef MB_OFFLOAD_AIO_RING_H
#define MB_OFFLOAD_AIO_RING_H

#include <stdatomic.h>
#include <stddef.h>

struct mb_aio_cell {
    _Atomic size_t seq;
    void *v;
};

struct mb_aio_ring {
    struct mb_aio_cell *cell;
    size_t mask;
    _Atomic size_t head, tail;
};

void mb_aio_ring_init(struct mb_aio_ring *r, size_t cap_pow2);
void mb_aio_ring_free(struct mb_aio_ring *r);
int mb_aio_ring_push(struct mb_aio_ring *r, void *v); /* 0 when full */
void *mb_aio_ring_pop(struct mb_aio_ring *r);         /* NULL when empty */
int mb_aio_ring_empty(struct mb_aio_ring *r);

#endif
