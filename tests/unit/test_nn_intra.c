/* nn/ for offloading trainers (Ratel, DisDP): per-tensor release/attach
 * of intra-block activations and the partial recompute (every subset of a
 * block's tensors released gives bit-identical gradients, present
 * tensors untouched, FLOPs as accounted), layers on caller memory
 * (bind), an allocator hook with a cap (refusal, nothing leaked), and the
 * "key=value" model parser's errors. */
#include "check.h"

#include "../../nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct nn_gpt_config cfg = {"test", 2, 2, 8, 4, 7, 32};
static const int B = 2;
static const struct nn_precision F32 = {NN_F32, NN_F32, NN_F32};

/* ---- a capped counting allocator (the shape of a device arena) -------- */
struct capped {
    size_t cap, used, peak;
    long live;
};
static void *capped_alloc(void *ctx, size_t bytes)
{
    struct capped *c = ctx;
    if (bytes % 64 || c->used + bytes + 64 > c->cap)
        return NULL;
    size_t *p = aligned_alloc(64, bytes + 64);
    if (!p)
        return NULL;
    p[0] = bytes;
    c->used += bytes + 64;
    c->peak = c->used > c->peak ? c->used : c->peak;
    c->live++;
    return (char *)p + 64;
}
static void capped_free(void *ctx, void *q)
{
    struct capped *c = ctx;
    size_t *p = (size_t *)((char *)q - 64);
    c->used -= p[0] + 64;
    c->live--;
    free(p);
}

static void fill(float *x, size_t n, struct nn_rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)nn_rng_normal(r);
}

/* Forward, release the tensors in mask (their memory overwritten with
 * NaN, as a swap-out that reuses it would), backward: dx and gradients
 * must equal the reference bits, present tensors must be untouched. */
static int run_release(struct nn_layer *l, const float *x, const float *dy, unsigned mask,
                       const float *dx_ref, const float *g_ref, size_t n)
{
    size_t np = nn_layer_grads(l)->numel;
    float *y = malloc(n * 4), *dx = malloc(n * 4);
    struct nn_tensor *t[16];
    int k = (int)nn_layer_act_intra(l, t, 16), bad = 0;
    void *snap[16] = {0};
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    for (int i = 0; i < k; i++) {
        size_t bytes = nn_tensor_bytes(t[i]);
        if (mask >> i & 1) {
            void *mem = nn_layer_intra_release(l, i);
            bad |= mem == NULL || nn_layer_intra_present(l, i);
            bad |= nn_layer_intra_release(l, i) != NULL; /* twice: refused */
            memset(mem, 0xff, bytes); /* NaN */
        } else {
            snap[i] = malloc(bytes);
            memcpy(snap[i], t[i]->data, bytes);
        }
    }
    bad |= nn_layer_intra_live(l) != (mask == 0);
    bad |= nn_layer_backward(l, dy, dx) != 0;
    bad |= !nn_layer_intra_live(l);
    bad |= memcmp(dx, dx_ref, n * 4) != 0;
    bad |= memcmp(nn_layer_grads(l)->data, g_ref, np * 4) != 0;
    for (int i = 0; i < k; i++)
        if (snap[i]) {
            bad |= memcmp(snap[i], t[i]->data, nn_tensor_bytes(t[i])) != 0;
            free(snap[i]);
        }
    free(y);
    free(dx);
    return bad;
}

static void test_partial_recompute(int fused)
{
    struct nn_rng r;
    nn_rng_seed(&r, 5);
    size_t n = (size_t)B * cfg.seq * cfg.hidden;
    struct nn_workspace *ws = nn_workspace_new(&cfg, B);
    struct nn_layer *l = nn_layer_new(&cfg, B, F32, 1, 9, ws);
    nn_layer_set_fused(l, fused);
    float *P = nn_layer_params(l)->data;
    for (size_t i = 0; i < nn_layer_params(l)->numel; i++)
        P[i] += (float)(0.3 * nn_rng_normal(&r));
    float *x = malloc(n * 4), *dy = malloc(n * 4), *y = malloc(n * 4), *dx = malloc(n * 4);
    fill(x, n, &r);
    fill(dy, n, &r);
    size_t np = nn_layer_grads(l)->numel;
    float *g = malloc(np * 4);
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    EXPECT(nn_layer_recompute_flops(l) == 0);
    EXPECT(nn_layer_backward(l, dy, dx) == 0);
    memcpy(g, nn_layer_grads(l)->data, np * 4);

    struct nn_tensor *t[16];
    int k = (int)nn_layer_act_intra(l, t, 16), fails = 0;
    EXPECT(k == 9);
    for (unsigned mask = 0; mask < 1u << k; mask++)
        fails += run_release(l, x, dy, mask, dx, g, n);
    EXPECT(fails == 0);
    if (fails)
        fprintf(stderr, "%s path: %d of %u release sets differ\n", fused ? "fused" : "reference",
                fails, 1u << k);

    /* FLOPs: each tensor's share; all released = the steps before W2 */
    struct nn_layer_account a;
    nn_layer_account(l, &a);
    double m = (double)B * cfg.seq, h = cfg.hidden, f = cfg.ffn, sum = 0;
    uint64_t bytes = 0;
    for (int i = 0; i < k; i++) {
        uint64_t b;
        double fl;
        EXPECT(nn_layer_intra_account(l, i, &b, &fl) == 0);
        EXPECT(b == nn_tensor_bytes(t[i]));
        uint64_t b2;
        double fl2;
        EXPECT(nn_gpt_intra_account(&cfg, B, F32, 1, i, &b2, &fl2) == 0 && b2 == b && fl2 == fl);
        EXPECT(nn_layer_intra_name(l, i) != NULL);
        bytes += b;
        sum += fl;
    }
    EXPECT(nn_layer_intra_account(l, k, NULL, NULL) == -1);
    EXPECT(nn_gpt_intra_count(&cfg, 1) == k && nn_gpt_intra_count(&cfg, 0) == 0 &&
           nn_gpt_intra_count(&cfg, cfg.layers + 1) == 3);
    EXPECT(bytes == a.act_intra_bytes);
    EXPECT(sum == a.flops_fwd - 2 * m * f * h);
    nn_layer_forward(l, x, y);
    for (int i = 0; i < k; i++)
        nn_layer_intra_release(l, i);
    EXPECT(nn_layer_recompute_flops(l) == (fused ? sum : a.flops_fwd));
    nn_layer_forward(l, x, y);
    nn_layer_intra_release(l, 3); /* probs alone: the attention step */
    EXPECT(nn_layer_recompute_flops(l) == (fused ? 4 * m * cfg.seq * h : a.flops_fwd));

    /* swap out and in through other memory: no recompute, same bits */
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    void *held[16];
    for (int i = 0; i < k; i++) {
        size_t nb = nn_tensor_bytes(t[i]);
        void *mem = nn_layer_intra_release(l, i);
        held[i] = aligned_alloc(64, (nb + 63) / 64 * 64);
        memcpy(held[i], mem, nb);
        memset(mem, 0xff, nb);
    }
    for (int i = 0; i < k; i++)
        EXPECT(nn_layer_intra_attach(l, i, held[i], 1) == 0);
    EXPECT(nn_layer_intra_live(l) && nn_layer_recompute_flops(l) == 0);
    EXPECT(nn_layer_backward(l, dy, dx) == 0);
    EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);
    /* attached without contents (valid 0): recomputed into that memory */
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    nn_layer_intra_release(l, 7);
    memset(held[7], 0xff, nn_tensor_bytes(t[7]));
    EXPECT(nn_layer_intra_attach(l, 7, held[7], 0) == 0 && !nn_layer_intra_live(l));
    EXPECT(nn_layer_backward(l, dy, dx) == 0);
    EXPECT(t[7]->data == held[7]);
    EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);
    /* back to its own memory before the buffers go */
    for (int i = 0; i < k; i++)
        EXPECT(nn_layer_intra_attach(l, i, NULL, 0) == 0);
    for (int i = 0; i < k; i++)
        free(held[i]);
    /* the whole-block drop still works (and frees) */
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    nn_layer_drop_intra(l);
    EXPECT(nn_layer_backward(l, dy, dx) == 0);
    EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);

    /* the whole forward rerun (DeepSpeed's checkpointing): FLOP_r = FLOP_f
     * whatever is present, the W2 GEMM run again, the saved input left as
     * it was, the same gradients and input gradient */
    float *dx_keep = malloc(n * 4), *saved = malloc(n * 4);
    struct nn_stage_times st;
    nn_layer_set_stage_times(l, &st);
    nn_layer_set_recompute_whole(l, 1);
    for (int probs_only = 0; probs_only < 2; probs_only++) {
        nn_layer_zero_grad(l);
        nn_layer_forward(l, x, y);
        memcpy(dx_keep, dx, n * 4);
        memcpy(saved, nn_layer_act_inter(l)->data, n * 4);
        if (probs_only)
            nn_layer_intra_release(l, 3);
        else
            nn_layer_drop_intra(l);
        EXPECT(nn_layer_recompute_flops(l) == a.flops_fwd);
        memset(&st, 0, sizeof(st));
        EXPECT(nn_layer_backward(l, dy, dx) == 0);
        EXPECT(!fused || (st.t[NN_ST_FWD_GEMM_W2] > 0 && st.t[NN_ST_FWD_GEMM_QKV] > 0)); /* (stages: fused only) */
        EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);
        EXPECT(memcmp(dx, dx_keep, n * 4) == 0);
        EXPECT(memcmp(nn_layer_act_inter(l)->data, saved, n * 4) == 0);
    }
    /* and off again: the partial recompute, no W2 */
    nn_layer_set_recompute_whole(l, 0);
    nn_layer_zero_grad(l);
    nn_layer_forward(l, x, y);
    nn_layer_drop_intra(l);
    EXPECT(nn_layer_recompute_flops(l) == (fused ? sum : a.flops_fwd));
    memset(&st, 0, sizeof(st));
    EXPECT(nn_layer_backward(l, dy, dx) == 0);
    EXPECT(!fused || st.t[NN_ST_FWD_GEMM_W2] == 0);
    EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);
    nn_layer_set_stage_times(l, NULL);
    free(dx_keep);
    free(saved);

    nn_layer_free(l);
    nn_workspace_free(ws);
    free(x); free(dy); free(y); free(dx); free(g);
}

/* fp16 storage: a released tensor is recomputed from the saved fp16
 * input; the present ones keep their saved bits exactly. */
static void test_fp16_present_untouched(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 6);
    size_t n = (size_t)B * cfg.seq * cfg.hidden;
    struct nn_precision h16 = {NN_F16, NN_F16, NN_F16};
    struct nn_workspace *ws = nn_workspace_new(&cfg, B);
    struct nn_layer *l = nn_layer_new(&cfg, B, h16, 1, 9, ws);
    float *x = malloc(n * 4), *dy = malloc(n * 4), *y = malloc(n * 4), *dx = malloc(n * 4);
    float *dx0 = malloc(n * 4);
    fill(x, n, &r);
    fill(dy, n, &r);
    nn_layer_forward(l, x, y);
    nn_layer_backward(l, dy, dx0);
    struct nn_tensor *t[16];
    int k = (int)nn_layer_act_intra(l, t, 16);
    for (unsigned mask = 1; mask < 1u << k; mask = mask * 3 + 1) {
        nn_layer_forward(l, x, y);
        void *snap[16] = {0};
        for (int i = 0; i < k; i++) {
            if (mask >> i & 1) {
                nn_layer_intra_release(l, i);
            } else {
                snap[i] = malloc(nn_tensor_bytes(t[i]));
                memcpy(snap[i], t[i]->data, nn_tensor_bytes(t[i]));
            }
        }
        EXPECT(nn_layer_backward(l, dy, dx) == 0);
        double worst = 0;
        for (size_t i = 0; i < n; i++)
            worst = fmax(worst, fabs(dx[i] - dx0[i]) / (1 + fabs(dx0[i])));
        EXPECT(worst < 2e-2);
        for (int i = 0; i < k; i++)
            if (snap[i]) {
                EXPECT(memcmp(snap[i], t[i]->data, nn_tensor_bytes(t[i])) == 0);
                free(snap[i]);
            }
    }
    nn_layer_free(l);
    nn_workspace_free(ws);
    free(x); free(dy); free(y); free(dx); free(dx0);
}

static void test_head_release(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 8);
    size_t M = (size_t)B * cfg.seq, n = M * cfg.hidden;
    struct nn_workspace *ws = nn_workspace_new(&cfg, B);
    struct nn_layer *l = nn_layer_new(&cfg, B, F32, cfg.layers + 1, 9, ws);
    float *x = malloc(n * 4), *dx = malloc(n * 4), *dx0 = malloc(n * 4);
    int32_t *tgt = malloc(M * 4);
    fill(x, n, &r);
    for (size_t i = 0; i < M; i++)
        tgt[i] = (int32_t)(i % (size_t)cfg.vocab);
    double loss;
    nn_layer_forward_head(l, x, tgt, &loss);
    nn_layer_backward(l, NULL, dx0);
    size_t np = nn_layer_grads(l)->numel;
    float *g = malloc(np * 4);
    memcpy(g, nn_layer_grads(l)->data, np * 4);
    for (unsigned mask = 1; mask < 8; mask++) {
        nn_layer_zero_grad(l);
        nn_layer_forward_head(l, x, tgt, &loss);
        for (int i = 0; i < 3; i++)
            if (mask >> i & 1)
                memset(nn_layer_intra_release(l, i), 0xff, 4);
        EXPECT(nn_layer_backward(l, NULL, dx) == 0);
        EXPECT(memcmp(dx, dx0, n * 4) == 0);
        EXPECT(memcmp(nn_layer_grads(l)->data, g, np * 4) == 0);
    }
    nn_layer_free(l);
    nn_workspace_free(ws);
    free(x); free(dx); free(dx0); free(tgt); free(g);
}

/* Layers on caller memory and from a capped allocator. */
static void test_bind_and_alloc(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 4);
    size_t n = (size_t)B * cfg.seq * cfg.hidden;
    struct capped arena = {1u << 20, 0, 0, 0};
    struct nn_alloc a = {capped_alloc, capped_free, &arena};
    struct nn_workspace *ws_ref = nn_workspace_new(&cfg, B);
    struct nn_workspace *ws = nn_workspace_new_alloc(&cfg, B, &a);
    EXPECT(ws != NULL && arena.live > 0);
    size_t ws_bytes = arena.used;
    EXPECT(ws_bytes == nn_workspace_bytes(&cfg, B) + 64 * 18); /* + the test's headers */
    struct nn_layer *ref = nn_layer_new(&cfg, B, F32, 1, 21, ws_ref);
    struct nn_layer *l = nn_layer_new_alloc(&cfg, B, F32, 1, 21, ws, &a,
                                            NN_LAYER_BIND_PARAMS | NN_LAYER_BIND_GRADS);
    EXPECT(l != NULL);
    struct nn_layer_account acc;
    nn_layer_account(l, &acc);
    /* the layer's own memory came from the arena: inter + intra, no params or grads */
    EXPECT(arena.used - ws_bytes >= acc.act_inter_bytes + acc.act_intra_bytes);
    EXPECT(arena.used - ws_bytes < acc.act_inter_bytes + acc.act_intra_bytes + acc.param_bytes);
    float *y = malloc(n * 4), *x = malloc(n * 4), *dy = malloc(n * 4);
    fill(x, n, &r);
    fill(dy, n, &r);
    EXPECT(nn_layer_forward(l, x, y) == -1); /* nothing bound yet */
    float *P = aligned_alloc(64, (acc.param_bytes + 63) / 64 * 64);
    float *G = aligned_alloc(64, (acc.grad_bytes + 63) / 64 * 64);
    EXPECT(nn_layer_bind_params(l, NULL) == -1);
    EXPECT(nn_layer_bind_params(l, P) == 0 && nn_layer_bind_grads(l, G) == 0);
    EXPECT(nn_layer_params(l)->data == P && nn_layer_grads(l)->data == G);
    nn_layer_init_params(l, 21);
    EXPECT(memcmp(P, nn_layer_params(ref)->data, acc.param_bytes) == 0);
    float *y0 = malloc(n * 4), *dx0 = malloc(n * 4), *dx = malloc(n * 4);
    nn_layer_zero_grad(ref);
    nn_layer_zero_grad(l);
    EXPECT(nn_layer_forward(ref, x, y0) == 0 && nn_layer_backward(ref, dy, dx0) == 0);
    EXPECT(nn_layer_forward(l, x, y) == 0 && nn_layer_backward(l, dy, dx) == 0);
    EXPECT(memcmp(y, y0, n * 4) == 0 && memcmp(dx, dx0, n * 4) == 0);
    EXPECT(memcmp(G, nn_layer_grads(ref)->data, acc.grad_bytes) == 0);
    /* binding a layer that owns storage gives it back to the allocator */
    long live = arena.live;
    struct nn_layer *l2 = nn_layer_new_alloc(&cfg, B, F32, 1, 21, ws, &a, 0);
    EXPECT(l2 && arena.live == live + 12); /* params, grads, inter, 9 intra */
    EXPECT(nn_layer_bind_params(l2, P) == 0 && arena.live == live + 11);
    nn_layer_free(l2);
    EXPECT(arena.live == live);
    /* a cap smaller than a layer: refused cleanly, nothing leaked */
    struct capped small = {acc.act_intra_bytes / 2, 0, 0, 0};
    struct nn_alloc sa = {capped_alloc, capped_free, &small};
    EXPECT(nn_layer_new_alloc(&cfg, B, F32, 1, 21, ws, &sa, 0) == NULL);
    EXPECT(small.live == 0 && small.used == 0);
    EXPECT(nn_workspace_new_alloc(&cfg, B, &sa) == NULL);
    EXPECT(small.live == 0);
    nn_layer_free(l);
    nn_layer_free(ref);
    nn_workspace_free(ws);
    nn_workspace_free(ws_ref);
    EXPECT(arena.live == 0 && arena.used == 0);
    free(P); free(G); free(x); free(y); free(dy); free(y0); free(dx0); free(dx);
}

static void test_config_parse(void)
{
    struct nn_gpt_config c;
    char err[160];
    EXPECT(nn_gpt_config_parse("layers=8,hidden=1024,heads=16,seq=128,vocab=50257", &c, err,
                               sizeof(err)) == 0);
    EXPECT(c.layers == 8 && c.hidden == 1024 && c.heads == 16 && c.seq == 128 &&
           c.vocab == 50257 && c.ffn == 4096);
    EXPECT(nn_gpt_config_parse("gpt-13b,layers=4", &c, err, sizeof(err)) == 0);
    EXPECT(c.layers == 4 && c.hidden == 5120 && c.heads == 40 && c.ffn == 20480);
    EXPECT(nn_gpt_config_parse("gpt-tiny", &c, err, sizeof(err)) == 0 && !strcmp(c.name, "gpt-tiny"));
    EXPECT(nn_gpt_config_parse("layers=2,hidden=64,heads=4,seq=8,vocab=10,ffn=100", &c, err,
                               sizeof(err)) == 0 && c.ffn == 100);
    const struct { const char *spec, *needle; } bad[] = {
        {"layers=8,hidden=1024,heads=16,seq=128,vocb=5", "'vocb'"},
        {"layers=8,hidden=1024,heads=16,seq=128", "'vocab' missing"},
        {"layers=x,hidden=1024,heads=16,seq=128,vocab=5", "layers=x"},
        {"layers=8,hidden=-4,heads=16,seq=128,vocab=5", "hidden=-4"},
        {"layers=8,hidden=1000,heads=16,seq=128,vocab=5", "heads=16"},
        {"layers=8,layers=9,hidden=1024,heads=16,seq=128,vocab=5", "'layers' given twice"},
        {"layers=99999999999,hidden=1024,heads=16,seq=128,vocab=5", "layers=99999999999"},
        {"gpt-huge,layers=2", "gpt-huge"},
        {"", "empty"},
        {"layers=2,,hidden=3", "empty"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        int rc = nn_gpt_config_parse(bad[i].spec, &c, err, sizeof(err));
        EXPECT(rc == -1 && strstr(err, bad[i].needle) != NULL);
        if (rc != -1 || !strstr(err, bad[i].needle))
            fprintf(stderr, "  spec '%s': '%s'\n", bad[i].spec, err);
    }
}

int main(void)
{
    test_partial_recompute(1);
    test_partial_recompute(0);
    test_fp16_present_untouched();
    test_head_release();
    test_bind_and_alloc();
    test_config_parse();
    return TEST_EXIT();
}
