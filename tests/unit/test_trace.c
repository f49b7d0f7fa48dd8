/* The harness's trace spans: recording only while enabled, lanes by name,
 * spans from several threads, the gather to rank 0 (every rank, aligned to
 * the earliest, durations kept exactly), and the round trip through a
 * result file (/trace) with every value compared. With an argument, the
 * file is written there and kept (tests/integration/trace_chrome.sh turns
 * it into Chrome JSON). Runs at any number of ranks. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PER_THREAD = 50 };
static int worker_lane;

static void *worker(void *arg)
{
    (void)arg;
    for (int k = 0; k < PER_THREAD; k++) {
        double b = mb_trace_now();
        mb_trace_end(worker_lane, "copy", b);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    /* off: nothing is kept */
    int lane0 = mb_trace_lane("compute");
    mb_trace_span(lane0, "ignored", 0, 1);
    EXPECT(!mb_trace_enabled() && mb_trace_now() == 0);

    mb_trace_enable(1);
    EXPECT(mb_trace_enabled());
    EXPECT(mb_trace_lane("compute") == lane0);
    int lane1 = mb_trace_lane("link h2d");
    worker_lane = mb_trace_lane("ssd");
    EXPECT(lane0 == 0 && lane1 == 1 && worker_lane == 2);
    /* a library's mb_now() time on the trace's clock */
    double a = mb_trace_now(), b = mb_trace_clock(mb_now()), c = mb_trace_now();
    EXPECT(a >= 0 && a <= b && b <= c);
    /* explicit times: what the JSON test checks (rank r: r ms later) */
    mb_trace_span(lane0, "forward L0", 0.001 + rank * 1e-3, 0.003 + rank * 1e-3);
    mb_trace_span(lane1, "h2d \"P16\" L0", 0.0015, 0.0025);
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, worker, NULL);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);

    struct mb_result r;
    mb_result_init(&r);
    mb_trace_gather(MPI_COMM_WORLD, &r);
    size_t per_rank = 2 + 2 * PER_THREAD;
    if (rank == 0) {
        EXPECT(r.ntrace == (size_t)n);
        for (size_t q = 0; q < r.ntrace; q++) {
            const struct mb_trace_rank *tr = &r.trace[q];
            EXPECT(tr->rank == (int)q && tr->nspans == per_rank && tr->nlanes == 3);
            if (tr->nspans != per_rank || tr->nlanes != 3)
                continue;
            EXPECT(strcmp(tr->lanes[0], "compute") == 0 && strcmp(tr->lanes[1], "link h2d") == 0 &&
                   strcmp(tr->lanes[2], "ssd") == 0);
            EXPECT(strcmp(tr->spans[0].name, "forward L0") == 0 && tr->spans[0].lane == 0);
            EXPECT(strcmp(tr->spans[1].name, "h2d \"P16\" L0") == 0 && tr->spans[1].lane == 1);
            /* shifted by when the rank began tracing, durations exact */
            EXPECT(tr->spans[0].end - tr->spans[0].start == (0.003 + (double)q * 1e-3) - (0.001 + (double)q * 1e-3));
            EXPECT(tr->spans[0].start >= 0.001 + (double)q * 1e-3 - 1e-12);
            size_t copies = 0;
            for (size_t k = 2; k < tr->nspans; k++) {
                copies += strcmp(tr->spans[k].name, "copy") == 0 && tr->spans[k].lane == 2;
                EXPECT(tr->spans[k].end >= tr->spans[k].start && tr->spans[k].start >= 0);
            }
            EXPECT(copies == 2 * PER_THREAD);
        }
    } else {
        EXPECT(r.ntrace == 0);
    }
    /* the gather emptied every rank's list */
    struct mb_result again;
    mb_result_init(&again);
    mb_trace_gather(MPI_COMM_WORLD, &again);
    EXPECT(again.ntrace == 0);
    mb_result_free(&again);

    if (rank == 0) {
        char path[600], err[1024];
        if (argc > 1) {
            snprintf(path, sizeof path, "%s", argv[1]);
        } else {
            const char *base = getenv("TMPDIR");
            snprintf(path, sizeof path, "%.400s/trace.%ld.h5", base ? base : "/tmp", (long)getpid());
        }
        mb_kv_str(&r.root, "benchmark", "test_trace");
        EXPECT(mb_result_write(&r, path, err, sizeof err) == 0);
        struct mb_result back;
        int rc = mb_result_read(path, &back, err, sizeof err);
        EXPECT(rc == 0);
        if (rc)
            fprintf(stderr, "%s\n", err);
        EXPECT(rc == 0 && back.ntrace == r.ntrace);
        for (size_t q = 0; rc == 0 && q < r.ntrace && q < back.ntrace; q++) {
            const struct mb_trace_rank *a = &r.trace[q], *b = &back.trace[q];
            EXPECT(a->rank == b->rank && a->nspans == b->nspans && a->nlanes == b->nlanes);
            for (size_t k = 0; k < a->nlanes && k < b->nlanes; k++)
                EXPECT(strcmp(a->lanes[k], b->lanes[k]) == 0);
            for (size_t k = 0; k < a->nspans && k < b->nspans; k++)
                EXPECT(strcmp(a->spans[k].name, b->spans[k].name) == 0 && a->spans[k].start == b->spans[k].start &&
                       a->spans[k].end == b->spans[k].end && a->spans[k].lane == b->spans[k].lane);
        }
        if (rc == 0)
            mb_result_free(&back);
        if (argc <= 1)
            unlink(path);
    }
    mb_result_free(&r);
    int fails = test_failures, any;
    MPI_Allreduce(&fails, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
