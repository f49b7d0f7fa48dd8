/* One synchronous step of the trainer: forward layer by layer with each
 * layer's P16 staged from where the states live (storage -> host ->
 * device, double-buffered), the policy's activations swapped out over
 * the link and the rest released; backward with the swapped ones brought
 * back and the rest recomputed by nn, each layer's G16 copied out and its
 * update started as soon as it lands (ratel) or after the whole backward
 * (zero-infinity); every update drained before the step returns. */
#include "trainer_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- CPU time: the whole process, the link's copy threads, the store's
 * thread (the CPU-sharing term of the model is fed from these) ---------- */

static double proc_cpu(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec : 0;
}

static double thread_cpu(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec : 0;
}

/* Around a synchronous store call (the serial order, zero-infinity's
 * updates): the CPU the process's other threads used meanwhile. The
 * store's work (Adam, CRC32C, I/O) runs in this thread there; what the
 * others burn is mostly OpenBLAS's idle pool yield-spinning while this
 * thread waits on storage, which the overlapped orders (the store's own
 * thread, this one computing) do not have. Left in the profiling step's
 * store CPU (cpu_store_b) it priced the serial order's CPU term 2.6
 * CPU-s over the optimized order's at the quiet reference's batch 8
 * (3.79 against 1.19), so its Algorithm 1 swapped another set (631 MB
 * against 280) and the stages' "backward alone" was another policy's. */
static void sync_store_cpu(struct ratel_trainer *t, double p0, double th0)
{
    t->store_other_cpu += (proc_cpu() - p0) - (thread_cpu() - th0);
}

static double fin(double x)
{
    return isfinite(x) ? x : 0;
}

static double link_cpu(struct ratel_trainer *t, uint64_t *bytes)
{
    double c = 0;
    uint64_t b = 0;
    for (int d = 0; d < 2; d++) {
        struct mb_link_stats ls;
        mb_link_stats(t->link, d, &ls);
        c += fin(ls.cpu_s);
        b += ls.bytes;
    }
    if (bytes)
        *bytes = b;
    return c;
}

/* The process's CPU-seconds less the link's and the store's threads: the
 * trainer's thread and the BLAS threads, what a compute call uses. */
static double own_cpu(struct ratel_trainer *t)
{
    double c = proc_cpu() - link_cpu(t, NULL);
    if (t->store) {
        struct mb_ostore_stats ss;
        mb_ostore_stats(t->store, &ss);
        c -= fin(ss.thread_cpu_s);
    }
    return c;
}

/* ---- P16 staging: begin (storage read submitted), mid (read waited, link
 * copy queued), ready (link copy waited: the device pointer to bind) ---- */

static int stage_begin(struct ratel_trainer *t, int i, int s, char *err, size_t errlen)
{
    if (!t->states_on_store)
        return 0;
    return mb_ostore_submit(t->store, MB_AIO_READ, mb_ostore_tensor_extent(t->store, i, MB_OSTORE_P16),
                            0, t->np[i] * 2, t->host_p16[s], &t->p16_io[s], err, errlen);
}

static int stage_mid(struct ratel_trainer *t, int i, int s, char *err, size_t errlen)
{
    if (t->o.system == RATEL_SYS_NO_OFFLOAD)
        return 0;
    const void *src = t->p16[i];
    if (t->states_on_store) {
        int rc = mb_ostore_wait(t->p16_io[s], err, errlen);
        t->p16_io[s] = NULL;
        if (rc != 0)
            return -1;
        src = t->host_p16[s];
    }
    t->p16_tk[s] = mb_link_copy(t->link, MB_LINK_H2D, t->dev_p16[s], src, t->np[i] * 2);
    return 0;
}

static void *stage_ready(struct ratel_trainer *t, int i, int s)
{
    if (t->o.system == RATEL_SYS_NO_OFFLOAD)
        return t->p16[i];
    mb_link_wait(t->link, t->p16_tk[s]);
    return t->dev_p16[s];
}

/* ---- activations ------------------------------------------------------ */

/* A swapped tensor's block of the host arena; what it took there (its
 * alignment included) counts in act_alloc, the rest of the step's host
 * bytes being its transient ones (MEM_avail leaves those out). */
static void *host_act(struct ratel_trainer *t, size_t bytes, char *err, size_t errlen)
{
    size_t used = mb_arena_used(t->host);
    void *p = mb_arena_alloc(t->host, bytes, 64, err, errlen);
    if (p)
        t->act_alloc += mb_arena_used(t->host) - used;
    return p;
}

/* Layer i's intra tensors get memory in device region r (its own offsets
 * there), contents to be written (forward) or recomputed (backward). */
static int attach_region(struct ratel_trainer *t, int i, int r)
{
    struct nn_layer *l = t->layer[i];
    char *p = t->region[r];
    uint64_t bytes;
    /* the input first: in the region when it is swapped out, else in the
     * step's own device buffer (its slot in the region then stays unused) */
    if (i > 0) {
        size_t in = nn_tensor_bytes(nn_layer_act_inter(l));
        if (nn_layer_bind_inter(l, t->inter_dev[i] ? t->inter_dev[i] : (void *)p) != 0)
            return -1;
        p += (in + 63) / 64 * 64;
    }
    for (int j = 0; nn_layer_intra_account(l, j, &bytes, NULL) == 0; j++) {
        if (nn_layer_intra_attach(l, j, p, 0) != 0)
            return -1;
        p += (bytes + 63) / 64 * 64;
    }
    return 0;
}

/* ---- activations on storage: chunks through the staging slots ---------
 * Forward: a chunk's copy out over the link lands in a slot, then the slot
 * is written to the tensor's extent (submitted once the copy is done:
 * spill_pump, after each layer); a slot is reused once its write is done.
 * Backward: the chunks in the order it consumes them (t->rd), read ahead
 * into the slots (chunk q in slot q % TR_ACT_SLOTS), each read CRC-checked
 * (mb_ostore_wait), then copied in over the link. */

static int unit_of(const struct ratel_trainer *t, int layer, int tensor)
{
    int k = t->ubase[layer];
    if (k < 0)
        return -1;
    k += tensor < 0 ? 0 : 1 + tensor;
    return k < t->nu && t->u[k].layer == layer && t->u[k].tensor == tensor ? k : -1;
}

/* The slot's write submitted (its copy out waited for when block, else
 * only if done); 0 or -1. */
static int slot_submit_write(struct ratel_trainer *t, struct tr_slot *sl, int block, char *err, size_t errlen)
{
    if (sl->state != TR_SLOT_D2H || (!block && !mb_link_test(t->link, sl->tk)))
        return 0;
    mb_link_wait(t->link, sl->tk);
    if (mb_ostore_submit(t->store, MB_AIO_WRITE, t->act_ext[sl->unit], sl->off, sl->len, sl->buf, &sl->io,
                         err, errlen) != 0)
        return -1;
    sl->state = TR_SLOT_WRITE;
    return 0;
}

/* Whatever the slot holds finished: its write done, its copy in done. */
static int slot_settle(struct ratel_trainer *t, struct tr_slot *sl, char *err, size_t errlen)
{
    if (slot_submit_write(t, sl, 1, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (sl->state == TR_SLOT_WRITE || sl->state == TR_SLOT_READ) {
        rc = mb_ostore_wait(sl->io, err, errlen);
        sl->io = NULL;
    } else if (sl->state == TR_SLOT_H2D) {
        mb_link_wait(t->link, sl->tk);
    }
    sl->state = TR_SLOT_FREE;
    return rc;
}

/* The slots' writes submitted, oldest first (from slot_next round), so
 * the first chunk's write starts while the later ones still copy out;
 * block: each copy out waited for, else only the ones done submitted. */
static int spill_pump(struct ratel_trainer *t, int block, char *err, size_t errlen)
{
    for (int n = 0; n < TR_ACT_SLOTS; n++)
        if (slot_submit_write(t, &t->slot[(t->slot_next + n) % TR_ACT_SLOTS], block, err, errlen) != 0)
            return -1;
    return 0;
}

int tr_act_settle(struct ratel_trainer *t, char *err, size_t errlen)
{
    int rc = 0;
    for (int k = 0; k < TR_ACT_SLOTS; k++)
        if (slot_settle(t, &t->slot[k], err, errlen) != 0 && rc == 0)
            rc = -1; /* (the others still waited for: their buffers stay ours) */
    t->slot_next = 0;
    return rc;
}

/* Unit k's tensor (src, bytes) out to its extent, chunk by chunk. */
static int spill_out(struct ratel_trainer *t, int k, const void *src, size_t bytes, char *err, size_t errlen)
{
    for (size_t off = 0; off < bytes; off += TR_ACT_CHUNK) {
        struct tr_slot *sl = &t->slot[t->slot_next];
        t->slot_next = (t->slot_next + 1) % TR_ACT_SLOTS;
        if (slot_settle(t, sl, err, errlen) != 0)
            return -1;
        sl->unit = k;
        sl->off = off;
        sl->len = bytes - off < TR_ACT_CHUNK ? bytes - off : TR_ACT_CHUNK;
        sl->tk = t->act_d2h = mb_link_copy(t->link, MB_LINK_D2H, sl->buf, (const char *)src + off, sl->len);
        sl->state = TR_SLOT_D2H;
    }
    t->st.act_swapped += bytes;
    t->act_stored += bytes;
    return 0;
}

/* Backward's reads submitted up to TR_ACT_SLOTS ahead of the next one it
 * consumes; a slot still copying in is waited for only when chunk `need`
 * (or an earlier one) must go out now (-1: never). */
static int fill_reads(struct ratel_trainer *t, int need, char *err, size_t errlen)
{
    while (t->rd_next < t->nrd && t->rd_next < t->rd_used + TR_ACT_SLOTS) {
        struct tr_slot *sl = &t->slot[t->rd_next % TR_ACT_SLOTS];
        if (sl->state == TR_SLOT_H2D && t->rd_next > need && !mb_link_test(t->link, sl->tk))
            break;
        if (slot_settle(t, sl, err, errlen) != 0)
            return -1;
        const struct tr_chunk *c = &t->rd[t->rd_next];
        if (mb_ostore_submit(t->store, MB_AIO_READ, t->act_ext[c->unit], c->off, c->len, sl->buf, &sl->io, err,
                             errlen) != 0)
            return -1;
        sl->state = TR_SLOT_READ;
        sl->unit = c->unit;
        t->rd_next++;
    }
    return 0;
}

/* Unit k's chunks (the next ones backward consumes) read, checked and
 * copied in over the link to dst; *last: the last copy's ticket. */
static int unspill(struct ratel_trainer *t, int k, void *dst, mb_link_ticket *last, char *err, size_t errlen)
{
    while (t->rd_used < t->nrd && t->rd[t->rd_used].unit == k) {
        int q = t->rd_used;
        if (fill_reads(t, q, err, errlen) != 0)
            return -1;
        struct tr_slot *sl = &t->slot[q % TR_ACT_SLOTS];
        int rc = mb_ostore_wait(sl->io, err, errlen); /* the CRC32C of every block checked */
        sl->io = NULL;
        sl->state = TR_SLOT_FREE;
        if (rc != 0)
            return -1;
        const struct tr_chunk *c = &t->rd[q];
        sl->tk = *last = mb_link_copy(t->link, MB_LINK_H2D, (char *)dst + c->off, sl->buf, c->len);
        sl->state = TR_SLOT_H2D;
        t->rd_used++;
    }
    return 0;
}

/* The step's storage plan from the swap set: which units go to storage
 * (ratel_spill_units at MEM_avail), the staging slots (first use), and
 * backward's chunk order (layers top down; in a layer its intra tensors,
 * then its input, as swap_in consumes them). */
static int plan_spill(struct ratel_trainer *t, double mem_avail, char *err, size_t errlen)
{
    double stored = t->store ? ratel_spill_units(t->u, t->nu, t->swap, mem_avail, t->on_store) : 0;
    if (!t->store)
        memset(t->on_store, 0, (size_t)t->nu);
    t->nrd = 0;
    if (!(stored > 0))
        return 0;
    size_t chunks = 0;
    for (int k = 0; k < t->nu; k++)
        if (t->on_store[k])
            chunks += ((size_t)tr_unit_bytes(t, k) + TR_ACT_CHUNK - 1) / TR_ACT_CHUNK;
    free(t->rd);
    t->rd = calloc(chunks + 1, sizeof(*t->rd));
    if (!t->rd) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < TR_ACT_SLOTS; k++)
        if (!t->slot[k].buf && posix_memalign((void **)&t->slot[k].buf, 4096, TR_ACT_CHUNK) != 0) {
            t->slot[k].buf = NULL;
            snprintf(err, errlen, "out of memory for the activations' staging slots");
            return -1;
        }
    for (int l = t->nl - 1; l > 0; l--)
        for (int j = 0; j <= TR_MAX_INTRA; j++) {
            int k = unit_of(t, l, j < TR_MAX_INTRA ? j : -1);
            if (k < 0 || !t->on_store[k])
                continue;
            for (size_t off = 0, b = (size_t)tr_unit_bytes(t, k); off < b; off += TR_ACT_CHUNK)
                t->rd[t->nrd++] = (struct tr_chunk){k, off, b - off < TR_ACT_CHUNK ? b - off : TR_ACT_CHUNK, NULL};
        }
    return 0;
}

static int swap_out(struct ratel_trainer *t, int i, char *err, size_t errlen)
{
    struct nn_layer *l = t->layer[i];
    int inter = 0;
    unsigned mask = ratel_layer_mask(t->u, t->nu, t->swap, i, &inter);
    struct nn_tensor *ts[TR_MAX_INTRA];
    int k = (int)nn_layer_act_intra(l, ts, TR_MAX_INTRA);
    if (spill_pump(t, 0, err, errlen) != 0) /* the earlier layers' chunks out to storage */
        return -1;
    for (int j = 0; j < k; j++) {
        size_t bytes = nn_tensor_bytes(ts[j]);
        int ku = unit_of(t, i, j);
        t->act_host[i][j] = NULL;
        if ((mask >> j & 1) && ku >= 0 && t->on_store[ku]) {
            if (spill_out(t, ku, ts[j]->data, bytes, err, errlen) != 0)
                return -1;
        } else if (mask >> j & 1) {
            if (!(t->act_host[i][j] = host_act(t, bytes, err, errlen)))
                return -1;
            t->act_d2h = mb_link_copy(t->link, MB_LINK_D2H, t->act_host[i][j], ts[j]->data, bytes);
            t->st.act_swapped += bytes;
        }
        if (!nn_layer_intra_release(l, j)) {
            snprintf(err, errlen, "layer %d: intra tensor %d not present after forward", i, j);
            return -1;
        }
    }
    t->inter_host[i] = NULL;
    if (inter) {
        struct nn_tensor *x = nn_layer_act_inter(l);
        size_t bytes = nn_tensor_bytes(x);
        int ku = unit_of(t, i, -1);
        if (ku >= 0 && t->on_store[ku]) {
            if (spill_out(t, ku, x->data, bytes, err, errlen) != 0)
                return -1;
        } else {
            if (!(t->inter_host[i] = host_act(t, bytes, err, errlen)))
                return -1;
            t->act_d2h = mb_link_copy(t->link, MB_LINK_D2H, t->inter_host[i], x->data, bytes);
            t->st.act_swapped += bytes;
        }
    }
    t->region_d2h[i & 1] = t->act_d2h;
    /* This layer's chunks go to storage now, each once its copy out is
     * done, so their writes run under the next layer's compute. Left to
     * the next swap_out's pump (submitted only once that layer's compute
     * had ended), they ran with the trainer waiting: its spill_out reuses
     * those slots, about 55 MB at the capped 0.6 GB/s per spilled layer,
     * added to forward. The wait here is the link's (4 GB/s). */
    return t->act_stored > 0 ? spill_pump(t, 1, err, errlen) : 0;
}

/* A layer input the policy does not swap stays on the device the whole
 * step: a buffer of its own from the device arena (given back at the
 * step's end), so a policy that keeps inputs needs more than --plan's
 * device bytes, which count the inputs swapped (the paper's minimum). */
static int keep_input(struct ratel_trainer *t, int i, char *err, size_t errlen)
{
    int inter = 0;
    ratel_layer_mask(t->u, t->nu, t->swap, i, &inter);
    t->inter_dev[i] = NULL;
    if (inter)
        return 0;
    size_t in = nn_tensor_bytes(nn_layer_act_inter(t->layer[i]));
    t->inter_dev[i] = mb_arena_alloc(t->dev, (in + 63) / 64 * 64, 64, err, errlen);
    return t->inter_dev[i] ? 0 : -1;
}

/* Layer i's host-held swapped tensors (and its input, when host-held)
 * copied in over the link into region r, not waited for: called for the
 * layer below while the layer above runs its backward (the region it
 * takes is the one the layer two above ran in, done by then; the same
 * two regions --plan counts, so no device bytes are added). Tensors on
 * storage stay with swap_in (their reads run ahead into the staging
 * slots; their copies in wait on those reads). The input is filled with
 * a pattern first, so what backward reads really came over the link. */
static int prefetch(struct ratel_trainer *t, int i, int r, char *err, size_t errlen)
{
    t->pf_layer = -1;
    if (!t->release_acts || i <= 0)
        return 0;
    struct nn_layer *l = t->layer[i];
    mb_link_wait(t->link, t->act_d2h); /* (forward's last copy out: long done) */
    if (attach_region(t, i, r) != 0) {
        snprintf(err, errlen, "layer %d: attaching a swapped activation failed", i);
        return -1;
    }
    struct nn_tensor *ts[TR_MAX_INTRA];
    nn_layer_act_intra(l, ts, TR_MAX_INTRA);
    mb_link_ticket last = 0;
    unsigned back = 0;
    uint64_t bytes;
    for (int j = 0; j < TR_MAX_INTRA && nn_layer_intra_name(l, j); j++) {
        if (nn_layer_intra_account(l, j, &bytes, NULL) != 0 || !t->act_host[i][j])
            continue;
        last = mb_link_copy(t->link, MB_LINK_H2D, ts[j]->data, t->act_host[i][j], bytes);
        back |= 1u << j;
        t->st.act_prefetched += bytes;
    }
    int inter = 0;
    if (t->inter_host[i]) {
        struct nn_tensor *x = nn_layer_act_inter(l);
        memset(x->data, 0xa5, nn_tensor_bytes(x));
        last = mb_link_copy(t->link, MB_LINK_H2D, x->data, t->inter_host[i], nn_tensor_bytes(x));
        t->st.act_prefetched += nn_tensor_bytes(x);
        inter = 1;
    }
    t->pf_layer = i;
    t->pf_back = back;
    t->pf_inter = inter;
    t->pf_tk = last;
    return 0;
}

/* Into region r: the swapped tensors copied back (the region holds
 * another layer's data by now, so what backward reads really came back
 * over the link), the rest left to be recomputed there. The host-held
 * ones were copied in ahead (prefetch, while the layer above ran) and
 * are only waited for here. */
static int swap_in(struct ratel_trainer *t, int i, int r, char *err, size_t errlen)
{
    struct nn_layer *l = t->layer[i];
    int ahead = t->pf_layer == i;
    mb_link_wait(t->link, t->act_d2h);
    if (!ahead && attach_region(t, i, r) != 0) {
        snprintf(err, errlen, "layer %d: attaching a swapped activation failed", i);
        return -1;
    }
    struct nn_tensor *ts[TR_MAX_INTRA];
    nn_layer_act_intra(l, ts, TR_MAX_INTRA);
    mb_link_ticket last = ahead ? t->pf_tk : 0;
    int any = ahead && (t->pf_back || t->pf_inter);
    uint64_t bytes;
    unsigned back = ahead ? t->pf_back : 0; /* intra tensors brought back (host or storage) */
    for (int j = 0; j < TR_MAX_INTRA && nn_layer_intra_name(l, j); j++) {
        if (nn_layer_intra_account(l, j, &bytes, NULL) != 0)
            continue;
        int ku = unit_of(t, i, j);
        if (t->act_host[i][j]) {
            if (ahead)
                continue; /* copied in ahead */
            last = mb_link_copy(t->link, MB_LINK_H2D, ts[j]->data, t->act_host[i][j], bytes);
            any = 1;
            back |= 1u << j;
        } else if (ku >= 0 && t->swap[ku] && t->on_store[ku]) {
            mb_link_ticket tk = 0;
            if (unspill(t, ku, ts[j]->data, &tk, err, errlen) != 0)
                return -1;
            last = tk > last ? tk : last;
            any = 1;
            back |= 1u << j;
        }
    }
    int kin = unit_of(t, i, -1);
    if (t->inter_host[i] && !ahead) {
        struct nn_tensor *x = nn_layer_act_inter(l);
        memset(x->data, 0xa5, nn_tensor_bytes(x));
        last = mb_link_copy(t->link, MB_LINK_H2D, x->data, t->inter_host[i], nn_tensor_bytes(x));
        any = 1;
    } else if (!t->inter_host[i] && kin >= 0 && t->swap[kin] && t->on_store[kin]) {
        struct nn_tensor *x = nn_layer_act_inter(l);
        memset(x->data, 0xa5, nn_tensor_bytes(x));
        mb_link_ticket tk = 0;
        if (unspill(t, kin, x->data, &tk, err, errlen) != 0)
            return -1;
        last = tk > last ? tk : last;
        any = 1;
    }
    t->pf_layer = -1;
    if (any)
        mb_link_wait(t->link, last);
    /* the layers below: their chunks read ahead while this one runs */
    if (fill_reads(t, -1, err, errlen) != 0)
        return -1;
    for (int j = 0; j < TR_MAX_INTRA && nn_layer_intra_name(l, j); j++)
        if ((back >> j & 1) && nn_layer_intra_attach(l, j, ts[j]->data, 1) != 0) {
            snprintf(err, errlen, "layer %d: attaching a swapped activation failed", i);
            return -1;
        }
    return 0;
}

/* ---- the passes ------------------------------------------------------- */

/* The optimizer reads of the ra_n layers read ahead (tr_read_ahead_layer),
 * the k-th once layer (k+1) nl / (ra_n+1)'s P16 read two ahead is queued:
 * spread over forward, so no P16 read waits behind them all */
static int read_ahead_at(struct ratel_trainer *t, int i, char *err, size_t errlen)
{
    for (int k = 0; k < t->ra_n; k++)
        if (i == (k + 1) * t->nl / (t->ra_n + 1) &&
            mb_ostore_read_ahead(t->store, tr_read_ahead_layer(t, k), err, errlen) != 0)
            return -1;
    return 0;
}

static int forward(struct ratel_trainer *t, const int32_t *tok, const int32_t *tgt, double *loss,
                   double *compute_s, char *err, size_t errlen)
{
    int L = t->o.cfg.layers, cur = 0;
    /* P16 read two layers ahead: layer i's host slot is free once its
     * copy in is done (stage_ready), so layer i+2's read goes there before
     * layer i's spill writes are submitted, and is not queued on the
     * files behind them; the same two host slots (--plan's). */
    if (stage_begin(t, 0, 0, err, errlen) || (t->nl > 1 && stage_begin(t, 1, 1, err, errlen)) ||
        stage_mid(t, 0, 0, err, errlen))
        return -1;
    for (int i = 0; i < t->nl; i++) {
        int s = i & 1;
        struct nn_layer *l = t->layer[i];
        nn_layer_bind_params(l, stage_ready(t, i, s));
        if ((i + 2 < t->nl && stage_begin(t, i + 2, s, err, errlen)) || read_ahead_at(t, i, err, errlen))
            return -1;
        if (t->release_acts && i > 0) { /* the region's last user copied out */
            if (keep_input(t, i, err, errlen) != 0)
                return -1;
            mb_link_wait(t->link, t->region_d2h[i & 1]);
            if (attach_region(t, i, i & 1) != 0) {
                snprintf(err, errlen, "layer %d: attaching its activations failed", i);
                return -1;
            }
        }
        double c0 = own_cpu(t), t0 = mb_now();
        int rc;
        if (i == 0)
            rc = nn_layer_forward(l, tok, t->h[0]);
        else if (i <= L) {
            rc = nn_layer_forward(l, t->h[cur], t->h[1 - cur]);
            cur ^= 1;
        } else
            rc = nn_layer_forward_head(l, t->h[cur], tgt, loss);
        double t1 = mb_now();
        t->gemm_cpu += own_cpu(t) - c0;
        *compute_s += t1 - t0;
        tr_span(t, "fwd", t->lname[i], t0, t1);
        if (rc != 0) {
            snprintf(err, errlen, "layer %d: forward failed", i);
            return -1;
        }
        if (t->release_acts && i > 0 && swap_out(t, i, err, errlen))
            return -1;
        if (i + 1 < t->nl && stage_mid(t, i + 1, s ^ 1, err, errlen))
            return -1;
    }
    /* every chunk on storage before backward reads any */
    return tr_act_settle(t, err, errlen);
}

/* Layer i's gradients (device slot g) start toward where its update runs:
 * no-offload updates on the device now; the others copy G16 out. */
static int update(struct ratel_trainer *t, int i, int g, char *err, size_t errlen)
{
    uint64_t n = t->np[i];
    if (t->o.system == RATEL_SYS_NO_OFFLOAD) {
        nn_adam_step(&t->o.hp, t->t, n, t->p32[i], t->m[i], t->v[i], t->dev_g16[g], t->o.prec.grad,
                     1.0f, t->p16[i], t->o.prec.param);
        return 0;
    }
    /* ratel: the host slot is free once the store's update of the
     * gradient it held (two layers up) has run */
    if (t->o.system == RATEL_SYS_RATEL && t->g16_step[g] &&
        mb_ostore_wait_updated(t->store, t->g16_step[g], err, errlen) != 0)
        return -1;
    t->g16_tk[g] = mb_link_copy(t->link, MB_LINK_D2H, t->host_g16[i], t->dev_g16[g], n * 2);
    return 0;
}

/* Layer i's G16 has landed (waited for one layer later, so the copy
 * overlaps the next layer's backward): its update runs (zero-offload) or
 * is handed to the store (ratel). */
static int land(struct ratel_trainer *t, int i, int g, char *err, size_t errlen)
{
    const struct nn_adam *hp = &t->o.hp;
    enum nn_dtype gd = t->o.prec.grad, pd = t->o.prec.param;
    if (i < 0 || t->o.system == RATEL_SYS_NO_OFFLOAD || t->o.system == RATEL_SYS_ZERO_INFINITY)
        return 0; /* no-offload: done; zero-infinity: after the whole backward */
    uint64_t n = t->np[i]; /* (i is -1 past the first layer: read only after the check) */
    mb_link_wait(t->link, t->g16_tk[g]);
    if (t->o.system == RATEL_SYS_ZERO_OFFLOAD) {
        double t0 = mb_now();
        nn_adam_step(hp, t->t, n, t->p32[i], t->m[i], t->v[i], t->host_g16[i], gd, 1.0f, t->p16[i], pd);
        tr_span(t, "update", t->lname[i], t0, mb_now());
        return 0;
    }
    t->g16_step[g] = ++t->queued;
    double t0 = mb_now(), p0 = proc_cpu(), th0 = thread_cpu();
    int rc = mb_ostore_step(t->store, i, t->host_g16[i], err, errlen);
    t->st.store_caller_s += mb_now() - t0;
    if (t->o.order == MB_OSTORE_SERIAL)
        sync_store_cpu(t, p0, th0);
    return rc;
}

/* The fused blocks' forward stages' seconds so far (in backward: the
 * recompute) and their backward stages'. */
static double stage_sum(const struct nn_stage_times *st, int bwd)
{
    double s = 0;
    for (int k = bwd ? NN_ST_BWD_COPIES : 0; k < (bwd ? NN_STAGE_COUNT : NN_ST_BWD_COPIES); k++)
        s += st->t[k];
    return s;
}

static int backward(struct ratel_trainer *t, double *recompute, char *err, size_t errlen)
{
    int cur = 0, top = t->nl - 1, prev = -1, prev_g = 0;
    t->st.bwd_compute_s = t->st.bwd_recompute_s = t->st.bwd_swapin_s = t->st.bwd_stage_s = 0;
    if (stage_begin(t, top, 0, err, errlen) || stage_mid(t, top, 0, err, errlen))
        return -1;
    t->rd_next = t->rd_used = 0;
    t->pf_layer = -1;
    t->st.act_prefetched = 0;
    if (fill_reads(t, -1, err, errlen) != 0) /* the first chunks backward will want */
        return -1;
    if (prefetch(t, top, 0, err, errlen) != 0) /* the top layer's, in its region (k = 0) */
        return -1;
    for (int k = 0; k < t->nl; k++) {
        int i = top - k, s = k & 1, g = k & 1;
        if (i > 0 && stage_begin(t, i - 1, s ^ 1, err, errlen))
            return -1;
        struct nn_layer *l = t->layer[i];
        double w0 = mb_now();
        nn_layer_bind_params(l, stage_ready(t, i, s));
        if (t->o.system != RATEL_SYS_NO_OFFLOAD && k >= 2)
            mb_link_wait(t->link, t->g16_tk[g]);
        double w1 = mb_now();
        t->st.bwd_stage_s += w1 - w0;
        tr_span(t, "wait", "p16+g16", w0, w1);
        nn_layer_bind_grads(l, t->dev_g16[g]);
        nn_layer_zero_grad(l);
        if (t->release_acts && i > 0 && swap_in(t, i, k & 1, err, errlen) != 0)
            return -1;
        /* the layer below's host-held tensors start over the link now, into
         * the other region (the layer above's, done), so its swap_in finds
         * them there instead of waiting out the copies (about 0.013 s a
         * layer at 50 MB when they started then) */
        if (i > 1 && prefetch(t, i - 1, (k + 1) & 1, err, errlen) != 0)
            return -1;
        double w2 = mb_now();
        t->st.bwd_swapin_s += w2 - w1;
        tr_span(t, "wait", "swap-in", w1, w2);
        *recompute += nn_layer_recompute_flops(l);
        double rc0 = stage_sum(&t->stimes, 0);
        double c0 = own_cpu(t), t0 = mb_now();
        int rc;
        if (i == top)
            rc = nn_layer_backward(l, NULL, t->dh[cur]);
        else if (i >= 1) {
            rc = nn_layer_backward(l, t->dh[cur], t->dh[1 - cur]);
            cur ^= 1;
        } else
            rc = nn_layer_backward(l, t->dh[cur], NULL);
        double t1 = mb_now(), rcs = stage_sum(&t->stimes, 0) - rc0;
        t->gemm_cpu += own_cpu(t) - c0;
        t->st.bwd_compute_s += t1 - t0;
        t->st.bwd_recompute_s += rcs;
        tr_span(t, "bwd", t->lname[i], t0, t1);
        if (rcs > 0) /* (inside the bwd span, first: the recompute runs before the backward stages) */
            tr_span(t, "recompute", t->lname[i], t0, t0 + rcs);
        if (rc != 0) {
            snprintf(err, errlen, "layer %d: backward failed", i);
            return -1;
        }
        if (update(t, i, g, err, errlen) != 0 || land(t, prev, prev_g, err, errlen) != 0)
            return -1;
        prev = i;
        prev_g = g;
        if (i > 0 && stage_mid(t, i - 1, s ^ 1, err, errlen))
            return -1;
    }
    if (land(t, prev, prev_g, err, errlen) != 0)
        return -1;
    double tail0 = mb_now();
    if (t->o.system == RATEL_SYS_ZERO_INFINITY) {
        mb_link_wait(t->link, t->g16_tk[(t->nl - 1) & 1]);
        double p0 = proc_cpu(), th0 = thread_cpu();
        for (int i = top; i >= 0; i--)
            if (mb_ostore_step(t->store, i, t->host_g16[i], err, errlen) != 0)
                return -1;
        sync_store_cpu(t, p0, th0);
    }
    int rc = t->store ? mb_ostore_drain(t->store, err, errlen) : 0;
    t->st.store_caller_s += mb_now() - tail0;
    return rc;
}

/* ---- the policy: the profiling step's rates, then the choice ---------- */

static double rate_of(double bytes, double s, double fallback)
{
    return bytes > 0 && s > 0 ? bytes / s : fallback;
}

/* The policy's swap set: swapped bytes up to hw->mem_avail in the host
 * arena, the rest to storage (the lowest layers' tensors: plan_spill);
 * host-only walks capped at it and is refused (exit 1 naming the arena)
 * when even the block inputs do not fit. */
static int choose(struct ratel_trainer *t, enum ratel_act act, const unsigned char *given,
                  const struct ratel_hw *hw, char *err, size_t errlen)
{
    struct ratel_model mdl;
    ratel_trainer_model(t, &mdl);
    /* after the profiling step the units' recompute is priced by time */
    const struct ratel_unit *u = t->st.recompute_priced_all > 0 ? t->u_priced : t->u;
    if (given) { /* the set given (--swap-set), priced at these rates */
        if (ratel_act_given(&mdl, hw, u, t->nu, given, t->swap, &t->st.choice) != 0) {
            snprintf(err, errlen, "--swap-set: a bad unit table");
            return -1;
        }
        return plan_spill(t, hw->mem_avail, err, errlen);
    }
    if (ratel_act_choose_host(act, &mdl, hw, u, t->nu, t->o.case1, t->swap, &t->st.choice) != 0) {
        snprintf(err, errlen,
                 "--act %s: host-mem: its block-input activations (%.0f bytes) exceed the host arena's %.0f bytes "
                 "free for them", ratel_act_name(act), mdl.act_inter, hw->mem_avail);
        return -1;
    }
    return plan_spill(t, hw->mem_avail, err, errlen);
}

/* step_peak: the step's host-arena bytes at their most (peak above its
 * mark); the arena is back at its mark now. */
static void measure(struct ratel_trainer *t, double fwd_compute_s, const struct ratel_cpu_sample *cpu,
                    uint64_t step_peak, struct ratel_hw *hw)
{
    /* the cores' sharing: backward's compute calls (the store's threads
     * beside them) against forward's rate (nearly alone) */
    double bwd_flops = cpu->flops_done, fwd_flops_all = 0;
    double flops = 0;
    for (int i = 0; i < t->nl; i++) {
        struct nn_layer_account a;
        nn_layer_account(t->layer[i], &a);
        flops += a.flops_fwd;
    }
    struct mb_link_stats ls[2];
    mb_link_stats(t->link, MB_LINK_H2D, &ls[0]);
    mb_link_stats(t->link, MB_LINK_D2H, &ls[1]);
    double link = t->o.link_gbps * 1e9;
    hw->gemm_flops = rate_of(flops, fwd_compute_s, 1e9);
    fwd_flops_all = flops;
    hw->link_m2g = link > 0 ? link : rate_of((double)ls[0].bytes, ls[0].busy_s, 1e10);
    hw->link_g2m = link > 0 ? link : rate_of((double)ls[1].bytes, ls[1].busy_s, 1e10);
    struct mb_ostore_stats ss = {0};
    if (t->store)
        mb_ostore_stats(t->store, &ss);
    /* Eq. 5 adds read and write time, as if they ran in turn, and they do:
     * a file (its rate cap) serves both. So each term's rate is the files'
     * rate with the device to itself: bytes of both over the time either was
     * in flight. Each direction's bytes over its own busy time was measured
     * while the other shared the files (the optimized order overlaps them),
     * about half the rate, and the storage term came out twice too long.
     * At most the capped files' rate: the buckets' bursts after idle gaps
     * (ratel_stor_rate) measured 0.79 GB/s against 0.6 of caps, so T_b's
     * storage term, spilled activations and the optimizer's traffic on the
     * same files, came out 25% short and Algorithm 1 spilled where
     * recomputing was cheaper. */
    double both = ratel_stor_rate((double)(ss.read_bytes + ss.write_bytes), ss.io_busy_s, t->o.nfiles,
                                  t->o.file_gbps);
    hw->stor_read = ss.read_bytes ? both : 1e12;
    hw->stor_write = ss.write_bytes ? both : 1e12;
    /* MEM_avail: what the arena has free between steps, less the step's
     * transient host bytes (its peak less its activations) and the 64-byte
     * rounding any swap set may add */
    hw->mem_avail = ratel_host_mem_avail(mb_arena_free_bytes(t->host), step_peak, t->act_alloc, t->u, t->nu);
    t->st.host_transient = step_peak > t->act_alloc ? step_peak - t->act_alloc : 0;
    ratel_cpu_inputs(cpu, mb_pu_count(), hw);
    /* the store's tail: the profiling step's final drain (an overlapped
     * order's; under serial the whole optimizer runs there, not a tail) */
    hw->store_tail_s = t->o.system == RATEL_SYS_RATEL && t->o.order != MB_OSTORE_SERIAL ? t->st.store_caller_s : 0;
    /* the units' recompute priced by time from this forward's stages; the
     * profiling step's own recompute (every intra unit, or whole blocks)
     * priced the same way in the sharing's calibration below */
    double priced = ratel_rc_price_units(&t->o.cfg, &t->fwd_stages, hw->gemm_flops, t->u, t->nu, t->u_priced);
    t->st.recompute_priced_all = priced > 0 ? priced : 0;
    double rc_done = t->st.recompute_flops;
    double rc_priced = t->o.recompute_whole || !(priced > 0) ? rc_done : priced;
    hw->bwd_share_s = 0;
    if (ratel_share_calibrate(fwd_flops_all, fwd_compute_s, bwd_flops - fwd_flops_all - rc_done + rc_priced,
                              t->st.bwd_compute_s, hw->cpu_store_b, &hw->bwd_share_s) != 0)
        hw->bwd_share_s = 0; /* (no compute timed: nothing to price) */
}

int ratel_trainer_step(struct ratel_trainer *t, const int32_t *tok, const int32_t *tgt, char *err,
                       size_t errlen)
{
    /* the first step only warms up (first touch of the arenas, the BLAS,
     * link and store threads started): its GEMM rate came out several times
     * below a later step's, so T_f and T_b were predicted far too long; the
     * second step is the profiling one */
    int before_choice = t->release_acts && !t->st.choice_made;
    int profiling = before_choice && t->st.steps >= 1;
    if (before_choice || t->o.system == RATEL_SYS_ZERO_INFINITY) {
        /* (before the profiling step: the arena's free bytes less the
         * rounding; it is at the step's mark here) */
        struct ratel_hw any = {1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
        any.mem_avail = ratel_host_mem_avail(mb_arena_free_bytes(t->host), 0, 0, t->u, t->nu);
        if (choose(t, RATEL_ACT_INTER_BLOCK, NULL, &any, err, errlen) != 0)
            return -1;
    }
    t->t++;
    t->st.act_swapped = 0;
    t->act_stored = 0;
    t->act_alloc = 0;
    t->st.store_caller_s = 0;
    t->store_other_cpu = 0;
    struct mb_ostore_stats os0 = {0}, os1 = {0};
    if (t->store)
        mb_ostore_stats(t->store, &os0);
    size_t mark = mb_arena_mark(t->host), dev_mark = mb_arena_mark(t->dev);
    struct ratel_cpu_sample cpu = {0};
    uint64_t lb0 = 0, lb1 = 0;
    double p0 = proc_cpu(), l0 = link_cpu(t, &lb0);
    t->gemm_cpu = 0;
    double fwd_c = 0, rec = 0, loss = 0, t0 = mb_now();
    struct nn_stage_times st0 = t->stimes;
    int rc = forward(t, tok, tgt, &loss, &fwd_c, err, errlen);
    double t1 = mb_now();
    for (int s = 0; profiling && s < NN_STAGE_COUNT; s++) /* (measure() prices recompute by them) */
        t->fwd_stages.t[s] = t->stimes.t[s] - st0.t[s];
    double p1 = proc_cpu(), l1 = link_cpu(t, NULL);
    cpu.gemm[0] = t->gemm_cpu;
    t->gemm_cpu = 0;
    rc = rc ? rc : backward(t, &rec, err, errlen);
    double t2 = mb_now();
    double p2 = proc_cpu(), l2 = link_cpu(t, &lb1);
    cpu.gemm[1] = t->gemm_cpu;
    cpu.all[0] = p1 - p0;
    cpu.all[1] = p2 - p1;
    cpu.link[0] = l1 - l0;
    cpu.link[1] = l2 - l1;
    cpu.link_bytes = (double)(lb1 - lb0);
    size_t host_peak = mb_arena_peak(t->host) - mark; /* (the arena's peak: every step's so far) */
    mb_arena_release(t->host, mark);
    mb_arena_release(t->dev, dev_mark);
    if (rc != 0)
        return -1;
    if (t->store)
        mb_ostore_stats(t->store, &os1);
    t->st.update_s = os1.update_s - os0.update_s;
    t->st.steps++;
    t->st.act_stored = t->act_stored;
    t->st.loss = loss;
    t->st.fwd_s = t1 - t0;
    t->st.bwd_s = t2 - t1;
    t->st.step_s = t2 - t0;
    t->st.recompute_flops = rec;
    double f = 0;
    for (int i = 0; i < t->nl; i++) {
        struct nn_layer_account a;
        nn_layer_account(t->layer[i], &a);
        f += a.flops_fwd + a.flops_bwd;
    }
    t->st.gemm_flops_done = f + rec;
    t->st.cpu_s = cpu.all[0] + cpu.all[1];
    t->st.cpu_link_s = cpu.link[0] + cpu.link[1];
    t->st.cpu_gemm_s = cpu.gemm[0] + cpu.gemm[1];
    cpu.flops_done = f + rec;
    if (profiling) {
        cpu.all[1] -= t->store_other_cpu; /* the store's CPU priced as an overlapped order has it */
        measure(t, fwd_c, &cpu, host_peak, &t->st.hw);
        enum ratel_act act = t->o.system == RATEL_SYS_ZERO_INFINITY ? RATEL_ACT_INTER_BLOCK : t->o.act;
        const unsigned char *given = t->o.system == RATEL_SYS_RATEL ? t->o.swap_set : NULL;
        if (choose(t, act, given, &t->st.hw, err, errlen) != 0)
            return -1;
        t->st.choice_made = 1;
    }
    return 0;
}
