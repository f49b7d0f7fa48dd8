/* mb-nn: the nn/ library's speed against its peers, measured side by side
 * in one run and reported as ratios:
 *   sgemm  plain cblas_sgemm over exactly the GEMMs one decoder block runs
 *          forward and backward (nn_block_gemm_shapes), on the same shapes
 *   block  nn/'s decoder block forward + backward (GEMMs, attention,
 *          layer norms, GELU, residuals, bias and weight gradients)
 *   memcpy a copy of half as many bytes as Adam touches (read + write =
 *          Adam's 28 B a parameter), each OpenMP thread copying the
 *          page-aligned share Adam's threads update, with non-temporal
 *          stores (nn_copy_peer: its stores move only the bytes counted,
 *          as Adam's in-place stores do)
 *   adam   nn_adam_step over N fp32 parameters (fp32 master, m, v, grads)
 * Both start each iteration from a cache that holds none of their data
 * (nn_cold_start: a read of twice the last-level cache), on buffers each
 * far beyond it, first touched by the threads that then stream them.
 * Every case validates each iteration (nn/'s nn_gemm_peer_check,
 * nn_block_case_check, nn_adam_case_check; memcmp), and the ratios are
 * the block's FLOP rate over sgemm's and Adam's bytes/s over memcpy's.
 * The block's roofline: its GEMM FLOPs at the interleaved sgemm rate plus
 * its elementwise bytes (nn_block_elementwise_bytes) at a memcpy rate
 * measured in the block case's set-up; --breakdown splits both by stage. */
#include "harness/harness.h"
#include "../nn/nn.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static struct {
    char *model;
    long long batch;
    size_t adam_elems;
    unsigned cases;
    int recompute;
    int breakdown;
} opt;

enum { C_BLOCK = 1, C_ADAM = 2 };

static const struct mb_opt nn_opts[] = {
    {"model", 0, MB_OPT_STR, &opt.model, "gpt-bench", NULL, 0, 0,
     "GPT preset whose block is measured (see nn_gpt_preset), or a shape: "
     "layers=,hidden=,heads=,seq=,vocab= (nn_gpt_config_parse)", "NAME|SPEC"},
    {"batch", 0, MB_OPT_INT, &opt.batch, "4", NULL, 1, 4096, "sequences per micro-batch", "B"},
    {"adam-elems", 0, MB_OPT_SIZE, &opt.adam_elems, "16M", NULL, 1024, 1e10,
     "parameters updated by the Adam case", "N"},
    {"cases", 0, MB_OPT_LIST, &opt.cases, "block,adam", "block|adam", 0, 0,
     "what to measure: block (vs sgemm), adam (vs memcpy)", "LIST"},
    {"recompute", 0, MB_OPT_FLAG, &opt.recompute, NULL, NULL, 0, 0,
     "block drops its intra activations after forward and recomputes them in backward", NULL},
    {"breakdown", 0, MB_OPT_FLAG, &opt.breakdown, NULL, NULL, 0, 0,
     "time the block's stages (GEMMs, attention, softmax, layer norms, GELU, bias/residual, copies), "
     "print each one's median and record them in /metrics", NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"kind", "shape", NULL};

enum kind { K_SGEMM, K_BLOCK, K_MEMCPY, K_ADAM };
static const char *const kind_names[] = {"sgemm", "block", "memcpy", "adam"};

static struct nn_gpt_config cfg;
static double block_flops;         /* per iteration */
static char shape_label[96];

/* MB_FAULT_INJECT: corrupt (add 1 + |v|), nan or inf, written into one
 * element of one checked output at a seeded iteration and position. */
enum fault { F_NONE, F_CORRUPT, F_NAN, F_INF };

struct state {
    struct mb_run *run;
    enum kind kind;
    int fault;                   /* enum fault: what MB_FAULT_INJECT asks for */
    long long fault_iter;        /* the (seeded) iteration that gets the fault */
    struct nn_gemm_peer gp;      /* sgemm */
    struct nn_block_case bc;     /* block */
    struct nn_stage_times cur;   /* --breakdown: this iteration's stage times */
    size_t n;                    /* memcpy: bytes */
    char *src, *dst;
    struct nn_adam_case ac;      /* adam */
    struct state *peer;          /* block: an sgemm state, adam: a memcpy state, run
                                    interleaved in prepare so both see the same load */
};

/* Interleaved peer timings of the current block/adam case (timed
 * iterations only) and their median, kept for model(). */
static double *peer_t;
static size_t peer_n;
static double peer_median = NAN;
/* --breakdown: the block's stage times of each timed iteration. */
static struct nn_stage_times *stage_t, *peer_stage_t; /* block's; sgemm peer's by stage */
static size_t stage_n, peer_stage_n;
/* Read before each memcpy and Adam iteration so neither finds its data
 * in the cache (nn_cold_*). */
static struct nn_cold cold;
/* The roofline's memcpy: median time and bytes moved (measure_bandwidth). */
static double bw_median = NAN;
static size_t bw_bytes;
static void teardown(void *st);
static void prepare_one(void *st, long long iter);

static double median_of(double *v, size_t n)
{
    struct mb_stats st;
    mb_stats_compute(v, n, &st);
    return st.median;
}

static int validate(struct mb_run *run)
{
    char perr[160];
    if (!strchr(opt.model, '=') && nn_gpt_preset(opt.model, &cfg) != 0) {
        if (run->rank == 0)
            mb_warn("--model: unknown preset '%s' (accepts gpt-tiny, gpt-small, gpt-bench, gpt-6b ... gpt-412b, or layers=,hidden=,heads=,seq=,vocab=)", opt.model);
        return MB_EXIT_USAGE;
    }
    if (strchr(opt.model, '=') && nn_gpt_config_parse(opt.model, &cfg, perr, sizeof(perr)) != 0) {
        if (run->rank == 0)
            mb_warn("--%s", perr);
        return MB_EXIT_USAGE;
    }
    if (cfg.seq < 2) {
        if (run->rank == 0)
            mb_warn("--model: sequence too short");
        return MB_EXIT_USAGE;
    }
    double bytes = nn_block_case_bytes(&cfg, (int)opt.batch, run->common.check);
    if (bytes > 16e9) {
        if (run->rank == 0)
            mb_warn("--model/--batch: a %s block at batch %lld needs ~%.0f GB%s; pick a smaller preset or batch",
                    opt.model, opt.batch, bytes / 1e9, run->common.check ? " with its check" : "");
        return MB_EXIT_USAGE;
    }
    if (run->common.device != MB_DEV_HOST) {
        if (run->rank == 0)
            mb_warn("-d/--device: mb-nn measures the host path only (accepts host)");
        return MB_EXIT_USAGE;
    }
    return 0;
}

static void config(struct mb_run *run, struct mb_kvlist *c)
{
    (void)run;
    mb_kv_int(c, "hidden", cfg.hidden);
    mb_kv_int(c, "heads", cfg.heads);
    mb_kv_int(c, "seq", cfg.seq);
    mb_kv_int(c, "ffn", cfg.ffn);
    mb_kv_int(c, "omp_threads", omp_get_max_threads());
    mb_kv_str(c, "flops", "GEMM and attention multiply-adds x2 (count column), per iteration");
}

static struct mb_case *cases;

static void add(struct mb_run *run, enum kind k)
{
    struct mb_case *c = &cases[run->ncases++];
    memset(c, 0, sizeof(*c));
    c->user = (void *)(intptr_t)k;
    c->labels[0] = kind_names[k];
    c->labels[1] = shape_label;
    int blockish = k == K_SGEMM || k == K_BLOCK;
    size_t touched = nn_adam_bytes_per_elem(NN_F32, 0, NN_F32) * opt.adam_elems;
    c->bytes = blockish ? 0 : touched;
    c->count = blockish ? (uint64_t)(block_flops) : opt.adam_elems;
    snprintf(c->name, sizeof(c->name), "%s/%s", kind_names[k], blockish ? shape_label : "adam");
    snprintf(c->group, sizeof(c->group), "%s", blockish ? "block fwd+bwd vs cblas_sgemm (count = FLOPs)"
                                                       : "adam vs memcpy (size = bytes touched)");
}

static int plan(struct mb_run *run)
{
    struct nn_layer_account a;
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    nn_gpt_layer_account(&cfg, (int)opt.batch, f32, 1, &a);
    block_flops = a.flops_fwd + a.flops_bwd + (opt.recompute ? a.flops_recompute : 0);
    snprintf(shape_label, sizeof(shape_label), "%s:b%lld:s%d:h%d:a%d%s", opt.model, opt.batch, cfg.seq,
             cfg.hidden, cfg.heads, opt.recompute ? ":recompute" : "");
    cases = calloc(4, sizeof(*cases));
    run->cases = cases;
    if (opt.cases & C_BLOCK) {
        add(run, K_SGEMM);
        add(run, K_BLOCK);
    }
    if (opt.cases & C_ADAM) {
        add(run, K_MEMCPY);
        add(run, K_ADAM);
    }
    return 0;
}

/* splitmix64 of a and b: seeds and positions from --seed and iteration */
static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull + (b + 1) * 0xd1b54a32d192ed03ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fault_seed(const struct mb_run *run, enum kind k)
{
    return mix((uint64_t)run->common.seed, 1000 + (uint64_t)k);
}

static int fault_mode(void)
{
    const char *f = mb_fault();
    if (!f)
        return F_NONE;
    return !strcmp(f, "corrupt") ? F_CORRUPT : !strcmp(f, "nan") ? F_NAN : !strcmp(f, "inf") ? F_INF : F_NONE;
}

static float faulty(int mode, float v)
{
    return mode == F_NAN ? NAN : mode == F_INF ? INFINITY : v + 1.0f + fabsf(v);
}

/* The fault, in iteration s->fault_iter only: one element of one checked
 * output, at a position drawn from --seed and the iteration. A line on
 * stderr names it the way the check's message will ("at KEY"). */
static void inject(struct state *s, long long iter)
{
    if (s->fault == F_NONE || iter != s->fault_iter)
        return;
    struct nn_rng r;
    nn_rng_seed(&r, mix(fault_seed(s->run, s->kind), (uint64_t)iter));
    char key[96] = "";
    switch (s->kind) {
    case K_SGEMM: {
        int i = (int)(nn_rng_next(&r) % (uint64_t)s->gp.ng);
        size_t M = (size_t)s->gp.g[i].M, N = (size_t)s->gp.g[i].N;
        size_t m = nn_rng_next(&r) % M, n = nn_rng_next(&r) % N;
        s->gp.C[i][m * N + n] = faulty(s->fault, s->gp.C[i][m * N + n]);
        snprintf(key, sizeof(key), "gemm %d row %zu", i, m);
        break;
    }
    case K_BLOCK: {
        struct nn_tensor *g = nn_layer_grads(s->bc.layer);
        int t = (int)(nn_rng_next(&r) % 3);
        float *v = t == 0 ? s->bc.y : t == 1 ? s->bc.dx : g->data;
        size_t i = nn_rng_next(&r) % (t == 2 ? g->numel : s->bc.numel);
        v[i] = faulty(s->fault, v[i]);
        snprintf(key, sizeof(key), "block %s[%zu]", t == 0 ? "y" : t == 1 ? "dx" : "grads", i);
        break;
    }
    case K_MEMCPY: {
        size_t i = nn_rng_next(&r) % s->n;
        if (s->fault == F_CORRUPT) {
            s->dst[i] ^= 1;
        } else { /* a float's bytes, at a 4-byte boundary */
            i = i / 4 * 4;
            float f = faulty(s->fault, 0);
            memcpy(s->dst + i, &f, 4);
            while (s->dst[i] == s->src[i]) /* the first byte the fault changed */
                i++;
        }
        snprintf(key, sizeof(key), "memcpy byte %zu", i);
        break;
    }
    case K_ADAM: {
        int t = (int)(nn_rng_next(&r) % 3);
        float *v = t == 0 ? s->ac.p : t == 1 ? s->ac.m : s->ac.v;
        size_t i = nn_rng_next(&r) % s->ac.n;
        v[i] = faulty(s->fault, v[i]);
        snprintf(key, sizeof(key), "adam %s[%zu]", t == 0 ? "p" : t == 1 ? "m" : "v", i);
        break;
    }
    }
    mb_warn("fault injected (%s): %s iteration %lld at %s", mb_fault(), kind_names[s->kind], iter, key);
}

static int setup_kind(struct mb_run *run, enum kind kind, void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    *out = s;
    s->run = run;
    s->kind = kind;
    s->fault = fault_mode();
    s->fault_iter = (long long)(mix(fault_seed(run, kind), 0) %
                                (uint64_t)(run->common.warmup + run->common.iters));
    int B = (int)opt.batch;
    switch (s->kind) {
    case K_SGEMM:
        if (nn_gemm_peer_init(&s->gp, &cfg, B, opt.recompute) != 0)
            return -1;
        break;
    case K_BLOCK: {
        if (nn_block_case_init(&s->bc, &cfg, B, (uint64_t)run->common.seed, opt.recompute) != 0) {
            mb_warn("block: out of memory");
            return -1;
        }
        if (opt.breakdown) {
            nn_layer_set_stage_times(s->bc.layer, &s->cur);
            free(stage_t);
            free(peer_stage_t);
            stage_t = calloc((size_t)run->common.iters, sizeof(*stage_t));
            peer_stage_t = calloc((size_t)run->common.iters, sizeof(*peer_stage_t));
            stage_n = peer_stage_n = 0;
            if (!stage_t || !peer_stage_t)
                return -1;
        }
        break;
    }
    case K_MEMCPY:
        s->n = nn_adam_bytes_per_elem(NN_F32, 0, NN_F32) * opt.adam_elems / 2;
        s->src = aligned_alloc(4096, (s->n + 4095) / 4096 * 4096); /* as Adam's buffers */
        s->dst = aligned_alloc(4096, (s->n + 4095) / 4096 * 4096);
        if (!s->src || !s->dst || nn_cold_init(&cold) != 0)
            return -1;
#pragma omp parallel /* first touch by the threads that copy, their shares */
        {
            size_t lo, hi;
            nn_byte_share(s->n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            for (size_t i = lo; i < hi; i += 4096) {
                size_t len = hi - i < 4096 ? hi - i : 4096;
                memset(s->src + i, (int)(i >> 12), len);
                memset(s->dst + i, 0, len);
            }
        }
        break;
    case K_ADAM:
        if (nn_adam_case_init(&s->ac, opt.adam_elems) != 0 || nn_cold_init(&cold) != 0)
            return -1;
        break;
    }
    return 0;
}

static int iterate(void *st, long long iter, double *elapsed);

/* The roofline's memory bandwidth: a memcpy of the Adam case's size
 * (--adam-elems), one warm-up and BW_REPS timed, in the block case's
 * set-up. Not interleaved with the block's iterations like sgemm: a copy
 * far beyond the last-level cache before each iteration would evict the
 * block's weights and activations and slow it down. */
#define BW_REPS 5
static int measure_bandwidth(struct mb_run *run)
{
    void *p = NULL;
    if (setup_kind(run, K_MEMCPY, &p) != 0) {
        if (p)
            teardown(p);
        mb_warn("block: out of memory for the roofline's memcpy");
        return -1;
    }
    struct state *m = p;
    m->fault = 0;
    double t[BW_REPS], dummy = -1;
    for (int i = 0; i <= BW_REPS; i++) {
        prepare_one(m, i);
        double t0 = mb_now();
        iterate(m, i, &dummy);
        if (i > 0)
            t[i - 1] = mb_now() - t0;
    }
    struct mb_stats st;
    mb_stats_compute(t, BW_REPS, &st);
    bw_median = st.median;
    bw_bytes = 2 * m->n; /* read n, write n */
    teardown(m);
    return 0;
}

static int setup(struct mb_run *run, const struct mb_case *c, void **out)
{
    enum kind k = (enum kind)(intptr_t)c->user;
    int rc = setup_kind(run, k, out);
    if (rc == 0 && (k == K_BLOCK || k == K_ADAM)) {
        struct state *s = *out;
        void *peer = NULL;
        rc = setup_kind(run, k == K_BLOCK ? K_SGEMM : K_MEMCPY, &peer);
        s->peer = peer;
        if (s->peer)
            s->peer->fault = 0;
        free(peer_t);
        peer_t = calloc((size_t)run->common.iters, sizeof(double));
        peer_n = 0;
        peer_median = NAN;
    }
    if (rc == 0 && k == K_BLOCK)
        rc = measure_bandwidth(run);
    return rc;
}


/* Before each block/adam iteration, untimed by the harness: one run of
 * its peer, timed here, so the ratio compares neighbours in time. */
static void prepare(void *st, long long iter)
{
    struct state *s = st;
    if (s->peer) {
        double dummy = -1;
        prepare_one(s->peer, iter);
        double t0 = mb_now();
        iterate(s->peer, iter, &dummy);
        double t1 = mb_now();
        if (iter >= s->run->common.warmup && peer_n < (size_t)s->run->common.iters)
            peer_t[peer_n++] = t1 - t0;
        if (peer_stage_t && s->peer->kind == K_SGEMM && iter >= s->run->common.warmup &&
            peer_stage_n < (size_t)s->run->common.iters) {
            struct nn_stage_times *t = &peer_stage_t[peer_stage_n++];
            memset(t, 0, sizeof(*t));
            for (int i = 0; i < s->peer->gp.ng; i++)
                t->t[s->peer->gp.g[i].stage] += s->peer->gp.t[i];
        }
    }
    prepare_one(st, iter);
}

static void prepare_one(void *st, long long iter)
{
    struct state *s = st;
    uint64_t seed = (uint64_t)s->run->common.seed * 7919u + (uint64_t)iter;
    switch (s->kind) {
    case K_SGEMM: /* nn_gemm_peer_run changes its operands */
        break;
    case K_BLOCK:
        nn_block_case_prepare(&s->bc, seed);
        break;
    case K_MEMCPY:
        for (size_t i = 0; i < s->n; i += 4096)
            s->src[i] = (char)(iter + (long long)(i >> 12));
        nn_cold_start(&cold);
        break;
    case K_ADAM:
        nn_adam_case_prepare(&s->ac, seed, iter + 1);
        nn_cold_start(&cold);
        break;
    }
}

static int iterate(void *st, long long iter, double *elapsed)
{
    struct state *s = st;
    (void)elapsed;
    switch (s->kind) {
    case K_SGEMM:
        nn_gemm_peer_run(&s->gp, iter);
        inject(s, iter);
        return 0;
    case K_BLOCK:
        memset(&s->cur, 0, sizeof(s->cur));
        if (nn_block_case_pass(&s->bc) != 0)
            return -1;
        if (opt.breakdown && iter >= s->run->common.warmup && stage_n < (size_t)s->run->common.iters)
            stage_t[stage_n++] = s->cur;
        inject(s, iter);
        return 0;
    case K_MEMCPY: {
#pragma omp parallel /* the threads and shares of nn_adam_step */
        {
            size_t lo, hi;
            nn_byte_share(s->n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            nn_copy_peer(s->dst + lo, s->src + lo, hi - lo);
        }
        inject(s, iter);
        return 0;
    }
    case K_ADAM: {
        nn_adam_case_step(&s->ac);
        inject(s, iter);
        return 0;
    }
    }
    return -1;
}

/* ---- checks ---------------------------------------------------------- */

static int check(void *st, long long iter, char *msg, size_t len)
{
    struct state *s = st;
    switch (s->kind) {
    case K_SGEMM: return nn_gemm_peer_check(&s->gp, mix((uint64_t)s->run->common.seed, (uint64_t)iter), msg, len);
    case K_BLOCK: return nn_block_case_check(&s->bc, msg, len);
    case K_MEMCPY:
        if (memcmp(s->dst, s->src, s->n) != 0) { /* every byte */
            size_t i = 0;
            while (s->dst[i] == s->src[i]) i++;
            snprintf(msg, len, "memcpy byte %zu differs", i);
            return 1;
        }
        return 0;
    case K_ADAM: return nn_adam_case_check(&s->ac, msg, len);
    }
    return 1;
}

/* The block's roofline: GEMM FLOPs at the interleaved sgemm rate plus
 * the fused sweeps' bytes at the memcpy rate of measure_bandwidth. */
static void roofline(double measured)
{
    double fwd, bwd;
    nn_block_elementwise_bytes(&cfg, (int)opt.batch, &fwd, &bwd);
    double bytes = fwd * (opt.recompute ? 2 : 1) + bwd;
    double bw = (double)bw_bytes / bw_median, t_gemm = peer_median, t_mem = bytes / bw;
    printf("# roofline block: %.3g GFLOP at sgemm %.2f GFLOP/s (%.4f s) + %.3g GB at memcpy %.2f GB/s "
           "(%.4f s) = %.4f s, %.2f GFLOP/s; measured %.4f s, %.2f GFLOP/s (measured/roofline %.3f)\n",
           block_flops / 1e9, block_flops / t_gemm / 1e9, t_gemm, bytes / 1e9, bw / 1e9, t_mem,
           t_gemm + t_mem, block_flops / (t_gemm + t_mem) / 1e9, measured, block_flops / measured / 1e9,
           measured / (t_gemm + t_mem));
}

/* --breakdown: each stage's median over the timed iterations beside its
 * roofline term (a GEMM stage: the interleaved peer's median for the same
 * shapes; a sweep: its bytes at the memcpy rate), then the categories;
 * every iteration's stage and category seconds go to /metrics/<case>/
 * stage_<stage>_s and category_<category>_s. "untimed" is the block's
 * time outside every stage. */
static void breakdown(struct mb_run *run, const struct mb_case *c, double block)
{
    size_t n = stage_n, np = peer_stage_n < n ? peer_stage_n : n;
    double *v = calloc(n + 1, sizeof(double)), *w = calloc(n + 1, sizeof(double));
    double *cv = calloc((NN_CATEGORY_COUNT + 1) * (n + 1), sizeof(double));
    char name[96];
    if (!v || !w || !cv || !n)
        goto out;
    printf("# breakdown %s (medians of %zu iterations; block %.4f s): stage, category, seconds, share, "
           "roofline seconds (peer sgemm or bytes/memcpy rate), measured/roofline\n", c->name, n, block);
    for (int st = 0; st < NN_STAGE_COUNT; st++) {
        int cat = nn_stage_category_id((enum nn_stage)st);
        snprintf(name, sizeof(name), "stage_%s_s", nn_stage_name((enum nn_stage)st));
        for (char *p = name; *p; p++)
            *p = *p == '.' ? '_' : *p;
        for (size_t i = 0; i < n; i++) {
            v[i] = stage_t[i].t[st];
            cv[cat * n + i] += v[i];
            cv[NN_CATEGORY_COUNT * n + i] += v[i];
            mb_metric_at_dbl(&run->result, c->name, name, i, v[i]);
        }
        for (size_t i = 0; i < np; i++)
            w[i] = peer_stage_t[i].t[st];
        double m = median_of(v, n), bytes = nn_block_stage_bytes(&cfg, (int)opt.batch, st);
        double roof = bytes > 0 ? bytes * (opt.recompute && st < NN_ST_BWD_COPIES ? 2 : 1) * bw_median / (double)bw_bytes
                                : np ? median_of(w, np) : NAN;
        printf("#   %-18s %-13s %9.5f s %5.1f%%  %9.5f s  %6.2f\n", nn_stage_name((enum nn_stage)st),
               nn_category_name(cat), m, 100 * m / block, roof, roof > 0 ? m / roof : NAN);
    }
    for (int cat = 0; cat <= NN_CATEGORY_COUNT; cat++) {
        const char *cn = cat < NN_CATEGORY_COUNT ? nn_category_name(cat) : "staged";
        snprintf(name, sizeof(name), "category_%s_s", cn);
        for (size_t i = 0; i < n; i++)
            mb_metric_at_dbl(&run->result, c->name, name, i, cv[cat * n + i]);
        double m = median_of(cv + cat * n, n);
        printf("#   %-18s %-13s %9.5f s %5.1f%%\n", cn, "(category)", m, 100 * m / block);
    }
    double staged = median_of(cv + NN_CATEGORY_COUNT * n, n);
    printf("#   %-18s %-13s %9.5f s %5.1f%%\n", "untimed", "(block-staged)", block - staged,
           100 * (block - staged) / block);
out:
    free(v);
    free(w);
    free(cv);
}

/* The model of each second case is its peer's rate: the block at the
 * sgemm FLOP rate, Adam at the memcpy byte rate. The ratio is printed. */
static double model(struct mb_run *run, const struct mb_case *c)
{
    enum kind k = (enum kind)(intptr_t)c->user;
    if (k != K_BLOCK && k != K_ADAM)
        return NAN;
    size_t n = run->result.ncases;
    if (n < 2)
        return NAN;
    const struct mb_case_result *me = &run->result.cases[n - 1], *peer = &run->result.cases[n - 2];
    double ratio = peer_median / me->stats.median, sep = peer->stats.median / me->stats.median;
    double work = k == K_BLOCK ? block_flops : (double)c->bytes;
    printf("# ratio %s: %.3f (%s %.2f %s, %s %.2f interleaved, medians of %zu pairs; separate cases: %.3f)\n",
           k == K_BLOCK ? "block/sgemm FLOP rate" : "adam/memcpy bytes/s", ratio,
           k == K_BLOCK ? "block" : "adam", work / me->stats.median / 1e9,
           k == K_BLOCK ? "GFLOP/s" : "GB/s touched", k == K_BLOCK ? "sgemm" : "memcpy",
           work / peer_median / 1e9, peer_n, sep);
    if (k == K_BLOCK)
        roofline(me->stats.median);
    if (k == K_BLOCK && opt.breakdown)
        breakdown(run, c, me->stats.median);
    return peer_median;
}

static void teardown(void *st)
{
    struct state *s = st;
    if (s->peer) {
        peer_median = median_of(peer_t, peer_n);
        teardown(s->peer);
    }
    nn_gemm_peer_free(&s->gp);
    nn_block_case_free(&s->bc);
    free(s->src); free(s->dst);
    nn_adam_case_free(&s->ac);
    if (s->kind == K_MEMCPY || s->kind == K_ADAM)
        nn_cold_free(&cold); /* (a later case allocates it again) */
    free(s);
}

static const struct mb_bench bench = {
    .name = "mb-nn",
    .description = "nn/ decoder block fwd+bwd vs plain cblas_sgemm, and Adam vs memcpy, side by side.",
    .opts = nn_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .model = model,
    .teardown = teardown,
};

int main(int argc, char **argv) { return mb_main(&bench, argc, argv); }
