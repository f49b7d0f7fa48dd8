/* mb-aio: storage I/O through offload/aio (CAM) and its baselines, side by
 * side with fio's io_uring engine. Files are striped RAID0-like by the
 * engine (and by the same mapping for the baselines); every 512-byte block
 * carries a pattern derived from (seed, logical offset), so every read is
 * checked and every write read back. The I/O paths are offload/'s storage
 * registry (mb_storage_modes), driven as its flags say by the registry's
 * driver (mb_storage_driver_run); fio runs through mb_aio_fio_run.
 * The out-of-core applications are mb-ooc. */
#include "harness/harness.h"
#include "../offload/aio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --mode's words: the registry's storage paths in its order (not the RAM
 * image: no device), then fio, an outside program (built in main()). */
#define MAX_MODES 31
static const struct mb_storage_ops *modes[MAX_MODES];
static const char *mode_names[MAX_MODES + 1];
static int m_fio, m_async = -1; /* fio's index (= the number of storage paths); async's */
static char mode_choices[512];

static struct {
    unsigned modes;
    int pattern, rw, prepare, vs_fio, buffered;
    long long qd, batch, threads, files, ios;
    size_t file_size, stripe;
    char *dir, *threads_arg;
} opt;

static struct mb_opt aio_opts[] = {
    {"mode", 0, MB_OPT_LIST, &opt.modes, "posix,sync,async", NULL /* the registry's, then fio */,
     0, 0, "I/O paths to measure (sync/async: the engine)", "LIST"},
    {"pattern", 0, MB_OPT_CHOICE, &opt.pattern, "random", "random|seq", 0, 0, "access pattern", "P"},
    {"rw", 0, MB_OPT_CHOICE, &opt.rw, "read", "read|write", 0, 0, "direction", "RW"},
    {"qd", 0, MB_OPT_INT, &opt.qd, "64", NULL, 1, 4096, "requests in flight", "N"},
    {"batch", 0, MB_OPT_INT, &opt.batch, "16", NULL, 1, 4096, "requests per engine batch (ticket)", "N"},
    {"io-threads", 0, MB_OPT_STR, &opt.threads_arg, "1", NULL, 0, 0,
     "engine I/O threads 1..64; 0 = CAM's rule (ceil(files/2)); adaptive = CAM's rule "
     "re-chosen every 32 waits from the measured compute/I/O ratio", "N|adaptive"},
    {"files", 0, MB_OPT_INT, &opt.files, "1", NULL, 1, 64, "files striped together (stand-in SSDs)", "N"},
    {"file-size", 0, MB_OPT_SIZE, &opt.file_size, "256M", NULL, 1 << 20, 1e15, "bytes per file", "SIZE"},
    {"stripe", 0, MB_OPT_SIZE, &opt.stripe, "1M", NULL, 4096, 1 << 30, "stripe unit", "SIZE"},
    {"ios", 0, MB_OPT_INT, &opt.ios, "2048", NULL, 1, 1 << 24, "requests per iteration", "N"},
    {"dir", 0, MB_OPT_STR, &opt.dir, "build/aio-data", NULL, 0, 0, "folder of the data files", "DIR"},
    {"prepare", 0, MB_OPT_FLAG, &opt.prepare, NULL, NULL, 0, 0,
     "(re)write the files with the pattern first (done anyway when missing)", NULL},
    {"vs-fio", 0, MB_OPT_FLAG, &opt.vs_fio, NULL, NULL, 0, 0, "also run fio's io_uring engine", NULL},
    {"buffered", 0, MB_OPT_FLAG, &opt.buffered, NULL, NULL, 0, 0, "no O_DIRECT", NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"mode", "pattern", "rw", "app", NULL};

struct aio_case { int mode; size_t bs; }; /* mode: index into modes[], or m_fio */

struct st {
    struct mb_run *run;
    const struct aio_case *ac;
    const struct mb_storage_ops *ops;   /* NULL: fio */
    struct mb_storage sto;              /* the volume in this case's mode */
    struct mb_aio *eng;                 /* sto.eng: the engine modes */
    struct mb_storage_driver *drv;      /* drives the requests through the mode */
    size_t nslot, ios;
    char *slots;          /* nslot * bs */
    uint64_t *off;        /* per request offset of this iteration */
    struct mb_aio_req *reqs;
    uint64_t vol, seqpos, seed;
    double *lat; size_t nlat, caplat;
    double cpu; long long cpu_ios;
    double fio_iops;
    int inject;                /* MB_FAULT_INJECT=corrupt */
    size_t inj_req, inj_byte;  /* this iteration's fault: request and byte (inj_req == ios: none) */
    int rfd[64];               /* buffered descriptors reading writes back */
    int nomem;                 /* the latency log could not grow */
};

static char fpath[64][1024];
static const char *fpaths[64];
static struct mb_aio_volume volume; /* the data files, set by validate */
static int wrote_volume;            /* a write case marked the files "writing" */

static int validate(struct mb_run *run)
{
    int threads;
    if (mb_aio_parse_threads(opt.threads_arg, &threads) != 0) {
        if (run->rank == 0)
            mb_warn("--io-threads: '%s' is neither a count from 0 to 64 nor 'adaptive'", opt.threads_arg);
        return MB_EXIT_USAGE;
    }
    opt.threads = threads;
    size_t n;
    size_t *s = mb_sizes(&run->common, &n);
    int ok = 0;
    for (size_t i = 0; i < n; i++)
        ok |= s[i] >= 512 && s[i] <= (4u << 20) && s[i] % 512 == 0;
    free(s);
    if (!ok) {
        if (run->rank == 0)
            mb_warn("%s: no size between 512 B and 4 MiB that is a multiple of 512",
                    run->common.sizes ? "--sizes" : "-b/--minbytes, -e/--maxbytes");
        return MB_EXIT_USAGE;
    }
    if (opt.batch > opt.qd) {
        if (run->rank == 0)
            mb_warn("--batch: %lld exceeds --qd %lld", opt.batch, opt.qd);
        return MB_EXIT_USAGE;
    }
    if (opt.file_size % opt.stripe) {
        if (run->rank == 0)
            mb_warn("--file-size: must be a multiple of --stripe");
        return MB_EXIT_USAGE;
    }
    struct stat stt;
    if (stat(opt.dir, &stt) != 0 && mkdir(opt.dir, 0755) != 0) {
        if (run->rank == 0)
            mb_warn("--dir: %s: %s", opt.dir, strerror(errno));
        return MB_EXIT_USAGE;
    }
    if (opt.vs_fio)
        opt.modes |= 1u << m_fio;
    /* the files this run may write: never a link or a file that is not ours */
    for (long long f = 0; f < opt.files; f++) {
        snprintf(fpath[f], sizeof(fpath[f]), "%.900s/mb-aio.%lld", opt.dir, f);
        fpaths[f] = fpath[f];
        char fio[1100];
        snprintf(fio, sizeof(fio), "%s.fio", fpath[f]);
        if ((opt.modes & (1u << m_fio)) && lstat(fio, &stt) == 0 && !S_ISREG(stt.st_mode)) {
            if (run->rank == 0)
                mb_warn("--dir: %s: not a regular file (fio would write through it)", fio);
            return MB_EXIT_USAGE;
        }
    }
    volume = (struct mb_aio_volume){fpaths, (int)opt.files, opt.file_size, opt.stripe, (uint64_t)run->common.seed};
    char why[1200];
    if (!mb_aio_volume_owned(&volume, why, sizeof(why))) {
        if (run->rank == 0)
            mb_warn("--dir: %s", why);
        return MB_EXIT_USAGE;
    }
    return 0;
}

static int plan(struct mb_run *run)
{
    size_t n, cap = 64;
    size_t *s = mb_sizes(&run->common, &n);
    run->cases = calloc(cap, sizeof(*run->cases));
    if (!s || !run->cases)
        mb_die(1, "out of memory planning the cases");
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 512 || s[i] > (4u << 20) || s[i] % 512)
            continue;
        for (int m = 0; m <= m_fio; m++) {
            if (!(opt.modes & (1u << m)))
                continue;
            struct aio_case *ac = malloc(sizeof(*ac));
            if (mb_grow((void **)&run->cases, &cap, run->ncases + 1, sizeof(*run->cases)) != 0 || !ac)
                mb_die(1, "out of memory planning the cases");
            struct mb_case *c = &run->cases[run->ncases++];
            memset(c, 0, sizeof(*c));
            c->uncheckable = m == m_fio; /* fio's data is fio's own: recorded n/a, never pass */
            ac->mode = m;
            ac->bs = s[i];
            c->user = ac;
            c->labels[0] = mode_names[m];
            c->labels[1] = opt.pattern ? "seq" : "random";
            c->labels[2] = opt.rw ? "write" : "read";
            c->labels[3] = "io";
            c->bytes = (uint64_t)s[i] * (uint64_t)opt.ios;
            c->count = (uint64_t)opt.ios;
            snprintf(c->name, sizeof(c->name), "%s/%s/%s/%zu", mode_names[m], c->labels[1], c->labels[2], s[i]);
            snprintf(c->group, sizeof(c->group), "%s %s %s  qd=%lld batch=%lld files=%lld io-threads=%s",
                     mode_names[m], c->labels[1], c->labels[2], opt.qd, opt.batch, opt.files, opt.threads_arg);
        }
    }
    free(s);
    return 0;
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    (void)run;
    mb_kv_int(cfg, "block", MB_AIO_BLOCK);
}

/* The data files, once per run: reused when their trailers say complete
 * for this layout and seed and random blocks hold the pattern, else written
 * (rank 0; the others wait). /config aio_data says which, and why. */
static int prepare_files(struct mb_run *run)
{
    static int done, status;
    if (done)
        return status;
    done = 1;
    char why[1200] = "--prepare", err[1200], note[1300];
    int rc = 0;
    if (run->rank == 0) {
        /* other blocks each run: damage anywhere is found over a few runs */
        uint64_t sample_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        if (!opt.prepare && mb_aio_volume_check(&volume, 1024, sample_seed, why, sizeof(why))) {
            snprintf(note, sizeof(note), "reused: trailers complete for this layout and seed, "
                                         "1024 random blocks per file hold the pattern");
        } else if (mb_aio_volume_prepare(&volume, err, sizeof(err)) != 0) {
            mb_warn("--dir: %s", err);
            rc = -1;
        } else {
            snprintf(note, sizeof(note), "written: %s", why);
            if (!run->common.quiet)
                printf("# data files written (%s)\n", why);
        }
        if (rc == 0)
            mb_metric_run_str(&run->result, "aio_data", note);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
    return status = rc;
}

/* Opens the volume in the case's storage mode, O_DIRECT unless --buffered
 * or the mode never uses it (mmap); a file system that refuses O_DIRECT
 * gets buffered I/O, recorded (the engine's as aio_*, the others' as
 * posix_direct, posix_fallback). MB_AIO_INJECT=nodirect (tests) refuses
 * it as such a file system would. */
static int open_storage(struct st *s, size_t arena)
{
    const struct mb_storage_ops *ops = s->ops;
    struct mb_run *run = s->run;
    struct mb_storage_params p = {
        .paths = fpaths, .nfiles = (int)opt.files, .stripe = opt.stripe, .file_size = opt.file_size,
        .writable = opt.rw, .buffered = opt.buffered, .qd = (unsigned)opt.qd,
        .engine = mb_aio_opts_for_qd((int)opt.threads, (int)opt.files, (unsigned)opt.qd, (unsigned)opt.batch, arena)};
    char err[1200];
    if (mb_storage_open(&s->sto, ops, &p, err, sizeof(err)) != 0) {
        mb_warn("--dir: %s", err);
        return -1;
    }
    s->eng = s->sto.eng;
    if (run->rank != 0)
        return 0;
    if (s->eng) {
        struct mb_aio_info inf;
        mb_aio_info(s->eng, &inf);
        mb_metric_run_str(&run->result, "aio_engine", inf.engine);
        mb_metric_run_str(&run->result, "aio_fallback", inf.fallback);
        mb_metric_run_int(&run->result, "aio_direct", inf.direct);
        mb_metric_run_int(&run->result, "aio_io_threads", inf.nthreads);
        mb_metric_run_int(&run->result, "aio_io_threads_adaptive", inf.adaptive);
    } else if (!opt.buffered && !(ops->flags & MB_STORAGE_NO_DIRECT)) {
        if (!s->sto.direct)
            mb_warn("%s: O_DIRECT refused by %s: buffered I/O (page cache) instead", ops->name, opt.dir);
        mb_metric_run_int(&run->result, "posix_direct", s->sto.direct);
        mb_metric_run_str(&run->result, "posix_fallback", s->sto.fallback);
    }
    return 0;
}

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    struct st *s = calloc(1, sizeof(*s));
    if (!s) {
        mb_warn("out of memory: the case's state");
        return -1;
    }
    *state = s;
    s->run = run;
    s->ac = c->user;
    s->seed = (uint64_t)run->common.seed;
    for (int f = 0; f < 64; f++)
        s->rfd[f] = -1;
    if (prepare_files(run) != 0)
        return -1;
    int m = s->ac->mode;
    s->ops = m < m_fio ? modes[m] : NULL;
    if (opt.rw && s->ops && !wrote_volume) {
        /* until every write is read back and verified (finish), the files
         * are not taken for prepared: a wrong write never passes as data */
        char err[1200];
        int rc = run->rank == 0 ? mb_aio_volume_mark(&volume, MB_AIO_VOLUME_WRITING, err, sizeof(err)) : 0;
        if (rc != 0)
            mb_warn("--dir: %s", err);
        MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
        if (rc != 0)
            return -1;
        wrote_volume = 1;
    }
    size_t bs = s->ac->bs;
    s->ios = (size_t)opt.ios;
    s->vol = (uint64_t)opt.files * opt.file_size;
    s->nslot = mb_aio_slots(s->ios, bs, (size_t)opt.qd);
    s->off = calloc(s->ios, sizeof(uint64_t));
    s->reqs = calloc(s->ios, sizeof(*s->reqs));
    s->caplat = s->ios * (size_t)(run->common.warmup + run->common.iters);
    s->lat = malloc(s->caplat * sizeof(double));
    if (!s->off || !s->reqs || !s->lat) {
        mb_warn("out of memory: request tables of %zu requests", s->ios);
        return -1;
    }
    s->inject = mb_fault() && strcmp(mb_fault(), "corrupt") == 0;
    s->inj_req = s->ios;
    run->emulation = opt.files > 1 ? "several files striped RAID0-like stand in for several SSDs" : "none";
    if (s->ops) {
        if (open_storage(s, s->nslot * bs + (1 << 20)) != 0)
            return -1;
        if (!(s->slots = mb_storage_alloc(&s->sto, s->nslot * bs))) {
            mb_warn("out of memory: %zu bytes of %sbuffers", s->nslot * bs, s->eng ? "engine " : "");
            return -1;
        }
        if (!(s->drv = mb_storage_driver_new(&s->sto, s->ios, (size_t)opt.qd, (size_t)opt.batch, s->nslot))) {
            mb_warn("out of memory: the driver's tables of %zu requests", s->ios);
            return -1;
        }
    }
    int direct = 0, bad; /* writes are read back through the page cache */
    if (opt.rw && s->ops && mb_aio_open_volume(fpaths, (int)opt.files, O_RDONLY, &direct, s->rfd, &bad) != 0) {
        mb_warn("--dir: %s: %s", fpath[bad], strerror(errno));
        return -1;
    }
    if (s->slots)
        memset(s->slots, 0, s->nslot * bs);
    return 0;
}

static char *slot(struct st *s, size_t i) { return s->slots + (i % s->nslot) * s->ac->bs; }

/* Request i's write data: its own offset's pattern (a slot shared with an
 * earlier request is filled again before i is posted), with this
 * iteration's injected fault when i is the one chosen. */
static void write_data(struct st *s, size_t i)
{
    char *b = slot(s, i);
    mb_aio_pattern_fill(b, s->off[i], s->ac->bs, s->seed);
    if (i == s->inj_req)
        b[s->inj_byte] ^= 0x40;
}

/* Before posting request i: a write whose slot served an earlier request
 * gets its own data (the first nslot were filled in prepare, untimed). */
static void before_post(void *state, size_t i)
{
    struct st *s = state;
    if (opt.rw && i >= s->nslot)
        write_data(s, i);
}

static void prepare(void *state, long long iter)
{
    struct st *s = state;
    size_t bs = s->ac->bs;
    mb_aio_offsets(s->off, s->ios, bs, s->vol, opt.pattern, s->seed, iter, &s->seqpos);
    for (size_t i = 0; i < s->ios; i++) {
        int op = opt.rw ? MB_AIO_WRITE : MB_AIO_READ;
        s->reqs[i] = (struct mb_aio_req){s->off[i], bs, s->slots ? slot(s, i) : NULL, op, 0};
    }
    if (!s->slots) /* fio: its own buffers */
        return;
    s->inj_req = s->ios;
    if (s->inject) {
        /* a seeded position that differs per iteration: any request the
         * check reads (reads: the last nslot; writes: a request whose
         * offset no later one writes again), any byte */
        uint64_t r = mb_mix64(s->seed ^ mb_mix64((uint64_t)iter + 1));
        size_t first = !opt.rw && s->ios > s->nslot ? s->ios - s->nslot : 0;
        s->inj_req = first + (size_t)(r % (s->ios - first));
        s->inj_byte = (size_t)(mb_mix64(r) % bs);
        for (size_t j = s->inj_req + 1; opt.rw && j < s->ios; j++)
            if (s->off[j] == s->off[s->inj_req])
                s->inj_req = j;
    }
    if (opt.rw) /* write data: the pattern of each destination */
        for (size_t i = 0; i < s->ios && i < s->nslot; i++)
            write_data(s, i);
    else
        for (size_t i = 0; i < s->nslot; i++)
            memset(slot(s, i), 0xa5, 64); /* poison: a read that lands nothing is caught */
}

/* Request i took t seconds (the driver's done hook). */
static void lat_add(void *state, size_t i, double t)
{
    struct st *s = state;
    (void)i;
    if (mb_grow((void **)&s->lat, &s->caplat, s->nlat + 1, sizeof(double)) != 0) {
        s->nomem = 1;
        return;
    }
    s->lat[s->nlat++] = t;
}

/* fio's io_uring engine on the same files, block size, queue depth and
 * O_DIRECT; its data is its own: the case's check is n/a. */
static int run_fio(struct st *s, double *elapsed)
{
    struct mb_aio_fio_job j = {fpaths, (int)opt.files, opt.rw ? ".fio" : "", opt.rw, opt.pattern, !opt.buffered,
                               s->ac->bs, opt.qd, opt.batch, (uint64_t)opt.files * opt.file_size,
                               (uint64_t)(s->ios * s->ac->bs)};
    char err[1200];
    if (mb_aio_fio_run(&j, &s->fio_iops, err, sizeof(err)) != 0) {
        mb_warn("%s", err);
        return -1;
    }
    if (s->fio_iops > 0)
        *elapsed = (double)s->ios / s->fio_iops;
    return 0;
}

/* --vs-fio: timed iteration times of the async engine and of fio per block
 * size, for the ratio printed and recorded with the fio case */
static struct vsfio { size_t bs; double t[2][1024]; int n[2]; } vs[64];

static void vs_add(size_t bs, int fio, double t)
{
    for (int i = 0; i < 64; i++)
        if (vs[i].bs == bs || vs[i].bs == 0) {
            vs[i].bs = bs;
            if (vs[i].n[fio] < 1024)
                vs[i].t[fio][vs[i].n[fio]++] = t;
            return;
        }
}


static int iterate(void *state, long long iter, double *elapsed)
{
    struct st *s = state;
    double t0 = mb_now(), c0 = mb_cpu_s(0);
    int err = 0;
    char ferr[1200];
    struct mb_storage_hooks h = {s, before_post, lat_add};
    if (!s->ops)
        err = run_fio(s, elapsed);
    else if ((err = mb_storage_driver_run(s->drv, s->reqs, &h, ferr, sizeof(ferr))) != 0)
        mb_warn("%s", ferr); /* mmap's writes reached the files (flush) inside the time */
    if (s->nomem) {
        mb_warn("out of memory: the latency log of %zu entries", s->caplat);
        err = -1;
    }
    s->cpu += mb_cpu_s(0) - c0;
    s->cpu_ios += (long long)s->ios;
    if (opt.vs_fio && !err && iter >= s->run->common.warmup && (s->ac->mode == m_async || !s->ops))
        vs_add(s->ac->bs, !s->ops, !s->ops ? *elapsed : mb_now() - t0);
    if (!opt.rw && s->inj_req < s->ios) /* a corrupted block must be detected */
        slot(s, s->inj_req)[s->inj_byte] ^= 0x40;
    return err;
}

static int check(void *state, long long iter, char *msg, size_t len)
{
    (void)iter;
    struct st *s = state;
    size_t bs = s->ac->bs;
    /* reads: the slots hold the last nslot requests; writes: every
     * request's block is read back from the files */
    size_t first = !opt.rw && s->ios > s->nslot ? s->ios - s->nslot : 0;
    char *rb = NULL;
    if (opt.rw && posix_memalign((void **)&rb, 4096, bs) != 0) {
        snprintf(msg, len, "out of memory: %zu bytes to read writes back", bs);
        return 1;
    }
    for (size_t i = first; i < s->ios; i++) {
        const char *b = slot(s, i);
        if (opt.rw) {
            int rc = mb_aio_volume_rw(s->rfd, (int)opt.files, opt.stripe, MB_AIO_READ, s->off[i], bs, rb);
            if (rc != 0) {
                snprintf(msg, len, "reading back request %zu at %llu: %s", i, (unsigned long long)s->off[i],
                         rc == -ENODATA ? "short file" : strerror(-rc));
                free(rb);
                return 1;
            }
            b = rb;
        }
        size_t bad = mb_aio_pattern_check(b, s->off[i], bs, s->seed);
        if (bad != bs) {
            snprintf(msg, len, "request %zu at offset %llu: byte %zu (block %llu of file data) differs from the pattern%s",
                     i, (unsigned long long)s->off[i], bad, (unsigned long long)((s->off[i] + bad) / 512),
                     opt.rw ? " after the write" : "");
            free(rb);
            return 1;
        }
    }
    free(rb);
    return 0;
}

/* After the last case: files written by this run are taken for prepared
 * again only when every write case was read back and verified. */
static void finish(struct mb_run *run)
{
    if (!wrote_volume || run->rank != 0)
        return;
    int verified = 1;
    for (size_t k = 0; k < run->result.ncases; k++) {
        const struct mb_case_result *cr = &run->result.cases[k];
        if (cr->check != MB_CHECK_PASS && cr->check != MB_CHECK_NA)
            verified = 0;
    }
    verified &= run->result.ncases == run->ncases;
    char err[1200];
    if (verified && mb_aio_volume_mark(&volume, MB_AIO_VOLUME_COMPLETE, err, sizeof(err)) != 0) {
        mb_warn("--dir: %s", err);
        verified = 0;
    }
    mb_metric_run_str(&run->result, "aio_data_after",
              verified ? "complete: every write was read back and verified"
                       : "marked writing: a write case failed or was not checked; the next run writes the files again");
}

static void teardown(void *state)
{
    struct st *s = state;
    struct mb_run *run = s->run;
    const char *cn = NULL;
    for (size_t k = 0; k < run->ncases; k++)
        if (run->cases[k].user == s->ac) cn = run->cases[k].name;
    if (run->rank == 0 && cn && s->nlat) {
        mb_sort_doubles(s->lat, s->nlat);
        double q[] = {0.5, 0.99, 0.999};
        const char *qn[] = {"lat_p50_us", "lat_p99_us", "lat_p999_us"};
        for (int i = 0; i < 3; i++)
            mb_metric_case_dbl(&run->result, cn, qn[i], 1e6 * mb_stats_quantile_sorted(s->lat, s->nlat, q[i]));
        mb_metric_case_dbl(&run->result, cn, "cpu_us_per_io", s->cpu_ios ? 1e6 * s->cpu / (double)s->cpu_ios : 0);
        if (s->eng) {
            struct mb_aio_info inf;
            mb_aio_info(s->eng, &inf);
            mb_metric_case_int(&run->result, cn, "bounce_bytes", (long long)inf.bounce_bytes);
            mb_metric_case_dbl(&run->result, cn, "inflight_mean", inf.inflight_mean);
            char hist[4096];
            if (inf.adaptive) /* the thread counts chosen, run-length coded: "4x12 3x2" */
                mb_metric_case_str(&run->result, cn, "io_threads_chosen",
                                   mb_aio_thread_history_text(s->eng, hist, sizeof(hist)));
        }
        if (!run->common.quiet)
            printf("#   %s: latency p50 %.1f us, p99 %.1f us; CPU %.2f us per I/O\n", cn,
                   1e6 * mb_stats_quantile_sorted(s->lat, s->nlat, 0.5),
                   1e6 * mb_stats_quantile_sorted(s->lat, s->nlat, 0.99),
                   s->cpu_ios ? 1e6 * s->cpu / (double)s->cpu_ios : 0);
    }
    if (run->rank == 0 && cn && !s->ops && s->fio_iops > 0) {
        mb_metric_case_dbl(&run->result, cn, "fio_iops", s->fio_iops);
        for (int i = 0; i < 64 && vs[i].bs; i++)
            if (vs[i].bs == s->ac->bs && vs[i].n[0] && vs[i].n[1]) {
                /* throughput ratio: fio's median time over the engine's */
                double r = mb_median(vs[i].t[1], (size_t)vs[i].n[1]) / mb_median(vs[i].t[0], (size_t)vs[i].n[0]);
                mb_metric_case_dbl(&run->result, cn, "async_vs_fio", r);
                if (!run->common.quiet)
                    printf("#   engine (async) / fio throughput at %zu B: %.3f (medians of %d and %d iterations)\n",
                           s->ac->bs, r, vs[i].n[0], vs[i].n[1]);
            }
    }
    for (long long f = 0; f < opt.files; f++)
        if (s->rfd[f] >= 0) close(s->rfd[f]);
    if (s->slots)
        mb_storage_free(&s->sto, s->slots);
    mb_storage_close(&s->sto);
    mb_storage_driver_free(s->drv);
    free(s->off);
    free(s->reqs);
    free(s->lat);
    free(s);
}

static const struct mb_bench bench = {
    .name = "mb-aio",
    .description = "storage I/O through offload/aio (CAM) vs posix, bounce, inline (BaM-like), mmap and fio",
    .opts = aio_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
    .finish = finish,
};

int main(int argc, char **argv)
{
    /* --mode's choices: the registry's storage paths in its order, then fio */
    m_fio = (int)mb_storage_paths(modes, MAX_MODES - 1, mode_choices, sizeof(mode_choices), "fio");
    for (int m = 0; m < m_fio; m++)
        if (strcmp((mode_names[m] = modes[m]->name), "async") == 0)
            m_async = m;
    mode_names[m_fio] = "fio";
    for (struct mb_opt *o = aio_opts; o->name; o++)
        if (strcmp(o->name, "mode") == 0)
            o->choices = mode_choices;
    return mb_main(&bench, argc, argv);
}
