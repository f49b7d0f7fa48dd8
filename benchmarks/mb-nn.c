/* mb-nn: the nn/ library's speed against its peers, measured side by side
 * in one run and reported as ratios:
 *   sgemm  plain cblas_sgemm over exactly the GEMMs one decoder block runs
 *          forward and backward (nn_block_gemm_shapes), on the same shapes
 *   block  nn/'s decoder block forward + backward (GEMMs, attention,
 *          layer norms, GELU, residuals, bias and weight gradients)
 *   memcpy a memcpy over the same number of bytes Adam touches, OpenMP
 *          threads each copying a contiguous share
 *   adam   nn_adam_step over N fp32 parameters (fp32 master, m, v, grads)
 * Every case validates each iteration (see check_*), and the ratios are
 * the block's FLOP rate over sgemm's and Adam's bytes/s over memcpy's.
 * The block's roofline: its GEMM FLOPs at the interleaved sgemm rate plus
 * its elementwise bytes (nn_block_elementwise_bytes) at a memcpy rate
 * measured in the block case's set-up. */
#include "harness/harness.h"
#include "../nn/nn.h"

#include <cblas.h>
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
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"kind", "shape", NULL};

enum kind { K_SGEMM, K_BLOCK, K_MEMCPY, K_ADAM };
static const char *const kind_names[] = {"sgemm", "block", "memcpy", "adam"};

static struct nn_gpt_config cfg;
static double block_flops;         /* per iteration */
static char shape_label[96];

struct bref;

/* MB_FAULT_INJECT: corrupt (add 1 + |v|), nan or inf, written into one
 * element of one checked output at a seeded iteration and position. */
enum fault { F_NONE, F_CORRUPT, F_NAN, F_INF };

struct state {
    struct mb_run *run;
    enum kind kind;
    int fault;                   /* enum fault: what MB_FAULT_INJECT asks for */
    long long fault_iter;        /* the (seeded) iteration that gets the fault */
    /* sgemm */
    struct nn_gemm_shape g[32];
    int ng;
    float **A, **B, **C;
    /* block */
    struct nn_workspace *ws;
    struct nn_layer *layer;
    float *x, *y, *dout, *dx;
    struct bref *ref;            /* double-precision reference, allocated by the first check */
    /* memcpy / adam */
    size_t n;
    char *src, *dst;
    float *p, *m, *v, *grad;
    float *p0, *m0, *v0;         /* p, m, v before the step, for the check */
    long long step;
    struct state *peer;          /* block: an sgemm state, adam: a memcpy state, run
                                    interleaved in prepare so both see the same load */
};

/* Interleaved peer timings of the current block/adam case (timed
 * iterations only) and their median, kept for model(). */
static double *peer_t;
static size_t peer_n;
static double peer_median = NAN;
/* The roofline's memcpy: median time and bytes moved (measure_bandwidth). */
static double bw_median = NAN;
static size_t bw_bytes;
static void teardown(void *st);
static void prepare_one(void *st, long long iter);

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
    double M = (double)opt.batch * cfg.seq;
    double bytes = 4.0 * (M * (24.0 * cfg.hidden + 2.0 * cfg.ffn) + (double)opt.batch * cfg.heads * cfg.seq * cfg.seq +
                          24.0 * cfg.hidden * cfg.hidden);
    if (run->common.check) /* the check's double reference (struct bref) */
        bytes += 8.0 * (2 * 12.0 * cfg.hidden * cfg.hidden + M * (19.0 * cfg.hidden + 3.0 * cfg.ffn) +
                        (double)opt.batch * cfg.heads * cfg.seq * cfg.seq);
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

static void fill(float *x, size_t n, uint64_t seed, double scale)
{
    struct nn_rng r;
    nn_rng_seed(&r, seed);
#pragma omp parallel for schedule(static) if (n >= 1 << 20)
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * (2.0 * (double)((i * 2654435761u + seed * 40503u) % 1000003u) / 1000003.0 - 1.0));
    (void)r;
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

/* Names of the block's parameter tensors, in the order of nn/block.c. */
static const char *const param_names[] = {"ln1.g", "ln1.b", "Wqkv", "bqkv", "Wo", "bo",
                                          "ln2.g", "ln2.b", "W1",   "b1",   "W2", "b2"};

static void param_sizes(size_t H, size_t F, size_t n[12])
{
    size_t v[12] = {H, H, 3 * H * H, 3 * H, H * H, H, H, H, H * F, F, F * H, H};
    memcpy(n, v, sizeof(v));
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
        int i = (int)(nn_rng_next(&r) % (uint64_t)s->ng);
        size_t M = (size_t)s->g[i].M, N = (size_t)s->g[i].N;
        size_t m = nn_rng_next(&r) % M, n = nn_rng_next(&r) % N;
        s->C[i][m * N + n] = faulty(s->fault, s->C[i][m * N + n]);
        snprintf(key, sizeof(key), "gemm %d row %zu", i, m);
        break;
    }
    case K_BLOCK: {
        size_t MH = (size_t)opt.batch * (size_t)cfg.seq * (size_t)cfg.hidden;
        struct nn_tensor *g = nn_layer_grads(s->layer);
        int t = (int)(nn_rng_next(&r) % 3);
        float *v = t == 0 ? s->y : t == 1 ? s->dx : g->data;
        size_t i = nn_rng_next(&r) % (t == 2 ? g->numel : MH);
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
        float *v = t == 0 ? s->p : t == 1 ? s->m : s->v;
        size_t i = nn_rng_next(&r) % s->n;
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
    size_t M = (size_t)B * (size_t)cfg.seq, H = (size_t)cfg.hidden;
    switch (s->kind) {
    case K_SGEMM:
        s->ng = nn_block_gemm_shapes(&cfg, B, s->g, 32);
        s->A = calloc((size_t)s->ng, sizeof(float *));
        s->B = calloc((size_t)s->ng, sizeof(float *));
        s->C = calloc((size_t)s->ng, sizeof(float *));
        for (int i = 0; i < s->ng; i++) {
            size_t m = (size_t)s->g[i].M, n = (size_t)s->g[i].N, k = (size_t)s->g[i].K;
            s->A[i] = malloc(m * k * 4);
            s->B[i] = malloc(k * n * 4);
            s->C[i] = malloc(m * n * 4);
            if (!s->A[i] || !s->B[i] || !s->C[i])
                return -1;
            fill(s->A[i], m * k, (uint64_t)i + 1, 1.0);
            fill(s->B[i], k * n, (uint64_t)i + 100, 1.0);
        }
        break;
    case K_BLOCK: {
        struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
        s->ws = nn_workspace_new(&cfg, B);
        s->layer = s->ws ? nn_layer_new(&cfg, B, f32, 1, (uint64_t)run->common.seed, s->ws) : NULL;
        s->x = malloc(M * H * 4); s->y = malloc(M * H * 4);
        s->dout = malloc(M * H * 4); s->dx = malloc(M * H * 4);
        if (!s->layer || !s->x || !s->y || !s->dout || !s->dx) {
            mb_warn("block: out of memory");
            return -1;
        }
        /* generic parameters: LN gains/biases and biases away from 1/0 */
        struct nn_tensor *p = nn_layer_params(s->layer);
        float *pp = p->data;
        struct nn_rng r;
        nn_rng_seed(&r, (uint64_t)run->common.seed);
        for (size_t i = 0; i < p->numel; i++)
            pp[i] += (float)(0.02 * nn_rng_normal(&r));
        break;
    }
    case K_MEMCPY:
        s->n = nn_adam_bytes_per_elem(NN_F32, 0, NN_F32) * opt.adam_elems / 2;
        s->src = malloc(s->n);
        s->dst = malloc(s->n);
        if (!s->src || !s->dst)
            return -1;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < s->n; i += 4096) { /* first touch by the threads that copy */
            size_t len = s->n - i < 4096 ? s->n - i : 4096;
            memset(s->src + i, (int)(i >> 12), len);
            memset(s->dst + i, 0, len);
        }
        break;
    case K_ADAM:
        s->n = opt.adam_elems;
        s->p = malloc(s->n * 4); s->m = malloc(s->n * 4); s->v = malloc(s->n * 4);
        s->grad = malloc(s->n * 4);
        s->p0 = malloc(s->n * 4); s->m0 = malloc(s->n * 4); s->v0 = malloc(s->n * 4);
        if (!s->p || !s->m || !s->v || !s->grad || !s->p0 || !s->m0 || !s->v0)
            return -1;
        fill(s->p, s->n, 1, 1.0);
        fill(s->m, s->n, 2, 0.01);
        fill(s->v, s->n, 3, 0.0);
        for (size_t i = 0; i < s->n; i++)
            s->v[i] = s->m[i] * s->m[i] + 1e-6f;
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
    }
    prepare_one(st, iter);
}

static void prepare_one(void *st, long long iter)
{
    struct state *s = st;
    uint64_t seed = (uint64_t)s->run->common.seed * 7919u + (uint64_t)iter;
    size_t M = (size_t)opt.batch * (size_t)cfg.seq, H = (size_t)cfg.hidden;
    switch (s->kind) {
    case K_SGEMM:
        for (int i = 0; i < s->ng; i++) /* fresh data: perturb one row of A */
            s->A[i][0] = (float)(iter % 7) * 0.125f;
        break;
    case K_BLOCK:
        fill(s->x, M * H, seed, 1.0);
        fill(s->dout, M * H, seed + 1, 1.0);
        nn_layer_zero_grad(s->layer);
        break;
    case K_MEMCPY:
        for (size_t i = 0; i < s->n; i += 4096)
            s->src[i] = (char)(iter + (long long)(i >> 12));
        break;
    case K_ADAM:
        fill(s->grad, s->n, seed, 0.1);
        memcpy(s->p0, s->p, s->n * 4);
        memcpy(s->m0, s->m, s->n * 4);
        memcpy(s->v0, s->v, s->n * 4);
        s->step = iter + 1;
        break;
    }
}

static int iterate(void *st, long long iter, double *elapsed)
{
    struct state *s = st;
    (void)elapsed;
    switch (s->kind) {
    case K_SGEMM:
        for (int i = 0; i < s->ng; i++) {
            const struct nn_gemm_shape *g = &s->g[i];
            int lda = g->ta ? g->M : g->K, ldb = g->tb ? g->K : g->N;
            /* with --recompute the block reruns its forward GEMMs but W2's:
             * so does the peer */
            int reps = g->count * (opt.recompute && g->recomputed ? 2 : 1);
            for (int r = 0; r < reps; r++)
                cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                            g->tb ? CblasTrans : CblasNoTrans, g->M, g->N, g->K, 1.0f, s->A[i], lda,
                            s->B[i], ldb, 0.0f, s->C[i], g->N);
        }
        inject(s, iter);
        return 0;
    case K_BLOCK:
        if (nn_layer_forward(s->layer, s->x, s->y) != 0)
            return -1;
        if (opt.recompute)
            nn_layer_drop_intra(s->layer);
        if (nn_layer_backward(s->layer, s->dout, s->dx) != 0)
            return -1;
        inject(s, iter);
        return 0;
    case K_MEMCPY: {
        int nt = omp_get_max_threads();
#pragma omp parallel num_threads(nt)
        {
            size_t t = (size_t)omp_get_thread_num(), T = (size_t)omp_get_num_threads();
            size_t lo = s->n * t / T, hi = s->n * (t + 1) / T;
            memcpy(s->dst + lo, s->src + lo, hi - lo);
        }
        inject(s, iter);
        return 0;
    }
    case K_ADAM: {
        struct nn_adam hp = nn_adam_default();
        nn_adam_step(&hp, s->step, s->n, s->p, s->m, s->v, s->grad, NN_F32, 1.0f, NULL, NN_F32);
        inject(s, iter);
        return 0;
    }
    }
    return -1;
}

/* ---- checks ---------------------------------------------------------- */

/* Freivalds: C r == A (B r) in double, every row, for a fresh random r
 * each iteration (from --seed, the iteration and the GEMM) whose entries
 * are +-[0.5, 1.5): no column of C goes unchecked. */
static int check_sgemm(struct state *s, long long iter, char *msg, size_t len)
{
    for (int i = 0; i < s->ng; i++) {
        const struct nn_gemm_shape *g = &s->g[i];
        int M = g->M, N = g->N, K = g->K, lda = g->ta ? M : K, ldb = g->tb ? K : N;
        double *r = malloc((size_t)N * 8), *br = calloc((size_t)K, 8);
        if (!r || !br) {
            free(r); free(br);
            snprintf(msg, len, "gemm %d: out of memory for the check", i);
            return 1;
        }
        struct nn_rng rng;
        nn_rng_seed(&rng, mix(mix((uint64_t)s->run->common.seed, (uint64_t)iter), (uint64_t)i));
        for (int j = 0; j < N; j++) {
            double u = nn_rng_uniform(&rng);
            r[j] = u < 0.5 ? -(0.5 + 2 * u) : 0.5 + 2 * (u - 0.5);
        }
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                br[k] += (g->tb ? s->B[i][(size_t)j * ldb + k] : s->B[i][(size_t)k * ldb + j]) * r[j];
        int bad = -1;
        double got = 0, want = 0;
        for (int m = 0; m < M && bad < 0; m++) {
            double a = 0, c = 0, scale = 0;
            for (int k = 0; k < K; k++) {
                double av = g->ta ? s->A[i][(size_t)k * lda + m] : s->A[i][(size_t)m * lda + k];
                a += av * br[k];
                scale += fabs(av * br[k]);
            }
            for (int j = 0; j < N; j++)
                c += s->C[i][(size_t)m * N + j] * r[j];
            /* fp32 rounding of C r stayed below 7e-7 of sum |A_mk (B r)_k| (gpt-bench) */
            if (!(fabs(a - c) <= 1e-5 * scale + 1e-6)) {
                bad = m;
                got = c;
                want = a;
            }
        }
        free(r);
        free(br);
        if (bad >= 0) {
            snprintf(msg, len, "gemm %d row %d (%dx%dx%d): C r is %.9g, A (B r) is %.9g", i, bad, M, N, K,
                     got, want);
            return 1;
        }
    }
    return 0;
}

/* Independent double-precision reference of the whole block pass, every
 * batch element: forward (the output y) and backward (dx and every
 * parameter gradient), with BLAS in double for the products. */
struct bref {
    size_t B, S, H, F, A, D, M, np;
    double *W, *G, *x, *dout, *xh1, *rs1, *y1, *qkv, *P, *att, *x1, *xh2, *rs2, *y2, *h, *gl, *out;
    double *dx1, *dh, *dy, *datt, *dqkv, *dS, *dx;
};

static void bref_free(struct bref *R)
{
    if (!R)
        return;
    double **all[] = {&R->W, &R->G, &R->x, &R->dout, &R->xh1, &R->rs1, &R->y1, &R->qkv, &R->P,
                      &R->att, &R->x1, &R->xh2, &R->rs2, &R->y2, &R->h, &R->gl, &R->out, &R->dx1,
                      &R->dh, &R->dy, &R->datt, &R->dqkv, &R->dS, &R->dx};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(*all[i]);
    free(R);
}

static struct bref *bref_new(size_t np)
{
    struct bref *R = calloc(1, sizeof(*R));
    if (!R)
        return NULL;
    R->B = (size_t)opt.batch; R->S = (size_t)cfg.seq; R->H = (size_t)cfg.hidden; R->F = (size_t)cfg.ffn;
    R->A = (size_t)cfg.heads; R->D = R->H / R->A; R->M = R->B * R->S; R->np = np;
    size_t M = R->M, H = R->H, F = R->F, SS = R->B * R->A * R->S * R->S;
    struct { double **p; size_t n; } a[] = {
        {&R->W, np}, {&R->G, np}, {&R->x, M * H}, {&R->dout, M * H}, {&R->xh1, M * H}, {&R->rs1, M},
        {&R->y1, M * H}, {&R->qkv, 3 * M * H}, {&R->P, SS}, {&R->att, M * H}, {&R->x1, M * H},
        {&R->xh2, M * H}, {&R->rs2, M}, {&R->y2, M * H}, {&R->h, M * F}, {&R->gl, M * F},
        {&R->out, M * H}, {&R->dx1, M * H}, {&R->dh, M * F}, {&R->dy, M * H}, {&R->datt, M * H},
        {&R->dqkv, 3 * M * H}, {&R->dS, R->S * R->S}, {&R->dx, M * H}};
    for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
        if (!(*a[i].p = malloc(a[i].n * 8))) {
            bref_free(R);
            return NULL;
        }
    return R;
}

/* row-major C = alpha op(A) op(B) + beta C */
static void dg(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const double *A, size_t lda,
               const double *B, size_t ldb, double beta, double *C, size_t ldc)
{
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m,
                (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

static void rows_of(double *y, const double *b, size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(y + r * n, b, n * 8);
}

static void colsum(const double *d, size_t rows, size_t n, double *out)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < n; c++)
            out[c] += d[r * n + c];
}

static void ln_fwd(const double *x, const double *g, const double *b, double *xh, double *rs, double *y,
                   size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * n;
        double mu = 0, var = 0;
        for (size_t i = 0; i < n; i++) mu += xr[i];
        mu /= (double)n;
        for (size_t i = 0; i < n; i++) var += (xr[i] - mu) * (xr[i] - mu);
        rs[r] = 1 / sqrt(var / (double)n + 1e-5);
        for (size_t i = 0; i < n; i++) {
            xh[r * n + i] = (xr[i] - mu) * rs[r];
            y[r * n + i] = xh[r * n + i] * g[i] + b[i];
        }
    }
}

/* dx = LN backward of dy (accumulated into dx), dg/db accumulated */
static void ln_bwd(const double *dy, const double *xh, const double *rs, const double *g, double *dx,
                   double *dg, double *db, size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++) {
        const double *d = dy + r * n, *xr = xh + r * n;
        double m1 = 0, m2 = 0;
        for (size_t i = 0; i < n; i++) {
            dg[i] += d[i] * xr[i];
            db[i] += d[i];
            m1 += d[i] * g[i];
            m2 += d[i] * g[i] * xr[i];
        }
        m1 /= (double)n;
        m2 /= (double)n;
        for (size_t i = 0; i < n; i++)
            dx[r * n + i] += rs[r] * (d[i] * g[i] - m1 - xr[i] * m2);
    }
}

static void bref_run(struct bref *R)
{
    size_t B = R->B, S = R->S, H = R->H, F = R->F, A = R->A, D = R->D, M = R->M, H3 = 3 * H;
    size_t n[12], off[12];
    param_sizes(H, F, n);
    for (size_t i = 0, o = 0; i < 12; o += n[i], i++) off[i] = o;
    const double *W = R->W;
    double *G = R->G, sc = 1 / sqrt((double)D);
#define PW(i) (W + off[i])
#define PG(i) (G + off[i])
    /* forward */
    ln_fwd(R->x, PW(0), PW(1), R->xh1, R->rs1, R->y1, M, H);
    rows_of(R->qkv, PW(3), M, H3);
    dg(0, 0, M, H3, H, 1, R->y1, H, PW(2), H3, 1, R->qkv, H3);
    for (size_t b = 0; b < B; b++)
        for (size_t a = 0; a < A; a++) {
            const double *q = R->qkv + b * S * H3 + a * D, *k = q + H, *v = q + 2 * H;
            double *P = R->P + (b * A + a) * S * S;
            dg(0, 1, S, S, D, sc, q, H3, k, H3, 0, P, S);
            for (size_t i = 0; i < S; i++) {
                double *row = P + i * S, mx = row[0], sum = 0;
                for (size_t j = 1; j <= i; j++) mx = fmax(mx, row[j]);
                for (size_t j = 0; j <= i; j++) sum += (row[j] = exp(row[j] - mx));
                for (size_t j = 0; j < S; j++) row[j] = j <= i ? row[j] / sum : 0;
            }
            dg(0, 0, S, D, S, 1, P, S, v, H3, 0, R->att + b * S * H + a * D, H);
        }
    for (size_t i = 0; i < M * H; i++) R->x1[i] = R->x[i] + PW(5)[i % H];
    dg(0, 0, M, H, H, 1, R->att, H, PW(4), H, 1, R->x1, H);
    ln_fwd(R->x1, PW(6), PW(7), R->xh2, R->rs2, R->y2, M, H);
    rows_of(R->h, PW(9), M, F);
    dg(0, 0, M, F, H, 1, R->y2, H, PW(8), F, 1, R->h, F);
    for (size_t i = 0; i < M * F; i++) {
        double v = R->h[i];
        R->gl[i] = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    }
    for (size_t i = 0; i < M * H; i++) R->out[i] = R->x1[i] + PW(11)[i % H];
    dg(0, 0, M, H, F, 1, R->gl, F, PW(10), H, 1, R->out, H);
    /* backward of <dout, out> */
    memset(G, 0, R->np * 8);
    dg(1, 0, F, H, M, 1, R->gl, F, R->dout, H, 0, PG(10), H);
    colsum(R->dout, M, H, PG(11));
    dg(0, 1, M, F, H, 1, R->dout, H, PW(10), H, 0, R->dh, F);
    for (size_t i = 0; i < M * F; i++) {
        double v = R->h[i], u = 0.7978845608028654 * (v + 0.044715 * v * v * v), t = tanh(u);
        double du = 0.7978845608028654 * (1 + 3 * 0.044715 * v * v);
        R->dh[i] *= 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du;
    }
    dg(1, 0, H, F, M, 1, R->y2, H, R->dh, F, 0, PG(8), F);
    colsum(R->dh, M, F, PG(9));
    dg(0, 1, M, H, F, 1, R->dh, F, PW(8), F, 0, R->dy, H);
    memcpy(R->dx1, R->dout, M * H * 8);
    ln_bwd(R->dy, R->xh2, R->rs2, PW(6), R->dx1, PG(6), PG(7), M, H);
    dg(1, 0, H, H, M, 1, R->att, H, R->dx1, H, 0, PG(4), H);
    colsum(R->dx1, M, H, PG(5));
    dg(0, 1, M, H, H, 1, R->dx1, H, PW(4), H, 0, R->datt, H);
    for (size_t b = 0; b < B; b++)
        for (size_t a = 0; a < A; a++) {
            const double *q = R->qkv + b * S * H3 + a * D, *k = q + H, *v = q + 2 * H;
            const double *P = R->P + (b * A + a) * S * S, *dO = R->datt + b * S * H + a * D;
            double *dq = R->dqkv + b * S * H3 + a * D, *dk = dq + H, *dv = dq + 2 * H, *dS = R->dS;
            dg(0, 1, S, S, D, 1, dO, H, v, H3, 0, dS, S);
            dg(1, 0, S, D, S, 1, P, S, dO, H, 0, dv, H3);
            for (size_t i = 0; i < S; i++) {
                double dot = 0, *row = dS + i * S;
                const double *pr = P + i * S;
                for (size_t j = 0; j <= i; j++) dot += row[j] * pr[j];
                for (size_t j = 0; j < S; j++) row[j] = j <= i ? sc * pr[j] * (row[j] - dot) : 0;
            }
            dg(0, 0, S, D, S, 1, dS, S, k, H3, 0, dq, H3);
            dg(1, 0, S, D, S, 1, dS, S, q, H3, 0, dk, H3);
        }
    dg(1, 0, H, H3, M, 1, R->y1, H, R->dqkv, H3, 0, PG(2), H3);
    colsum(R->dqkv, M, H3, PG(3));
    dg(0, 1, M, H, H3, 1, R->dqkv, H3, PW(2), H3, 0, R->dy, H);
    memcpy(R->dx, R->dx1, M * H * 8);
    ln_bwd(R->dy, R->xh1, R->rs1, PW(0), R->dx, PG(0), PG(1), M, H);
#undef PW
#undef PG
}

/* Every element of got against the reference: |got - ref| within 1e-3 of
 * |ref| plus the tensor's rms (fp32 rounding stayed below 4e-6 of that
 * on gpt-tiny/small/bench); NaN and
 * Inf fail. Returns the first bad index or n. */
static size_t compare(const float *got, const double *ref, size_t n)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += ref[i] * ref[i];
    double rms = sqrt(ss / (double)n) + 1e-30;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(got[i] - ref[i]), tol = 1e-3 * (fabs(ref[i]) + rms);
        if (!(e <= tol))
            return i;
    }
    return n;
}

static int check_block(struct state *s, char *msg, size_t len)
{
    struct nn_tensor *pt = nn_layer_params(s->layer), *gt = nn_layer_grads(s->layer);
    if (!s->ref && !(s->ref = bref_new(pt->numel))) {
        snprintf(msg, len, "block: out of memory for the reference");
        return 1;
    }
    struct bref *R = s->ref;
    size_t MH = R->M * R->H, S = R->S, H = R->H;
    const float *P = pt->data, *Gf = gt->data;
    for (size_t i = 0; i < R->np; i++) R->W[i] = P[i];
    for (size_t i = 0; i < MH; i++) {
        R->x[i] = s->x[i];
        R->dout[i] = s->dout[i];
    }
    bref_run(R);
    const char *names[2] = {"y", "dx"};
    const float *got[2] = {s->y, s->dx};
    const double *want[2] = {R->out, R->dx};
    int rc = 0;
    for (int t = 0; t < 2 && !rc; t++) {
        size_t i = compare(got[t], want[t], MH);
        if (i < MH) {
            snprintf(msg, len, "block %s[%zu] (batch %zu, pos %zu, %zu) = %.7g, reference %.7g", names[t], i,
                     i / (S * H), i / H % S, i % H, got[t][i], want[t][i]);
            rc = 1;
        }
    }
    size_t n[12];
    param_sizes(H, R->F, n);
    for (size_t p = 0, o = 0; p < 12 && !rc; o += n[p], p++) {
        size_t i = compare(Gf + o, R->G + o, n[p]);
        if (i < n[p]) {
            snprintf(msg, len, "block grads[%zu] (d%s[%zu]) = %.7g, reference %.7g", o + i, param_names[p], i,
                     Gf[o + i], R->G[o + i]);
            rc = 1;
        }
    }
    return rc;
}

/* Every element of p, m and v against the update in double. */
static int check_adam(struct state *s, char *msg, size_t len)
{
    struct nn_adam hp = nn_adam_default();
    double t = (double)s->step, c1 = 1 / (1 - pow(hp.beta1, t)), c2 = 1 / (1 - pow(hp.beta2, t));
    double b1 = hp.beta1, b2 = hp.beta2, decay = 1 - (double)hp.lr * hp.weight_decay;
    for (size_t i = 0; i < s->n; i++) {
        double g = s->grad[i], m = b1 * s->m0[i] + (1 - b1) * g, v = b2 * s->v0[i] + (1 - b2) * g * g;
        double p = s->p0[i] * decay - hp.lr * (m * c1) / (sqrt(v * c2) + hp.eps);
        const char *what = NULL;
        double got = 0, want = 0;
        if (!(fabs(p - s->p[i]) <= 1e-5 * (1 + fabs(p))))
            what = "p", got = s->p[i], want = p;
        else if (!(fabs(m - s->m[i]) <= 1e-6 * (1 + fabs(m))))
            what = "m", got = s->m[i], want = m;
        else if (!(fabs(v - s->v[i]) <= 1e-5 * fabs(v) + 1e-12))
            what = "v", got = s->v[i], want = v;
        if (what) {
            snprintf(msg, len, "adam %s[%zu] = %.9g, reference %.9g", what, i, got, want);
            return 1;
        }
    }
    return 0;
}

static int check(void *st, long long iter, char *msg, size_t len)
{
    struct state *s = st;
    switch (s->kind) {
    case K_SGEMM: return check_sgemm(s, iter, msg, len);
    case K_BLOCK: return check_block(s, msg, len);
    case K_MEMCPY:
        if (memcmp(s->dst, s->src, s->n) != 0) { /* every byte */
            size_t i = 0;
            while (s->dst[i] == s->src[i]) i++;
            snprintf(msg, len, "memcpy byte %zu differs", i);
            return 1;
        }
        return 0;
    case K_ADAM: return check_adam(s, msg, len);
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
    return peer_median;
}

static void teardown(void *st)
{
    struct state *s = st;
    if (s->peer) {
        struct mb_stats ps;
        mb_stats_compute(peer_t, peer_n, &ps);
        peer_median = ps.median;
        teardown(s->peer);
    }

    for (int i = 0; s->A && i < s->ng; i++) {
        free(s->A[i]); free(s->B[i]); free(s->C[i]);
    }
    free(s->A); free(s->B); free(s->C);
    nn_layer_free(s->layer);
    nn_workspace_free(s->ws);
    free(s->x); free(s->y); free(s->dout); free(s->dx);
    free(s->src); free(s->dst);
    free(s->p); free(s->m); free(s->v); free(s->grad);
    free(s->p0); free(s->m0); free(s->v0);
    bref_free(s->ref);
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
