/* The driver's batched timing (--agg-iters): a program that holds MAXB
 * iterations' buffers gets k back-to-back calls per sample, and still
 * every call is prepared before its block, run once, and checked after it
 * (a fault injected into call j of a block, j random, is caught and named);
 * k is recorded per case as the metric /metrics/<case>/agg_iters, capped by the
 * program's and the case's limits. Each run is mb_main in a child process
 * (one MPI_Init per process). */
#include "../../benchmarks/harness/harness.h"
#include "check.h"
#include "one_case_fixture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXB 8

/* Per slot (iteration % MAXB): which iteration holds it and how far it got. */
enum { FREE, PREPARED, RAN, CHECKED };
struct state {
    struct mb_run *run;
    long long iter[MAXB];
    int stage[MAXB];
    long long out[MAXB];
    long long calls, checks;
};

static long long fault_at = -1;  /* iteration whose output is corrupted, -1 none */
static long long flagged = -1;   /* the iteration the check failed on */
static int violations, case_limit;

#define VIOLATION(...) (fprintf(stderr, "test_batch: " __VA_ARGS__), fputc('\n', stderr), violations++)

static int plan(struct mb_run *run)
{
    return one_case_plan(run, case_limit);
}

static int setup(struct mb_run *run, const struct mb_case *c, void **st)
{
    (void)c;
    struct state *s = calloc(1, sizeof(*s));
    s->run = run;
    *st = s;
    return 0;
}

static void prepare(void *st, long long it)
{
    struct state *s = st;
    int k = (int)(it % MAXB);
    if ((s->stage[k] == PREPARED || s->stage[k] == RAN) && flagged < 0) /* after a failure, checks stop */
        VIOLATION("iteration %lld overwrites slot %d of iteration %lld before its check", it, k, s->iter[k]);
    s->iter[k] = it;
    s->stage[k] = PREPARED;
    s->out[k] = 0;
}

static int iterate(void *st, long long it, double *elapsed)
{
    (void)elapsed;
    struct state *s = st;
    int k = (int)(it % MAXB);
    if (s->stage[k] != PREPARED || s->iter[k] != it)
        VIOLATION("iteration %lld runs unprepared", it);
    s->out[k] = it * 7 + 1 + (it == fault_at);
    s->stage[k] = RAN;
    s->calls++;
    return 0;
}

static int check(void *st, long long it, char *msg, size_t len)
{
    struct state *s = st;
    int k = (int)(it % MAXB);
    if (s->stage[k] != RAN || s->iter[k] != it)
        VIOLATION("iteration %lld checked before it ran", it);
    if (flagged >= 0)
        VIOLATION("iteration %lld checked after a failed check", it);
    s->stage[k] = CHECKED;
    s->checks++;
    if (s->out[k] != it * 7 + 1) {
        flagged = it;
        snprintf(msg, len, "output %lld, expected %lld", s->out[k], it * 7 + 1);
        return 1;
    }
    return 0;
}

static void teardown(void *st)
{
    struct state *s = st;
    long long want = s->run->common.warmup + s->run->common.iters * s->run->batch;
    if (s->calls != want)
        VIOLATION("%lld calls, expected %lld (k = %lld)", s->calls, want, s->run->batch);
    if (fault_at < 0 && s->checks != s->calls)
        VIOLATION("%lld of %lld calls checked", s->checks, s->calls);
    if (fault_at >= 0 && flagged != fault_at)
        VIOLATION("the fault at iteration %lld was reported at %lld", fault_at, flagged);
    free(s);
}

static const struct mb_bench bench = {
    .name = "test_batch",
    .description = "batched timing",
    .max_batch = MAXB,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
};

/* Runs mb_main in a child with these flags; its exit status, or 3 when
 * the contract above was broken. */
static int run_child(const char *out, const char *batch, const char *iters, const char *warmup)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {"test_batch", "--agg-iters", (char *)batch, "-n", (char *)iters, "-w", (char *)warmup,
                        "--papi", "none", "-q", "-o", (char *)out, NULL};
        int rc = mb_main(&bench, 12, argv);
        _exit(violations ? 3 : rc);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Case c's metric "agg_iters" of a result file, -1 when missing. */
static long long recorded_batch(const char *path)
{
    struct mb_result r;
    char err[256];
    mb_result_init(&r);
    long long k = -1;
    if (mb_result_read(path, &r, err, sizeof(err)) != 0) {
        fprintf(stderr, "test_batch: %s\n", err);
    } else {
        const struct mb_metric *m = mb_metric_find(&r, "c", "agg_iters");
        if (m && m->type == MB_KV_INT && m->n == 1)
            k = m->i[0];
    }
    mb_result_free(&r);
    return k;
}

int main(void)
{
    char dir[] = "/tmp/test_batch.XXXXXX", out[64];
    if (!mkdtemp(dir))
        return 1;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    fprintf(stderr, "test_batch: seed %u\n", seed);

    /* k calls per sample, every one prepared, run and checked */
    snprintf(out, sizeof(out), "%s/a.h5", dir);
    EXPECT(run_child(out, "5", "4", "2") == 0);
    EXPECT(recorded_batch(out) == 5);
    /* capped by the program's limit, and by the case's */
    snprintf(out, sizeof(out), "%s/b.h5", dir);
    EXPECT(run_child(out, "1000", "3", "1") == 0);
    EXPECT(recorded_batch(out) == MAXB);
    case_limit = 3;
    snprintf(out, sizeof(out), "%s/c.h5", dir);
    EXPECT(run_child(out, "8", "3", "1") == 0);
    EXPECT(recorded_batch(out) == 3);
    case_limit = 0;
    /* 1: each call alone, as before batching */
    snprintf(out, sizeof(out), "%s/d.h5", dir);
    EXPECT(run_child(out, "1", "3", "1") == 0);
    EXPECT(recorded_batch(out) == 1);
    /* auto: from the warm-up, within the limits (no timing asserted) */
    snprintf(out, sizeof(out), "%s/e.h5", dir);
    EXPECT(run_child(out, "auto", "3", "3") == 0);
    long long k = recorded_batch(out);
    EXPECT(k >= 1 && k <= MAXB);
    /* a fault in call j of sample s (both random) is caught and named */
    for (int t = 0; t < 4; t++) {
        long long s = rand() % 3, j = rand() % MAXB;
        fault_at = 2 + s * MAXB + j;
        fprintf(stderr, "test_batch: fault in call %lld of sample %lld (iteration %lld)\n", j, s, fault_at);
        snprintf(out, sizeof(out), "%s/f%d.h5", dir, t);
        EXPECT(run_child(out, "8", "3", "2") == 1);
    }
    fault_at = -1;

    /* bad values: one line, exit 2 (no MPI needed) */
    struct mb_common common;
    static const char *const badv[] = {"0", "x", "auto2", "-3", "65537", ""};
    for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++) {
        char *argv[] = {"test_batch", "--agg-iters", (char *)badv[i], NULL};
        EXPECT(mb_options_parse(&bench, &common, 3, argv, NULL) == MB_EXIT_USAGE);
    }
    char *good[] = {"test_batch", "--agg-iters", "17", NULL};
    EXPECT(mb_options_parse(&bench, &common, 3, good, NULL) == 0 && common.batch == 17);
    char *def[] = {"test_batch", NULL};
    EXPECT(mb_options_parse(&bench, &common, 1, def, NULL) == 0 && common.batch == 0);
    static const char *const files[] = {"a", "b", "c", "d", "e", "f0", "f1", "f2", "f3"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(out, sizeof(out), "%s/%s.h5", dir, files[i]);
        unlink(out);
    }
    rmdir(dir);
    return TEST_EXIT();
}
