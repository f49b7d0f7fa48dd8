/* The nonblocking broadcast (collectives/nb_bcast.c, mb_coll_start_algo)
 * for each algorithm that has one (mpi, binomial, scatter-allgather):
 * every root, counts 0, 1, 2, 7, 13 (not divisible by 2, 3 or 4), 1001
 * and 65537 int8s and doubles; every rank's buffer must equal the root's
 * data byte for byte. Each case runs two ways: progressed to completion
 * while polling between progress calls; two broadcasts in flight at once
 * from different roots, progressed in turn. Algorithms without a
 * nonblocking broadcast (shm) and the ring's pacing are refused. Runs as
 * a singleton in the unit tests and under mpirun at 2, 3 and 4 ranks
 * (tests/integration/coll_nb_bcast.sh). MB_FAULT_INJECT=corrupt flips a
 * byte of one result, which must fail the test. */
#include "../../collectives/coll.h"
#include "../../common/common.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void fill(unsigned char *b, size_t n, uint64_t salt)
{
    uint64_t st = salt * 0x9e3779b97f4a7c15ull + 3;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)mb_splitmix64(&st);
}

/* rank's buffer against the root's data (every rank computes it from the salt) */
static void compare(const unsigned char *got, size_t n, uint64_t salt, const char *algo, int root, size_t count,
                    const char *how)
{
    unsigned char *want = malloc(n + 1);
    if (!want)
        mb_die(1, "test_coll_nb_bcast: out of memory");
    fill(want, n, salt);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "rank %d: %s bcast root %d count %zu (%s): first difference at byte %zu\n", rank, algo, root,
                    count, how, i);
            test_failures++;
            break;
        }
    free(want);
}

static int corrupt_once = 1;

static int pace_never(void *ctx, size_t bytes)
{
    (void)ctx, (void)bytes;
    return 0;
}

static unsigned char *setup(size_t n, uint64_t salt, int root)
{
    unsigned char *b = malloc(n + 1);
    if (!b)
        mb_die(1, "test_coll_nb_bcast: out of memory");
    if (rank == root)
        fill(b, n, salt);
    else
        memset(b, 0xa5, n); /* not the root's: must be overwritten */
    return b;
}

static void maybe_corrupt(unsigned char *b, size_t n)
{
    if (n && corrupt_once && rank == nranks - 1 && getenv("MB_FAULT_INJECT") && strcmp(getenv("MB_FAULT_INJECT"), "corrupt") == 0)
        b[n / 2] ^= 1, corrupt_once = 0;
}

static struct mb_coll_req *start(struct mb_coll_ctx *ctx, const struct mb_coll_algo *al, void *buf, size_t count,
                                 enum mb_coll_dtype d, int root)
{
    char err[256];
    struct mb_coll_args a = {.kind = MB_COLL_BCAST, .recvbuf = buf, .count = count, .dtype = d, .root = root};
    struct mb_coll_req *q = NULL;
    if (mb_coll_start_algo(ctx, al, &a, NULL, &q, err, sizeof(err)) != 0)
        mb_die(1, "test_coll_nb_bcast: %s", err);
    return q;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mb_set_progname("test_coll_nb_bcast");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char err[256];
    struct mb_coll_ctx *ctx = mb_coll_ctx_create(MPI_COMM_WORLD, 0, err, sizeof(err));
    if (!ctx)
        mb_die(1, "test_coll_nb_bcast: %s", err);

    /* refused: an algorithm without a nonblocking broadcast, a pacing hook, a root outside the ranks */
    {
        unsigned char x[8];
        struct mb_coll_args a = {.kind = MB_COLL_BCAST, .recvbuf = x, .count = 8, .dtype = MB_COLL_INT8};
        struct mb_coll_req *q = NULL;
        EXPECT(mb_coll_start_algo(ctx, mb_coll_find("shm"), &a, NULL, &q, err, sizeof(err)) == -1 && !q &&
               strstr(err, "shm"));
        EXPECT(!mb_coll_nb_supports(mb_coll_find("shm"), MB_COLL_BCAST));
        EXPECT(mb_coll_nb_supports(mb_coll_find("binomial"), MB_COLL_BCAST));
        EXPECT(!mb_coll_nb_supports(mb_coll_find("binomial"), MB_COLL_ALLGATHER));
        EXPECT(mb_coll_nb_supports(NULL, MB_COLL_ALLGATHER));
        struct mb_coll_pace pace = {.fn = pace_never};
        EXPECT(mb_coll_start_algo(ctx, mb_coll_find("binomial"), &a, &pace, &q, err, sizeof(err)) == -1 && !q);
        a.root = nranks;
        EXPECT(mb_coll_start_algo(ctx, mb_coll_find("mpi"), &a, NULL, &q, err, sizeof(err)) == -1 && !q &&
               strstr(err, "root"));
    }

    static const char *const algos[] = {"mpi", "binomial", "scatter-allgather"};
    static const size_t counts[] = {0, 1, 2, 7, 13, 1001, 65537};
    static const enum mb_coll_dtype dtypes[] = {MB_COLL_INT8, MB_COLL_DOUBLE};
    int ncases = 0;
    uint64_t salt = 1;
    for (size_t al = 0; al < 3; al++) {
        const struct mb_coll_algo *algo = mb_coll_find(algos[al]);
        EXPECT(algo != NULL);
        if (!algo)
            continue;
        for (int root = 0; root < nranks; root++)
            for (size_t d = 0; d < 2; d++)
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                    size_t n = counts[c] * mb_coll_dtype_size(dtypes[d]);
                    /* one broadcast, polled */
                    uint64_t s1 = salt++;
                    unsigned char *b = setup(n, s1, root);
                    struct mb_coll_req *q = start(ctx, algo, b, counts[c], dtypes[d], root);
                    int rc;
                    while ((rc = mb_coll_progress(q)) == 0)
                        ;
                    EXPECT(rc == 1);
                    EXPECT(mb_coll_req_wait(q) == MPI_SUCCESS);
                    maybe_corrupt(b, n);
                    compare(b, n, s1, algos[al], root, counts[c], "one");
                    free(b);
                    /* two in flight, from root and the next rank, progressed in turn */
                    int root2 = (root + 1) % nranks;
                    uint64_t s2 = salt++, s3 = salt++;
                    unsigned char *b2 = setup(n, s2, root), *b3 = setup(n, s3, root2);
                    struct mb_coll_req *q2 = start(ctx, algo, b2, counts[c], dtypes[d], root);
                    struct mb_coll_req *q3 = start(ctx, algo, b3, counts[c], dtypes[d], root2);
                    int d2 = 0, d3 = 0;
                    while (!d2 || !d3) {
                        if (!d2)
                            d2 = mb_coll_progress(q2);
                        if (!d3)
                            d3 = mb_coll_progress(q3);
                        EXPECT(d2 >= 0 && d3 >= 0);
                        if (d2 < 0 || d3 < 0)
                            break;
                    }
                    EXPECT(mb_coll_req_wait(q2) == MPI_SUCCESS && mb_coll_req_wait(q3) == MPI_SUCCESS);
                    compare(b2, n, s2, algos[al], root, counts[c], "two in flight, first");
                    compare(b3, n, s3, algos[al], root2, counts[c], "two in flight, second");
                    free(b2), free(b3);
                    ncases++;
                }
    }
    int local = test_failures, any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_coll_nb_bcast: %d cases x 2 ways at %d ranks, %d failure(s)\n", ncases, nranks, any);
    mb_coll_ctx_free(ctx);
    MPI_Finalize();
    return any ? 1 : 0;
}
