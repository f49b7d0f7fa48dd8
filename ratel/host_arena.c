/* Activations in host memory up to MEM_avail, the rest on storage, as
 * mb-ratel's trainer keeps them: every swapped tensor kept in host memory
 * is a block of the host arena (64-byte aligned), so MEM_avail must be the
 * bytes that arena really has free for them; the swapped tensors beyond it
 * go to storage (Eq. 3's alpha A_G2M), the lowest layers first. host-only
 * (Ratel+CpuAct) never sends any to storage: its walk is capped. */
#include "ratel.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t round64(double b) { return ((uint64_t)b + 63) / 64 * 64; }

double ratel_host_pad_bytes(const struct ratel_unit *u, int n)
{
    double pad = 0;
    for (int i = 0; i < n; i++)
        pad += (double)round64(u[i].bytes) - u[i].bytes;
    return pad;
}

double ratel_host_mem_avail(uint64_t free_bytes, uint64_t step_peak, uint64_t step_act,
                            const struct ratel_unit *u, int n)
{
    double transient = step_peak > step_act ? (double)(step_peak - step_act) : 0;
    double avail = (double)free_bytes - transient - ratel_host_pad_bytes(u, n);
    return avail > 0 ? avail : 0;
}

int ratel_act_choose_host(enum ratel_act act, const struct ratel_model *m, const struct ratel_hw *hw,
                          const struct ratel_unit *u, int n, enum ratel_case1 c1,
                          unsigned char *swap, struct ratel_choice *out)
{
    /* host-only walks under the cap; the others are uncapped (the excess
     * to storage, priced by ratel_iter_time's act_storage) */
    if (ratel_act_choose(act, m, hw, u, n, c1, swap, out) != 0)
        return -1;
    return act != RATEL_ACT_HOST_ONLY || out->a_g2m <= hw->mem_avail ? 0 : -1;
}

double ratel_spill_units(const struct ratel_unit *u, int n, const unsigned char *swap, double mem_avail,
                         unsigned char *on_store)
{
    double total = 0, stored = 0;
    for (int i = 0; i < n; i++) {
        on_store[i] = 0;
        total += swap[i] ? u[i].bytes : 0;
    }
    for (int l = INT32_MIN, done = 0; !done && total - stored > mem_avail;) {
        /* the lowest layer not yet taken */
        int next = INT32_MAX;
        for (int i = 0; i < n; i++)
            if (swap[i] && !on_store[i] && u[i].layer > l && u[i].layer < next)
                next = u[i].layer;
        if (next == INT32_MAX)
            break;
        l = next;
        for (int i = 0; i < n && !done; i++)
            if (swap[i] && u[i].layer == l) {
                on_store[i] = 1;
                stored += u[i].bytes;
                done = !(total - stored > mem_avail);
            }
    }
    return stored;
}

uint64_t ratel_host_arena_need(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                               enum ratel_system sys, enum ratel_act act)
{
    if (sys != RATEL_SYS_RATEL && sys != RATEL_SYS_ZERO_INFINITY)
        return 0; /* activations stay on the device */
    uint64_t maxp = 0, g16_each = 0, need = 0;
    for (int l = 0; l <= cfg->layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, l, &a);
        maxp = a.params > maxp ? a.params : maxp;
        g16_each += round64((double)a.params * 2);
    }
    /* trainer.c's setup: two P16 staging slots, then G16's two landing slots
     * (zero-infinity: one per layer, all live until its Adam) */
    need = 2 * round64((double)maxp * 2) +
           (sys == RATEL_SYS_ZERO_INFINITY ? g16_each : 2 * round64((double)maxp * 2));
    /* the activations every step swaps at least: the block inputs (the
     * first two steps run inter-block whatever the policy, in host memory);
     * later steps send what exceeds MEM_avail to storage */
    int n = ratel_gpt_units(cfg, B, prec, NULL, 0);
    struct ratel_unit *u = calloc((size_t)n + 1, sizeof(*u));
    if (!u)
        return UINT64_MAX;
    ratel_gpt_units(cfg, B, prec, u, n);
    (void)act;
    for (int i = 0; i < n; i++)
        if (u[i].inter)
            need += round64(u[i].bytes);
    free(u);
    return need;
}

uint64_t ratel_host_beside_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                                 enum ratel_system sys, enum ratel_act act, uint64_t chunk)
{
    if (sys != RATEL_SYS_RATEL && sys != RATEL_SYS_ZERO_INFINITY)
        return 0; /* no store */
    uint64_t maxp = 0;
    for (int l = 0; l <= cfg->layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, l, &a);
        maxp = a.params > maxp ? a.params : maxp;
    }
    /* the store's buffer sets (open_store: its tensors are the layers,
     * updated in chunks, the default block), and the storage path's
     * staging slots wherever some activations may go there (host-only
     * never sends any) */
    uint64_t unit = mb_ostore_unit_elems(maxp, chunk ? chunk : RATEL_UPDATE_CHUNK, 0);
    return mb_ostore_host_bytes(unit, 0) + (act == RATEL_ACT_HOST_ONLY ? 0 : RATEL_ACT_STAGING_BYTES);
}
