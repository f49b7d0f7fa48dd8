/* A switch rank (the Tofino stand-in, disdp_internal.h): sums the W workers'
 * pushes of each chunk it owns, checks the linear checksum and forwards the
 * sum to the layer's PS; multicasts the PS's parameter chunks to the W
 * workers. Event loop: probe any source, act, test the sends in flight,
 * nap when nothing moved. */
#include "disdp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending {                /* sends in flight and the buffer they read */
    MPI_Request *req;
    int n;
    char *buf;
    struct pending *next;
};

struct slot {                   /* one owned chunk's W pushes */
    char **in;                  /* W buffers */
    int arrived;
};

struct mb_disdp_switch {
    const struct mb_disdp_cfg *c;
    int me;                     /* this switch's rank */
    size_t **owned;             /* per layer: owned chunk indices */
    size_t *nowned;
    struct slot **slot;         /* per layer, per owned chunk */
    uint64_t **wcount;          /* per worker, per layer: chunks received */
    uint64_t *pcount[2];        /* per phase, per layer: parameter chunks received */
    struct pending *pend;
    uint64_t per_step;          /* messages in per step */
    uint64_t *need, *got;       /* per source rank: messages of this step, and so far */
    int next_src;               /* where the round of probes starts */
    struct mb_disdp_switch_stats st;
};

static int add_pending(struct mb_disdp_switch *s, char *buf, int n, MPI_Request *req)
{
    struct pending *p = malloc(sizeof *p);
    if (!p)
        return -1;
    *p = (struct pending){req, n, buf, s->pend};
    s->pend = p;
    return 0;
}

/* Frees the sends that finished: 1 when any did, -1 on an MPI error. */
static int test_pending(struct mb_disdp_switch *s)
{
    int moved = 0;
    for (struct pending **pp = &s->pend; *pp;) {
        int done = 0;
        if (MPI_Testall((*pp)->n, (*pp)->req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done) {
            struct pending *p = *pp;
            *pp = p->next;
            free(p->req);
            free(p->buf);
            free(p);
            moved = 1;
        } else {
            pp = &(*pp)->next;
        }
    }
    return moved;
}

static int multicast(struct mb_disdp_switch *s, char *buf, int bytes, int tag)
{
    const struct mb_disdp_cfg *c = s->c;
    MPI_Request *req = malloc((size_t)c->W * sizeof *req);
    if (!req)
        return -1;
    for (int w = 0; w < c->W; w++)
        MPI_Isend(buf, bytes, MPI_BYTE, w, tag, c->comm, &req[w]);
    s->st.out_bytes += (uint64_t)bytes * (uint64_t)c->W;
    s->st.param_chunks++;
    return add_pending(s, buf, c->W, req);
}

/* All W pushes of a chunk are in: sum them in worker order, check, forward. */
static int reduce(struct mb_disdp_switch *s, int layer, size_t j, int step, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = s->c;
    size_t chunk = s->owned[layer][j], off, n;
    mb_disdp_chunk_range(c, layer, chunk, &off, &n);
    struct slot *sl = &s->slot[layer][j];
    char *out = malloc(n * 4 + MB_DISDP_TRAILER);
    if (!out)
        return -1;
    double want[2] = {0, 0};
    memcpy(out, sl->in[0], n * 4);
    for (int w = 0; w < c->W; w++) {
        double t[2];
        memcpy(t, sl->in[w] + n * 4, sizeof t);
        want[0] += t[0];
        want[1] += t[1];
        if (w == 0)
            continue;
        if (c->agg == MB_DISDP_AGG_FIXED) { /* no overflow: each |q| < INT32_MAX / W */
            int32_t *o = (int32_t *)out;
            const int32_t *in = (const int32_t *)sl->in[w];
            for (size_t i = 0; i < n; i++)
                o[i] = (int32_t)((uint32_t)o[i] + (uint32_t)in[i]);
        } else {
            float *o = (float *)out;
            const float *in = (const float *)sl->in[w];
            for (size_t i = 0; i < n; i++)
                o[i] += in[i];
        }
    }
    double got, got_abs;
    mb_disdp_block_sums(out, n, c->agg, &got, &got_abs);
    if (!mb_disdp_sums_match(c->agg, c->W, got, want[0], want[1])) {
        /* the reduced block is wrong: whose push does not match its own sum? */
        for (int w = 0; w < c->W; w++) {
            double t[2], ws, wa;
            memcpy(t, sl->in[w] + n * 4, sizeof t);
            mb_disdp_block_sums(sl->in[w], n, c->agg, &ws, &wa);
            if (!mb_disdp_sums_match(c->agg, 1, ws, t[0], t[1])) {
                snprintf(err, errlen,
                         "step %d layer %d chunk %zu: rank %d's gradient fails the linear checksum "
                         "(reduced block sums to %.17g, the senders' sums to %.17g; rank %d's block %.17g, its sum %.17g)",
                         step + 1, layer, chunk, w, got, want[0], w, ws, t[0]);
                free(out);
                return -2;
            }
        }
        snprintf(err, errlen,
                 "step %d layer %d chunk %zu: switch rank %d's reduced block fails the linear checksum (%.17g, senders' sums %.17g)",
                 step + 1, layer, chunk, s->me, got, want[0]);
        free(out);
        return -2;
    }
    memcpy(out + n * 4, want, sizeof want);
    MPI_Request *req = malloc(sizeof *req);
    if (!req) {
        free(out);
        return -1;
    }
    MPI_Isend(out, (int)(n * 4 + MB_DISDP_TRAILER), MPI_BYTE, mb_disdp_ps_rank(c, layer),
              mb_disdp_tag(c, 1, MB_DISDP_FWD, layer), c->comm, req);
    s->st.out_bytes += n * 4 + MB_DISDP_TRAILER;
    s->st.grad_chunks++;
    sl->arrived = 0;
    return add_pending(s, out, 1, req);
}

/* Receives the probed message and acts on it: 0, -1 (memory, MPI), -2 (err). */
static int serve(struct mb_disdp_switch *s, MPI_Status *pst, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = s->c;
    int bytes = 0, src = pst->MPI_SOURCE, tag = pst->MPI_TAG;
    MPI_Get_count(pst, MPI_BYTE, &bytes);
    char *buf = malloc(bytes ? (size_t)bytes : 1);
    if (!buf)
        return -1;
    if (MPI_Recv(buf, bytes, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        free(buf);
        return -1;
    }
    s->st.in_bytes += (uint64_t)bytes;
    int grad = tag > 2 * c->nlayers;
    int layer = grad ? tag - 1 - 2 * c->nlayers : (tag - 1) / 2;
    if (layer < 0 || layer >= c->nlayers || !s->nowned[layer] || (grad != (src < c->W))) {
        snprintf(err, errlen, "switch rank %d: unexpected message (tag %d) from rank %d", s->me, tag, src);
        free(buf);
        return -2;
    }
    uint64_t *count = grad ? &s->wcount[src][layer] : &s->pcount[(tag - 1) % 2][layer];
    size_t j = (size_t)(*count % s->nowned[layer]), off, n;
    int step = (int)(*count / s->nowned[layer]);
    (*count)++;
    mb_disdp_chunk_range(c, layer, s->owned[layer][j], &off, &n);
    size_t want = grad ? n * 4 + MB_DISDP_TRAILER : n * nn_dtype_size(c->wire);
    if ((size_t)bytes != want) {
        snprintf(err, errlen, "switch rank %d: layer %d chunk %zu from rank %d has %d bytes, expected %zu", s->me,
                 layer, s->owned[layer][j], src, bytes, want);
        free(buf);
        return -2;
    }
    if (!grad)
        return multicast(s, buf, bytes, tag);
    struct slot *sl = &s->slot[layer][j];
    free(sl->in[src]);
    sl->in[src] = buf;
    if (++sl->arrived < c->W)
        return 0;
    if (c->on_progress)
        c->on_progress(c->progress_ctx, step, layer);
    return reduce(s, layer, j, step, err, errlen);
}

static void sw_free(struct mb_disdp_switch *s)
{
    const struct mb_disdp_cfg *c = s->c;
    while (s->pend) {
        struct pending *p = s->pend;
        s->pend = p->next;
        free(p->req);
        free(p->buf);
        free(p);
    }
    for (int l = 0; l < c->nlayers; l++) {
        for (size_t j = 0; s->slot && s->nowned && s->slot[l] && j < s->nowned[l]; j++) {
            for (int w = 0; s->slot[l][j].in && w < c->W; w++)
                free(s->slot[l][j].in[w]);
            free(s->slot[l][j].in);
        }
        if (s->slot)
            free(s->slot[l]);
        if (s->owned)
            free(s->owned[l]);
    }
    for (int w = 0; s->wcount && w < c->W; w++)
        free(s->wcount[w]);
    free(s->wcount);
    free(s->slot);
    free(s->owned);
    free(s->nowned);
    free(s->pcount[0]);
    free(s->pcount[1]);
    free(s->need);
    free(s->got);
}

static int sw_init(struct mb_disdp_switch *s)
{
    const struct mb_disdp_cfg *c = s->c;
    int L = c->nlayers;
    s->owned = calloc((size_t)L, sizeof *s->owned);
    s->nowned = calloc((size_t)L, sizeof *s->nowned);
    s->slot = calloc((size_t)L, sizeof *s->slot);
    s->wcount = calloc((size_t)c->W, sizeof *s->wcount);
    s->pcount[0] = calloc((size_t)L, sizeof(uint64_t));
    s->pcount[1] = calloc((size_t)L, sizeof(uint64_t));
    if (!s->owned || !s->nowned || !s->slot || !s->wcount || !s->pcount[0] || !s->pcount[1])
        return -1;
    for (int w = 0; w < c->W; w++)
        if (!(s->wcount[w] = calloc((size_t)L, sizeof(uint64_t))))
            return -1;
    uint64_t owned_total = 0;
    for (int l = 0; l < L; l++) {
        size_t nc = mb_disdp_nchunks(c, l);
        s->owned[l] = malloc((nc ? nc : 1) * sizeof(size_t));
        s->slot[l] = calloc(nc ? nc : 1, sizeof(struct slot));
        if (!s->owned[l] || !s->slot[l])
            return -1;
        for (size_t k = 0; k < nc; k++)
            if (mb_disdp_switch_rank(c, l, k) == s->me) {
                if (!(s->slot[l][s->nowned[l]].in = calloc((size_t)c->W, sizeof(char *))))
                    return -1;
                s->owned[l][s->nowned[l]++] = k;
            }
        owned_total += s->nowned[l];
    }
    /* per step: each owned chunk twice per micro-batch from its PS, once from each worker */
    s->per_step = owned_total * (uint64_t)(2 * mb_disdp_micro(c) + c->W);
    /* Per source: a PS that finished its step may send the next step's
     * parameters while another PS's layers are still in flight here;
     * counting per source (MPI keeps each source's order) keeps them for
     * the next step instead of ending this one early. */
    int size = c->W + c->K + c->N;
    if (!(s->need = calloc((size_t)size, sizeof *s->need)) || !(s->got = calloc((size_t)size, sizeof *s->got)))
        return -1;
    for (int l = 0; l < L; l++) {
        for (int w = 0; w < c->W; w++)
            s->need[w] += s->nowned[l];
        s->need[mb_disdp_ps_rank(c, l)] += 2 * (uint64_t)mb_disdp_micro(c) * s->nowned[l];
    }
    return 0;
}

struct mb_disdp_switch *mb_disdp_switch_new(const struct mb_disdp_cfg *c, char *err, size_t errlen)
{
    struct mb_disdp_switch *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "switch: out of memory");
        return NULL;
    }
    s->c = c;
    MPI_Comm_rank(c->comm, &s->me);
    if (sw_init(s) != 0) {
        snprintf(err, errlen, "switch rank %d: out of memory", s->me);
        mb_disdp_switch_free(s);
        return NULL;
    }
    return s;
}

/* Probes the sources that still owe this step messages, from where the
 * last round stopped: 1 and *pst when one has a message, 0 when none. */
static int probe(struct mb_disdp_switch *s, MPI_Status *pst)
{
    const struct mb_disdp_cfg *c = s->c;
    int size = c->W + c->K + c->N;
    for (int k = 0; k < size; k++) {
        int src = (s->next_src + k) % size, flag = 0;
        if (s->got[src] >= s->need[src])
            continue;
        MPI_Iprobe(src, MPI_ANY_TAG, c->comm, &flag, pst);
        if (flag) {
            s->next_src = (src + 1) % size;
            s->got[src]++;
            return 1;
        }
    }
    return 0;
}

int mb_disdp_switch_step(struct mb_disdp_switch *s, char *err, size_t errlen)
{
    const struct mb_disdp_cfg *c = s->c;
    uint64_t got = 0;
    memset(s->got, 0, (size_t)(c->W + c->K + c->N) * sizeof *s->got);
    while (got < s->per_step || s->pend) {
        int moved = 0;
        MPI_Status pst;
        if (got < s->per_step && probe(s, &pst)) {
            got++;
            moved = 1;
            int r = serve(s, &pst, err, errlen);
            if (r == -1)
                snprintf(err, errlen, "switch rank %d: out of memory or an MPI call failed", s->me);
            if (r)
                return -1;
        }
        int t = test_pending(s);
        if (t < 0) {
            snprintf(err, errlen, "switch rank %d: a send failed", s->me);
            return -1;
        }
        if (!moved && !t)
            mb_disdp_nap(c);
    }
    return 0;
}

void mb_disdp_switch_stats(const struct mb_disdp_switch *s, struct mb_disdp_switch_stats *st)
{
    *st = s->st;
}

void mb_disdp_switch_free(struct mb_disdp_switch *s)
{
    if (!s)
        return;
    sw_free(s);
    free(s);
}
