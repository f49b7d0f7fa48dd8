/* The memory pool (after CCCL): every rank of a node maps one shared file
 * (/dev/shm by default; any shared mapping, e.g. a DAX device or a CXL
 * memory file, through a path) laid out as one region per rank: two small
 * slots, then a data slot. Collectives go through the pool by copying in
 * and reading peers' slots; doorbells are the sequence counters of the
 * context. */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

int mb_coll_shm_with(struct mb_coll_ctx *c, const struct mb_coll_args *a, char **small, char **data,
                     size_t data_bytes);

/* Pool files this library creates start with a text header naming the
 * owner, so a stale one (its process dead) can be told from a file the
 * user has, and is swept: "movebench-pool 1\npid=N\nhost=H\n", NUL-padded
 * to POOL_HDR bytes; the ranks' regions follow it. Created files are
 * unlinked as soon as every rank of the node has opened them, so no exit
 * path, signals and SIGKILL included, leaves one behind. */
/* The pool's part of a context (its slot's state), made by mb_coll_pool_open. */
struct pool {
    char path[512], err[600], backing[700];
    int fd, created;             /* the shared file, -1 when none; made by this run */
    size_t off;                  /* where the regions start (after our header) */
    void *base;                  /* node_size regions of stride bytes */
    size_t stride;
};

static struct pool *pool_of(const struct mb_coll_ctx *c) { return mb_coll_slot(c, &mb_coll_algo_pool)->state; }

#define POOL_MAGIC "movebench-pool 1\n"
#define POOL_HDR 4096
#define POOL_PREFIX "movebench-pool-"

static void describe(struct pool *pl, int fd)
{
    struct statfs fs;
    struct stat st;
    const char *kind = "unknown file system";
    if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
        kind = "character device (DAX)";
    else if (fstatfs(fd, &fs) == 0)
        kind = fs.f_type == TMPFS_MAGIC ? "tmpfs" : fs.f_type == EXT4_SUPER_MAGIC ? "ext4"
             : fs.f_type == XFS_SUPER_MAGIC ? "xfs" : fs.f_type == HUGETLBFS_MAGIC ? "hugetlbfs" : kind;
    snprintf(pl->backing, sizeof(pl->backing), "%s (%s%s)", pl->path, kind,
             pl->created ? "; created by this run, unlinked once every rank mapped it" : "");
}

/* The owner pid of a pool file this library created (its header), 0 for
 * any other file; *same_host: written on this host. */
static long header_owner(int fd, int *same_host)
{
    char h[POOL_HDR + 1], host[256] = "", mine[256] = "";
    ssize_t n = pread(fd, h, POOL_HDR, 0);
    *same_host = 0;
    if (n < (ssize_t)strlen(POOL_MAGIC))
        return 0;
    h[n] = '\0';
    long pid = 0;
    if (strncmp(h, POOL_MAGIC, strlen(POOL_MAGIC)) != 0 ||
        sscanf(h + strlen(POOL_MAGIC), "pid=%ld\nhost=%255[^\n]", &pid, host) != 2 || pid <= 0)
        return 0;
    gethostname(mine, sizeof(mine) - 1);
    *same_host = strcmp(host, mine) == 0;
    return pid;
}

static int owner_dead(long pid, int same_host)
{
    return same_host && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int write_header(int fd)
{
    char h[POOL_HDR] = {0}, host[256] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(h, sizeof(h), "%spid=%ld\nhost=%s\n", POOL_MAGIC, (long)getpid(), host);
    return pwrite(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) ? 0 : -1;
}

/* Removes the pool files in dir whose owner is dead (a run killed in the
 * moment between creating and unlinking its pool). Only regular files of
 * ours, with our header, never through a link. */
static void sweep_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    int dfd = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, POOL_PREFIX, strlen(POOL_PREFIX)) != 0)
            continue;
        int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat st;
        int same_host;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
            long pid = header_owner(fd, &same_host);
            if (pid > 0 && owner_dead(pid, same_host))
                unlinkat(dfd, e->d_name, 0);
        }
        close(fd);
    }
    closedir(d);
}

/* Creates a new pool file: exactly `path` when given, else a unique name
 * in dir (retried on EEXIST). Never follows a link, never opens an
 * existing file. fd or -1 with err set. */
static int create_exclusive(const char *dir, const char *path, int rank, char *name, size_t len, char *err,
                            size_t errlen)
{
    for (int attempt = 0; attempt < 64; attempt++) {
        if (path) {
            snprintf(name, len, "%s", path);
        } else {
            unsigned long long r = 0;
            if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
                r = (unsigned long long)(mb_now() * 1e9) ^ ((unsigned long long)attempt << 48);
            snprintf(name, len, "%s/" POOL_PREFIX "%ld-%d-%016llx", dir, (long)getpid(), rank, r);
        }
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write_header(fd) == 0)
                return fd;
            snprintf(err, errlen, "--pool-path %s: cannot write the pool's header: %s", name, strerror(errno));
            close(fd);
            unlink(name);
            return -1;
        }
        if (errno != EEXIST || path) {
            snprintf(err, errlen, "--pool-path %s: cannot create the pool: %s", name, strerror(errno));
            return -1;
        }
    }
    snprintf(err, errlen, "--pool-path %s: no unused pool name after 64 tries", dir);
    return -1;
}

/* Node rank 0: opens or creates the pool named by path (NULL: /dev/shm).
 * A directory gets a new file; a character device (DAX) is used as is; a
 * new name is created; an existing regular file is refused unless it is
 * a pool file of ours whose owner is dead (then it is replaced); a link
 * is never followed. fd or -1 with err set. */
static int open_first(struct mb_coll_ctx *c, struct pool *pl, const char *path, char *name, size_t len, char *err,
                      size_t errlen)
{
    struct stat st;
    pl->off = POOL_HDR;
    pl->created = 1;
    if (!path || (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        const char *dir = path ? path : "/dev/shm";
        sweep_stale(dir);
        return create_exclusive(dir, NULL, c->rank, name, len, err, errlen);
    }
    snprintf(name, len, "%s", path);
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return create_exclusive(NULL, path, c->rank, name, len, err, errlen);
        snprintf(err, errlen, "--pool-path %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "--pool-path %s: is a symbolic link; name its target (links are never followed)", path);
        return -1;
    }
    if (S_ISCHR(st.st_mode)) {
        pl->off = 0;
        pl->created = 0;
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            snprintf(err, errlen, "--pool-path %s: cannot open the device: %s", path, strerror(errno));
        return fd;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--pool-path %s: not a directory, a new file or a character (DAX) device", path);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), same_host = 0;
    long owner = fd >= 0 ? header_owner(fd, &same_host) : 0;
    if (fd >= 0)
        close(fd);
    if (owner > 0 && owner_dead(owner, same_host) && unlink(path) == 0)
        return create_exclusive(NULL, path, c->rank, name, len, err, errlen);
    if (owner > 0)
        snprintf(err, errlen, "--pool-path %s: is the pool of movebench process %ld%s; name another path", path,
                 owner, same_host ? ", still running" : " on another host");
    else
        snprintf(err, errlen, "--pool-path %s: exists and was not created by movebench (refusing to overwrite "
                 "it); name a new file, a directory or a DAX device", path);
    return -1;
}

/* The pool's teardown: unmaps and closes (a file this run created is
 * unlinked already), and frees the state. */
static void pool_close(struct mb_coll_ctx *c, void *state)
{
    struct pool *pl = state;
    if (pl->base)
        munmap(pl->base, pl->stride * (size_t)c->node_size);
    if (pl->fd >= 0)
        close(pl->fd);
    free(pl);
}

int mb_coll_pool_open(struct mb_coll_ctx *c, const char *path)
{
    void **slot = &mb_coll_slot(c, &mb_coll_algo_pool)->state;
    if (*slot)
        pool_close(c, *slot);
    struct pool *pl = *slot = calloc(1, sizeof(*pl));
    char name[sizeof(pl->path)] = "";
    struct { unsigned long long dev, ino; long long off; int created; } id = {0, 0, 0, 0};
    pl->fd = -1;
    pl->err[0] = '\0';
    if (c->node_rank == 0) {
        int fd = open_first(c, pl, path, name, sizeof(name), pl->err, sizeof(pl->err));
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            pl->fd = fd;
            id.dev = st.st_dev, id.ino = st.st_ino, id.off = (long long)pl->off, id.created = pl->created;
        } else if (fd >= 0) {
            snprintf(pl->err, sizeof(pl->err), "--pool-path %s: fstat: %s", name, strerror(errno));
            close(fd);
        }
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, c->node_comm);
    MPI_Bcast(pl->err, sizeof(pl->err), MPI_CHAR, 0, c->node_comm);
    MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, c->node_comm);
    snprintf(pl->path, sizeof(pl->path), "%s", name);
    pl->off = (size_t)id.off;
    pl->created = id.created;
    if (!pl->err[0] && c->node_rank != 0) {
        /* the very file rank 0 made: no link, the same inode */
        struct stat st;
        pl->fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (pl->fd < 0)
            snprintf(pl->err, sizeof(pl->err), "--pool-path %s: cannot open the pool: %s", name,
                     strerror(errno));
        else if (fstat(pl->fd, &st) != 0 || st.st_dev != id.dev || st.st_ino != id.ino) {
            snprintf(pl->err, sizeof(pl->err), "--pool-path %s: replaced while the ranks opened it", name);
            close(pl->fd);
            pl->fd = -1;
        }
    }
    /* every rank agrees, with the lowest failing rank's reason */
    char reason[sizeof(pl->err)];
    snprintf(reason, sizeof(reason), "%s", pl->err[0] ? pl->err : "a rank could not open the pool");
    int all = mb_coll_agree(c, pl->fd >= 0, reason, sizeof(reason));
    if (c->node_rank == 0 && pl->created && id.ino) /* every rank holds it open, or the pool is off */
        unlink(name);
    if (!all) {
        snprintf(pl->err, sizeof(pl->err), "%s", reason);
        if (pl->fd >= 0)
            close(pl->fd);
        pl->fd = -1;
        return -1;
    }
    describe(pl, pl->fd);
    return 0;
}

const char *mb_coll_pool_error(const struct mb_coll_ctx *c)
{
    const struct pool *pl = pool_of(c);
    return !pl || pl->fd >= 0 ? "" : pl->err;
}

/* Maps at least data_bytes of data slot per rank (collective over the node). */
static int pool_reserve(struct mb_coll_ctx *c, struct pool *pl, size_t data_bytes)
{
    size_t stride = 2 * MB_COLL_SMALL + (data_bytes + 4095) / 4096 * 4096;
    if (pl->base && stride <= pl->stride)
        return 0;
    if (stride < ((size_t)1 << 20))
        stride = (size_t)1 << 20;
    if (pl->base)
        munmap(pl->base, pl->stride * (size_t)c->node_size);
    pl->base = NULL;
    int ok = 1;
    size_t total = stride * (size_t)c->node_size;
    struct stat st;
    if (c->node_rank == 0 && fstat(pl->fd, &st) == 0 && !S_ISCHR(st.st_mode) &&
        (size_t)st.st_size < pl->off + total && ftruncate(pl->fd, (off_t)(pl->off + total)) != 0) {
        mb_warn("collectives: pool %s: cannot grow to %zu bytes: %s", pl->path, total, strerror(errno));
        ok = 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, c->node_comm);
    if (!ok)
        return -1;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, pl->fd, (off_t)pl->off);
    ok = p != MAP_FAILED;
    if (!ok)
        mb_warn("collectives: pool %s: mmap of %zu bytes: %s", pl->path, total, strerror(errno));
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->node_comm);
    if (!all) {
        if (ok)
            munmap(p, total);
        return -1;
    }
    pl->base = p;
    pl->stride = stride;
    return 0;
}

const char *mb_coll_pool_backing(const struct mb_coll_ctx *c)
{
    const struct pool *pl = pool_of(c);
    return pl && pl->fd >= 0 ? pl->backing : "";
}

static int pool_available(struct mb_coll_ctx *c, char *why, size_t len)
{
    if (c->nnodes != 1) {
        snprintf(why, len, "the communicator spans %d nodes; the pool is shared within one", c->nnodes);
        return 0;
    }
    const struct pool *pl = pool_of(c);
    if (!pl || pl->fd < 0) {
        snprintf(why, len, "%s", pl && pl->err[0] ? pl->err : "no pool opened (mb_coll_pool_open)");
        return 0;
    }
    return 1;
}

static int pool_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    size_t es = mb_coll_dtype_size(a->dtype), need = a->count * es;
    if (a->kind == MB_COLL_REDUCE_SCATTER)
        need *= (size_t)c->node_size;
    struct pool *pl = pool_of(c);
    if (pool_reserve(c, pl, need) != 0)
        return -1;
    int p = c->node_size;
    char *small[p], *data[p];
    for (int q = 0; q < p; q++) {
        small[q] = (char *)pl->base + (size_t)q * pl->stride;
        data[q] = small[q] + 2 * MB_COLL_SMALL;
    }
    return mb_coll_shm_with(c, a, small, data, need);
}

const struct mb_coll_algo mb_coll_algo_pool = {
    .name = "pool", .kinds = MB_COLL_ALL_KINDS, .model = mb_coll_model_shm_copyin, /* copy-in's steps on the pool */
    .description = "CCCL-style pool: a shared file mapped by every rank of the node, data slots + doorbells",
    .available = pool_available, .run = pool_run, .teardown = pool_close,
};
