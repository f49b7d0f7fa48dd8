/* `ucx`: collectives over UCX RMA (UCP). One UCP context and worker per
 * collectives context, endpoints to every rank; each registered buffer is
 * ucp_mem_map'ed once and its packed rkey exchanged once (mb_coll_alloc),
 * so a call only moves data: every rank pulls what it needs from the
 * peers' buffers with ucp_get_nbx, single copy, over whatever transport
 * UCX has (CMA/knem/xpmem on a node, RDMA across nodes, its software RMA
 * otherwise). Allreduce is a reduce-scatter by gets (rank r reduces slice
 * r of every input, chunk by chunk, double-buffered) and an allgather by
 * gets of the reduced slices; reduce_scatter_block is the first half,
 * allgather the second; bcast pulls from the root; reduce is pulled and
 * reduced by the root.
 *
 * Synchronisation is by sequence counters put with ucp_put_nbx into a
 * small flag array on every rank (allocated by UCX, so it lives in memory
 * its shared-memory transports map, and a flag put is a store): ARRIVE
 * (my input is ready), SLICE (my reduced slice is ready, so I also
 * finished reading everyone's inputs of it) and DONE (I finished reading
 * your buffers). Not MPI, on purpose: (1) when UCX has no transport that
 * reaches a buffer it emulates RMA with active messages, served only
 * while the target progresses its worker, which a rank blocked in an MPI
 * barrier never does; every wait here progresses the worker; (2) the
 * dependencies are point to point, so a rank reads slice s as soon as its
 * owner has it, not when every rank does. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

enum { ARRIVE, SLICE, DONE, NPHASE };
#define UCX_CHUNK ((size_t)128 << 10) /* bytes per pipelined get */

struct mb_coll_ucx {
    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_ep_h *ep;                  /* [size], NULL for self */
    ucp_mem_h flags_memh;
    _Atomic uint64_t *flags;       /* [NPHASE][size]: written by the peers */
    uint64_t *peer_flags;          /* [size]: their flag arrays' addresses */
    ucp_rkey_h *flags_rkey;        /* [size] */
    uint64_t seq, sent[NPHASE];    /* sent: sources of the flag puts */
    int nep;
};

struct ucx_reg {
    int ok;                        /* mapped and every peer's rkey unpacked */
    ucp_mem_h memh;
    uint64_t *base;                /* [size]: each rank's segment */
    ucp_rkey_h *rkey;              /* [size], NULL for self */
};

static struct mb_coll_ucx *ucx_of(struct mb_coll_ctx *c) { return mb_coll_slot(c, &mb_coll_algo_ucx)->state; }

/* ---- requests --------------------------------------------------------- */

/* Called while polling with nothing progressed: spins for the call's spin
 * budget (mb_coll_spin), then naps briefly. The flags are written by the
 * peers' puts, so there is no futex to sleep on; and sched_yield on a busy
 * core hands the CPU away for a whole time slice. */
static void backoff(struct mb_coll_ctx *c, double *t0, unsigned spin)
{
    if (spin % 64 != 63)
        return;
    double now = mb_now();
    if (*t0 == 0)
        *t0 = now;
    else if ((now - *t0) * 1e9 > (double)c->spin_ns) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* Completes a request from the *_nbx calls, progressing the worker. */
static int wait_req(struct mb_coll_ctx *c, ucs_status_ptr_t req)
{
    struct mb_coll_ucx *u = ucx_of(c);
    if (req == NULL)
        return 0;
    if (UCS_PTR_IS_ERR(req)) {
        mb_warn("collectives: ucx: %s", ucs_status_string(UCS_PTR_STATUS(req)));
        return -1;
    }
    ucs_status_t st;
    double t0 = 0;
    for (unsigned spin = 0; (st = ucp_request_check_status(req)) == UCS_INPROGRESS; spin++)
        if (!ucp_worker_progress(u->worker))
            backoff(c, &t0, spin);
    ucp_request_free(req);
    if (st != UCS_OK) {
        mb_warn("collectives: ucx: %s", ucs_status_string(st));
        return -1;
    }
    return 0;
}

static ucs_status_ptr_t get(struct mb_coll_ucx *u, int q, void *dst, uint64_t src, ucp_rkey_h rkey,
                            size_t bytes)
{
    ucp_request_param_t prm = {.op_attr_mask = 0};
    return ucp_get_nbx(u->ep[q], dst, bytes, src, rkey, &prm);
}

/* Raises flag `phase` on rank q to seq. */
static int signal_rank(struct mb_coll_ctx *c, int phase, int q, uint64_t seq)
{
    struct mb_coll_ucx *u = ucx_of(c);
    u->sent[phase] = seq;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    uint64_t at = u->peer_flags[q] + ((uint64_t)phase * (uint64_t)c->size + (uint64_t)c->rank) * 8;
    return wait_req(c, ucp_put_nbx(u->ep[q], &u->sent[phase], 8, at, u->flags_rkey[q], &prm));
}

static int signal_all(struct mb_coll_ctx *c, int phase, uint64_t seq)
{
    int rc = 0;
    for (int j = 1; j < c->size; j++)
        rc |= signal_rank(c, phase, (c->rank + j) % c->size, seq);
    return rc;
}

/* Waits until rank q raised `phase` to seq, progressing the worker. */
static void wait_rank(struct mb_coll_ctx *c, int phase, int q, uint64_t seq)
{
    struct mb_coll_ucx *u = ucx_of(c);
    _Atomic uint64_t *f = &u->flags[phase * c->size + q];
    double t0 = 0;
    for (unsigned spin = 0; atomic_load_explicit(f, memory_order_acquire) < seq; spin++)
        if (!ucp_worker_progress(u->worker))
            backoff(c, &t0, spin);
}

static void wait_all(struct mb_coll_ctx *c, int phase, uint64_t seq)
{
    for (int j = 1; j < c->size; j++)
        wait_rank(c, phase, (c->rank + j) % c->size, seq);
}

/* A barrier over the context's communicator that progresses the worker
 * while it waits. Where UCX emulates RMA with active messages (TCP), a
 * peer's get from this rank completes only while this rank progresses:
 * a rank that finished its own get and sat in MPI_Barrier left a peer's
 * get from it unserved for ever (the probe hung, or ended in "Endpoint
 * timeout", at 4 ranks over TCP). */
static void progress_barrier(struct mb_coll_ctx *c, ucp_worker_h worker)
{
    MPI_Request rq;
    int done = 0;
    double t0 = 0;
    MPI_Ibarrier(c->comm, &rq);
    for (unsigned spin = 0; MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done; spin++)
        if (!worker || !ucp_worker_progress(worker))
            backoff(c, &t0, spin);
}

/* ---- set-up ------------------------------------------------------------ */

/* Every rank's blob of bytes (a packed rkey, a worker address), gathered:
 * rank q's lens[q] bytes at all + displs[q] (0 bytes: it had none). */
struct blobs {
    char *all;
    int *lens, *displs;
};

static struct blobs allgather_blobs(struct mb_coll_ctx *c, const void *mine, int mylen)
{
    int p = c->size, total = 0;
    struct blobs b = {NULL, malloc(sizeof(int) * (size_t)p), malloc(sizeof(int) * (size_t)p)};
    if (!b.lens || !b.displs)
        mb_die(1, "collectives: ucx: out of memory exchanging %d ranks' addresses", p);
    MPI_Allgather(&mylen, 1, MPI_INT, b.lens, 1, MPI_INT, c->comm);
    for (int q = 0; q < p; q++)
        b.displs[q] = total, total += b.lens[q];
    if (!(b.all = malloc((size_t)total + 1)))
        mb_die(1, "collectives: ucx: out of memory exchanging %d bytes of addresses", total);
    MPI_Allgatherv(mine, mylen, MPI_BYTE, b.all, b.lens, b.displs, MPI_BYTE, c->comm);
    return b;
}

static void blobs_free(struct blobs *b)
{
    free(b->all);
    free(b->lens);
    free(b->displs);
}

/* Exchanges this rank's packed rkey of memh and the address base; unpacks
 * the peers'. Collective over the context's communicator. */
static int exchange(struct mb_coll_ctx *c, ucp_mem_h memh, uint64_t base, uint64_t *bases, ucp_rkey_h *rkeys)
{
    struct mb_coll_ucx *u = ucx_of(c);
    void *packed = NULL;
    size_t len = 0;
    int ok = memh && ucp_rkey_pack(u->ucp, memh, &packed, &len) == UCS_OK;
    MPI_Allgather(&base, 1, MPI_UINT64_T, bases, 1, MPI_UINT64_T, c->comm);
    struct blobs b = allgather_blobs(c, packed, ok ? (int)len : 0);
    if (packed)
        ucp_rkey_buffer_release(packed);
    for (int q = 0; q < c->size; q++) {
        rkeys[q] = NULL;
        if (q == c->rank)
            continue;
        if (b.lens[q] == 0 || ucp_ep_rkey_unpack(u->ep[q], b.all + b.displs[q], &rkeys[q]) != UCS_OK)
            ok = 0, rkeys[q] = NULL;
    }
    blobs_free(&b);
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    return all_ok ? 0 : -1;
}

static void destroy_rkeys(struct mb_coll_ctx *c, ucp_rkey_h *rkeys)
{
    for (int q = 0; q < c->size; q++)
        if (rkeys[q])
            ucp_rkey_destroy(rkeys[q]);
}

/* reg_map: maps a registered buffer for RMA and exchanges its rkeys
 * (collective over the context's communicator). */
static int ucx_map(struct mb_coll_ctx *c, void *state, void *ptr, size_t bytes, void **reg_state)
{
    struct mb_coll_ucx *u = state;
    struct ucx_reg *x = calloc(1, sizeof(*x));
    x->base = calloc((size_t)c->size, sizeof(uint64_t));
    x->rkey = calloc((size_t)c->size, sizeof(ucp_rkey_h));
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = ptr,
        .length = bytes ? bytes : 1, /* segments are whole pages */
    };
    if (ucp_mem_map(u->ucp, &mp, &x->memh) != UCS_OK)
        x->memh = NULL;
    *reg_state = x;
    x->ok = exchange(c, x->memh, (uint64_t)(uintptr_t)ptr, x->base, x->rkey) == 0;
    return x->ok ? 0 : -1;
}

static void ucx_unmap(struct mb_coll_ctx *c, void *state, void *reg_state)
{
    struct mb_coll_ucx *u = state;
    struct ucx_reg *x = reg_state;
    destroy_rkeys(c, x->rkey);
    if (x->memh)
        ucp_mem_unmap(u->ucp, x->memh);
    free(x->base);
    free(x->rkey);
    free(x);
}

/* Teardown, before the registered memory goes: the buffers' mappings,
 * the endpoints, the flags, the worker and the context. */
static void ucx_free(struct mb_coll_ctx *c, void *state)
{
    struct mb_coll_ucx *u = state;
    if (!u)
        return;
    /* nobody reads anyone's memory any more once all are here */
    progress_barrier(c, u->worker);
    size_t slot = mb_coll_index(&mb_coll_algo_ucx);
    for (struct mb_coll_reg *r = c->regs; r; r = r->next)
        if (r->algo_state[slot]) {
            ucx_unmap(c, u, r->algo_state[slot]);
            r->algo_state[slot] = NULL;
        }
    if (u->flags_rkey)
        destroy_rkeys(c, u->flags_rkey);
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    for (int q = 0; q < c->size; q++)
        if (u->ep && u->ep[q]) {
            ucs_status_ptr_t req = ucp_ep_close_nbx(u->ep[q], &prm);
            if (req && !UCS_PTR_IS_ERR(req)) {
                while (ucp_request_check_status(req) == UCS_INPROGRESS)
                    ucp_worker_progress(u->worker);
                ucp_request_free(req);
            }
        }
    if (u->flags_memh)
        ucp_mem_unmap(u->ucp, u->flags_memh);
    if (u->worker)
        ucp_worker_destroy(u->worker);
    if (u->ucp)
        ucp_cleanup(u->ucp);
    free(u->ep);
    free(u->peer_flags);
    free(u->flags_rkey);
    free(u);
}

/* Context, worker, endpoints to every rank and the flag array; the reason
 * in why on failure (this rank's view). Configured from MB_UCX_* (then
 * UCX_*) variables, so a test can restrict this worker's transports
 * without touching the MPI library's own UCX. */
static int init_worker(struct mb_coll_ctx *c, void **state, char *why, size_t len)
{
    struct mb_coll_ucx *u = *state = calloc(1, sizeof(*u));
    int p = c->size;
    u->ep = calloc((size_t)p, sizeof(ucp_ep_h));
    u->peer_flags = calloc((size_t)p, sizeof(uint64_t));
    u->flags_rkey = calloc((size_t)p, sizeof(ucp_rkey_h));
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read("MB", NULL, &cfg);
    if (st != UCS_OK) {
        snprintf(why, len, "ucp_config_read: %s", ucs_status_string(st));
        return -1;
    }
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_RMA};
    st = ucp_init(&up, cfg, &u->ucp);
    ucp_config_release(cfg);
    if (st != UCS_OK) {
        u->ucp = NULL;
        snprintf(why, len, "ucp_init: %s", ucs_status_string(st));
        return -1;
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if ((st = ucp_worker_create(u->ucp, &wp, &u->worker)) != UCS_OK) {
        u->worker = NULL;
        snprintf(why, len, "ucp_worker_create: %s", ucs_status_string(st));
        return -1;
    }
    return 0;
}

/* Endpoints from exchanged worker addresses (collective). */
static int connect_all(struct mb_coll_ctx *c, int ok, char *why, size_t len)
{
    struct mb_coll_ucx *u = ucx_of(c);
    ucp_address_t *addr = NULL;
    size_t alen = 0;
    if (ok && ucp_worker_get_address(u->worker, &addr, &alen) != UCS_OK)
        ok = 0, alen = 0, snprintf(why, len, "ucp_worker_get_address failed");
    struct blobs b = allgather_blobs(c, addr, (int)alen);
    if (addr)
        ucp_worker_release_address(u->worker, addr);
    for (int q = 0; ok && q < c->size; q++) {
        if (q == c->rank)
            continue;
        if (b.lens[q] == 0) { /* that rank failed already; the reduction below says so */
            ok = 0;
            break;
        }
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (const ucp_address_t *)(b.all + b.displs[q])};
        ucs_status_t st = ucp_ep_create(u->worker, &ep, &u->ep[q]);
        if (st != UCS_OK) {
            u->ep[q] = NULL;
            snprintf(why, len, "no UCX transport reaches rank %d: ucp_ep_create: %s", q, ucs_status_string(st));
            ok = 0;
        }
    }
    blobs_free(&b);
    return ok;
}

/* The flag array, and a probe: one get from the next rank's flags, so a
 * transport that cannot do RMA is found here rather than in a collective. */
static int flags_and_probe(struct mb_coll_ctx *c, int ok, char *why, size_t len)
{
    struct mb_coll_ucx *u = ucx_of(c);
    int p = c->size;
    size_t bytes = (size_t)NPHASE * (size_t)p * 8;
    if (ok) {
        ucp_mem_map_params_t mp = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_FLAGS,
            .address = NULL, .length = bytes, .flags = UCP_MEM_MAP_ALLOCATE,
        };
        ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
        ucs_status_t st = ucp_mem_map(u->ucp, &mp, &u->flags_memh);
        if (st == UCS_OK && ucp_mem_query(u->flags_memh, &ma) == UCS_OK) {
            u->flags = ma.address;
            for (size_t i = 0; i < bytes / 8; i++)
                atomic_store(&u->flags[i], 0);
        } else {
            snprintf(why, len, "ucp_mem_map of the flags: %s", ucs_status_string(st));
            u->flags_memh = NULL;
            ok = 0;
        }
    }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok)
        return 0;
    if (exchange(c, u->flags_memh, (uint64_t)(uintptr_t)u->flags, u->peer_flags, u->flags_rkey) != 0) {
        snprintf(why, len, "unpacking the peers' rkeys failed");
        return 0;
    }
    if (p > 1) {
        int q = (c->rank + 1) % p;
        uint64_t v = 1;
        atomic_store(&u->flags[0], 0x6d62756378ull); /* slot 0 of ARRIVE, reset below */
        MPI_Barrier(c->comm); /* no get in flight yet */
        ucs_status_ptr_t req = get(u, q, &v, u->peer_flags[q], u->flags_rkey[q], 8);
        if (wait_req(c, req) != 0 || v != 0x6d62756378ull) {
            snprintf(why, len, "ucp_get_nbx from rank %d failed", q);
            ok = 0;
        }
        progress_barrier(c, u->worker); /* every probe read before the reset; serving the peers' gets */
        atomic_store(&u->flags[0], 0);
    }
    return ok;
}

/* The set-up (collective): worker, endpoints, flags and a probe; on
 * failure everything is undone and every rank gives the lowest failing
 * rank's reason. */
static int ucx_setup(struct mb_coll_ctx *c, void **state, char *why, size_t len)
{
    char reason[250] = "";
    int ok = init_worker(c, state, reason, sizeof(reason)) == 0;
    ok = connect_all(c, ok, reason, sizeof(reason));
    ok = flags_and_probe(c, ok, reason, sizeof(reason));
    int all_ok, src, none = c->size;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    /* every rank gives the same reason: the lowest failing rank's */
    MPI_Allreduce(ok ? &none : &c->rank, &src, 1, MPI_INT, MPI_MIN, c->comm);
    if (all_ok)
        return 0;
    MPI_Bcast(reason, sizeof(reason), MPI_CHAR, src == none ? 0 : src, c->comm);
    snprintf(why, len, "UCX RMA unusable: %s", reason);
    ucx_free(c, *state);
    *state = NULL;
    return -1;
}

/* ---- the collectives ----------------------------------------------------- */

struct view { /* a registered range as every rank sees it */
    char *local;
    uint64_t *remote; /* [size]: addresses of the same offset */
    ucp_rkey_h *rkey;
};

static int resolve(struct mb_coll_ctx *c, const void *ptr, struct view *v, uint64_t *remote)
{
    for (struct mb_coll_reg *r = c->regs; r; r = r->next) {
        const char *b = r->buf.ptr;
        struct ucx_reg *x = mb_coll_reg_state(r, &mb_coll_algo_ucx);
        if ((const char *)ptr >= b && (const char *)ptr <= b + r->buf.bytes && x) {
            if (!x->ok)
                return -1;
            uint64_t off = (uint64_t)((const char *)ptr - b);
            for (int q = 0; q < c->size; q++)
                remote[q] = x->base[q] + off;
            v->local = (char *)ptr;
            v->remote = remote;
            v->rkey = x->rkey;
            return 0;
        }
    }
    return -1;
}

/* dst[lo, hi) (elements, offsets into each rank's `in`) = op over the
 * ranks in `from` (all ranks if NULL) of in; gets of chunk k+1 are in
 * flight while chunk k is reduced. dst may be this rank's own input. */
static int pull_reduce(struct mb_coll_ctx *c, const struct mb_coll_args *a, const struct view *in, size_t lo,
                       size_t hi, char *dst)
{
    struct mb_coll_ucx *u = ucx_of(c);
    int p = c->size, r = c->rank;
    size_t es = mb_coll_dtype_size(a->dtype), ce = UCX_CHUNK / es;
    if (hi <= lo)
        return 0;
    char *tmp = mb_coll_tmp(c, 2 * (size_t)(p - 1) * UCX_CHUNK + 1);
    ucs_status_ptr_t req[2][p > 1 ? p - 1 : 1];
    const void *srcs[p];
    int rc = 0;
    size_t nk = (hi - lo + ce - 1) / ce;
    for (size_t k = 0; k <= nk; k++) {
        if (k < nk) { /* issue chunk k */
            size_t off = lo + k * ce, n = hi - off < ce ? hi - off : ce;
            for (int j = 1; j < p; j++) {
                int q = (r + j) % p;
                char *t = tmp + ((k % 2) * (size_t)(p - 1) + (size_t)(j - 1)) * UCX_CHUNK;
                req[k % 2][j - 1] = get(u, q, t, in->remote[q] + off * es, in->rkey[q], n * es);
            }
        }
        if (k == 0)
            continue;
        size_t kk = k - 1, off = lo + kk * ce, n = hi - off < ce ? hi - off : ce; /* reduce chunk k-1 */
        srcs[0] = in->local + off * es;
        for (int j = 1; j < p; j++) {
            rc |= wait_req(c, req[kk % 2][j - 1]);
            srcs[j] = tmp + ((kk % 2) * (size_t)(p - 1) + (size_t)(j - 1)) * UCX_CHUNK;
        }
        mb_coll_reduce_many(a->dtype, a->op, dst + (off - lo) * es, srcs, p, n);
    }
    return rc;
}

static int run_allreduce(struct mb_coll_ctx *c, const struct mb_coll_args *a, const struct view *in,
                         const struct view *out, uint64_t seq)
{
    struct mb_coll_ucx *u = ucx_of(c);
    int p = c->size, r = c->rank, rc = 0;
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    rc |= signal_all(c, ARRIVE, seq);
    wait_all(c, ARRIVE, seq);
    if (n * es <= MB_COLL_SMALL) {
        /* small: every rank reduces the whole vector, one phase fewer; in
         * place, into a temporary, since the peers read my input until DONE */
        size_t scratch = 2 * (size_t)(p - 1) * UCX_CHUNK;
        char *dst = a->sendbuf ? out->local : (char *)mb_coll_tmp(c, scratch + n * es) + scratch;
        rc |= pull_reduce(c, a, in, 0, n, dst);
        rc |= signal_all(c, DONE, seq);
        wait_all(c, DONE, seq);
        if (!a->sendbuf)
            memcpy(out->local, dst, n * es);
        return rc;
    }
    size_t lo = mb_coll_slice_bound(n, p, r, es), hi = mb_coll_slice_bound(n, p, r + 1, es);
    rc |= pull_reduce(c, a, in, lo, hi, out->local + lo * es);
    rc |= signal_all(c, SLICE, seq);
    ucs_status_ptr_t req[p];
    for (int j = 1; j < p; j++) { /* each slice once its owner has reduced it */
        int s = (r + j) % p;
        size_t slo = mb_coll_slice_bound(n, p, s, es), shi = mb_coll_slice_bound(n, p, s + 1, es);
        req[j] = NULL;
        if (shi <= slo)
            continue;
        wait_rank(c, SLICE, s, seq);
        req[j] = get(u, s, out->local + slo * es, out->remote[s] + slo * es, out->rkey[s], (shi - slo) * es);
    }
    for (int j = 1; j < p; j++)
        rc |= wait_req(c, req[j]);
    return rc;
}

static int run_reduce_scatter(struct mb_coll_ctx *c, const struct mb_coll_args *a, const struct view *in,
                              uint64_t seq)
{
    int r = c->rank, rc = 0;
    size_t es = mb_coll_dtype_size(a->dtype), n = a->count;
    /* in place, my block lands on block 0 of my input, which rank 0 reads:
     * reduce into a temporary, copy after DONE */
    int late = !a->sendbuf && r != 0;
    char *dst = late ? (char *)mb_coll_tmp(c, 2 * (size_t)(c->size - 1) * UCX_CHUNK + n * es + 1) +
                           2 * (size_t)(c->size - 1) * UCX_CHUNK
                     : a->recvbuf;
    rc |= signal_all(c, ARRIVE, seq);
    wait_all(c, ARRIVE, seq);
    rc |= pull_reduce(c, a, in, (size_t)r * n, (size_t)(r + 1) * n, dst);
    rc |= signal_all(c, DONE, seq);
    wait_all(c, DONE, seq);
    if (late)
        memcpy(a->recvbuf, dst, n * es);
    return rc;
}

static int run_allgather(struct mb_coll_ctx *c, const struct mb_coll_args *a, const struct view *in,
                         const struct view *out, uint64_t seq)
{
    struct mb_coll_ucx *u = ucx_of(c);
    int p = c->size, r = c->rank, rc = 0;
    size_t bytes = a->count * mb_coll_dtype_size(a->dtype);
    rc |= signal_all(c, ARRIVE, seq);
    if (a->sendbuf)
        memcpy(out->local + (size_t)r * bytes, in->local, bytes);
    ucs_status_ptr_t req[p];
    for (int j = 1; j < p; j++) {
        int q = (r + j) % p;
        wait_rank(c, ARRIVE, q, seq);
        req[j] = get(u, q, out->local + (size_t)q * bytes, in->remote[q], in->rkey[q], bytes);
    }
    for (int j = 1; j < p; j++)
        rc |= wait_req(c, req[j]);
    return rc;
}

static int ucx_run(struct mb_coll_ctx *c, const struct mb_coll_args *a)
{
    struct mb_coll_ucx *u = ucx_of(c);
    if (!u)
        return -1;
    size_t es = mb_coll_dtype_size(a->dtype);
    if (a->count == 0) /* the same on every rank: nothing to move */
        return 0;
    int p = c->size, r = c->rank, rc = 0;
    uint64_t rem_in[p], rem_out[p];
    struct view in, out;
    const void *src = a->sendbuf && a->kind != MB_COLL_BCAST ? a->sendbuf : a->recvbuf;
    if (a->kind == MB_COLL_ALLGATHER && !a->sendbuf)
        src = (char *)a->recvbuf + (size_t)r * a->count * es;
    if (resolve(c, a->recvbuf, &out, rem_out) != 0 || resolve(c, src, &in, rem_in) != 0) {
        mb_warn("collectives: ucx: buffers not from mb_coll_alloc");
        return -1;
    }
    if (a->kind == MB_COLL_ALLGATHER && !a->sendbuf) /* each rank's block sits at its own offset */
        for (int q = 0; q < p; q++)
            rem_in[q] += (uint64_t)(q - r) * a->count * es;
    uint64_t seq = ++u->seq;
    mb_coll_spin(c, a->count * es * (size_t)(a->kind == MB_COLL_BCAST ? 1 : p));
    switch (a->kind) {
    case MB_COLL_ALLREDUCE:
        rc = run_allreduce(c, a, &in, &out, seq);
        if (a->count * es <= MB_COLL_SMALL)
            return rc; /* synchronised already */
        break;
    case MB_COLL_REDUCE_SCATTER: return run_reduce_scatter(c, a, &in, seq);
    case MB_COLL_ALLGATHER: rc = run_allgather(c, a, &in, &out, seq); break;
    case MB_COLL_BCAST:
        if (r == a->root) {
            rc |= signal_all(c, ARRIVE, seq);
            wait_all(c, DONE, seq);
            return rc;
        }
        wait_rank(c, ARRIVE, a->root, seq);
        rc |= wait_req(c, get(u, a->root, out.local, in.remote[a->root], in.rkey[a->root], a->count * es));
        return rc | signal_rank(c, DONE, a->root, seq);
    case MB_COLL_REDUCE:
        if (r != a->root) {
            rc |= signal_rank(c, ARRIVE, a->root, seq);
            wait_rank(c, DONE, a->root, seq);
            return rc;
        }
        wait_all(c, ARRIVE, seq);
        rc |= pull_reduce(c, a, &in, 0, a->count, out.local);
        return rc | signal_all(c, DONE, seq);
    default: return -1;
    }
    rc |= signal_all(c, DONE, seq);
    wait_all(c, DONE, seq);
    return rc;
}

int mb_coll_ucx_calibrate_op(struct mb_coll_ctx *c, const void *reg, int gets)
{
    struct mb_coll_ucx *u = ucx_of(c);
    int rc = 0, q = (c->rank + 1) % c->size;
    uint64_t sink, remote[c->size];
    struct view v;
    if (gets > 0 && resolve(c, reg, &v, remote) != 0)
        return -1;
    for (int i = 0; i < gets && rc == 0; i++)
        rc = wait_req(c, get(u, q, &sink, v.remote[q], v.rkey[q], sizeof(sink)));
    uint64_t seq = ++u->seq;
    rc |= signal_all(c, ARRIVE, seq);
    wait_all(c, ARRIVE, seq);
    return rc;
}

/* ---- the model: gets from the peers' mapped buffers. On one machine
 * (one node, or a --ranks-per-node split of it) every get goes over UCX's
 * shared-memory transport: each request costs UCX's measured get set-up
 * and completion (ucx_get_alpha_s) and its bytes are priced as CMA reads
 * (UCX's cma transport) where CMA was calibrated, else as copies. A flag
 * phase costs the measured UCX flag round (ucx_flag_s: a put to every
 * peer and a wait for theirs). Across machines the gets from the N-1
 * other nodes' ranks go over the node's link, all L ranks of the node
 * pulling at once (the profile's net terms: one link latency per phase
 * for the gets in flight, the bytes at the link's rate shared by L), the
 * flags cross the link (a link latency each on top), and the local reads
 * overlap the remote gets (the slower counts). UCX's terms are NaN where
 * its set-up failed in the calibration: ucx is then not modelled.
 * Allreduce: entry flags, a reduce-scatter by gets in 128 KiB chunks, the
 * slice flags, an allgather by gets. */

static double ucx_get(const struct mb_coll_model_in *m, double bytes)
{
    const struct mb_coll_profile *p = m->p;
    double requests = ceil(bytes / (double)UCX_CHUNK);
    double per_byte = isfinite(p->cma_alpha) ? mb_coll_blend(p, p->cma, m->ws) : m->c;
    return requests * p->ucx_get_alpha + bytes * per_byte;
}

/* One phase of gets of `bytes` from every peer: local ones read, remote
 * ones over the link. */
static double ucx_phase(const struct mb_coll_model_in *m, double bytes)
{
    if (m->N == 1 || m->one_host)
        return (m->P - 1) * ucx_get(m, bytes);
    double local = (m->L - 1) * ucx_get(m, bytes);
    return mb_coll_slower(local, mb_coll_XN(m, (m->P - m->L) * bytes, m->L));
}

static double m_ucx(const struct mb_coll_model_in *m)
{
    if (m->kind != MB_COLL_ALLREDUCE)
        return NAN;
    double n = m->n;
    int P = m->P;
    double flag = m->N == 1 || m->one_host ? m->p->ucx_flag : m->p->ucx_flag + m->na;
    if (n <= MB_COLL_SMALL) /* every rank reduces the whole vector; in place through a temporary */
        return 2 * flag + ucx_phase(m, n) + mb_coll_RK(m, n, P) + (m->oop ? 0 : mb_coll_C(m, n));
    double slice = n / P;
    return 2 * flag + 2 * ucx_phase(m, slice) + mb_coll_RK(m, slice, P);
}

const struct mb_coll_algo mb_coll_algo_ucx = {
    .name = "ucx", .kinds = MB_COLL_ALL_KINDS, .wants_registered = 1, .model = m_ucx,
    .description = "UCX RMA: peers' registered buffers read with ucp_get_nbx, flags put with ucp_put_nbx",
    .available = mb_coll_always /* the set-up decides */, .run = ucx_run,
    .setup = ucx_setup, .teardown = ucx_free, .reg_map = ucx_map, .reg_unmap = ucx_unmap,
};
