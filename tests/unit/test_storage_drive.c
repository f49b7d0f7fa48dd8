/* offload/'s driver (mb_storage_driver_run) in every storage mode over 2
 * striped files: 40 reads of 4 KiB through 8 shared buffers, qd 4, tickets
 * of 3: every request is posted once and completed once, never while the
 * request before it in its buffer is in flight, and lands the pattern;
 * writes posted the same way reach the files (read back through pread);
 * a request past the end fails
 * the run with its offset named. Also the registry's path list and --mode
 * string, fio's argument vector and terse-line parser (fio itself is not
 * run), and aio_plan.c's layout: engine options for a queue depth, slots,
 * offsets, run-length text. */
#include "../../offload/aio.h"
#include "check.h"
#include "storage_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFILES 2
#define STRIPE (64u << 10)
#define FILE_BYTES (1u << 20)
#define VOL ((uint64_t)NFILES * FILE_BYTES)
#define BS 4096u
#define N 40
#define NSLOT 8
#define QD 4
#define BATCH 3

static char path[NFILES][FIXTURE_PATH];
static const char *paths[NFILES];

struct trace {
    struct mb_aio_req *reqs;
    uint64_t seed;
    int write;
    int posted[N], completed[N], bad_order, bad_data, bad_time;
};

static void on_post(void *ctx, size_t i)
{
    struct trace *t = ctx;
    t->posted[i]++;
    if (i >= NSLOT && !t->completed[i - NSLOT]) /* its buffer is still in use */
        t->bad_order++;
    if (t->write)
        mb_aio_pattern_fill(t->reqs[i].buf, t->reqs[i].offset, BS, t->seed);
}

static void on_done(void *ctx, size_t i, double seconds)
{
    struct trace *t = ctx;
    t->completed[i]++;
    t->bad_time += !(seconds >= 0);
    if (!t->write && mb_aio_pattern_check(t->reqs[i].buf, t->reqs[i].offset, BS, t->seed) != BS)
        t->bad_data++;
}

static void fill(struct mb_aio_req *r, char *slots, int op, uint64_t k)
{
    for (size_t i = 0; i < N; i++)
        r[i] = (struct mb_aio_req){((i * 37 + k) % (VOL / BS)) * BS, BS, slots + (i % NSLOT) * BS, op, 0};
}

static void drive(const struct mb_storage_ops *o, int write, uint64_t seed)
{
    struct mb_storage s;
    char err[512];
    struct mb_storage_params p = {.paths = paths, .nfiles = NFILES, .stripe = STRIPE, .file_size = FILE_BYTES,
                                  .writable = write, .qd = QD, .engine = {.nthreads = 2, .arena = 4u << 20}};
    if (mb_storage_open(&s, o, &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", o->name, err);
        EXPECT(0);
        return;
    }
    EXPECT(mb_storage_driver_new(&s, 0, QD, BATCH, NSLOT) == NULL);
    struct mb_storage_driver *d = mb_storage_driver_new(&s, N, QD, BATCH, NSLOT);
    char *slots = mb_storage_alloc(&s, NSLOT * BS);
    static struct mb_aio_req reqs[N];
    static struct trace t;
    EXPECT(d && slots);
    if (d && slots) {
        fill(reqs, slots, write ? MB_AIO_WRITE : MB_AIO_READ, seed);
        t = (struct trace){.reqs = reqs, .seed = write ? seed : 11, .write = write};
        struct mb_storage_hooks h = {&t, on_post, on_done};
        int rc = mb_storage_driver_run(d, reqs, &h, err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", o->name, err);
        EXPECT(rc == 0);
        for (size_t i = 0; i < N; i++)
            EXPECT(t.posted[i] == 1 && t.completed[i] == 1 && reqs[i].status == 0);
        EXPECT(t.bad_order == 0 && t.bad_data == 0 && t.bad_time == 0);
        char *rb = mb_storage_alloc(&s, BS);
        for (size_t i = 0; write && rb && i < N; i++) {
            EXPECT(mb_storage_rw_now(&s, MB_AIO_READ, reqs[i].offset, BS, rb) == 0);
            EXPECT(mb_aio_pattern_check(rb, reqs[i].offset, BS, seed) == BS);
        }
        mb_storage_free(&s, rb);
        if (!write) { /* the last request past the end: the run fails naming it */
            fill(reqs, slots, MB_AIO_READ, seed);
            reqs[N - 1].offset = VOL;
            t = (struct trace){.reqs = reqs, .seed = 11};
            err[0] = 0;
            EXPECT(mb_storage_driver_run(d, reqs, &h, err, sizeof(err)) == -1);
            EXPECT(strstr(err, "request at") != NULL);
            for (size_t i = 0; i < N; i++)
                EXPECT(t.completed[i] <= 1);
        }
    }
    mb_storage_free(&s, slots);
    mb_storage_driver_free(d);
    mb_storage_close(&s);
}

static void test_paths(void)
{
    const struct mb_storage_ops *m[32];
    char choices[256], want[256] = "";
    size_t n = mb_storage_paths(m, 32, choices, sizeof(choices), "fio");
    EXPECT(n >= 6);
    for (size_t i = 0; i < n; i++) {
        EXPECT(!(m[i]->flags & MB_STORAGE_IMAGE) && mb_storage_find(m[i]->name) == m[i]);
        strcat(strcat(want, m[i]->name), "|");
    }
    strcat(want, "fio");
    EXPECT(strcmp(choices, want) == 0);
    EXPECT(strncmp(choices, "posix|", 6) == 0 && strstr(choices, "memory") == NULL);
    EXPECT(mb_storage_paths(m, 2, NULL, 0, NULL) == 2);
}

static void test_fio(void)
{
    const char *fp[] = {"/d/a", "/d/b;c"};
    struct mb_aio_fio_job j = {fp, 2, ".fio", 1, 0, 1, 4096, 32, 8, 1u << 30, 1u << 20};
    static struct mb_aio_fio_argv v;
    EXPECT(mb_aio_fio_argv(&j, &v) == 0);
    const char *want[] = {"fio", "--name=mb", "--filename=/d/a.fio:/d/b;c.fio", "--ioengine=io_uring",
                          "--direct=1", "--rw=randwrite", "--bs=4096", "--iodepth=32",
                          "--iodepth_batch_submit=8", "--size=1073741824", "--io_size=1048576"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        EXPECT(v.argv[i] && strcmp(v.argv[i], want[i]) == 0);
    size_t k = 0;
    while (v.argv[k])
        k++;
    EXPECT(k == 18 && strcmp(v.argv[17], "--terse-version=3") == 0);
    j = (struct mb_aio_fio_job){fp, 1, NULL, 0, 1, 0, 512, 1, 1, 4096, 4096};
    EXPECT(mb_aio_fio_argv(&j, &v) == 0);
    EXPECT(strcmp(v.argv[2], "--filename=/d/a") == 0 && strcmp(v.argv[4], "--direct=0") == 0 &&
           strcmp(v.argv[5], "--rw=read") == 0);
    j.nfiles = 0;
    EXPECT(mb_aio_fio_argv(&j, &v) == -1);
    /* terse v3: field 5 is the error, 8 read IOPS, 49 write IOPS */
    char line[1024] = "3";
    for (int f = 1; f < 60; f++)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), ";%s",
                 f == 4 ? "5" : f == 7 ? "1234.5" : f == 48 ? "777" : "0");
    char copy[1024];
    double iops = 0;
    int fe = 0;
    strcpy(copy, line);
    EXPECT(mb_aio_fio_terse(copy, 0, &iops, &fe) == 1 && iops == 1234.5 && fe == 5);
    strcpy(copy, line);
    EXPECT(mb_aio_fio_terse(copy, 1, &iops, &fe) == 1 && iops == 777);
    strcpy(copy, "fio: some warning\n");
    EXPECT(mb_aio_fio_terse(copy, 0, &iops, &fe) == 0);
    strcpy(copy, "3;too;short");
    EXPECT(mb_aio_fio_terse(copy, 0, &iops, &fe) == 0);
}

static void test_plan(void)
{
    struct mb_aio_opts o = mb_aio_opts_for_qd(3, 8, 64, 16, 1u << 20);
    EXPECT(o.nthreads == 3 && o.depth == 64 && o.inflight == 22 && o.submit_batch == 4 && o.arena == 1u << 20);
    o = mb_aio_opts_for_qd(MB_AIO_ADAPTIVE, 8, 8, 2, 0); /* CAM's rule for 8 files: 4 threads at most */
    EXPECT(o.nthreads == MB_AIO_ADAPTIVE && o.inflight == 2 && o.submit_batch == 2);
    EXPECT(mb_aio_slots(10, 4096, 4) == 10);                   /* one per request */
    EXPECT(mb_aio_slots(1000000, 4096, 4) == (64u << 20) / 4096); /* 64 MiB of them */
    EXPECT(mb_aio_slots(2, 4096, 64) == 128);                  /* what the driver posts: 2 x qd */
    EXPECT(mb_aio_slots(2, 4u << 20, 100) == 100);             /* 256 MiB cap, but qd at least */
    uint64_t a[64], b[64], pos = 0;
    mb_aio_offsets(a, 64, 4096, 1u << 20, 0, 7, 3, &pos);
    mb_aio_offsets(b, 64, 4096, 1u << 20, 0, 7, 3, &pos);
    int distinct = 0;
    for (int i = 0; i < 64; i++) {
        EXPECT(a[i] == b[i] && a[i] % 4096 == 0 && a[i] < (1u << 20));
        distinct += i && a[i] != a[i - 1];
    }
    EXPECT(distinct > 50 && pos == 0);
    mb_aio_offsets(b, 64, 4096, 1u << 20, 0, 7, 4, &pos);
    EXPECT(memcmp(a, b, sizeof(a)) != 0); /* another iteration, other offsets */
    pos = (1u << 20) - 8192;
    mb_aio_offsets(a, 4, 4096, 1u << 20, 1, 7, 0, &pos);
    EXPECT(a[0] == (1u << 20) - 8192 && a[1] == (1u << 20) - 4096 && a[2] == 0 && a[3] == 4096 && pos == 8192);
    int h[] = {4, 4, 4, 3, 3, 4};
    char t[64];
    mb_aio_runs_text(h, 6, t, sizeof(t));
    EXPECT(strcmp(t, "4x3 3x2 4x1") == 0);
    mb_aio_runs_text(h, 0, t, sizeof(t));
    EXPECT(t[0] == 0);
    mb_aio_runs_text(h, 6, t, 5);
    EXPECT(strlen(t) == 4);
}

int main(void)
{
    test_plan();
    test_paths();
    test_fio();
    char dir[512]; /* the pattern of seed 11 over the whole volume */
    if (fixture_volume(dir, sizeof(dir), path, paths, NFILES, FILE_BYTES, STRIPE, 11) != 0)
        return 1;
    const struct mb_storage_ops *m[32];
    size_t n = mb_storage_paths(m, 32, NULL, 0, NULL);
    for (size_t i = 0; i < n; i++)
        drive(m[i], 0, 3);
    for (size_t i = 0; i < n; i++)
        drive(m[i], 1, 100 + i);
    fixture_remove(dir, path, NFILES);
    return TEST_EXIT();
}
