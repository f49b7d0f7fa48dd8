/* mmap: the files mapped shared, requests copied from or to the mapping
 * (the page cache is the path: Ginex/PyG-like); writes reach the files
 * with flush (msync). */
#include "storage_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int mmap_open(struct mb_storage *s, char *err, size_t errlen)
{
    char **map = calloc(MB_STORAGE_MAX_FILES, sizeof(*map));
    if (!(s->priv = map)) {
        snprintf(err, errlen, "out of memory: the mappings' table");
        return -1;
    }
    for (int f = 0; f < s->p.nfiles; f++) {
        map[f] = mmap(NULL, s->p.file_size, PROT_READ | (s->p.writable ? PROT_WRITE : 0), MAP_SHARED, s->fd[f], 0);
        if (map[f] == MAP_FAILED) {
            map[f] = NULL;
            snprintf(err, errlen, "mmap %s: %s", s->p.paths[f], strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int mmap_rw(struct mb_storage *s, struct mb_aio_req *r)
{
    char **map = s->priv, *buf = r->buf;
    for (size_t done = 0; done < r->len;) {
        int dev;
        uint64_t devoff;
        size_t room = mb_aio_map(r->offset + done, s->p.stripe, s->p.nfiles, &dev, &devoff);
        size_t n = r->len - done < room ? r->len - done : room;
        if (devoff + n > s->p.file_size)
            return -ENODATA;
        if (r->op == MB_AIO_WRITE)
            memcpy(map[dev] + devoff, buf + done, n);
        else
            memcpy(buf + done, map[dev] + devoff, n);
        done += n;
    }
    return 0;
}

static int mmap_flush(struct mb_storage *s, char *err, size_t errlen)
{
    char **map = s->priv;
    for (int f = 0; f < s->p.nfiles; f++)
        if (msync(map[f], s->p.file_size, MS_SYNC) != 0) {
            snprintf(err, errlen, "msync %s: %s", s->p.paths[f], strerror(errno));
            return -1;
        }
    return 0;
}

static void mmap_close(struct mb_storage *s)
{
    char **map = s->priv;
    for (int f = 0; map && f < s->p.nfiles; f++)
        if (map[f])
            munmap(map[f], s->p.file_size);
    free(map);
}

const struct mb_storage_ops mb_storage_mmap = {
    .name = "mmap",
    .description = "the files mapped shared, requests copied through the page cache",
    .flags = MB_STORAGE_BLOCKING | MB_STORAGE_NO_DIRECT,
    .open = mmap_open,
    .submit = storage_each,
    .rw = mmap_rw,
    .wait = storage_blocking_wait,
    .flush = mmap_flush,
    .close = mmap_close,
};
