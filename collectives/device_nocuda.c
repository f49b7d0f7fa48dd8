/* CPU build: the device algorithms report that CUDA was not built in. */
#include "device.h"

#include <stdio.h>

static int not_built(char *err, size_t errlen)
{
    snprintf(err, errlen, "this build has no CUDA support (rebuild with make CUDA=1)");
    return -1;
}

int mb_coll_dev_count(int *n, char *err, size_t errlen)
{
    *n = 0;
    return not_built(err, errlen);
}
int mb_coll_dev_select(int device, char *err, size_t errlen)
{
    (void)device;
    return not_built(err, errlen);
}
int mb_coll_nccl_unique_id(void *id, char *err, size_t errlen)
{
    (void)id;
    return not_built(err, errlen);
}
int mb_coll_nccl_init(void **comm, const void *id, int nranks, int rank, char *err, size_t errlen)
{
    (void)comm, (void)id, (void)nranks, (void)rank;
    return not_built(err, errlen);
}
int mb_coll_nccl_run(void *comm, int kind, const void *send, void *recv, size_t count, int dtype, int op,
                     int root, int rank, char *err, size_t errlen)
{
    (void)comm, (void)kind, (void)send, (void)recv, (void)count, (void)dtype, (void)op, (void)root, (void)rank;
    return not_built(err, errlen);
}
void mb_coll_nccl_free(void *comm) { (void)comm; }
int mb_coll_ipc_handle(const void *ptr, void *handle, char *err, size_t errlen)
{
    (void)ptr, (void)handle;
    return not_built(err, errlen);
}
int mb_coll_ipc_open(const void *handle, void **base, char *err, size_t errlen)
{
    (void)handle, (void)base;
    return not_built(err, errlen);
}
void mb_coll_ipc_close_all(void) {}
int mb_coll_dev_reduce(int dtype, int op, void *dst, const void *const *srcs, int nsrc, size_t n, char *err,
                       size_t errlen)
{
    (void)dtype, (void)op, (void)dst, (void)srcs, (void)nsrc, (void)n;
    return not_built(err, errlen);
}
int mb_coll_dev_copy(void *dst, const void *src, size_t bytes, char *err, size_t errlen)
{
    (void)dst, (void)src, (void)bytes;
    return not_built(err, errlen);
}
