// offload/aio's CUDA path (compiled in the CUDA variant): pinned staging and
// asynchronous copies into device memory, mapped host memory for the
// mailbox, and CAM's GPU side: a kernel that posts batches of block reads
// through the mailbox, rings the doorbell and spins on each batch's 64-bit
// completion counter while aio_post.c's host thread serves them.
#include "aio.h"
#include "aio_pattern.h"

#include <cuda_runtime.h>
#include <stdio.h>

static int fail(cudaError_t e, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: CUDA error %d (%s)", what, (int)e, cudaGetErrorString(e));
    return -1;
}

/* A copy on the runtime's per-thread stream, waited for. */
static int stage_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, char *err, size_t errlen)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, cudaStreamPerThread);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(cudaStreamPerThread);
    return e == cudaSuccess ? 0 : fail(e, "cudaMemcpyAsync", err, errlen);
}

extern "C" int mb_aio_stage_to_device(void *dev, const void *staging, size_t bytes, char *err,
                                      size_t errlen)
{
    return stage_copy(dev, staging, bytes, cudaMemcpyHostToDevice, err, errlen);
}

extern "C" int mb_aio_stage_from_device(void *staging, const void *dev, size_t bytes, char *err,
                                        size_t errlen)
{
    return stage_copy(staging, dev, bytes, cudaMemcpyDeviceToHost, err, errlen);
}

extern "C" int mb_aio_pin(void *p, size_t bytes, char *err, size_t errlen)
{
    cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped);
    return e == cudaSuccess ? 0 : fail(e, "cudaHostRegister", err, errlen);
}

extern "C" void mb_aio_unpin(void *p) { cudaHostUnregister(p); }

extern "C" int mb_aio_mapped_alloc(void **p, size_t bytes, char *err, size_t errlen)
{
    *p = NULL;
    cudaError_t e = cudaHostAlloc(p, bytes, cudaHostAllocMapped);
    return e == cudaSuccess ? 0 : fail(e, "cudaHostAlloc(mapped)", err, errlen);
}

extern "C" void mb_aio_mapped_free(void *p) { cudaFreeHost(p); }

// Region words are read with volatile loads (the host changes them while
// the kernel runs) and written with volatile stores after a system fence.
__device__ static uint64_t vload(const uint64_t *p) { return *(const volatile uint64_t *)p; }

// prefetch(): every thread describes one request of batch b, the leader
// publishes them and rings the doorbell (CAM step 1 and 3).
__device__ static void post(struct mb_aio_mailbox *mb, uint64_t b, uint64_t nblk, size_t bs, int n)
{
    struct mb_aio_post_slot *sl = &mb->slot[b % MB_AIO_POST_SLOTS];
    int i = (int)threadIdx.x;
    if (i < n) {
        struct mb_aio_post_req *q = &sl->req[i];
        q->offset = ((b * (uint64_t)n + (uint64_t)i) * 7919u % nblk) * bs;
        q->dst = ((b & 1) * (uint64_t)n + (uint64_t)i) * bs;
        q->len = (uint32_t)bs;
        q->op = MB_AIO_READ;
        q->status = 0;
    }
    if (i == 0)
        sl->n = (uint32_t)n;
    __threadfence_system(); // each thread's request (and the count) before the doorbell
    __syncthreads();
    if (i == 0)
        *(volatile uint64_t *)&mb->doorbell = b + 1;
}

// prefetch_synchronize(): the leader spins on the batch's completion
// counter, then every thread checks its block against the pattern.
__device__ static void wait_check(struct mb_aio_mailbox *mb, uint64_t b, const char *dst, size_t bs,
                                  int n, uint64_t seed, unsigned long long *bad)
{
    struct mb_aio_post_slot *sl = &mb->slot[b % MB_AIO_POST_SLOTS];
    if (threadIdx.x == 0)
        while (vload(&sl->done) < b + 1)
            ;
    __syncthreads();
    __threadfence();
    int i = (int)threadIdx.x;
    if (i >= n)
        return;
    const struct mb_aio_post_req *q = &sl->req[i];
    if (*(const volatile int32_t *)&q->status != 0) {
        atomicAdd(bad, 1ULL);
        return;
    }
    const volatile uint64_t *w = (const volatile uint64_t *)(dst + q->dst);
    unsigned long long wrong = 0;
    for (size_t k = 0; k < bs / 8; k++)
        wrong += w[k] != mb_aio_pattern_word(seed, q->offset + 8 * k);
    if (wrong)
        atomicAdd(bad, wrong);
}

// CAM's Fig. 7 loop: prefetch batch b + 1, synchronize on batch b, compute (check) on it.
__global__ static void post_kernel(struct mb_aio_mailbox *mb, char *dst, uint64_t nblk, size_t bs, int n,
                                   int nbatch, uint64_t seed, unsigned long long *bad)
{
    uint64_t base = vload(&mb->doorbell);
    post(mb, base, nblk, bs, n);
    for (int b = 0; b < nbatch; b++) {
        if (b + 1 < nbatch)
            post(mb, base + (uint64_t)b + 1, nblk, bs, n);
        wait_check(mb, base + (uint64_t)b, dst, bs, n, seed, bad);
        __syncthreads();
    }
}

extern "C" long long mb_aio_gpu_post_run(struct mb_aio_mailbox *mb, void *dst, uint64_t vol, size_t bs,
                                         int n, int nbatch, uint64_t seed, char *err, size_t errlen)
{
    if (n < 1 || n > MB_AIO_POST_MAXREQ || bs % 8 || bs == 0 || vol < bs || nbatch < 1) {
        snprintf(err, errlen, "GPU-posted batches: n %d (1..%d), bs %zu (multiple of 8), %d batches", n,
                 MB_AIO_POST_MAXREQ, bs, nbatch);
        return -1;
    }
    if (!mb->mapped) {
        snprintf(err, errlen, "GPU-posted batches: the mailbox must be mapped host memory");
        return -1;
    }
    // the kernel's batch b + 1 may only reuse a slot once batch b + 1 - SLOTS is done:
    // with two in flight at a time, four slots always are
    struct mb_aio_mailbox *dmb = NULL;
    unsigned long long *dbad = NULL, bad = 0;
    cudaStream_t st = NULL;
    cudaError_t e = cudaHostGetDevicePointer((void **)&dmb, mb, 0);
    if (e != cudaSuccess)
        return fail(e, "cudaHostGetDevicePointer", err, errlen);
    if ((e = cudaMalloc((void **)&dbad, sizeof(*dbad))) != cudaSuccess)
        return fail(e, "cudaMalloc", err, errlen);
    if ((e = cudaMemset(dbad, 0, sizeof(*dbad))) == cudaSuccess &&
        (e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)) == cudaSuccess) {
        // a non-blocking stream, so the host thread's staging copies run beside the kernel
        post_kernel<<<1, MB_AIO_POST_MAXREQ, 0, st>>>(dmb, (char *)dst, vol / bs, bs, n, nbatch, seed, dbad);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st);
        if (e == cudaSuccess)
            e = cudaMemcpy(&bad, dbad, sizeof(bad), cudaMemcpyDeviceToHost);
    }
    if (st)
        cudaStreamDestroy(st);
    cudaFree(dbad);
    if (e != cudaSuccess)
        return fail(e, "GPU-posted batches kernel", err, errlen);
    return (long long)bad;
}
