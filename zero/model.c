/* The step model of each mode (zero.h, zero/README.md): calibrated rates
 * in, predicted seconds and each term alone out. Every input a mode needs
 * is checked first, so a missing or malformed one is refused, never
 * priced as 0 or NaN. */
#include "zero.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int refuse(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && len)
        vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A rate the mode needs: finite and > 0 (written so NaN fails). */
static int need_positive(const char *name, double v, char *err, size_t len)
{
    if (!(v > 0) || !isfinite(v))
        return refuse(err, len, "model input %s: %g is missing or not a positive number", name, v);
    return 0;
}

static int check_inputs(enum zero_model_mode m, const struct zero_model_in *in, char *err, size_t len)
{
    if ((unsigned)m >= ZERO_MODEL_NMODES)
        return refuse(err, len, "model: unknown mode %d", (int)m);
    if (in->W < 1)
        return refuse(err, len, "model input W: %d workers (need 1 or more)", in->W);
    if (in->micro < 1)
        return refuse(err, len, "model input micro: %d micro-batches per worker (need 1 or more)", in->micro);
    if (in->nlayers < 1 || !in->layers)
        return refuse(err, len, "model input layers: none given");
    if (in->param_bytes == 0 || in->grad_bytes == 0)
        return refuse(err, len, "model input param_bytes/grad_bytes: 0 bytes per element");
    for (int i = 0; i < in->nlayers; i++) {
        const struct zero_model_layer *l = &in->layers[i];
        if (!(l->flops_fwd >= 0) || !(l->flops_bwd >= 0) || !isfinite(l->flops_fwd) || !isfinite(l->flops_bwd))
            return refuse(err, len, "model input layer %d: FLOPs %g/%g not a number >= 0", i, l->flops_fwd,
                          l->flops_bwd);
    }
    if (need_positive("gemm_flops", in->gemm_flops, err, len) ||
        need_positive("adam_params_s", in->adam_params_s, err, len))
        return -1;
    if (m == ZERO_MODEL_OFFLOAD && need_positive("pool_adam_params_s", in->pool_adam_params_s, err, len))
        return -1;
    if (m == ZERO_MODEL_DISDP && (need_positive("storage_Bps", in->storage_Bps, err, len) ||
                                  need_positive("ps_bytes_per_param", in->ps_bytes_per_param, err, len)))
        return -1;
    if (!(in->ps_params_s >= 0) || !isfinite(in->ps_params_s))
        return refuse(err, len, "model input ps_params_s: %g is not a number >= 0", in->ps_params_s);
    if (!(in->compute_load_x >= 0) || !isfinite(in->compute_load_x) || !(in->ps_loaded_params_s >= 0) ||
        !isfinite(in->ps_loaded_params_s))
        return refuse(err, len, "model input compute_load_x/ps_loaded_params_s: %g/%g not numbers >= 0",
                      in->compute_load_x, in->ps_loaded_params_s);
    if (!(in->link_gbps >= 0) || !isfinite(in->link_gbps))
        return refuse(err, len, "model input link_gbps: %g is not a number >= 0", in->link_gbps);
    if (!(in->switch_gbps >= 0) || !isfinite(in->switch_gbps) || !(in->ps_gbps >= 0) || !isfinite(in->ps_gbps))
        return refuse(err, len, "model input switch_gbps/ps_gbps: %g/%g not numbers >= 0", in->switch_gbps,
                      in->ps_gbps);
    if (in->link_gbps == 0 && !in->coll)
        return refuse(err, len, "model input link_gbps: 0 (unpaced) needs a collectives profile");
    if (in->nhosts < 0 || (in->nhosts > 0 && !in->hosts))
        return refuse(err, len, "model input hosts: %d given without a list", in->nhosts);
    if (in->nhosts == 0)
        return 0;
    for (int h = 0; h < in->nhosts; h++) {
        const struct zero_model_host *x = &in->hosts[h];
        if (x->workers < 0 || x->switches < 0 || x->ps < 0 || !(x->cores > 0) || !isfinite(x->cores))
            return refuse(err, len, "model input host %d: %d workers, %d switches, %d PS on %g cores", h,
                          x->workers, x->switches, x->ps, x->cores);
    }
    if (need_positive("cpu_gemm_flops", in->cpu_gemm_flops, err, len) ||
        need_positive("cpu_copy_Bps", in->cpu_copy_Bps, err, len))
        return -1;
    if (m == ZERO_MODEL_DISDP ? need_positive("cpu_ps_params_s", in->cpu_ps_params_s, err, len)
                              : need_positive("cpu_adam_params_s", in->cpu_adam_params_s, err, len))
        return -1;
    return 0;
}

/* Seconds to move `bytes` one way on the paced link. */
static double link_s(const struct zero_model_in *in, double bytes)
{
    return bytes / (in->link_gbps * 1e9 / 8);
}

/* A ring collective of `block` bytes per rank: on the paced link each rank
 * sends and receives W-1 blocks; unpaced, mb_coll_model's "ring". */
static double ring_s(const struct zero_model_in *in, enum mb_coll_kind kind, double block, size_t elem)
{
    if (in->W == 1)
        return 0;
    if (in->link_gbps > 0)
        return link_s(in, block * (in->W - 1));
    static const char dummy; /* out of place: a reduce-scatter reads the whole gradient */
    struct mb_coll_args a = {.kind = kind, .sendbuf = kind == MB_COLL_ALLGATHER ? NULL : &dummy,
                             .count = (size_t)block, .dtype = MB_COLL_INT8, .op = MB_COLL_SUM};
    if (elem % 4 == 0) {
        a.count = (size_t)block / 4;
        a.dtype = MB_COLL_FLOAT;
    }
    struct mb_coll_shape sh = {.nranks = in->W, .node_size = in->W, .nnodes = 1, .one_host = 1};
    return mb_coll_model(in->coll, "ring", &a, &sh);
}

/* A point-to-point stream of `bytes` from an agent (disdp). */
static double stream_s(const struct zero_model_in *in, double bytes)
{
    if (in->link_gbps > 0)
        return link_s(in, bytes);
    return in->coll->p2p_alpha + bytes * in->coll->p2p.mem;
}

static double maxd(double a, double b) { return a > b ? a : b; }

/* role_links: a switch's and a PS's link time per second of the same bytes
 * on a worker's link (link_gbps / its own rate; 1 when not given). */
static double switch_x(const struct zero_model_in *in)
{
    return in->switch_gbps > 0 ? in->link_gbps / in->switch_gbps : 1;
}
static double ps_x(const struct zero_model_in *in) { return in->ps_gbps > 0 ? in->link_gbps / in->ps_gbps : 1; }

/* The wire terms of layer l for one use (a gather or pull) and the last
 * backward's (gather + reduce, or pull and push in full duplex). */
struct terms {
    double F, B, use, last, update;
    double push; /* disdp: the gradient's push alone */
    double pull; /* disdp: a worker's pull alone */
};

static int layer_terms(enum zero_model_mode m, const struct zero_model_in *in, int i, struct terms *t, char *err,
                       size_t errlen)
{
    const struct zero_model_layer *l = &in->layers[i];
    double x = in->compute_load_x > 0 ? in->compute_load_x : 1; /* the roles' sharing, timed */
    t->F = x * l->flops_fwd / in->gemm_flops;
    t->B = x * l->flops_bwd / in->gemm_flops;
    if (m == ZERO_MODEL_DISDP) {
        double n = (double)l->numel;
        double pull = stream_s(in, n * (double)in->param_bytes);
        double push = stream_s(in, n * (double)in->grad_bytes);
        t->use = pull;
        t->last = maxd(pull, push);
        t->push = push;
        t->pull = pull;
        if (in->role_links && in->link_gbps > 0) {
            /* the switches' links send W copies of each pull and take W
             * pushes in; the PS's send the pulls, take the sums; each at
             * its own rate (switch_x, ps_x) */
            double W = in->W, K = in->switches > 0 ? in->switches : 1, N = in->ps > 0 ? in->ps : 1;
            double xs = switch_x(in) / K, xp = ps_x(in) / N;
            t->use = maxd(pull, maxd(W * pull * xs, pull * xp));
            t->last = maxd(t->last, maxd(maxd(W * pull + push, pull + W * push) * xs, maxd(pull, push) * xp));
        }
        double ps = in->ps_loaded_params_s > 0 ? in->ps_loaded_params_s : in->ps_params_s;
        t->update = ps > 0 ? n / ps
                                        : maxd(n * in->ps_bytes_per_param / in->storage_Bps, n / in->adam_params_s);
        return 0;
    }
    double S = (double)(l->numel / (uint64_t)in->W + (l->numel % (uint64_t)in->W != 0));
    double ag = ring_s(in, MB_COLL_ALLGATHER, S * (double)in->param_bytes, in->param_bytes);
    double rs = ring_s(in, MB_COLL_REDUCE_SCATTER, S * (double)in->grad_bytes, in->grad_bytes);
    if (!isfinite(ag) || !isfinite(rs))
        return refuse(err, errlen, "model: the collectives profile does not price ring allgather/"
                                   "reduce_scatter_block at %d ranks", in->W);
    t->use = ag;
    t->last = ag + rs;
    t->update = S / (m == ZERO_MODEL_OFFLOAD ? in->pool_adam_params_s : in->adam_params_s);
    return 0;
}

/* A phase term: compute and wire in turn (serial) or overlapped. */
static double phase(enum zero_model_mode m, double compute, double wire)
{
    return m == ZERO_MODEL_SERIAL ? compute + wire : maxd(compute, wire);
}

/* The CPU-sharing term (zero.h): each role's CPU seconds per step and the
 * busiest host's sum over its cores. */
static void cpu_share(enum zero_model_mode m, const struct zero_model_in *in, struct zero_model_step *r)
{
    double mb = in->micro, W = in->W, pb = (double)in->param_bytes, gb = (double)in->grad_bytes;
    double flops = 0, shard = 0, numel = 0;
    for (int i = 0; i < in->nlayers; i++) {
        const struct zero_model_layer *l = &in->layers[i];
        flops += mb * (l->flops_fwd + l->flops_bwd);
        shard += (double)(l->numel / (uint64_t)in->W + (l->numel % (uint64_t)in->W != 0));
        numel += (double)l->numel;
    }
    r->cpu_worker = flops / in->cpu_gemm_flops;
    r->cpu_switch = r->cpu_ps = 0;
    if (m == ZERO_MODEL_DISDP) {
        double pull = 2 * mb * numel * pb, push = numel * gb; /* one worker's agent, one way each */
        r->cpu_worker += (pull + push) / in->cpu_copy_Bps;
        /* the switch: the PS's pulls in and W times out, W pushes in and
         * summed, one sum out; the PS: pulls out, the sum in */
        r->cpu_switch = (pull * (1 + W) + push * (2 * W + 1)) / in->cpu_copy_Bps;
        r->cpu_ps = numel / in->cpu_ps_params_s + (pull + push) / in->cpu_copy_Bps;
    } else {
        double wire = W > 1 ? ((2 * mb - 1) * pb + gb) * shard * (W - 1) : 0; /* per direction */
        r->cpu_worker += shard / in->cpu_adam_params_s + 2 * wire / in->cpu_copy_Bps;
    }
    r->cpu_floor = 0;
    for (int h = 0; h < in->nhosts; h++) {
        const struct zero_model_host *x = &in->hosts[h];
        double f = (x->workers * r->cpu_worker + x->switches * r->cpu_switch + x->ps * r->cpu_ps) / x->cores;
        r->cpu_floor = maxd(r->cpu_floor, f);
    }
}

/* disdp's pull pipeline, as the trace of one step shows it (the roles
 * start each timed step together, so a step begins empty):
 *  - uses j = 0..U-1 (zero_use_layer's order: per micro-batch the forwards,
 *    then the backwards from the head down); the worker posts use j's pull
 *    when use u begins, u the first of j-ZERO_PREFETCH..j with no use of
 *    j's layer in u..j-1 (zero_prefetch_ahead_spare: one buffer per layer,
 *    but the head's backward may follow its forward into a second), and
 *    its pulls arrive one after another on its receive side (t.use each);
 *  - the PS sends the pulls in that order at step start, reading each
 *    layer from storage before its first send (n * param_bytes at
 *    storage_Bps) and sending at its own link's rate (role_links; else
 *    unpaced, 0); the switch forwards a chunk once it has all of it
 *    (store-and-forward): the first chunk is at the switch one chunk after
 *    the PS began sending it, and the pull ends no sooner than one chunk
 *    of the worker's side after the PS's last byte;
 *  - use j computes from max(use j-1's end, its pull's arrival);
 *  - after the last micro-batch's backward of a layer the push goes out on
 *    the send side (t.push, or the switch's W pushes in at its rate);
 *    the worker's step ends with its last compute or its last push.
 * Priced from the calibrated rates only. */
static int pull_pipeline(const struct zero_model_in *in, struct zero_model_step *r, double *pipe, char *err,
                         size_t errlen)
{
    int L = in->nlayers, U = 2 * L * in->micro, N = in->ps > 0 ? in->ps : 1;
    double W = in->W, K = in->switches > 0 ? in->switches : 1;
    double chunk = in->chunk_elems ? (double)in->chunk_elems : 65536;
    int role = in->role_links && in->link_gbps > 0;
    double psT[64] = {0}, arr = 0, end = 0, pd = 0, b[4096], first = -1;
    if (U > 4096 || N > 64)
        return refuse(err, errlen, "model: the pull pipeline prices up to 4096 uses and 64 PS (%d, %d)", U, N);
    for (int j = 0; j < U; j++) {
        int q = j % (2 * L), fwd = q < L, l = fwd ? q : 2 * L - 1 - q, ps = l % N;
        struct terms t;
        if (layer_terms(ZERO_MODEL_DISDP, in, l, &t, err, errlen) != 0)
            return -1;
        double n = (double)in->layers[l].numel, frac = chunk < n ? chunk / n : 1;
        /* the PS's side of this pull */
        if (fwd && j < L)
            psT[ps] += n * (double)in->param_bytes / in->storage_Bps;
        double ps_send = role ? t.pull * ps_x(in) : 0;
        double ps_first = psT[ps] + frac * ps_send;
        psT[ps] += ps_send;
        double ps_end = psT[ps];
        /* the worker's side */
        b[j] = end; /* use j begins when use j-1 ends */
        int u = j;
        for (int k = j - 1; k >= 0 && k >= j - ZERO_PREFETCH; k--) {
            int qk = k % (2 * L), lk = qk < L ? qk : 2 * L - 1 - qk;
            if (lk == l && !(k == j - 1 && qk == L - 1)) /* the head's backward: a second buffer */
                break;
            u = k;
        }
        arr = maxd(maxd(maxd(arr, b[u]), ps_first) + t.use, ps_end + frac * t.use);
        double start = maxd(end, arr);
        if (first < 0)
            first = start;
        end = start + (fwd ? t.F : t.B);
        if (!fwd && j >= U - L) {
            double push = role ? maxd(t.push, W * t.push * switch_x(in) / K) : t.push;
            pd = maxd(pd, end) + push;
        }
    }
    r->pipe_fill = first;
    r->pipe_tail = maxd(0, pd - end);
    *pipe = maxd(end, pd);
    return 0;
}

int zero_model_step(enum zero_model_mode m, const struct zero_model_in *in, struct zero_model_step *out,
                    char *err, size_t errlen)
{
    if (check_inputs(m, in, err, errlen) != 0)
        return -1;
    struct zero_model_step r = {0};
    double mb = in->micro, passes = 0, last_bwd = 0;
    struct terms t;
    for (int i = 0; i < in->nlayers; i++) {
        if (layer_terms(m, in, i, &t, err, errlen) != 0)
            return -1;
        r.compute += mb * (t.F + t.B);
        passes += mb * phase(m, t.F, t.use) + (mb - 1) * phase(m, t.B, t.use);
        last_bwd += phase(m, t.B, t.last);
        r.optimizer += t.update;
        if (m == ZERO_MODEL_DISDP) {
            /* receive 2m pulls, send one push: the busier direction */
            double w = maxd(2 * mb * t.pull, t.push); /* a worker's link */
            if (in->role_links && in->link_gbps > 0) { /* the busiest role's link, either way */
                double W = in->W, K = in->switches > 0 ? in->switches : 1, N = in->ps > 0 ? in->ps : 1;
                double sw = maxd(W * 2 * mb * t.pull + t.push, 2 * mb * t.pull + W * t.push) * switch_x(in) / K;
                w = maxd(w, maxd(sw, w * ps_x(in) / N));
            }
            r.wire += w;
            r.storage += (double)in->layers[i].numel * in->ps_bytes_per_param / in->storage_Bps;
        } else
            r.wire += (2 * mb - 1) * t.use + t.last;
    }
    if (m == ZERO_MODEL_SERIAL || m == ZERO_MODEL_OVERLAP) {
        r.exposed_optimizer = r.optimizer; /* on the compute cores, after backward */
    } else {
        /* The updates on their own cores (offload pool, PS), in backward
         * order: layer l's starts once its last backward term has ended
         * and the previous update is done. */
        double at = 0, done = 0;
        for (int i = in->nlayers - 1; i >= 0; i--) {
            layer_terms(m, in, i, &t, err, errlen); /* priced above: cannot fail */
            at += phase(m, t.B, t.last);
            done = maxd(done, at) + t.update;
        }
        r.exposed_optimizer = maxd(0, done - at);
    }
    r.step = passes + last_bwd + r.exposed_optimizer;
    r.exposed_wire = passes + last_bwd - r.compute;
    if (m == ZERO_MODEL_DISDP && in->pull_pipeline) {
        double pipe;
        if (pull_pipeline(in, &r, &pipe, err, errlen) != 0)
            return -1;
        /* the recurrence's end (compute, every wait, the tail) replaces
         * the per-layer max terms; the PS's exposed update stays after it */
        r.step = pipe + r.exposed_optimizer;
        r.exposed_wire = pipe - r.compute;
    }
    if (in->nhosts > 0) {
        cpu_share(m, in, &r);
        r.step = maxd(r.step, r.cpu_floor);
    }
    *out = r;
    return 0;
}

void zero_model_gpt_layers(const struct nn_gpt_config *cfg, int B, struct zero_model_layer *out)
{
    struct nn_precision prec = {NN_F32, NN_F32, NN_F32};
    for (int i = 0; i < cfg->layers + 2; i++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, i, &a);
        out[i].numel = a.params;
        out[i].flops_fwd = a.flops_fwd;
        out[i].flops_bwd = a.flops_bwd;
    }
}
