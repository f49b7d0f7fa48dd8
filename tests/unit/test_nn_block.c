/* nn/ decoder block and whole GPT: finite-difference gradient checks of a
 * whole block (input and every parameter group) and of the whole model
 * (embedding, blocks, head, cross-entropy); recompute gives the same
 * gradients as keeping activations; saved-activation byte sizes equal the
 * accounting; fp16/bf16 storage stays close to fp32; runs are
 * deterministic with a seed. */
#include "check.h"
#include "nn_gradcheck.h"

#include <stdlib.h>
#include <string.h>

static struct nn_gpt_config cfg = {"test", 2, 2, 8, 4, 7, 32};
static const int B = 2;
static const struct nn_precision F32 = {NN_F32, NN_F32, NN_F32};

struct bctx {
    struct nn_layer *l;
    float *x, *y, *R;
    size_t n;
};

static double block_loss(void *p)
{
    struct bctx *c = p;
    nn_layer_forward(c->l, c->x, c->y);
    return gc_dot(c->y, c->R, c->n);
}

struct gctx {
    struct nn_gpt *m;
    int32_t *tok, *tgt;
};

static double gpt_loss(void *p)
{
    struct gctx *c = p;
    double loss;
    nn_gpt_forward(c->m, c->tok, c->tgt, &loss);
    return loss;
}

static void check_block_bytes(struct nn_layer *l)
{
    struct nn_layer_account a;
    nn_layer_account(l, &a);
    struct nn_tensor *intra[16];
    size_t k = nn_layer_act_intra(l, intra, 16);
    uint64_t bytes = 0;
    for (size_t i = 0; i < k; i++)
        bytes += nn_tensor_bytes(intra[i]);
    EXPECT(bytes == a.act_intra_bytes);
    EXPECT(nn_tensor_bytes(nn_layer_act_inter(l)) +
               (a.kind == NN_LAYER_HEAD ? 4 * (uint64_t)B * (uint64_t)cfg.seq : 0) ==
           a.act_inter_bytes);
    EXPECT(nn_tensor_bytes(nn_layer_params(l)) == a.param_bytes);
    EXPECT(nn_tensor_bytes(nn_layer_grads(l)) == a.grad_bytes);
}

int main(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 7);
    size_t M = (size_t)B * (size_t)cfg.seq, H = (size_t)cfg.hidden, n = M * H;

    /* ---- one block ---- */
    struct nn_workspace *ws = nn_workspace_new(&cfg, B);
    struct bctx c = {nn_layer_new(&cfg, B, F32, 1, 3, ws), malloc(n * 4), malloc(n * 4),
                     malloc(n * 4), n};
    EXPECT(c.l && nn_layer_kind(c.l) == NN_LAYER_BLOCK);
    struct nn_tensor *P = nn_layer_params(c.l), *G = nn_layer_grads(c.l);
    float *pp = P->data;
    /* perturb every parameter away from the init (LN 1/0, zero biases), so
     * each one's gradient is exercised at a generic point */
    for (size_t i = 0; i < P->numel; i++)
        pp[i] += (float)(0.3 * nn_rng_normal(&r));
    gc_fill(c.x, n, 1.0, &r);
    gc_fill(c.R, n, 1.0, &r);
    float *dx = malloc(n * 4), *dx2 = malloc(n * 4), *g1 = malloc(G->numel * 4);
    nn_layer_zero_grad(c.l);
    block_loss(&c);
    EXPECT(nn_layer_backward(c.l, c.R, dx) == 0);
    memcpy(g1, G->data, G->numel * 4);
    EXPECT(gc_check("block dx", block_loss, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    /* every parameter group: ln1, Wqkv, bqkv, Wo, bo, ln2, W1, b1, W2, b2 */
    size_t F = (size_t)cfg.ffn, off = 0;
    const struct { const char *name; size_t len; } grp[] = {
        {"block ln1", 2 * H}, {"block Wqkv", 3 * H * H}, {"block bqkv", 3 * H},
        {"block Wo", H * H}, {"block bo", H}, {"block ln2", 2 * H}, {"block W1", H * F},
        {"block b1", F}, {"block W2", F * H}, {"block b2", H}};
    for (size_t k = 0; k < sizeof(grp) / sizeof(grp[0]); k++) {
        EXPECT(gc_check(grp[k].name, block_loss, &c, pp + off, g1 + off, grp[k].len, 40, 1e-2, &r) == 0);
        off += grp[k].len;
    }
    EXPECT(off == P->numel);
    check_block_bytes(c.l);

    /* recompute: drop the intra activations after forward; backward
     * recomputes them and gives bit-identical gradients */
    nn_layer_zero_grad(c.l);
    block_loss(&c);
    nn_layer_drop_intra(c.l);
    EXPECT(!nn_layer_intra_live(c.l));
    EXPECT(nn_layer_backward(c.l, c.R, dx2) == 0);
    EXPECT(nn_layer_intra_live(c.l));
    EXPECT(memcmp(dx, dx2, n * 4) == 0);
    EXPECT(memcmp(g1, G->data, G->numel * 4) == 0);
    struct nn_layer_account acc;
    nn_layer_account(c.l, &acc);
    /* the partial recompute skips the W2 GEMM, and says so */
    EXPECT(acc.flops_recompute == acc.flops_fwd - 2.0 * M * cfg.ffn * H);

    /* fp16 and bf16 storage (params, grads, activations): same math within
     * the storage precision */
    for (int d = 1; d <= 2; d++) {
        enum nn_dtype dt = d == 1 ? NN_F16 : NN_BF16;
        struct nn_precision pr = {dt, dt, dt};
        struct nn_layer *l = nn_layer_new(&cfg, B, pr, 1, 3, ws);
        nn_store_f32(nn_layer_params(l)->data, dt, pp, P->numel);
        float *y = malloc(n * 4), *y32 = malloc(n * 4), *dxh = malloc(n * 4);
        nn_layer_forward(c.l, c.x, y32);
        nn_layer_zero_grad(l);
        EXPECT(nn_layer_forward(l, c.x, y) == 0);
        EXPECT(nn_layer_backward(l, c.R, dxh) == 0);
        double tol = dt == NN_F16 ? 2e-2 : 1e-1, worst = 0, worstg = 0;
        for (size_t i = 0; i < n; i++) {
            worst = fmax(worst, fabs(y[i] - y32[i]) / (1 + fabs(y32[i])));
            worstg = fmax(worstg, fabs(dxh[i] - dx[i]) / (1 + fabs(dx[i])));
        }
        float *gh = malloc(G->numel * 4);
        nn_load_f32(gh, nn_layer_grads(l)->data, dt, G->numel);
        double gw = 0;
        for (size_t i = 0; i < G->numel; i++)
            gw = fmax(gw, fabs(gh[i] - g1[i]) / (1 + fabs(g1[i])));
        fprintf(stderr, "%s storage: out %.2e, dx %.2e, grads %.2e (relative, tol %.0e)\n",
                nn_dtype_name(dt), worst, worstg, gw, tol);
        EXPECT(worst < tol && worstg < tol && gw < tol);
        check_block_bytes(l);
        nn_layer_free(l);
        free(y); free(y32); free(dxh); free(gh);
    }
    nn_layer_free(c.l);
    nn_workspace_free(ws);

    /* ---- whole GPT: embedding, 2 blocks, head, loss ---- */
    struct gctx g = {nn_gpt_new(&cfg, B, F32, 11), malloc(M * 4), malloc(M * 4)};
    EXPECT(g.m != NULL);
    for (size_t i = 0; i < M; i++) {
        g.tok[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)cfg.vocab);
        g.tgt[i] = i == 3 ? -1 : (int32_t)(nn_rng_next(&r) % (uint64_t)cfg.vocab);
    }
    for (int li = 0; li < g.m->nlayers; li++) {
        struct nn_tensor *t = nn_layer_params(g.m->layer[li]);
        float *q = t->data;
        for (size_t i = 0; i < t->numel; i++)
            q[i] += (float)(0.2 * nn_rng_normal(&r));
        check_block_bytes(g.m->layer[li]);
    }
    nn_gpt_zero_grad(g.m);
    double l0 = gpt_loss(&g);
    EXPECT(nn_gpt_backward(g.m) == 0);
    for (int li = 0; li < g.m->nlayers; li++) {
        struct nn_tensor *t = nn_layer_params(g.m->layer[li]);
        char name[64];
        snprintf(name, sizeof(name), "gpt layer %d (%s)", li,
                 nn_layer_kind_name(nn_layer_kind(g.m->layer[li])));
        float *gr = malloc(t->numel * 4);
        memcpy(gr, nn_layer_grads(g.m->layer[li])->data, t->numel * 4);
        EXPECT(gc_check(name, gpt_loss, &g, t->data, gr, t->numel, 60, 1e-2, &r) == 0);
        free(gr);
    }
    /* recompute mode: same loss, same gradients */
    float *gfirst = malloc(nn_layer_grads(g.m->layer[1])->numel * 4);
    nn_gpt_zero_grad(g.m);
    double la = gpt_loss(&g);
    nn_gpt_backward(g.m);
    memcpy(gfirst, nn_layer_grads(g.m->layer[1])->data, nn_layer_grads(g.m->layer[1])->numel * 4);
    g.m->recompute = 1;
    nn_gpt_zero_grad(g.m);
    double lb = gpt_loss(&g);
    EXPECT(!nn_layer_intra_live(g.m->layer[1]));
    nn_gpt_backward(g.m);
    EXPECT(la == lb);
    EXPECT(memcmp(gfirst, nn_layer_grads(g.m->layer[1])->data,
                  nn_layer_grads(g.m->layer[1])->numel * 4) == 0);
    (void)l0;
    /* dropping the head's and the embedding's intra activations too: the
     * head recomputes from its saved input and targets */
    float *ghead = malloc(nn_layer_grads(g.m->layer[3])->numel * 4);
    g.m->recompute = 0;
    nn_gpt_zero_grad(g.m);
    gpt_loss(&g);
    nn_gpt_backward(g.m);
    memcpy(ghead, nn_layer_grads(g.m->layer[3])->data, nn_layer_grads(g.m->layer[3])->numel * 4);
    nn_gpt_zero_grad(g.m);
    gpt_loss(&g);
    nn_layer_drop_intra(g.m->layer[3]);
    nn_layer_drop_intra(g.m->layer[0]);
    EXPECT(nn_gpt_backward(g.m) == 0);
    EXPECT(memcmp(ghead, nn_layer_grads(g.m->layer[3])->data,
                  nn_layer_grads(g.m->layer[3])->numel * 4) == 0);
    EXPECT(nn_layer_intra_live(g.m->layer[0]) && nn_layer_intra_live(g.m->layer[3]));
    free(ghead);

    /* determinism: two models from the same seed give the same loss;
     * another seed gives another */
    struct nn_gpt *m1 = nn_gpt_new(&cfg, B, F32, 5), *m2 = nn_gpt_new(&cfg, B, F32, 5),
                  *m3 = nn_gpt_new(&cfg, B, F32, 6);
    double a1, a2, a3;
    nn_gpt_forward(m1, g.tok, g.tgt, &a1);
    nn_gpt_forward(m2, g.tok, g.tgt, &a2);
    nn_gpt_forward(m3, g.tok, g.tgt, &a3);
    EXPECT(a1 == a2 && a1 != a3);
    /* an untrained model predicts close to uniform: loss ~ ln(V) */
    EXPECT(fabs(a1 - log(cfg.vocab)) < 0.2);
    nn_gpt_free(m1); nn_gpt_free(m2); nn_gpt_free(m3);
    nn_gpt_free(g.m);
    return TEST_EXIT();
}
