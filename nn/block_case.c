/* One checked decoder block pass (mb-nn's block case): an fp32 block
 * with generic parameters, fresh inputs before each pass, forward +
 * backward (optionally dropping and recomputing the intra activations),
 * and every output against the double-precision reference. */
#include "nn.h"

#include <stdlib.h>
#include <string.h>

int nn_block_case_init(struct nn_block_case *c, const struct nn_gpt_config *cfg, int B, uint64_t seed,
                       int recompute)
{
    memset(c, 0, sizeof(*c));
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    size_t MH = (size_t)B * (size_t)cfg->seq * (size_t)cfg->hidden;
    c->recompute = recompute;
    c->numel = MH;
    c->ws = nn_workspace_new(cfg, B);
    c->layer = c->ws ? nn_layer_new(cfg, B, f32, 1, seed, c->ws) : NULL;
    c->x = malloc(MH * 4); c->y = malloc(MH * 4);
    c->dout = malloc(MH * 4); c->dx = malloc(MH * 4);
    c->ref = nn_block_ref_new(cfg, B);
    if (!c->layer || !c->x || !c->y || !c->dout || !c->dx || !c->ref)
        return -1;
    /* generic parameters: LN gains/biases and biases away from 1/0 */
    struct nn_tensor *p = nn_layer_params(c->layer);
    float *pp = p->data;
    struct nn_rng r;
    nn_rng_seed(&r, seed);
    for (size_t i = 0; i < p->numel; i++)
        pp[i] += (float)(0.02 * nn_rng_normal(&r));
    return 0;
}

void nn_block_case_free(struct nn_block_case *c)
{
    nn_layer_free(c->layer);
    nn_workspace_free(c->ws);
    free(c->x); free(c->y); free(c->dout); free(c->dx);
    nn_block_ref_free(c->ref);
    memset(c, 0, sizeof(*c));
}

void nn_block_case_prepare(struct nn_block_case *c, uint64_t seed)
{
    nn_fill_hashed(c->x, c->numel, seed, 1.0);
    nn_fill_hashed(c->dout, c->numel, seed + 1, 1.0);
    nn_layer_zero_grad(c->layer);
}

int nn_block_case_pass(struct nn_block_case *c)
{
    if (nn_layer_forward(c->layer, c->x, c->y) != 0)
        return -1;
    if (c->recompute)
        nn_layer_drop_intra(c->layer);
    return nn_layer_backward(c->layer, c->dout, c->dx);
}

int nn_block_case_check(struct nn_block_case *c, char *msg, size_t len)
{
    return nn_block_ref_check(c->ref, c->layer, c->x, c->dout, c->y, c->dx, msg, len);
}

double nn_block_case_bytes(const struct nn_gpt_config *cfg, int B, int check)
{
    double M = (double)B * cfg->seq, H = cfg->hidden, F = cfg->ffn;
    double bytes = 4.0 * (M * (24.0 * H + 2.0 * F) + (double)B * cfg->heads * cfg->seq * cfg->seq + 24.0 * H * H);
    return bytes + (check ? nn_block_ref_bytes(cfg, B) : 0);
}
