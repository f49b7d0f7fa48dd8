/* A whole GPT: embedding, blocks, head, run layer by layer through two
 * ping-pong hidden-state buffers (each block keeps its own input). */
#include "layer_internal.h"

#include <stdlib.h>
#include <string.h>

struct nn_gpt *nn_gpt_new(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                          uint64_t seed)
{
    struct nn_gpt *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cfg = *cfg;
    if (!m->cfg.ffn)
        m->cfg.ffn = 4 * m->cfg.hidden;
    m->B = B;
    m->prec = prec;
    m->nlayers = cfg->layers + 2;
    m->ws = nn_workspace_new(&m->cfg, B);
    m->layer = calloc((size_t)m->nlayers, sizeof(*m->layer));
    size_t n = (size_t)B * (size_t)cfg->seq * (size_t)cfg->hidden;
    for (int i = 0; i < 2; i++) {
        m->h[i] = calloc(n, sizeof(float));
        m->dh[i] = calloc(n, sizeof(float));
    }
    int ok = m->ws && m->layer && m->h[0] && m->h[1] && m->dh[0] && m->dh[1];
    for (int i = 0; ok && i < m->nlayers; i++)
        ok = (m->layer[i] = nn_layer_new(&m->cfg, B, prec, i, seed, m->ws)) != NULL;
    if (!ok) {
        nn_gpt_free(m);
        return NULL;
    }
    return m;
}

void nn_gpt_free(struct nn_gpt *m)
{
    if (!m)
        return;
    for (int i = 0; m->layer && i < m->nlayers; i++)
        nn_layer_free(m->layer[i]);
    free(m->layer);
    for (int i = 0; i < 2; i++) {
        free(m->h[i]);
        free(m->dh[i]);
    }
    nn_workspace_free(m->ws);
    free(m);
}

int nn_gpt_forward(struct nn_gpt *m, const int32_t *tokens, const int32_t *targets, double *loss)
{
    if (nn_layer_forward(m->layer[0], tokens, m->h[0]) != 0)
        return -1;
    int cur = 0;
    for (int i = 1; i <= m->cfg.layers; i++) {
        if (nn_layer_forward(m->layer[i], m->h[cur], m->h[1 - cur]) != 0)
            return -1;
        if (m->recompute)
            nn_layer_drop_intra(m->layer[i]);
        cur = 1 - cur;
    }
    return nn_layer_forward_head(m->layer[m->nlayers - 1], m->h[cur], targets, loss);
}

int nn_gpt_backward(struct nn_gpt *m)
{
    int cur = 0;
    if (nn_layer_backward(m->layer[m->nlayers - 1], NULL, m->dh[cur]) != 0)
        return -1;
    for (int i = m->cfg.layers; i >= 1; i--) {
        if (nn_layer_backward(m->layer[i], m->dh[cur], m->dh[1 - cur]) != 0)
            return -1;
        cur = 1 - cur;
    }
    return nn_layer_backward(m->layer[0], m->dh[cur], NULL);
}

void nn_gpt_zero_grad(struct nn_gpt *m)
{
    for (int i = 0; i < m->nlayers; i++)
        nn_layer_zero_grad(m->layer[i]);
}
