/* The step model's hand-computed fixture, shared by test_zero_model and
 * test_zero_model_ps: two layers of 100 and 300 parameters, forward
 * 100/400 FLOPs, backward 200/800, at 1000 FLOP/s: F = 0.1, 0.4 s;
 * B = 0.2, 0.8 s. W = 2, bf16 both ways: shards S = 50, 150. The link
 * moves 1000 B/s per direction (8e-6 Gb/s): AG = RS = (W-1)*S*2/1000 =
 * 0.1 s and 0.3 s. */
#ifndef MB_TESTS_ZERO_MODEL_FIXTURE_H
#define MB_TESTS_ZERO_MODEL_FIXTURE_H

#include "../../zero/zero.h"

#define T 1e-9

static const struct zero_model_layer layers[2] = {{100, 100, 200}, {300, 400, 800}};

static struct zero_model_in base(void)
{
    struct zero_model_in in = {.W = 2, .micro = 1, .nlayers = 2, .layers = layers, .param_bytes = 2, .grad_bytes = 2,
                               .gemm_flops = 1000, .adam_params_s = 100, .pool_adam_params_s = 400,
                               .storage_Bps = 5200, .ps_bytes_per_param = 26, .link_gbps = 8e-6};
    return in;
}

#endif
