/* nn/ GraphSAGE: finite-difference gradient check of a whole two-layer
 * model (SAGEConv mean + ReLU, SAGEConv, log-softmax + NLL) over sampled
 * blocks, including a destination without neighbours and repeated
 * neighbours (the scatter-add); the PyG formula on a hand example; and a
 * tiny GraphSAGE that learns a synthetic homophilous node classification
 * task well above chance (3 classes: chance 0.33, required 0.6 on
 * held-out nodes). */
#include "check.h"
#include "nn_gradcheck.h"

#include <stdlib.h>
#include <string.h>

struct sctx {
    struct nn_sage l1, l2;
    struct nn_sage_block b1, b2;
    float *x, *h, *o, *logp;
    int32_t *tg;
};

static double model_loss(void *p)
{
    struct sctx *c = p;
    size_t cnt;
    nn_sage_forward(&c->l1, &c->b1, c->x, c->h);
    nn_sage_forward(&c->l2, &c->b2, c->h, c->o);
    return nn_logsoftmax_nll_fwd(c->o, c->tg, c->logp, c->b2.n_dst, (size_t)c->l2.out, &cnt);
}

static int backward(struct sctx *c, float *dx)
{
    size_t cnt;
    model_loss(c);
    (void)cnt;
    float *dout = malloc(c->b2.n_dst * (size_t)c->l2.out * 4);
    float *dh = malloc(c->b1.n_dst * (size_t)c->l1.out * 4);
    nn_logsoftmax_nll_bwd(c->logp, c->tg, dout, c->b2.n_dst, (size_t)c->l2.out, 1.0f);
    int rc = nn_sage_backward(&c->l2, dout, dh) | nn_sage_backward(&c->l1, dh, dx);
    free(dout);
    free(dh);
    return rc;
}

int main(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 3);

    /* ---- PyG formula on a hand example: in 1, out 1 ---- */
    {
        struct nn_sage s;
        nn_sage_init(&s, 1, 1, 0, 1);
        s.Wl[0] = 2; s.Wr[0] = 3; s.b[0] = 0.5f;
        int64_t ptr[] = {0, 2, 2}, idx[] = {2, 3};
        struct nn_sage_block blk = {4, 2, ptr, idx};
        float x[] = {1, 10, 4, 6}, y[2];
        nn_sage_forward(&s, &blk, x, y);
        EXPECT(y[0] == 2 * 5 + 3 * 1 + 0.5f); /* mean(4, 6) * 2 + 1 * 3 + 0.5 */
        EXPECT(y[1] == 3 * 10 + 0.5f);        /* no neighbours: aggregate 0 */
        nn_sage_free(&s);
    }

    /* ---- gradient check of a two-layer model ---- */
    struct sctx c;
    memset(&c, 0, sizeof(c));
    int in = 4, hid = 6, ncls = 3;
    size_t n0 = 12, n1 = 7, n2 = 4;
    int64_t p1[8], i1[64], p2[5], i2[32];
    size_t e = 0;
    for (size_t i = 0; i < n1; i++) { /* dst 3 has no neighbours; repeats allowed */
        p1[i] = (int64_t)e;
        size_t deg = i == 3 ? 0 : 1 + nn_rng_next(&r) % 4;
        for (size_t k = 0; k < deg; k++)
            i1[e++] = (int64_t)(nn_rng_next(&r) % n0);
    }
    p1[n1] = (int64_t)e;
    i1[e++] = 5; /* not part of any list; keeps the arrays non-trivial */
    e = 0;
    for (size_t i = 0; i < n2; i++) {
        p2[i] = (int64_t)e;
        for (size_t k = 0; k < 3; k++)
            i2[e++] = (int64_t)(nn_rng_next(&r) % n1);
    }
    p2[n2] = (int64_t)e;
    c.b1 = (struct nn_sage_block){n0, n1, p1, i1};
    c.b2 = (struct nn_sage_block){n1, n2, p2, i2};
    EXPECT(nn_sage_init(&c.l1, in, hid, 1, 10) == 0);
    EXPECT(nn_sage_init(&c.l2, hid, ncls, 0, 11) == 0);
    gc_fill(c.l1.b, (size_t)hid, 0.5, &r); /* non-zero biases */
    gc_fill(c.l2.b, (size_t)ncls, 0.5, &r);
    c.x = malloc(n0 * (size_t)in * 4);
    c.h = malloc(n1 * (size_t)hid * 4);
    c.o = malloc(n2 * (size_t)ncls * 4);
    c.logp = malloc(n2 * (size_t)ncls * 4);
    c.tg = malloc(n2 * 4);
    int32_t tg[] = {0, 2, -1, 1};
    memcpy(c.tg, tg, sizeof(tg));
    gc_fill(c.x, n0 * (size_t)in, 1.0, &r);
    float *dx = malloc(n0 * (size_t)in * 4);
    nn_sage_zero_grad(&c.l1);
    nn_sage_zero_grad(&c.l2);
    EXPECT(backward(&c, dx) == 0);
    float *g1 = malloc(nn_tensor_bytes(&c.l1.grads)), *g2 = malloc(nn_tensor_bytes(&c.l2.grads));
    memcpy(g1, c.l1.grads.data, nn_tensor_bytes(&c.l1.grads));
    memcpy(g2, c.l2.grads.data, nn_tensor_bytes(&c.l2.grads));
    EXPECT(gc_check("sage x", model_loss, &c, c.x, dx, n0 * (size_t)in, 100, 1e-3, &r) == 0);
    EXPECT(gc_check("sage layer1 params", model_loss, &c, c.l1.params.data, g1, c.l1.params.numel,
                    200, 1e-3, &r) == 0);
    EXPECT(gc_check("sage layer2 params", model_loss, &c, c.l2.params.data, g2, c.l2.params.numel,
                    200, 1e-3, &r) == 0);
    /* sources no destination reads get no gradient */
    int used[12] = {0};
    for (int64_t k = 0; k < p1[n1]; k++)
        used[i1[k]] = 1;
    for (size_t k = 0; k < n1; k++)
        used[k] = 1;
    for (size_t j = 0; j < n0; j++)
        if (!used[j])
            for (int q = 0; q < in; q++)
                EXPECT(dx[j * (size_t)in + (size_t)q] == 0);
    nn_sage_free(&c.l1);
    nn_sage_free(&c.l2);

    /* ---- learning: homophilous graph, noisy features ---- */
    size_t N = 600, deg = 8;
    int F = 8, C = 3;
    int32_t *cls = malloc(N * 4), *train_tg = malloc(N * 4);
    float *X = malloc(N * (size_t)F * 4);
    int64_t *ptr = malloc((N + 1) * 8), *idx = malloc(N * deg * 8);
    for (size_t i = 0; i < N; i++)
        cls[i] = (int32_t)(i % (size_t)C);
    for (size_t i = 0; i < N; i++) {
        for (int f = 0; f < F; f++)
            X[i * (size_t)F + (size_t)f] = (float)((f == cls[i] ? 1.0 : 0.0) + 1.5 * nn_rng_normal(&r));
        ptr[i] = (int64_t)(i * deg);
        for (size_t k = 0; k < deg; k++) {
            size_t j;
            do /* 80% of edges join nodes of one class */
                j = nn_rng_next(&r) % N;
            while (nn_rng_uniform(&r) < 0.8 && cls[j] != cls[i]);
            idx[i * deg + k] = (int64_t)j;
        }
        train_tg[i] = i % 2 ? -1 : cls[i]; /* odd nodes held out */
    }
    ptr[N] = (int64_t)(N * deg);
    struct nn_sage_block full = {N, N, ptr, idx};
    struct nn_sage a, b;
    nn_sage_init(&a, F, 16, 1, 21);
    nn_sage_init(&b, 16, C, 0, 22);
    float *H = malloc(N * 16 * 4), *O = malloc(N * (size_t)C * 4), *LP = malloc(N * (size_t)C * 4);
    float *dO = malloc(N * (size_t)C * 4), *dH = malloc(N * 16 * 4);
    struct nn_adam hp = nn_adam_default();
    hp.lr = 1e-2f;
    float *ma = calloc(a.params.numel, 4), *va = calloc(a.params.numel, 4);
    float *mb = calloc(b.params.numel, 4), *vb = calloc(b.params.numel, 4);
    double loss = 0;
    for (int step = 1; step <= 100; step++) {
        size_t cnt;
        nn_sage_zero_grad(&a);
        nn_sage_zero_grad(&b);
        nn_sage_forward(&a, &full, X, H);
        nn_sage_forward(&b, &full, H, O);
        loss = nn_logsoftmax_nll_fwd(O, train_tg, LP, N, (size_t)C, &cnt) / (double)cnt;
        nn_logsoftmax_nll_bwd(LP, train_tg, dO, N, (size_t)C, 1.0f / (float)cnt);
        nn_sage_backward(&b, dO, dH);
        nn_sage_backward(&a, dH, NULL);
        nn_adam_step(&hp, step, a.params.numel, a.params.data, ma, va, a.grads.data, NN_F32, 1.0f, NULL, NN_F32);
        nn_adam_step(&hp, step, b.params.numel, b.params.data, mb, vb, b.grads.data, NN_F32, 1.0f, NULL, NN_F32);
    }
    nn_sage_forward(&a, &full, X, H);
    nn_sage_forward(&b, &full, H, O);
    size_t right = 0, total = 0;
    for (size_t i = 1; i < N; i += 2) {
        int best = 0;
        for (int k = 1; k < C; k++)
            if (O[i * (size_t)C + (size_t)k] > O[i * (size_t)C + (size_t)best])
                best = k;
        right += best == cls[i];
        total++;
    }
    double acc = (double)right / (double)total;
    fprintf(stderr, "GraphSAGE: train loss %.3f, held-out accuracy %.3f (chance 0.333)\n", loss, acc);
    EXPECT(acc > 0.6);
    nn_sage_free(&a);
    nn_sage_free(&b);
    return TEST_EXIT();
}
