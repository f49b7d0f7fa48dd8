/* The GEMM peer of a trainer's FLOP rate: plain cblas_sgemm over exactly
 * the GEMMs one decoder block runs (nn_block_gemm_shapes), on nn's GEMM
 * peer (mb-nn's: each GEMM its own filled operands), timed in the same run
 * as the trainer. A warm-up pass first, then the median of three: a
 * single cold pass (fresh zero pages faulted in under the timer) read
 * 10-13% low after some runs and not others, so the peer moved with what
 * ran before it rather than with the host's speed. */
#include "ratel.h"
#include "../common/common.h"

#include <stdlib.h>

enum { PEER_PASSES = 3 };

double ratel_gemm_peer_rate(const struct nn_gpt_config *cfg, int B, double *seconds)
{
    struct nn_gemm_peer p = {0};
    double rate = 0, dt = 0;
    if (nn_gemm_peer_init(&p, cfg, B, 0) == 0) {
        double flops = nn_gemm_peer_flops(&p), pass[PEER_PASSES];
        nn_gemm_peer_run(&p, 0); /* warm-up: operands, C and OpenBLAS's threads touched */
        for (int k = 0; k < PEER_PASSES; k++) {
            double t0 = mb_now();
            nn_gemm_peer_run(&p, k + 1);
            pass[k] = mb_now() - t0;
        }
        dt = mb_median(pass, PEER_PASSES);
        rate = dt > 0 ? flops / dt : 0;
    }
    nn_gemm_peer_free(&p);
    if (seconds)
        *seconds = dt;
    return rate;
}
