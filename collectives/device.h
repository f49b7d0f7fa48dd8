/* Internal to collectives/: the CUDA side of the device algorithms (nccl,
 * cuda-ipc), behind plain C types so no C file includes a CUDA or NCCL
 * header. Implemented by device_cuda.cu in the CUDA build and by
 * device_nocuda.c otherwise (every call then fails with the reason).
 * Functions returning int give 0, or -1 with the reason in err. */
#ifndef MB_COLL_DEVICE_H
#define MB_COLL_DEVICE_H

#include <stddef.h>

#define MB_COLL_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
#define MB_COLL_IPC_HANDLE_BYTES 64 /* CUDA_IPC_HANDLE_SIZE */

/* Devices visible to this process. */
int mb_coll_dev_count(int *n, char *err, size_t errlen);
/* Selects the device of this process (node rank modulo the count). */
int mb_coll_dev_select(int device, char *err, size_t errlen);

/* NCCL: a unique id (on one rank), a communicator from it (on every rank),
 * one collective (kind, dtype and op as in coll.h) completed before return. */
int mb_coll_nccl_unique_id(void *id, char *err, size_t errlen);
int mb_coll_nccl_init(void **comm, const void *id, int nranks, int rank, char *err, size_t errlen);
int mb_coll_nccl_run(void *comm, int kind, const void *send, void *recv, size_t count, int dtype, int op,
                     int root, int rank, char *err, size_t errlen);
void mb_coll_nccl_free(void *comm);

/* CUDA IPC: a handle of the allocation that starts at ptr (a cudaMalloc
 * base: the handle names the whole allocation, and the peer's mapping
 * starts at its base); a peer's allocation opened from a handle (cached per
 * handle, closed by mb_coll_ipc_close_all). */
int mb_coll_ipc_handle(const void *ptr, void *handle, char *err, size_t errlen);
int mb_coll_ipc_open(const void *handle, void **base, char *err, size_t errlen);
void mb_coll_ipc_close_all(void);
/* dst = op over srcs[0..nsrc) of n elements (device pointers, dst may be a
 * source), and device-to-device copies; both complete before return. */
int mb_coll_dev_reduce(int dtype, int op, void *dst, const void *const *srcs, int nsrc, size_t n, char *err,
                       size_t errlen);
int mb_coll_dev_copy(void *dst, const void *src, size_t bytes, char *err, size_t errlen);

#endif
