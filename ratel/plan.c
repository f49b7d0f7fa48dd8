/* --plan: where every byte of a Ratel run lives, from nn_gpt_account and
 * nn_workspace_bytes without allocating, and whether it fits the device,
 * host and storage budgets. Placement as in the paper: P32, Adam m, v and
 * P16 on storage (14P); the device holds what the trainer allocates
 * (ratel_dev_bytes: one layer's parameters at a time, double-buffered P16
 * in and G16 out, two shared intra regions, every layer's input); swapped
 * activations go to the host up to what its fixed buffers leave, the rest
 * to storage. */
#include "ratel.h"

#include <stdio.h>
#include <string.h>

static double gb(uint64_t b) { return (double)b / 1e9; }

void ratel_plan(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                const struct ratel_budget *bud, uint64_t act_swap, struct ratel_plan *o)
{
    memset(o, 0, sizeof(*o));
    struct nn_layer_account t;
    nn_gpt_account(cfg, B, prec, &t);
    o->params = t.params;
    o->stor_states = t.opt_bytes + t.param_bytes;
    uint64_t maxp = 0, maxpb = 0, maxgb = 0, inter = 0, all = 0;
    for (int l = 0; l <= cfg->layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, l, &a);
        maxp = a.params > maxp ? a.params : maxp;
        maxpb = a.param_bytes > maxpb ? a.param_bytes : maxpb;
        maxgb = a.grad_bytes > maxgb ? a.grad_bytes : maxgb;
        uint64_t act = a.act_inter_bytes + a.act_intra_bytes;
        if (l >= 1) {
            inter += a.act_inter_bytes;
            all += act;
        }
    }
    o->act_swap = act_swap < inter ? inter : act_swap > all ? all : act_swap;
    o->dev_need = ratel_dev_bytes(cfg, B, prec, RATEL_SYS_RATEL);
    /* the host arena: P16 staging and G16 landing, two slots each of the
     * largest layer, as the trainer takes them (64-byte rounded); beside it
     * in the same budget mb_ostore's three sets of P32, m, v in and P16 out
     * (14 bytes per parameter) and, unless host-only, the activations'
     * staging slots: the trainer's ratel_host_beside_bytes */
    (void)maxpb;
    (void)maxgb;
    o->host_fixed = 4 * ((maxp * 2 + 63) / 64 * 64);
    o->host_store = ratel_host_beside_bytes(cfg, B, prec, RATEL_SYS_RATEL,
                                            bud->host_only_act ? RATEL_ACT_HOST_ONLY : RATEL_ACT_RATEL, bud->update_chunk);
    uint64_t fixed = o->host_fixed + o->host_store;
    uint64_t avail = bud->host_mem > fixed ? bud->host_mem - fixed : 0;
    o->host_act = o->act_swap < avail ? o->act_swap : avail;
    o->stor_act = o->act_swap - o->host_act;
    o->fits_dev = o->dev_need <= bud->dev_mem;
    o->fits_host = fixed <= bud->host_mem && !(bud->host_only_act && o->stor_act > 0);
    o->fits_storage = !bud->storage || o->stor_states + o->stor_act <= bud->storage;
    o->fits = o->fits_dev && o->fits_host && o->fits_storage;
    if (!o->fits_dev)
        snprintf(o->why, sizeof(o->why), "device: needs %.3f GB (ratel_dev_bytes), budget %.3f GB",
                 gb(o->dev_need), gb(bud->dev_mem));
    else if (!o->fits_host)
        snprintf(o->why, sizeof(o->why), "host: needs %.3f GB%s, budget %.3f GB",
                 gb(fixed + (bud->host_only_act ? o->act_swap : 0)),
                 bud->host_only_act ? " (buffers + activations)" : " (buffers)", gb(bud->host_mem));
    else if (!o->fits_storage)
        snprintf(o->why, sizeof(o->why), "storage: needs %.3f GB, capacity %.3f GB",
                 gb(o->stor_states + o->stor_act), gb(bud->storage));
}

int ratel_plan_format(const struct ratel_plan *p, const struct ratel_budget *b, char *buf,
                      size_t len)
{
    char cap[32] = "unlimited";
    if (b->storage)
        snprintf(cap, sizeof(cap), "%.3f", gb(b->storage));
    return snprintf(buf, len,
                    "%-8s %12s %12s  %s\n"
                    "%-8s %12.3f %12.3f  %-4s P16, G16 slots twice; layer inputs; 2 intra regions; workspace\n"
                    "%-8s %12.3f %12.3f  %-4s buffers %.3f GB + activations %.3f GB%s\n"
                    "%-8s %12.3f %12s  %-4s P32+m+v+P16 (14P) %.3f GB + activations %.3f GB\n"
                    "params %.4g, activations swapped %.3f GB: %s%s\n",
                    "tier", "need GB", "budget GB", "",
                    "device", gb(p->dev_need), gb(b->dev_mem), p->fits_dev ? "fits" : "over",
                    "host", gb(p->host_fixed + p->host_store + p->host_act), gb(b->host_mem),
                    p->fits_host ? "fits" : "over", gb(p->host_fixed + p->host_store), gb(p->host_act),
                    b->host_only_act ? " (host-only)" : "",
                    "storage", gb(p->stor_states + p->stor_act), cap,
                    p->fits_storage ? "fits" : "over", gb(p->stor_states), gb(p->stor_act),
                    (double)p->params, gb(p->act_swap), p->fits ? "fits" : "does not fit: ",
                    p->fits ? "" : p->why);
}

const char *ratel_largest_preset(int B, struct nn_precision prec, const struct ratel_budget *b,
                                 struct ratel_plan *out)
{
    static const char *const table4[] = {"gpt-6b", "gpt-13b", "gpt-30b", "gpt-70b",
                                         "gpt-135b", "gpt-175b", "gpt-276b", "gpt-412b"};
    const char *best = NULL;
    for (size_t i = 0; i < sizeof(table4) / sizeof(table4[0]); i++) {
        struct nn_gpt_config c;
        struct ratel_plan p;
        if (nn_gpt_preset(table4[i], &c) != 0)
            continue;
        ratel_plan(&c, B, prec, b, 0, &p);
        if (p.fits) {
            best = table4[i];
            if (out)
                *out = p;
        }
    }
    return best;
}

/* The largest n in [0, max] with fits(n) (fits is monotone: every need
 * grows with n), by bisection. */
static int largest(int max, int (*fits)(const void *ctx, int n), const void *ctx)
{
    int lo = 0, hi = max;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (fits(ctx, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

struct search {
    const struct nn_gpt_config *cfg;
    int B;
    struct nn_precision prec;
    const struct ratel_budget *b;
};

static int fits_layers(const void *ctx, int L)
{
    const struct search *s = ctx;
    struct nn_gpt_config c = *s->cfg;
    struct ratel_plan p;
    c.layers = L;
    ratel_plan(&c, s->B, s->prec, s->b, 0, &p);
    return p.fits;
}

static int fits_batch(const void *ctx, int B)
{
    const struct search *s = ctx;
    struct ratel_plan p;
    ratel_plan(s->cfg, B, s->prec, s->b, 0, &p);
    return p.fits;
}

int ratel_largest_layers(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         const struct ratel_budget *b, int max_layers)
{
    struct search s = {cfg, B, prec, b};
    return largest(max_layers, fits_layers, &s);
}

int ratel_largest_batch(const struct nn_gpt_config *cfg, struct nn_precision prec,
                        const struct ratel_budget *b, int max_batch)
{
    struct search s = {cfg, 0, prec, b};
    return largest(max_batch, fits_batch, &s);
}
