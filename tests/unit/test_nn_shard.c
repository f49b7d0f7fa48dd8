/* nn_shard_range / nn_layer_shard (nn/shard.c): FSDP's padded sharding.
 * For odd and prime element counts, counts below W and W from 1 to 9:
 * every shard has the same size S = ceil(numel / W), the shards sit at
 * rank * S and tile [0, numel) in rank order with no gap or overlap, the
 * padding is W * S - numel < W elements, all at the end; bad W or rank is
 * 0 with an empty range. A real layer's shards are its parameter
 * tensor's (the embedding, a block and the head of a tiny GPT with odd
 * sizes), and copying each shard's real part reassembles the tensor. */
#include "../../nn/nn.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_tiling(size_t numel, int W)
{
    size_t next = 0, S0 = 0;
    for (int r = 0; r < W; r++) {
        size_t off, n, S = nn_shard_range(numel, r, W, &off, &n);
        if (r == 0)
            S0 = S;
        EXPECT(S == S0);                               /* equal shards */
        EXPECT(S == numel / (size_t)W + (numel % (size_t)W != 0));
        EXPECT(off == (size_t)r * S);
        EXPECT(n <= S);
        EXPECT(n == 0 ? next == numel : off == next);  /* in rank order, no gap or overlap */
        if (n < S)                                     /* padding only after the last element */
            EXPECT(off + n >= numel || n == 0);
        next += n;
    }
    EXPECT(next == numel);
    EXPECT(S0 * (size_t)W >= numel && S0 * (size_t)W - numel < (size_t)W);
}

int main(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 5, 7, 13, 97, 1001, 65537, 1000003};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int W = 1; W <= 9; W++)
            check_tiling(sizes[i], W);

    /* worked cases: 13 over 4 pads to 16, shards of 4; 5 over 4 pads to 8 */
    size_t off, n;
    EXPECT(nn_shard_range(13, 3, 4, &off, &n) == 4 && off == 12 && n == 1);
    EXPECT(nn_shard_range(5, 2, 4, &off, &n) == 2 && off == 4 && n == 1);
    EXPECT(nn_shard_range(5, 3, 4, &off, &n) == 2 && off == 6 && n == 0);
    EXPECT(nn_shard_range(12, 1, 4, &off, &n) == 3 && off == 3 && n == 3); /* no padding */
    /* bad arguments */
    EXPECT(nn_shard_range(13, 0, 0, &off, &n) == 0 && off == 0 && n == 0);
    EXPECT(nn_shard_range(13, 4, 4, &off, &n) == 0 && off == 0 && n == 0);
    EXPECT(nn_shard_range(13, -1, 4, &off, &n) == 0 && off == 0 && n == 0);

    /* real layers: odd hidden, seq and vocab */
    struct nn_gpt_config cfg = {"shard", 1, 1, 5, 3, 11, 20};
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    struct nn_workspace *ws = nn_workspace_new(&cfg, 1);
    for (int li = 0; li < cfg.layers + 2; li++) {
        struct nn_layer *l = nn_layer_new(&cfg, 1, f32, li, 7, ws);
        EXPECT(l != NULL);
        if (!l)
            continue;
        const struct nn_tensor *p = nn_layer_params(l);
        const float *src = p->data;
        for (int W = 1; W <= 7; W++) {
            float *copy = calloc(p->numel + 1, sizeof(float));
            for (int r = 0; r < W; r++) {
                size_t o2, n2, S = nn_layer_shard(l, r, W, &off, &n);
                EXPECT(S == nn_shard_range(p->numel, r, W, &o2, &n2) && off == o2 && n == n2);
                if (n)
                    memcpy(copy + off, src + off, n * sizeof(float));
            }
            EXPECT(memcmp(copy, src, p->numel * sizeof(float)) == 0);
            free(copy);
        }
        nn_layer_free(l);
    }
    nn_workspace_free(ws);
    return TEST_EXIT();
}
