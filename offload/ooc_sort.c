/* External merge sort of 64-bit keys larger than the memory budget M.
 * Run generation: chunks of M/4 bytes are read, radix-sorted and written
 * as runs, three chunk buffers rotating (reading chunk c+1 and writing run
 * c-1 while run c is sorted) plus the radix sort's scratch. Merge: every
 * run gets two blocks of M/(2R+2) bytes (the next one is read while the
 * current one is consumed), the output two; one k-way heap merge. The
 * input keys come from the seed; the output is checked for order and for
 * an order-independent checksum (the sum of a bijective hash of every
 * key), which any lost, doubled or altered key changes. */
#include "ooc_io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1u << 20)

struct run {
    uint64_t off, len;        /* volume offset and keys of the run */
    uint64_t issued, used;    /* keys whose reads were started / consumed */
    uint64_t *buf[2];
    size_t bufkeys[2];
    int cur;
    size_t pos;
    struct mb_aio_req req[2];
    struct ooc_op op[2];
};

struct sorter {
    uint64_t n, nb, in_off, run_off, out_off, seed, expect_sum;
    size_t chunk_keys, block_keys, nruns;
    char *mem;                /* the budget: carved for each phase */
    struct run *runs;
    struct mb_aio_req rreq[3], wreq[3], oreq[2];
    struct ooc_op rop[3], wop[3], oop[2];
    uint64_t requests;
    int mode;
};

static uint64_t key_at(uint64_t seed, uint64_t i) { return mb_mix64(seed * 0xd1342543de82ef95ULL + i); }
static uint64_t align_mib(uint64_t x) { return (x + MIB - 1) & ~(uint64_t)(MIB - 1); }

static void layout(const struct mb_ooc_params *p, uint64_t *run_off, uint64_t *out_off, size_t *chunk,
                   size_t *nruns, size_t *block)
{
    uint64_t nb = p->sort_keys * 8;
    *run_off = align_mib(nb);
    *out_off = *run_off + align_mib(nb);
    *chunk = (p->mem_budget / 4) & ~(size_t)4095;
    *nruns = *chunk ? (size_t)((nb + *chunk - 1) / *chunk) : 0;
    *block = (p->mem_budget / (2 * *nruns + 2)) & ~(size_t)4095;
}

static int sort_validate(const struct mb_ooc_params *p, char *err, size_t errlen)
{
    uint64_t ro, oo;
    size_t chunk, nruns, block;
    if (p->sort_keys == 0 || p->sort_keys % 512) {
        snprintf(err, errlen, "--sort-keys: %" PRIu64 ", must be a positive multiple of 512", p->sort_keys);
        return -1;
    }
    if (p->sort_keys * 8 <= p->mem_budget) {
        snprintf(err, errlen, "--mem-budget: %zu bytes hold all %" PRIu64 " keys; an external sort needs more keys "
                 "than the budget", p->mem_budget, p->sort_keys);
        return -1;
    }
    if (p->mem_budget < 16384) {
        snprintf(err, errlen, "--mem-budget: %zu, at least 16K", p->mem_budget);
        return -1;
    }
    layout(p, &ro, &oo, &chunk, &nruns, &block);
    if (block < 4096) {
        snprintf(err, errlen, "--mem-budget: %zu bytes make %zu runs, too many to merge in one pass with a 4 KiB "
                 "block each (raise it, or lower --sort-keys)", p->mem_budget, nruns);
        return -1;
    }
    return 0;
}

static uint64_t sort_volume(const struct mb_ooc_params *p)
{
    uint64_t ro, oo;
    size_t c, r, b;
    layout(p, &ro, &oo, &c, &r, &b);
    return oo + p->sort_keys * 8;
}

static uint64_t sort_io(const struct mb_ooc_params *p) { return 4 * p->sort_keys * 8; }

static int sort_prepare(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    uint64_t *buf = ooc_alloc(io, MIB);
    uint64_t per = MIB / 8;
    int rc = buf ? 0 : ooc_nomem(err, errlen, "writing the keys", MIB);
    for (uint64_t i = 0; i < p->sort_keys && !rc; i += per) {
        uint64_t k = p->sort_keys - i < per ? p->sort_keys - i : per;
        for (uint64_t j = 0; j < k; j++)
            buf[j] = key_at(p->seed, i + j);
        rc = ooc_write_one(io, i * 8, k * 8, buf, "writing the keys", err, errlen);
    }
    ooc_free(io, buf);
    return rc;
}

static uint64_t sort_corrupt(const struct mb_ooc_params *p) { return p->sort_keys * 8 / 2 + 5; }

static size_t sort_arena(const struct mb_ooc_params *p) { return (p->mem_budget + 4095) & ~(size_t)4095; }

static uint64_t sort_image(const struct mb_ooc_params *p, uint64_t *load)
{
    *load = p->sort_keys * 8;
    return sort_volume(p);
}

int mb_ooc_sort_u64(uint64_t *keys, size_t n, uint64_t *tmp)
{
    size_t (*h)[256] = ooc_calloc(8, sizeof(*h));
    if (!h)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 8; d++)
            h[d][(keys[i] >> (8 * d)) & 255]++;
    uint64_t *src = keys, *dst = tmp;
    for (int d = 0; d < 8; d++) {
        size_t sum = 0, *c = h[d];
        int one = 0;
        for (int b = 0; b < 256; b++)
            one |= c[b] == n;
        if (one) /* every key has the same digit: nothing to move */
            continue;
        for (int b = 0; b < 256; b++) {
            size_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++)
            dst[c[(src[i] >> (8 * d)) & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof(*keys));
    free(h);
    return 0;
}

static void *sort_open(const struct mb_ooc_params *p, struct ooc_io *io, char *err, size_t errlen)
{
    struct sorter *s = ooc_calloc(1, sizeof(*s));
    if (!s) {
        ooc_nomem(err, errlen, "--sort-keys: the sort's state", sizeof(*s));
        return NULL;
    }
    s->n = p->sort_keys;
    s->nb = s->n * 8;
    s->seed = p->seed;
    s->mode = io->mode;
    size_t chunk, block;
    layout(p, &s->run_off, &s->out_off, &chunk, &s->nruns, &block);
    s->chunk_keys = chunk / 8;
    s->block_keys = block / 8;
    s->mem = ooc_alloc(io, sort_arena(p));
    s->runs = ooc_calloc(s->nruns, sizeof(*s->runs));
    if (!s->mem || !s->runs) {
        snprintf(err, errlen, "--mem-budget: %zu bytes: out of memory", p->mem_budget);
        ooc_free(io, s->mem);
        free(s->runs);
        free(s);
        return NULL;
    }
    for (uint64_t i = 0; i < s->n; i++)
        s->expect_sum += mb_mix64(key_at(s->seed, i));
    return s;
}

static void sort_close(void *st, struct ooc_io *io)
{
    struct sorter *s = st;
    ooc_free(io, s->mem);
    free(s->runs);
    free(s);
}

/* Poisons the first 4 KiB of every merge block of the runs and the output,
 * so that a run that leaves any of them unwritten fails its check. */
static int sort_reset(void *st, struct ooc_io *io, long long iter, char *err, size_t errlen)
{
    (void)iter;
    struct sorter *s = st;
    uint64_t *poison = ooc_memalign(4096, 4096);
    if (!poison)
        return ooc_nomem(err, errlen, "poisoning the output", 4096);
    for (int i = 0; i < 512; i++)
        poison[i] = UINT64_MAX - (uint64_t)i; /* descending: out of order, and not the input */
    uint64_t step = (uint64_t)s->block_keys * 8;
    int rc = 0;
    for (int region = 0; region < 2 && !rc; region++)
        for (uint64_t o = 0; o < s->nb && !rc; o += step) {
            uint64_t at = (region ? s->out_off : s->run_off) + o;
            int e = ooc_rw_now(io, MB_AIO_WRITE, at, 4096, poison);
            if (e)
                rc = ooc_fail(err, errlen, "poisoning the output", e, at);
        }
    free(poison);
    return rc;
}

static int drain(struct ooc_io *io, struct ooc_op *ops, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        int e = ooc_finish(io, &ops[i]);
        if (e && !rc)
            rc = e;
    }
    return rc;
}

static int run_generation(struct sorter *s, struct ooc_io *io, char *err, size_t errlen)
{
    uint64_t *cbuf[3], *tmp = (uint64_t *)(s->mem + 3 * s->chunk_keys * 8);
    for (int b = 0; b < 3; b++) {
        cbuf[b] = (uint64_t *)(s->mem + (size_t)b * s->chunk_keys * 8);
        s->rop[b] = s->wop[b] = (struct ooc_op){0};
    }
    size_t R = s->nruns;
#define CHUNK_LEN(c) ((c) * s->chunk_keys + s->chunk_keys <= s->n ? s->chunk_keys : s->n - (c) * s->chunk_keys)
    s->rreq[0] = (struct mb_aio_req){s->in_off, CHUNK_LEN(0) * 8, cbuf[0], MB_AIO_READ, 0};
    s->rop[0] = (struct ooc_op){.reqs = &s->rreq[0], .n = 1};
    if (ooc_start(io, &s->rop[0]))
        return ooc_op_fail(err, errlen, "reading the input", &s->rop[0]);
    int rc = 0;
    for (size_t c = 0; c < R; c++) {
        int b = (int)(c % 3);
        if (c + 1 < R) {
            int nb = (int)((c + 1) % 3);
            if (ooc_finish(io, &s->wop[nb])) { /* run c-2's write used that buffer */
                rc = ooc_op_fail(err, errlen, "writing a run", &s->wop[nb]);
                break;
            }
            s->rreq[nb] = (struct mb_aio_req){s->in_off + (c + 1) * s->chunk_keys * 8, CHUNK_LEN(c + 1) * 8,
                                              cbuf[nb], MB_AIO_READ, 0};
            s->rop[nb] = (struct ooc_op){.reqs = &s->rreq[nb], .n = 1};
            if (ooc_start(io, &s->rop[nb])) {
                rc = ooc_op_fail(err, errlen, "reading the input", &s->rop[nb]);
                break;
            }
        }
        if (ooc_finish(io, &s->rop[b])) {
            rc = ooc_op_fail(err, errlen, "reading the input", &s->rop[b]);
            break;
        }
        size_t len = CHUNK_LEN(c);
        if (io->mode != MB_OOC_IO && mb_ooc_sort_u64(cbuf[b], len, tmp) != 0) {
            rc = ooc_nomem(err, errlen, "sorting a run: the radix counts", 8 * 256 * sizeof(size_t));
            break;
        }
        s->wreq[b] = (struct mb_aio_req){s->run_off + c * s->chunk_keys * 8, len * 8, cbuf[b], MB_AIO_WRITE, 0};
        s->wop[b] = (struct ooc_op){.reqs = &s->wreq[b], .n = 1};
        if (ooc_start(io, &s->wop[b])) {
            rc = ooc_op_fail(err, errlen, "writing a run", &s->wop[b]);
            break;
        }
    }
#undef CHUNK_LEN
    drain(io, s->rop, 3);
    for (int b = 0; b < 3 && !rc; b++)
        if (ooc_finish(io, &s->wop[b]))
            rc = ooc_op_fail(err, errlen, "writing a run", &s->wop[b]);
    drain(io, s->wop, 3);
    return rc;
}

/* Starts reading run r's next block into buffer b; 0 when the run has no more. */
static int run_read(struct sorter *s, struct ooc_io *io, struct run *r, int b)
{
    r->bufkeys[b] = 0;
    if (r->issued == r->len)
        return 0;
    size_t k = r->len - r->issued < s->block_keys ? (size_t)(r->len - r->issued) : s->block_keys;
    r->req[b] = (struct mb_aio_req){r->off + r->issued * 8, k * 8, r->buf[b], MB_AIO_READ, 0};
    r->op[b] = (struct ooc_op){.reqs = &r->req[b], .n = 1};
    r->issued += k;
    r->bufkeys[b] = k;
    return ooc_start(io, &r->op[b]);
}

/* Run r's current buffer is used up: switch to the other (waiting for it)
 * and refill this one. 0, or -errno; r->bufkeys[r->cur] == 0 at the end. */
static int run_next(struct sorter *s, struct ooc_io *io, struct run *r)
{
    int e = r->cur;
    r->cur ^= 1;
    r->pos = 0;
    if (r->bufkeys[r->cur] == 0)
        return 0;
    int rc = ooc_finish(io, &r->op[r->cur]);
    if (rc)
        return rc;
    return run_read(s, io, r, e);
}

struct out {
    uint64_t *buf[2];
    size_t fill, cap;
    uint64_t written;
    int cur;
};

static int out_flush(struct sorter *s, struct ooc_io *io, struct out *o)
{
    if (o->fill == 0)
        return 0;
    int b = o->cur;
    s->oreq[b] = (struct mb_aio_req){s->out_off + o->written * 8, o->fill * 8, o->buf[b], MB_AIO_WRITE, 0};
    s->oop[b] = (struct ooc_op){.reqs = &s->oreq[b], .n = 1};
    o->written += o->fill;
    o->fill = 0;
    o->cur ^= 1;
    int rc = ooc_start(io, &s->oop[b]);
    if (rc)
        return rc;
    return ooc_finish(io, &s->oop[o->cur]); /* the buffer now to be filled */
}

struct hent { uint64_t key; size_t run; };

static void sift(struct hent *h, size_t n, size_t i)
{
    struct hent x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].key < h[c].key)
            c++;
        if (h[c].key >= x.key)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static int merge(struct sorter *s, struct ooc_io *io, char *err, size_t errlen)
{
    size_t R = s->nruns, bk = s->block_keys;
    struct out o = {.cap = bk};
    o.buf[0] = (uint64_t *)(s->mem + 2 * R * bk * 8);
    o.buf[1] = (uint64_t *)(s->mem + (2 * R + 1) * bk * 8);
    s->oop[0] = s->oop[1] = (struct ooc_op){0};
    int rc = 0;
    for (size_t i = 0; i < R && !rc; i++) {
        struct run *r = &s->runs[i];
        memset(r, 0, sizeof(*r));
        r->off = s->run_off + i * s->chunk_keys * 8;
        r->len = (i + 1) * s->chunk_keys <= s->n ? s->chunk_keys : s->n - i * s->chunk_keys;
        r->buf[0] = (uint64_t *)(s->mem + 2 * i * bk * 8);
        r->buf[1] = (uint64_t *)(s->mem + (2 * i + 1) * bk * 8);
        rc = run_read(s, io, r, 0);
        if (!rc)
            rc = run_read(s, io, r, 1);
        if (rc)
            ooc_op_fail(err, errlen, "reading a run", &r->op[r->bufkeys[1] ? 1 : 0]);
    }
    struct hent *h = ooc_malloc(R * sizeof(*h));
    if (!h && !rc)
        rc = ooc_nomem(err, errlen, "merging: the heap", R * sizeof(*h));
    size_t hn = 0;
    for (size_t i = 0; i < R && !rc; i++) {
        if ((rc = ooc_finish(io, &s->runs[i].op[0])) != 0)
            ooc_op_fail(err, errlen, "reading a run", &s->runs[i].op[0]);
        else
            h[hn++] = (struct hent){s->runs[i].buf[0][0], i};
    }
    const char *what = "reading a run";
    if (!rc && io->mode == MB_OOC_IO) {
        /* the same reads and writes without the comparisons: whole blocks
         * round-robin over the runs */
        size_t live = R;
        while (live && !rc) {
            live = 0;
            for (size_t i = 0; i < R && !rc; i++) {
                struct run *r = &s->runs[i];
                if (r->bufkeys[r->cur] == 0)
                    continue;
                live++;
                while (r->pos < r->bufkeys[r->cur] && !rc) {
                    size_t k = r->bufkeys[r->cur] - r->pos, room = o.cap - o.fill;
                    k = k < room ? k : room;
                    memcpy(o.buf[o.cur] + o.fill, r->buf[r->cur] + r->pos, k * 8);
                    o.fill += k;
                    r->pos += k;
                    if (o.fill == o.cap && (rc = out_flush(s, io, &o)) != 0)
                        what = "writing the output";
                }
                if (!rc && (rc = run_next(s, io, r)) != 0)
                    what = "reading a run";
            }
        }
    } else if (!rc) {
        for (size_t i = hn / 2; i-- > 0;)
            sift(h, hn, i);
        while (hn && !rc) {
            struct run *r = &s->runs[h[0].run];
            o.buf[o.cur][o.fill++] = h[0].key;
            if (o.fill == o.cap && (rc = out_flush(s, io, &o)) != 0) {
                what = "writing the output";
                break;
            }
            if (++r->pos == r->bufkeys[r->cur] && (rc = run_next(s, io, r)) != 0)
                break;
            if (r->bufkeys[r->cur] == 0)
                h[0] = h[--hn];
            else
                h[0].key = r->buf[r->cur][r->pos];
            sift(h, hn, 0);
        }
    }
    if (!rc && (rc = out_flush(s, io, &o)) != 0)
        what = "writing the output";
    if (!rc && (rc = drain(io, s->oop, 2)) != 0)
        what = "writing the output";
    if (rc && !err[0]) {
        struct ooc_op *bad = NULL;
        for (size_t i = 0; i < R && !bad; i++)
            for (int b = 0; b < 2; b++)
                if (s->runs[i].op[b].err)
                    bad = &s->runs[i].op[b];
        for (int b = 0; b < 2 && !bad; b++)
            if (s->oop[b].err)
                bad = &s->oop[b];
        if (bad)
            ooc_op_fail(err, errlen, what, bad);
        else
            ooc_fail(err, errlen, what, rc, 0);
    }
    for (size_t i = 0; i < R; i++)
        drain(io, s->runs[i].op, 2);
    drain(io, s->oop, 2);
    if (!rc && o.written != s->n) {
        snprintf(err, errlen, "merge wrote %" PRIu64 " keys of %" PRIu64, o.written, s->n);
        rc = -1;
    }
    free(h);
    return rc ? -1 : 0;
}

static int sort_run(void *st, struct ooc_io *io, char *err, size_t errlen)
{
    struct sorter *s = st;
    uint64_t q = io->requests;
    int rc = run_generation(s, io, err, errlen);
    if (!rc)
        rc = merge(s, io, err, errlen);
    s->requests = io->requests - q;
    return rc ? -1 : 0;
}

static int sort_check(void *st, struct ooc_io *io, char *msg, size_t len)
{
    struct sorter *s = st;
    uint64_t *buf = ooc_memalign(4096, MIB), sum = 0, prev = 0;
    if (!buf) {
        ooc_nomem(msg, len, "reading the output back", MIB);
        return 1;
    }
    for (uint64_t i = 0; i < s->n; i += MIB / 8) {
        size_t k = s->n - i < MIB / 8 ? (size_t)(s->n - i) : MIB / 8;
        int e = ooc_rw_now(io, MB_AIO_READ, s->out_off + i * 8, k * 8, buf);
        if (e) {
            ooc_fail(msg, len, "reading the output back", e, s->out_off + i * 8);
            free(buf);
            return 1;
        }
        for (size_t j = 0; j < k; j++) {
            if (io->mode != MB_OOC_IO && i + j > 0 && buf[j] < prev) {
                snprintf(msg, len, "output key %" PRIu64 " (0x%016" PRIx64 ") is smaller than key %" PRIu64
                         " before it: not sorted", i + j, buf[j], i + j - 1);
                free(buf);
                return 1;
            }
            prev = buf[j];
            sum += mb_mix64(buf[j]);
        }
    }
    free(buf);
    if (sum != s->expect_sum) {
        snprintf(msg, len, "permutation checksum of the %" PRIu64 " output keys is 0x%016" PRIx64 ", the input's "
                 "0x%016" PRIx64 ": keys lost, doubled or changed", s->n, sum, s->expect_sum);
        return 1;
    }
    return 0;
}

static void sort_stats(const void *st, struct mb_ooc_stats *out)
{
    const struct sorter *s = st;
    int mem = s->mode == MB_OOC_COMPUTE;
    out->read_bytes = mem ? 0 : 2 * s->nb;
    out->write_bytes = mem ? 0 : 2 * s->nb;
    out->requests = mem ? 0 : s->requests;
}

const struct ooc_app ooc_sort_app = {
    .validate = sort_validate,
    .volume_bytes = sort_volume,
    .io_bytes = sort_io,
    .prepare = sort_prepare,
    .corrupt_offset = sort_corrupt,
    .arena_bytes = sort_arena,
    .image_bytes = sort_image,
    .open = sort_open,
    .reset = sort_reset,
    .run = sort_run,
    .check = sort_check,
    .stats = sort_stats,
    .close = sort_close,
};
