/* offload/'s storage registry: every entry has the callbacks its flags
 * promise and a unique name that mb_storage_find returns; then, over a
 * volume of 3 striped files holding the pattern, every mode reads a batch
 * back byte-exact (through its ticket; any-order modes also through reap),
 * every mode with files behind it writes a batch of another seed that a
 * posix read then finds, reads past the end fail with -ENODATA, and inline
 * refuses a request across a stripe unit. */
#include "../../offload/storage_internal.h"
#include "check.h"
#include "storage_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFILES 3
#define STRIPE (64u << 10)
#define FILE_BYTES (1u << 20)
#define VOL ((uint64_t)NFILES * FILE_BYTES)
#define NREQ 24

static char path[NFILES][FIXTURE_PATH];
static const char *paths[NFILES];

static void test_registry(void)
{
    size_t n = 0;
    for (const struct mb_storage_ops *const *m = mb_storage_modes; *m; m++, n++) {
        const struct mb_storage_ops *o = *m;
        EXPECT(o->name && *o->name && o->description && *o->description);
        EXPECT(o->submit && o->wait);
        EXPECT(o->submit != storage_each || (o->rw && (o->flags & MB_STORAGE_BLOCKING))); /* its per-request rw */
        EXPECT(!(o->flags & MB_STORAGE_ANY_ORDER) || o->reap);
        EXPECT(mb_storage_find(o->name) == o); /* also: no earlier entry has the name */
    }
    EXPECT(n >= 7);
    EXPECT(mb_storage_find("nosuch") == NULL);
    const char *want[] = {"posix", "bounce", "inline", "mmap", "sync", "async", "memory"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        EXPECT(mb_storage_find(want[i]) != NULL);
}

static struct mb_storage_params params(int writable)
{
    return (struct mb_storage_params){.paths = paths, .nfiles = NFILES, .stripe = STRIPE, .file_size = FILE_BYTES,
                                      .writable = writable, .qd = 8, .engine = {.nthreads = 2, .arena = 4u << 20},
                                      .image_bytes = VOL, .image_load = VOL};
}

/* NREQ requests of 4 KiB to one stripe unit, at offsets from k, inside one unit each */
static void fill_reqs(struct mb_aio_req *r, char *buf, int op, uint64_t k)
{
    for (size_t i = 0; i < NREQ; i++) {
        size_t len = i % 3 == 0 ? STRIPE : 4096 * (1 + i % 4);
        uint64_t unit = (k * 7 + i * 13) % (VOL / STRIPE);
        r[i] = (struct mb_aio_req){unit * STRIPE + (STRIPE - len) / 4096 / 2 * 4096, len, buf + i * STRIPE, op, 0};
    }
}

static int check_reqs(const struct mb_aio_req *r, uint64_t seed)
{
    int bad = 0;
    for (size_t i = 0; i < NREQ; i++)
        bad += r[i].status != 0 || mb_aio_pattern_check(r[i].buf, r[i].offset, r[i].len, seed) != r[i].len;
    return bad;
}

static void test_read(const struct mb_storage_ops *o, uint64_t seed)
{
    struct mb_storage s;
    char err[512];
    if (mb_storage_open(&s, o, &(struct mb_storage_params){0}, err, sizeof(err)) == 0)
        EXPECT(0); /* no files: refused */
    struct mb_storage_params p = params(0);
    EXPECT(mb_storage_open(&s, o, &p, err, sizeof(err)) == 0);
    if (!s.ops) {
        fprintf(stderr, "%s: %s\n", o->name, err);
        return;
    }
    EXPECT(!(o->flags & MB_STORAGE_ENGINE) || s.eng);
    char *buf = mb_storage_alloc(&s, NREQ * STRIPE);
    EXPECT(buf != NULL);
    struct mb_aio_req r[NREQ];
    struct mb_storage_ticket t;
    fill_reqs(r, buf, MB_AIO_READ, 1);
    memset(buf, 0xa5, NREQ * STRIPE);
    EXPECT(o->submit(&s, r, NREQ, &t) == 0);
    EXPECT(o->wait(&s, &t) == 0);
    int bad = check_reqs(r, seed);
    if (bad)
        fprintf(stderr, "%s: %d requests read wrong\n", o->name, bad);
    EXPECT(bad == 0);
    if (o->flags & MB_STORAGE_ANY_ORDER) { /* completions reaped as they come */
        fill_reqs(r, buf, MB_AIO_READ, 2);
        memset(buf, 0xa5, NREQ * STRIPE);
        EXPECT(o->submit(&s, r, NREQ, NULL) == 0);
        struct mb_aio_req *done[NREQ];
        size_t got = 0;
        for (int spin = 0; got < NREQ && spin < 10000000; spin++)
            got += o->reap(&s, done + got, NREQ - got);
        EXPECT(got == NREQ && check_reqs(r, seed) == 0);
        struct mb_aio_req cross = {STRIPE - 4096, 8192, buf, MB_AIO_READ, 0};
        EXPECT(o->submit(&s, &cross, 1, &t) == -EXDEV && cross.status == -EXDEV);
    } else { /* past the end: -ENODATA, counted by wait */
        struct mb_aio_req past = {VOL, 4096, buf, MB_AIO_READ, 0};
        EXPECT(o->submit(&s, &past, 1, &t) == 0);
        EXPECT(o->wait(&s, &t) == 1 && past.status == -ENODATA);
    }
    mb_storage_free(&s, buf);
    mb_storage_close(&s);
}

/* A batch of another seed's pattern written through o, then read with posix. */
static void test_write(const struct mb_storage_ops *o, uint64_t seed)
{
    struct mb_storage s, rd;
    char err[512];
    struct mb_storage_params p = params(1);
    EXPECT(mb_storage_open(&s, o, &p, err, sizeof(err)) == 0);
    if (!s.ops) {
        fprintf(stderr, "%s: %s\n", o->name, err);
        return;
    }
    char *buf = mb_storage_alloc(&s, NREQ * STRIPE);
    struct mb_aio_req r[NREQ];
    struct mb_storage_ticket t;
    fill_reqs(r, buf, MB_AIO_WRITE, 3);
    for (size_t i = 0; i < NREQ; i++)
        mb_aio_pattern_fill(r[i].buf, r[i].offset, r[i].len, seed);
    EXPECT(o->submit(&s, r, NREQ, &t) == 0);
    EXPECT(o->wait(&s, &t) == 0);
    EXPECT(!o->flush || o->flush(&s, err, sizeof(err)) == 0);
    mb_storage_free(&s, buf);
    mb_storage_close(&s);
    p = params(0);
    EXPECT(mb_storage_open(&rd, mb_storage_find("posix"), &p, err, sizeof(err)) == 0);
    char *back = mb_storage_alloc(&rd, NREQ * STRIPE);
    fill_reqs(r, back, MB_AIO_READ, 3);
    EXPECT(mb_storage_find("posix")->submit(&rd, r, NREQ, &t) == 0 && rd.ops->wait(&rd, &t) == 0);
    int bad = check_reqs(r, seed);
    if (bad)
        fprintf(stderr, "%s: %d requests wrote wrong\n", o->name, bad);
    EXPECT(bad == 0);
    mb_storage_free(&rd, back);
    mb_storage_close(&rd);
}

int main(void)
{
    test_registry();
    char dir[512]; /* the pattern of seed 11 over the whole volume */
    if (fixture_volume(dir, sizeof(dir), path, paths, NFILES, FILE_BYTES, STRIPE, 11) != 0)
        return 1;
    for (const struct mb_storage_ops *const *m = mb_storage_modes; *m; m++)
        test_read(*m, 11);
    uint64_t seed = 100;
    for (const struct mb_storage_ops *const *m = mb_storage_modes; *m; m++)
        if (!((*m)->flags & MB_STORAGE_IMAGE)) /* the image's writes stay in memory */
            test_write(*m, seed++);
    fixture_remove(dir, path, NFILES);
    return TEST_EXIT();
}
