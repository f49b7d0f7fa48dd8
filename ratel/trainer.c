/* The trainer's set-up: arenas (device, host), link, store, layers bound
 * to the device's P16 and G16 slots, the initial states; its counters and
 * the parameters read back (tests). One step is in trainer_step.c. */
#include "trainer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sys_names[RATEL_SYS_COUNT] = {"ratel", "zero-offload", "zero-infinity",
                                                       "no-offload"};

const char *ratel_system_name(enum ratel_system s)
{
    return s >= 0 && s < RATEL_SYS_COUNT ? sys_names[s] : "?";
}

int ratel_system_parse(const char *s, enum ratel_system *out)
{
    for (int i = 0; i < RATEL_SYS_COUNT; i++)
        if (strcmp(s, sys_names[i]) == 0) {
            *out = (enum ratel_system)i;
            return 0;
        }
    return -1;
}

void tr_span(struct ratel_trainer *t, const char *what, const char *name, double t0, double t1)
{
    if (t->o.on_span)
        t->o.on_span(t->o.span_ctx, what, name, t0, t1);
}

/* nn's allocator hook over the device arena: a bump arena, so free gives
 * nothing back (the trainer's tensors live as long as it does). */
static void *dev_alloc(void *ctx, size_t bytes)
{
    return mb_arena_alloc(ctx, bytes, 64, NULL, 0);
}
static void dev_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

static void on_copy(void *ctx, int dir, size_t bytes, double start, double end)
{
    (void)bytes;
    tr_span(ctx, dir == MB_LINK_H2D ? "h2d" : "d2h", "link", start, end);
}

static void on_store_span(void *ctx, const char *what, const char *name, double start, double end)
{
    tr_span(ctx, what, name, start, end);
}

/* The update mb_ostore_step runs: nn's Adam on the store's buffers. */
static int adam_update(void *ctx, int i, const struct mb_ostore_state *st, const void *grad,
                       char *err, size_t errlen)
{
    struct ratel_trainer *t = ctx;
    (void)i;
    (void)err;
    (void)errlen;
    const char *g = (const char *)grad + st->off * nn_dtype_size(t->o.prec.grad);
    nn_adam_step(&t->o.hp, t->t, st->n, st->p32, st->m, st->v, g, t->o.prec.grad, 1.0f, st->p16,
                 t->o.prec.param);
    return 0;
}

/* the store's update chunk: the option's, else RATEL_UPDATE_CHUNK */
static uint64_t update_chunk(const struct ratel_trainer_opts *o)
{
    return o->update_chunk ? o->update_chunk : RATEL_UPDATE_CHUNK;
}

static void *take(struct mb_arena *a, size_t bytes, char *err, size_t errlen)
{
    /* rounded up, so the arena's peak is the sum ratel_dev_bytes counts */
    return mb_arena_alloc(a, bytes ? (bytes + 63) / 64 * 64 : 64, 64, err, errlen);
}

/* The initial states of layer i (as nn_gpt_new makes them, then as
 * nn_adam_state_init reads them): P16 from the seed into device slot
 * i % 2, P32 its fp32 value in p32, m = v = 0; kept in host memory, or
 * their writes to storage submitted into io[0..3] (init_all waits). */
static int init_states(struct ratel_trainer *t, int i, float *p32, const float *zero,
                       struct mb_ostore_io **io, char *err, size_t errlen)
{
    uint64_t n = t->np[i];
    void *p16 = t->dev_p16[i % 2];
    nn_layer_bind_params(t->layer[i], p16);
    nn_layer_init_params(t->layer[i], t->o.seed);
    nn_load_f32(p32, p16, t->o.prec.param, n);
    if (t->states_on_store) {
        const void *src[MB_OSTORE_NFIELDS] = {p32, zero, zero, p16};
        for (int f = 0; f < MB_OSTORE_NFIELDS; f++)
            if (mb_ostore_submit(t->store, MB_AIO_WRITE, mb_ostore_tensor_extent(t->store, i, (enum mb_ostore_field)f),
                                 0, n * (f == MB_OSTORE_P16 ? 2 : 4), (void *)src[f], &io[f], err, errlen) != 0)
                return -1;
        return 0;
    }
    struct mb_arena *a = t->o.system == RATEL_SYS_NO_OFFLOAD ? t->dev : t->host;
    if (!(t->p32[i] = take(a, n * 4, err, errlen)) || !(t->m[i] = take(a, n * 4, err, errlen)) ||
        !(t->v[i] = take(a, n * 4, err, errlen)) || !(t->p16[i] = take(a, n * 2, err, errlen)))
        return -1;
    memcpy(t->p32[i], p32, n * 4);
    memset(t->m[i], 0, n * 4);
    memset(t->v[i], 0, n * 4);
    memcpy(t->p16[i], p16, n * 2);
    return 0;
}

/* Every layer's initial states: layer i's writes fly while layer i + 1's
 * are drawn (two sets of buffers: the seeded draw and the writes took
 * about as long, 0.15-0.2 s each per layer at full scale, one after the
 * other). */
static int init_all(struct ratel_trainer *t, char *err, size_t errlen)
{
    /* page-aligned, so the writes go O_DIRECT (the engine writes an
     * unaligned buffer through the page cache: 1.9 GB dirtied at full scale) */
    size_t bytes = (t->max_np * 4 + 4095) / 4096 * 4096;
    float *p32[2] = {aligned_alloc(4096, bytes), aligned_alloc(4096, bytes)}, *zero = aligned_alloc(4096, bytes);
    if (zero)
        memset(zero, 0, bytes);
    struct mb_ostore_io *io[2][MB_OSTORE_NFIELDS] = {{NULL}};
    int rc = p32[0] && p32[1] && zero ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < t->nl; i++) {
        rc = mb_ostore_wait_all(io[i % 2], MB_OSTORE_NFIELDS, err, errlen);
        rc = rc ? rc : init_states(t, i, p32[i % 2], zero, io[i % 2], err, errlen);
    }
    for (int k = 0; k < 2; k++) { /* (the first failure's reason kept) */
        char e2[512];
        int w = mb_ostore_wait_all(io[k], MB_OSTORE_NFIELDS, rc ? e2 : err, rc ? sizeof(e2) : errlen);
        rc = rc ? rc : w;
    }
    free(p32[0]);
    free(p32[1]);
    free(zero);
    return rc;
}

uint64_t tr_unit_bytes(struct ratel_trainer *t, int k)
{
    const struct ratel_unit *x = &t->u[k];
    struct nn_layer *l = t->layer[x->layer];
    uint64_t b = 0;
    if (x->inter)
        b = nn_tensor_bytes(nn_layer_act_inter(l));
    else if (nn_layer_intra_account(l, x->tensor, &b, NULL) != 0)
        b = 0;
    return b ? b : (uint64_t)x->bytes;
}

/* The store: every layer's P32, m, v and P16, and an extent per swappable
 * activation ("L<i>.act.<tensor>", "L<i>.act.in" for a block input), which
 * a step uses when its policy swaps more than MEM_avail (reserved with the rest). */
static int open_store(struct ratel_trainer *t, char *err, size_t errlen)
{
    struct mb_ostore_tensor *ts = t->ts = calloc((size_t)t->nl, sizeof(*ts));
    struct mb_ostore_blob *bl = calloc((size_t)t->nu + 1, sizeof(*bl));
    char (*bn)[64] = calloc((size_t)t->nu + 1, sizeof(*bn));
    t->act_ext = calloc((size_t)t->nu + 1, sizeof(int));
    if (!ts || !bl || !bn || !t->act_ext) {
        free(bl);
        free(bn);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < t->nl; i++)
        ts[i] = (struct mb_ostore_tensor){t->lname[i], t->np[i]};
    for (int k = 0; k < t->nu; k++) {
        const struct ratel_unit *x = &t->u[k];
        const char *tn = x->inter ? "in" : nn_layer_intra_name(t->layer[x->layer], x->tensor);
        snprintf(bn[k], sizeof(bn[k]), "%s.act.%s", t->lname[x->layer], tn ? tn : "?");
        bl[k] = (struct mb_ostore_blob){bn[k], tr_unit_bytes(t, k)};
    }
    struct mb_ostore_opts so = {
        .dir = t->o.dir, .nfiles = t->o.nfiles, .file_gbps = t->o.file_gbps,
        .order = t->o.system == RATEL_SYS_ZERO_INFINITY ? MB_OSTORE_SERIAL : t->o.order,
        .chunk = update_chunk(&t->o),
        .update = adam_update, .ctx = t, .tensors = ts, .ntensors = t->nl, .blobs = bl, .nblobs = t->nu,
        .seed = t->o.seed, .on_span = on_store_span, .span_ctx = t};
    t->store = mb_ostore_open(&so, err, errlen);
    for (int k = 0; t->store && k < t->nu; k++)
        t->act_ext[k] = mb_ostore_extent(t->store, bn[k]);
    free(bl);
    free(bn);
    return t->store ? 0 : -1;
}

static int setup(struct ratel_trainer *t, char *err, size_t errlen)
{
    const struct ratel_trainer_opts *o = &t->o;
    int B = o->batch;
    size_t M = (size_t)B * (size_t)o->cfg.seq, H = (size_t)o->cfg.hidden;
    if (nn_dtype_size(o->prec.param) != 2 || nn_dtype_size(o->prec.grad) != 2) {
        snprintf(err, errlen, "--precision: parameters and gradients must be 16-bit (P16, G16)");
        return -1;
    }
    /* --host-mem holds the store's buffers and the staging slots too: the
     * arena (MEM_avail's) gets what they leave */
    uint64_t beside = ratel_host_beside_bytes(&o->cfg, B, o->prec, o->system, o->act, o->update_chunk);
    if (o->host_mem <= beside) {
        snprintf(err, errlen, "host-mem: %llu bytes leave nothing beside the store's buffers and the staging "
                 "slots (%llu)", (unsigned long long)o->host_mem, (unsigned long long)beside);
        return -1;
    }
    t->host_beside = beside;
    if (!(t->dev = mb_arena_new("dev-mem", o->dev_mem, NULL, err, errlen)) ||
        !(t->host = mb_arena_new("host-mem", o->host_mem - beside, NULL, err, errlen)))
        return -1;
    t->dev_alloc = (struct nn_alloc){dev_alloc, dev_free, t->dev};
    struct mb_link_opts lo = {{o->link_gbps, o->link_gbps}, 0, {-1, -1}, on_copy, t};
    if (!(t->link = mb_link_new(&lo, err, errlen)))
        return -1;
    t->layer = calloc((size_t)t->nl, sizeof(*t->layer));
    t->np = calloc((size_t)t->nl, sizeof(*t->np));
    t->host_g16 = calloc((size_t)t->nl, sizeof(void *));
    t->lname = calloc((size_t)t->nl, sizeof(*t->lname));
    t->act_host = calloc((size_t)t->nl, sizeof(*t->act_host));
    t->inter_host = calloc((size_t)t->nl, sizeof(void *));
    t->inter_dev = calloc((size_t)t->nl, sizeof(void *));
    t->p32 = calloc((size_t)t->nl, sizeof(float *));
    t->m = calloc((size_t)t->nl, sizeof(float *));
    t->v = calloc((size_t)t->nl, sizeof(float *));
    t->p16 = calloc((size_t)t->nl, sizeof(uint16_t *));
    if (!t->layer || !t->np || !t->host_g16 || !t->lname || !t->act_host ||
        !t->inter_host || !t->inter_dev || !t->p32 || !t->m || !t->v || !t->p16) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!(t->ws = nn_workspace_new_alloc(&o->cfg, B, &t->dev_alloc))) {
        snprintf(err, errlen, "%s", mb_arena_error(t->dev));
        return -1;
    }
    t->states_on_store = o->system == RATEL_SYS_RATEL || o->system == RATEL_SYS_ZERO_INFINITY;
    t->release_acts = t->states_on_store;
    unsigned bind = NN_LAYER_BIND_PARAMS | NN_LAYER_BIND_GRADS |
                    (t->release_acts ? NN_LAYER_BIND_INTRA | NN_LAYER_BIND_INTER : 0u);
    size_t region = (size_t)ratel_dev_region_bytes(&o->cfg, B, o->prec);
    for (int k = 0; t->release_acts && k < 2; k++)
        if (!(t->region[k] = take(t->dev, region, err, errlen)))
            return -1;
    for (int i = 0; i < t->nl; i++) {
        t->layer[i] = nn_layer_new_alloc(&o->cfg, B, o->prec, i, o->seed, t->ws, &t->dev_alloc,
                                         bind);
        if (!t->layer[i]) {
            snprintf(err, errlen, "%s", mb_arena_error(t->dev));
            return -1;
        }
        struct nn_layer_account a;
        nn_layer_set_stage_times(t->layer[i], &t->stimes); /* (two clock reads a stage) */
        nn_layer_set_recompute_whole(t->layer[i], o->recompute_whole);
        nn_layer_account(t->layer[i], &a);
        t->np[i] = a.params;
        t->max_np = a.params > t->max_np ? a.params : t->max_np;
        snprintf(t->lname[i], sizeof(t->lname[i]), "L%d", i);
    }
    for (int k = 0; k < 2; k++)
        if (!(t->h[k] = take(t->dev, M * H * 4, err, errlen)) ||
            !(t->dh[k] = take(t->dev, M * H * 4, err, errlen)) ||
            !(t->dev_p16[k] = take(t->dev, t->max_np * 2, err, errlen)) ||
            !(t->dev_g16[k] = take(t->dev, t->max_np * 2, err, errlen)) ||
            !(t->host_p16[k] = take(t->host, t->max_np * 2, err, errlen)))
            return -1;
    /* G16 lands in two host slots, alternating in backward order (layer i
     * is the (nl-1-i)-th), a slot reused once the store's update of its
     * last gradient ran; zero-infinity runs Adam after the whole backward,
     * so every layer's gradient lands in its own buffer */
    void *slot[2] = {NULL, NULL};
    int per_layer = o->system == RATEL_SYS_ZERO_INFINITY;
    for (int k = 0; o->system != RATEL_SYS_NO_OFFLOAD && !per_layer && k < 2; k++)
        if (!(slot[k] = take(t->host, t->max_np * 2, err, errlen)))
            return -1;
    for (int i = 0; i < t->nl && o->system != RATEL_SYS_NO_OFFLOAD; i++)
        if (!(t->host_g16[i] = per_layer ? take(t->host, t->np[i] * 2, err, errlen)
                                         : slot[(t->nl - 1 - i) & 1]))
            return -1;
    t->nu = ratel_gpt_units(&o->cfg, B, o->prec, NULL, 0);
    t->u = calloc((size_t)t->nu + 1, sizeof(*t->u));
    t->u_priced = calloc((size_t)t->nu + 1, sizeof(*t->u_priced));
    t->swap = calloc((size_t)t->nu + 1, 1);
    t->on_store = calloc((size_t)t->nu + 1, 1);
    t->ubase = calloc((size_t)t->nl, sizeof(int));
    if (!t->u || !t->u_priced || !t->swap || !t->on_store || !t->ubase) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ratel_gpt_units(&o->cfg, B, o->prec, t->u, t->nu);
    for (int i = 0; i < t->nl; i++)
        t->ubase[i] = -1;
    for (int k = 0; k < t->nu; k++)
        if (t->u[k].inter && t->u[k].layer >= 0 && t->u[k].layer < t->nl)
            t->ubase[t->u[k].layer] = k;
    if (t->states_on_store && open_store(t, err, errlen) != 0)
        return -1;
    if (o->read_ahead < 0 || o->read_ahead > RATEL_READ_AHEAD_MAX) {
        snprintf(err, errlen, "read-ahead: %d layers, not 0..%d (the store's buffer sets)",
                 o->read_ahead, RATEL_READ_AHEAD_MAX);
        return -1;
    }
    t->ra_n = o->system == RATEL_SYS_RATEL && o->order == MB_OSTORE_OPTIMIZED ? o->read_ahead : 0;
    t->ra_n = t->ra_n < t->nl ? t->ra_n : t->nl;
    t->st.read_ahead = t->ra_n;
    for (int k = 0; k < t->ra_n; k++) { /* the layer's last chunk */
        uint64_t n = t->np[tr_read_ahead_layer(t, k)];
        t->st.read_ahead_bytes +=
            12 * mb_ostore_first_unit_elems(n, update_chunk(o), 0);
    }
    return init_all(t, err, errlen);
}

struct ratel_trainer *ratel_trainer_new(const struct ratel_trainer_opts *o, char *err,
                                        size_t errlen)
{
    struct ratel_trainer *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->o = *o;
    if (o->dir)
        snprintf(t->dir, sizeof(t->dir), "%s", o->dir);
    t->o.dir = t->dir;
    t->nl = o->cfg.layers + 2;
    if (setup(t, err, errlen) != 0) {
        ratel_trainer_free(t);
        return NULL;
    }
    return t;
}

int ratel_trainer_params(struct ratel_trainer *t, int i, float *p32, uint16_t *p16, char *err,
                         size_t errlen)
{
    if (i < 0 || i >= t->nl) {
        snprintf(err, errlen, "no layer %d", i);
        return -1;
    }
    uint64_t n = t->np[i];
    if (!t->states_on_store) {
        memcpy(p32, t->p32[i], n * 4);
        memcpy(p16, t->p16[i], n * 2);
        return 0;
    }
    if (mb_ostore_rw(t->store, MB_AIO_READ, mb_ostore_tensor_extent(t->store, i, MB_OSTORE_P32), 0,
                     n * 4, p32, err, errlen) != 0)
        return -1;
    return mb_ostore_rw(t->store, MB_AIO_READ, mb_ostore_tensor_extent(t->store, i, MB_OSTORE_P16),
                        0, n * 2, p16, err, errlen);
}

int ratel_trainer_layers(const struct ratel_trainer *t) { return t->nl; }

uint64_t ratel_trainer_layer_params(const struct ratel_trainer *t, int i)
{
    return i >= 0 && i < t->nl ? t->np[i] : 0;
}

void ratel_trainer_stats(const struct ratel_trainer *t, struct ratel_trainer_stats *out)
{
    *out = t->st;
    out->act_staging = t->slot[0].buf ? TR_ACT_SLOTS * TR_ACT_CHUNK : 0;
    out->dev_peak = mb_arena_peak(t->dev);
    out->host_peak = mb_arena_peak(t->host);
    out->host_beside = t->host_beside;
}

void ratel_trainer_swap(const struct ratel_trainer *t, unsigned char *swap, int n)
{
    if (swap && n == t->nu)
        memcpy(swap, t->swap, (size_t)n);
}

void ratel_trainer_units(const struct ratel_trainer *t, struct ratel_unit *u, int n)
{
    if (u && n == t->nu)
        memcpy(u, t->st.recompute_priced_all > 0 ? t->u_priced : t->u, (size_t)n * sizeof(*u));
}

void ratel_trainer_model(const struct ratel_trainer *t, struct ratel_model *m)
{
    ratel_gpt_model(&t->o.cfg, t->o.batch, t->o.prec, m);
    m->read_ahead = (double)t->st.read_ahead_bytes;
    if (t->st.recompute_priced_all > 0)
        m->flops_rc_all = t->st.recompute_priced_all;
    if (t->o.recompute_whole) /* every dropped layer's whole forward again (the embedding's is 0) */
        m->flops_rc_all = m->flops_fwd;
}

struct mb_link *ratel_trainer_link(struct ratel_trainer *t) { return t->link; }
struct mb_ostore *ratel_trainer_store(struct ratel_trainer *t) { return t->store; }

void ratel_trainer_free(struct ratel_trainer *t)
{
    if (!t)
        return;
    char err[256];
    if (t->store && t->slot[0].buf)
        (void)tr_act_settle(t, err, sizeof(err)); /* (a failed step's transfers: their buffers are ours) */
    if (t->store)
        mb_ostore_close(t->store);
    if (t->link)
        mb_link_free(t->link);
    for (int i = 0; t->layer && i < t->nl; i++)
        if (t->layer[i])
            nn_layer_free(t->layer[i]);
    if (t->ws)
        nn_workspace_free(t->ws);
    if (t->dev)
        mb_arena_free(t->dev);
    if (t->host)
        mb_arena_free(t->host);
    free(t->ts);
    free(t->layer);
    free(t->np);
    free(t->host_g16);
    free(t->lname);
    free(t->act_host);
    free(t->inter_host);
    free(t->inter_dev);
    free(t->p32);
    free(t->m);
    free(t->v);
    free(t->p16);
    for (int k = 0; k < TR_ACT_SLOTS; k++)
        free(t->slot[k].buf);
    free(t->u);
    free(t->u_priced);
    free(t->swap);
    free(t->on_store);
    free(t->ubase);
    free(t->act_ext);
    free(t->rd);
    free(t);
}
