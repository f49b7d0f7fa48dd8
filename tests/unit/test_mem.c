/* The allocator: aligned host memory, a node-shared window whose peer
 * segments are reachable, copies, and a clean refusal of pinned/device
 * memory where CUDA cannot run. */
#include "../../common/common.h"
#include "check.h"

#include <stdint.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char err[256];
    struct mb_buf h, h2, sh;

    EXPECT(mb_buf_alloc(&h, MB_MEM_HOST, 12345, 0, MPI_COMM_SELF, err, sizeof(err)) == 0);
    EXPECT(((uintptr_t)h.ptr % MB_ALIGN) == 0 && h.bytes == 12345);
    memset(h.ptr, 7, 12345);
    EXPECT(mb_buf_alloc(&h2, MB_MEM_HOST, 4 << 20, 1, MPI_COMM_SELF, err, sizeof(err)) == 0);
    EXPECT(((uintptr_t)h2.ptr % (2 << 20)) == 0); /* huge-page alignment even if THP is off */
    EXPECT(mb_buf_copy(h2.ptr, MB_MEM_HOST, h.ptr, MB_MEM_HOST, 12345) == 0);
    EXPECT(((unsigned char *)h2.ptr)[12344] == 7);
    EXPECT(mb_buf_peer(&h, 0) == NULL); /* not shared */

    /* a zero-byte buffer is still a valid allocation */
    struct mb_buf z;
    EXPECT(mb_buf_alloc(&z, MB_MEM_HOST, 0, 0, MPI_COMM_SELF, err, sizeof(err)) == 0 && z.ptr);
    mb_buf_free(&z);

    EXPECT(mb_buf_alloc(&sh, MB_MEM_SHARED, 1 << 16, 0, MPI_COMM_WORLD, err, sizeof(err)) == 0);
    int nrank;
    MPI_Comm_size(sh.node_comm, &nrank);
    EXPECT(nrank >= 1);
    EXPECT(mb_buf_peer(&sh, 0) == sh.ptr); /* a singleton is its own node */
    ((int *)sh.ptr)[0] = 42;
    EXPECT(((int *)mb_buf_peer(&sh, 0))[0] == 42);
    mb_buf_free(&sh);
    EXPECT(sh.ptr == NULL);

    /* without a usable GPU, pinned and device memory are refused with a reason */
    if (mb_cuda_probe(err, sizeof(err)) != 0) {
        struct mb_buf d;
        err[0] = '\0';
        EXPECT(mb_buf_alloc(&d, MB_MEM_DEVICE, 4096, 0, MPI_COMM_SELF, err, sizeof(err)) != 0);
        EXPECT(err[0] != '\0');
        if (!mb_cuda_built())
            EXPECT(strstr(err, "CUDA=1") != NULL);
        struct mb_cuda_timer t;
        EXPECT(mb_cuda_timer_init(&t, err, sizeof(err)) != 0 || mb_cuda_built());
        mb_cuda_timer_free(&t);
    }
    EXPECT(strcmp(mb_mem_kind_name(MB_MEM_SHARED), "shared") == 0);
    mb_buf_free(&h);
    mb_buf_free(&h2);
    MPI_Finalize();
    return TEST_EXIT();
}
