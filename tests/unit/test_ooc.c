/* offload/aio's out-of-core pieces: the radix sort against qsort (random,
 * equal, few distinct keys, n = 0 and 1), the Zipf sampler (ranks map to
 * distinct rows, rank 0 is drawn most, s = 0 is roughly uniform), the
 * gather requests, a gather through the engine into a dense batch, and
 * each app in every mode at a tiny size, verified. */
#include "../../offload/aio.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_sort(void)
{
    size_t ns[] = {0, 1, 2, 1000, 65537};
    for (int kind = 0; kind < 3; kind++)
        for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
            size_t n = ns[t];
            uint64_t *a = malloc((n + 1) * 8), *b = malloc((n + 1) * 8), *tmp = malloc((n + 1) * 8), s = 88172645463325252ULL + n;
            for (size_t i = 0; i < n; i++)
                a[i] = kind == 0 ? rnd(&s) : kind == 1 ? 42 : (rnd(&s) % 3) << 40;
            memcpy(b, a, n * 8);
            EXPECT(mb_ooc_sort_u64(a, n, tmp) == 0);
            qsort(b, n, 8, cmp_u64);
            EXPECT(memcmp(a, b, n * 8) == 0);
            free(a);
            free(b);
            free(tmp);
        }
}

static void test_zipf(void)
{
    uint64_t n = 1000;
    struct mb_ooc_zipf *z = mb_ooc_zipf_new(n, 1.0, 7);
    EXPECT(z != NULL);
    char *seen = calloc(n, 1);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t row = mb_ooc_zipf_row(z, r);
        EXPECT(row < n && !seen[row]);
        seen[row] = 1;
    }
    unsigned *cnt = calloc(n, sizeof(unsigned));
    uint64_t st = 1;
    for (int i = 0; i < 100000; i++) {
        uint64_t row = mb_ooc_zipf_next(z, &st);
        EXPECT(row < n);
        cnt[row]++;
    }
    uint64_t hot = mb_ooc_zipf_row(z, 0), cold = mb_ooc_zipf_row(z, n - 1);
    for (uint64_t r = 0; r < n; r++)
        EXPECT(cnt[r] <= cnt[hot]);
    /* 1/H_1000 = 13.4% of the draws at rank 0; rank 999 ~ 0.013% */
    EXPECT(cnt[hot] > 12000 && cnt[hot] < 15000);
    EXPECT(cnt[cold] < 60);
    mb_ooc_zipf_free(z);
    z = mb_ooc_zipf_new(n, 0, 7);
    memset(cnt, 0, n * sizeof(unsigned));
    for (int i = 0; i < 100000; i++)
        cnt[mb_ooc_zipf_next(z, &st)]++;
    for (uint64_t r = 0; r < n; r++)
        EXPECT(cnt[r] > 40 && cnt[r] < 180);
    mb_ooc_zipf_free(z);
    EXPECT(mb_ooc_zipf_new(0, 1.0, 1) == NULL);
    free(cnt);
    free(seen);
}

static void test_gather(const char *dir)
{
    EXPECT(mb_ooc_row_bytes(128) == 512);
    EXPECT(mb_ooc_row_bytes(100) == 512);
    EXPECT(mb_ooc_row_bytes(129) == 1024);
    struct mb_ooc_features f = {4096, 64, 100, 512};
    uint64_t ids[3] = {5, 0, 63};
    struct mb_aio_req r[3];
    char out[3 * 512];
    mb_ooc_gather_reqs(&f, ids, 3, out, r);
    EXPECT(r[0].offset == 4096 + 5 * 512 && r[0].len == 512 && r[0].buf == out && r[0].op == MB_AIO_READ);
    EXPECT(r[2].offset == 4096 + 63 * 512 && r[2].buf == out + 1024);

    /* through the engine: the volume holds the pattern, so each row is checkable */
    char p0[300], p1[300];
    snprintf(p0, sizeof(p0), "%s/g0", dir);
    snprintf(p1, sizeof(p1), "%s/g1", dir);
    const char *paths[2] = {p0, p1};
    struct mb_aio_opts o = {.nthreads = 1, .stripe = 4096, .create = 1, .size = 1 << 20};
    char err[256];
    struct mb_aio *a = mb_aio_open(paths, 2, &o, err, sizeof(err));
    EXPECT(a != NULL);
    if (!a)
        return;
    char *w = mb_aio_alloc(a, 1 << 20);
    mb_aio_pattern_fill(w, 0, 1 << 20, 9);
    struct mb_aio_req wr = {0, 1 << 20, w, MB_AIO_WRITE, 0};
    mb_aio_ticket t;
    EXPECT(mb_aio_submit(a, &wr, 1, &t) == 0 && mb_aio_wait(t) == 0);
    struct mb_ooc_features g = {8192, 1000, 128, 512};
    uint64_t rows[4] = {999, 3, 3, 500};
    char *batch = mb_aio_alloc(a, 4 * 512);
    struct mb_aio_req q[4];
    EXPECT(mb_ooc_gather_submit(a, &g, rows, 4, batch, q, &t) == 0);
    EXPECT(mb_aio_wait(t) == 0);
    for (int i = 0; i < 4; i++)
        EXPECT(mb_aio_pattern_check(batch + i * 512, 8192 + rows[i] * 512, 512, 9) == 512);
    mb_aio_free(a, batch);
    mb_aio_free(a, w);
    mb_aio_close(a);
}

/* Each app in every mode, small, verified by its own check. */
static void test_apps(const char *dir)
{
    char pb[3][300];
    const char *paths[3];
    for (int i = 0; i < 3; i++) {
        snprintf(pb[i], sizeof(pb[i]), "%s/app%d", dir, i);
        paths[i] = pb[i];
    }
    struct mb_ooc_params base = {.paths = paths, .nfiles = 3, .stripe = 8192, .io_threads = 2, .seed = 5,
                                 .mem_budget = 64 << 10, .gemm_n = 96, .gemm_tile = 32, .sort_keys = 11776,
                                 .gather_rows = 300, .gather_dim = 20, .gather_batch = 16, .gather_batches = 3,
                                 .zipf = 0.8, .blas_threads = 1, .prefetch = 2};
    char err[512];
    for (int app = MB_OOC_GEMM; app <= MB_OOC_GATHER; app++) {
        struct mb_ooc_params p = base;
        p.app = (enum mb_ooc_app)app;
        EXPECT(mb_ooc_validate(&p, err, sizeof(err)) == 0);
        EXPECT(mb_ooc_prepare(&p, 0, err, sizeof(err)) == 0);
        for (int m = MB_OOC_POSIX; m <= MB_OOC_IO; m++) {
            struct mb_ooc *o = mb_ooc_open(&p, (enum mb_ooc_mode)m, err, sizeof(err));
            EXPECT(o != NULL);
            if (!o) {
                fprintf(stderr, "%s/%s: %s\n", mb_ooc_app_names[app], mb_ooc_mode_names[m], err);
                continue;
            }
            for (int it = 0; it < 2; it++) {
                EXPECT(mb_ooc_reset(o, it, err, sizeof(err)) == 0);
                int rc = mb_ooc_run(o, err, sizeof(err));
                EXPECT(rc == 0);
                if (rc)
                    fprintf(stderr, "%s/%s: %s\n", mb_ooc_app_names[app], mb_ooc_mode_names[m], err);
                char msg[512] = "";
                rc = mb_ooc_check(o, msg, sizeof(msg));
                EXPECT(rc == 0);
                if (rc)
                    fprintf(stderr, "%s/%s: %s\n", mb_ooc_app_names[app], mb_ooc_mode_names[m], msg);
            }
            struct mb_ooc_stats st;
            mb_ooc_stats(o, &st);
            EXPECT(m == MB_OOC_COMPUTE ? st.read_bytes == 0 : st.read_bytes > 0);
            EXPECT((m == MB_OOC_SYNC || m == MB_OOC_ASYNC || m == MB_OOC_IO) == (mb_ooc_engine(o) != NULL));
            mb_ooc_close(o);
        }
        /* a corrupted input is caught */
        EXPECT(mb_ooc_prepare(&p, 1, err, sizeof(err)) == 0);
        struct mb_ooc *o = mb_ooc_open(&p, MB_OOC_ASYNC, err, sizeof(err));
        char msg[512] = "";
        EXPECT(o && mb_ooc_reset(o, 0, err, sizeof(err)) == 0 && mb_ooc_run(o, err, sizeof(err)) == 0);
        EXPECT(o && mb_ooc_check(o, msg, sizeof(msg)) == 1);
        mb_ooc_close(o);
    }
    struct mb_ooc_params p = base;
    p.app = MB_OOC_GEMM;
    p.gemm_tile = 48;
    EXPECT(mb_ooc_validate(&p, err, sizeof(err)) == -1 && strstr(err, "--gemm-tile"));
    p = base;
    p.app = MB_OOC_SORT;
    p.mem_budget = 1 << 20;
    EXPECT(mb_ooc_validate(&p, err, sizeof(err)) == -1 && strstr(err, "--mem-budget"));
    p.sort_keys = 1000;
    EXPECT(mb_ooc_validate(&p, err, sizeof(err)) == -1 && strstr(err, "--sort-keys"));
}

int main(void)
{
    char dir[] = "/tmp/mb-test-ooc.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_sort();
    test_zipf();
    test_gather(dir);
    test_apps(dir);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return TEST_EXIT();
}
