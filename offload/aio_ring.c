/* Bounded MPMC queue (Vyukov): each cell's sequence number says whether it
 * is free for the producer of that position or full for its consumer. */
#include "aio_ring.h"

#include <stdlib.h>

void mb_aio_ring_init(struct mb_aio_ring *r, size_t cap)
{
    r->cell = calloc(cap, sizeof(*r->cell));
    r->mask = cap - 1;
    for (size_t i = 0; i < cap; i++)
        atomic_store_explicit(&r->cell[i].seq, i, memory_order_relaxed);
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
}

void mb_aio_ring_free(struct mb_aio_ring *r) { free(r->cell); }

int mb_aio_ring_push(struct mb_aio_ring *r, void *v)
{
    size_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        struct mb_aio_cell *c = &r->cell[pos & r->mask];
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        long d = (long)seq - (long)pos;
        if (d == 0) {
            /* seq_cst: ordered before the producer's check of the consumer's
             * sleeping flag (see wake() in aio_engine.c) */
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_seq_cst,
                                                      memory_order_relaxed)) {
                c->v = v;
                atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
                return 1;
            }
        } else if (d < 0) {
            return 0;
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
}

void *mb_aio_ring_pop(struct mb_aio_ring *r)
{
    size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        struct mb_aio_cell *c = &r->cell[pos & r->mask];
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        long d = (long)seq - (long)(pos + 1);
        if (d == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                void *v = c->v;
                atomic_store_explicit(&c->seq, pos + r->mask + 1, memory_order_release);
                return v;
            }
        } else if (d < 0) {
            return NULL;
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

int mb_aio_ring_empty(struct mb_aio_ring *r)
{
    return atomic_load(&r->head) == atomic_load(&r->tail);
}
