/* The memory pool (after CCCL): every rank of a node maps one shared file
 * (/dev/shm by default; any shared mapping, e.g. a DAX device or a CXL
 * memory file, through a path) laid out as one region per rank: two small
 * slots, then a data slot. Collectives go through the pool by copying in
 * and reading peers' slots; doorbells are the sequence counters of the
 * context. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int mb_coll_shm_with(struct mb_coll_ctx *c, const struct mb_coll_args *a, char **small, char **data,
                     size_t data_bytes);

static void describe(struct mb_coll_ctx *c, int fd)
{
    struct statfs fs;
    struct stat st;
    const char *kind = "unknown file system";
    if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
        kind = "character device (DAX)";
    else if (fstatfs(fd, &fs) == 0)
        kind = fs.f_type == TMPFS_MAGIC ? "tmpfs" : fs.f_type == EXT4_SUPER_MAGIC ? "ext4"
             : fs.f_type == XFS_SUPER_MAGIC ? "xfs" : fs.f_type == HUGETLBFS_MAGIC ? "hugetlbfs" : kind;
    snprintf(c->pool_backing, sizeof(c->pool_backing), "%s (%s)", c->pool_path, kind);
}

int mb_coll_pool_open(struct mb_coll_ctx *c, const char *path)
{
    char name[sizeof(c->pool_path)] = "";
    int ok = 1;
    c->pool_fd = -1;
    if (c->node_rank == 0) {
        struct stat st;
        const char *dir = path ? path : "/dev/shm";
        if (!path || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
            snprintf(name, sizeof(name), "%s/movebench-pool-%ld-%d", dir, (long)getpid(), c->rank);
        else
            snprintf(name, sizeof(name), "%s", path);
        int fd = open(name, O_RDWR | O_CREAT, 0600);
        if (fd < 0) {
            snprintf(c->pool_err, sizeof(c->pool_err), "--pool-path %s: cannot create the pool: %s", name,
                     strerror(errno));
            ok = 0;
        } else {
            close(fd);
            c->pool_created = path == NULL || strcmp(name, path) != 0;
        }
    }
    (void)ok;
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, c->node_comm);
    MPI_Bcast(c->pool_err, sizeof(c->pool_err), MPI_CHAR, 0, c->node_comm);
    snprintf(c->pool_path, sizeof(c->pool_path), "%s", name);
    if (!c->pool_err[0]) {
        c->pool_fd = open(name, O_RDWR);
        if (c->pool_fd < 0)
            snprintf(c->pool_err, sizeof(c->pool_err), "--pool-path %s: cannot open the pool: %s", name,
                     strerror(errno));
    }
    int mine = c->pool_fd >= 0, all;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all) {
        if (!c->pool_err[0])
            snprintf(c->pool_err, sizeof(c->pool_err), "--pool-path %s: a rank could not open the pool", name);
        if (c->pool_fd >= 0)
            close(c->pool_fd);
        c->pool_fd = -1;
        return -1;
    }
    describe(c, c->pool_fd);
    return 0;
}

/* Maps at least data_bytes of data slot per rank (collective over the node). */
static int pool_reserve(struct mb_coll_ctx *c, size_t data_bytes)
{
    size_t stride = 2 * MB_COLL_SMALL + (data_bytes + 4095) / 4096 * 4096;
    if (c->pool_base && stride <= c->pool_stride)
        return 0;
    if (stride < ((size_t)1 << 20))
        stride = (size_t)1 << 20;
    if (c->pool_base)
        munmap(c->pool_base, c->pool_stride * (size_t)c->node_size);
    c->pool_base = NULL;
    int ok = 1;
    size_t total = stride * (size_t)c->node_size;
    struct stat st;
    if (c->node_rank == 0 && fstat(c->pool_fd, &st) == 0 && !S_ISCHR(st.st_mode) &&
        (size_t)st.st_size < total && ftruncate(c->pool_fd, (off_t)total) != 0) {
        mb_warn("collectives: pool %s: cannot grow to %zu bytes: %s", c->pool_path, total, strerror(errno));
        ok = 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, c->node_comm);
    if (!ok)
        return -1;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, c->pool_fd, 0);
    ok = p != MAP_FAILED;
    if (!ok)
        mb_warn("collectives: pool %s: mmap of %zu bytes: %s", c->pool_path, total, strerror(errno));
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->node_comm);
    if (!all) {
        if (ok)
            munmap(p, total);
        return -1;
    }
    c->pool_base = p;
    c->pool_stride = stride;
    return 0;
}

void mb_coll_pool_close(struct mb_coll_ctx *c)
{
    if (c->pool_base)
        munmap(c->pool_base, c->pool_stride * (size_t)c->node_size);
    c->pool_base = NULL;
    if (c->pool_fd >= 0) {
        close(c->pool_fd);
        c->pool_fd = -1;
        if (c->node_rank == 0 && c->pool_created)
            unlink(c->pool_path);
    }
}

const char *mb_coll_pool_backing(const struct mb_coll_ctx *c) { return c->pool_fd >= 0 ? c->pool_backing : ""; }

static int pool_available(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nnodes != 1) {
        snprintf(why, len, "the communicator spans %d nodes; the pool is shared within one", c->nnodes);
        return 0;
    }
    if (c->pool_fd < 0) {
        snprintf(why, len, "%s", c->pool_err[0] ? c->pool_err : "no pool opened (mb_coll_pool_open)");
        return 0;
    }
    return 1;
}

static int pool_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), need = a->count * es;
    if (a->kind == MB_COLL_REDUCE_SCATTER)
        need *= (size_t)c->node_size;
    if (pool_reserve(c, need) != 0)
        return -1;
    int p = c->node_size;
    char *small[p], *data[p];
    for (int q = 0; q < p; q++) {
        small[q] = (char *)c->pool_base + (size_t)q * c->pool_stride;
        data[q] = small[q] + 2 * MB_COLL_SMALL;
    }
    return mb_coll_shm_with(c, a, small, data, need);
}

const struct mb_coll_algo mb_coll_algo_pool = {
    .name = "pool",
    .description = "CCCL-style pool: a shared file mapped by every rank of the node, data slots + doorbells",
    .kinds = 1u << MB_COLL_ALLREDUCE | 1u << MB_COLL_REDUCE_SCATTER | 1u << MB_COLL_ALLGATHER |
             1u << MB_COLL_BCAST | 1u << MB_COLL_REDUCE,
    .available = pool_available,
    .run = pool_run,
};
