/* ratel/: the iteration-time model's terms by hand (duplex link, simplex
 * storage, overflow to storage), Algorithm 1 on synthetic tables that
 * must give cases 1, 2 and 3 under both readings of case 1, and equal a
 * brute-force minimum (every subset where units are the same size, every
 * feasible prefix otherwise); a GPT's unit table against nn's accounting;
 * --plan's storage bytes equal to nn_gpt_account (14P = 182 GB at 13B),
 * every Table IV preset up to gpt-412b planned, fit flags, the largest
 * model per budget. */
#include "check.h"

#include "../../ratel/ratel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) + 1e-300; }

static void test_times(void)
{
    struct ratel_model m = {.params = 10, .flops_fwd = 600, .flops_rc_all = 300,
                            .act_all = 1000, .act_inter = 100};
    struct ratel_hw hw = {.gemm_flops = 10, .link_g2m = 2, .link_m2g = 4, .stor_read = 5,
                          .stor_write = 1, .mem_avail = 150};
    struct ratel_times t;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.act_storage, 50));
    EXPECT(near(t.f_terms[RATEL_BOUND_COMPUTE], 60));
    EXPECT(near(t.f_terms[RATEL_BOUND_G2M], 100));       /* 200 B / 2 */
    EXPECT(near(t.f_terms[RATEL_BOUND_M2G], 5));         /* 2P / 4 */
    EXPECT(near(t.f_terms[RATEL_BOUND_STORAGE], 4 + 50)); /* 2P/5 + aA/1 */
    EXPECT(near(t.b_terms[RATEL_BOUND_COMPUTE], (1200 + 120) / 10.0));
    EXPECT(near(t.b_terms[RATEL_BOUND_G2M], 10));
    EXPECT(near(t.b_terms[RATEL_BOUND_M2G], (20 + 200) / 4.0));
    EXPECT(near(t.b_terms[RATEL_BOUND_STORAGE], (140 + 50) / 5.0 + 140 / 1.0));
    EXPECT(t.bound_f == RATEL_BOUND_G2M && near(t.t_f, 100));
    EXPECT(t.bound_b == RATEL_BOUND_STORAGE && near(t.t_b, 178));
    EXPECT(near(t.t_iter, 278));
    /* within host memory nothing goes to storage */
    ratel_iter_time(&m, &hw, 150, 0, &t);
    EXPECT(t.act_storage == 0);
    EXPECT(!strcmp(ratel_bound_name(RATEL_BOUND_STORAGE), "storage"));
    EXPECT(t.f_terms[RATEL_BOUND_CPU] == 0 && t.b_terms[RATEL_BOUND_CPU] == 0); /* cores 0: no term */
    /* forward's read-ahead moves 30 B of optimizer reads from backward's
     * storage term to forward's; more than every state read (12P) is 12P */
    m.read_ahead = 30;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.f_terms[RATEL_BOUND_STORAGE], (20 + 30) / 5.0 + 50));
    EXPECT(near(t.b_terms[RATEL_BOUND_STORAGE], (140 - 30 + 50) / 5.0 + 140 / 1.0));
    m.read_ahead = 1e9;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.f_terms[RATEL_BOUND_STORAGE], (20 + 120) / 5.0 + 50));
    EXPECT(near(t.b_terms[RATEL_BOUND_STORAGE], (140 - 120 + 50) / 5.0 + 140 / 1.0));
    m.read_ahead = 0;
    /* the store's tail: on backward's compute and CPU paths only */
    hw.store_tail_s = 7;
    hw.cores = 2;
    hw.cpu_per_flop = 0.5;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.b_terms[RATEL_BOUND_COMPUTE], (1200 + 120) / 10.0 + 7));
    EXPECT(near(t.b_terms[RATEL_BOUND_CPU], (1320 * 0.5) / 2 + 7));
    EXPECT(near(t.b_terms[RATEL_BOUND_STORAGE], (140 + 50) / 5.0 + 140 / 1.0));
    EXPECT(near(t.f_terms[RATEL_BOUND_COMPUTE], 60) && near(t.f_terms[RATEL_BOUND_CPU], 600 * 0.5 / 2));
}

/* The CPU-sharing term, by hand: 2 cores, 0.5 CPU-s per FLOP, 0.1 per link
 * byte, the store 30 CPU-s in forward and 400 in backward; A = 200 B,
 * FLOP_r = 120, P = 10. */
static void test_cpu_term(void)
{
    struct ratel_model m = {.params = 10, .flops_fwd = 600, .flops_rc_all = 300,
                            .act_all = 1000, .act_inter = 100};
    struct ratel_hw hw = {.gemm_flops = 10, .link_g2m = 2, .link_m2g = 4, .stor_read = 5,
                          .stor_write = 1, .mem_avail = 150, .cores = 2, .cpu_per_flop = 0.5,
                          .cpu_per_link_byte = 0.1, .cpu_store_f = 30, .cpu_store_b = 400};
    struct ratel_times t;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    /* forward: (600*0.5 + (200 + 2*10)*0.1 + 30) / 2 = (300 + 22 + 30) / 2 */
    EXPECT(near(t.f_terms[RATEL_BOUND_CPU], 176));
    /* backward: ((1200 + 120)*0.5 + (4*10 + 200)*0.1 + 400) / 2 = (660 + 24 + 400) / 2 */
    EXPECT(near(t.b_terms[RATEL_BOUND_CPU], 542));
    EXPECT(t.bound_f == RATEL_BOUND_CPU && near(t.t_f, 176));
    EXPECT(t.bound_b == RATEL_BOUND_CPU && near(t.t_b, 542));
    EXPECT(near(t.t_iter, 718));
    EXPECT(near(t.f_terms[RATEL_BOUND_G2M], 100)); /* the other terms unchanged */
    EXPECT(!strcmp(ratel_bound_name(RATEL_BOUND_CPU), "cpu"));
    /* the inputs from a measured step: forward 10 CPU-s (link 1, GEMMs 6),
     * backward 30 (link 2, GEMMs 13); 3 link CPU-s over 300 bytes, 19 GEMM
     * CPU-s over 38 FLOPs */
    struct ratel_cpu_sample c = {.all = {10, 30}, .link = {1, 2}, .gemm = {6, 13},
                                 .link_bytes = 300, .flops_done = 38};
    struct ratel_hw h = {0};
    ratel_cpu_inputs(&c, 2, &h);
    EXPECT(h.cores == 2 && near(h.cpu_per_flop, 0.5) && near(h.cpu_per_link_byte, 0.01));
    EXPECT(near(h.cpu_store_f, 3) && near(h.cpu_store_b, 15));
    /* a pass whose parts exceed its total (clock skew) has no store CPU, not
     * a negative one; nothing measured gives zero rates, not NaN */
    struct ratel_cpu_sample z = {.all = {1, 1}, .link = {1, 1}, .gemm = {1, 1}};
    ratel_cpu_inputs(&z, 2, &h);
    EXPECT(h.cpu_store_f == 0 && h.cpu_store_b == 0 && h.cpu_per_flop == 0 && h.cpu_per_link_byte == 0);
}

/* 2 inter units then NU-2 intra ones, all of 100 bytes unless varied */
#define NU 12
static void table(struct ratel_unit *u, struct ratel_model *m, struct nn_rng *r, int vary)
{
    double flops = 0, bytes = 0;
    for (int i = 0; i < NU; i++) {
        int inter = i < 2;
        double b = vary ? 50 + 100 * nn_rng_uniform(r) : 100;
        /* inter-block units: the lowest OB, but not 0, so that swapping
         * everything can be best (case 2) under either reading */
        double f = inter ? 5 * b : r ? 20000 * nn_rng_uniform(r) : 1000.0 * (NU - i);
        u[i] = (struct ratel_unit){b, f, inter, i / 2, inter ? -1 : i, 0};
        flops += f;
        bytes += b;
    }
    *m = (struct ratel_model){.params = 1, .flops_fwd = flops, .flops_rc_all = flops,
                              .act_all = bytes, .act_inter = u[0].bytes + u[1].bytes};
}

static int feasible(const struct ratel_unit *u, const struct ratel_model *m, unsigned mask,
                    enum ratel_case1 c1)
{
    double a = 0;
    for (int i = 0; i < NU; i++) {
        if (c1 == RATEL_CASE1_INTER && u[i].inter && !(mask >> i & 1))
            return 0;
        a += (mask >> i & 1) ? u[i].bytes : 0;
    }
    return a >= m->act_inter;
}

/* The minimum over every feasible subset. */
static double brute_subsets_cap(const struct ratel_model *m, const struct ratel_hw *hw,
                                const struct ratel_unit *u, enum ratel_case1 c1, double cap)
{
    double best = INFINITY;
    unsigned char s[NU];
    for (unsigned mask = 0; mask < 1u << NU; mask++) {
        double a = 0;
        for (int i = 0; i < NU; i++)
            a += (mask >> i & 1) ? u[i].bytes : 0;
        if (!feasible(u, m, mask, c1) || a > cap)
            continue;
        for (int i = 0; i < NU; i++)
            s[i] = mask >> i & 1;
        best = fmin(best, ratel_eval_set(m, hw, u, NU, s));
    }
    return best;
}

static double brute_subsets(const struct ratel_model *m, const struct ratel_hw *hw,
                            const struct ratel_unit *u, enum ratel_case1 c1)
{
    return brute_subsets_cap(m, hw, u, c1, INFINITY);
}

/* The minimum over feasible prefixes of the OB order (sorted here by a
 * plain selection, independent of ratel's qsort). */
static double brute_prefixes(const struct ratel_model *m, const struct ratel_hw *hw,
                             const struct ratel_unit *u, enum ratel_case1 c1)
{
    int ord[NU], n = 0;
    unsigned char s[NU] = {0}, used[NU] = {0};
    for (int i = 0; i < NU; i++)
        if (c1 == RATEL_CASE1_INTER && u[i].inter) {
            s[i] = 1;
            used[i] = 1;
        }
    for (;;) {
        int k = -1;
        for (int i = 0; i < NU; i++)
            if (!used[i] && (k < 0 || u[i].flops / u[i].bytes > u[k].flops / u[k].bytes))
                k = i;
        if (k < 0)
            break;
        used[k] = 1;
        ord[n++] = k;
    }
    double best = INFINITY, a = 0;
    for (int i = 0; i < NU; i++)
        a += s[i] ? u[i].bytes : 0;
    for (int j = 0; j <= n; j++) {
        if (j > 0) {
            s[ord[j - 1]] = 1;
            a += u[ord[j - 1]].bytes;
        }
        if (a >= m->act_inter)
            best = fmin(best, ratel_eval_set(m, hw, u, NU, s));
    }
    return best;
}

static void test_cases(void)
{
    struct ratel_unit u[NU];
    struct ratel_model m;
    table(u, &m, NULL, 0);
    /* forward never the bottleneck here; backward: GEMMs + recompute
     * against the host->device link that brings swapped bytes back */
    const struct { const char *name; struct ratel_hw hw; int want; } c[] = {
        {"gpu-bound", {1, 1e12, 1e12, 1e12, 1e12, 1e12, 0, 0, 0, 0, 0, 0, 0}, 2},
        {"link-bound", {1e12, 1e12, 1e-3, 1e12, 1e12, 1e12, 0, 0, 0, 0, 0, 0, 0}, 1},
        {"balanced", {1, 1e12, 0.005, 1e12, 1e12, 1e12, 0, 0, 0, 0, 0, 0, 0}, 3},
    };
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 2; r++) {
            enum ratel_case1 c1 = r ? RATEL_CASE1_BYTES : RATEL_CASE1_INTER;
            unsigned char s[NU];
            struct ratel_choice ch;
            EXPECT(ratel_algorithm1(&m, &c[k].hw, u, NU, c1, s, &ch) == 0);
            double bf = brute_subsets(&m, &c[k].hw, u, c1);
            fprintf(stderr, "%-10s case1=%s: case %d, %d units, A %.0f, T %.6g (brute force %.6g)\n",
                    c[k].name, r ? "bytes" : "inter", ch.which_case, ch.nswap, ch.a_g2m,
                    ch.t.t_iter, bf);
            EXPECT(ch.which_case == c[k].want);
            EXPECT(near(ch.t.t_iter, bf));
            EXPECT(near(ratel_eval_set(&m, &c[k].hw, u, NU, s), ch.t.t_iter));
            EXPECT(ch.a_g2m >= m.act_inter);
            if (c1 == RATEL_CASE1_INTER)
                EXPECT(s[0] && s[1]);
            if (c[k].want == 2)
                EXPECT(ch.nswap == NU && near(ch.a_g2m, m.act_all));
            if (c[k].want == 1)
                EXPECT(near(ch.a_g2m, m.act_inter));
        }
    /* the two readings differ in case 1: BYTES swaps the two best intra
     * tensors instead of the inter-block ones */
    unsigned char s[NU];
    struct ratel_choice ch;
    ratel_algorithm1(&m, &c[1].hw, u, NU, RATEL_CASE1_BYTES, s, &ch);
    EXPECT(!s[0] && !s[1] && s[2] && s[3] && ch.nswap == 2);
    /* bad tables */
    u[5].bytes = 0;
    EXPECT(ratel_algorithm1(&m, &c[0].hw, u, NU, RATEL_CASE1_INTER, s, &ch) == -1);
    enum ratel_case1 p;
    EXPECT(ratel_case1_parse("bytes", &p) == 0 && p == RATEL_CASE1_BYTES);
    EXPECT(ratel_case1_parse("inter", &p) == 0 && p == RATEL_CASE1_INTER);
    EXPECT(ratel_case1_parse("both", &p) == -1);
}

/* Random tables and rates: equal sizes against every subset, unequal
 * ones against every prefix (Eq. 7 interpolates; whole units are a
 * knapsack the greedy order need not solve). */
static void test_random(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 2025);
    int cases[4] = {0}, bad = 0, host_refused = 0;
    for (int trial = 0; trial < 300; trial++) {
        struct ratel_unit u[NU];
        struct ratel_model m;
        int vary = trial % 2;
        table(u, &m, &r, vary);
        m.params = 100 * nn_rng_uniform(&r);
        struct ratel_hw hw = {exp(4 * nn_rng_normal(&r)), exp(4 * nn_rng_normal(&r)),
                              exp(4 * nn_rng_normal(&r)), exp(2 * nn_rng_normal(&r)) * 100,
                              exp(2 * nn_rng_normal(&r)) * 100, 1200 * nn_rng_uniform(&r),
                              0, 0, 0, 0, 0, 0, 0};
        for (int c1 = 0; c1 < 2; c1++) {
            unsigned char s[NU];
            struct ratel_choice ch;
            ratel_algorithm1(&m, &hw, u, NU, (enum ratel_case1)c1, s, &ch);
            double ref = vary ? brute_prefixes(&m, &hw, u, (enum ratel_case1)c1)
                              : brute_subsets(&m, &hw, u, (enum ratel_case1)c1);
            if (!near(ch.t.t_iter, ref)) {
                bad++;
                fprintf(stderr, "trial %d case1=%d: algorithm %.17g, brute force %.17g\n", trial,
                        c1, ch.t.t_iter, ref);
            }
            cases[ch.which_case]++;
            /* the sweep (Fig. 9b's curve): unimodal, its feasible minimum
             * is Algorithm 1's pick */
            struct ratel_point pts[NU + 1];
            int np = ratel_sweep(&m, &hw, u, NU, (enum ratel_case1)c1, pts, NU + 1);
            EXPECT(np == (c1 == RATEL_CASE1_INTER ? NU - 2 : NU) + 1);
            double smin = INFINITY;
            int rises = 0, unimodal = 1;
            for (int j = 0; j < np; j++) {
                if (pts[j].a_g2m >= m.act_inter)
                    smin = fmin(smin, pts[j].t.t_iter);
                if (j > 0 && pts[j].t.t_iter > pts[j - 1].t.t_iter * (1 + 1e-12))
                    rises = 1;
                else if (j > 0 && rises && pts[j].t.t_iter < pts[j - 1].t.t_iter * (1 - 1e-12))
                    unimodal = 0;
            }
            EXPECT(unimodal && near(smin, ch.t.t_iter));
            if (vary)
                continue;
            /* the policies: Algorithm 1 is never worse than a fixed rule
             * that is feasible; host-only is the capped brute force */
            unsigned char s2[NU];
            struct ratel_choice c2;
            EXPECT(ratel_act_choose(RATEL_ACT_SWAP_ALL, &m, &hw, u, NU, c1, s2, &c2) == 0);
            EXPECT(ch.t.t_iter <= c2.t.t_iter * (1 + 1e-12) && c2.nswap == NU);
            EXPECT(ratel_act_choose(RATEL_ACT_INTER_BLOCK, &m, &hw, u, NU, c1, s2, &c2) == 0);
            EXPECT(ch.t.t_iter <= c2.t.t_iter * (1 + 1e-12) && near(c2.a_g2m, m.act_inter));
            EXPECT(ratel_act_choose(RATEL_ACT_RECOMPUTE_ALL, &m, &hw, u, NU, c1, s2, &c2) == 0);
            EXPECT(c2.a_g2m == 0 && c2.nswap == 0 && c2.flops_r == m.flops_rc_all);
            int rc = ratel_act_choose(RATEL_ACT_HOST_ONLY, &m, &hw, u, NU, c1, s2, &c2);
            double capped = brute_subsets_cap(&m, &hw, u, (enum ratel_case1)c1, hw.mem_avail);
            if (m.act_inter > hw.mem_avail) {
                EXPECT(rc == -1 && isinf(capped));
                host_refused++;
            } else if (!(rc == 0 && c2.a_g2m <= hw.mem_avail && near(c2.t.t_iter, capped))) {
                bad++;
                fprintf(stderr, "trial %d case1=%d: host-only %.17g (rc %d), brute force %.17g\n",
                        trial, c1, c2.t.t_iter, rc, capped);
            }
        }
    }
    EXPECT(host_refused > 0);
    fprintf(stderr, "random tables: cases 1/2/3 = %d/%d/%d\n", cases[1], cases[2], cases[3]);
    EXPECT(bad == 0);
    EXPECT(cases[1] > 0 && cases[2] > 0 && cases[3] > 0);
}

static void test_gpt_units(void)
{
    struct nn_precision mixed = {NN_F16, NN_F16, NN_F16};
    struct nn_gpt_config c;
    nn_gpt_preset("gpt-13b", &c);
    int B = 32, n = ratel_gpt_units(&c, B, mixed, NULL, 0);
    EXPECT(n == c.layers * 10 + 4);
    struct ratel_unit *u = malloc((size_t)n * sizeof(*u));
    EXPECT(ratel_gpt_units(&c, B, mixed, u, n) == n);
    struct ratel_model m;
    ratel_gpt_model(&c, B, mixed, &m);
    struct nn_layer_account t, e;
    nn_gpt_account(&c, B, mixed, &t);
    nn_gpt_layer_account(&c, B, mixed, 0, &e);
    double bytes = 0, flops = 0, inter = 0;
    for (int i = 0; i < n; i++) {
        bytes += u[i].bytes;
        flops += u[i].flops;
        inter += u[i].inter ? u[i].bytes : 0;
    }
    EXPECT(bytes == m.act_all && flops == m.flops_rc_all && inter == m.act_inter);
    EXPECT(m.act_all == (double)(t.act_inter_bytes + t.act_intra_bytes - e.act_inter_bytes));
    EXPECT(m.params == (double)t.params && m.flops_fwd == t.flops_fwd);
    /* per block the partial recompute never reruns the W2 GEMM */
    double Mt = (double)B * c.seq;
    EXPECT(near(m.flops_rc_all, t.flops_fwd - c.layers * 2 * Mt * c.ffn * c.hidden));
    EXPECT(fabs(m.flops_rc_all - t.flops_recompute) <= 1e-12 * t.flops_recompute);
    /* the choice as per-layer release masks: their bytes add up */
    {
        struct ratel_hw hw0 = {155e12, 21e9, 21e9, 32e9, 32e9, 600e9, 0, 0, 0, 0, 0, 0, 0};
        unsigned char *s = malloc((size_t)n);
        struct ratel_choice ch;
        EXPECT(ratel_algorithm1(&m, &hw0, u, n, RATEL_CASE1_INTER, s, &ch) == 0);
        double sum = 0;
        for (int l = 1; l <= c.layers + 1; l++) {
            int in;
            unsigned mask = ratel_layer_mask(u, n, s, l, &in);
            struct nn_layer_account a;
            nn_gpt_layer_account(&c, B, mixed, l, &a);
            sum += in ? (double)a.act_inter_bytes : 0;
            EXPECT(in); /* the inter reading swaps every block input */
            for (int i = 0; i < nn_gpt_intra_count(&c, l); i++) {
                uint64_t b;
                nn_gpt_intra_account(&c, B, mixed, l, i, &b, NULL);
                sum += (mask >> i & 1) ? (double)b : 0;
            }
        }
        EXPECT(sum == ch.a_g2m);
        /* Fig. 9b's curve over nn's recompute groups (as the trainer swaps):
         * a point per block group (layer norm 1, QKV, attention, the rest)
         * and the head's, after the forced block inputs; the full set at
         * the end; Algorithm 1's grouped pick (ratel_act_choose) is one of
         * its points and its feasible minimum, at a fast and a slow link */
        for (int h = 0; h < 2; h++) {
            struct ratel_hw hw1 = hw0;
            hw1.link_m2g = hw1.link_g2m = h ? 2e9 : 21e9;
            int ng = c.layers * 4 + 1;
            struct ratel_point *pts = malloc(((size_t)ng + 1) * sizeof(*pts));
            EXPECT(ratel_sweep_groups(&m, &hw1, u, n, RATEL_CASE1_INTER, pts, ng + 1) == ng + 1);
            EXPECT(ratel_sweep_groups(&m, &hw1, u, n, RATEL_CASE1_INTER, NULL, 0) == ng + 1);
            EXPECT(ratel_sweep(&m, &hw1, u, n, RATEL_CASE1_INTER, NULL, 0) == n - (c.layers + 1) + 1);
            EXPECT(near(pts[0].a_g2m, m.act_inter) && near(pts[ng].a_g2m, m.act_all) &&
                   fabs(pts[ng].flops_r) <= 1e-9 * m.flops_rc_all);
            struct ratel_choice g1;
            EXPECT(ratel_act_choose(RATEL_ACT_RATEL, &m, &hw1, u, n, RATEL_CASE1_INTER, s, &g1) == 0);
            double smin = INFINITY;
            int at = -1;
            for (int j = 0; j <= ng; j++) {
                smin = fmin(smin, pts[j].t.t_iter);
                if (pts[j].a_g2m == g1.a_g2m && pts[j].flops_r == g1.flops_r)
                    at = j;
            }
            fprintf(stderr, "13B grouped sweep, link %.0f GB/s: %d points, pick at %d (%.1f GB swapped), t %.3f s\n",
                    hw1.link_m2g / 1e9, ng + 1, at, g1.a_g2m / 1e9, g1.t.t_iter);
            EXPECT(at >= 0 && near(smin, g1.t.t_iter));
            free(pts);
        }
        free(s);
    }
    enum ratel_act act;
    for (int i = 0; i < RATEL_ACT_COUNT; i++)
        EXPECT(ratel_act_parse(ratel_act_name((enum ratel_act)i), &act) == 0 && (int)act == i);
    EXPECT(ratel_act_parse("swap-some", &act) == -1);
    /* the paper's 13B setting (RTX 4090 ~155 TFLOPS measured, 21 GB/s per
     * direction, 12 SSDs ~32 GB/s, 768 GB host): informational */
    struct ratel_hw hw = {155e12, 21e9, 21e9, 32e9, 32e9, 600e9, 0, 0, 0, 0, 0, 0, 0};
    for (int b = 24; b <= 60; b += 12) {
        struct ratel_model mb;
        int nb = ratel_gpt_units(&c, b, mixed, u, n);
        ratel_gpt_model(&c, b, mixed, &mb);
        unsigned char *s = malloc((size_t)nb);
        struct ratel_choice ch;
        EXPECT(ratel_algorithm1(&mb, &hw, u, nb, RATEL_CASE1_INTER, s, &ch) == 0);
        fprintf(stderr, "13B batch %d: case %d, swap %.1f GB of %.1f, T_f %.2f s (%s), T_b %.2f s (%s)\n",
                b, ch.which_case, ch.a_g2m / 1e9, mb.act_all / 1e9, ch.t.t_f,
                ratel_bound_name(ch.t.bound_f), ch.t.t_b, ratel_bound_name(ch.t.bound_b));
        free(s);
    }
    free(u);
}

static void test_plan(void)
{
    struct nn_precision mixed = {NN_F16, NN_F16, NN_F16};
    const uint64_t G = 1000000000ull;
    /* nn/ keeps fp32 working copies of a layer's activations (the
     * workspace) beside their fp16 storage: 41 GB of device at 13B,
     * batch 32, where the paper's GPU fits 24 GB with FlashAttention */
    struct ratel_budget big = {80 * G, 768 * G, 0, 0, 0};
    struct nn_gpt_config c;
    nn_gpt_preset("gpt-13b", &c);
    struct ratel_plan p;
    ratel_plan(&c, 32, mixed, &big, 0, &p);
    struct nn_layer_account t;
    nn_gpt_account(&c, 32, mixed, &t);
    EXPECT(p.stor_states == t.opt_bytes + t.param_bytes && p.stor_states == 14 * t.params);
    fprintf(stderr, "13B: P %.3g, 14P %.1f GB, device %.2f GB, host buffers %.1f GB\n",
            (double)p.params, p.stor_states / 1e9, p.dev_need / 1e9, p.host_fixed / 1e9);
    EXPECT(fabs(p.stor_states / 1e9 - 182) / 182 < 0.015);
    EXPECT(p.fits && p.why[0] == 0);
    char table[1024];
    EXPECT(ratel_plan_format(&p, &big, table, sizeof(table)) < (int)sizeof(table));
    fputs(table, stderr);
    EXPECT(strstr(table, "storage") && strstr(table, "183.476") && strstr(table, ": fits"));
    /* swapping the minimum: A_interBlock (the paper's 12.5 GiB for the 40
     * blocks, plus the head's input) lands in host memory */
    struct nn_layer_account head;
    nn_gpt_layer_account(&c, 32, mixed, c.layers + 1, &head);
    EXPECT(fabs((p.act_swap - head.act_inter_bytes) / (1024.0 * 1024 * 1024) - 12.5) < 0.05);
    EXPECT(p.stor_act == 0 && p.host_act == p.act_swap);
    /* every Table IV preset plans, up to gpt-412b */
    const char *names[] = {"gpt-6b", "gpt-13b", "gpt-30b", "gpt-70b", "gpt-135b",
                           "gpt-175b", "gpt-276b", "gpt-412b"};
    uint64_t prev = 0;
    for (int i = 0; i < 8; i++) {
        struct nn_gpt_config ci;
        EXPECT(nn_gpt_preset(names[i], &ci) == 0);
        ratel_plan(&ci, 8, mixed, &big, 0, &p);
        nn_gpt_account(&ci, 8, mixed, &t);
        EXPECT(p.stor_states == 14 * t.params && p.stor_states > prev);
        prev = p.stor_states;
    }
    EXPECT(fabs(prev / 1e12 - 14 * 412e9 / 1e12) / (14 * 0.412) < 0.05);
    struct ratel_plan best;
    /* batch 2: the device bytes are the trainer's own (two shared intra
     * regions beside nn's fp32 workspace), 166 GB for gpt-412b at batch 8 */
    const char *largest = ratel_largest_preset(2, mixed, &big, &best);
    EXPECT(largest && !strcmp(largest, "gpt-412b") && best.fits);
    /* a device too small for one layer: nothing fits, and the reason says so */
    struct ratel_budget tiny_dev = {1 * G, 768 * G, 0, 0, 0};
    EXPECT(ratel_largest_preset(8, mixed, &tiny_dev, NULL) == NULL);
    ratel_plan(&c, 8, mixed, &tiny_dev, 0, &p);
    EXPECT(!p.fits && !p.fits_dev && strstr(p.why, "device") != NULL);
    ratel_plan_format(&p, &tiny_dev, table, sizeof(table));
    EXPECT(strstr(table, "does not fit: device") != NULL);
    /* storage capacity bounds the states */
    struct ratel_budget small_disk = {80 * G, 768 * G, 100 * G, 0, 0};
    ratel_plan(&c, 8, mixed, &small_disk, 0, &p);
    EXPECT(!p.fits_storage && strstr(p.why, "storage") != NULL);
    /* activations overflow the host to storage, unless host-only */
    struct ratel_budget lowhost = {80 * G, 16 * G, 0, 0, 0};
    ratel_plan(&c, 32, mixed, &lowhost, 0, &p);
    EXPECT(p.fits && p.stor_act > 0 && p.host_act + p.stor_act == p.act_swap);
    lowhost.host_only_act = 1;
    ratel_plan(&c, 32, mixed, &lowhost, 0, &p);
    EXPECT(!p.fits_host && strstr(p.why, "host") != NULL);
    /* Fig. 8's comparison: with activations host-only, the host budget
     * bounds the layer count; the largest fits, one more does not */
    int prev_l = 0;
    for (uint64_t h = 32; h <= 512; h *= 2) {
        struct ratel_budget b = {80 * G, h * G, 0, 1, 0};
        int L = ratel_largest_layers(&c, 32, mixed, &b, 4096);
        struct nn_gpt_config cl = c;
        cl.layers = L;
        ratel_plan(&cl, 32, mixed, &b, 0, &p);
        EXPECT(L == 0 || p.fits);
        cl.layers = L + 1;
        ratel_plan(&cl, 32, mixed, &b, 0, &p);
        EXPECT(!p.fits);
        EXPECT(L >= prev_l);
        fprintf(stderr, "host-only activations, %3llu GB host: %d layers of 13B's shape\n",
                (unsigned long long)h, L);
        prev_l = L;
    }
    EXPECT(prev_l > 40);
    /* the largest batch: it fits, one more does not (the device's
     * per-layer working set grows with B) */
    struct ratel_budget b24 = {24 * G, 256 * G, 0, 0, 0};
    int Bmax = ratel_largest_batch(&c, mixed, &b24, 4096);
    ratel_plan(&c, Bmax, mixed, &b24, 0, &p);
    EXPECT(Bmax >= 1 && p.fits);
    ratel_plan(&c, Bmax + 1, mixed, &b24, 0, &p);
    EXPECT(!p.fits && !p.fits_dev);
    fprintf(stderr, "13B, 24 GB device: batch up to %d\n", Bmax);
    EXPECT(ratel_largest_batch(&c, mixed, &tiny_dev, 4096) == 0);
}

/* The trainer's host arena: MEM_avail by hand, and the batch-8 case in
 * small: Algorithm 1 uncapped swaps past MEM_avail, the excess going to
 * storage (Eq. 3; the trainer's ratel), host-only's walk capped at it. */
static void test_host_arena(void)
{
    /* units: 100 (inter), 30, 50, 64, 200 bytes; rounded to 64: 128, 64,
     * 64, 64, 256, so the padding is 28 + 34 + 14 + 0 + 56 = 132 */
    struct ratel_unit u[5] = {{100, 0, 1, 1, -1, 0}, {30, 300, 0, 1, 0, 0}, {50, 400, 0, 1, 1, 0},
                              {64, 320, 0, 1, 2, 0}, {200, 600, 0, 1, 3, 0}};
    EXPECT(near(ratel_host_pad_bytes(u, 5), 132));
    /* 1000 free between steps; the step peaked at 700 above its mark, of
     * which 576 its activations as allocated: 124 transient */
    EXPECT(near(ratel_host_mem_avail(1000, 700, 576, u, 5), 1000 - 124 - 132));
    /* no transient (peak = activations), or a peak below them: padding only */
    EXPECT(near(ratel_host_mem_avail(1000, 576, 576, u, 5), 868));
    EXPECT(near(ratel_host_mem_avail(1000, 0, 0, u, 5), 868));
    /* never negative */
    EXPECT(ratel_host_mem_avail(100, 700, 0, u, 5) == 0);

    /* GPU-bound (swapping saves recompute, the link is free): uncapped,
     * everything goes out, 444 bytes; MEM_avail 300 */
    struct ratel_model m = {.params = 1, .flops_fwd = 2000, .flops_rc_all = 1620,
                            .act_all = 444, .act_inter = 100};
    struct ratel_hw hw = {1, 1e12, 1e12, 1e12, 1e12, 300, 0, 0, 0, 0, 0, 0, 0};
    unsigned char s[5];
    struct ratel_choice ch;
    EXPECT(ratel_algorithm1(&m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.a_g2m, 444) && ch.a_g2m > hw.mem_avail); /* the overrun */
    /* the trainer's: the inter-block 100 out, then the walk by OB (30
     * bytes: 10 FLOP/B, 50: 8, 64: 5, 200: 3) takes 30, 50 and 64
     * (100 + 30 + 50 + 64 = 244) and skips 200 (444 > 300) */
    /* the trainer's ratel: the same uncapped choice, 144 bytes of it priced
     * on storage (Eq. 3) */
    EXPECT(ratel_act_choose_host(RATEL_ACT_RATEL, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.a_g2m, 444) && near(ch.t.act_storage, 144));
    /* host-only: the inter-block 100 out, then the walk by OB (30 bytes:
     * 10 FLOP/B, 50: 8, 64: 5, 200: 3) takes 30, 50 and 64 (100 + 30 + 50
     * + 64 = 244) and skips 200 (444 > 300) */
    EXPECT(ratel_act_choose_host(RATEL_ACT_HOST_ONLY, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.a_g2m, 244) && s[0] && s[1] && s[2] && s[3] && !s[4]);
    EXPECT(near(ch.flops_r, 1620 - 300 - 400 - 320) && ch.t.act_storage == 0);
    /* fixed policies: inter-block (100) fits; swap-all (444) sends 144 to storage */
    EXPECT(ratel_act_choose_host(RATEL_ACT_INTER_BLOCK, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.a_g2m, 100) && ch.t.act_storage == 0);
    EXPECT(ratel_act_choose_host(RATEL_ACT_SWAP_ALL, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.a_g2m, 444) && near(ch.t.act_storage, 144));
    EXPECT(ratel_act_choose_host(RATEL_ACT_RECOMPUTE_ALL, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    /* MEM_avail below the block inputs: host-only has nothing that fits;
     * the others send the excess to storage */
    hw.mem_avail = 99;
    EXPECT(ratel_act_choose_host(RATEL_ACT_HOST_ONLY, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == -1);
    EXPECT(ratel_act_choose_host(RATEL_ACT_INTER_BLOCK, &m, &hw, u, 5, RATEL_CASE1_INTER, s, &ch) == 0);
    EXPECT(near(ch.t.act_storage, 1));
}

/* Which swapped units go to storage, by hand: two layers, 544 bytes. */
static void test_spill(void)
{
    struct ratel_unit u[6] = {{100, 0, 1, 1, -1, 0}, {30, 300, 0, 1, 0, 0}, {50, 400, 0, 1, 1, 0},
                              {100, 0, 1, 2, -1, 0}, {64, 320, 0, 2, 0, 0}, {200, 600, 0, 2, 1, 0}};
    unsigned char all[6] = {1, 1, 1, 1, 1, 1}, st[6];
    /* MEM_avail 300: 244 must go; layer 1 whole (180), then layer 2's
     * input (280): 264 left in host memory */
    EXPECT(near(ratel_spill_units(u, 6, all, 300, st), 280));
    EXPECT(st[0] && st[1] && st[2] && st[3] && !st[4] && !st[5]);
    /* layer 1's 30 not swapped (514 in all, 214 must go): 100 + 50 + 100 */
    unsigned char some[6] = {1, 0, 1, 1, 1, 1};
    EXPECT(near(ratel_spill_units(u, 6, some, 300, st), 250));
    EXPECT(st[0] && !st[1] && st[2] && st[3] && !st[4] && !st[5]);
    /* everything fits: none; nothing fits: all */
    EXPECT(ratel_spill_units(u, 6, all, 544, st) == 0 && !memchr(st, 1, 6));
    EXPECT(near(ratel_spill_units(u, 6, all, 0, st), 544) && !memchr(st, 0, 6));
    /* the model prices it (Eq. 3, 4, 5): P = 1, storage 100 B/s each way,
     * the rest free; A_G2M 544 over MEM_avail 300: 244 on storage;
     * T_f's storage term 2/100 + 244/100, T_b's (14 + 244)/100 + 14/100 */
    struct ratel_model m = {.params = 1, .flops_fwd = 1, .flops_rc_all = 0, .act_all = 544, .act_inter = 200};
    struct ratel_hw hw = {1e12, 1e12, 1e12, 100, 100, 300, 0, 0, 0, 0, 0, 0, 0};
    struct ratel_times t;
    ratel_iter_time(&m, &hw, 544, 0, &t);
    EXPECT(near(t.act_storage, 244));
    EXPECT(near(t.f_terms[RATEL_BOUND_STORAGE], 2.46) && near(t.b_terms[RATEL_BOUND_STORAGE], 2.72));
    EXPECT(t.bound_f == RATEL_BOUND_STORAGE && t.bound_b == RATEL_BOUND_STORAGE);
}

/* The storage rate the model is fed: both directions' bytes over their
 * busy time, at most the capped files' rate (the buckets' bursts after
 * idle gaps measured more than the caps); then Algorithm 1 on a table
 * where that rate flips the pick. P = 1e9 (14P = 14e9 B each way), one
 * forced inter-block unit of 100e9 B and one intra unit of 200e9 B worth
 * 50e9 FLOPs of recompute, MEM_avail 150e9, GEMMs at 1e9 FLOP/s, links
 * free, FLOP_f 100e9. Swapping the intra unit puts 150e9 B on storage:
 *   at 2e9 B/s (the uncapped measurement): T_f max(100, (2+150)/2) = 100,
 *     T_b max(200, (14+150+14)/2 = 89) = 200: 300 s against recomputing's
 *     100 + max(250, 28/2) = 350 s, so it spills;
 *   at 0.8e9 B/s (2 files capped at 0.4 GB/s): T_f max(100, 152/0.8) = 190,
 *     T_b max(200, 178/0.8) = 222.5: 412.5 s against 100 + max(250, 35) =
 *     350 s, so it recomputes. */
static void test_stor_rate(void)
{
    EXPECT(near(ratel_stor_rate(4e9, 2, 0, 0), 2e9));     /* no cap */
    EXPECT(near(ratel_stor_rate(4e9, 2, 2, 0.4), 0.8e9)); /* over the caps: the caps */
    EXPECT(near(ratel_stor_rate(1e9, 2, 2, 0.4), 0.5e9)); /* under them: measured */
    EXPECT(near(ratel_stor_rate(0, 0, 2, 0.4), 0.8e9) && near(ratel_stor_rate(0, 0, 0, 0), 1e12));
    EXPECT(near(ratel_stor_rate(4e9, 0, 0, 0), 1e12));    /* no busy time: no rate measured */
    struct ratel_model m = {.params = 1e9, .flops_fwd = 100e9, .flops_rc_all = 50e9,
                            .act_all = 300e9, .act_inter = 100e9};
    struct ratel_unit u[2] = {{100e9, 0, 1, 0, -1, 0}, {200e9, 50e9, 0, 0, 0, 0}};
    unsigned char swap[2];
    struct ratel_choice ch;
    struct ratel_hw hw = {.gemm_flops = 1e9, .link_g2m = 1e30, .link_m2g = 1e30, .mem_avail = 150e9};
    hw.stor_read = hw.stor_write = ratel_stor_rate(4e9, 2, 0, 0);
    EXPECT(ratel_algorithm1(&m, &hw, u, 2, RATEL_CASE1_INTER, swap, &ch) == 0);
    EXPECT(swap[0] && swap[1] && near(ch.a_g2m, 300e9) && near(ch.t.act_storage, 150e9));
    EXPECT(near(ch.t.t_f, 100) && near(ch.t.t_b, 200) && near(ch.t.t_iter, 300));
    hw.stor_read = hw.stor_write = ratel_stor_rate(4e9, 2, 2, 0.4);
    EXPECT(ratel_algorithm1(&m, &hw, u, 2, RATEL_CASE1_INTER, swap, &ch) == 0);
    EXPECT(swap[0] && !swap[1] && near(ch.a_g2m, 100e9) && ch.t.act_storage == 0);
    EXPECT(near(ch.t.t_b, 250) && near(ch.t.t_iter, 350) && ch.which_case == 1);
    /* the spill it turned down, priced: 190 + 222.5 */
    EXPECT(near(ratel_eval_set(&m, &hw, u, 2, (const unsigned char[]){1, 1}), 412.5));
}

/* The host arena's least bytes, against the trainer's setup by hand at a
 * parsed shape: P16 staging and G16 landing slots of the largest layer
 * (4 of them; zero-infinity: 2 and one G16 buffer per layer) and the block
 * inputs (swap-all too: the rest of its activations may go to storage),
 * each rounded to 64. */
static void test_host_arena_need(void)
{
    struct nn_gpt_config c;
    char err[200];
    EXPECT(nn_gpt_config_parse("layers=1,hidden=64,heads=1,seq=512,vocab=64", &c, err, sizeof(err)) == 0);
    struct nn_precision p = {NN_F16, NN_F16, NN_F32};
    int n = ratel_gpt_units(&c, 8, p, NULL, 0);
    struct ratel_unit u[64];
    EXPECT(n > 0 && n <= 64);
    ratel_gpt_units(&c, 8, p, u, n);
    uint64_t maxp = 0, g16 = 0, inter = 0, all = 0;
    for (int l = 0; l <= c.layers + 1; l++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(&c, 8, p, l, &a);
        maxp = a.params > maxp ? a.params : maxp;
        g16 += (a.params * 2 + 63) / 64 * 64;
    }
    for (int i = 0; i < n; i++) {
        uint64_t b = ((uint64_t)u[i].bytes + 63) / 64 * 64;
        all += b;
        inter += u[i].inter ? b : 0;
    }
    uint64_t slot = (maxp * 2 + 63) / 64 * 64;
    EXPECT(ratel_host_arena_need(&c, 8, p, RATEL_SYS_RATEL, RATEL_ACT_RATEL) == 4 * slot + inter);
    EXPECT(ratel_host_arena_need(&c, 8, p, RATEL_SYS_RATEL, RATEL_ACT_SWAP_ALL) == 4 * slot + inter);
    EXPECT(all > inter);
    EXPECT(ratel_host_arena_need(&c, 8, p, RATEL_SYS_ZERO_INFINITY, RATEL_ACT_SWAP_ALL) ==
           2 * slot + g16 + inter);
    EXPECT(ratel_host_arena_need(&c, 8, p, RATEL_SYS_ZERO_OFFLOAD, RATEL_ACT_RATEL) == 0);
    /* this shape's numbers (fp16 params, fp32 activations): the largest
     * layer has 49984 parameters, a 99968-byte slot; the block input
     * 8 x 512 x 64 x 4 = 1048576 bytes, the head's 1064960 */
    EXPECT(maxp == 49984 && slot == 99968);
    EXPECT(inter == 1048576 + 1064960);
}


/* The cores' sharing in T_b, by hand: forward's compute calls did 600
 * FLOPs in 60 s (10 FLOP/s, nearly alone), backward's 1500 FLOPs in 180 s
 * beside the store's threads, 150 s at forward's rate: 30 s lost to the
 * sharing, at most the store's CPU-seconds in that backward. T_b's compute
 * term then carries it for any swap set. */
static void test_share(void)
{
    double s = -1;
    /* the store used 40 CPU-s in that backward: 30 s of sharing is under it */
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, 40, &s) == 0 && near(s, 30));
    /* 20 CPU-s of store: at most 20 s of it is the store's doing */
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, 20, &s) == 0 && near(s, 20));
    /* no store CPU (nothing beside the GEMMs): no sharing */
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, 0, &s) == 0 && s == 0);
    /* backward faster than forward's rate: no sharing, not a negative one */
    EXPECT(ratel_share_calibrate(600, 60, 1500, 100, 40, &s) == 0 && s == 0);
    /* NaN, infinite, 0 or negative inputs refused, the output untouched */
    s = 7;
    EXPECT(ratel_share_calibrate(NAN, 60, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, NAN, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, NAN, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 1500, NAN, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, NAN, &s) == -1);
    EXPECT(ratel_share_calibrate(0, 60, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 0, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 0, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 1500, 0, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, -1, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, -1, &s) == -1);
    EXPECT(ratel_share_calibrate(INFINITY, 60, 1500, 180, 40, &s) == -1);
    EXPECT(ratel_share_calibrate(600, 60, 1500, 180, INFINITY, &s) == -1);
    EXPECT(s == 7);
    /* in the model: test_times' case with 30 s of sharing; its backward
     * compute term (1200 + 120) / 10 = 132 becomes 162, the other terms
     * and forward unchanged; storage (178) still bounds */
    struct ratel_model m = {.params = 10, .flops_fwd = 600, .flops_rc_all = 300,
                            .act_all = 1000, .act_inter = 100};
    struct ratel_hw hw = {.gemm_flops = 10, .link_g2m = 2, .link_m2g = 4, .stor_read = 5,
                          .stor_write = 1, .mem_avail = 150, .bwd_share_s = 30};
    struct ratel_times t;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.b_terms[RATEL_BOUND_COMPUTE], 162));
    EXPECT(near(t.f_terms[RATEL_BOUND_COMPUTE], 60));
    EXPECT(t.bound_b == RATEL_BOUND_STORAGE && near(t.t_b, 178));
    /* 50 s of sharing: compute 182 bounds backward */
    hw.bwd_share_s = 50;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(t.bound_b == RATEL_BOUND_COMPUTE && near(t.t_b, 182) && near(t.t_iter, 282));
    /* a NaN share (never calibrated so) adds nothing rather than NaN */
    hw.bwd_share_s = NAN;
    ratel_iter_time(&m, &hw, 200, 120, &t);
    EXPECT(near(t.b_terms[RATEL_BOUND_COMPUTE], 132));
}

/* --swap-set's text: round trip, and every bad input refused */
static void test_swap_set(void)
{
    /* 6 units: layer 1's input, its group-3 pair, a lone unit, layer 2's
     * group-3 pair (another layer: another group) */
    struct ratel_unit u[6] = {
        {10, 0, 1, 1, -1, 0}, {10, 5, 0, 1, 0, 3}, {10, 5, 0, 1, 1, 3},
        {10, 7, 0, 1, 2, 0},  {10, 5, 0, 2, 0, 3}, {10, 5, 0, 2, 1, 3},
    };
    unsigned char s[6] = {1, 1, 1, 0, 0, 0}, back[6];
    char buf[8], err[200];
    /* units 0..3 -> digit 0 = 1+2+4 = 7; units 4, 5 -> digit 1 = 0 */
    EXPECT(ratel_swap_set_format(s, 6, buf, sizeof(buf)) == 2 && !strcmp(buf, "70"));
    EXPECT(ratel_swap_set_parse("70", u, 6, back, err, sizeof(err)) == 0 && !memcmp(s, back, 6));
    EXPECT(ratel_swap_set_format(s, 6, buf, 2) == -1); /* no room for the NUL */
    /* 8 + 1 (unit 3), and units 4, 5 (1 + 2): "83", upper case too */
    EXPECT(ratel_swap_set_parse("8C", u, 6, back, err, sizeof(err)) == -1 && strstr(err, "past the table"));
    EXPECT(ratel_swap_set_parse("83", u, 6, back, err, sizeof(err)) == 0);
    EXPECT(back[3] == 1 && back[4] == 1 && back[5] == 1 && back[0] == 0 && back[1] == 0);
    EXPECT(ratel_swap_set_parse("7", u, 6, back, err, sizeof(err)) == -1 && strstr(err, "needs 2"));
    EXPECT(ratel_swap_set_parse("700", u, 6, back, err, sizeof(err)) == -1);
    EXPECT(ratel_swap_set_parse("7g", u, 6, back, err, sizeof(err)) == -1 && strstr(err, "hex"));
    /* unit 1 without unit 2: their group split */
    EXPECT(ratel_swap_set_parse("30", u, 6, back, err, sizeof(err)) == -1 && strstr(err, "group 3 split"));
    EXPECT(ratel_swap_set_parse("71", u, 6, back, err, sizeof(err)) == -1 && strstr(err, "layer 2"));
    /* the given set priced as the fixed rules price theirs */
    struct ratel_model m = {.params = 10, .flops_fwd = 600, .flops_rc_all = 27, .act_all = 60, .act_inter = 10};
    struct ratel_hw hw = {.gemm_flops = 10, .link_g2m = 2, .link_m2g = 4, .stor_read = 5, .stor_write = 1,
                          .mem_avail = 25};
    struct ratel_choice ch;
    unsigned char got[6];
    EXPECT(ratel_act_given(&m, &hw, u, 6, s, got, &ch) == 0 && !memcmp(got, s, 6));
    EXPECT(ch.which_case == 0 && ch.nswap == 3 && near(ch.a_g2m, 30) && near(ch.flops_r, 17));
    EXPECT(near(ch.t.act_storage, 5) && near(ch.t.t_iter, ratel_eval_set(&m, &hw, u, 6, s)));
}

/* Recompute priced by time (ratel_rc_price_units): synthetic forward
 * stage seconds over 2 blocks; each block group's units get its seconds
 * per block at the rate, split by FLOPs (by bytes where it has none); W2
 * and copies price nothing; the head's and the inter units stay. */
static void test_rc_price(void)
{
    struct nn_gpt_config c;
    char err[200];
    EXPECT(nn_gpt_config_parse("layers=2,hidden=64,heads=4,seq=16,vocab=128", &c, err, sizeof(err)) == 0);
    const struct nn_precision p = {NN_F16, NN_F16, NN_F32};
    int n = ratel_gpt_units(&c, 2, p, NULL, 0);
    struct ratel_unit *u = calloc((size_t)n, sizeof(*u)), *o = calloc((size_t)n, sizeof(*o));
    ratel_gpt_units(&c, 2, p, u, n);
    struct nn_stage_times fwd = {{0}};
    EXPECT(ratel_rc_price_units(&c, &fwd, 10, u, n, o) == -1 && memcmp(o, u, (size_t)n * sizeof(*u)) == 0);
    fwd.t[NN_ST_FWD_LN1] = 2;                                  /* group 1: 1 s a block */
    fwd.t[NN_ST_FWD_GEMM_QKV] = 3, fwd.t[NN_ST_FWD_BIAS_QKV] = 1; /* 2: 2 s */
    fwd.t[NN_ST_FWD_ATTN_SCORES] = 1, fwd.t[NN_ST_FWD_SOFTMAX] = 2, fwd.t[NN_ST_FWD_ATTN_VALUES] = 1; /* 3: 2 s */
    fwd.t[NN_ST_FWD_GEMM_O] = 1, fwd.t[NN_ST_FWD_RES_LN2] = 1, fwd.t[NN_ST_FWD_GEMM_W1] = 3,
    fwd.t[NN_ST_FWD_BIAS_GELU] = 1;                            /* 4: 3 s */
    fwd.t[NN_ST_FWD_GEMM_W2] = 100, fwd.t[NN_ST_FWD_COPIES] = 50; /* in no group */
    EXPECT(ratel_rc_price_units(&c, &fwd, 0, u, n, o) == -1);
    double all = ratel_rc_price_units(&c, &fwd, 10, u, n, o), sum = 0, want_g[5] = {0, 10, 20, 20, 30};
    for (int l = 1; l <= c.layers; l++)
        for (int g = 1; g < 5; g++) {
            double got = 0, gf = 0, gb = 0;
            for (int k = 0; k < n; k++)
                if (u[k].layer == l && u[k].group == g && !u[k].inter) {
                    got += o[k].flops;
                    gf += u[k].flops;
                    gb += u[k].bytes;
                }
            EXPECT(near(got, want_g[g]));
            for (int k = 0; k < n; k++) /* the split: by FLOPs, else by bytes */
                if (u[k].layer == l && u[k].group == g && !u[k].inter)
                    EXPECT(near(o[k].flops, want_g[g] * (gf > 0 ? u[k].flops / gf : u[k].bytes / gb)));
        }
    for (int k = 0; k < n; k++) {
        sum += o[k].flops;
        if (u[k].inter || u[k].layer > c.layers) /* the inter units and the head's: as counted */
            EXPECT(o[k].flops == u[k].flops && o[k].bytes == u[k].bytes);
        EXPECT(o[k].bytes == u[k].bytes && o[k].group == u[k].group);
    }
    EXPECT(near(all, sum));
    free(u);
    free(o);
}

int main(void)
{
    test_rc_price();
    test_times();
    test_cpu_term();
    test_cases();
    test_random();
    test_gpt_units();
    test_plan();
    test_host_arena();
    test_spill();
    test_stor_rate();
    test_host_arena_need();
    test_share();
    test_swap_set();
    return TEST_EXIT();
}
