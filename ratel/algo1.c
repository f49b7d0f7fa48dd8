/* Ratel's Algorithm 1: starting from full recomputation, swap units in
 * order of decreasing offloading benefit OB = FLOPs / bytes (Eq. 6), so
 * FLOP_r falls by the most per byte first (Eqs. 7-8: convex, piecewise
 * linear); stop once the iteration time stops improving and at least
 * A_interBlock bytes are swapped. */
#include "ratel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ratel_case1_parse(const char *s, enum ratel_case1 *out)
{
    if (!strcmp(s, "inter"))
        *out = RATEL_CASE1_INTER;
    else if (!strcmp(s, "bytes"))
        *out = RATEL_CASE1_BYTES;
    else
        return -1;
    return 0;
}

struct ob_key {
    double ob;
    int idx;
};

/* decreasing OB, ties by index: the same order on every run */
static int by_ob(const void *a, const void *b)
{
    const struct ob_key *x = a, *y = b;
    if (x->ob != y->ob)
        return x->ob > y->ob ? -1 : 1;
    return x->idx - y->idx;
}

/* A_G2M and FLOP_r (Eq. 7) of a swap set. */
static void set_totals(const struct ratel_model *m, const struct ratel_unit *u, int n,
                       const unsigned char *swap, double *a, double *fr)
{
    *a = 0;
    *fr = m->flops_rc_all;
    for (int i = 0; i < n; i++)
        if (swap[i]) {
            *a += u[i].bytes;
            *fr -= u[i].flops;
        }
}

double ratel_eval_set(const struct ratel_model *m, const struct ratel_hw *hw,
                      const struct ratel_unit *u, int n, const unsigned char *swap)
{
    double a, fr;
    set_totals(m, u, n, swap, &a, &fr);
    struct ratel_times t;
    ratel_iter_time(m, hw, a, fr > 0 ? fr : 0, &t);
    return t.t_iter;
}

/* The walk's order: the forced units (inter-block ones under the INTER
 * reading) into swap[], the others by decreasing OB into k[]; returns
 * their count, -1 on a bad table. */
static int walk_order(const struct ratel_unit *u, int n, enum ratel_case1 c1,
                      unsigned char *swap, struct ob_key *k)
{
    int nk = 0;
    for (int i = 0; i < n; i++) {
        if (!(u[i].bytes > 0) || !(u[i].flops >= 0))
            return -1;
        swap[i] = c1 == RATEL_CASE1_INTER && u[i].inter; /* always out */
        if (!swap[i])
            k[nk++] = (struct ob_key){u[i].flops / u[i].bytes, i};
    }
    qsort(k, (size_t)nk, sizeof(*k), by_ob);
    return nk;
}

int ratel_sweep(const struct ratel_model *m, const struct ratel_hw *hw,
                const struct ratel_unit *u, int n, enum ratel_case1 c1, struct ratel_point *pts,
                int max)
{
    if (n < 0)
        return -1;
    struct ob_key *k = malloc(((size_t)n + 1) * sizeof(*k));
    unsigned char *swap = malloc((size_t)n + 1);
    int nk = k && swap ? walk_order(u, n, c1, swap, k) : -1;
    if (nk < 0) {
        free(k);
        free(swap);
        return -1;
    }
    double a, fr;
    set_totals(m, u, n, swap, &a, &fr);
    for (int j = 0; j <= nk; j++) {
        if (j > 0) {
            a += u[k[j - 1].idx].bytes;
            fr -= u[k[j - 1].idx].flops;
        }
        if (j < max) {
            pts[j].a_g2m = a;
            pts[j].flops_r = fr > 0 ? fr : 0;
            ratel_iter_time(m, hw, a, pts[j].flops_r, &pts[j].t);
        }
    }
    free(k);
    free(swap);
    return nk + 1;
}

int ratel_algorithm1(const struct ratel_model *m, const struct ratel_hw *hw,
                     const struct ratel_unit *u, int n, enum ratel_case1 c1,
                     unsigned char *swap, struct ratel_choice *out)
{
    return ratel_algorithm1_capped(m, hw, u, n, c1, INFINITY, swap, out);
}

int ratel_algorithm1_capped(const struct ratel_model *m, const struct ratel_hw *hw,
                            const struct ratel_unit *u, int n, enum ratel_case1 c1, double cap,
                            unsigned char *swap, struct ratel_choice *out)
{
    if (n < 0)
        return -1;
    struct ob_key *k = malloc(((size_t)n + 1) * sizeof(*k));
    int nk = k ? walk_order(u, n, c1, swap, k) : -1;
    if (nk < 0) {
        free(k);
        return -1;
    }
    double a, fr;
    set_totals(m, u, n, swap, &a, &fr);
    memset(out, 0, sizeof(*out));
    struct ratel_times t, best;
    ratel_iter_time(m, hw, a, fr > 0 ? fr : 0, &t);
    best = t;
    int taken = 0, best_taken = 0, rose_first = 0, fell_all = 1;
    out->steps = 1;
    for (int j = 0; j < nk; j++) {
        const struct ratel_unit *x = &u[k[j].idx];
        if (a + x->bytes > cap) { /* does not fit: try the smaller ones after it */
            fell_all = 0;
            continue;
        }
        ratel_iter_time(m, hw, a + x->bytes, fr - x->flops > 0 ? fr - x->flops : 0, &t);
        out->steps++;
        int better = t.t_iter < best.t_iter;
        if (out->steps == 2 && !better)
            rose_first = 1;
        if (!better) {
            fell_all = 0;
            /* our reading of "stop if A_G2M >= A_interBlock": the bytes
             * already swapped, so the minimum is really kept */
            if (a >= m->act_inter)
                break;
        }
        swap[k[j].idx] = 1;
        a += x->bytes;
        fr -= x->flops;
        taken++;
        if (better) {
            best = t;
            best_taken = taken;
        }
    }
    /* the swap list may extend past the best prefix only to reach
     * A_interBlock; report what is swapped */
    ratel_iter_time(m, hw, a, fr > 0 ? fr : 0, &out->t);
    out->a_g2m = a;
    out->flops_r = fr > 0 ? fr : 0;
    out->nswap = 0;
    for (int i = 0; i < n; i++)
        out->nswap += swap[i];
    if (nk > 0 && fell_all && taken == nk)
        out->which_case = 2;
    else if (nk == 0 || rose_first || best_taken == 0)
        out->which_case = 1;
    else
        out->which_case = 3;
    free(k);
    return a >= m->act_inter && a <= cap ? 0 : -1;
}
