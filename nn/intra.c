/* Intra-block activations one at a time: their bytes and the FLOPs that
 * rebuild them, release and attach (swapping a tensor out and in without
 * free or realloc), and the partial recompute that reruns only the
 * forward steps the released tensors need, writing nothing over the
 * tensors that stayed (Ratel swaps some activations and recomputes the
 * rest, per operator). */
#include "layer_internal.h"

#include <string.h>

static const char *const block_names[] = {"xhat1", "rstd1", "qkv", "probs", "att",
                                          "xhat2", "rstd2", "h1", "gl"};
static const char *const head_names[] = {"xhat", "rstd", "probs"};
/* block_fused.c's step that writes each block tensor */
static const int block_step[] = {0, 0, 1, 2, 2, 3, 3, 4, 4};

/* Forward FLOPs of tensor i's own share of its step (GEMMs only) and its
 * bytes, for layer `layer` of cfg: layer.c allocates these shapes. */
static int intra_closed_form(const struct nn_gpt_config *c, int B, struct nn_precision prec,
                             int layer, int i, uint64_t *bytes, double *flops)
{
    uint64_t M = (uint64_t)B * (uint64_t)c->seq, H = (uint64_t)c->hidden, F = (uint64_t)c->ffn;
    uint64_t S = (uint64_t)c->seq, A = (uint64_t)c->heads, ea = nn_dtype_size(prec.act);
    double m = (double)M, h = (double)H, f = (double)F, s = (double)S;
    uint64_t b = 0;
    double fl = 0;
    if (layer == c->layers + 1) {
        const uint64_t hb[3] = {ea * M * H, 4 * M, ea * M * (uint64_t)c->vocab};
        if (i < 0 || i >= 3)
            return -1;
        b = hb[i];
        fl = i == 2 ? 2 * m * h * c->vocab : 0;
    } else if (layer >= 1 && layer <= c->layers) {
        const uint64_t bb[9] = {ea * M * H, 4 * M, ea * M * 3 * H, ea * (uint64_t)B * A * S * S,
                                ea * M * H, ea * M * H, 4 * M, ea * M * F, ea * M * F};
        const double bf[9] = {0, 0, 2 * m * h * 3 * h, /* scores = Q K^T */ 2 * m * s * h,
                              /* P V */ 2 * m * s * h, /* x1 = x + att Wo */ 2 * m * h * h, 0,
                              2 * m * h * f, 0};
        if (i < 0 || i >= 9)
            return -1;
        b = bb[i];
        fl = bf[i];
    } else {
        return -1; /* the embedding keeps no intra tensors */
    }
    if (bytes)
        *bytes = b;
    if (flops)
        *flops = fl;
    return 0;
}

static double tensor_flops(const struct nn_layer *l, int i)
{
    double fl = 0;
    intra_closed_form(&l->cfg, l->B, l->prec, l->index, i, NULL, &fl);
    return fl;
}

int nn_gpt_intra_count(const struct nn_gpt_config *cfg, int layer)
{
    return layer == cfg->layers + 1 ? 3 : layer >= 1 && layer <= cfg->layers ? 9 : 0;
}

int nn_gpt_intra_account(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         int layer, int i, uint64_t *bytes, double *flops)
{
    return intra_closed_form(cfg, B, prec, layer, i, bytes, flops);
}

int nn_layer_intra_account(const struct nn_layer *l, int i, uint64_t *bytes, double *flops)
{
    if (i < 0 || i >= l->nintra)
        return -1;
    return intra_closed_form(&l->cfg, l->B, l->prec, l->index, i, bytes, flops);
}

const char *nn_layer_intra_name(const struct nn_layer *l, int i)
{
    if (i < 0 || i >= l->nintra)
        return NULL;
    return l->kind == NN_LAYER_HEAD ? head_names[i] : block_names[i];
}

static void update_live(struct nn_layer *l)
{
    l->live = 1;
    for (int i = 0; i < l->nintra; i++)
        l->live &= l->present[i];
}

void *nn_layer_intra_release(struct nn_layer *l, int i)
{
    if (i < 0 || i >= l->nintra || !l->present[i])
        return NULL;
    void *mem = l->intra[i].data;
    l->present[i] = 0;
    l->intra[i].data = NULL;
    l->live = 0;
    return mem;
}

int nn_layer_intra_attach(struct nn_layer *l, int i, void *mem, int valid)
{
    if (i < 0 || i >= l->nintra)
        return -1;
    if (!mem) {
        if (!l->own_intra[i] &&
            !(l->own_intra[i] = nn_layer_alloc(l, nn_tensor_bytes(&l->intra[i]))))
            return -1;
        mem = l->own_intra[i];
    }
    l->intra[i].data = mem;
    l->present[i] = valid != 0;
    update_live(l);
    return 0;
}

int nn_layer_intra_present(const struct nn_layer *l, int i)
{
    return i >= 0 && i < l->nintra && l->present[i];
}

int nn_layer_intra_home(struct nn_layer *l)
{
    for (int i = 0; i < l->nintra; i++)
        if (!l->intra[i].data && nn_layer_intra_attach(l, i, NULL, 0) != 0)
            return -1;
    return 0;
}

/* The fused block's steps that rebuild the absent tensors: a step reruns
 * when it writes one, or when a rerun step needs its output and that
 * output is absent (steps 1 and 4 read the y that steps 0 and 3 leave in
 * the workspace, so they always pull them in). */
static unsigned block_steps_needed(const struct nn_layer *l)
{
    const int *p = l->present;
    unsigned s = 0;
    if (!p[NN_H1] || !p[NN_GL])
        s |= 1u << 4 | 1u << 3;
    if (!p[NN_XHAT2] || !p[NN_RSTD2])
        s |= 1u << 3;
    if (!p[NN_PROBS] || !p[NN_ATT] || ((s & 1u << 3) && !p[NN_ATT]))
        s |= 1u << 2;
    if (!p[NN_QKV])
        s |= 1u << 1 | 1u << 0;
    if (!p[NN_XHAT1] || !p[NN_RSTD1])
        s |= 1u << 0;
    return s;
}

static int partial_path(const struct nn_layer *l)
{
    return l->kind == NN_LAYER_BLOCK && l->fused;
}

double nn_layer_recompute_flops(const struct nn_layer *l)
{
    if (l->live || l->kind == NN_LAYER_EMBED)
        return 0;
    if (!partial_path(l) || l->recompute_whole) { /* the whole forward again */
        struct nn_layer_account a;
        nn_layer_account(l, &a);
        return a.flops_fwd;
    }
    unsigned steps = block_steps_needed(l);
    double f = 0;
    for (int i = 0; i < l->nintra; i++)
        if (steps & 1u << block_step[i])
            f += tensor_flops(l, i);
    return f;
}

int nn_layer_recompute(struct nn_layer *l)
{
    if (l->kind == NN_LAYER_EMBED) { /* nothing intra to rebuild */
        l->live = 1;
        return 0;
    }
    if (nn_layer_intra_home(l) != 0)
        return -1;
    struct nn_workspace *w = l->ws;
    int partial = partial_path(l);
    unsigned steps = partial && !l->recompute_whole ? block_steps_needed(l) : NN_BLOCK_ALL_STEPS;
    /* present inputs of the rerun steps in their fp32 working copies */
    nn_act_load(l);
    /* a rerun step writes its present outputs to scratch, not over them
     * (with fp16 storage the recomputed values may differ in the last
     * bit from what was saved, and a swapped-in tensor must stay as is) */
    float *rstd_scratch[2] = {w->d1, w->d2};
    int nr = 0;
    for (int i = 0; i < l->nintra; i++) {
        int reruns = !partial || (steps & 1u << block_step[i]);
        if (l->present[i] && reruns && (l->intra[i].dtype == NN_F32 || !l->wsbuf[i]))
            l->redirect[i] = l->wsbuf[i] ? l->wsbuf[i] : rstd_scratch[nr++];
    }
    /* the input, from its saved copy, in scratch the forward does not use */
    float *x = w->d3;
    nn_load_f32(x, l->inter.data, l->inter.dtype, l->inter.numel);
    l->redo = 1;
    int rc;
    if (partial) {
        rc = nn_block_forward_steps(l, x, w->out, steps);
    } else if (l->kind == NN_LAYER_BLOCK) {
        rc = nn_block_forward(l, x, w->out);
    } else {
        double loss;
        rc = nn_head_forward(l, x, l->aux.data, &loss);
    }
    l->redo = 0;
    memset(l->redirect, 0, sizeof(l->redirect));
    if (rc != 0)
        return -1;
    for (int i = 0; i < l->nintra; i++)
        l->present[i] = 1;
    l->live = 1;
    return 0;
}
