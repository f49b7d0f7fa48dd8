/* --mode disdp (zero/modes.def): the push/pull protocol of disdp_internal.h driving
 * zero/'s GPT workers. A worker's compute thread runs zero_micro_pass and
 * makes no MPI call: before each layer's forward and backward its agent
 * has pulled the layer's fp32 parameters into the layer's buffer (the
 * next ZERO_PREFETCH uses' pulls are posted ahead, so they fly during this
 * layer's compute), and after the last micro-batch's backward it pushes the
 * layer's gradient (the int32 fixed-point sums with --agg fixed, as
 * zero_grad_collect makes them, else nn's fp32 sum). Switch ranks sum and
 * multicast; PS ranks own the layers round-robin and run Adam on them
 * through mb_ostore (--dir). With the same fixed-point sums, scale and
 * elementwise Adam as zero_shard_adam, the parameters are bit-identical
 * to the other modes'. Workers hold no optimizer state: zero_mode_sync
 * copies the PSes' parameters into the workers' master shards for the
 * check (not timed as a step). */
#include "zero.h"
#include "disdp_internal.h"
#include "../offload/aio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct nn_precision PREC = {NN_F32, NN_F32, NN_F32};

struct dmode {
    struct zero_run *z;
    struct mb_disdp_cfg c;
    uint64_t *numel;
    struct mb_disdp_agent *agent;
    struct mb_disdp_op **pull;  /* by use index (nmb * 2L) */
    float **spare;              /* by use index: a pull into a second buffer (the layer's first in use) */
    struct mb_disdp_op **push;  /* by layer */
    int nmb, m, u;
    struct mb_disdp_switch *sw;
    struct mb_disdp_ps *ps;
    struct mb_disdp_ps_opts po;
    struct nn_workspace *ws;    /* PS: for drawing the initial parameters */
};

static int pull_for(struct dmode *d, int u)
{
    struct zero_run *z = d->z;
    int i = zero_use_layer(z, u);
    enum mb_disdp_phase ph = u % (2 * z->L) < z->L ? MB_DISDP_FWD : MB_DISDP_BWD;
    if (d->pull[u])
        return 0;
    /* the head's backward pulled during its forward (zero_prefetch_ahead_spare):
     * into a second pool buffer, bound when the forward has given the first back */
    float *buf = z->layer[i].full;
    if (buf && !(buf = d->spare[u] = zero_params_spare(z, i)))
        return -1;
    if (!buf && (zero_params_get(z, i) != 0 || !(buf = z->layer[i].full)))
        return -1;
    if (!(d->pull[u] = mb_disdp_pull(d->agent, i, ph, buf))) {
        zero_params_drop(z, d->spare[u]);
        d->spare[u] = NULL;
        return -1;
    }
    return 0;
}

/* mb_disdp_wait, saying once on stderr what it waits for when that takes
 * o.stall_s (a stopped PS or switch: the --timeout watchdog then ends the
 * run naming the silent rank; this line names the layer). */
static int wait_op(struct zero_run *z, struct dmode *d, struct mb_disdp_op *op, const char *what, int i, char *err,
                   size_t len)
{
    double t0 = mb_now();
    int r, said = 0;
    zero_note_layer(z, i);
    while ((r = mb_disdp_test(d->agent, op)) == 0) {
        mb_disdp_nap(&d->c);
        if (!said && z->o.stall_s > 0 && mb_now() - t0 >= z->o.stall_s) {
            said = 1;
            mb_warn("disdp: rank %d (worker) step %lld: waiting %.1f s for layer %d's %s (PS rank %d, switch rank %d)",
                    z->rank, z->step + 1, mb_now() - t0, i, what, mb_disdp_ps_rank(&d->c, i),
                    mb_disdp_switch_rank(&d->c, i, 0));
        }
    }
    return mb_disdp_wait(d->agent, op, err, len);
}

static int ready(struct zero_run *z, int i, int fwd, char *err, size_t len)
{
    struct dmode *d = z->mode_state;
    int u = d->u++, U = d->nmb * 2 * z->L;
    (void)fwd;
    /* this use's pull and the next ZERO_PREFETCH uses' (each into its
     * own buffer), so the paced link copies them back to back */
    int ok = pull_for(d, u) == 0;
    for (int k = 1, n = zero_prefetch_ahead_spare(z, u, U); ok && k <= n; k++)
        ok = pull_for(d, u + k) == 0;
    if (!ok)
        return snprintf(err, len, "layer %d: no parameter buffer free or out of memory posting a pull", i), -1;
    struct mb_disdp_op *op = d->pull[u];
    d->pull[u] = NULL;
    double t0 = mb_now();
    int rc = wait_op(z, d, op, fwd ? "parameters (forward pull)" : "parameters (backward pull)", i, err, len);
    float *spare = d->spare[u];
    d->spare[u] = NULL;
    if (spare && (rc != 0 || zero_params_adopt(z, i, spare) != 0)) {
        zero_params_drop(z, spare);
        if (rc == 0)
            rc = (snprintf(err, len, "layer %d: its second parameter buffer arrived while the first was bound", i), -1);
    }
    double t1 = mb_now();
    z->st.comm_wait_s += t1 - t0;
    zero_span(z, "comm", fwd ? "pull-fwd" : "pull-bwd", t0, t1);
    return rc;
}

static int done_bwd(struct zero_run *z, int i, char *err, size_t len)
{
    struct dmode *d = z->mode_state;
    zero_grad_collect(z, i);
    if (d->m != d->nmb - 1)
        return 0;
    struct zero_layer *ly = &z->layer[i];
    const void *g = z->o.agg == ZERO_AGG_FIXED ? (const void *)ly->acc : (const void *)ly->grad;
    if (!(d->push[i] = mb_disdp_push(d->agent, i, g)))
        return snprintf(err, len, "layer %d: out of memory posting a push", i), -1;
    return 0;
}

/* Layer i's push done: its gradient buffer goes back to the pool. */
static int finish_push(struct zero_run *z, struct dmode *d, int i, char *err, size_t len)
{
    struct mb_disdp_op *op = d->push[i];
    d->push[i] = NULL;
    if (op && wait_op(z, d, op, "gradient push", i, err, len) != 0)
        return -1;
    zero_grads_put(z, i);
    return 0;
}

/* No gradient buffer free: the oldest push (from the head down) first. */
static int grad_wait(struct zero_run *z, char *err, size_t len)
{
    struct dmode *d = z->mode_state;
    for (int i = z->L - 1; i >= 0; i--)
        if (d->push[i]) {
            double t0 = mb_now();
            int rc = finish_push(z, d, i, err, len);
            z->st.comm_wait_s += mb_now() - t0;
            zero_span(z, "comm", "push-wait", t0, mb_now());
            return rc;
        }
    return snprintf(err, len, "no gradient buffer free and no push in flight"), -1;
}

static const struct zero_pass_hooks hooks = {ready, done_bwd, grad_wait};

static void ps_init(void *ctx, int layer, float *p32, uint64_t n)
{
    struct dmode *d = ctx;
    struct zero_run *z = d->z;
    struct nn_layer *l = nn_layer_new_alloc(&z->o.cfg, z->o.micro, PREC, layer, z->o.seed, d->ws, NULL,
                                            NN_LAYER_BIND_PARAMS | NN_LAYER_BIND_GRADS);
    /* the same draw as every worker's nn_layer_init_params */
    if (!l || nn_layer_bind_params(l, p32) != 0)
        mb_die(1, "disdp: PS rank %d: out of memory drawing layer %d's %llu parameters", z->rank, layer,
               (unsigned long long)n);
    nn_layer_init_params(l, z->o.seed);
    nn_layer_free(l);
}

static void teardown(struct zero_run *z)
{
    struct dmode *d = z->mode_state;
    if (!d)
        return;
    char err[512];
    mb_disdp_files_disarm(); /* the run ended through here: the PS's close removes its files */
    if (d->agent && mb_disdp_agent_stop(d->agent, NULL, err, sizeof err) != 0)
        mb_warn("disdp: rank %d's agent: %s", z->rank, err);
    mb_disdp_switch_free(d->sw);
    mb_disdp_ps_close(d->ps);
    if (d->ws)
        nn_workspace_free(d->ws);
    free(d->pull);
    free(d->spare);
    free(d->push);
    free(d->numel);
    free(d);
    z->mode_state = NULL;
}

/* The PS's spans (mb_ostore's transfers and updates, its own waits) on
 * the run's trace: looked up at each call, since the program sets
 * z->on_span after the mode's setup. Lanes: "storage" (read/write of an
 * extent), "optimizer" (Adam), "comm" (waiting for a layer's gradient),
 * "ps" (its checksum, queueing the update, the drain at the step's end). */
static void ps_span(void *ctx, const char *what, const char *name, double start, double end)
{
    struct zero_run *z = ctx;
    char buf[96];
    snprintf(buf, sizeof buf, "%s %s", what, name);
    const char *lane = !strcmp(what, "read") || !strcmp(what, "write") ? "storage"
                       : !strcmp(what, "update")                       ? "optimizer"
                       : !strcmp(what, "grad-wait")                    ? "comm"
                                                                        : "ps";
    zero_span(z, lane, buf, start, end);
}

/* The PS's layer, through z (mb-zero sets z->on_layer after setup). */
static void note_layer(void *ctx, int layer) { zero_note_layer(ctx, layer); }

static int setup(struct zero_run *z, char *err, size_t len)
{
    struct dmode *d = calloc(1, sizeof *d);
    if (!d)
        return snprintf(err, len, "out of memory: disdp's state"), -1;
    z->mode_state = d;
    d->z = z;
    int L = z->o.cfg.layers + 2;
    if (!(d->numel = calloc((size_t)L, sizeof *d->numel)))
        return snprintf(err, len, "out of memory: disdp's layer table"), -1;
    for (int i = 0; i < L; i++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(&z->o.cfg, z->o.micro, PREC, i, &a);
        d->numel[i] = a.params;
    }
    d->nmb = zero_micro_per_worker(&z->o);
    /* the mean over the global batch's micro-batches, as zero_grad_scale
     * and zero_shard_adam scale it (fixed: in double, rounded once) */
    double scale = (double)z->o.micro / (double)z->o.batch;
    d->c = (struct mb_disdp_cfg){
        .comm = z->comm, .W = z->o.lay.W, .K = z->o.lay.K, .N = z->o.lay.N, .nlayers = L, .numel = d->numel,
        .wire = NN_F32, .agg = z->o.agg == ZERO_AGG_FIXED ? MB_DISDP_AGG_FIXED : MB_DISDP_AGG_FP32,
        .micro = d->nmb, .grad_scale = z->o.agg == ZERO_AGG_FIXED ? ldexp(scale, -ZERO_FIXED_FRAC_BITS) : scale,
        .steps = 1, .seed = z->o.seed, .on_layer = note_layer, .layer_ctx = z};
    if (mb_disdp_cfg_check(&d->c, err, len) != 0)
        return -1; /* on every rank alike: the same options */
    int rc = 0;
    switch (z->role) {
    case ZERO_WORKER:
        /* no collectives: the agent moves every byte (and counts them) */
        zero_comm_free(z->cc);
        z->cc = NULL;
        d->pull = calloc((size_t)d->nmb * 2 * (size_t)L, sizeof *d->pull);
        d->spare = calloc((size_t)d->nmb * 2 * (size_t)L, sizeof *d->spare);
        d->push = calloc((size_t)L, sizeof *d->push);
        if (!d->pull || !d->spare || !d->push)
            snprintf(err, len, "out of memory: disdp's descriptors"), rc = -1;
        break; /* the agent starts at the first step, when --link-gbps auto has set the rate */
    case ZERO_SWITCH:
        rc = (d->sw = mb_disdp_switch_new(&d->c, err, len)) ? 0 : -1;
        break;
    case ZERO_PS:
        if (!(d->ws = nn_workspace_new(&z->o.cfg, z->o.micro))) {
            snprintf(err, len, "out of memory: the PS's workspace"), rc = -1;
            break;
        }
        d->po = (struct mb_disdp_ps_opts){.dir = z->o.dir ? z->o.dir : "/tmp", .nfiles = z->o.ps_files,
                                          .hp = z->o.hp, .init = ps_init, .ctx = d, .on_span = ps_span, .span_ctx = z};
        d->ps = mb_disdp_ps_open(&d->c, &d->po, err, len);
        nn_workspace_free(d->ws);
        d->ws = NULL;
        rc = d->ps ? 0 : -1;
        break;
    }
    /* every rank, also one whose set-up failed: the PSes' file paths to
     * the ranks of their host, whose clean-up removes them if the PS is
     * killed (disdp_cleanup.c) */
    if (mb_disdp_files_share(&d->c, d->ps) != 0 && rc == 0)
        snprintf(err, len, "sharing the PS's file paths failed (MPI, or over 256 store files on one host)"), rc = -1;
    return rc;
}

static int worker_step(struct zero_run *z, struct dmode *d, char *err, size_t len)
{
    if (!d->agent) {
        struct mb_disdp_agent_opts ao = {.link_gbps = z->o.link_bps / 1e9, .cpu = -1};
        if (!(d->agent = mb_disdp_agent_start(&d->c, &ao, err, len)))
            return -1;
    }
    double loss_sum = 0;
    d->u = 0;
    for (d->m = 0; d->m < d->nmb; d->m++) {
        double loss = 0;
        zero_tokens(&z->o, z->step, z->index * d->nmb + d->m, z->tok, z->tgt);
        if (zero_micro_pass(z, &hooks, &loss, err, len) != 0)
            return -1;
        loss_sum += loss;
    }
    z->st.loss = loss_sum / d->nmb;
    double t0 = mb_now();
    for (int i = z->L - 1; i >= 0; i--)
        if (finish_push(z, d, i, err, len) != 0)
            return -1;
    double t1 = mb_now();
    z->st.comm_wait_s += t1 - t0;
    zero_span(z, "comm", "push-wait", t0, t1);
    zero_note_layer(z, -1); /* the step's waits are over */
    struct mb_disdp_stats st;
    mb_disdp_agent_stats(d->agent, &st);
    z->st.sent_bytes = st.sent_bytes;
    z->st.recv_bytes = st.recv_bytes;
    return 0;
}

static int step(struct zero_run *z, char *err, size_t len)
{
    struct dmode *d = z->mode_state;
    int rc = 0;
    double t0 = mb_now();
    switch (z->role) {
    case ZERO_WORKER:
        rc = worker_step(z, d, err, len);
        break;
    case ZERO_SWITCH:
        rc = mb_disdp_switch_step(d->sw, err, len);
        break;
    case ZERO_PS:
        rc = mb_disdp_ps_step(d->ps, err, len);
        z->st.optimizer_s += mb_now() - t0;
        if (rc == 0) {
            struct mb_disdp_ps_stats ps;
            mb_disdp_ps_stats(d->ps, &ps);
            double owned = 0;
            for (int i = z->index; i < d->c.nlayers; i += d->c.N) /* its layers (mb_disdp_ps_rank) */
                owned += (double)d->numel[i];
            z->st.ps_params += owned;
            z->st.ps_adam_s = ps.adam_s, z->st.ps_io_busy_s = ps.io_busy_s, z->st.ps_io_bytes = (double)ps.io_bytes;
        }
        break;
    }
    /* the other roles are waiting on this one's messages, not in a
     * collective that would return: a failure ends the job here */
    if (rc != 0)
        mb_die(1, "disdp: rank %d (%s): step %lld: %s", z->rank, zero_role_name(z->role), z->step + 1, err);
    return 0;
}

/* The PSes send each worker its shard of every layer's P32 (its master
 * shard then holds what the PS holds); collective over z->comm. */
static void send_shards(void *ctx, int layer, const float *p32, uint64_t n)
{
    struct dmode *d = ctx;
    (void)layer; /* the worker receives the layers in order from each PS */
    for (int w = 0; w < d->c.W; w++) {
        size_t off, cnt;
        nn_shard_range(n, w, d->c.W, &off, &cnt);
        MPI_Send(p32 + off, (int)cnt, MPI_FLOAT, w, 3 * d->c.nlayers + 1, d->c.comm);
    }
}

static int sync_params(struct zero_run *z, char *err, size_t len)
{
    struct dmode *d = z->mode_state;
    if (z->role == ZERO_PS) {
        d->po.final = send_shards;
        int rc = mb_disdp_ps_final(d->ps, err, len);
        d->po.final = NULL;
        return rc;
    }
    if (z->role != ZERO_WORKER)
        return 0;
    for (int i = 0; i < z->L; i++) {
        struct zero_layer *ly = &z->layer[i];
        if (MPI_Recv(ly->master, (int)ly->n, MPI_FLOAT, mb_disdp_ps_rank(&d->c, i), 3 * d->c.nlayers + 1, z->comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return snprintf(err, len, "layer %d: receiving its parameters from the PS failed", i), -1;
    }
    return 0;
}

const struct zero_mode_ops zero_mode_disdp = {
    .name = "disdp",
    .description = "DisDP: workers' agents pull parameters and push gradients; switch ranks sum and multicast; "
                   "parameter servers run Adam through mb_ostore (--dir)",
    .needs_ps = 1,
    .uses_switch = 1,
    .thread_multiple = 1,
    .setup = setup,
    .step = step,
    .sync = sync_params,
    .teardown = teardown,
};
