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
 * the block's FLOP rate over sgemm's and Adam's bytes/s over memcpy's. */
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
     "GPT preset whose block is measured (see nn_gpt_preset)", "NAME"},
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

struct state {
    struct mb_run *run;
    enum kind kind;
    int fault;
    /* sgemm */
    struct nn_gemm_shape g[32];
    int ng;
    float **A, **B, **C;
    /* block */
    struct nn_workspace *ws;
    struct nn_layer *layer;
    float *x, *y, *dout, *dx;
    /* memcpy / adam */
    size_t n;
    char *src, *dst;
    float *p, *m, *v, *grad;
    float ref[64][4];            /* sampled p, m, v, g before the step */
    long long step;
    struct state *peer;          /* block: an sgemm state, adam: a memcpy state, run
                                    interleaved in prepare so both see the same load */
};

/* Interleaved peer timings of the current block/adam case (timed
 * iterations only) and their median, kept for model(). */
static double *peer_t;
static size_t peer_n;
static double peer_median = NAN;

static int validate(struct mb_run *run)
{
    if (nn_gpt_preset(opt.model, &cfg) != 0) {
        if (run->rank == 0)
            mb_warn("--model: unknown preset '%s' (accepts gpt-tiny, gpt-small, gpt-bench, gpt-6b ... gpt-412b)", opt.model);
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
    if (bytes > 16e9) {
        if (run->rank == 0)
            mb_warn("--model/--batch: a %s block at batch %lld needs ~%.0f GB; pick a smaller preset or batch",
                    opt.model, opt.batch, bytes / 1e9);
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

static int setup_kind(struct mb_run *run, enum kind kind, void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    *out = s;
    s->run = run;
    s->kind = kind;
    s->fault = mb_fault() && !strcmp(mb_fault(), "corrupt");
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
        if (!s->p || !s->m || !s->v || !s->grad)
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
    return rc;
}

static void prepare_one(void *st, long long iter);

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
        for (int k = 0; k < 64; k++) {
            size_t i = (size_t)k * (s->n / 64) + (size_t)(iter % 13);
            s->ref[k][0] = s->p[i]; s->ref[k][1] = s->m[i]; s->ref[k][2] = s->v[i];
            s->ref[k][3] = s->grad[i];
        }
        s->step = iter + 1;
        break;
    }
}

static int iterate(void *st, long long iter, double *elapsed)
{
    struct state *s = st;
    (void)elapsed;
    int timed_first = iter == s->run->common.warmup;
    switch (s->kind) {
    case K_SGEMM:
        for (int i = 0; i < s->ng; i++) {
            const struct nn_gemm_shape *g = &s->g[i];
            int lda = g->ta ? g->M : g->K, ldb = g->tb ? g->K : g->N;
            /* with --recompute the block runs its forward twice: so does the peer */
            int reps = g->count * (opt.recompute && !g->backward ? 2 : 1);
            for (int r = 0; r < reps; r++)
                cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                            g->tb ? CblasTrans : CblasNoTrans, g->M, g->N, g->K, 1.0f, s->A[i], lda,
                            s->B[i], ldb, 0.0f, s->C[i], g->N);
        }
        if (s->fault && timed_first)
            s->C[0][1] += 1.0f;
        return 0;
    case K_BLOCK:
        if (nn_layer_forward(s->layer, s->x, s->y) != 0)
            return -1;
        if (opt.recompute)
            nn_layer_drop_intra(s->layer);
        if (nn_layer_backward(s->layer, s->dout, s->dx) != 0)
            return -1;
        if (s->fault && timed_first)
            s->dx[((size_t)cfg.seq - 1) * (size_t)cfg.hidden] += 10.0f;
        return 0;
    case K_MEMCPY: {
        int nt = omp_get_max_threads();
#pragma omp parallel num_threads(nt)
        {
            size_t t = (size_t)omp_get_thread_num(), T = (size_t)omp_get_num_threads();
            size_t lo = s->n * t / T, hi = s->n * (t + 1) / T;
            memcpy(s->dst + lo, s->src + lo, hi - lo);
        }
        if (s->fault && timed_first)
            s->dst[s->n / 2] ^= 1;
        return 0;
    }
    case K_ADAM: {
        struct nn_adam hp = nn_adam_default();
        nn_adam_step(&hp, s->step, s->n, s->p, s->m, s->v, s->grad, NN_F32, 1.0f, NULL, NN_F32);
        if (s->fault && timed_first)
            s->p[(size_t)(iter % 13)] += 1.0f;
        return 0;
    }
    }
    return -1;
}

/* ---- checks ---------------------------------------------------------- */

/* Freivalds: C r == A (B r) for a random r, in double. */
static int check_sgemm(struct state *s, char *msg, size_t len)
{
    for (int i = 0; i < s->ng; i++) {
        const struct nn_gemm_shape *g = &s->g[i];
        int M = g->M, N = g->N, K = g->K, lda = g->ta ? M : K, ldb = g->tb ? K : N;
        double *r = malloc((size_t)N * 8), *br = calloc((size_t)K, 8);
        for (int j = 0; j < N; j++)
            r[j] = (double)((j * 7 + i) % 11) - 5;
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
            if (fabs(a - c) > 1e-4 * scale + 1e-3) {
                bad = m;
                got = c;
                want = a;
            }
        }
        free(r);
        free(br);
        if (bad >= 0) {
            snprintf(msg, len, "gemm %d (%dx%dx%d): row %d of C r is %.9g, A (B r) is %.9g", i, M, N, K,
                     bad, got, want);
            return 1;
        }
    }
    return 0;
}

/* Independent double-precision reference for batch element 0: the
 * block's output row at position pos, given K/V of all positions. */
struct ref {
    size_t H, F, S, A, D;
    double *W;        /* the parameters in double */
    double *K, *V;    /* [S, H] */
};

static void ln(const double *x, const double *g, const double *b, double *y, size_t n)
{
    double mu = 0, var = 0;
    for (size_t i = 0; i < n; i++) mu += x[i];
    mu /= (double)n;
    for (size_t i = 0; i < n; i++) var += (x[i] - mu) * (x[i] - mu);
    double rs = 1 / sqrt(var / (double)n + 1e-5);
    for (size_t i = 0; i < n; i++) y[i] = (x[i] - mu) * rs * g[i] + b[i];
}

static void vecmat(const double *x, const double *W, size_t ldw, const double *bias, double *y, size_t in, size_t out)
{
    for (size_t j = 0; j < out; j++) y[j] = bias ? bias[j] : 0;
    for (size_t k = 0; k < in; k++)
        for (size_t j = 0; j < out; j++) y[j] += x[k] * W[k * ldw + j];
}

/* parameter offsets as documented in nn/block.c */
#define OFF_WQKV(H) (2 * (H))
#define OFF_BQKV(H) (OFF_WQKV(H) + 3 * (H) * (H))
#define OFF_WO(H) (OFF_BQKV(H) + 3 * (H))
#define OFF_BO(H) (OFF_WO(H) + (H) * (H))
#define OFF_LN2(H) (OFF_BO(H) + (H))
#define OFF_W1(H) (OFF_LN2(H) + 2 * (H))
#define OFF_B1(H, F) (OFF_W1(H) + (H) * (F))
#define OFF_W2(H, F) (OFF_B1(H, F) + (F))
#define OFF_B2(H, F) (OFF_W2(H, F) + (F) * (H))

static void ref_row(const struct ref *R, const double *x, size_t pos, double *out, double *tmp)
{
    size_t H = R->H, F = R->F, D = R->D;
    const double *W = R->W;
    double *y = tmp, *q = y + H, *k = q + H, *v = k + H, *o = v + H, *x1 = o + H, *y2 = x1 + H,
           *h = y2 + H, *sc = h + F;
    ln(x, W, W + H, y, H);
    vecmat(y, W + OFF_WQKV(H), 3 * H, W + OFF_BQKV(H), q, H, H);
    vecmat(y, W + OFF_WQKV(H) + H, 3 * H, W + OFF_BQKV(H) + H, k, H, H);
    vecmat(y, W + OFF_WQKV(H) + 2 * H, 3 * H, W + OFF_BQKV(H) + 2 * H, v, H, H);
    for (size_t a = 0; a < R->A; a++) {
        double mx = -INFINITY, sum = 0;
        for (size_t j = 0; j <= pos; j++) {
            const double *kj = j == pos ? k : R->K + j * H;
            double d = 0;
            for (size_t c = 0; c < D; c++) d += q[a * D + c] * kj[a * D + c];
            sc[j] = d / sqrt((double)D);
            mx = fmax(mx, sc[j]);
        }
        for (size_t j = 0; j <= pos; j++) sum += (sc[j] = exp(sc[j] - mx));
        for (size_t c = 0; c < D; c++) {
            double acc = 0;
            for (size_t j = 0; j <= pos; j++)
                acc += sc[j] / sum * (j == pos ? v : R->V + j * H)[a * D + c];
            o[a * D + c] = acc;
        }
    }
    vecmat(o, W + OFF_WO(H), H, W + OFF_BO(H), x1, H, H);
    for (size_t c = 0; c < H; c++) x1[c] += x[c];
    ln(x1, W + OFF_LN2(H), W + OFF_LN2(H) + H, y2, H);
    vecmat(y2, W + OFF_W1(H), F, W + OFF_B1(H, F), h, H, F);
    for (size_t c = 0; c < F; c++)
        h[c] = 0.5 * h[c] * (1 + tanh(0.7978845608028654 * (h[c] + 0.044715 * h[c] * h[c] * h[c])));
    vecmat(h, W + OFF_W2(H, F), H, W + OFF_B2(H, F), out, F, H);
    for (size_t c = 0; c < H; c++) out[c] += x1[c];
}

static int check_block(struct state *s, char *msg, size_t len)
{
    struct ref R;
    R.H = (size_t)cfg.hidden; R.F = (size_t)cfg.ffn; R.S = (size_t)cfg.seq; R.A = (size_t)cfg.heads;
    R.D = R.H / R.A;
    size_t H = R.H, S = R.S, np = nn_layer_params(s->layer)->numel;
    const float *P = nn_layer_params(s->layer)->data;
    R.W = malloc(np * 8);
    double *X = malloc(S * H * 8), *Y = malloc(S * H * 8), *KV = malloc(S * 2 * H * 8);
    double *tmp = malloc((9 * H + R.F + S) * 8), *out = malloc(H * 8), *xr = malloc(H * 8);
    R.K = malloc(S * H * 8);
    R.V = malloc(S * H * 8);
    for (size_t i = 0; i < np; i++) R.W[i] = P[i];
    for (size_t i = 0; i < S * H; i++) X[i] = s->x[i];
    for (size_t j = 0; j < S; j++) ln(X + j * H, R.W, R.W + H, Y + j * H, H);
    /* K|V = Y Wqkv[:, H:3H] + b (BLAS in double: independent of the sgemm path) */
    for (size_t j = 0; j < S; j++) memcpy(KV + j * 2 * H, R.W + OFF_BQKV(H) + H, 2 * H * 8);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)S, (int)(2 * H), (int)H, 1.0, Y, (int)H,
                R.W + OFF_WQKV(H) + H, (int)(3 * H), 1.0, KV, (int)(2 * H));
    for (size_t j = 0; j < S; j++) {
        memcpy(R.K + j * H, KV + j * 2 * H, H * 8);
        memcpy(R.V + j * H, KV + j * 2 * H + H, H * 8);
    }
    int rc = 0;
    size_t rows[3] = {0, 1, S - 1};
    for (int t = 0; t < 3 && !rc; t++) {
        ref_row(&R, X + rows[t] * H, rows[t], out, tmp);
        for (size_t c = 0; c < H; c++) {
            double got = s->y[rows[t] * H + c];
            if (fabs(got - out[c]) > 1e-3 * (1 + fabs(out[c]))) {
                snprintf(msg, len, "block output [batch 0, pos %zu, %zu] = %.7g, reference %.7g", rows[t], c,
                         got, out[c]);
                rc = 1;
                break;
            }
        }
    }
    if (!rc) { /* dx of the last position: directional derivative of <dout, f> */
        size_t pos = S - 1;
        double eps = 1e-4, lp = 0, lm = 0, ana = 0, nd = 0, nx = 0;
        double *d = malloc(H * 8);
        for (size_t c = 0; c < H; c++) d[c] = c == 0 ? 1.0 : (double)((c * 37) % 19) / 9.0 - 1.0;
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            for (size_t c = 0; c < H; c++) xr[c] = X[pos * H + c] + sgn * eps * d[c];
            ref_row(&R, xr, pos, out, tmp);
            double l = 0;
            for (size_t c = 0; c < H; c++) l += s->dout[pos * H + c] * out[c];
            *(sgn < 0 ? &lm : &lp) = l;
        }
        for (size_t c = 0; c < H; c++) {
            ana += s->dx[pos * H + c] * d[c];
            nd += d[c] * d[c];
            nx += (double)s->dx[pos * H + c] * s->dx[pos * H + c];
        }
        double num = (lp - lm) / (2 * eps);
        double tol = 1e-3 * (fabs(num) + sqrt(nd * nx / (double)H)) + 1e-6;
        if (fabs(num - ana) > tol) {
            snprintf(msg, len, "block dx [batch 0, pos %zu] along a direction: %.7g, reference %.7g", pos,
                     ana, num);
            rc = 1;
        }
        free(d);
    }
    free(R.W); free(R.K); free(R.V); free(X); free(Y); free(KV); free(tmp); free(out); free(xr);
    return rc;
}

static int check(void *st, long long iter, char *msg, size_t len)
{
    struct state *s = st;
    switch (s->kind) {
    case K_SGEMM: return check_sgemm(s, msg, len);
    case K_BLOCK: return check_block(s, msg, len);
    case K_MEMCPY: {
        for (size_t i = 0; i < s->n; i += 4096) { /* every page, and a full compare */
            if (s->dst[i] != (char)(iter + (long long)(i >> 12)))
                break;
        }
        if (memcmp(s->dst, s->src, s->n) != 0) {
            size_t i = 0;
            while (s->dst[i] == s->src[i]) i++;
            snprintf(msg, len, "memcpy: byte %zu differs", i);
            return 1;
        }
        return 0;
    }
    case K_ADAM: {
        struct nn_adam hp = nn_adam_default();
        double t = (double)s->step;
        for (int k = 0; k < 64; k++) {
            size_t i = (size_t)k * (s->n / 64) + (size_t)(iter % 13);
            double g = s->ref[k][3], m = 0.9 * s->ref[k][1] + 0.1 * g, v = 0.999 * s->ref[k][2] + 0.001 * g * g;
            double p = s->ref[k][0] - hp.lr * (m / (1 - pow(0.9, t))) / (sqrt(v / (1 - pow(0.999, t))) + 1e-8);
            if (fabs(p - s->p[i]) > 1e-5 * (1 + fabs(p)) || fabs(m - s->m[i]) > 1e-6 * (1 + fabs(m))) {
                snprintf(msg, len, "adam: element %zu is p=%.9g m=%.9g, reference p=%.9g m=%.9g", i,
                         s->p[i], s->m[i], p, m);
                return 1;
            }
        }
        return 0;
    }
    }
    return 1;
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
