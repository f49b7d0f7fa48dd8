/* nn/ presets and accounting against closed forms: Ratel's Table IV
 * shapes, 12 h^2 L non-embedding parameters (Ratel's sanity column),
 * 14P model-state bytes (182 GB for 13B), inter-block activations
 * 2 B s h L (12.5 GiB for 13B at B=32), 24 B s h^2 + 4 B s^2 h forward
 * FLOPs per block, backward = 2x, and the GEMM list summing to the same. */
#include "check.h"
#include "../../nn/nn.h"

#include <math.h>
#include <string.h>

int main(void)
{
    const struct { const char *name; int L, A, H; double billions; } t[] = {
        {"gpt-6b", 28, 32, 4096, 5.6}, {"gpt-13b", 40, 40, 5120, 12.6},
        {"gpt-30b", 48, 56, 7168, 29.6}, {"gpt-70b", 80, 64, 8192, 64.4},
        {"gpt-135b", 88, 88, 11264, 134.0}, {"gpt-175b", 96, 96, 12288, 173.9},
        {"gpt-276b", 112, 112, 14336, 276.2}, {"gpt-412b", 128, 128, 16384, 412.3}};
    struct nn_precision mixed = {NN_F16, NN_F16, NN_F16};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct nn_gpt_config c;
        EXPECT(nn_gpt_preset(t[i].name, &c) == 0);
        EXPECT(c.layers == t[i].L && c.heads == t[i].A && c.hidden == t[i].H);
        EXPECT(c.seq == 1024 && c.vocab == 50257 && c.ffn == 4 * c.hidden);
        double h = c.hidden, L = c.layers;
        struct nn_layer_account blk, tot;
        nn_gpt_layer_account(&c, 1, mixed, 1, &blk);
        /* 12 h^2 + 13 h per block */
        EXPECT(blk.params == (uint64_t)(12 * h * h + 13 * h));
        EXPECT(fabs(blk.params * L / 1e9 - t[i].billions) < 0.05 + 0.001 * t[i].billions);
        nn_gpt_account(&c, 32, mixed, &tot);
        EXPECT(tot.params == (uint64_t)(L * (12 * h * h + 13 * h) + (50257.0 + 1024) * h + 2 * h + h * 50257));
        EXPECT(tot.param_bytes == 2 * tot.params && tot.grad_bytes == 2 * tot.params);
        EXPECT(tot.opt_bytes == 12 * tot.params);
        /* per block at B=32, s=1024 */
        double B = 32, s = 1024;
        nn_gpt_layer_account(&c, 32, mixed, 1, &blk);
        EXPECT(blk.flops_fwd == 24 * B * s * h * h + 4 * B * s * s * h);
        EXPECT(blk.flops_bwd == 2 * blk.flops_fwd && blk.flops_recompute == blk.flops_fwd - 8 * B * s * h * h);
        EXPECT(blk.act_inter_bytes == (uint64_t)(2 * B * s * h));
        EXPECT(blk.act_intra_bytes == (uint64_t)(2 * (B * s * 14 * h + B * c.heads * s * s) + 8 * B * s));
        /* the GEMM list is the FLOP count */
        struct nn_gemm_shape g[32];
        int n = nn_block_gemm_shapes(&c, 32, g, 32);
        double f = 0, fb = 0, fr = 0;
        for (int k = 0; k < n; k++) {
            double fl = 2.0 * g[k].M * g[k].N * (double)g[k].K * g[k].count;
            *(g[k].backward ? &fb : &f) += fl;
            fr += g[k].recomputed ? fl : 0;
        }
        EXPECT(f == blk.flops_fwd && fb == blk.flops_bwd && fr == blk.flops_recompute);
    }
    /* Ratel's 13B numbers: 14P = 182 GB; inter-block activations at B=32
     * are 12.5 GiB (2 B s h L) */
    struct nn_gpt_config c13;
    nn_gpt_preset("gpt-13b", &c13);
    struct nn_layer_account blk;
    nn_gpt_layer_account(&c13, 32, mixed, 1, &blk);
    double P = 40.0 * blk.params;
    EXPECT(fabs(14 * P / 1e9 - 176) < 10); /* 12.6B non-embedding: 14P = 176 GB (paper: 182 with embeddings) */
    EXPECT(fabs(40.0 * blk.act_inter_bytes / (1024.0 * 1024 * 1024) - 12.5) < 0.05);
    /* small presets exist and are small */
    const char *const *names = nn_gpt_preset_names();
    int count = 0;
    for (; names[count]; count++) {
        struct nn_gpt_config c;
        EXPECT(nn_gpt_preset(names[count], &c) == 0);
    }
    EXPECT(count == 11);
    struct nn_gpt_config tiny;
    EXPECT(nn_gpt_preset("gpt-tiny", &tiny) == 0 && tiny.hidden == 32);
    EXPECT(nn_gpt_preset("gpt-7b", &tiny) == -1);
    /* fp32 storage doubles parameter, gradient and activation bytes */
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    struct nn_layer_account a16, a32;
    nn_gpt_layer_account(&c13, 4, mixed, 3, &a16);
    nn_gpt_layer_account(&c13, 4, f32, 3, &a32);
    EXPECT(a32.param_bytes == 2 * a16.param_bytes && a32.act_inter_bytes == 2 * a16.act_inter_bytes);
    /* head: 2 B s h V forward FLOPs */
    struct nn_layer_account head;
    nn_gpt_layer_account(&c13, 2, mixed, c13.layers + 1, &head);
    EXPECT(head.kind == NN_LAYER_HEAD && head.flops_fwd == 2.0 * 2 * 1024 * 5120 * 50257);
    return TEST_EXIT();
}
