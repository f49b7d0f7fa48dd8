/* Names and categories of the fused block's timed stages (nn_stage). */
#include "layer_internal.h"

#include <string.h>

static const struct {
    const char *name, *category;
} stages[NN_STAGE_COUNT] = {
    [NN_ST_FWD_COPIES] = {"fwd.copies", "copies"},
    [NN_ST_FWD_LN1] = {"fwd.ln1", "layernorm"},
    [NN_ST_FWD_GEMM_QKV] = {"fwd.gemm_qkv", "gemm"},
    [NN_ST_FWD_BIAS_QKV] = {"fwd.bias_qkv", "bias_residual"},
    [NN_ST_FWD_ATTN_SCORES] = {"fwd.attn_scores", "attn_gemm"},
    [NN_ST_FWD_SOFTMAX] = {"fwd.softmax", "softmax"},
    [NN_ST_FWD_ATTN_VALUES] = {"fwd.attn_values", "attn_gemm"},
    [NN_ST_FWD_GEMM_O] = {"fwd.gemm_o", "gemm"},
    [NN_ST_FWD_RES_LN2] = {"fwd.residual_ln2", "layernorm"},
    [NN_ST_FWD_GEMM_W1] = {"fwd.gemm_w1", "gemm"},
    [NN_ST_FWD_BIAS_GELU] = {"fwd.bias_gelu", "gelu"},
    [NN_ST_FWD_GEMM_W2] = {"fwd.gemm_w2", "gemm"},
    [NN_ST_FWD_RES_BIAS] = {"fwd.residual_bias", "bias_residual"},
    [NN_ST_BWD_COPIES] = {"bwd.copies", "copies"},
    [NN_ST_BWD_BIAS_B2] = {"bwd.bias_b2", "bias_residual"},
    [NN_ST_BWD_GEMM_W2] = {"bwd.gemm_w2", "gemm"},
    [NN_ST_BWD_GELU_BIAS] = {"bwd.gelu_bias", "gelu"},
    [NN_ST_BWD_LN_APPLY] = {"bwd.ln_apply", "layernorm"},
    [NN_ST_BWD_GEMM_W1] = {"bwd.gemm_w1", "gemm"},
    [NN_ST_BWD_LN2_RES] = {"bwd.ln2_residual", "layernorm"},
    [NN_ST_BWD_GEMM_O] = {"bwd.gemm_o", "gemm"},
    [NN_ST_BWD_ATTN_DP_DV] = {"bwd.attn_dp_dv", "attn_gemm"},
    [NN_ST_BWD_SOFTMAX] = {"bwd.softmax", "softmax"},
    [NN_ST_BWD_ATTN_DQ_DK] = {"bwd.attn_dq_dk", "attn_gemm"},
    [NN_ST_BWD_BIAS_QKV] = {"bwd.bias_qkv", "bias_residual"},
    [NN_ST_BWD_GEMM_QKV] = {"bwd.gemm_qkv", "gemm"},
    [NN_ST_BWD_LN1_RES] = {"bwd.ln1_residual", "layernorm"},
};

const char *nn_stage_name(enum nn_stage s)
{
    return (unsigned)s < NN_STAGE_COUNT ? stages[s].name : "?";
}

const char *nn_stage_category(enum nn_stage s)
{
    return (unsigned)s < NN_STAGE_COUNT ? stages[s].category : "?";
}

static const char *const categories[NN_CATEGORY_COUNT] = {"gemm", "attn_gemm", "softmax", "layernorm",
                                                          "gelu", "bias_residual", "copies"};

const char *nn_category_name(int c) { return c >= 0 && c < NN_CATEGORY_COUNT ? categories[c] : "?"; }

int nn_stage_category_id(enum nn_stage s)
{
    int c = 0;
    while (c < NN_CATEGORY_COUNT && strcmp(categories[c], nn_stage_category(s)) != 0)
        c++;
    return c;
}

void nn_layer_set_stage_times(struct nn_layer *l, struct nn_stage_times *acc) { l->times = acc; }
