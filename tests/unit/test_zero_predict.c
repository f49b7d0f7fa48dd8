/* zero/predict.c: one run's prediction uses the layers and shards mb-zero
 * builds (its closed-form bytes equal worker.c's padded wire bytes, the
 * counted ones: 3 S (W-1)/W per micro-batch), the serial model's wire is
 * those bytes over the paced rate, and a mode without a model, a missing
 * rate or an unpaced link without a profile is refused by name. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <string.h>

static struct zero_opts opts(int W, int micro_per_worker, double link_bps)
{
    struct zero_opts o = {0};
    if (nn_gpt_preset("gpt-tiny", &o.cfg) != 0)
        o.cfg.layers = -1;
    o.lay = (struct zero_layout){W, 1, 1};
    o.micro = 1;
    o.batch = W * micro_per_worker;
    o.link_bps = link_bps;
    return o;
}

int main(void)
{
    struct zero_model_in rates = {.gemm_flops = 1e10, .adam_params_s = 1e8, .pool_adam_params_s = 1e8,
                                  .storage_Bps = 1e9, .ps_bytes_per_param = 26};
    struct zero_prediction p;
    char err[300];
    for (int W = 2; W <= 4; W++)
        for (int m = 1; m <= 2; m++) {
            struct zero_opts o = opts(W, m, 1e9);
            EXPECT(o.cfg.layers > 0);
            EXPECT(zero_predict(&o, "zero3-serial", &rates, &p, err, sizeof err) == 0);
            /* mb-zero counts (2m + 1) passes of (W-1)/W of the padded model per direction */
            uint64_t counted = (2 * (uint64_t)m + 1) * zero_wire_param_bytes(&o) * (uint64_t)(W - 1) / (uint64_t)W;
            EXPECT(p.bytes.send == counted && p.bytes.recv == counted);
            EXPECT(p.mode == ZERO_MODEL_SERIAL);
            EXPECT(fabs(p.model.wire - (double)counted / 1e9) <= 1e-12 * (double)counted);
            EXPECT(p.model.step > p.model.compute && p.model.compute > 0);
            EXPECT(zero_predict(&o, "disdp", &rates, &p, err, sizeof err) == 0);
            EXPECT(p.mode == ZERO_MODEL_DISDP && p.bytes.recv == 2 * (uint64_t)m * p.bytes.send);
        }
    struct zero_opts o = opts(2, 1, 1e9);
    EXPECT(zero_predict(&o, "nope", &rates, &p, err, sizeof err) == -1 && strstr(err, "'nope'"));
    struct zero_model_in bad = rates;
    bad.gemm_flops = NAN;
    EXPECT(zero_predict(&o, "zero3-overlap", &bad, &p, err, sizeof err) == -1 && strstr(err, "gemm_flops"));
    bad = rates;
    bad.storage_Bps = 0;
    EXPECT(zero_predict(&o, "zero3-overlap", &bad, &p, err, sizeof err) == 0);
    EXPECT(zero_predict(&o, "disdp", &bad, &p, err, sizeof err) == -1 && strstr(err, "storage_Bps"));
    o.link_bps = 0;
    EXPECT(zero_predict(&o, "zero3-serial", &rates, &p, err, sizeof err) == -1 && strstr(err, "profile"));
    /* a tc-shaped link (vcluster): priced at its rate, as a paced one of
     * the same rate; a paced rate in the process wins over it */
    EXPECT(zero_tc_gbps("vcluster: 4 nodes, veth+bridge, tc tbf 0.305 Gbit/s netem 50 us") == 0.305);
    EXPECT(zero_tc_gbps("vcluster: 4 nodes, veth+bridge, unshaped") == 0 && zero_tc_gbps(NULL) == 0);
    EXPECT(zero_tc_gbps("tc tbf nan Gbit/s") == 0 && zero_tc_gbps("tc tbf 2 Mbit/s") == 0);
    /* a node at its own rate (tools/vcluster --node-gbps), the name whole */
    const char *em = "vcluster: 4 nodes, veth+bridge, tc tbf 1.5 Gbit/s, node3 tbf 3 Gbit/s, node12 tbf 3.5 Gbit/s";
    EXPECT(zero_tc_node_gbps(em, "node3") == 3 && zero_tc_node_gbps(em, "node12") == 3.5);
    EXPECT(zero_tc_node_gbps(em, "node1") == 1.5 && zero_tc_node_gbps(em, "node") == 1.5);
    EXPECT(zero_tc_node_gbps(em, NULL) == 1.5 && zero_tc_node_gbps("veth+bridge, unshaped", "node3") == 0);
    /* each role's link: its slowest rank's; 0 for none or one unshaped */
    struct zero_layout lay = {2, 1, 1};
    double g4[4] = {1.5, 1.5, 3, 3.5}, role[3];
    zero_role_tc_gbps(&lay, g4, role);
    EXPECT(role[ZERO_WORKER] == 1.5 && role[ZERO_SWITCH] == 3 && role[ZERO_PS] == 3.5);
    g4[1] = 0, g4[0] = 2;
    zero_role_tc_gbps(&lay, g4, role);
    EXPECT(role[ZERO_WORKER] == 0 && role[ZERO_SWITCH] == 3);
    g4[0] = 3, g4[1] = 2;
    zero_role_tc_gbps(&lay, g4, role);
    EXPECT(role[ZERO_WORKER] == 2);
    struct zero_layout two = {2, 0, 0};
    zero_role_tc_gbps(&two, g4, role);
    EXPECT(role[ZERO_WORKER] == 2 && role[ZERO_SWITCH] == 0 && role[ZERO_PS] == 0);
    struct zero_prediction q;
    struct zero_model_in tc = rates;
    tc.link_gbps = 8;
    EXPECT(zero_predict(&o, "zero3-serial", &tc, &p, err, sizeof err) == 0);
    o.link_bps = 1e9; /* 8 Gb/s */
    EXPECT(zero_predict(&o, "zero3-serial", &rates, &q, err, sizeof err) == 0);
    EXPECT(p.model.wire > 0 && p.model.wire == q.model.wire && p.model.step == q.model.step);
    o.link_bps = 2e9;
    EXPECT(zero_predict(&o, "zero3-serial", &tc, &p, err, sizeof err) == 0);
    EXPECT(fabs(p.model.wire - q.model.wire / 2) <= 1e-12);
    return TEST_EXIT();
}
