/* A GPT as Algorithm 1's table: per block its input (the inter-block
 * activation) and its 9 intra tensors, the head's input and its 3, each
 * with bytes and the forward FLOPs that rebuild it (nn/'s closed forms,
 * so 13B..412B need no allocation). */
#include "ratel.h"

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
