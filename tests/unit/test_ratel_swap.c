/* ratel/ + nn/ together: a small GPT trained one step layer by layer the
 * way a Ratel trainer does, every activation policy and both readings of
 * case 1: after each layer's forward the tensors the choice swaps are
 * copied out to a host area and released, the rest released to be
 * recomputed, and the device memory they were in is overwritten (as
 * reuse by the next layer would); backward attaches the swapped ones from
 * the host copies and recomputes the others. Every layer's gradients
 * must equal, bit for bit, nn_gpt_forward/_backward keeping everything. */
#include "check.h"

#include "../../ratel/ratel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct nn_precision F32 = {NN_F32, NN_F32, NN_F32};

struct host_area { /* where swapped tensors land: a bump allocator */
    char *base;
    size_t used, cap;
};

static void *host_take(struct host_area *h, size_t bytes)
{
    size_t r = (bytes + 63) / 64 * 64;
    if (h->used + r > h->cap)
        return NULL;
    void *p = h->base + h->used;
    h->used += r;
    return p;
}

/* After layer l's forward: swap out the tensors in mask, release the rest. */
static int offload(struct nn_layer *l, unsigned mask, struct host_area *h, void **where,
                   uint64_t *swapped)
{
    struct nn_tensor *t[16];
    int k = (int)nn_layer_act_intra(l, t, 16);
    for (int i = 0; i < k; i++) {
        size_t bytes = nn_tensor_bytes(t[i]);
        where[i] = NULL;
        if (mask >> i & 1) {
            if (!(where[i] = host_take(h, bytes)))
                return -1;
            memcpy(where[i], t[i]->data, bytes);
            *swapped += bytes;
        }
        void *dev = nn_layer_intra_release(l, i);
        if (!dev)
            return -1;
        memset(dev, 0xff, bytes); /* the next layer reuses it */
    }
    return 0;
}

/* Before layer l's backward: the swapped tensors come back (attached
 * where they are in the host area, valid); the others get their own
 * memory back when backward recomputes them. */
static int bring_back(struct nn_layer *l, void **where)
{
    for (int i = 0; i < 16 && nn_layer_intra_name(l, i); i++)
        if (where[i] && nn_layer_intra_attach(l, i, where[i], 1) != 0)
            return -1;
    return 0;
}

int main(void)
{
    struct nn_gpt_config cfg;
    char err[160];
    EXPECT(nn_gpt_config_parse("layers=3,hidden=32,heads=4,seq=16,vocab=24", &cfg, err,
                               sizeof(err)) == 0);
    const int B = 2;
    size_t M = (size_t)B * (size_t)cfg.seq;
    int32_t *tok = malloc(M * 4), *tgt = malloc(M * 4);
    struct nn_rng r;
    nn_rng_seed(&r, 77);
    for (size_t i = 0; i < M; i++) {
        tok[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)cfg.vocab);
        tgt[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)cfg.vocab);
    }
    /* the reference: everything kept */
    struct nn_gpt *ref = nn_gpt_new(&cfg, B, F32, 5);
    double loss_ref;
    nn_gpt_zero_grad(ref);
    EXPECT(nn_gpt_forward(ref, tok, tgt, &loss_ref) == 0 && nn_gpt_backward(ref) == 0);

    int n = ratel_gpt_units(&cfg, B, F32, NULL, 0);
    struct ratel_unit *u = malloc((size_t)n * sizeof(*u));
    unsigned char *swap = malloc((size_t)n);
    ratel_gpt_units(&cfg, B, F32, u, n);
    struct ratel_model mdl;
    ratel_gpt_model(&cfg, B, F32, &mdl);
    /* rates where Algorithm 1 stops inside (case 3): backward GEMMs
     * against the link that brings activations back */
    struct ratel_hw hw = {1e9, 1e12, 0, 1e12, 1e12, 1e12, 0, 0, 0, 0, 0, 0, 0};
    hw.link_m2g = (mdl.act_all / 2) / ((2 * mdl.flops_fwd + mdl.flops_rc_all / 2) / hw.gemm_flops);
    /* host-only may keep little more than the block inputs */
    hw.mem_avail = mdl.act_inter + 8192;
    size_t cap = 0;
    for (int i = 0; i < n; i++)
        cap += ((size_t)u[i].bytes + 63) / 64 * 64;
    struct host_area host = {aligned_alloc(64, cap), 0, cap};
    int seen_case[4] = {0};

    for (int act = 0; act < RATEL_ACT_COUNT; act++)
        for (int c1 = 0; c1 < 2; c1++) {
            struct ratel_choice ch;
            int rc = ratel_act_choose((enum ratel_act)act, &mdl, &hw, u, n, (enum ratel_case1)c1,
                                      swap, &ch);
            EXPECT(rc == 0);
            if (rc)
                fprintf(stderr, "%s case1=%d: refused\n", ratel_act_name((enum ratel_act)act), c1);
            if (act == RATEL_ACT_RATEL)
                seen_case[ch.which_case]++;
            if (act == RATEL_ACT_HOST_ONLY)
                EXPECT(ch.a_g2m <= hw.mem_avail);
            struct nn_gpt *m = nn_gpt_new(&cfg, B, F32, 5);
            nn_gpt_zero_grad(m);
            host.used = 0;
            uint64_t swapped = 0;
            void *where[8][16];
            int L = cfg.layers, ok = 1, cur = 0;
            double loss;
            /* forward, layer by layer */
            ok &= nn_layer_forward(m->layer[0], tok, m->h[0]) == 0;
            for (int i = 1; i <= L; i++) {
                ok &= nn_layer_forward(m->layer[i], m->h[cur], m->h[1 - cur]) == 0;
                ok &= offload(m->layer[i], ratel_layer_mask(u, n, swap, i, NULL), &host, where[i],
                              &swapped) == 0;
                cur = 1 - cur;
            }
            ok &= nn_layer_forward_head(m->layer[L + 1], m->h[cur], tgt, &loss) == 0;
            ok &= offload(m->layer[L + 1], ratel_layer_mask(u, n, swap, L + 1, NULL), &host,
                          where[L + 1], &swapped) == 0;
            /* a group's units swapped together or not at all */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (u[i].group && u[j].group == u[i].group && u[j].layer == u[i].layer &&
                        swap[i] != swap[j]) {
                        EXPECT(swap[i] == swap[j]);
                        i = j = n;
                    }
            /* backward, from the head down; the FLOPs it recomputes are the
             * model's FLOP_r for the choice (swapping W1's output h1 without
             * gl reran W1 all the same, the model counting it saved) */
            double rc_flops = 0;
            cur = 0;
            ok &= bring_back(m->layer[L + 1], where[L + 1]) == 0;
            rc_flops += nn_layer_recompute_flops(m->layer[L + 1]);
            ok &= nn_layer_backward(m->layer[L + 1], NULL, m->dh[cur]) == 0;
            for (int i = L; i >= 1; i--) {
                ok &= bring_back(m->layer[i], where[i]) == 0;
                rc_flops += nn_layer_recompute_flops(m->layer[i]);
                ok &= nn_layer_backward(m->layer[i], m->dh[cur], m->dh[1 - cur]) == 0;
                cur = 1 - cur;
            }
            ok &= nn_layer_backward(m->layer[0], m->dh[cur], NULL) == 0;
            EXPECT(ok);
            EXPECT(loss == loss_ref);
            EXPECT(fabs(rc_flops - ch.flops_r) <= 1e-9 * mdl.flops_rc_all);
            if (!(fabs(rc_flops - ch.flops_r) <= 1e-9 * mdl.flops_rc_all))
                fprintf(stderr, "%s case1=%d: backward recomputes %.0f FLOPs, the model's FLOP_r %.0f\n",
                        ratel_act_name((enum ratel_act)act), c1, rc_flops, ch.flops_r);
            /* what was swapped is what the choice says, less the block
             * inputs, which stay in their layers here */
            double inter = 0;
            for (int i = 0; i < n; i++)
                inter += swap[i] && u[i].inter ? u[i].bytes : 0;
            EXPECT((double)swapped == ch.a_g2m - inter);
            int same = 1;
            for (int i = 0; i < m->nlayers; i++)
                same &= memcmp(nn_layer_grads(m->layer[i])->data,
                               nn_layer_grads(ref->layer[i])->data,
                               nn_tensor_bytes(nn_layer_grads(ref->layer[i]))) == 0;
            EXPECT(same);
            fprintf(stderr, "%-13s case1=%s: case %d, %2d units, %6llu bytes swapped of %.0f: %s\n",
                    ratel_act_name((enum ratel_act)act), c1 ? "bytes" : "inter", ch.which_case,
                    ch.nswap, (unsigned long long)swapped, mdl.act_all,
                    same ? "gradients bit-identical" : "GRADIENTS DIFFER");
            nn_gpt_free(m);
        }
    EXPECT(seen_case[3] == 2); /* the rates above put Algorithm 1 inside */
    nn_gpt_free(ref);
    free(host.base);
    free(u);
    free(swap);
    free(tok);
    free(tgt);
    return TEST_EXIT();
}
