/* The nonblocking ring (collectives/nb.c) against the blocking `ring`:
 * allgather and reduce_scatter_block, int8/int32/float, sum and max,
 * counts 0, 1, primes and 65537, in place and out, bit for bit. Each case
 * runs three ways: progressed from this thread through a pacing hook that
 * holds two sends of every three; two requests in flight at once,
 * progressed in turn; progressed by a second thread while this one makes
 * its own MPI calls (MPI_THREAD_MULTIPLE). Runs as a singleton in the unit
 * tests and under mpirun at 2, 3 and 4 ranks (tests/integration/coll_nb.sh).
 * MB_FAULT_INJECT=corrupt flips a bit of one nonblocking result, which
 * must fail the test. */
#include "../../collectives/coll.h"
#include "../../common/common.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void fill(enum mb_coll_dtype d, void *buf, size_t n, uint64_t salt)
{
    uint64_t st = salt * 0x9e3779b97f4a7c15ull + 7;
    for (size_t i = 0; i < n; i++) {
        int v = (int)(mb_splitmix64(&st) % 41) - 20;
        switch (d) {
        case MB_COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
        case MB_COLL_INT32: ((int32_t *)buf)[i] = v * 1000003; break;
        case MB_COLL_FLOAT: ((float *)buf)[i] = (float)v * 0.1f; break; /* inexact: the order shows */
        default: break;
        }
    }
}

/* Lets one send in three go; counts what it was asked and what it let go. */
struct pacer {
    long asked, allowed;
    size_t bytes;
};
static int pace_one_in_three(void *ctx, size_t bytes)
{
    struct pacer *pc = ctx;
    if (pc->asked++ % 3 != 2)
        return 0;
    pc->allowed++;
    pc->bytes += bytes;
    return 1;
}

struct progress_job {
    struct mb_coll_req *req;
    int rc;
};
static void *progress_thread(void *arg)
{
    struct progress_job *j = arg;
    while ((j->rc = mb_coll_progress(j->req)) == 0)
        ;
    return NULL;
}

/* One case's buffers: the input (p blocks for reduce_scatter, one for
 * allgather) and an output of p blocks. */
struct io {
    char *in, *out;
};

static void setup_io(struct io *io, const struct mb_coll_args *a, size_t bytes_in, size_t bytes_out, uint64_t salt)
{
    io->in = calloc(1, bytes_in + 1);
    io->out = calloc(1, bytes_out + 1);
    if (!io->in || !io->out)
        mb_die(1, "test_coll_nb: out of memory");
    fill(a->dtype, io->in, bytes_in / mb_coll_dtype_size(a->dtype), salt);
}

/* args for io: in place puts the input where MPI wants it in recvbuf. */
static struct mb_coll_args args_for(const struct mb_coll_args *a, struct io *io, int inplace, size_t blk)
{
    struct mb_coll_args b = *a;
    b.recvbuf = io->out;
    b.sendbuf = io->in;
    if (inplace) {
        if (a->kind == MB_COLL_ALLGATHER)
            memcpy(io->out + (size_t)rank * blk, io->in, blk);
        else
            memcpy(io->out, io->in, (size_t)nranks * blk);
        b.sendbuf = NULL;
    }
    return b;
}

static void compare(const char *how, const struct mb_coll_args *a, int inplace, const char *got,
                    const char *want, size_t bytes)
{
    if (getenv("MB_FAULT_INJECT") && !strcmp(getenv("MB_FAULT_INJECT"), "corrupt") && bytes && rank == 0)
        ((char *)got)[bytes / 2] ^= 4;
    for (size_t i = 0; i < bytes; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "rank %d: %s %s %s %s count %zu%s: first difference at byte %zu\n", rank, how,
                    mb_coll_kind_names[a->kind], mb_coll_dtype_names[a->dtype], mb_coll_op_names[a->op],
                    a->count, inplace ? " in place" : "", i);
            test_failures++;
            return;
        }
}

static struct mb_coll_req *start(struct mb_coll_ctx *ctx, const struct mb_coll_args *a, const struct mb_coll_pace *pc)
{
    char err[256];
    struct mb_coll_req *q;
    if (mb_coll_start(ctx, a, pc, &q, err, sizeof(err)) != 0)
        mb_die(1, "test_coll_nb: %s", err);
    return q;
}

static void one_case(struct mb_coll_ctx *ctx, MPI_Comm other, const struct mb_coll_args *a, int inplace, uint64_t salt)
{
    const struct mb_coll_algo *ring = mb_coll_find("ring");
    size_t blk = a->count * mb_coll_dtype_size(a->dtype), p = (size_t)nranks;
    size_t in_bytes = a->kind == MB_COLL_ALLGATHER ? blk : p * blk, out_bytes = p * blk;
    size_t cmp_bytes = a->kind == MB_COLL_ALLGATHER ? p * blk : blk;
    struct io ref, paced, pair, thr;
    setup_io(&ref, a, in_bytes, out_bytes, salt);
    struct mb_coll_args ra = args_for(a, &ref, inplace, blk);
    EXPECT(ring->run(ctx, &ra) == MPI_SUCCESS);

    /* paced, from this thread */
    setup_io(&paced, a, in_bytes, out_bytes, salt);
    struct mb_coll_args pa = args_for(a, &paced, inplace, blk);
    struct pacer pc = {0};
    struct mb_coll_pace pace = {pace_one_in_three, &pc};
    struct mb_coll_req *q = start(ctx, &pa, &pace);
    EXPECT(mb_coll_req_wait(q) == MPI_SUCCESS);
    compare("paced", a, inplace, paced.out, ref.out, cmp_bytes);
    EXPECT(pc.allowed == nranks - 1);               /* one send per ring step */
    EXPECT(pc.bytes == (size_t)(nranks - 1) * blk); /* each of one block */
    EXPECT(pc.asked == 3 * pc.allowed);             /* a held send is asked again */

    /* two in flight on one context: this case and the other collective */
    setup_io(&pair, a, in_bytes, out_bytes, salt);
    struct mb_coll_args qa = args_for(a, &pair, inplace, blk);
    struct mb_coll_args ob = *a;
    ob.kind = a->kind == MB_COLL_ALLGATHER ? MB_COLL_REDUCE_SCATTER : MB_COLL_ALLGATHER;
    struct io o1, o2;
    size_t o_in = ob.kind == MB_COLL_ALLGATHER ? blk : p * blk;
    setup_io(&o1, &ob, o_in, out_bytes, salt + 99);
    setup_io(&o2, &ob, o_in, out_bytes, salt + 99);
    struct mb_coll_args oa1 = args_for(&ob, &o1, 0, blk), oa2 = args_for(&ob, &o2, 0, blk);
    EXPECT(ring->run(ctx, &oa1) == MPI_SUCCESS);
    struct mb_coll_req *q1 = start(ctx, &qa, NULL), *q2 = start(ctx, &oa2, NULL);
    int d1 = 0, d2 = 0;
    while (!(d1 && d2)) { /* the second first, so their messages cross */
        if (!d2)
            d2 = mb_coll_progress(q2);
        if (!d1)
            d1 = mb_coll_progress(q1);
        EXPECT(d1 >= 0 && d2 >= 0);
        if (d1 < 0 || d2 < 0)
            break;
    }
    EXPECT(mb_coll_req_wait(q2) == MPI_SUCCESS);
    EXPECT(mb_coll_req_wait(q1) == MPI_SUCCESS);
    compare("paired", a, inplace, pair.out, ref.out, cmp_bytes);
    compare("paired (other)", &ob, 0, o2.out, o1.out, ob.kind == MB_COLL_ALLGATHER ? p * blk : blk);

    /* progressed by another thread while this one calls MPI itself */
    setup_io(&thr, a, in_bytes, out_bytes, salt);
    struct mb_coll_args ta = args_for(a, &thr, inplace, blk);
    struct progress_job job = {start(ctx, &ta, NULL), 0};
    pthread_t th;
    if (pthread_create(&th, NULL, progress_thread, &job) != 0)
        mb_die(1, "test_coll_nb: pthread_create failed");
    long sum = 0;
    for (int i = 0; i < 20; i++) {
        long mine = rank + i, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, other);
        sum += all;
    }
    pthread_join(th, NULL);
    EXPECT(job.rc == 1);
    EXPECT(mb_coll_req_wait(job.req) == MPI_SUCCESS);
    EXPECT(sum == 20L * nranks * (nranks - 1) / 2 + (long)nranks * 190);
    compare("threaded", a, inplace, thr.out, ref.out, cmp_bytes);

    struct io *all[] = {&ref, &paced, &pair, &thr, &o1, &o2};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]->in), free(all[i]->out);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mb_set_progname("test_coll_nb");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("skip: the MPI library provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 77;
    }
    char err[256];
    struct mb_coll_ctx *ctx = mb_coll_ctx_create(MPI_COMM_WORLD, 0, err, sizeof(err));
    if (!ctx)
        mb_die(1, "test_coll_nb: %s", err);
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);

    /* nothing but the ring's two collectives */
    struct mb_coll_req *q = NULL;
    struct mb_coll_args bad = {.kind = MB_COLL_ALLREDUCE, .recvbuf = err, .count = 1, .dtype = MB_COLL_INT8};
    EXPECT(mb_coll_start(ctx, &bad, NULL, &q, err, sizeof(err)) == -1 && !q && strstr(err, "allreduce"));

    static const size_t counts[] = {0, 1, 2, 7, 13, 1001, 65537};
    static const enum mb_coll_dtype dtypes[] = {MB_COLL_INT8, MB_COLL_INT32, MB_COLL_FLOAT};
    static const enum mb_coll_op ops[] = {MB_COLL_SUM, MB_COLL_MAX};
    int ncases = 0;
    uint64_t salt = 1;
    for (int k = 0; k < 2; k++)
        for (size_t d = 0; d < 3; d++)
            for (size_t o = 0; o < 2; o++)
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        struct mb_coll_args a = {.kind = k ? MB_COLL_REDUCE_SCATTER : MB_COLL_ALLGATHER,
                                                 .count = counts[c], .dtype = dtypes[d], .op = ops[o]};
                        one_case(ctx, other, &a, inplace, salt++ * 1000 + (uint64_t)rank);
                        ncases++;
                    }
    int local = test_failures, any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_coll_nb: %d cases x 3 ways at %d ranks, %d failure(s)\n", ncases, nranks, any);
    MPI_Comm_free(&other);
    mb_coll_ctx_free(ctx);
    MPI_Finalize();
    return any ? 1 : 0;
}
