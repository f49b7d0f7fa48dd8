/* Every algorithm of the collectives registry against the MPI library's own
 * collective on random cases: kind, count (0, 1, primes, fewer elements than
 * ranks, up to 70000), dtype, op, in place or not, root; on two live
 * contexts at once (MPI_COMM_WORLD and a rank-reversed copy), interleaved.
 * Runs as a singleton in the unit tests and under mpirun at 2 to 5 ranks
 * (tests/integration/coll_algos.sh), optionally with --ranks-per-node N.
 * MB_FAULT_INJECT=corrupt flips a bit of one result per algorithm, which
 * must fail the test.
 * Usage: test_coll [CASES] [RANKS_PER_NODE] [SEED] */
#include "../../collectives/coll.h"
#include "../../common/common.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t rnd(void) { return mb_splitmix64(&rng_state); } /* the same sequence on every rank */

static void fill(enum mb_coll_dtype d, enum mb_coll_op op, void *buf, size_t n, uint64_t salt)
{
    uint64_t st = salt * 0x2545f4914f6cdd1dull + 1;
    for (size_t i = 0; i < n; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int v = (int)((st >> 33) % 41) - 20;                 /* sum/min/max: |sum| <= 100 */
        if (op == MB_COLL_PROD)
            v = (int)((st >> 33) % 3) == 0 ? 2 : (st >> 40) & 1 ? 1 : -1; /* |prod| <= 32 */
        switch (d) {
        case MB_COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
        case MB_COLL_INT32: ((int32_t *)buf)[i] = v; break;
        case MB_COLL_INT64: ((int64_t *)buf)[i] = v; break;
        case MB_COLL_FLOAT: ((float *)buf)[i] = (float)v; break;
        case MB_COLL_DOUBLE: ((double *)buf)[i] = v; break;
        default: break;
        }
    }
}

struct bufs {
    char *send, *recv;
    int reg;
};

static char *get(struct mb_coll_ctx *ctx, int reg, size_t bytes)
{
    char err[256];
    char *p = reg ? mb_coll_alloc(ctx, bytes, err, sizeof(err)) : malloc(bytes ? bytes : 1);
    if (!p)
        mb_die(1, "test_coll: %s", reg ? err : "out of memory");
    return p;
}

static void put(struct mb_coll_ctx *ctx, int reg, char *p)
{
    if (reg)
        mb_coll_release(ctx, p);
    else
        free(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mb_set_progname("test_coll");
    int ncases = argc > 1 ? atoi(argv[1]) : 60, rpn = argc > 2 ? atoi(argv[2]) : 0;
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 12345;
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &rev);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, rev};
    struct mb_coll_ctx *ctxs[2];
    char err[256];
    for (int k = 0; k < 2; k++) {
        ctxs[k] = mb_coll_ctx_create(comms[k], rpn, err, sizeof(err));
        if (!ctxs[k])
            mb_die(1, "test_coll: %s", err);
        if (mb_coll_pool_open(ctxs[k], NULL) != 0)
            mb_die(1, "test_coll: pool under /dev/shm: %s", "cannot open");
    }
    static const size_t fixed[] = {0, 1, 2, 3, 5, 7, 13, 31, 4099, 65537};
    long long runs[32] = {0}, fails = 0;
    const char *fi = getenv("MB_FAULT_INJECT");
    int fault = fi && strcmp(fi, "corrupt") == 0, faulted[32] = {0};
    for (int t = 0; t < ncases; t++) {
        enum mb_coll_kind kind = (enum mb_coll_kind)(rnd() % MB_COLL_NKIND);
        uint64_t r = rnd();
        size_t count = r % 3 == 0 ? fixed[rnd() % 10] : r % 3 == 1 ? rnd() % 200 : rnd() % 70000;
        enum mb_coll_dtype d = (enum mb_coll_dtype)(rnd() % MB_COLL_NDTYPE);
        enum mb_coll_op op = (enum mb_coll_op)(rnd() % MB_COLL_NOP);
        int inplace = (int)(rnd() % 2), root = (int)(rnd() % (uint64_t)p);
        uint64_t salt = rnd();
        size_t es = mb_coll_dtype_size(d);
        /* elements of the send and receive buffers, MPI semantics */
        size_t in_n = count, out_n = count;
        if (kind == MB_COLL_REDUCE_SCATTER)
            in_n = count * (size_t)p, out_n = inplace ? in_n : count;
        if (kind == MB_COLL_ALLGATHER)
            out_n = count * (size_t)p;
        if (kind == MB_COLL_BCAST)
            inplace = 1;
        size_t cmp_n = kind == MB_COLL_REDUCE_SCATTER ? count : out_n;
        int cmp_here = !(kind == MB_COLL_REDUCE && rank != root);
        for (int k = 0; k < 2; k++) {
            MPI_Comm comm = comms[k];
            int crank;
            MPI_Comm_rank(comm, &crank);
            int croot = root; /* the same process is root in both communicators */
            if (k == 1)
                croot = p - 1 - root;
            char *ref = malloc(out_n * es + 1), *rin = malloc(in_n * es + 1);
            /* the reference: the MPI library on the same inputs */
            if (kind == MB_COLL_ALLGATHER && inplace)
                fill(d, op, ref + (size_t)crank * count * es, count, salt + (uint64_t)rank);
            else if (kind == MB_COLL_BCAST)
                fill(d, op, ref, count, salt);
            else
                fill(d, op, inplace ? ref : rin, in_n, salt + (uint64_t)rank);
            MPI_Datatype mt = d == MB_COLL_INT8 ? MPI_INT8_T : d == MB_COLL_INT32 ? MPI_INT32_T
                            : d == MB_COLL_INT64 ? MPI_INT64_T : d == MB_COLL_FLOAT ? MPI_FLOAT : MPI_DOUBLE;
            MPI_Op mo = op == MB_COLL_SUM ? MPI_SUM : op == MB_COLL_PROD ? MPI_PROD : op == MB_COLL_MIN ? MPI_MIN : MPI_MAX;
            const void *min = inplace ? MPI_IN_PLACE : rin;
            switch (kind) {
            case MB_COLL_ALLREDUCE: MPI_Allreduce(min, ref, (int)count, mt, mo, comm); break;
            case MB_COLL_REDUCE_SCATTER: MPI_Reduce_scatter_block(min, ref, (int)count, mt, mo, comm); break;
            case MB_COLL_ALLGATHER: MPI_Allgather(min, (int)count, mt, ref, (int)count, mt, comm); break;
            case MB_COLL_BCAST: MPI_Bcast(ref, (int)count, mt, croot, comm); break;
            case MB_COLL_REDUCE:
                if (inplace && crank != croot)
                    MPI_Reduce(ref, NULL, (int)count, mt, mo, croot, comm);
                else
                    MPI_Reduce(min, ref, (int)count, mt, mo, croot, comm);
                break;
            default: break;
            }
            for (size_t ai = 1; ai < mb_coll_nalgos(); ai++) {
                const struct mb_coll_algo *al = mb_coll_algo_at(ai);
                char why[256];
                if (al->device) /* device buffers: tests/gpu/run.sh checks them */
                    continue;
                if (!mb_coll_usable(al, ctxs[k], kind, why, sizeof(why)))
                    continue;
                int reg = al->wants_registered;
                char *sb = get(ctxs[k], reg, in_n * es + 1), *rb = get(ctxs[k], reg, out_n * es + 1);
                memset(rb, 0x5a, out_n * es);
                if (kind == MB_COLL_ALLGATHER && inplace)
                    fill(d, op, rb + (size_t)crank * count * es, count, salt + (uint64_t)rank);
                else if (kind == MB_COLL_BCAST) {
                    if (crank == croot)
                        fill(d, op, rb, count, salt);
                } else
                    fill(d, op, inplace ? rb : sb, in_n, salt + (uint64_t)rank);
                struct mb_coll_args a = {kind, inplace ? NULL : sb, rb, count, d, op, croot};
                int rc = al->run(ctxs[k], &a);
                if (fault && cmp_here && cmp_n && !faulted[ai]) { /* the comparison must catch this */
                    rb[(cmp_n / 2) * es] ^= 1;
                    faulted[ai] = 1;
                }
                int bad = rc != 0 || (cmp_here && cmp_n && memcmp(rb, ref, cmp_n * es) != 0);
                int anybad;
                MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
                if (bad) {
                    size_t i = 0;
                    while (i < cmp_n && memcmp(rb + i * es, ref + i * es, es) == 0)
                        i++;
                    fprintf(stderr, "test_coll: rank %d: %s %s count=%zu dtype=%d op=%d %s root=%d comm=%d: rc=%d, first difference at element %zu\n",
                            rank, al->name, mb_coll_kind_names[kind], count, (int)d, (int)op, inplace ? "inplace" : "oop",
                            croot, k, rc, i);
                }
                fails += anybad && rank == 0;
                runs[ai]++;
                put(ctxs[k], reg, sb);
                put(ctxs[k], reg, rb);
            }
            free(ref);
            free(rin);
        }
    }
    for (size_t ai = 1; ai < mb_coll_nalgos(); ai++) { /* device algorithms: usable, or why not */
        const struct mb_coll_algo *al = mb_coll_algo_at(ai);
        char why[256] = "";
        if (!al->device)
            continue;
        int ok = mb_coll_usable(al, ctxs[0], MB_COLL_ALLREDUCE, why, sizeof(why));
        if (rank == 0)
            printf("  %-18s %s%s\n", al->name, ok ? "usable on device buffers" : "unavailable: ", ok ? "" : why);
        EXPECT(ok || why[0] != '\0');
    }
    if (rank == 0) {
        printf("test_coll: %d ranks, ranks-per-node %d, %d nodes, %d random cases x 2 communicators\n", p, rpn,
               mb_coll_ctx_nnodes(ctxs[0]), ncases);
        for (size_t ai = 1; ai < mb_coll_nalgos(); ai++)
            if (!mb_coll_algo_at(ai)->device)
                printf("  %-18s %lld runs compared with the MPI library\n", mb_coll_algo_at(ai)->name, runs[ai]);
    }
    EXPECT(fails == 0);
    for (int k = 0; k < 2; k++)
        mb_coll_ctx_free(ctxs[k]);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return TEST_EXIT();
}
