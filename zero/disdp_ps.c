/* A parameter server (disdp_internal.h): owns every N-th layer, keeps its fp32
 * master weights and Adam moments in an mb_ostore (files in --dir) and,
 * per step, sends each owned layer's 16-bit parameters twice (forward in
 * layer order, backward in reverse) to the chunks' switches, receives the
 * summed gradient chunks, checks each against its linear checksum and
 * runs Adam on the whole layer (the store's thread, read ahead in
 * backward order); the step ends when every update is written
 * (synchronous: step s+1 sends what step s made). */
#include "disdp_internal.h"
#include "../common/common.h"
#include "../offload/aio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_disdp_ps {
    const struct mb_disdp_cfg *c;
    const struct mb_disdp_ps_opts *o;
    int me, nown;
    int *layer;                 /* owned layers, ascending: tensor i is layer[i] */
    char **names;
    struct mb_ostore_tensor *tensors; /* the store keeps pointing at them */
    char **out;                 /* per owned layer: the parameters on the wire (P32 or P16) */
    char **gin;                 /* per owned layer: the chunks as they arrive (with trailers) */
    float **g;                  /* per owned layer: the mean gradient Adam reads */
    MPI_Request **rreq, *sreq;
    long long t;                /* steps done */
    float scale;                /* Adam's */
    double fixed_scale;         /* the int32 sums' */
    struct mb_ostore *store;
    struct mb_disdp_ps_stats st;
};

static int adam_update(void *ctx, int i, const struct mb_ostore_state *st, const void *grad, char *err, size_t errlen)
{
    struct mb_disdp_ps *p = ctx;
    (void)i, (void)err, (void)errlen;
    /* fp32 on the wire: P32 is what goes out, the 16-bit image is not made */
    int work = p->c->wire != NN_F32;
    nn_adam_step(&p->o->hp, p->t, st->n, st->p32, st->m, st->v, (const float *)grad + st->off, NN_F32, p->scale, work ? st->p16 : NULL,
                 work ? p->c->wire : NN_F32);
    return 0;
}

static void ps_free(struct mb_disdp_ps *p)
{
    if (p->store)
        mb_ostore_close(p->store);
    for (int i = 0; i < p->nown; i++) {
        if (p->names)
            free(p->names[i]);
        if (p->out)
            free(p->out[i]);
        if (p->gin)
            free(p->gin[i]);
        if (p->g)
            free(p->g[i]);
        if (p->rreq)
            free(p->rreq[i]);
    }
    free(p->names);
    free(p->tensors);
    free(p->out);
    free(p->gin);
    free(p->g);
    free(p->rreq);
    free(p->sreq);
    free(p->layer);
}

static size_t packed_bytes(const struct mb_disdp_cfg *c, int l)
{
    return c->numel[l] * 4 + mb_disdp_nchunks(c, l) * MB_DISDP_TRAILER;
}

/* Opens the store and writes every owned layer's initial state. */
static int ps_init(struct mb_disdp_ps *p, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = p->c;
    int idx;
    mb_disdp_role_of(c, p->me, &idx);
    for (int l = idx; l < c->nlayers; l += c->N)
        p->nown++;
    size_t nsend = 0;
    p->layer = calloc((size_t)p->nown + 1, sizeof *p->layer);
    p->names = calloc((size_t)p->nown + 1, sizeof *p->names);
    p->out = calloc((size_t)p->nown + 1, sizeof *p->out);
    p->gin = calloc((size_t)p->nown + 1, sizeof *p->gin);
    p->g = calloc((size_t)p->nown + 1, sizeof *p->g);
    p->rreq = calloc((size_t)p->nown + 1, sizeof *p->rreq);
    struct mb_ostore_tensor *t = p->tensors = calloc((size_t)p->nown + 1, sizeof *t);
    if (!p->layer || !p->names || !p->out || !p->gin || !p->g || !p->rreq || !t)
        goto oom;
    for (int i = 0, l = idx; l < c->nlayers; l += c->N, i++) {
        size_t n = c->numel[l], nc = mb_disdp_nchunks(c, l);
        p->layer[i] = l;
        if (!(p->names[i] = malloc(32)))
            goto oom;
        snprintf(p->names[i], 32, "L%d", l);
        t[i] = (struct mb_ostore_tensor){p->names[i], n};
        p->out[i] = malloc(n * nn_dtype_size(c->wire) + 4);
        p->gin[i] = malloc(packed_bytes(c, l) + 1);
        p->g[i] = malloc(n * 4 + 4);
        p->rreq[i] = calloc(nc + 1, sizeof(MPI_Request));
        if (!p->out[i] || !p->gin[i] || !p->g[i] || !p->rreq[i])
            goto oom;
        nsend += 2 * (size_t)mb_disdp_micro(c) * nc; /* every micro-batch's two pulls */
    }
    if (!(p->sreq = calloc(nsend + 1, sizeof *p->sreq)))
        goto oom;
    struct mb_ostore_opts so = {.dir = p->o->dir, .nfiles = p->o->nfiles, .file_gbps = p->o->file_gbps,
                                .buffered = p->o->buffered, .order = MB_OSTORE_OPTIMIZED, .update = adam_update,
                                .ctx = p, .tensors = t, .ntensors = p->nown, .seed = c->seed,
                                .on_span = p->o->on_span, .span_ctx = p->o->span_ctx};
    if (p->nown && !(p->store = mb_ostore_open(&so, err, errlen)))
        return -1;
    for (int i = 0; i < p->nown; i++) {
        int l = p->layer[i];
        size_t n = c->numel[l];
        float *buf = calloc(n + 1, 4);
        if (!buf)
            goto oom;
        int rc = mb_ostore_rw(p->store, MB_AIO_WRITE, mb_ostore_tensor_extent(p->store, i, MB_OSTORE_M), 0, n * 4, buf,
                              err, errlen) ||
                 mb_ostore_rw(p->store, MB_AIO_WRITE, mb_ostore_tensor_extent(p->store, i, MB_OSTORE_V), 0, n * 4, buf,
                              err, errlen);
        p->o->init(p->o->ctx, l, buf, n);
        uint16_t *p16 = calloc(n + 1, 2); /* written even when unused: every extent is read-checked */
        if (!p16) {
            free(buf);
            goto oom;
        }
        if (c->wire != NN_F32)
            nn_store_f32(p16, c->wire, buf, n);
        rc = rc ||
             mb_ostore_rw(p->store, MB_AIO_WRITE, mb_ostore_tensor_extent(p->store, i, MB_OSTORE_P32), 0, n * 4, buf,
                          err, errlen) ||
             mb_ostore_rw(p->store, MB_AIO_WRITE, mb_ostore_tensor_extent(p->store, i, MB_OSTORE_P16), 0, n * 2, p16,
                          err, errlen);
        free(p16);
        free(buf);
        if (rc)
            return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "PS rank %d: out of memory", p->me);
    return -1;
}

static int send_params(struct mb_disdp_ps *p, int i, enum mb_disdp_phase ph, int *ns)
{
    const struct mb_disdp_cfg *c = p->c;
    int l = p->layer[i];
    size_t ws = nn_dtype_size(c->wire);
    for (size_t k = 0; k < mb_disdp_nchunks(c, l); k++) {
        size_t off, n;
        mb_disdp_chunk_range(c, l, k, &off, &n);
        if (MPI_Isend(p->out[i] + off * ws, (int)(n * ws), MPI_BYTE, mb_disdp_switch_rank(c, l, k),
                      mb_disdp_tag(c, 0, ph, l), c->comm, &p->sreq[(*ns)++]) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

static int post_grads(struct mb_disdp_ps *p, int i)
{
    const struct mb_disdp_cfg *c = p->c;
    int l = p->layer[i];
    char *at = p->gin[i];
    for (size_t k = 0; k < mb_disdp_nchunks(c, l); k++) {
        size_t off, n;
        mb_disdp_chunk_range(c, l, k, &off, &n);
        if (MPI_Irecv(at, (int)(n * 4 + MB_DISDP_TRAILER), MPI_BYTE, mb_disdp_switch_rank(c, l, k),
                      mb_disdp_tag(c, 1, MB_DISDP_FWD, l), c->comm, &p->rreq[i][k]) != MPI_SUCCESS)
            return -1;
        at += n * 4 + MB_DISDP_TRAILER;
    }
    return 0;
}

/* Layer i's chunks are in: checksum each, unpack into the fp32 gradient. */
static int unpack(struct mb_disdp_ps *p, int i, int step, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = p->c;
    int l = p->layer[i];
    const char *at = p->gin[i];
    for (size_t k = 0; k < mb_disdp_nchunks(c, l); k++) {
        size_t off, n;
        mb_disdp_chunk_range(c, l, k, &off, &n);
        double t[2], s, a;
        memcpy(t, at + n * 4, sizeof t);
        mb_disdp_block_sums(at, n, c->agg, &s, &a);
        if (!mb_disdp_sums_match(c->agg, c->W, s, t[0], t[1])) {
            snprintf(err, errlen,
                     "step %d layer %d chunk %zu: the summed gradient from switch rank %d fails the linear checksum "
                     "(%.17g, expected %.17g)",
                     step + 1, l, k, mb_disdp_switch_rank(c, l, k), s, t[0]);
            return -1;
        }
        if (c->agg == MB_DISDP_AGG_FIXED)
            mb_disdp_dequantize((const int32_t *)at, n, p->fixed_scale, p->g[i] + off);
        else
            memcpy(p->g[i] + off, at, n * 4);
        at += n * 4 + MB_DISDP_TRAILER;
    }
    return 0;
}

/* One of the PS's own intervals on the caller's trace (o->on_span). */
static void ps_span(struct mb_disdp_ps *p, const char *what, int l, double t0, double t1)
{
    char name[32];
    if (!p->o->on_span)
        return;
    snprintf(name, sizeof name, "L%d", l);
    p->o->on_span(p->o->span_ctx, what, name, t0, t1);
}

static int ps_step(struct mb_disdp_ps *p, int step, struct mb_disdp_ps_stats *st, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = p->c;
    int ns = 0, micro = mb_disdp_micro(c);
    enum mb_ostore_field f = c->wire == NN_F32 ? MB_OSTORE_P32 : MB_OSTORE_P16;
    p->t = step + 1;
    for (int m = 0; m < micro; m++) {
        for (int i = 0; i < p->nown; i++) {
            /* what the last step wrote (checked against its CRCs), read
             * layer by layer as forward goes: layer i's pull leaves once
             * it is read, not once the whole model is (its send then
             * overlaps the next layer's read) */
            size_t n = c->numel[p->layer[i]];
            if (m == 0 && mb_ostore_rw(p->store, MB_AIO_READ, mb_ostore_tensor_extent(p->store, i, f), 0,
                                       n * nn_dtype_size(c->wire), p->out[i], err, errlen) != 0)
                return -1;
            if (send_params(p, i, MB_DISDP_FWD, &ns) != 0)
                goto mpi;
        }
        for (int i = p->nown - 1; i >= 0; i--)
            if (send_params(p, i, MB_DISDP_BWD, &ns) != 0 || (m == micro - 1 && post_grads(p, i) != 0))
                goto mpi;
    }
    for (int i = p->nown - 1; i >= 0; i--) {
        int l = p->layer[i];
        double t0 = mb_now();
        if (c->on_layer)
            c->on_layer(c->layer_ctx, l);
        if (mb_disdp_waitall(c, (int)mb_disdp_nchunks(c, l), p->rreq[i]) != 0)
            goto mpi;
        double t1 = mb_now();
        ps_span(p, "grad-wait", l, t0, t1);
        if (unpack(p, i, step, err, errlen) != 0)
            return -1;
        double t2 = mb_now();
        ps_span(p, "checksum", l, t1, t2);
        if (mb_ostore_step(p->store, i, p->g[i], err, errlen) != 0)
            return -1;
        ps_span(p, "queue", l, t2, mb_now());
        st->grad_bytes_in += c->numel[l] * 4;
        st->updates++;
        if (c->on_progress)
            c->on_progress(c->progress_ctx, step, l);
    }
    if (mb_disdp_waitall(c, ns, p->sreq) != 0)
        goto mpi;
    for (int i = 0; i < p->nown; i++)
        st->param_bytes_out += 2 * (uint64_t)micro * c->numel[p->layer[i]] * nn_dtype_size(c->wire);
    double t0 = mb_now();
    int rc = p->store ? mb_ostore_drain(p->store, err, errlen) : 0;
    ps_span(p, "drain", -1, t0, mb_now());
    return rc;
mpi:
    snprintf(err, errlen, "PS rank %d: an MPI call failed in step %d", p->me, step + 1);
    return -1;
}

struct mb_disdp_ps *mb_disdp_ps_open(const struct mb_disdp_cfg *c, const struct mb_disdp_ps_opts *o, char *err,
                                     size_t errlen)
{
    struct mb_disdp_ps *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "PS: out of memory");
        return NULL;
    }
    p->c = c;
    p->o = o;
    MPI_Comm_rank(c->comm, &p->me);
    double gs = mb_disdp_grad_scale(c);
    p->scale = c->agg == MB_DISDP_AGG_FIXED ? 1.0f : (float)gs;
    p->fixed_scale = gs;
    if (ps_init(p, err, errlen) != 0) {
        mb_disdp_ps_close(p);
        return NULL;
    }
    p->st.layers = (uint64_t)p->nown;
    return p;
}

int mb_disdp_ps_step(struct mb_disdp_ps *p, char *err, size_t errlen)
{
    return ps_step(p, (int)p->t, &p->st, err, errlen);
}

int mb_disdp_ps_final(struct mb_disdp_ps *p, char *err, size_t errlen)
{
    for (int i = 0; p->o->final && i < p->nown; i++) {
        int l = p->layer[i];
        size_t n = p->c->numel[l];
        float *buf = malloc(n * 4 + 4);
        if (!buf) {
            snprintf(err, errlen, "PS rank %d: out of memory", p->me);
            return -1;
        }
        if (mb_ostore_rw(p->store, MB_AIO_READ, mb_ostore_tensor_extent(p->store, i, MB_OSTORE_P32), 0, n * 4, buf,
                         err, errlen) != 0) {
            free(buf);
            return -1;
        }
        p->o->final(p->o->ctx, l, buf, n);
        free(buf);
    }
    return 0;
}

void mb_disdp_ps_stats(const struct mb_disdp_ps *p, struct mb_disdp_ps_stats *st)
{
    *st = p->st;
    if (p->store) {
        struct mb_ostore_stats os;
        mb_ostore_stats(p->store, &os);
        st->adam_s = os.update_s;
        st->io_busy_s = os.io_busy_s;
        st->stall_s = os.stall_s;
        st->io_bytes = os.read_bytes + os.write_bytes;
    }
}

struct mb_ostore *mb_disdp_ps_store(struct mb_disdp_ps *p)
{
    return p->store;
}

void mb_disdp_ps_close(struct mb_disdp_ps *p)
{
    if (!p)
        return;
    ps_free(p);
    free(p);
}
