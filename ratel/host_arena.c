/* Activations in host memory only, as mb-ratel's trainer keeps them: every
 * swapped tensor is a block of the host arena (64-byte aligned) and none
 * overflows to storage, so MEM_avail must be the bytes that block really
 * has free for them, and a policy may never swap more. (The paper's model
 * lets the excess go to storage, Eq. 3's alpha: --plan and ratel_iter_time
 * still price that; the trainer has no such path, and Algorithm 1 walked
 * uncapped swapped 29 MB past the arena at full scale batch 8.) */
#include "ratel.h"

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
    /* Algorithm 1 walks under the cap: host-only's walk */
    enum ratel_act a = act == RATEL_ACT_RATEL ? RATEL_ACT_HOST_ONLY : act;
    if (ratel_act_choose(a, m, hw, u, n, c1, swap, out) != 0)
        return -1;
    return out->a_g2m <= hw->mem_avail ? 0 : -1;
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
     * first two steps run inter-block whatever the policy), all of them
     * under swap-all */
    int n = ratel_gpt_units(cfg, B, prec, NULL, 0);
    struct ratel_unit *u = calloc((size_t)n + 1, sizeof(*u));
    if (!u)
        return UINT64_MAX;
    ratel_gpt_units(cfg, B, prec, u, n);
    int all = sys == RATEL_SYS_RATEL && act == RATEL_ACT_SWAP_ALL;
    for (int i = 0; i < n; i++)
        if (all || u[i].inter)
            need += round64(u[i].bytes);
    free(u);
    return need;
}
