/* nn/ training: the "gpt-tiny" preset learns a synthetic copy task with
 * Adam. Each sequence is 7 random tokens, a separator, then the same 7
 * tokens again; the loss counts only the predictions of the second copy,
 * which are impossible without attending back (chance: ln 15 = 2.71).
 * The loss must fall below 0.3 within the step budget. Also checks the
 * mixed-precision path (fp16 storage, fp32 master weights) trains. */
#include "check.h"
#include "../../nn/nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define THRESHOLD 0.3

static void batch(struct nn_rng *r, int B, int S, int V, int32_t *tok, int32_t *tgt)
{
    int half = S / 2; /* positions 0..half-2 data, half-1 separator, then the copy */
    for (int b = 0; b < B; b++) {
        int32_t *t = tok + b * S, *g = tgt + b * S;
        for (int i = 0; i < half - 1; i++)
            t[i] = 1 + (int32_t)(nn_rng_next(r) % (uint64_t)(V - 1));
        t[half - 1] = 0;
        for (int i = 0; i < half - 1; i++)
            t[half + i] = t[i];
        t[S - 1] = 0;
        for (int i = 0; i < S; i++)
            g[i] = (i >= half - 1 && i < S - 2) ? t[i + 1] : -1;
    }
}

static double train(struct nn_precision pr, int steps, double *first)
{
    struct nn_gpt_config cfg;
    nn_gpt_preset("gpt-tiny", &cfg);
    int B = 16, S = cfg.seq, V = cfg.vocab;
    struct nn_gpt *m = nn_gpt_new(&cfg, B, pr, 1);
    struct nn_adam_state st;
    struct nn_adam hp = nn_adam_default();
    hp.lr = 3e-3f;
    if (!m || nn_adam_state_init(&st, m) != 0)
        return INFINITY;
    struct nn_rng r;
    nn_rng_seed(&r, 99);
    int32_t *tok = malloc((size_t)(B * S) * 4), *tgt = malloc((size_t)(B * S) * 4);
    double loss = 0, avg = 0;
    for (int s = 0; s < steps; s++) {
        batch(&r, B, S, V, tok, tgt);
        nn_gpt_zero_grad(m);
        if (nn_gpt_forward(m, tok, tgt, &loss) != 0 || nn_gpt_backward(m) != 0)
            return INFINITY;
        nn_gpt_adam_step(m, &st, &hp, 1.0f);
        if (s == 0)
            *first = loss;
        avg = s < 20 ? loss : 0.9 * avg + 0.1 * loss; /* smoothed */
        if (s % 100 == 0)
            fprintf(stderr, "  step %d loss %.4f\n", s, loss);
    }
    fprintf(stderr, "%s: first loss %.3f, final (smoothed) %.4f after %d steps\n",
            nn_dtype_name(pr.param), *first, avg, steps);
    nn_adam_state_free(&st);
    nn_gpt_free(m);
    free(tok);
    free(tgt);
    return avg;
}

int main(void)
{
    double first;
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32}, f16 = {NN_F16, NN_F16, NN_F16};
    double l = train(f32, 300, &first);
    EXPECT(first > 2.0);     /* started near chance */
    EXPECT(l < THRESHOLD);
    double l16 = train(f16, 300, &first);
    EXPECT(l16 < THRESHOLD);
    return TEST_EXIT();
}
