/* offload/aio: striping math, pattern, round trips through both engines,
 * ticket ordering, many submitting threads, unaligned (bounced) reads and
 * the per-request error paths (short file, injected EIO and ENOSPC,
 * read-only file). */
#include "../../offload/aio.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

static char dir[256];
static const char *paths[4];
static char pbuf[4][300];

static struct mb_aio *open_vol(int n, uint64_t size, size_t stripe)
{
    struct mb_aio_opts o = {.nthreads = 2, .stripe = stripe, .create = 1, .size = size, .arena = 8 << 20};
    char err[256];
    for (int i = 0; i < n; i++) {
        snprintf(pbuf[i], sizeof(pbuf[i]), "%s/f%d", dir, i);
        paths[i] = pbuf[i];
    }
    struct mb_aio *a = mb_aio_open(paths, n, &o, err, sizeof(err));
    if (!a)
        fprintf(stderr, "open: %s\n", err);
    return a;
}

static void test_map(void)
{
    int dev;
    uint64_t off;
    size_t room = mb_aio_map(0, 4096, 3, &dev, &off);
    EXPECT(dev == 0 && off == 0 && room == 4096);
    room = mb_aio_map(4096 * 4 + 100, 4096, 3, &dev, &off);
    EXPECT(dev == 1 && off == 4096 + 100 && room == 4096 - 100);
    room = mb_aio_map(4096 * 5, 4096, 3, &dev, &off);
    EXPECT(dev == 2 && off == 4096);
    EXPECT(mb_aio_adaptive_threads(1, 1) == 1);
    EXPECT(mb_aio_adaptive_threads(8, 0) == 2 && mb_aio_adaptive_threads(8, 1) == 4);
    char b[1000];
    mb_aio_pattern_fill(b, 13, sizeof(b), 7);
    EXPECT(mb_aio_pattern_check(b, 13, sizeof(b), 7) == sizeof(b));
    EXPECT(mb_aio_pattern_check(b + 5, 18, 100, 7) == 100);
    b[300] ^= 1;
    EXPECT(mb_aio_pattern_check(b, 13, sizeof(b), 7) == 300);
    EXPECT(mb_aio_pattern_check(b, 13, 100, 8) < 100);
}

/* CAM's rule: ceil(N/4)..ceil(N/2) threads, linear in the I/O fraction */
static void test_adaptive_rule(void)
{
    for (int n = 1; n <= 64; n++) {
        int lo = (n + 3) / 4, hi = (n + 1) / 2;
        EXPECT(mb_aio_adaptive_threads(n, 0) == lo);
        EXPECT(mb_aio_adaptive_threads(n, 1) == hi);
        EXPECT(mb_aio_adaptive_threads(n, -3) == lo && mb_aio_adaptive_threads(n, 7) == hi);
        int prev = lo;
        for (int k = 0; k <= 20; k++) { /* monotonic in io_frac, within the range */
            int t = mb_aio_adaptive_threads(n, k / 20.0);
            EXPECT(t >= prev && t >= lo && t <= hi);
            prev = t;
        }
    }
    EXPECT(mb_aio_adaptive_threads(12, 0.5) == 4 + 1); /* 3 + (6 - 3) * 0.5 rounded */
    EXPECT(mb_aio_adaptive_threads(3, 0) == 1 && mb_aio_adaptive_threads(3, 1) == 2);
    EXPECT(mb_aio_adaptive_threads(8, 0.0 / 0.0) == 2); /* NaN: the lower end */
    EXPECT(mb_aio_io_fraction(0, 0) == 1);
    EXPECT(mb_aio_io_fraction(3, 1) == 0.75 && mb_aio_io_fraction(0, 5) == 0);
    /* compute-bound 9:1 -> 2 + 2 * 0.1 rounds to 2; I/O-bound 1:9 -> 4 */
    EXPECT(mb_aio_adaptive_threads(8, mb_aio_io_fraction(1, 9)) == 2);
    EXPECT(mb_aio_adaptive_threads(8, mb_aio_io_fraction(9, 1)) == 4);
}

/* real computation standing for the compute phase (never a sleep) */
static double busy_compute(double ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    double x = 1, el;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &b);
        el = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6;
    } while (el < ms);
    return x;
}

/* The engine in adaptive mode over 8 files (CAM: 2..4 threads): an I/O-bound
 * phase (wait at once) must choose the upper end, a compute-bound phase
 * (double-buffered, long computation) the lower end; data stays right. */
static void test_adaptive_engine(void)
{
    char err[256];
    const char *pp[8];
    char pb[8][300];
    for (int i = 0; i < 8; i++) {
        snprintf(pb[i], sizeof(pb[i]), "%s/ad%d", dir, i);
        pp[i] = pb[i];
    }
    struct mb_aio_opts o = {.nthreads = MB_AIO_ADAPTIVE, .adapt_window = 4, .stripe = 4096, .create = 1,
                            .size = 64 * 1024, .arena = 4 << 20};
    struct mb_aio *a = mb_aio_open(pp, 8, &o, err, sizeof(err));
    EXPECT(a != NULL);
    if (!a)
        return;
    struct mb_aio_info inf;
    mb_aio_info(a, &inf);
    EXPECT(inf.adaptive == 1 && inf.nthreads == 4 && inf.active_threads == 4 && inf.decisions == 0);
    uint64_t vol = mb_aio_size(a);
    char *w = mb_aio_alloc(a, vol);
    mb_aio_pattern_fill(w, 0, vol, 5);
    struct mb_aio_req wr = {0, vol, w, MB_AIO_WRITE, 0};
    mb_aio_ticket t;
    EXPECT(mb_aio_submit(a, &wr, 1, &t) == 0 && mb_aio_wait(t) == 0);
    char *buf = mb_aio_alloc(a, 2 * 16 * 4096);
    struct mb_aio_req r[2][16];
    int bad = 0;
    /* phase 1, I/O-bound: nothing between the waits (checked afterwards) */
    static struct mb_aio_req r1[24][16];
    char *buf1 = mb_aio_alloc(a, 24 * 16 * 4096);
    for (int it = 0; it < 24; it++) {
        for (int i = 0; i < 16; i++)
            r1[it][i] = (struct mb_aio_req){((uint64_t)(it * 16 + i) * 7 % (vol / 4096)) * 4096, 4096,
                                            buf1 + (it * 16 + i) * 4096, MB_AIO_READ, 0};
        EXPECT(mb_aio_submit(a, r1[it], 16, &t) == 0);
        bad += mb_aio_wait(t);
    }
    for (int it = 0; it < 24; it++)
        for (int i = 0; i < 16; i++)
            bad += mb_aio_pattern_check(r1[it][i].buf, r1[it][i].offset, 4096, 5) != 4096;
    int h[64];
    size_t n1 = mb_aio_thread_history(a, h, 64), max1 = 0;
    EXPECT(n1 >= 5);
    for (size_t i = 0; i < n1 && i < 64; i++)
        max1 = (size_t)h[i] > max1 ? (size_t)h[i] : max1;
    EXPECT(max1 == 4);
    /* phase 2, compute-bound: prefetch the next batch, compute 5 ms, wait */
    mb_aio_ticket tk[2];
    double sink = 0;
    for (int it = 0; it <= 24; it++) {
        int cur = it & 1;
        if (it < 24) {
            for (int i = 0; i < 16; i++)
                r[cur][i] = (struct mb_aio_req){((uint64_t)(it * 16 + i) * 11 % (vol / 4096)) * 4096, 4096,
                                                buf + (cur * 16 + i) * 4096, MB_AIO_READ, 0};
            EXPECT(mb_aio_submit(a, r[cur], 16, &tk[cur]) == 0);
        }
        if (it > 0) {
            sink += busy_compute(5);
            bad += mb_aio_wait(tk[!cur]);
            for (int i = 0; i < 16; i++)
                bad += mb_aio_pattern_check(r[!cur][i].buf, r[!cur][i].offset, 4096, 5) != 4096;
        }
    }
    EXPECT(sink > 0);
    size_t n2 = mb_aio_thread_history(a, h, 64);
    int min2 = 99;
    for (size_t i = n1 + 1; i < n2 && i < 64; i++) /* the first window straddles both phases */
        min2 = h[i] < min2 ? h[i] : min2;
    EXPECT(n2 >= n1 + 4);
    EXPECT(min2 == 2);
    for (size_t i = 0; i < n2 && i < 64; i++)
        EXPECT(h[i] >= 2 && h[i] <= 4);
    mb_aio_info(a, &inf);
    EXPECT(inf.decisions == n2 && inf.completed == inf.batches);
    EXPECT(bad == 0);
    mb_aio_free(a, buf);
    mb_aio_free(a, buf1);
    mb_aio_free(a, w);
    mb_aio_close(a);
    for (int i = 0; i < 8; i++)
        unlink(pb[i]);
}

/* writes the whole volume with the pattern, reads it back in many shapes */
static void test_roundtrip(int ndev)
{
    uint64_t size = 1 << 20;
    struct mb_aio *a = open_vol(ndev, size, 8192);
    EXPECT(a != NULL);
    if (!a)
        return;
    uint64_t vol = mb_aio_size(a);
    EXPECT(vol == size * (uint64_t)ndev);
    size_t chunk = 128 * 1024;
    char *w = mb_aio_alloc(a, chunk);
    struct mb_aio_req req[64];
    size_t nreq = (size_t)(vol / chunk);
    char *bufs = malloc(vol);
    mb_aio_pattern_fill(bufs, 0, vol, 42);
    for (size_t i = 0; i < nreq; i++)
        req[i] = (struct mb_aio_req){i * chunk, chunk, bufs + i * chunk, MB_AIO_WRITE, 1};
    mb_aio_ticket t;
    EXPECT(mb_aio_submit(a, req, nreq, &t) == 0);
    EXPECT(mb_aio_wait(t) == 0);
    for (size_t i = 0; i < nreq; i++)
        EXPECT(req[i].status == 0);
    /* aligned reads into the registered arena, several tickets in flight, waited out of order */
    struct mb_aio_req r2[4][8];
    mb_aio_ticket tk[4];
    char *dst = mb_aio_alloc(a, 4 * 8 * 4096);
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 8; i++)
            r2[k][i] = (struct mb_aio_req){(uint64_t)((k * 8 + i) * 12288 % (vol - 4096)) & ~4095ULL,
                                           4096, dst + (k * 8 + i) * 4096, MB_AIO_READ, 0};
        EXPECT(mb_aio_submit(a, r2[k], 8, &tk[k]) == 0);
    }
    for (int k = 3; k >= 0; k--) {
        EXPECT(mb_aio_wait(tk[k]) == 0);
        for (int i = 0; i < 8; i++)
            EXPECT(mb_aio_pattern_check(r2[k][i].buf, r2[k][i].offset, 4096, 42) == 4096);
    }
    /* unaligned read crossing stripes: bounced */
    struct mb_aio_info inf;
    mb_aio_info(a, &inf);
    uint64_t bounce0 = inf.bounce_bytes;
    char *u = malloc(30000);
    struct mb_aio_req ur = {8192 - 77, 20001, u + 3, MB_AIO_READ, 0};
    EXPECT(mb_aio_submit(a, &ur, 1, &t) == 0);
    EXPECT(mb_aio_wait(t) == 0);
    EXPECT(mb_aio_pattern_check(u + 3, ur.offset, ur.len, 42) == ur.len);
    mb_aio_info(a, &inf);
    EXPECT(!inf.direct || inf.bounce_bytes > bounce0);
    /* unaligned write, read back */
    char wb[1000];
    mb_aio_pattern_fill(wb, 5000, sizeof(wb), 42);
    memset(wb, 0, 0);
    struct mb_aio_req uw = {5000, sizeof(wb), wb, MB_AIO_WRITE, 0};
    EXPECT(mb_aio_submit(a, &uw, 1, &t) == 0 && mb_aio_wait(t) == 0);
    struct mb_aio_req rb = {4096, 8192, dst, MB_AIO_READ, 0};
    EXPECT(mb_aio_submit(a, &rb, 1, &t) == 0 && mb_aio_wait(t) == 0);
    EXPECT(mb_aio_pattern_check(dst, 4096, 8192, 42) == 8192);
    /* past the end: per-request error, the others succeed */
    struct mb_aio_req pe[2] = {{vol - 4096, 8192, dst, MB_AIO_READ, 0}, {0, 4096, dst + 8192, MB_AIO_READ, 0}};
    EXPECT(mb_aio_submit(a, pe, 2, &t) == 0);
    EXPECT(mb_aio_wait(t) == 1);
    EXPECT(pe[0].status == -ENODATA && pe[1].status == 0);
    mb_aio_info(a, &inf);
    EXPECT(inf.completed == inf.batches);
    free(u);
    free(bufs);
    mb_aio_free(a, w);
    mb_aio_free(a, dst);
    mb_aio_close(a);
}

struct thr { struct mb_aio *a; int id; int bad; };

static void *hammer(void *arg)
{
    struct thr *t = arg;
    uint64_t vol = mb_aio_size(t->a);
    char *buf = mb_aio_alloc(t->a, 16 * 4096);
    for (int it = 0; it < 50; it++) {
        struct mb_aio_req r[16];
        for (int i = 0; i < 16; i++)
            r[i] = (struct mb_aio_req){((uint64_t)(t->id * 7919 + it * 31 + i * 17) * 4096) % vol, 4096,
                                       buf + i * 4096, MB_AIO_READ, 0};
        mb_aio_ticket tk;
        if (mb_aio_submit(t->a, r, 16, &tk) != 0 || mb_aio_wait(tk) != 0)
            t->bad++;
        for (int i = 0; i < 16; i++)
            if (mb_aio_pattern_check(r[i].buf, r[i].offset, 4096, 42) != 4096)
                t->bad++;
    }
    mb_aio_free(t->a, buf);
    return NULL;
}

static void test_threads(void)
{
    struct mb_aio *a = open_vol(2, 1 << 20, 8192);
    if (!a)
        return;
    /* the files hold the pattern from test_roundtrip(2) */
    pthread_t th[8];
    struct thr t[8];
    for (int i = 0; i < 8; i++) {
        t[i] = (struct thr){a, i, 0};
        pthread_create(&th[i], NULL, hammer, &t[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        EXPECT(t[i].bad == 0);
    }
    mb_aio_close(a);
}

static void test_injected(const char *spec, int op, int want)
{
    setenv("MB_AIO_INJECT", spec, 1);
    struct mb_aio *a = open_vol(1, 1 << 20, 8192);
    unsetenv("MB_AIO_INJECT");
    if (!a)
        return;
    char *b = mb_aio_alloc(a, 3 * 4096);
    if (op == MB_AIO_WRITE)
        mb_aio_pattern_fill(b, 0, 3 * 4096, 42);
    struct mb_aio_req r[3];
    for (int i = 0; i < 3; i++)
        r[i] = (struct mb_aio_req){(uint64_t)i * 4096, 4096, b + i * 4096, op, 0};
    mb_aio_ticket t;
    EXPECT(mb_aio_submit(a, r, 3, &t) == 0);
    EXPECT(mb_aio_wait(t) == 1);
    int nbad = 0;
    for (int i = 0; i < 3; i++)
        nbad += r[i].status == want;
    EXPECT(nbad == 1);
    mb_aio_free(a, b);
    mb_aio_close(a);
}

static void test_readonly(void)
{
    char p[300];
    snprintf(p, sizeof(p), "%s/ro", dir);
    FILE *f = fopen(p, "w");
    char z[8192] = {0};
    fwrite(z, 1, sizeof(z), f);
    fclose(f);
    chmod(p, 0444);
    const char *pp[1] = {p};
    char err[256];
    struct mb_aio_opts o = {.nthreads = 1, .stripe = 4096};
    struct mb_aio *a = mb_aio_open(pp, 1, &o, err, sizeof(err));
    EXPECT(a != NULL);
    if (!a)
        return;
    char *b = mb_aio_alloc(a, 4096);
    struct mb_aio_req r = {0, 4096, b, MB_AIO_WRITE, 0};
    mb_aio_ticket t;
    EXPECT(mb_aio_submit(a, &r, 1, &t) == 0);
    int f1 = mb_aio_wait(t);
    /* root ignores the mode bits: then the write simply succeeds */
    EXPECT(geteuid() == 0 ? f1 <= 1 : (f1 == 1 && r.status == -EBADF));
    mb_aio_free(a, b);
    mb_aio_close(a);
}

/* The synchronous striped read/write: data lands in the right file at the
 * right offset, partial ranges across units, past the end, bad descriptors. */
static void test_volume_rw(void)
{
    int fds[3];
    char path[3][300];
    for (int f = 0; f < 3; f++) {
        snprintf(path[f], sizeof(path[f]), "%s/vol%d", dir, f);
        fds[f] = open(path[f], O_RDWR | O_CREAT | O_TRUNC, 0644);
        EXPECT(fds[f] >= 0);
    }
    enum { STRIPE = 4096, LEN = 5 * STRIPE + 123 };
    static char out[LEN], in[LEN];
    for (size_t i = 0; i < LEN; i++)
        out[i] = (char)(i * 7 + 3);
    EXPECT(mb_aio_volume_rw(fds, 3, STRIPE, MB_AIO_WRITE, 100, LEN, out) == 0);
    /* logical 100 + STRIPE + 5 lies in unit 1: file 1, offset 100 + 5 */
    char c = 0;
    EXPECT(pread(fds[1], &c, 1, 105) == 1 && c == out[STRIPE + 5]);
    EXPECT(mb_aio_volume_rw(fds, 3, STRIPE, MB_AIO_READ, 100, LEN, in) == 0 && memcmp(in, out, LEN) == 0);
    /* a range that starts and ends inside units */
    memset(in, 0, LEN);
    EXPECT(mb_aio_volume_rw(fds, 3, STRIPE, MB_AIO_READ, 100 + 777, 3 * STRIPE, in) == 0 &&
           memcmp(in, out + 777, 3 * STRIPE) == 0);
    /* past the end of the files */
    EXPECT(mb_aio_volume_rw(fds, 3, STRIPE, MB_AIO_READ, 100, LEN + 3 * STRIPE, in) == -ENODATA);
    int bad[3] = {-1, -1, -1};
    EXPECT(mb_aio_volume_rw(bad, 3, STRIPE, MB_AIO_READ, 0, 10, in) == -EBADF);
    for (int f = 0; f < 3; f++) {
        close(fds[f]);
        unlink(path[f]);
    }
}

int main(void)
{
    const char *base = getenv("TESTS_TMP");
    snprintf(dir, sizeof(dir), "%s/aio.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_map();
    test_volume_rw();
    test_adaptive_rule();
    for (int eng = 0; eng < 2; eng++) {
        if (eng)
            setenv("MB_AIO_ENGINE", "posix", 1);
        struct mb_aio *a = open_vol(1, 4096, 4096);
        struct mb_aio_info inf;
        mb_aio_info(a, &inf);
        EXPECT(strcmp(inf.engine, eng ? "posix" : "io_uring") == 0 || (!eng && *inf.fallback));
        mb_aio_close(a);
        for (int i = 0; i < 4; i++) {
            snprintf(pbuf[i], sizeof(pbuf[i]), "%s/f%d", dir, i);
            unlink(pbuf[i]);
        }
        test_roundtrip(1);
        test_roundtrip(3);
        test_roundtrip(2);
        test_threads();
        test_injected("eio:2", MB_AIO_READ, -EIO);
        test_injected("enospc:3", MB_AIO_WRITE, -ENOSPC);
        test_readonly();
        test_adaptive_engine();
        char p[300];
        snprintf(p, sizeof(p), "%s/ro", dir);
        unlink(p);
    }
    return TEST_EXIT();
}
