/* --compute-threads (issue 19): a worker's GEMM and OpenMP threads. A
 * worker stands for one GPU; by default it computes on OpenBLAS's pool of
 * every PU and OpenMP's default team, so two workers beside a switch and
 * a PS on two cores run 4+ GEMM threads whose idle ones yield-spin
 * (reproduce/disdp/README.md). N >= 1 sets both on the calling thread's
 * process (OpenBLAS's count is process-wide, OpenMP's the calling
 * thread's: a worker computes on its main thread); nn_gemm and nn's
 * batched attention set OpenBLAS to one thread around their own regions
 * and restore what they found, so they restore N. 0 leaves the defaults. */
#include "zero.h"

#include "../common/common.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>

int zero_compute_threads_check(long long n, char *err, size_t len)
{
    int pus = mb_pu_count();
    long long most = 4LL * (pus > 0 ? pus : 1);
    if (n >= 0 && n <= most)
        return 0;
    snprintf(err, len, "--compute-threads %lld: give 0 (the defaults) or 1 to %lld (4 x the %d PUs this process may use)",
             n, most, pus);
    return -1;
}

void zero_compute_threads_apply(int n, int got[2])
{
    if (n >= 1) {
        openblas_set_num_threads(n);
        omp_set_num_threads(n);
    }
    got[0] = openblas_get_num_threads();
    got[1] = omp_get_max_threads();
}
