/* nn/'s measured cases behind mb-nn: the checked block pass, the sgemm
 * peer and the checked Adam step pass on correct results and fail on a
 * corrupted value and on a NaN; the stage times of a fused block cover
 * every GEMM and sweep it ran; the per-stage bytes add up to the
 * roofline's elementwise bytes. */
#include "check.h"

#include "../../nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void block_case(void)
{
    struct nn_gpt_config cfg;
    EXPECT(nn_gpt_preset("gpt-tiny", &cfg) == 0);
    struct nn_block_case c;
    char msg[256] = "";
    EXPECT(nn_block_case_init(&c, &cfg, 2, 5, 0) == 0);
    struct nn_stage_times t;
    memset(&t, 0, sizeof(t));
    nn_layer_set_stage_times(c.layer, &t);
    nn_block_case_prepare(&c, 11);
    EXPECT(nn_block_case_pass(&c) == 0);
    EXPECT(nn_block_case_check(&c, msg, sizeof(msg)) == 0);
    double sum = 0;
    for (int st = 0; st < NN_STAGE_COUNT; st++) {
        EXPECT(t.t[st] >= 0);
        sum += t.t[st];
    }
    EXPECT(sum > 0); /* that it was recorded; never how long */
    /* detached: nothing more is recorded */
    struct nn_stage_times before = t;
    nn_layer_set_stage_times(c.layer, NULL);
    nn_block_case_prepare(&c, 12);
    EXPECT(nn_block_case_pass(&c) == 0);
    EXPECT(memcmp(&before, &t, sizeof(t)) == 0);
    /* recompute gives the same check */
    c.recompute = 1;
    nn_block_case_prepare(&c, 13);
    EXPECT(nn_block_case_pass(&c) == 0 && nn_block_case_check(&c, msg, sizeof(msg)) == 0);
    /* a wrong output, a wrong gradient, a NaN: each caught, and named */
    c.dx[7] += 1.0f + fabsf(c.dx[7]);
    EXPECT(nn_block_case_check(&c, msg, sizeof(msg)) == 1 && strstr(msg, "dx[7]"));
    nn_block_case_prepare(&c, 14);
    EXPECT(nn_block_case_pass(&c) == 0);
    float *g = nn_layer_grads(c.layer)->data;
    g[3] = NAN;
    EXPECT(nn_block_case_check(&c, msg, sizeof(msg)) == 1 && strstr(msg, "grads[3]"));
    nn_block_case_free(&c);
    /* the stages' bytes are the roofline's */
    double fwd, bwd, sf = 0, sb = 0;
    nn_block_elementwise_bytes(&cfg, 3, &fwd, &bwd);
    for (int st = 0; st < NN_STAGE_COUNT; st++) {
        double b = nn_block_stage_bytes(&cfg, 3, st);
        EXPECT(b >= 0);
        *(st < NN_ST_BWD_COPIES ? &sf : &sb) += b;
        EXPECT(nn_stage_category_id((enum nn_stage)st) < NN_CATEGORY_COUNT);
    }
    EXPECT(sf == fwd && sb == bwd && fwd > 0 && bwd > 0);
}

static void gemm_peer(void)
{
    struct nn_gpt_config cfg;
    EXPECT(nn_gpt_preset("gpt-tiny", &cfg) == 0);
    struct nn_gemm_peer p;
    char msg[256] = "";
    EXPECT(nn_gemm_peer_init(&p, &cfg, 2, 0) == 0);
    nn_gemm_peer_run(&p, 3);
    EXPECT(nn_gemm_peer_check(&p, 99, msg, sizeof(msg)) == 0);
    for (int i = 0; i < p.ng; i++)
        EXPECT(p.t[i] >= 0 && p.g[i].stage >= 0 && p.g[i].stage < NN_STAGE_COUNT);
    int last = p.ng - 1;
    p.C[last][p.g[last].N + 1] += 0.5f;
    EXPECT(nn_gemm_peer_check(&p, 99, msg, sizeof(msg)) == 1 && strstr(msg, "row 1"));
    nn_gemm_peer_run(&p, 4);
    p.C[0][0] = NAN;
    EXPECT(nn_gemm_peer_check(&p, 99, msg, sizeof(msg)) == 1);
    nn_gemm_peer_free(&p);
}

static void adam_case(void)
{
    struct nn_adam_case c;
    char msg[256] = "";
    EXPECT(nn_adam_case_init(&c, 1000) == 0);
    for (long long t = 1; t <= 2; t++) {
        nn_adam_case_prepare(&c, 7, t);
        nn_adam_case_step(&c);
        EXPECT(nn_adam_case_check(&c, msg, sizeof(msg)) == 0);
    }
    c.m[500] += 0.01f;
    EXPECT(nn_adam_case_check(&c, msg, sizeof(msg)) == 1 && strstr(msg, "m[500]"));
    c.m[500] -= 0.01f;
    c.p[9] = NAN;
    EXPECT(nn_adam_case_check(&c, msg, sizeof(msg)) == 1 && strstr(msg, "p[9]"));
    nn_adam_case_free(&c);
}

int main(void)
{
    block_case();
    gemm_peer();
    adam_case();
    return TEST_EXIT();
}
