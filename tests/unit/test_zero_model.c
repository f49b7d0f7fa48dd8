/* zero/model.c and model_rates.c: every term of every mode against values
 * computed by hand (in the comments) on a two-layer model with round
 * rates; the unpaced path through a collectives profile; refusal of a
 * missing or malformed input; the same-run rate measurements give finite
 * positive rates. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zero_model_fixture.h"

static void paced(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    /* serial: fwd (0.1+0.1)+(0.4+0.3) = 0.9; bwd (0.2+0.1+0.1)+(0.8+0.3+0.3)
     * = 1.8; Adam on the shards (50+150)/100 = 2.0: 4.7 s. */
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.compute, 1.5, T);
    EXPECT_NEAR(s.wire, 1.2, T); /* 2*0.1+0.1 + 2*0.3+0.3 */
    EXPECT_NEAR(s.optimizer, 2.0, T);
    EXPECT_NEAR(s.exposed_optimizer, 2.0, T);
    EXPECT_NEAR(s.exposed_wire, 1.2, T);
    EXPECT_NEAR(s.step, 4.7, T);
    /* overlap: fwd max(0.1,0.1)+max(0.4,0.3) = 0.5; bwd max(0.2,0.2)+
     * max(0.8,0.6) = 1.0; + 2.0 = 3.5, no wire exposed. */
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 3.5, T);
    EXPECT_NEAR(s.exposed_wire, 0, T);
    EXPECT_NEAR(s.wire, 1.2, T);
    /* offload: the overlap's 1.5 + the pool's updates (150/400 = 0.375,
     * 50/400 = 0.125), each after its layer's backward: layer 1's term ends
     * at 0.8, its update at 1.175; layer 0's ends at 1.0 and its update at
     * 1.175 + 0.125 = 1.3: 0.3 past backward. */
    EXPECT(zero_model_step(ZERO_MODEL_OFFLOAD, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.optimizer, 0.5, T);
    EXPECT_NEAR(s.exposed_optimizer, 0.3, T);
    EXPECT_NEAR(s.step, 1.8, T);
    /* disdp: pulls/pushes of the whole layer: 200/1000 = 0.2 and 600/1000
     * = 0.6. fwd max(0.1,0.2)+max(0.4,0.6) = 0.8; bwd max(0.2,0.2)+
     * max(0.8,0.6) = 1.0. PS per layer max(n*26/5200, n/100) = n/100:
     * layer 1 arrives at 0.8 and is done at 0.8+3.0 = 3.8; layer 0 arrives
     * at 1.0, starts at 3.8, done at 4.8: 3.8 s past backward's end. Step
     * 0.8 + 1.0 + 3.8 = 5.6; Adam alone 4.0, storage alone 2.0; wire the
     * receive side 2*0.2 + 2*0.6 = 1.6. */
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.exposed_optimizer, 3.8, T);
    EXPECT_NEAR(s.optimizer, 4.0, T);
    EXPECT_NEAR(s.storage, 2.0, T);
    EXPECT_NEAR(s.wire, 1.6, T);
    EXPECT_NEAR(s.exposed_wire, 0.3, T); /* 1.8 of passes - 1.5 compute */
    EXPECT_NEAR(s.step, 5.6, T);
    /* A PS that keeps up (1e6 params/s, 1e9 B/s): only layer 0's update,
     * max(2.6e-6, 1e-4) = 1e-4, is exposed. */
    in.adam_params_s = 1e6;
    in.storage_Bps = 1e9;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.exposed_optimizer, 1e-4, T);
    EXPECT_NEAR(s.step, 1.8001, T);
    /* Storage-bound PS (2 B/s): layer 1 takes 300*26/2 = 3900 s from 0.8,
     * then layer 0 100*26/2 = 1300 s; backward ends at 1.0. */
    in.storage_Bps = 2;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.exposed_optimizer, 0.8 + 3900 + 1300 - 1.0, 1e-6);
    /* Two micro-batches per worker: gathers (pulls) before each pass,
     * the reduce-scatter and update once. serial: 2*0.9 + (0.2+0.1 +
     * 0.8+0.3) + 1.8 + 2.0 = 7.0, wire (2*2-1)*(0.1+0.3) + (0.2+0.6) =
     * 2.0, compute 3.0; overlap: 2*0.5 + (0.2 + 0.8) + 1.0 + 2.0 = 5.0;
     * disdp: 2*0.8 + (0.2 + 0.8) + 1.0 + 3.8 (the PS as above) = 7.4,
     * wire max(4*0.2, 0.2) + max(4*0.6, 0.6) = 3.2. */
    in = base();
    in.micro = 2;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 7.0, T);
    EXPECT_NEAR(s.wire, 2.0, T);
    EXPECT_NEAR(s.compute, 3.0, T);
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 5.0, T);
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 7.4, T);
    EXPECT_NEAR(s.wire, 3.2, T);
    /* One worker: ZeRO-3 moves nothing, the shard is the whole layer. */
    in = base();
    in.W = 1;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.wire, 0, T);
    EXPECT_NEAR(s.step, 1.5 + 4.0, T);
    /* Padding: 101 over 2 is a shard of 51: AG 0.102 s. */
    struct zero_model_layer odd = {101, 0, 0};
    in = base();
    in.layers = &odd;
    in.nlayers = 1;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.wire, 3 * 0.102, T);
}

/* disdp on tc-shaped nodes (role_links): base()'s pulls and pushes of
 * 0.2 s (layer 0) and 0.6 s (layer 1) on every role's own link, a PS that
 * keeps up (only layer 0's update, 1e-4 s, exposed). */
static void role_links(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    in.adam_params_s = 1e6;
    in.storage_Bps = 1e9;
    in.role_links = 1, in.switches = 1, in.ps = 1;
    /* one switch sends W = 2 copies of each pull: use 2*0.2 = 0.4 and
     * 1.2; the last backward max(pull, push, (2 pull + push), (pull + 2
     * push)) = 0.6 and 1.8. fwd max(0.1,0.4)+max(0.4,1.2) = 1.6; bwd
     * max(0.2,0.6)+max(0.8,1.8) = 2.4; + 1e-4. Wire, the switch's busier
     * side per layer: 2*2*0.2+0.2 = 1.0 and 3.0. */
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 4.0001, T);
    EXPECT_NEAR(s.wire, 4.0, T);
    EXPECT_NEAR(s.exposed_optimizer, 1e-4, T);
    /* two switches: each carries half, W/K = 1: use 0.2 and 0.6; last
     * (2*0.2+0.2)/2 = 0.3 and 0.9. fwd 0.2+0.6, bwd 0.3+0.9: 2.0001;
     * wire max(2*2*0.2+0.2, 2*0.2+2*0.2)/2 = 0.5 and 1.5. */
    in.switches = 2;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 2.0001, T);
    EXPECT_NEAR(s.wire, 2.0, T);
    /* one switch whose link runs at 2x the workers' (switch_gbps; the PS's
     * too): its time per byte is half a worker's, the same as two
     * switches: use max(pull, 2*pull/2, pull/2) = 0.2 and 0.6; last
     * max(0.2, (2*0.2+0.2)/2, 0.2/2) = 0.3 and 0.9: fwd 0.8, bwd 1.2,
     * 2.0001; wire max(2*0.2, (2*2*0.2+0.2)/2, 0.4/2) = 0.5 and 1.5. */
    in.switches = 1;
    in.switch_gbps = in.ps_gbps = 2 * in.link_gbps;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 2.0001, T);
    EXPECT_NEAR(s.wire, 2.0, T);
    /* the switch at 4x: no role's link is busier than a worker's; the
     * workers' links alone (paced's 1.8001, wire 1.6) */
    in.switch_gbps = 4 * in.link_gbps;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 1.8001, T);
    EXPECT_NEAR(s.wire, 1.6, T);
    /* the switch at 2x, the PS at half a worker's rate: its pulls take
     * 2*0.2 = 0.4 and 1.2 (use), its last max(pull, push)*2 = 0.4 and 1.2:
     * fwd max(0.1,0.4)+max(0.4,1.2) = 1.6, bwd max(0.2,0.4)+max(0.8,1.2) =
     * 1.6, 3.2001; wire max(0.4, 0.5, 2*0.4) = 0.8 and 2.4. */
    in.switch_gbps = 2 * in.link_gbps, in.ps_gbps = in.link_gbps / 2;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 3.2001, T);
    EXPECT_NEAR(s.wire, 3.2, T);
    in.switch_gbps = -1;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "switch_gbps"));
    in.switch_gbps = in.ps_gbps = 0;
    /* without role links: the workers' links alone (paced's 1.8001, wire 1.6) */
    in.role_links = 0;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 1.8001, T);
    EXPECT_NEAR(s.wire, 1.6, T);
    /* the ZeRO-3 modes ignore it (no switch or PS on their path) */
    in.role_links = 1;
    struct zero_model_step a, b;
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &a, err, sizeof err) == 0);
    in.role_links = 0;
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &b, err, sizeof err) == 0);
    EXPECT(a.step == b.step && a.wire == b.wire);
}

static void unpaced(void)
{
    /* Per byte 1e-3 s point to point, 0.01 s per message, free copies and
     * reductions (cache = mem, so the blend does not matter). */
    struct mb_coll_profile prof;
    memset(&prof, 0, sizeof prof);
    prof.ranks = 2;
    prof.cache_bytes = 1 << 20;
    prof.p2p_alpha = 0.01;
    prof.p2p_msg1k = prof.p2p_msg8k = prof.p2p_nb_alpha = 0.01; /* per-message overheads: flat */
    prof.p2p.cache = prof.p2p.mem = 1e-3;
    prof.stream = prof.cma_alpha = prof.cma.cache = prof.cma.mem = NAN;
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    in.link_gbps = 0;
    in.coll = &prof;
    /* ring AG of 100 B per rank over 2: 1*(0.01 + 0.1) = 0.11; RS: the same
     * (copies and the reduction free); layer 1: 0.31 each. */
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.wire, 3 * 0.11 + 3 * 0.31, T);
    /* disdp streams: 0.01 + 200e-3 = 0.21, 0.61. */
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.wire, 2 * 0.21 + 2 * 0.61, T);
}

/* The roles' sharing, timed: compute_load_x stretches every F and B;
 * ps_loaded_params_s prices disdp's PS instead of its rate alone. */
static void load_sharing(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    /* overlap at x = 1.5: F = 0.15, 0.6; B = 0.3, 1.2 (compute 2.25);
     * fwd max(0.15,0.1)+max(0.6,0.3) = 0.75; bwd max(0.3,0.2)+max(1.2,0.6)
     * = 1.5; + Adam 2.0 = 4.25, no wire exposed. */
    in.compute_load_x = 1.5;
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.compute, 2.25, T);
    EXPECT_NEAR(s.step, 4.25, T);
    EXPECT_NEAR(s.exposed_wire, 0, T);
    EXPECT_NEAR(s.wire, 1.2, T); /* the wire is not stretched */
    /* serial at x = 2: 3.0 of compute + 1.2 of wire + 2.0 of Adam = 6.2 */
    in.compute_load_x = 2;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 6.2, T);
    /* disdp, PS 1000 params/s alone: layer 1's 300 take 0.3 from 0.8 (1.1),
     * layer 0's 100 take 0.1 from 1.1 (1.2): 0.2 past backward's end (1.0);
     * step 0.8 + 1.0 + 0.2 = 2.0 */
    in = base();
    in.ps_params_s = 1000;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 2.0, T);
    /* the same PS at 50 params/s beside the workers: 6.0 from 0.8 (6.8),
     * then 2.0 (8.8): 7.8 exposed, step 0.8 + 1.0 + 7.8 = 9.6 */
    in.ps_loaded_params_s = 50;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.exposed_optimizer, 7.8, T);
    EXPECT_NEAR(s.optimizer, 8.0, T);
    EXPECT_NEAR(s.step, 9.6, T);
    /* refused: a NaN or negative factor or rate (0: left out, above) */
    in = base();
    in.compute_load_x = NAN;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "compute_load_x"));
    in = base();
    in.ps_loaded_params_s = -1;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "ps_loaded"));
    /* the factor: loaded / alone; NaN unless both finite and > 0 */
    EXPECT_NEAR(zero_load_x(0.3, 0.2), 1.5, T);
    EXPECT(isnan(zero_load_x(0, 0.2)) && isnan(zero_load_x(0.3, 0)) && isnan(zero_load_x(NAN, 0.2)) &&
           isnan(zero_load_x(0.3, INFINITY)));
}

static void refusals(void)
{
    struct zero_model_step s;
    char err[256];
    struct zero_model_in in = base();
    in.gemm_flops = 0;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "gemm_flops"));
    in = base();
    in.adam_params_s = NAN;
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == -1 && strstr(err, "adam_params_s"));
    in = base();
    in.pool_adam_params_s = 0;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0); /* not needed there */
    EXPECT(zero_model_step(ZERO_MODEL_OFFLOAD, &in, &s, err, sizeof err) == -1 &&
           strstr(err, "pool_adam_params_s"));
    in = base();
    in.storage_Bps = -1;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "storage_Bps"));
    in = base();
    in.link_gbps = 0;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "profile"));
    in.link_gbps = -5;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "link_gbps"));
    in = base();
    in.micro = 0;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "micro"));
    in = base();
    in.W = 0;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "W"));
    in = base();
    struct zero_model_layer bad = {10, NAN, 1};
    in.layers = &bad;
    in.nlayers = 1;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "layer 0"));
    in = base();
    EXPECT(zero_model_step((enum zero_model_mode)7, &in, &s, err, sizeof err) == -1);
}

static void rates(void)
{
    const char *good = "# calibrated\ngemm_flops = 2e10\nadam_params_s = 5e8\npool_adam_params_s=4e8\n"
                       "storage_Bps = 1.5e9  # a file\nps_bytes_per_param = 26\nlink_gbps = 0\n";
    struct zero_model_in in = base();
    char err[256];
    EXPECT(zero_model_rates_parse(good, "r.txt", &in, err, sizeof err) == 0);
    EXPECT(in.gemm_flops == 2e10 && in.adam_params_s == 5e8 && in.pool_adam_params_s == 4e8);
    EXPECT(in.storage_Bps == 1.5e9 && in.ps_bytes_per_param == 26 && in.link_gbps == 0);
    struct {
        const char *text, *says;
    } bad[] = {
        {"gemm_flops = 2e10\nadam_params_s = 5e8\npool_adam_params_s=4e8\nstorage_Bps = 1\n"
         "ps_bytes_per_param = 26\n", "link_gbps missing"},
        {"gemm_flops = fast\n", "gemm_flops"},
        {"gemm_flops = 0\n", "gemm_flops"},
        {"gemm_flops = nan\n", "gemm_flops"},
        {"link_gbps = -1\n", "link_gbps"},
        {"gemm_flops = 1\ngemm_flops = 2\n", "twice"},
        {"gemm_flops 1\n", ":1: expected KEY = VALUE"},
        {"\n\nwarp = 9\n", ":3: unknown key"},
        {"", "missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct zero_model_in keep = base();
        err[0] = 0;
        EXPECT(zero_model_rates_parse(bad[i].text, "r.txt", &keep, err, sizeof err) == -1);
        EXPECT(strstr(err, bad[i].says) != NULL);
        EXPECT(keep.gemm_flops == 1000); /* nothing written on a refusal */
        if (!strstr(err, bad[i].says))
            fprintf(stderr, "case %zu said: %s\n", i, err);
    }
}

static void measured(void)
{
    struct nn_gpt_config cfg;
    EXPECT(nn_gpt_preset("gpt-tiny", &cfg) == 0);
    double g = zero_model_measure_gemm(&cfg, 1, 2), a = zero_model_measure_adam(4096, 2);
    EXPECT(g > 0 && isfinite(g));
    EXPECT(a > 0 && isfinite(a));
    EXPECT(isnan(zero_model_measure_adam(0, 1)));
    /* All of them into a model input, then a prediction from it. */
    struct zero_model_in in = base();
    char err[256];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    EXPECT(zero_model_calibrate(&cfg, 1, dir, 2 << 20, &in, err, sizeof err) == 0);
    EXPECT(in.gemm_flops > 0 && in.adam_params_s > 0 && in.storage_Bps > 0 && in.ps_bytes_per_param == 26);
    struct zero_model_step s;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0 && s.step > 0);
    printf("measured here (informational): sgemm over gpt-tiny's block %.3g FLOP/s, Adam %.3g params/s, "
           "storage %.3g B/s\n", in.gemm_flops, in.adam_params_s, in.storage_Bps);
    EXPECT(zero_model_calibrate(&cfg, 1, "/nonexistent-dir", 1 << 20, &in, err, sizeof err) == -1);
    EXPECT(strstr(err, "/nonexistent-dir") != NULL);
    /* The model's wire is the closed form's bytes over the paced link:
     * gpt-tiny's 4 layers over W = 3 with 2 micro-batches, fp32 gathers
     * and reduce-scatters (ZeRO-3's busier direction either way; DisDP's
     * receive side, the busier since it pulls 4 times what it pushes). */
    struct zero_model_layer gl[4];
    size_t numel[4];
    zero_model_gpt_layers(&cfg, 1, gl);
    for (int i = 0; i < 4; i++)
        numel[i] = gl[i].numel;
    struct zero_model_in w = base();
    w.W = 3, w.micro = 2, w.layers = gl, w.nlayers = 4, w.param_bytes = w.grad_bytes = 4, w.link_gbps = 10;
    for (int m = 0; m < ZERO_MODEL_NMODES; m++) {
        struct zero_wire_bytes b;
        EXPECT(zero_closed_form((enum zero_model_mode)m, numel, 4, 3, 2, 4, 4, &b) == 0);
        EXPECT(zero_model_step((enum zero_model_mode)m, &w, &s, err, sizeof err) == 0);
        EXPECT_NEAR(s.wire, (double)(b.recv > b.send ? b.recv : b.send) / (10e9 / 8), 1e-15);
    }
    /* The GPT's layers: the block's FLOPs are nn_gpt_layer_account's. */
    struct zero_model_layer l[4];
    zero_model_gpt_layers(&cfg, 2, l);
    EXPECT(l[1].numel == 12704);
    EXPECT_NEAR(l[1].flops_fwd, 24.0 * 2 * 16 * 32 * 32 + 4.0 * 2 * 16 * 16 * 32, 0.5);
    EXPECT_NEAR(l[1].flops_bwd, 2 * l[1].flops_fwd, 0.5);
}

static void storage(void)
{
    /* 12 B read at 12 B/s and 14 B written at 7 B/s: 26 B in 1 + 2 = 3 s. */
    EXPECT_NEAR(zero_model_storage_Bps(12, 14, 12, 7), 26.0 / 3, T);
    EXPECT(isnan(zero_model_storage_Bps(12, 14, 0, 7)));
    EXPECT(isnan(zero_model_storage_Bps(12, 14, 12, NAN)));
    double w = 0, r = 0;
    char err[256];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    EXPECT(zero_model_measure_storage(dir, 3 << 20, &w, &r, err, sizeof err) == 0);
    EXPECT(w > 0 && r > 0 && isfinite(w) && isfinite(r));
    EXPECT(zero_model_measure_storage("/nonexistent-dir", 1 << 20, &w, &r, err, sizeof err) == -1);
    EXPECT(strstr(err, "/nonexistent-dir/zero-storage-") != NULL);
}

/* The CPU-sharing term on the fixture, by hand. CPU rates: 500 FLOP per
 * CPU second, Adam 100 params, copies 1000 B, the PS 200 params per CPU
 * second. A worker's GEMMs: (100+200+400+800)/500 = 3.0 s. ZeRO-3: its
 * shard's Adam (50+150)/100 = 2.0 s; per direction ((2*1-1)*2 + 2) B *
 * 200 * (W-1) = 800 B, both ways 1600 B = 1.6 s: Cw = 6.6 s; switch and
 * PS nap: 0. disdp: the agent pulls 2*400*2 = 1600 B and pushes 800 B:
 * Cw = 3.0 + 2.4 = 5.4; the switch 1600*(1+2) + 800*(2*2+1) = 8800 B =
 * 8.8 s; the PS 400/200 + 2.4 = 4.4 s. */
static void cpu_sharing(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    struct zero_model_host one = {2, 1, 1, 2}, wide = {2, 1, 1, 8};
    struct zero_model_host two[2] = {{1, 0, 0, 1}, {1, 1, 1, 2}};
    in.cpu_gemm_flops = 500, in.cpu_adam_params_s = 100, in.cpu_copy_Bps = 1000, in.cpu_ps_params_s = 200;
    in.nhosts = 1, in.hosts = &one;
    /* one host of 2 cores: 2 * 6.6 / 2 = 6.6 s, above serial's 4.7 */
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_worker, 6.6, T);
    EXPECT_NEAR(s.cpu_switch, 0, T);
    EXPECT_NEAR(s.cpu_ps, 0, T);
    EXPECT_NEAR(s.cpu_floor, 6.6, T);
    EXPECT_NEAR(s.step, 6.6, T);
    EXPECT_NEAR(s.compute, 1.5, T); /* the terms alone unchanged */
    /* disdp: (2*5.4 + 8.8 + 4.4) / 2 = 12.0 s, above its 5.6 */
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_worker, 5.4, T);
    EXPECT_NEAR(s.cpu_switch, 8.8, T);
    EXPECT_NEAR(s.cpu_ps, 4.4, T);
    EXPECT_NEAR(s.cpu_floor, 12.0, T);
    EXPECT_NEAR(s.step, 12.0, T);
    /* 8 cores: floors 1.65 and 3.0, below 4.7, 3.5 and 5.6 */
    in.hosts = &wide;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_floor, 1.65, T);
    EXPECT_NEAR(s.step, 4.7, T);
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 3.5, T);
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_floor, 3.0, T);
    EXPECT_NEAR(s.step, 5.6, T);
    /* two hosts: the busiest sets the floor. disdp: a worker alone on 1
     * core 5.4; worker, switch and PS on 2: (5.4 + 8.8 + 4.4) / 2 = 9.3 */
    in.nhosts = 2, in.hosts = two;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_floor, 9.3, T);
    EXPECT_NEAR(s.step, 9.3, T);
    /* overlap: 6.6 on 1 core, 6.6 on 2 (the idle roles cost nothing) */
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_floor, 6.6, T);
    EXPECT_NEAR(s.step, 6.6, T);
    /* two micro-batches, serial, 4 cores: GEMMs 6.0, Adam 2.0, per
     * direction ((2*2-1)*2 + 2)*200 = 1600 B, both ways 3.2 s: 11.2 per
     * worker, 2*11.2/4 = 5.6, below serial's 7.0 */
    struct zero_model_host four = {2, 1, 1, 4};
    in.micro = 2, in.nhosts = 1, in.hosts = &four;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.cpu_worker, 11.2, T);
    EXPECT_NEAR(s.cpu_floor, 5.6, T);
    EXPECT_NEAR(s.step, 7.0, T);
    /* refusals: a host without cores, a CPU rate the mode needs missing or NaN */
    in.micro = 1;
    struct zero_model_host none = {2, 1, 1, 0};
    in.hosts = &none;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "host 0"));
    in.hosts = &one;
    in.cpu_copy_Bps = NAN;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "cpu_copy_Bps"));
    in.cpu_copy_Bps = 1000, in.cpu_ps_params_s = 0;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "cpu_ps_params_s"));
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == 0); /* ZeRO-3 has no PS to price */
    in.cpu_adam_params_s = -1;
    EXPECT(zero_model_step(ZERO_MODEL_OFFLOAD, &in, &s, err, sizeof err) == -1 && strstr(err, "cpu_adam_params_s"));
    in.nhosts = 1, in.hosts = NULL;
    EXPECT(zero_model_step(ZERO_MODEL_SERIAL, &in, &s, err, sizeof err) == -1 && strstr(err, "hosts"));
}

/* Host groups by hand: ranks on one kernel (key) with overlapping CPU
 * sets share the union; overlap chains; another kernel never shares.
 * The CPU rates measure finite positive numbers. */
static void cpu_hosts(void)
{
    struct zero_cpu_who r[5];
    memset(r, 0, sizeof r);
    const char *key[5] = {"a", "a", "a", "b", "a"};
    for (int i = 0; i < 5; i++)
        strcpy(r[i].key, key[i]);
    r[0].mask[0] = 0x3, r[0].role = ZERO_WORKER;  /* CPUs 0,1 */
    r[1].mask[0] = 0x2, r[1].role = ZERO_WORKER;  /* CPU 1: with rank 0 */
    r[2].mask[0] = 0xc, r[2].role = ZERO_SWITCH;  /* CPUs 2,3: alone */
    r[3].mask[0] = 0x3, r[3].role = ZERO_PS;      /* CPUs 0,1 of another kernel */
    r[4].mask[1] = 0x1, r[4].mask[0] = 0x8, r[4].role = ZERO_PS; /* CPUs 8 and 3: joins rank 2 */
    struct zero_model_host h[5];
    EXPECT(zero_cpu_hosts_of(r, 5, h) == 3);
    EXPECT(h[0].workers == 2 && h[0].switches == 0 && h[0].ps == 0 && h[0].cores == 2);
    EXPECT(h[1].workers == 0 && h[1].switches == 1 && h[1].ps == 1 && h[1].cores == 3);
    EXPECT(h[2].workers == 0 && h[2].switches == 0 && h[2].ps == 1 && h[2].cores == 2);
    /* one CPU set for all (one host, no binding): one group */
    for (int i = 0; i < 5; i++)
        strcpy(r[i].key, "a"), memset(r[i].mask, 0, sizeof r[i].mask), r[i].mask[0] = 0x3;
    EXPECT(zero_cpu_hosts_of(r, 5, h) == 1);
    EXPECT(h[0].workers == 2 && h[0].switches == 1 && h[0].ps == 2 && h[0].cores == 2);
    struct nn_gpt_config cfg;
    char err[256];
    EXPECT(nn_gpt_config_parse("gpt-tiny", &cfg, err, sizeof err) == 0);
    double g = zero_model_measure_gemm_cpu(&cfg, 1, 2), a = zero_model_measure_adam_cpu(4096, 2),
           c = zero_model_measure_copy_cpu((size_t)1 << 20, 2);
    EXPECT(g > 0 && isfinite(g) && a > 0 && isfinite(a) && c > 0 && isfinite(c));
    EXPECT(isnan(zero_model_measure_adam_cpu(0, 1)) && isnan(zero_model_measure_copy_cpu(0, 1)));
}

/* disdp's pull pipeline (pull_pipeline = 1), by hand on the fixture: pulls
 * and pushes 0.2 s (layer 0) and 0.6 s (layer 1); F 0.1/0.4, B 0.2/0.8;
 * the PS reads layer l from storage before its first send (2000 B/s:
 * 0.1 and 0.3 s) and keeps up (1e6 params/s). Uses F0 F1 B1 B0. */
static void pipeline(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    in.storage_Bps = 2000;
    in.ps_params_s = 1e6;
    in.pull_pipeline = 1;
    in.chunk_elems = 1000; /* one chunk a layer */
    /* one host (only the workers' links paced; the PS's sends free):
     * F0's pull leaves after the read (0.1), lands 0.3; F0 0.3-0.4.
     * F1's was posted at 0 (two ahead), the PS's at 0.4 after both reads:
     * 0.4+0.6 = 1.0; F1 1.0-1.4. B1 (the head's backward: into a second
     * buffer, so posted at 0 too, after F1's pull) lands 1.6; B1 1.6-2.4,
     * its push 2.4-3.0. B0 posted at F1's start (0.4), after B1's pull:
     * 1.8; B0 2.4-2.6, its push after B1's: 3.2. Fill 0.3, tail 0.6; the
     * PS's last update (layer 0's 1e-4 s after backward's end in the
     * per-layer terms) adds 1e-4. */
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.pipe_fill, 0.3, T);
    EXPECT_NEAR(s.pipe_tail, 0.6, T);
    EXPECT_NEAR(s.compute, 1.5, T);
    EXPECT_NEAR(s.exposed_wire, 1.7, T);
    EXPECT_NEAR(s.exposed_optimizer, 1e-4, T);
    EXPECT_NEAR(s.step, 3.2001, T);
    /* Without the term: the per-layer max terms, 0.8 + 1.0 + 0.0001. */
    in.pull_pipeline = 0;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 1.8001, T);
    /* Role links (vcluster): switch and PS at 2x the workers' rate, chunks
     * of 50 elements (layer 0 in 2, layer 1 in 6). The worker's pulls stay
     * 0.2/0.6 (the switch's 2 copies at 2x); the PS sends each in half
     * that: read 0.1, L0 0.1-0.2 (its first chunk at the switch 0.15),
     * read 0.3, L1 0.5-0.8 (0.55), L1 again 0.8-1.1 (0.85), L0 1.1-1.2
     * (1.15). F0 lands max(0.15+0.2, 0.2+0.1) = 0.35, runs to 0.45; F1
     * max(0.55+0.6, 0.8+0.1) = 1.15, to 1.55; B1 (posted at 0) lands
     * max(1.15+0.6, 1.1+0.1) = 1.75, to 2.55, push to 3.15; B0 lands 1.95,
     * runs 2.55-2.75, push 3.35.
     * The per-layer terms put the last backward term at 1.2 and the PS's
     * update 1e-4 past it. */
    in.pull_pipeline = 1;
    in.chunk_elems = 50;
    in.role_links = 1;
    in.switches = 1;
    in.ps = 1;
    in.switch_gbps = in.ps_gbps = 2 * in.link_gbps;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.pipe_fill, 0.35, T);
    EXPECT_NEAR(s.pipe_tail, 0.6, T);
    EXPECT_NEAR(s.exposed_optimizer, 1e-4, T);
    EXPECT_NEAR(s.step, 3.3501, T);
    /* the other modes ignore it */
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.pipe_fill, 0, T);
}

int main(void)
{
    storage();
    paced();
    role_links();
    unpaced();
    refusals();
    load_sharing();
    rates();
    measured();
    cpu_sharing();
    cpu_hosts();
    pipeline();
    return TEST_EXIT();
}
