/* A worker's model and the run around it: every layer of the GPT with its
 * shard (working copy, reduced gradient, fp32 master copy, Adam's
 * moments), and two small pools of padded full-size fp32 buffers that the
 * layers are rebound to while gathered (parameters) and from backward to
 * reduce-scatter (gradients): ZeRO-3's memory is the shards plus a few
 * layers, not the model. */
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

int zero_grads_pooled(const struct zero_opts *o)
{
    return zero_micro_per_worker(o) == 1;
}

/* The largest layer's W*S elements: every pool buffer's size. */
static size_t max_full(const struct zero_opts *o)
{
    size_t m = 0, numel;
    for (int i = 0; i < o->cfg.layers + 2; i++) {
        size_t f = (size_t)o->lay.W * shard_elems(o, i, &numel);
        m = f > m ? f : m;
    }
    return m;
}

uint64_t zero_worker_bytes(const struct zero_opts *o)
{
    uint64_t b = nn_workspace_bytes(&o->cfg, o->micro);
    uint64_t M = (uint64_t)o->micro * (uint64_t)o->cfg.seq;
    int fixed = o->agg == ZERO_AGG_FIXED, pooled = zero_grads_pooled(o);
    b += 4 * M * (uint64_t)o->cfg.hidden * 4 + 2 * M * 4; /* hidden states, tokens */
    uint64_t bufs = ZERO_PARAM_BUFS + (pooled ? ZERO_GRAD_BUFS : 0);
    b += bufs * (uint64_t)(max_full(o) ? max_full(o) : 1) * 4;
    for (int i = 0; i < o->cfg.layers + 2; i++) {
        size_t numel, S = shard_elems(o, i, &numel);
        struct nn_layer_account a;
        nn_gpt_layer_account(&o->cfg, o->micro, PREC, i, &a);
        if (!pooled) /* the layer's own gradient and fixed sums */
            b += (uint64_t)o->lay.W * S * 4 * (fixed ? 2 : 1);
        b += (uint64_t)(S ? S : 1) * 4 * 5;               /* working copy, reduced, master, m, v */
        b += a.act_inter_bytes + a.act_intra_bytes;
    }
    return b;
}

/* ---- the full-size buffer pools --------------------------------------- */

struct zero_pool {
    int n;
    size_t elems;
    float **buf;
    int *used;
};

static void *zalloc(struct zero_run *z, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p)
        z->alloc_bytes += (uint64_t)(n ? n : 1) * size;
    return p;
}

static void pool_free(struct zero_pool *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->n && p->buf; k++)
        free(p->buf[k]);
    free(p->buf), free(p->used), free(p);
}

static struct zero_pool *pool_new(struct zero_run *z, int n, size_t elems)
{
    struct zero_pool *p = calloc(1, sizeof(*p));
    if (!p || !(p->buf = calloc((size_t)n, sizeof(float *))) || !(p->used = calloc((size_t)n, sizeof(int)))) {
        pool_free(p);
        return NULL;
    }
    p->n = n, p->elems = elems;
    for (int k = 0; k < n; k++)
        if (!(p->buf[k] = zalloc(z, elems, 4))) {
            pool_free(p);
            return NULL;
        }
    return p;
}

static float *pool_get(struct zero_pool *p)
{
    for (int k = 0; k < p->n; k++)
        if (!p->used[k]) {
            p->used[k] = 1;
            return p->buf[k];
        }
    return NULL;
}

static void pool_put(struct zero_pool *p, const float *b)
{
    for (int k = 0; k < p->n; k++)
        if (p->buf[k] == b)
            p->used[k] = 0;
}

int zero_params_get(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    if (ly->full)
        return 0;
    if (!(ly->full = pool_get(z->pp)))
        return -1;
    /* the other blocks come from the gather (or the pull); the own block
     * (with its zero padding) from the shard */
    memcpy(ly->full + ly->off, ly->work, ly->S * 4);
    return nn_layer_bind_params(ly->l, ly->full);
}

void zero_params_put(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    if (ly->full)
        pool_put(z->pp, ly->full);
    ly->full = NULL;
}

float *zero_params_spare(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    float *b = pool_get(z->pp);
    if (b)
        memcpy(b + ly->off, ly->work, ly->S * 4);
    return b;
}

int zero_params_adopt(struct zero_run *z, int i, float *buf)
{
    struct zero_layer *ly = &z->layer[i];
    if (ly->full)
        return -1;
    ly->full = buf;
    return nn_layer_bind_params(ly->l, ly->full);
}

void zero_params_drop(struct zero_run *z, float *buf)
{
    if (buf)
        pool_put(z->pp, buf);
}

int zero_grads_get(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    if (!ly->grad_pooled || ly->grad)
        return 0;
    if (!(ly->grad = pool_get(z->gp)))
        return -1;
    memset(ly->grad, 0, (size_t)z->o.lay.W * ly->S * 4); /* the sum starts from zero; padding stays zero */
    if (z->o.agg == ZERO_AGG_FIXED)
        ly->acc = (int32_t *)(void *)ly->grad;
    return nn_layer_bind_grads(ly->l, ly->grad);
}

void zero_grads_put(struct zero_run *z, int i)
{
    struct zero_layer *ly = &z->layer[i];
    if (!ly->grad_pooled || !ly->grad)
        return;
    pool_put(z->gp, ly->grad);
    ly->grad = NULL;
    ly->acc = NULL;
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
    ly->work = zalloc(z, ly->S, 4);
    ly->red = zalloc(z, ly->S, 4);
    ly->master = zalloc(z, ly->S, 4);
    ly->m = zalloc(z, ly->S, 4);
    ly->v = zalloc(z, ly->S, 4);
    struct nn_layer_account a;
    nn_gpt_layer_account(&z->o.cfg, z->o.micro, PREC, i, &a);
    z->alloc_bytes += a.act_inter_bytes + a.act_intra_bytes; /* nn_layer_new_alloc's */
    ly->grad_pooled = zero_grads_pooled(&z->o);
    if (!ly->grad_pooled) {
        ly->grad = zalloc(z, full, 4);
        if (z->o.agg == ZERO_AGG_FIXED)
            ly->acc = zalloc(z, full, 4);
    }
    if (!ly->work || !ly->red || !ly->master || !ly->m || !ly->v ||
        (!ly->grad_pooled && (!ly->grad || (z->o.agg == ZERO_AGG_FIXED && !ly->acc))))
        return snprintf(err, len, "out of memory: layer %d's buffers", i), -1;
    if (ly->grad && nn_layer_bind_grads(ly->l, ly->grad) != 0)
        return snprintf(err, len, "layer %d: binding its gradient failed", i), -1;
    /* every worker draws the whole layer from the seed (as a single rank
     * would) into a pool buffer and keeps its shard; the padding stays zero */
    float *tmp = pool_get(z->pp);
    if (!tmp)
        return snprintf(err, len, "layer %d: no parameter buffer free", i), -1;
    memset(tmp, 0, full * 4);
    if (nn_layer_bind_params(ly->l, tmp) != 0)
        return pool_put(z->pp, tmp), snprintf(err, len, "layer %d: binding its parameters failed", i), -1;
    nn_layer_init_params(ly->l, z->o.seed);
    memcpy(ly->work, tmp + ly->off, ly->S * 4);
    memcpy(ly->master, tmp + ly->off, ly->n * 4);
    pool_put(z->pp, tmp);
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
    z->alloc_bytes += nn_workspace_bytes(cfg, z->o.micro) + 4 * M * (size_t)cfg->hidden * 4 + 2 * M * 4;
    size_t mf = max_full(&z->o);
    if (!(z->pp = pool_new(z, ZERO_PARAM_BUFS, mf)) ||
        (zero_grads_pooled(&z->o) && !(z->gp = pool_new(z, ZERO_GRAD_BUFS, mf))))
        return snprintf(err, len, "out of memory: the full-size buffer pools"), -1;
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
    const double c0 = z->st.compute_s, w0 = z->st.comm_wait_s, o0 = z->st.optimizer_s;
    if (z->role == ZERO_WORKER)
        for (int i = 0; i < z->L; i++) { /* the step's sums start from zero (pooled ones as they are taken) */
            struct zero_layer *ly = &z->layer[i];
            if (ly->grad_pooled)
                continue;
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
    if (z->role == ZERO_WORKER) {
        const double d[ZERO_REC_N] = {t1 - t0, z->st.compute_s - c0, z->st.comm_wait_s - w0, z->st.optimizer_s - o0};
        zero_step_record(z, d); /* out of memory: this step is left out of the medians */
    }
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
        if (!ly->grad_pooled)
            free(ly->grad), free(ly->acc);
        free(ly->work), free(ly->red);
        free(ly->master), free(ly->m), free(ly->v);
        free(ly->sum_send), free(ly->sum_recv);
    }
    free(z->layer);
    pool_free(z->pp);
    pool_free(z->gp);
    if (z->ws)
        nn_workspace_free(z->ws);
    for (int k = 0; k < 2; k++)
        free(z->h[k]), free(z->dh[k]);
    free(z->tok), free(z->tgt);
    if (z->workers != MPI_COMM_NULL)
        MPI_Comm_free(&z->workers);
    MPI_Comm_free(&z->comm);
    free(z->rec);
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
        zero_params_put(z, i);
        in = out;
    }
    float *dout = NULL;
    for (int i = L - 1; i >= 0; i--) {
        READY(i, 0);
        float *din = i == 0 ? NULL : dout == z->dh[0] ? z->dh[1] : z->dh[0];
        while (zero_grads_get(z, i) != 0) /* none free: the oldest reduce gives one back */
            if (!h->grad_wait || h->grad_wait(z, err, len) != 0)
                return h->grad_wait ? -1 : (snprintf(err, len, "layer %d: no gradient buffer free", i), -1);
        if (bwd(z, i, dout, din) != 0)
            FAILED("backward", i);
        zero_params_put(z, i);
        dout = din;
        DONE(i);
    }
    return 0;
#undef READY
#undef DONE
#undef FAILED
}

int zero_use_layer(const struct zero_run *z, int u)
{
    int k = u % (2 * z->L);
    return k < z->L ? k : 2 * z->L - 1 - k;
}

int zero_prefetch_ahead(const struct zero_run *z, int u, int U)
{
    int n = 0;
    for (int k = 1; k <= ZERO_PREFETCH && u + k < U; k++) {
        int li = zero_use_layer(z, u + k), clash = 0;
        for (int j = 0; j < k && !clash; j++)
            clash = zero_use_layer(z, u + j) == li;
        if (clash)
            break;
        n = k;
    }
    return n;
}

int zero_prefetch_ahead_spare(const struct zero_run *z, int u, int U)
{
    int n = 0;
    for (int k = 1; k <= ZERO_PREFETCH && u + k < U; k++) {
        int li = zero_use_layer(z, u + k), clash = 0;
        for (int j = 0; j < k && !clash; j++)
            clash = zero_use_layer(z, u + j) == li && !(j == k - 1 && (u + j) % (2 * z->L) == z->L - 1);
        if (clash)
            break;
        n = k;
    }
    return n;
}

/* ---- one block's pass: --link-gbps auto and the model's compute rate ------ */

void zero_block_passes(struct zero_run *z, int (*more)(void *), void *ctx, double *t_out, double *f_out,
                       double *c_out)
{
    double t = 0, f = 0, c = 0;
    if (z->role == ZERO_WORKER) {
        /* one block's forward + backward of a micro-batch, in the layer's
         * own code (its GEMMs and everything between them) */
        int i = z->L > 2 ? 1 : 0;
        struct zero_layer *ly = &z->layer[i];
        size_t M = (size_t)z->o.micro * (size_t)z->o.cfg.seq * (size_t)z->o.cfg.hidden;
        if (zero_params_get(z, i) != 0 || zero_grads_get(z, i) != 0)
            mb_die(1, "rank %d: a block's pass: no free buffer for layer %d", z->rank, i);
        for (size_t k = 0; k < M; k++)
            z->h[0][k] = z->dh[0][k] = (float)((k % 7) - 3) * 0.01f;
        zero_tokens(&z->o, -1, 0, z->tok, z->tgt);
        /* the median of 7 timed passes after an untimed one: the fastest
         * of 3 (before) moved the auto rate by 1.3x between the runs of
         * one study on a shared machine; the median is steadier and is
         * what a layer's compute takes in the run, not its best case */
        double pass[ZERO_BLOCK_PASSES], cpu[ZERO_BLOCK_PASSES], half = 0.5;
        for (int rep = 0; rep <= ZERO_BLOCK_PASSES || (more && more(ctx)); rep++) {
            double t0 = mb_now(), c0 = mb_cpu_s(0);
            const void *in = i ? (const void *)z->h[0] : (const void *)z->tok;
            nn_layer_forward(ly->l, in, z->h[1]);
            nn_layer_backward(ly->l, z->dh[0], i ? z->dh[1] : NULL);
            if (rep > 0 && rep <= ZERO_BLOCK_PASSES) /* later ones: untimed, a load for the others */
                pass[rep - 1] = mb_now() - t0, cpu[rep - 1] = mb_cpu_s(0) - c0;
        }
        zero_quantiles(pass, ZERO_BLOCK_PASSES, &half, 1, &t);
        zero_quantiles(cpu, ZERO_BLOCK_PASSES, &half, 1, &c);
        memset(ly->grad, 0, (size_t)z->o.lay.W * ly->S * 4);
        zero_params_put(z, i);
        zero_grads_put(z, i);
        struct zero_model_layer *ml = calloc((size_t)z->L, sizeof *ml);
        if (!ml)
            mb_die(1, "rank %d: out of memory: the layers' FLOPs", z->rank);
        zero_model_gpt_layers(&z->o.cfg, z->o.micro, ml);
        f = ml[i].flops_fwd + ml[i].flops_bwd;
        free(ml);
    }
    *t_out = t, *f_out = f, *c_out = c;
}

double zero_block_pass(struct zero_run *z, double *flops, double *cpu_s)
{
    double t, f, c;
    zero_block_passes(z, NULL, NULL, &t, &f, &c);
    double in[3] = {t, f, c}, out[3];
    zero_nap_barrier(z->comm, 1000000); /* the other ranks nap, not spin, while the workers pass */
    MPI_Allreduce(in, out, 3, MPI_DOUBLE, MPI_MAX, z->comm);
    if (flops)
        *flops = out[1];
    if (cpu_s)
        *cpu_s = out[2];
    return out[0];
}

double zero_link_auto(struct zero_run *z)
{
    /* one block's pass against the bytes ZeRO-3 sends for it per step:
     * 3 S (W-1)/W */
    double t = zero_block_pass(z, NULL, NULL), b = 0;
    if (z->role == ZERO_WORKER && z->o.lay.W > 1)
        b = 3 * (double)z->layer[z->L > 2 ? 1 : 0].S * 4 * (double)(z->o.lay.W - 1);
    double bytes = 0;
    MPI_Allreduce(&b, &bytes, 1, MPI_DOUBLE, MPI_MAX, z->comm);
    double bps = t > 0 && bytes > 0 ? bytes / t : 0;
    z->o.link_bps = bps;
    if (z->cc)
        zero_comm_set_rate(z->cc, bps);
    return bps;
}
