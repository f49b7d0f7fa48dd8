/* offload/'s mb_ostore: three tensors and a blob over 2 striped files.
 * Three training steps in each order (serial, naive, optimized) leave
 * P32, m, v and P16 bit-identical to the same update in memory; counters
 * add up; a partial last block round-trips; bad ranges and options are
 * refused; files are ours (a planted link is refused and left alone) and
 * gone after close; the rate cap's floor holds; MB_FAULT_INJECT=
 * corrupt-state is caught by the CRC naming the extent and offset, in every
 * order; write-error reports EIO naming the extent. The optimized order's
 * read-ahead (three tensors read before their steps, as a trainer does in
 * forward) reads nothing twice and changes no bit; one no step uses is
 * dropped and counted; other orders refuse it. With a chunk size (13
 * units of at most 4096 elements) every order updates each tensor chunk by
 * chunk, last to first, tiling it, to the same bits and byte counts. */
#include "../../offload/aio.h"
#include "../../common/common.h"
#include "check.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NT = 3, ITERS = 3 };
static const struct mb_ostore_tensor tensors[NT] = {{"L0", 10000}, {"L1", 30001}, {"L2", 5000}};
static const struct mb_ostore_blob blobs[1] = {{"act0", 100000}};

/* An Adam-like elementwise update (nn's Adam plugs in the same way). */
static void adam(uint64_t n, float *p, float *m, float *v, uint16_t *p16, const float *g)
{
    for (uint64_t k = 0; k < n; k++) {
        m[k] = 0.9f * m[k] + 0.1f * g[k];
        v[k] = 0.999f * v[k] + 0.001f * g[k] * g[k];
        p[k] -= 1e-3f * m[k] / (sqrtf(v[k]) + 1e-8f);
        uint32_t bits;
        memcpy(&bits, &p[k], 4);
        p16[k] = (uint16_t)(bits >> 16);
    }
}

static int spans_read, spans_write, spans_update, spans_bad;

/* the first read submission, update end and P32 write end of each tensor:
 * the orders' overlap, seen as order (never as durations) */
static pthread_mutex_t first_mu = PTHREAD_MUTEX_INITIALIZER;
static double first_read[NT], first_update[NT], first_write[NT];

static void note_first(double *slot, double t)
{
    pthread_mutex_lock(&first_mu);
    if (*slot == 0)
        *slot = t;
    pthread_mutex_unlock(&first_mu);
}

static void on_span(void *ctx, const char *what, const char *name, double start, double end)
{
    (void)ctx;
    int i = name[0] == 'L' ? name[1] - '0' : -1;
    if (i >= 0 && i < NT) {
        if (strcmp(what, "read") == 0 && strcmp(name + 2, ".P32") == 0)
            note_first(&first_read[i], start);
        else if (strcmp(what, "write") == 0 && strcmp(name + 2, ".P32") == 0)
            note_first(&first_write[i], end);
    }
    __atomic_add_fetch(strcmp(what, "read") == 0 ? &spans_read : strcmp(what, "write") == 0 ? &spans_write
                                                                : &spans_update,
                       1, __ATOMIC_RELAXED);
    if (!(end >= start) || name[0] != 'L' || (strcmp(what, "update") != 0 && !strchr(name, '.')))
        __atomic_add_fetch(&spans_bad, 1, __ATOMIC_RELAXED);
}

static int calls;
static uint64_t chunk_elems;     /* the stores' chunk (0: whole tensors) */
static uint64_t last_off[NT];    /* the last update's first element, per tensor */
static uint64_t covered[NT];     /* elements updated, per tensor */
static int chunk_order_bad;
static int update(void *ctx, int i, const struct mb_ostore_state *st, const void *grad, char *err, size_t errlen)
{
    (void)ctx;
    (void)err;
    (void)errlen;
    if (chunk_elems == 0)
        EXPECT(st->n == tensors[i].n && st->off == 0);
    else
        EXPECT(st->n <= 4096 && st->n > 0 && st->off % 4096 == 0 && st->off + st->n <= tensors[i].n);
    /* a tensor's chunks go last to first: its first element last */
    if (covered[i] % tensors[i].n != 0 && !(st->off < last_off[i]))
        chunk_order_bad++;
    last_off[i] = st->off;
    covered[i] += st->n;
    adam(st->n, st->p32, st->m, st->v, st->p16, (const float *)grad + st->off);
    if (st->off == 0) /* the tensor's step done (its last chunk) */
        note_first(&first_update[i], mb_now());
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    return 0;
}

static float *grads[ITERS][NT];
static float *ref[NT][3];
static uint16_t *ref16[NT];

static float init_p(int i, uint64_t k) { return (float)((double)(mb_mix64((uint64_t)i << 40 | k) >> 11) * 0x1p-53 - 0.5); }

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, "ostore-", 7) == 0;
    if (d)
        closedir(d);
    return n;
}

static struct mb_ostore *open_store(const char *dir, enum mb_ostore_order order, uint64_t seed, char *err, size_t len)
{
    struct mb_ostore_opts o = {.dir = dir, .nfiles = 2, .stripe = 64 << 10, .block = 4096, .order = order,
                               .chunk = chunk_elems, .update = update, .tensors = tensors, .ntensors = NT, .blobs = blobs, .nblobs = 1,
                               .seed = seed, .on_span = on_span};
    return mb_ostore_open(&o, err, len);
}

/* the initial state: P32 from the seed, m = v = 0, P16 = 0 */
static int put_initial(struct mb_ostore *s, char *err, size_t len)
{
    for (int i = 0; i < NT; i++) {
        uint64_t n = tensors[i].n;
        float *p = calloc(n, 4), *z = calloc(n, 4);
        for (uint64_t k = 0; k < n; k++)
            p[k] = init_p(i, k);
        int rc = mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_P32), 0, n * 4, p, err, len) ||
                 mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_M), 0, n * 4, z, err, len) ||
                 mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_V), 0, n * 4, z, err, len) ||
                 mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_P16), 0, n * 2, z, err, len);
        free(p);
        free(z);
        if (rc)
            return -1;
    }
    return 0;
}

/* Every tensor's P32, m, v and P16 on storage equal the in-memory reference's. */
static void expect_reference_states(struct mb_ostore *s)
{
    char err[600];
    for (int i = 0; i < NT; i++) {
        uint64_t n = tensors[i].n;
        float *got = malloc(n * 4);
        for (int f = 0; f < 3; f++) {
            EXPECT(mb_ostore_rw(s, MB_AIO_READ, mb_ostore_tensor_extent(s, i, (enum mb_ostore_field)f), 0, n * 4,
                                got, err, sizeof(err)) == 0);
            EXPECT(memcmp(got, ref[i][f], n * 4) == 0);
        }
        EXPECT(mb_ostore_rw(s, MB_AIO_READ, mb_ostore_tensor_extent(s, i, MB_OSTORE_P16), 0, n * 2, got, err,
                            sizeof(err)) == 0);
        EXPECT(memcmp(got, ref16[i], n * 2) == 0);
        free(got);
    }
}

/* ITERS iterations of steps in backward order; -1 with err at the first failure */
static int train(struct mb_ostore *s, char *err, size_t len)
{
    for (int it = 0; it < ITERS; it++) {
        for (int i = NT - 1; i >= 0; i--)
            if (mb_ostore_step(s, i, grads[it][i], err, len) != 0)
                return -1;
        if (mb_ostore_drain(s, err, len) != 0)
            return -1;
    }
    return 0;
}

/* units: updates per training step (NT whole tensors, or their chunks) */
static void check_orders(const char *dir, int units)
{
    char err[600];
    for (int order = MB_OSTORE_SERIAL; order <= MB_OSTORE_OPTIMIZED; order++) {
        calls = spans_read = spans_write = spans_update = spans_bad = chunk_order_bad = 0;
        memset(covered, 0, sizeof covered);
        memset(first_read, 0, sizeof first_read);
        memset(first_update, 0, sizeof first_update);
        memset(first_write, 0, sizeof first_write);
        struct mb_ostore *s = open_store(dir, (enum mb_ostore_order)order, 1, err, sizeof(err));
        EXPECT(s != NULL);
        if (!s) {
            fprintf(stderr, "%s\n", err);
            continue;
        }
        EXPECT(count_files(dir) == 2);
        EXPECT(put_initial(s, err, sizeof(err)) == 0);
        memset(first_write, 0, sizeof first_write); /* the initial puts are not steps */
        int rc = train(s, err, sizeof(err));
        EXPECT(rc == 0);
        if (rc)
            fprintf(stderr, "%s: %s\n", mb_ostore_order_names[order], err);
        EXPECT(calls == ITERS * units && chunk_order_bad == 0);
        for (int i = 0; i < NT; i++)
            EXPECT(covered[i] == ITERS * tensors[i].n);
        expect_reference_states(s);
        struct mb_ostore_stats st;
        mb_ostore_stats(s, &st);
        uint64_t nsum = tensors[0].n + tensors[1].n + tensors[2].n;
        /* initial puts: 14 bytes/elem written; steps: 12 read, 14 written each; final read-back: 14 */
        EXPECT(st.steps == ITERS * NT);
        EXPECT(st.write_bytes == nsum * 14 * (1 + ITERS));
        /* optimized reads ahead: tensor i-1 after i, never past 0, so no extra reads */
        EXPECT(st.read_bytes == nsum * 12 * ITERS + nsum * 14);
        EXPECT(st.writes == (uint64_t)NT * 4 + (uint64_t)units * 4 * ITERS &&
               st.reads == (uint64_t)units * 3 * ITERS + NT * 4);
        EXPECT(st.read_busy_s > 0 && st.write_busy_s > 0 && st.update_s > 0);
        /* a span per transfer and per update, named after the extent or tensor */
        EXPECT((uint64_t)spans_read == st.reads && (uint64_t)spans_write == st.writes);
        EXPECT(spans_update == ITERS * units && spans_bad == 0);
        /* steps go NT-1 .. 0: optimized submits R(i-1) before i's update ends;
         * serial and naive read i-1 only once i's write is done */
        for (int i = 1; i < NT; i++) {
            if (order == MB_OSTORE_OPTIMIZED)
                EXPECT(first_read[i - 1] < first_update[i]);
            else
                EXPECT(first_read[i - 1] >= first_write[i]);
            EXPECT(first_read[i] > 0 && first_update[i] > 0 && first_write[i] > 0);
        }
        mb_ostore_close(s);
        EXPECT(count_files(dir) == 0);
    }
}

/* The steps of train() with every tensor read ahead first (and one ask
 * repeated: a no-op); then a read-ahead no step uses, dropped by drain. */
static void check_read_ahead(const char *dir)
{
    char err[600];
    struct mb_ostore *s = open_store(dir, MB_OSTORE_SERIAL, 1, err, sizeof(err));
    EXPECT(s && mb_ostore_read_ahead(s, 0, err, sizeof(err)) == -1 && strstr(err, "optimized"));
    mb_ostore_close(s);
    calls = 0;
    memset(first_read, 0, sizeof first_read);
    memset(first_update, 0, sizeof first_update);
    s = open_store(dir, MB_OSTORE_OPTIMIZED, 1, err, sizeof(err));
    EXPECT(s != NULL);
    if (!s)
        return;
    EXPECT(put_initial(s, err, sizeof(err)) == 0);
    EXPECT(mb_ostore_read_ahead(s, NT, err, sizeof(err)) == -1 && strstr(err, "no tensor"));
    int rc = 0;
    for (int it = 0; it < ITERS && !rc; it++) {
        for (int i = NT - 1; i >= 0 && !rc; i--)
            rc = mb_ostore_read_ahead(s, i, err, sizeof(err)) || mb_ostore_read_ahead(s, i, err, sizeof(err));
        for (int i = NT - 1; i >= 0 && !rc; i--)
            rc = mb_ostore_step(s, i, grads[it][i], err, sizeof(err));
        rc = rc || mb_ostore_drain(s, err, sizeof(err));
    }
    EXPECT(rc == 0);
    if (rc)
        fprintf(stderr, "read-ahead: %s\n", err);
    EXPECT(calls == ITERS * NT);
    for (int i = 0; i < NT; i++)
        EXPECT(first_read[i] > 0 && first_read[i] < first_update[NT - 1]);
    struct mb_ostore_stats st;
    mb_ostore_stats(s, &st);
    uint64_t nsum = tensors[0].n + tensors[1].n + tensors[2].n;
    EXPECT(st.read_aheads == (uint64_t)NT * ITERS && st.read_aheads_dropped == 0);
    EXPECT(st.read_bytes == nsum * 12 * ITERS && st.reads == (uint64_t)NT * 3 * ITERS);
    /* one read ahead and never stepped: dropped at the drain, read once */
    EXPECT(mb_ostore_read_ahead(s, 1, err, sizeof(err)) == 0 && mb_ostore_drain(s, err, sizeof(err)) == 0);
    mb_ostore_stats(s, &st);
    EXPECT(st.read_aheads == (uint64_t)NT * ITERS + 1 && st.read_aheads_dropped == 1);
    EXPECT(st.read_bytes == nsum * 12 * ITERS + tensors[1].n * 12);
    expect_reference_states(s);
    mb_ostore_close(s);
}

static void check_blob_and_ranges(const char *dir)
{
    char err[600];
    struct mb_ostore *s = open_store(dir, MB_OSTORE_SERIAL, 1, err, sizeof(err));
    EXPECT(s != NULL);
    if (!s)
        return;
    int b = mb_ostore_extent(s, "act0");
    EXPECT(b == 4 * NT && mb_ostore_extent(s, "L1.v") == 4 + 2 && mb_ostore_extent(s, "nope") == -1);
    EXPECT(strcmp(mb_ostore_extent_name(s, mb_ostore_tensor_extent(s, 2, MB_OSTORE_P16)), "L2.P16") == 0);
    unsigned char *w = malloc(100000), *r = malloc(100000);
    uint64_t st = 5;
    for (int k = 0; k < 100000; k++)
        w[k] = (unsigned char)mb_splitmix64(&st);
    /* read before any write: refused, naming the extent */
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 0, 4096, r, err, sizeof(err)) == -1 && strstr(err, "act0") &&
           strstr(err, "before it was written"));
    EXPECT(mb_ostore_rw(s, MB_AIO_WRITE, b, 0, 100000, w, err, sizeof(err)) == 0);
    memset(r, 0, 100000);
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 0, 100000, r, err, sizeof(err)) == 0 && memcmp(r, w, 100000) == 0);
    memset(r, 0, 100000);
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 8192, 100000 - 8192, r, err, sizeof(err)) == 0 &&
           memcmp(r, w + 8192, 100000 - 8192) == 0);
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 100, 4096, r, err, sizeof(err)) == -1 && strstr(err, "act0"));
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 0, 5000, r, err, sizeof(err)) == -1);   /* not whole blocks */
    EXPECT(mb_ostore_rw(s, MB_AIO_READ, b, 0, 100001, r, err, sizeof(err)) == -1); /* past the end */
    EXPECT(mb_ostore_step(s, NT, grads[0][0], err, sizeof(err)) == -1 && strstr(err, "no tensor"));
    char emu[200];
    mb_ostore_emulation(s, emu, sizeof(emu));
    EXPECT(emu[0] == 0); /* no cap, no emulation */
    EXPECT(count_files(dir) == 2);
    mb_ostore_unlink(s); /* the clean-up hook's path: gone at once, close still fine */
    EXPECT(count_files(dir) == 0);
    mb_ostore_unlink(s);
    mb_ostore_close(s);
    free(w);
    free(r);

    /* bad options and folders */
    struct mb_ostore_opts o = {.dir = dir, .nfiles = 65, .tensors = tensors, .ntensors = NT, .update = update};
    EXPECT(mb_ostore_open(&o, err, sizeof(err)) == NULL && strstr(err, "65 files"));
    o.nfiles = 1;
    o.block = 1000;
    EXPECT(mb_ostore_open(&o, err, sizeof(err)) == NULL && strstr(err, "multiples of 4096"));
    o.block = 0;
    o.update = NULL;
    EXPECT(mb_ostore_open(&o, err, sizeof(err)) == NULL && strstr(err, "update"));
    o.update = update;
    char missing[600];
    snprintf(missing, sizeof(missing), "%s/no-such-folder", dir);
    o.dir = missing;
    EXPECT(mb_ostore_open(&o, err, sizeof(err)) == NULL && strstr(err, "no-such-folder") &&
           strstr(err, "No such file"));

    /* a link planted where the next store's file goes: refused, the target untouched */
    char target[600], link[700];
    snprintf(target, sizeof(target), "%s/precious", dir);
    FILE *f = fopen(target, "w");
    fputs("keep", f);
    fclose(f);
    /* this process has opened 4 stores so far (3 orders, 1 here): the next is SEQ 4 */
    snprintf(link, sizeof(link), "%s/ostore-%ld-4-0.dat", dir, (long)getpid());
    EXPECT(symlink(target, link) == 0);
    s = open_store(dir, MB_OSTORE_SERIAL, 1, err, sizeof(err));
    EXPECT(s == NULL && strstr(err, "ostore-") && strstr(err, "File exists"));
    struct stat sb;
    EXPECT(stat(target, &sb) == 0 && sb.st_size == 4);
    EXPECT(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode)); /* not ours: not removed */
    unlink(link);
    unlink(target);
    EXPECT(count_files(dir) == 0);
}

static void check_rate_cap(const char *dir)
{
    char err[600];
    static const struct mb_ostore_blob big[1] = {{"big", 8 << 20}};
    struct mb_ostore_opts o = {.dir = dir, .nfiles = 2, .stripe = 1 << 20, .file_gbps = 0.05, .blobs = big, .nblobs = 1};
    struct mb_ostore *s = mb_ostore_open(&o, err, sizeof(err));
    EXPECT(s != NULL);
    if (!s)
        return;
    char *buf = aligned_alloc(4096, 8 << 20);
    memset(buf, 7, 8 << 20);
    EXPECT(mb_ostore_rw(s, MB_AIO_WRITE, 0, 0, 8 << 20, buf, err, sizeof(err)) == 0);
    struct mb_ostore_stats st;
    mb_ostore_stats(s, &st);
    /* 4 MiB per file at 0.05e9 B/s, less one stripe of burst: the bucket's floor */
    EXPECT(st.write_busy_s >= (4.0 * (1 << 20) - (1 << 20)) / 0.05e9 * 0.999);
    char emu[200];
    mb_ostore_emulation(s, emu, sizeof(emu));
    EXPECT(strstr(emu, "2 files") && strstr(emu, "0.05 GB/s"));
    mb_ostore_close(s);
    free(buf);
}

static void check_faults(const char *dir)
{
    char err[600];
    setenv("MB_FAULT_INJECT", "corrupt-state", 1);
    for (int order = MB_OSTORE_SERIAL; order <= MB_OSTORE_OPTIMIZED; order++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            struct mb_ostore *s = open_store(dir, (enum mb_ostore_order)order, seed, err, sizeof(err));
            EXPECT(s && put_initial(s, err, sizeof(err)) == 0);
            if (!s)
                continue;
            err[0] = 0;
            EXPECT(train(s, err, sizeof(err)) == -1);
            EXPECT(strstr(err, "CRC32C mismatch") && strstr(err, "at offset") && strstr(err, "ostore: L"));
            if (!strstr(err, "CRC32C mismatch"))
                fprintf(stderr, "corrupt-state, %s, seed %llu: \"%s\"\n", mb_ostore_order_names[order],
                        (unsigned long long)seed, err);
            mb_ostore_close(s);
        }
    setenv("MB_FAULT_INJECT", "write-error", 1);
    for (int order = MB_OSTORE_SERIAL; order <= MB_OSTORE_OPTIMIZED; order++) {
        struct mb_ostore *s = open_store(dir, (enum mb_ostore_order)order, 9, err, sizeof(err));
        EXPECT(s && put_initial(s, err, sizeof(err)) == 0); /* the fault is a step's write */
        if (!s)
            continue;
        err[0] = 0;
        EXPECT(train(s, err, sizeof(err)) == -1);
        EXPECT(strstr(err, "writing L") && strstr(err, strerror(EIO)));
        if (!strstr(err, strerror(EIO)))
            fprintf(stderr, "write-error, %s: \"%s\"\n", mb_ostore_order_names[order], err);
        /* later steps are refused with the first failure */
        char again[600];
        EXPECT(mb_ostore_step(s, 0, grads[0][0], again, sizeof(again)) == -1 && strcmp(again, err) == 0);
        mb_ostore_close(s);
    }
    unsetenv("MB_FAULT_INJECT");
    EXPECT(count_files(dir) == 0);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof(dir), "%.400s/ostore.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("MB_FAULT_INJECT");
    /* gradients and the in-memory reference */
    for (int i = 0; i < NT; i++) {
        uint64_t n = tensors[i].n;
        for (int f = 0; f < 3; f++)
            ref[i][f] = calloc(n, 4);
        ref16[i] = calloc(n, 2);
        for (uint64_t k = 0; k < n; k++)
            ref[i][0][k] = init_p(i, k);
        for (int it = 0; it < ITERS; it++) {
            grads[it][i] = malloc(n * 4);
            uint64_t st = (uint64_t)(it * 16 + i);
            for (uint64_t k = 0; k < n; k++)
                grads[it][i][k] = (float)((double)(mb_splitmix64(&st) >> 11) * 0x1p-53 - 0.5);
        }
    }
    for (int it = 0; it < ITERS; it++)
        for (int i = NT - 1; i >= 0; i--)
            adam(tensors[i].n, ref[i][0], ref[i][1], ref[i][2], ref16[i], grads[it][i]);

    check_orders(dir, NT);
    check_blob_and_ranges(dir); /* (counts the stores opened before it) */
    /* chunks of 3000 elements round up to 4096 (block / 2): 3 + 8 + 2 units */
    EXPECT(mb_ostore_unit_elems(30001, 3000, 4096) == 4096 && mb_ostore_unit_elems(1000, 3000, 4096) == 1000 &&
           mb_ostore_unit_elems(30001, 0, 4096) == 30001);
    EXPECT(mb_ostore_host_bytes(4096, 4096) < mb_ostore_host_bytes(30001, 4096));
    /* the unit a step runs first (a read-ahead's): the last chunk, not a
     * sliver: 6389760 in 4 chunks of 1605632 (49 x 32768) but a last of 1572864 */
    EXPECT(mb_ostore_first_unit_elems(10000, 3000, 4096) == 1808 && mb_ostore_first_unit_elems(5000, 0, 4096) == 5000 &&
           mb_ostore_first_unit_elems(6389760, 2097152, 0) == 1572864);
    chunk_elems = 3000;
    check_orders(dir, 13);
    chunk_elems = 0;
    check_read_ahead(dir);
    check_rate_cap(dir);
    check_faults(dir);
    rmdir(dir);
    return TEST_EXIT();
}
