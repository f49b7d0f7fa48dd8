/* The storage tests' scratch volume: nfiles files of file_bytes in a fresh
 * folder under $TMPDIR (created O_EXCL), the pattern of seed written over
 * the whole striped volume through the posix mode. */
#ifndef MB_TEST_STORAGE_FIXTURE_H
#define MB_TEST_STORAGE_FIXTURE_H

#include "../../offload/aio.h"
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FIXTURE_PATH 600

/* 0, or -1 when the folder could not be made (perror'd). */
static int fixture_volume(char *dir, size_t dirlen, char (*path)[FIXTURE_PATH], const char **paths, int nfiles,
                          uint64_t file_bytes, size_t stripe, uint64_t seed)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, dirlen, "%.400s/storage.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    for (int f = 0; f < nfiles; f++) {
        snprintf(path[f], FIXTURE_PATH, "%s/vol.%d", dir, f);
        paths[f] = path[f];
        int fd = open(path[f], O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        EXPECT(fd >= 0 && ftruncate(fd, (off_t)file_bytes) == 0);
        close(fd);
    }
    struct mb_storage s;
    char err[512];
    struct mb_storage_params p = {.paths = paths, .nfiles = nfiles, .stripe = stripe, .writable = 1};
    EXPECT(mb_storage_open(&s, mb_storage_find("posix"), &p, err, sizeof(err)) == 0);
    char *blk = s.ops ? mb_storage_alloc(&s, stripe) : NULL;
    for (uint64_t off = 0; blk && off < (uint64_t)nfiles * file_bytes; off += stripe) {
        mb_aio_pattern_fill(blk, off, stripe, seed);
        EXPECT(mb_storage_rw_now(&s, MB_AIO_WRITE, off, stripe, blk) == 0);
    }
    if (blk)
        mb_storage_free(&s, blk);
    mb_storage_close(&s);
    return 0;
}

static void fixture_remove(const char *dir, char (*path)[FIXTURE_PATH], int nfiles)
{
    for (int f = 0; f < nfiles; f++)
        unlink(path[f]);
    rmdir(dir);
}

#endif
