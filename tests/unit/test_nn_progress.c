/* nn_workspace_set_progress: the hook a layer calls between its GEMMs
 * (mb-zero's --progress poll advances its collectives there). On a tiny
 * GPT: a block calls it once per GEMM, 4 forward and 8 backward, in the
 * fused and the reference kernels; the head once forward and twice
 * backward; the embedding (no GEMM) never; the outputs, the gradients and
 * the loss are bit-identical with and without it; NULL (the default, and
 * set back) calls nothing. */
#include "../../nn/nn.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void count(void *ctx) { ++*(int *)ctx; }

/* Forward + backward of layer li on fixed inputs: its output (or loss),
 * input gradient and parameter gradient into out/din/grad; the hook's
 * calls forward and backward into calls[0..1] when hooked. */
static void pass(const struct nn_gpt_config *cfg, int li, int fused, int hooked, float *out, float *din, float *grad,
                 double *loss, int calls[2])
{
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    struct nn_workspace *ws = nn_workspace_new(cfg, 1);
    struct nn_layer *l = nn_layer_new(cfg, 1, f32, li, 11, ws);
    EXPECT(ws != NULL && l != NULL);
    if (!ws || !l)
        return;
    nn_layer_set_fused(l, fused);
    size_t M = (size_t)cfg->seq, H = (size_t)cfg->hidden;
    float *x = malloc(M * H * 4), *dout = malloc(M * H * 4);
    int32_t tok[64], tgt[64];
    for (size_t k = 0; k < M * H; k++)
        x[k] = (float)((int)(k % 13) - 6) * 0.05f, dout[k] = (float)((int)(k % 7) - 3) * 0.01f;
    for (size_t k = 0; k < M; k++)
        tok[k] = (int32_t)(k % (size_t)cfg->vocab), tgt[k] = (int32_t)((k * 5 + 1) % (size_t)cfg->vocab);
    int n = 0;
    if (hooked)
        nn_workspace_set_progress(ws, count, &n);
    int L = cfg->layers + 2;
    if (li == L - 1)
        EXPECT(nn_layer_forward_head(l, x, tgt, loss) == 0);
    else
        EXPECT(nn_layer_forward(l, li == 0 ? (const void *)tok : (const void *)x, out) == 0);
    calls[0] = n;
    EXPECT(nn_layer_backward(l, li == L - 1 ? NULL : dout, li == 0 ? NULL : din) == 0);
    calls[1] = n - calls[0];
    memcpy(grad, nn_layer_grads(l)->data, nn_layer_grads(l)->numel * 4);
    nn_workspace_set_progress(ws, NULL, NULL);
    n = 0;
    EXPECT(nn_layer_backward(l, li == L - 1 ? NULL : dout, li == 0 ? NULL : din) == 0);
    EXPECT(n == 0); /* unhooked: not called */
    free(x), free(dout);
    nn_layer_free(l);
    nn_workspace_free(ws);
}

int main(void)
{
    struct nn_gpt_config cfg = {"progress", 1, 2, 16, 8, 12, 64};
    int L = cfg.layers + 2;
    size_t M = (size_t)cfg.seq, H = (size_t)cfg.hidden;
    const int want[3][2] = {{0, 0}, {4, 8}, {1, 2}}; /* embedding, block, head */
    for (int li = 0; li < L; li++)
        for (int fused = 0; fused <= 1; fused++) {
            size_t P = 1 << 16;
            float *o[2], *d[2], *g[2];
            double loss[2] = {0, 0};
            int calls[2][2] = {{0, 0}, {0, 0}};
            for (int h = 0; h < 2; h++) {
                o[h] = calloc(M * H, 4), d[h] = calloc(M * H, 4), g[h] = calloc(P, 4);
                pass(&cfg, li, fused, h, o[h], d[h], g[h], &loss[h], calls[h]);
            }
            const int *w = want[li == 0 ? 0 : li == L - 1 ? 2 : 1];
            EXPECT(calls[1][0] == w[0] && calls[1][1] == w[1]);
            EXPECT(calls[0][0] == 0 && calls[0][1] == 0);
            EXPECT(memcmp(o[0], o[1], M * H * 4) == 0);
            EXPECT(memcmp(d[0], d[1], M * H * 4) == 0);
            EXPECT(memcmp(g[0], g[1], P * 4) == 0);
            EXPECT(memcmp(&loss[0], &loss[1], sizeof(double)) == 0);
            for (int h = 0; h < 2; h++)
                free(o[h]), free(d[h]), free(g[h]);
        }
    return TEST_EXIT();
}
