/* zero/interference.c: the --interference measurements run and validate
 * (no timing is asserted: the machine is shared). Every time finite and
 * positive, the slowdowns what the times say; a corrupted allgather
 * result and a corrupted GEMM result are each caught, naming the rank,
 * and the verdict is the same on every rank; bad options refused. Runs as
 * a singleton in the unit tests and at 2 ranks in
 * tests/integration/zero_interference.sh. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided, rank, W;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &W);
    struct zero_interference_opts o = {.coll_bytes = 256 << 10, .gemm_n = 160, .copy_bytes = 8 << 20, .reps = 3};
    struct zero_interference r;
    char err[256] = "";
    int rc = zero_interference_run(MPI_COMM_WORLD, &o, &r, err, sizeof err);
    EXPECT(rc == 0);
    if (rc != 0)
        fprintf(stderr, "rank %d: %s\n", rank, err);
    else {
        EXPECT(r.coll_alone > 0 && isfinite(r.coll_alone));
        EXPECT(r.coll_with_gemm > 0 && isfinite(r.coll_with_gemm));
        EXPECT(r.gemm_alone > 0 && isfinite(r.gemm_alone));
        EXPECT(r.gemm_with_copy > 0 && isfinite(r.gemm_with_copy));
        EXPECT(fabs(r.coll_slowdown - (r.coll_with_gemm / r.coll_alone - 1)) < 1e-12);
        EXPECT(fabs(r.gemm_slowdown - (r.gemm_with_copy / r.gemm_alone - 1)) < 1e-12);
        EXPECT(r.gemm_threads >= 1);
        EXPECT(r.copy_GBps > 0);
        if (rank == 0)
            printf("interference at %d ranks: allgather %zu B/rank %.3g s alone, %.3g s beside a GEMM (%+.0f%%); "
                   "sgemm %d^3 on %d threads %.3g s alone, %.3g s beside a copy on PU %d at %.2f GB/s (%+.0f%%)\n",
                   W, o.coll_bytes, r.coll_alone, r.coll_with_gemm, 100 * r.coll_slowdown, o.gemm_n,
                   r.gemm_threads, r.gemm_alone, r.gemm_with_copy, r.copy_pu, r.copy_GBps,
                   100 * r.gemm_slowdown);
    }
    o.reps = 2;
    o.fault = 1;
    EXPECT(zero_interference_run(MPI_COMM_WORLD, &o, &r, err, sizeof err) == -1);
    EXPECT(strstr(err, "allgather repetition 1") && strstr(err, "rank "));
    o.fault = 2;
    EXPECT(zero_interference_run(MPI_COMM_WORLD, &o, &r, err, sizeof err) == -1);
    EXPECT(strstr(err, "GEMM repetition 1") && strstr(err, "expected 160"));
    o.fault = 0;
    o.gemm_n = 0;
    EXPECT(zero_interference_run(MPI_COMM_WORLD, &o, &r, err, sizeof err) == -1 && strstr(err, "gemm_n 0"));
    o.gemm_n = 16;
    o.reps = 0;
    EXPECT(zero_interference_run(MPI_COMM_WORLD, &o, &r, err, sizeof err) == -1 && strstr(err, "reps 0"));
    int failures = test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_zero_interference at %d ranks: %d failure(s)\n", W, all);
    MPI_Finalize();
    return TEST_EXIT();
}
