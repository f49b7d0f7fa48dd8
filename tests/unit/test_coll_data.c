/* The collectives library's validation data (data.c, vcase.c): inputs
 * every dtype holds exactly, the reductions written out by hand, each
 * output layout's expected values, the comparison catching +1, NaN and Inf
 * in every dtype, the fault's call position (seeded, in range, varying),
 * and one case on a 1-rank context end to end: prepared input, the
 * collective's output, the check passing, then failing at the injected
 * element. Also the count limits and the case's MPI-style call. */
#include "../../collectives/coll.h"
#include "check.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every input of every op and dtype: small integers whose reduction over p
 * ranks stays exact (sums within the dtype's range, products +-2), the
 * same when generated in one piece or from any offset. */
static void test_inputs(void)
{
    for (int p = 1; p <= 9; p += 4)
        for (int op = 0; op < MB_COLL_NOP; op++)
            for (int dt = 0; dt < MB_COLL_NDTYPE; dt++) {
                struct mb_coll_data d;
                mb_coll_data_init(&d, 1, (enum mb_coll_op)op, (enum mb_coll_dtype)dt, p, 12345);
                int64_t acc[300], tmp[300], part[300], r0[300];
                mb_coll_data_reduced(&d, 17, 300, 3, acc, tmp);
                /* by hand: rank by rank */
                mb_coll_data_row(&d, 0, 17, 300, 3, r0);
                for (int r = 1; r < p; r++) {
                    mb_coll_data_row(&d, r, 17, 300, 3, part);
                    for (int i = 0; i < 300; i++)
                        r0[i] = op == MB_COLL_SUM ? r0[i] + part[i] : op == MB_COLL_PROD ? r0[i] * part[i]
                                : op == MB_COLL_MIN ? (part[i] < r0[i] ? part[i] : r0[i])
                                                    : (part[i] > r0[i] ? part[i] : r0[i]);
                }
                int64_t lim = dt == MB_COLL_INT8 ? 127 : 1 << 24;
                for (int i = 0; i < 300; i++) {
                    EXPECT(acc[i] == r0[i]);
                    EXPECT(acc[i] <= lim && acc[i] >= -lim - 1);
                    if (op == MB_COLL_PROD)
                        EXPECT(acc[i] == 1 || acc[i] == 2 || acc[i] == -1 || acc[i] == -2);
                }
                /* a row from an offset equals the same elements of a longer row */
                mb_coll_data_row(&d, p - 1, 0, 300, 3, part);
                mb_coll_data_row(&d, p - 1, 100, 50, 3, tmp);
                EXPECT(memcmp(part + 100, tmp, 50 * sizeof(int64_t)) == 0);
            }
    /* inputs vary by rank, iteration and seed */
    struct mb_coll_data a, b;
    mb_coll_data_init(&a, 0, MB_COLL_SUM, MB_COLL_FLOAT, 4, 1);
    mb_coll_data_init(&b, 0, MB_COLL_SUM, MB_COLL_FLOAT, 4, 2);
    int64_t x[64], y[64], z[64], w[64];
    mb_coll_data_row(&a, 0, 0, 64, 0, x);
    mb_coll_data_row(&a, 1, 0, 64, 0, y);
    mb_coll_data_row(&a, 0, 0, 64, 1, z);
    mb_coll_data_row(&b, 0, 0, 64, 0, w);
    EXPECT(memcmp(x, y, sizeof(x)) != 0 && memcmp(x, z, sizeof(x)) != 0 && memcmp(x, w, sizeof(x)) != 0);
}

/* Storing, comparing and the test faults in every dtype. */
static void test_compare(void)
{
    for (int dt = 0; dt < MB_COLL_NDTYPE; dt++) {
        enum mb_coll_dtype d = (enum mb_coll_dtype)dt;
        int64_t v[40];
        for (int i = 0; i < 40; i++)
            v[i] = i - 20;
        double buf[40];
        mb_coll_store_row(d, buf, v, 40);
        EXPECT(mb_coll_compare_row(d, buf, v, 40) == 40);
        EXPECT(mb_coll_load(d, buf, 3) == -17);
        const char *faults[] = {"corrupt", "nan", "inf"};
        for (int f = 0; f < 3; f++) {
            mb_coll_store_row(d, buf, v, 40);
            mb_coll_store_fault(d, buf, 25, faults[f]);
            EXPECT(mb_coll_compare_row(d, buf, v, 40) == 25);
            int fp = d == MB_COLL_FLOAT || d == MB_COLL_DOUBLE;
            double got = mb_coll_load(d, buf, 25);
            if (fp && f == 1)
                EXPECT(isnan(got));
            else if (fp && f == 2)
                EXPECT(isinf(got));
            else
                EXPECT(got == 6);
        }
    }
}

/* Each layout's expected output, checked against a buffer built by hand. */
static void test_layouts(void)
{
    enum { P = 3, BLK = 5, N = P * BLK };
    struct mb_coll_data red, gat;
    mb_coll_data_init(&red, 1, MB_COLL_MAX, MB_COLL_INT32, P, 7);
    mb_coll_data_init(&gat, 0, MB_COLL_SUM, MB_COLL_INT32, P, 7);
    int64_t want[N], tmp[N];
    int32_t out[N];
    char msg[200];
    const int rank = 1, root = 2;
    for (int layout = MB_COLL_OUT_REDUCED; layout <= MB_COLL_OUT_ROOT; layout++) {
        const struct mb_coll_data *d = layout <= MB_COLL_OUT_REDUCED_BLOCK ? &red : &gat;
        size_t n = layout == MB_COLL_OUT_REDUCED_BLOCK ? BLK : N;
        for (size_t i = 0; i < n; i++) {
            switch (layout) {
            case MB_COLL_OUT_REDUCED: case MB_COLL_OUT_REDUCED_ROOT: mb_coll_data_reduced(d, i, 1, 4, want, tmp); break;
            case MB_COLL_OUT_REDUCED_BLOCK: mb_coll_data_reduced(d, rank * BLK + i, 1, 4, want, tmp); break;
            case MB_COLL_OUT_GATHERED: mb_coll_data_row(d, (int)(i / BLK), i % BLK, 1, 4, want); break;
            case MB_COLL_OUT_EXCHANGED: mb_coll_data_row(d, (int)(i / BLK), rank * BLK + i % BLK, 1, 4, want); break;
            case MB_COLL_OUT_ROOT: mb_coll_data_row(d, root, i, 1, 4, want); break;
            }
            out[i] = (int32_t)want[0];
        }
        EXPECT(mb_coll_data_verify(d, layout, MB_COLL_INT32, out, n, BLK, rank, root, 4, msg, sizeof(msg)) == 0);
        /* another iteration's values differ */
        EXPECT(mb_coll_data_verify(d, layout, MB_COLL_INT32, out, n, BLK, rank, root, 5, msg, sizeof(msg)) == 1);
        out[n - 1] += 1;
        EXPECT(mb_coll_data_verify(d, layout, MB_COLL_INT32, out, n, BLK, rank, root, 4, msg, sizeof(msg)) == 1);
        char want_msg[64];
        snprintf(want_msg, sizeof(want_msg), "first wrong element at index %zu:", n - 1);
        EXPECT(strncmp(msg, want_msg, strlen(want_msg)) == 0);
    }
    EXPECT(mb_coll_data_verify(&gat, MB_COLL_OUT_NONE, MB_COLL_INT32, NULL, 0, 0, 0, 0, 0, msg, sizeof(msg)) == 0);
}

/* The fault's call: reproducible from the seed and the case, inside the
 * block, and not always the same call. */
static void test_fault_call(void)
{
    int seen[16] = {0}, distinct = 0;
    for (uint64_t seed = 0; seed < 64; seed++) {
        long long c = mb_coll_fault_call(seed, 1024, 0, 3, 2, 0, 0, 16);
        EXPECT(c >= 0 && c < 16);
        EXPECT(c == mb_coll_fault_call(seed, 1024, 0, 3, 2, 0, 0, 16));
        if (c >= 0 && c < 16 && !seen[c]++)
            distinct++;
    }
    EXPECT(distinct > 4);
    EXPECT(mb_coll_fault_call(99, 8, 1, 1, 1, 1, 1, 1) == 0);
    EXPECT(mb_coll_fault_call(99, 8, 1, 1, 1, 1, 1, 0) == 0); /* no batch: the first call */
}

static void test_counts_and_args(void)
{
    char why[300];
    EXPECT(mb_coll_count_fits(1 << 20, MB_COLL_INT8, 1, why, sizeof(why)) == 0);
    EXPECT(mb_coll_count_fits((size_t)INT_MAX + 1, MB_COLL_INT8, 0, why, sizeof(why)) == -1 &&
           strstr(why, "MPI's count limit"));
    EXPECT(mb_coll_count_fits((size_t)INT_MAX + 4, MB_COLL_FLOAT, 0, why, sizeof(why)) == 0);
    EXPECT(mb_coll_count_fits((size_t)INT_MAX + 4, MB_COLL_FLOAT, 1, why, sizeof(why)) == -1 &&
           strstr(why, "--algo mpi"));
    char s, r;
    struct mb_coll_args a = mb_coll_case_args(MB_COLL_ALLGATHER, 12, 4, 0, MB_COLL_FLOAT, MB_COLL_SUM, 1, &s, &r);
    EXPECT(a.count == 3 && a.sendbuf == &s && a.recvbuf == &r && a.root == 1);
    a = mb_coll_case_args(MB_COLL_REDUCE_SCATTER, 12, 4, 1, MB_COLL_FLOAT, MB_COLL_SUM, 0, &s, &r);
    EXPECT(a.count == 3 && a.sendbuf == NULL);
    a = mb_coll_case_args(MB_COLL_BCAST, 12, 4, 0, MB_COLL_FLOAT, MB_COLL_SUM, 0, &s, &r);
    EXPECT(a.count == 12 && a.sendbuf == NULL);
    char buf[64];
    const char *names[] = {"a", "bc", "d"};
    mb_coll_join_names(buf, sizeof(buf), names, 3);
    EXPECT(strcmp(buf, "a|bc|d") == 0);
}

/* One case on a 1-rank context: prepare, run mpi's allreduce, check;
 * then the injected element fails the check. Host and registered buffers. */
static void test_vcase(void)
{
    char err[300], msg[300];
    struct mb_coll_ctx *ctx = mb_coll_ctx_create(MPI_COMM_SELF, 0, err, sizeof(err));
    EXPECT(ctx != NULL);
    if (!ctx)
        return;
    const struct mb_coll_algo *mpi = mb_coll_find("mpi");
    for (int registered = 0; registered < 2; registered++) {
        struct mb_coll_vcase v;
        EXPECT(mb_coll_vcase_init(&v, ctx, MB_COLL_OUT_REDUCED, MB_COLL_SUM, MB_COLL_DOUBLE, 1000, 0, 0, 5, 4,
                                  registered, 0, "nan", err, sizeof(err)) == 0);
        EXPECT(v.send_n == 1000 && v.recv_n == 1000 && v.fault_rank == 0 && v.bufs.nsets == 4);
        for (long long it = 0; it < 6; it++) {
            mb_coll_vcase_prepare(&v, it);
            struct mb_coll_args a = mb_coll_case_args(MB_COLL_ALLREDUCE, 1000, 1, 0, MB_COLL_DOUBLE, MB_COLL_SUM,
                                                      0, v.send, v.recv);
            EXPECT(mpi->run(ctx, &a) == MPI_SUCCESS);
            v.fault_iter = 4;
            mb_coll_vcase_fault(&v, it, "nan");
            int bad = mb_coll_vcase_verify(&v, it, msg, sizeof(msg));
            EXPECT(bad == (it == 4));
            if (it == 4)
                EXPECT(strstr(msg, "index 500: got nan") != NULL);
        }
        /* the sets of a batch stay apart: iteration 1's output survives iteration 2's call */
        mb_coll_vcase_prepare(&v, 1);
        struct mb_coll_args a = mb_coll_case_args(MB_COLL_ALLREDUCE, 1000, 1, 0, MB_COLL_DOUBLE, MB_COLL_SUM, 0,
                                                  v.send, v.recv);
        mpi->run(ctx, &a);
        mb_coll_vcase_prepare(&v, 2);
        EXPECT(mb_coll_vcase_verify(&v, 1, msg, sizeof(msg)) == 0);
        mb_coll_vcase_free(&v);
    }
    /* no fault named, or barrier: nothing is corrupted */
    struct mb_coll_vcase v;
    EXPECT(mb_coll_vcase_init(&v, ctx, MB_COLL_OUT_NONE, MB_COLL_SUM, MB_COLL_FLOAT, 0, 0, 0, 5, 1, 0, 0, "corrupt",
                              err, sizeof(err)) == 0 && v.fault_rank == -1);
    mb_coll_vcase_free(&v);
    mb_coll_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mb_set_progname("test_coll_data");
    test_inputs();
    test_compare();
    test_layouts();
    test_fault_call();
    test_counts_and_args();
    test_vcase();
    MPI_Finalize();
    return TEST_EXIT();
}
