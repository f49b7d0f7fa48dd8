/* A worker's model and the run around it: every layer of the GPT with its
 * parameters bound to a padded full-size fp32 buffer (the gather's
 * target; own shard at off), its gradient, fixed-point sums and reduced
 * shard, and the shard's fp32 master copy with Adam's moments. */
#include "zero.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct nn_precision PREC = {NN_F32, NN_F32, NN_F32};

int zero_micro_per_worker(const struct zero_opts *o)
{
    long long per = (long long)o->micro * o->lay.W;
    if (o->micro < 1 || o->lay.W < 1 || o->batch % per != 0)
        return 0;
    return (int)(o->batch / per);
}

float zero_grad_scale(const struct zero_opts *o)
{
    double s = (double)o->micro / (double)o->batch; /* the mean over micro-batches */
    if (o->agg == ZERO_AGG_FIXED)
        s = ldexp(s, -ZERO_FIXED_FRAC_BITS);
    return (float)s;
}

void zero_note_layer(struct zero_run *z, int layer)
{
    if (z->on_layer)
        z->on_layer(z->span_ctx, layer);
}

void zero_span(struct zero_run *z, const char *lane, const char *name, double start, double end)
{
    if (z->on_span)
        z->on_span(z->span_ctx, lane, name, start, end);
}

void zero_tokens(const struct zero_opts *o, long long step, int g, int32_t *tok, int32_t *tgt)
{
    size_t M = (size_t)o->micro * (size_t)o->cfg.seq;
    struct nn_rng r;
    nn_rng_seed(&r, mb_mix64(o->seed ^ mb_mix64(((uint64_t)step << 24) ^ (uint64_t)g)));
    for (size_t i = 0; i < M; i++) {
        tok[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)o->cfg.vocab);
        tgt[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)o->cfg.vocab);
    }
}

static size_t shard_elems(const struct zero_opts *o, int i, size_t *numel)
{
    struct nn_layer_account a;
    nn_gpt_layer_account(&o->cfg, o->micro, PREC, i, &a);
    size_t off, n;
    *numel = a.params;
    return nn_shard_range(a.params, 0, o->lay.W, &off, &n);
}

uint64_t zero_wire_param_bytes(const struct zero_opts *o)
{
    uint64_t s = 0;
    size_t numel;
    for (int i = 0; i < o->cfg.layers + 2; i++)
        s += (uint64_t)o->lay.W * shard_elems(o, i, &numel) * 4;
    return s;
}

uint64_t zero_worker_bytes(const struct zero_opts *o)
{
    uint64_t b = nn_workspace_bytes(&o->cfg, o->micro);
    uint64_t M = (uint64_t)o->micro * (uint64_t)o->cfg.seq;
    b += 4 * M * (uint64_t)o->cfg.hidden * 4 + 2 * M * 4; /* hidden states, tokens */
    for (int i = 0; i < o->cfg.layers + 2; i++) {
        size_t numel, S = shard_elems(o, i, &numel);
        struct nn_layer_account a;
        nn_gpt_layer_account(&o->cfg, o->micro, PREC, i, &a);
        uint64_t full = (uint64_t)o->lay.W * S * 4;
        b += full * (o->agg == ZERO_AGG_FIXED ? 3 : 2); /* parameters, gradient, fixed sums */
        b += (uint64_t)S * 4 * 4;                         /* reduced shard, master, m, v */
        b += a.act_inter_bytes + a.act_intra_bytes;
    }
    return b;
}

static int layer_init(struct zero_run *z, int i, char *err, size_t len)
{
    struct zero_layer *ly = &z->layer[i];
    int W = z->o.lay.W;
    ly->l = nn_layer_new_alloc(&z->o.cfg, z->o.micro, PREC, i, z->o.seed, z->ws, NULL,
                               NN_LAYER_BIND_PARAMS | NN_LAYER_BIND_GRADS);
    if (!ly->l)
        return snprintf(err, len, "out of memory: layer %d", i), -1;
    ly->numel = nn_layer_params(ly->l)->numel;
    ly->S = nn_layer_shard(ly->l, z->index, W, &ly->off, &ly->n);
    size_t full = (size_t)W * ly->S;
    ly->full = calloc(full, 4);
    ly->grad = calloc(full, 4);
    ly->red = calloc(ly->S ? ly->S : 1, 4);
    ly->master = calloc(ly->S ? ly->S : 1, 4);
    ly->m = calloc(ly->S ? ly->S : 1, 4);
    ly->v = calloc(ly->S ? ly->S : 1, 4);
    if (z->o.agg == ZERO_AGG_FIXED)
        ly->acc = calloc(full, 4);
    if (!ly->full || !ly->grad || !ly->red || !ly->master || !ly->m || !ly->v ||
        (z->o.agg == ZERO_AGG_FIXED && !ly->acc))
        return snprintf(err, len, "out of memory: layer %d's buffers", i), -1;
    if (nn_layer_bind_params(ly->l, ly->full) != 0 || nn_layer_bind_grads(ly->l, ly->grad) != 0)
        return snprintf(err, len, "layer %d: binding its parameters failed", i), -1;
    /* every worker draws the whole layer from the seed (as a single rank
     * would) and keeps its shard; the padding stays zero */
    nn_layer_init_params(ly->l, z->o.seed);
    memcpy(ly->master, ly->full + ly->off, ly->n * 4);
    return 0;
}

static int worker_init(struct zero_run *z, char *err, size_t len)
{
    const struct nn_gpt_config *cfg = &z->o.cfg;
    size_t M = (size_t)z->o.micro * (size_t)cfg->seq;
    z->L = cfg->layers + 2;
    z->ws = nn_workspace_new(cfg, z->o.micro);
    z->layer = calloc((size_t)z->L, sizeof(*z->layer));
    z->tok = malloc(M * 4);
    z->tgt = malloc(M * 4);
    for (int k = 0; k < 2; k++) {
        z->h[k] = malloc(M * (size_t)cfg->hidden * 4);
        z->dh[k] = malloc(M * (size_t)cfg->hidden * 4);
        if (!z->h[k] || !z->dh[k])
            return snprintf(err, len, "out of memory: hidden states"), -1;
    }
    if (!z->ws || !z->layer || !z->tok || !z->tgt)
        return snprintf(err, len, "out of memory: the worker's model"), -1;
    for (int i = 0; i < z->L; i++)
        if (layer_init(z, i, err, len) != 0)
            return -1;
    if (zero_checksum_alloc(z, err, len) != 0)
        return -1;
    if (!(z->coll = mb_coll_ctx_create(z->workers, 0, err, len)))
        return -1;
    if (!(z->cc = zero_comm_new(z, err, len)))
        return -1;
    return 0;
}

struct zero_run *zero_run_new(const struct zero_opts *o, const struct zero_mode_ops *mode, MPI_Comm comm,
                              char *err, size_t len)
{
    struct zero_run *z = calloc(1, sizeof(*z));
    if (!z)
        return snprintf(err, len, "out of memory: the run"), NULL;
    z->o = *o;
    z->mode = mode;
    z->workers = MPI_COMM_NULL;
    MPI_Comm_dup(comm, &z->comm);
    MPI_Comm_rank(z->comm, &z->rank);
    MPI_Comm_size(z->comm, &z->nranks);
    z->role = zero_role_of(&o->lay, z->rank, &z->index);
    MPI_Comm_split(z->comm, z->role == ZERO_WORKER ? 0 : MPI_UNDEFINED, z->rank, &z->workers);
    int bad = 0;
    /* mb_coll_ctx_create is collective over the workers: a failure before
     * it on one worker must not leave the others waiting, so every worker
     * reaches it (its own failure is then agreed below). */
    if (z->role == ZERO_WORKER)
        bad = worker_init(z, err, len) != 0;
    if (!bad && mode->setup)
        bad = mode->setup(z, err, len) != 0;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, z->comm);
    if (any) {
        if (!bad)
            snprintf(err, len, "set-up failed on another rank");
        zero_run_free(z);
        return NULL;
    }
    return z;
}

int zero_run_step(struct zero_run *z, char *err, size_t len)
{
    double t0 = mb_now(), cpu0 = mb_cpu_s(1);
    if (z->role == ZERO_WORKER)
        for (int i = 0; i < z->L; i++) { /* the step's sums start from zero */
            struct zero_layer *ly = &z->layer[i];
            memset(ly->grad, 0, (size_t)z->o.lay.W * ly->S * 4);
            if (ly->acc)
                memset(ly->acc, 0, (size_t)z->o.lay.W * ly->S * 4);
        }
    int rc = z->mode->step(z, err, len);
    double t1 = mb_now();
    z->step++;
    z->st.steps++;
    z->st.step_s += t1 - t0;
    z->st.cpu_s += mb_cpu_s(1) - cpu0;
    if (z->cc)
        z->st.sent_bytes = zero_comm_sent(z->cc);
    zero_span(z, "step", "step", t0, t1);
    return rc;
}

void zero_run_free(struct zero_run *z)
{
    if (!z)
        return;
    if (z->mode && z->mode->teardown)
        z->mode->teardown(z);
    zero_comm_free(z->cc);
    if (z->coll)
        mb_coll_ctx_free(z->coll);
    for (int i = 0; z->layer && i < z->L; i++) {
        struct zero_layer *ly = &z->layer[i];
        if (ly->l)
            nn_layer_free(ly->l);
        free(ly->full), free(ly->grad), free(ly->acc), free(ly->red);
        free(ly->master), free(ly->m), free(ly->v);
        free(ly->sum_send), free(ly->sum_recv);
    }
    free(z->layer);
    if (z->ws)
        nn_workspace_free(z->ws);
    for (int k = 0; k < 2; k++)
        free(z->h[k]), free(z->dh[k]);
    free(z->tok), free(z->tgt);
    if (z->workers != MPI_COMM_NULL)
        MPI_Comm_free(&z->workers);
    MPI_Comm_free(&z->comm);
    free(z);
}

/* ---- one micro-batch ----------------------------------------------------- */

static int fwd(struct zero_run *z, int i, const void *in, float *out, double *loss)
{
    double t0 = mb_now();
    int rc = i == z->L - 1 ? nn_layer_forward_head(z->layer[i].l, in, z->tgt, loss)
                           : nn_layer_forward(z->layer[i].l, in, out);
    double t1 = mb_now();
    z->st.compute_s += t1 - t0;
    zero_span(z, "compute", "forward", t0, t1);
    return rc;
}

static int bwd(struct zero_run *z, int i, const float *dout, float *din)
{
    double t0 = mb_now();
    int rc = nn_layer_backward(z->layer[i].l, dout, din);
    double t1 = mb_now();
    z->st.compute_s += t1 - t0;
    zero_span(z, "compute", "backward", t0, t1);
    return rc;
}

int zero_micro_pass(struct zero_run *z, const struct zero_pass_hooks *h, double *loss, char *err, size_t len)
{
    int L = z->L;
#define READY(i, f) do { if (h->ready(z, (i), (f), err, len) != 0) return -1; } while (0)
#define DONE(i) do { if (h->done_bwd && h->done_bwd(z, (i), err, len) != 0) return -1; } while (0)
#define FAILED(what, i) return snprintf(err, len, "layer %d: %s failed", (i), (what)), -1
    const void *in = z->tok; /* hidden states ping-pong between h[0] and h[1] */
    for (int i = 0; i < L; i++) {
        READY(i, 1);
        float *out = i == L - 1 ? NULL : in == z->h[0] ? z->h[1] : z->h[0];
        if (fwd(z, i, in, out, loss) != 0)
            FAILED("forward", i);
        in = out;
    }
    float *dout = NULL;
    for (int i = L - 1; i >= 0; i--) {
        READY(i, 0);
        float *din = i == 0 ? NULL : dout == z->dh[0] ? z->dh[1] : z->dh[0];
        if (bwd(z, i, dout, din) != 0)
            FAILED("backward", i);
        dout = din;
        DONE(i);
    }
    return 0;
#undef READY
#undef DONE
#undef FAILED
}

/* ---- --link-gbps auto ------------------------------------------------------ */

double zero_link_auto(struct zero_run *z)
{
    double t = 0;
    uint64_t bytes = 0;
    if (z->role == ZERO_WORKER && z->o.lay.W > 1) {
        /* one block's forward + backward against
         * the bytes ZeRO-3 sends for it per step: 3 S (W-1)/W */
        int i = z->L > 2 ? 1 : 0;
        struct zero_layer *ly = &z->layer[i];
        size_t M = (size_t)z->o.micro * (size_t)z->o.cfg.seq * (size_t)z->o.cfg.hidden;
        for (size_t k = 0; k < M; k++)
            z->h[0][k] = z->dh[0][k] = (float)((k % 7) - 3) * 0.01f;
        zero_tokens(&z->o, -1, 0, z->tok, z->tgt);
        /* the fastest of 3 timed passes after an untimed one: on a shared
         * machine the minimum is the least disturbed */
        for (int rep = 0; rep < 4; rep++) {
            double t0 = mb_now();
            const void *in = i ? (const void *)z->h[0] : (const void *)z->tok;
            nn_layer_forward(ly->l, in, z->h[1]);
            nn_layer_backward(ly->l, z->dh[0], i ? z->dh[1] : NULL);
            double dt = mb_now() - t0;
            if (rep == 1 || (rep > 1 && dt < t))
                t = dt;
        }
        memset(ly->grad, 0, (size_t)z->o.lay.W * ly->S * 4);
        bytes = 3 * (uint64_t)ly->S * 4 * (uint64_t)(z->o.lay.W - 1);
    }
    double in[2] = {t, (double)bytes}, out[2];
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, z->comm);
    double bps = out[0] > 0 && out[1] > 0 ? out[1] / out[0] : 0;
    z->o.link_bps = bps;
    if (z->cc)
        zero_comm_set_rate(z->cc, bps);
    return bps;
}
