/* The layer object: allocation of parameters, gradients and saved
 * activations in their storage types, drop-and-recompute, and the
 * embedding layer (the blocks are in block.c, the head in head.c). */
#include "layer_internal.h"

#include <stdlib.h>
#include <string.h>

static void *default_alloc(void *ctx, size_t bytes)
{
    (void)ctx;
    return aligned_alloc(64, bytes ? bytes : 64);
}

static void default_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

struct nn_alloc nn_alloc_default(void) { return (struct nn_alloc){default_alloc, default_free, NULL}; }

/* Zeroed memory of bytes (rounded up to 64) from allocator a. */
static void *zalloc(const struct nn_alloc *a, size_t bytes)
{
    size_t r = (bytes + 63) / 64 * 64;
    void *p = a->alloc(a->ctx, r ? r : 64);
    if (p)
        memset(p, 0, r ? r : 64);
    return p;
}

struct nn_workspace *nn_workspace_new(const struct nn_gpt_config *c, int B)
{
    return nn_workspace_new_alloc(c, B, NULL);
}

#define NN_WS_BUFS 18
/* Elements of each workspace buffer, in the order of ws_bufs(). */
static void ws_elems(const struct nn_gpt_config *c, int B, size_t n[NN_WS_BUFS])
{
    size_t H = (size_t)c->hidden, F = (size_t)c->ffn, S = (size_t)c->seq, A = (size_t)c->heads;
    size_t V = (size_t)c->vocab, M = (size_t)B * S, pmax = 0;
    for (int i = 0; i < 3; i++) {
        struct nn_layer_account a;
        struct nn_precision p = {NN_F32, NN_F32, NN_F32};
        nn_gpt_layer_account(c, B, p, i == 0 ? 0 : i == 1 ? 1 : c->layers + 1, &a);
        pmax = a.params > pmax ? a.params : pmax;
    }
    size_t wide = F > 3 * H ? F : 3 * H;
    const size_t e[NN_WS_BUFS] = {pmax, pmax, M * H, M * 3 * H, (size_t)B * A * S * S, M * H,
                                  M * H, M * H, M * H, M * F, M * F, M * V, M * H, M * H, M * H,
                                  M * wide, A * S * S /* every head's dP: attn_batched.c */,
                                  M * H};
    memcpy(n, e, sizeof(e));
}

static void ws_bufs(struct nn_workspace *w, float **all[NN_WS_BUFS])
{
    float **b[NN_WS_BUFS] = {&w->W, &w->G, &w->y, &w->qkv, &w->probs, &w->att, &w->x1, &w->xhat1,
                             &w->xhat2, &w->h1, &w->gl, &w->logits, &w->d1, &w->d2, &w->d3,
                             &w->db, &w->scr, &w->out};
    memcpy(all, b, sizeof(b));
}

void nn_workspace_set_progress(struct nn_workspace *ws, void (*fn)(void *ctx), void *ctx)
{
    ws->progress = fn;
    ws->progress_ctx = ctx;
}

size_t nn_workspace_bytes(const struct nn_gpt_config *c, int B)
{
    size_t n[NN_WS_BUFS], total = 0;
    ws_elems(c, B, n);
    for (int i = 0; i < NN_WS_BUFS; i++)
        total += (n[i] * sizeof(float) + 63) / 64 * 64;
    return total;
}

struct nn_workspace *nn_workspace_new_alloc(const struct nn_gpt_config *c, int B,
                                            const struct nn_alloc *a)
{
    struct nn_workspace *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->alloc = a ? *a : nn_alloc_default();
    w->H = (size_t)c->hidden; w->F = (size_t)c->ffn; w->S = (size_t)c->seq;
    w->A = (size_t)c->heads; w->V = (size_t)c->vocab; w->M = (size_t)B * w->S;
    size_t n[NN_WS_BUFS];
    float **all[NN_WS_BUFS];
    ws_elems(c, B, n);
    ws_bufs(w, all);
    for (int i = 0; i < NN_WS_BUFS; i++)
        if (!(*all[i] = zalloc(&w->alloc, n[i] * sizeof(float)))) {
            nn_workspace_free(w);
            return NULL;
        }
    return w;
}

void nn_workspace_free(struct nn_workspace *w)
{
    if (!w)
        return;
    float **all[NN_WS_BUFS];
    ws_bufs(w, all);
    for (int i = 0; i < NN_WS_BUFS; i++)
        if (*all[i])
            w->alloc.free(w->alloc.ctx, *all[i]);
    free(w);
}

void *nn_layer_alloc(struct nn_layer *l, size_t bytes) { return zalloc(&l->alloc, bytes); }

/* A tensor of the layer: a view of memory from its allocator (own: where
 * the allocation is remembered; NULL own: shape only, memory bound later). */
static int tensor_new(struct nn_layer *l, struct nn_tensor *t, void **own, enum nn_dtype dt,
                      int ndim, const size_t *shape)
{
    *t = nn_tensor_view(NULL, dt, NN_HOST, ndim, shape);
    if (!own)
        return 0;
    t->data = *own = nn_layer_alloc(l, nn_tensor_bytes(t));
    return t->data ? 0 : -1;
}

static int alloc1(struct nn_layer *l, struct nn_tensor *t, void **own, enum nn_dtype dt,
                  size_t rows, size_t cols)
{
    size_t shape[2] = {rows, cols};
    return tensor_new(l, t, own, dt, cols ? 2 : 1, shape);
}

static int add_intra(struct nn_layer *l, enum nn_dtype dt, size_t rows, size_t cols, float *ws)
{
    int i = l->nintra++;
    l->wsbuf[i] = ws;
    return alloc1(l, &l->intra[i], l->bind_intra ? NULL : &l->own_intra[i], dt, rows, cols);
}

/* GPT-2 initialisation of a block or head parameter vector. */
static void init_params(struct nn_layer *l, uint64_t seed)
{
    struct nn_rng r;
    nn_rng_seed(&r, seed * 1000003u + (uint64_t)l->index);
    size_t n = l->params.numel, H = (size_t)l->cfg.hidden, F = (size_t)l->cfg.ffn;
    float *p = calloc(n ? n : 1, sizeof(float));
    if (!p)
        return;
    nn_normal_f32(p, n, 0.02, &r);
    if (l->kind == NN_LAYER_BLOCK) {
        /* offsets as in block.c: ln1 g,b | Wqkv bqkv | Wo bo | ln2 g,b | W1 b1 | W2 b2 */
        size_t o = 0;
        for (size_t c = 0; c < H; c++) { p[c] = 1; p[H + c] = 0; }
        o = 2 * H + 3 * H * H;
        memset(p + o, 0, 3 * H * sizeof(float));
        o += 3 * H + H * H;
        memset(p + o, 0, H * sizeof(float));
        o += H;
        for (size_t c = 0; c < H; c++) { p[o + c] = 1; p[o + H + c] = 0; }
        o += 2 * H + H * F;
        memset(p + o, 0, F * sizeof(float));
        o += F + F * H;
        memset(p + o, 0, H * sizeof(float));
    } else if (l->kind == NN_LAYER_HEAD) {
        for (size_t c = 0; c < H; c++) { p[c] = 1; p[H + c] = 0; }
    }
    nn_store_f32(l->params.data, l->params.dtype, p, n);
    free(p);
}

struct nn_layer *nn_layer_new(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                              int index, uint64_t seed, struct nn_workspace *ws)
{
    return nn_layer_new_alloc(cfg, B, prec, index, seed, ws, NULL, 0);
}

void nn_layer_init_params(struct nn_layer *l, uint64_t seed)
{
    if (!l->params.data)
        return;
    if (l->kind == NN_LAYER_EMBED) {
        struct nn_rng r;
        nn_rng_seed(&r, seed * 1000003u);
        nn_fill_normal(l->params.data, l->prec.param, l->params.numel, 0.02, &r);
    } else {
        init_params(l, seed);
    }
}

struct nn_layer *nn_layer_new_alloc(const struct nn_gpt_config *cfg, int B,
                                    struct nn_precision prec, int index, uint64_t seed,
                                    struct nn_workspace *ws, const struct nn_alloc *alloc,
                                    unsigned flags)
{
    if (index < 0 || index > cfg->layers + 1 || cfg->hidden % cfg->heads)
        return NULL;
    struct nn_layer *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    struct nn_layer_account a;
    nn_gpt_layer_account(cfg, B, prec, index, &a);
    l->kind = a.kind;
    l->cfg = *cfg;
    l->B = B;
    l->index = index;
    l->prec = prec;
    l->ws = ws;
    l->alloc = alloc ? *alloc : nn_alloc_default();
    l->bind_intra = (flags & NN_LAYER_BIND_INTRA) != 0;
    const char *ref = getenv("MB_NN_REFERENCE");
    l->fused = !(ref && ref[0] == '1');
    size_t M = (size_t)B * (size_t)cfg->seq, H = (size_t)cfg->hidden, F = (size_t)cfg->ffn;
    size_t S = (size_t)cfg->seq, A = (size_t)cfg->heads, V = (size_t)cfg->vocab;
    int rc = alloc1(l, &l->params, flags & NN_LAYER_BIND_PARAMS ? NULL : &l->own_params,
                    prec.param, a.params, 0) |
             alloc1(l, &l->grads, flags & NN_LAYER_BIND_GRADS ? NULL : &l->own_grads, prec.grad,
                    a.params, 0);
    switch (l->kind) {
    case NN_LAYER_EMBED:
        rc |= alloc1(l, &l->inter, &l->own_inter, NN_I32, M, 0);
        break;
    case NN_LAYER_BLOCK:
        rc |= alloc1(l, &l->inter, flags & NN_LAYER_BIND_INTER ? NULL : &l->own_inter, prec.act, M, H);
        rc |= add_intra(l, prec.act, M, H, ws->xhat1);
        rc |= add_intra(l, NN_F32, M, 0, NULL); /* rstd1 */
        rc |= add_intra(l, prec.act, M, 3 * H, ws->qkv);
        {
            size_t shape[4] = {(size_t)B, A, S, S};
            int i = l->nintra++;
            l->wsbuf[i] = ws->probs;
            rc |= tensor_new(l, &l->intra[i], l->bind_intra ? NULL : &l->own_intra[i], prec.act, 4, shape);
        }
        rc |= add_intra(l, prec.act, M, H, ws->att);
        rc |= add_intra(l, prec.act, M, H, ws->xhat2);
        rc |= add_intra(l, NN_F32, M, 0, NULL); /* rstd2 */
        rc |= add_intra(l, prec.act, M, F, ws->h1);
        rc |= add_intra(l, prec.act, M, F, ws->gl);
        break;
    case NN_LAYER_HEAD:
        rc |= alloc1(l, &l->inter, flags & NN_LAYER_BIND_INTER ? NULL : &l->own_inter, prec.act, M, H);
        rc |= add_intra(l, prec.act, M, H, ws->xhat1);
        rc |= add_intra(l, NN_F32, M, 0, NULL); /* rstd */
        rc |= add_intra(l, prec.act, M, V, ws->logits);
        rc |= alloc1(l, &l->aux, &l->own_aux, NN_I32, M, 0); /* targets, kept with the input */
        break;
    case NN_LAYER_SAGE:
        rc = -1;
        break;
    }
    l->live = 1;
    for (int i = 0; i < l->nintra; i++)
        l->present[i] = 1;
    if (rc) {
        nn_layer_free(l);
        return NULL;
    }
    nn_layer_init_params(l, seed);
    return l;
}

void nn_layer_free(struct nn_layer *l)
{
    if (!l)
        return;
    void *own[4 + NN_MAX_INTRA] = {l->own_params, l->own_grads, l->own_inter, l->own_aux};
    for (int i = 0; i < l->nintra; i++)
        own[4 + i] = l->own_intra[i];
    for (int i = 0; i < 4 + NN_MAX_INTRA; i++)
        if (own[i])
            l->alloc.free(l->alloc.ctx, own[i]);
    free(l);
}

enum nn_layer_kind nn_layer_kind(const struct nn_layer *l) { return l->kind; }
struct nn_tensor *nn_layer_params(struct nn_layer *l) { return &l->params; }
struct nn_tensor *nn_layer_grads(struct nn_layer *l) { return &l->grads; }
struct nn_tensor *nn_layer_act_inter(struct nn_layer *l) { return &l->inter; }

size_t nn_layer_act_intra(struct nn_layer *l, struct nn_tensor **out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < l->nintra && n < max; i++)
        out[n++] = &l->intra[i];
    return (size_t)l->nintra;
}

void nn_layer_account(const struct nn_layer *l, struct nn_layer_account *out)
{
    nn_gpt_layer_account(&l->cfg, l->B, l->prec, l->index, out);
}

/* bind: the tensor becomes mem; the own allocation, if any, goes back */
static int bind(struct nn_layer *l, struct nn_tensor *t, void **own, void *mem)
{
    if (!mem)
        return -1;
    if (*own && *own != mem)
        l->alloc.free(l->alloc.ctx, *own);
    if (*own != mem)
        *own = NULL;
    t->data = mem;
    return 0;
}

int nn_layer_bind_params(struct nn_layer *l, void *mem) { return bind(l, &l->params, &l->own_params, mem); }
int nn_layer_bind_grads(struct nn_layer *l, void *mem) { return bind(l, &l->grads, &l->own_grads, mem); }
int nn_layer_bind_inter(struct nn_layer *l, void *mem) { return bind(l, &l->inter, &l->own_inter, mem); }

float *nn_act(struct nn_layer *l, int i)
{
    if (l->redirect[i])
        return l->redirect[i];
    struct nn_tensor *t = &l->intra[i];
    return t->dtype == NN_F32 || !l->wsbuf[i] ? (float *)t->data : l->wsbuf[i];
}

void nn_act_save(struct nn_layer *l)
{
    for (int i = 0; i < l->nintra; i++)
        if (!(l->redo && l->present[i]) && l->intra[i].dtype != NN_F32 && l->intra[i].dtype != NN_I32 && l->wsbuf[i])
            nn_store_f32(l->intra[i].data, l->intra[i].dtype, l->wsbuf[i], l->intra[i].numel);
}

void nn_act_load(struct nn_layer *l)
{
    for (int i = 0; i < l->nintra; i++)
        if (l->present[i] && l->intra[i].dtype != NN_F32 && l->intra[i].dtype != NN_I32 && l->wsbuf[i])
            nn_load_f32(l->wsbuf[i], l->intra[i].data, l->intra[i].dtype, l->intra[i].numel);
}

float *nn_weights(struct nn_layer *l)
{
    if (l->params.dtype == NN_F32)
        return l->params.data;
    nn_load_f32(l->ws->W, l->params.data, l->params.dtype, l->params.numel);
    return l->ws->W;
}

void nn_layer_drop_intra(struct nn_layer *l)
{
    for (int i = 0; i < l->nintra; i++) {
        if (l->own_intra[i])
            l->alloc.free(l->alloc.ctx, l->own_intra[i]);
        l->own_intra[i] = NULL;
        l->intra[i].data = NULL;
        l->present[i] = 0;
    }
    l->live = l->nintra == 0;
}

int nn_layer_intra_live(const struct nn_layer *l) { return l->live; }

void nn_layer_set_fused(struct nn_layer *l, int fused) { l->fused = fused != 0; }

void nn_layer_set_recompute_whole(struct nn_layer *l, int whole) { l->recompute_whole = whole != 0; }

void nn_layer_zero_grad(struct nn_layer *l)
{
    if (l->grads.data)
        memset(l->grads.data, 0, nn_tensor_bytes(&l->grads));
}

/* Before a forward: every intra tensor has memory; all are written. */
static int revive(struct nn_layer *l)
{
    if (nn_layer_intra_home(l) != 0)
        return -1;
    for (int i = 0; i < l->nintra; i++)
        l->present[i] = 1;
    l->live = 1;
    return 0;
}

/* ---- embedding: x[r] = wte[token[r]] + wpe[r mod S] ------------------- */

static int embed_forward(struct nn_layer *l, const int32_t *tok, float *out)
{
    size_t M = l->inter.numel, H = (size_t)l->cfg.hidden, S = (size_t)l->cfg.seq;
    const float *W = nn_weights(l), *wpe = W + (size_t)l->cfg.vocab * H;
    memcpy(l->inter.data, tok, M * sizeof(int32_t));
    for (size_t r = 0; r < M; r++) {
        if (tok[r] < 0 || tok[r] >= l->cfg.vocab)
            return -1;
        const float *e = W + (size_t)tok[r] * H, *p = wpe + (r % S) * H;
        for (size_t c = 0; c < H; c++)
            out[r * H + c] = e[c] + p[c];
    }
    return 0;
}

static int embed_backward(struct nn_layer *l, const float *dout)
{
    size_t M = l->inter.numel, H = (size_t)l->cfg.hidden, S = (size_t)l->cfg.seq;
    const int32_t *tok = l->inter.data;
    float *G = l->ws->G, *gpe = G + (size_t)l->cfg.vocab * H;
    memset(G, 0, l->grads.numel * sizeof(float));
    for (size_t r = 0; r < M; r++) /* serial: a deterministic scatter-add */
        for (size_t c = 0; c < H; c++) {
            G[(size_t)tok[r] * H + c] += dout[r * H + c];
            gpe[(r % S) * H + c] += dout[r * H + c];
        }
    nn_accum_f32(l->grads.data, l->grads.dtype, G, l->grads.numel);
    return 0;
}

/* ---- dispatch -------------------------------------------------------- */

int nn_layer_forward(struct nn_layer *l, const void *in, float *out)
{
    if (!l->params.data)
        return -1;
    switch (l->kind) {
    case NN_LAYER_EMBED: return embed_forward(l, in, out);
    case NN_LAYER_BLOCK:
        if (!l->live && revive(l) != 0)
            return -1;
        return nn_block_forward(l, in, out);
    default: return -1;
    }
}

int nn_layer_forward_head(struct nn_layer *l, const float *in, const int32_t *targets, double *loss)
{
    if (l->kind != NN_LAYER_HEAD || !l->params.data || (!l->live && revive(l) != 0))
        return -1;
    return nn_head_forward(l, in, targets, loss);
}

int nn_layer_backward(struct nn_layer *l, const float *dout, float *din)
{
    if (!l->params.data || !l->grads.data || (!l->live && nn_layer_recompute(l) != 0))
        return -1;
    switch (l->kind) {
    case NN_LAYER_EMBED: return embed_backward(l, dout);
    case NN_LAYER_BLOCK: return nn_block_backward(l, dout, din);
    case NN_LAYER_HEAD: return nn_head_backward(l, din);
    default: return -1;
    }
}
