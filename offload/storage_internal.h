/* Internal to offload/: the storage modes' entries and what they share. */
#ifndef MB_OFFLOAD_STORAGE_INTERNAL_H
#define MB_OFFLOAD_STORAGE_INTERNAL_H

#include "aio.h"

/* Blocking modes' submit: runs the mode's rw over reqs[0..n) in order,
 * stopping at the first failure (later requests are left as they were); t
 * records the failures. Always 0. */
int storage_each(struct mb_storage *s, struct mb_aio_req *reqs, size_t n, struct mb_storage_ticket *t);
/* Blocking modes' wait: the failures submit recorded. */
int storage_blocking_wait(struct mb_storage *s, struct mb_storage_ticket *t);

/* MB_AIO_INJECT=nomem:N (tests): 1 when this is the N-th allocation of the
 * process that asks (the apps' and the image's), so every failure path is
 * reachable. */
int storage_inject_nomem(void);

#endif
