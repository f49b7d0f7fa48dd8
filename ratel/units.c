/* A GPT as Algorithm 1's table: per block its input (the inter-block
 * activation) and its 9 intra tensors, the head's input and its 3, each
 * with bytes and the forward FLOPs that rebuild it (nn/'s closed forms,
 * so 13B..412B need no allocation). */
#include "ratel.h"

#include <string.h>

/* A block's intra tensors (xhat1, rstd1, qkv, probs, att, xhat2, rstd2,
 * h1, gl) by the step of nn's partial recompute that rebuilds them
 * (nn/intra.c, block_steps_needed): layer norm 1; the QKV GEMM; the
 * attention; the output projection with layer norm 2 and W1 with GELU,
 * one group because a rerun W1 step pulls the layer-norm-2 step in. Per
 * tensor the FLOPs said only which step they belong to: swapping h1
 * (W1's output) without gl (0 FLOPs, never picked alone) reran W1 all
 * the same, so the model counted recompute saved that backward still
 * spent (tests/unit/test_ratel_swap.c checks the groups against nn). */
static const int block_group[9] = {1, 1, 2, 3, 3, 4, 4, 4, 4};

int ratel_gpt_units(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                    struct ratel_unit *out, int max)
{
    int n = 0;
    for (int l = 1; l <= cfg->layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, l, &a);
        /* the input: recomputing it would mean rerunning every layer below,
         * so it carries no FLOPs here and is never worth dropping */
        if (n < max)
            out[n] = (struct ratel_unit){(double)a.act_inter_bytes, 0, 1, l, -1, 0};
        n++;
        for (int i = 0; i < nn_gpt_intra_count(cfg, l); i++) {
            uint64_t bytes;
            double flops;
            nn_gpt_intra_account(cfg, B, prec, l, i, &bytes, &flops);
            if (n < max)
                out[n] = (struct ratel_unit){(double)bytes, flops, 0, l, i,
                                             l == cfg->layers + 1 ? 1 : block_group[i]};
            n++;
        }
    }
    return n;
}

void ratel_gpt_model(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                     struct ratel_model *m)
{
    struct nn_layer_account t;
    nn_gpt_account(cfg, B, prec, &t);
    m->params = (double)t.params;
    m->flops_fwd = t.flops_fwd;
    m->flops_rc_all = 0;
    m->act_all = 0;
    m->act_inter = 0;
    for (int l = 1; l <= cfg->layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, l, &a);
        m->act_inter += (double)a.act_inter_bytes;
        m->act_all += (double)(a.act_inter_bytes + a.act_intra_bytes);
        for (int i = 0; i < nn_gpt_intra_count(cfg, l); i++) {
            double f;
            nn_gpt_intra_account(cfg, B, prec, l, i, NULL, &f);
            m->flops_rc_all += f;
        }
    }
}

double ratel_rc_price_units(const struct nn_gpt_config *cfg, const struct nn_stage_times *fwd, double rate,
                            const struct ratel_unit *u, int n, struct ratel_unit *out)
{
    /* the groups of a block (block_group above) as nn's forward stages */
    static const unsigned group_stages[5] = {
        0, 1u << NN_ST_FWD_LN1, 1u << NN_ST_FWD_BIAS_QKV | 1u << NN_ST_FWD_GEMM_QKV,
        1u << NN_ST_FWD_ATTN_SCORES | 1u << NN_ST_FWD_SOFTMAX | 1u << NN_ST_FWD_ATTN_VALUES,
        1u << NN_ST_FWD_GEMM_O | 1u << NN_ST_FWD_RES_LN2 | 1u << NN_ST_FWD_GEMM_W1 | 1u << NN_ST_FWD_BIAS_GELU};
    int L = cfg->layers;
    double gs[5] = {0}, any = 0;
    for (int g = 1; g < 5; g++) {
        for (int s = 0; s < NN_STAGE_COUNT; s++)
            if (group_stages[g] >> s & 1u)
                gs[g] += fwd->t[s];
        gs[g] /= L > 0 ? L : 1;
        any += gs[g];
    }
    memcpy(out, u, (size_t)n * sizeof(*u));
    if (!(any > 0) || !(rate > 0))
        return -1;
    double all = 0;
    for (int k = 0; k < n; k++) {
        int g = u[k].group;
        if (u[k].layer >= 1 && u[k].layer <= L && !u[k].inter && g >= 1 && g < 5) {
            double gf = 0, gb = 0;
            for (int j = 0; j < n; j++)
                if (u[j].layer == u[k].layer && u[j].group == g && !u[j].inter) {
                    gf += u[j].flops;
                    gb += u[j].bytes;
                }
            out[k].flops = gs[g] * rate * (gf > 0 ? u[k].flops / gf : u[k].bytes / gb);
        }
        all += out[k].flops;
    }
    return all;
}
