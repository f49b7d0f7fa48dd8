/* The activation policies mb-ratel compares (--act): Algorithm 1 and the
 * baselines' fixed rules, each a swap set priced by the same model, and
 * the per-layer masks a trainer releases by. */
#include "ratel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const act_names[RATEL_ACT_COUNT] = {"ratel", "swap-all", "inter-block",
                                                       "recompute-all", "host-only"};

const char *ratel_act_name(enum ratel_act a)
{
    return (unsigned)a < RATEL_ACT_COUNT ? act_names[a] : "?";
}

int ratel_act_parse(const char *s, enum ratel_act *out)
{
    for (int i = 0; i < RATEL_ACT_COUNT; i++)
        if (!strcmp(s, act_names[i])) {
            *out = (enum ratel_act)i;
            return 0;
        }
    return -1;
}

/* A swap set priced: A_G2M and FLOP_r summed over swap[], the model's
 * times at them (which_case left to the caller). */
static int price_set(const struct ratel_model *m, const struct ratel_hw *hw, const struct ratel_unit *u, int n,
                     const unsigned char *swap, struct ratel_choice *out)
{
    memset(out, 0, sizeof(*out));
    double a = 0, fr = m->flops_rc_all;
    for (int i = 0; i < n; i++) {
        if (!(u[i].bytes > 0) || !(u[i].flops >= 0))
            return -1;
        if (swap[i]) {
            a += u[i].bytes;
            fr -= u[i].flops;
            out->nswap++;
        }
    }
    out->a_g2m = a;
    out->flops_r = fr > 0 ? fr : 0;
    ratel_iter_time(m, hw, a, out->flops_r, &out->t);
    out->steps = 1;
    return 0;
}

/* A fixed rule: swap[i] = rule(unit i). */
static int fixed(const struct ratel_model *m, const struct ratel_hw *hw,
                 const struct ratel_unit *u, int n, int which, unsigned char *swap,
                 struct ratel_choice *out)
{
    for (int i = 0; i < n; i++)
        swap[i] = which == RATEL_ACT_SWAP_ALL || (which == RATEL_ACT_INTER_BLOCK && u[i].inter);
    if (price_set(m, hw, u, n, swap, out) != 0)
        return -1;
    out->which_case = which == RATEL_ACT_SWAP_ALL ? 2 : 1;
    return 0;
}

/* Algorithm 1 (capped at cap when capped) over the table
 * with each group (same layer, same nonzero group) merged into one unit,
 * the choice expanded back: a group's units all swapped or none. */
static int walk_grouped(const struct ratel_model *m, const struct ratel_hw *hw,
                        const struct ratel_unit *u, int n, enum ratel_case1 c1, int capped,
                        double cap, unsigned char *swap, struct ratel_choice *out)
{
    if (n < 0)
        return -1;
    struct ratel_unit *g = malloc(((size_t)n + 1) * sizeof(*g));
    int *of = malloc(((size_t)n + 1) * sizeof(*of));
    unsigned char *gs = calloc((size_t)n + 1, 1);
    int ng, rc = -1;
    if (!g || !of || !gs)
        goto out;
    ng = ratel_units_grouped(u, n, g, of);
    rc = !capped ? ratel_algorithm1(m, hw, g, ng, c1, gs, out)
                 : ratel_algorithm1_capped(m, hw, g, ng, c1, cap, gs, out);
    if (rc == 0) {
        out->nswap = 0;
        for (int i = 0; i < n; i++)
            out->nswap += swap[i] = gs[of[i]];
    }
out:
    free(g);
    free(of);
    free(gs);
    return rc;
}

int ratel_act_choose(enum ratel_act act, const struct ratel_model *m, const struct ratel_hw *hw,
                     const struct ratel_unit *u, int n, enum ratel_case1 c1,
                     unsigned char *swap, struct ratel_choice *out)
{
    switch (act) {
    case RATEL_ACT_RATEL:
        return walk_grouped(m, hw, u, n, c1, 0, 0, swap, out);
    case RATEL_ACT_HOST_ONLY:
        return walk_grouped(m, hw, u, n, c1, 1, hw->mem_avail, swap, out);
    case RATEL_ACT_SWAP_ALL:
    case RATEL_ACT_INTER_BLOCK:
    case RATEL_ACT_RECOMPUTE_ALL:
        return fixed(m, hw, u, n, act, swap, out);
    default:
        return -1;
    }
}

unsigned ratel_layer_mask(const struct ratel_unit *u, int n, const unsigned char *swap, int layer,
                          int *inter)
{
    unsigned mask = 0;
    if (inter)
        *inter = 0;
    for (int i = 0; i < n; i++) {
        if (u[i].layer != layer || !swap[i])
            continue;
        if (u[i].inter) {
            if (inter)
                *inter = 1;
        } else if (u[i].tensor >= 0 && u[i].tensor < 32) {
            mask |= 1u << u[i].tensor;
        }
    }
    return mask;
}

int ratel_swap_set_format(const unsigned char *swap, int n, char *buf, size_t len)
{
    int nd = (n + 3) / 4;
    if (n < 0 || len < (size_t)nd + 1)
        return -1;
    for (int k = 0; k < nd; k++) {
        unsigned d = 0;
        for (int j = 0; j < 4 && 4 * k + j < n; j++)
            d |= (swap[4 * k + j] ? 1u : 0u) << j;
        buf[k] = "0123456789abcdef"[d];
    }
    buf[nd] = 0;
    return nd;
}

int ratel_swap_set_parse(const char *hex, const struct ratel_unit *u, int n, unsigned char *swap, char *err,
                         size_t errlen)
{
    int nd = (n + 3) / 4;
    size_t len = strlen(hex);
    if (n < 0 || len != (size_t)nd) {
        snprintf(err, errlen, "%zu hex digits, the table of %d units needs %d", len, n, nd);
        return -1;
    }
    for (int k = 0; k < nd; k++) {
        char c = hex[k];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15) {
            snprintf(err, errlen, "'%c' (digit %d) is not a hex digit", c, k + 1);
            return -1;
        }
        for (int j = 0; j < 4; j++) {
            if (4 * k + j < n)
                swap[4 * k + j] = (unsigned char)(d >> j & 1);
            else if (d >> j & 1) {
                snprintf(err, errlen, "bit of unit %d set, past the table's %d units", 4 * k + j, n);
                return -1;
            }
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; u[i].group && j < i; j++)
            if (u[j].group == u[i].group && u[j].layer == u[i].layer && swap[j] != swap[i]) {
                snprintf(err, errlen, "layer %d: recompute group %d split (unit %d %s, unit %d %s): nn reruns a "
                         "group unless all of it is present", u[i].layer, u[i].group, j, swap[j] ? "in" : "out", i,
                         swap[i] ? "in" : "out");
                return -1;
            }
    return 0;
}

int ratel_act_given(const struct ratel_model *m, const struct ratel_hw *hw, const struct ratel_unit *u, int n,
                    const unsigned char *given, unsigned char *swap, struct ratel_choice *out)
{
    for (int i = 0; i < n; i++)
        swap[i] = given[i] ? 1 : 0;
    return price_set(m, hw, u, n, swap, out); /* which_case 0: given, not chosen */
}
