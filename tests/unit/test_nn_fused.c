/* nn/'s fused block path against its unfused reference path (block.c,
 * ops.c, attn.c): each fused kernel alone, then whole blocks forward and
 * backward (output, input gradient, every parameter gradient), at odd
 * shapes (s not a multiple of 8, one head, hidden not a multiple of 64),
 * with the parallel paths forced on (NN_PAR_ELEMS=1); the fused results
 * are bit-identical across thread counts; a corrupted value is caught.
 *
 * Tolerance. The two paths do the same arithmetic per element except
 * (a) column sums (bias and LN gain gradients) added in a different
 * order: chunks of rows, then the chunks, instead of row by row, and
 * (b) the residual added after a GEMM (beta = 0, then x + AB) instead of
 * preloaded into it (beta = 1). A sum of M fp32 terms t carries an error
 * of at most (M - 1) u sum|t| (u = 2^-24, Higham 3.1) in either order, so
 * the two differ by at most 2 (M - 1) u sum|t|; (b) is one rounding of
 * the same sum, u (|x| + |AB|). With M <= 111 rows in the blocks here,
 * 2 M u is 1.3e-5 of the summed magnitude; those differences then pass
 * through the rest of the backward (a few GEMMs and LN backwards, which
 * are well conditioned at these O(1) inputs), so we allow
 *     |fused - ref| <= 1e-4 (|ref| + rms(ref))
 * per element: an order of magnitude above the reordering bound, and
 * four orders below the O(1) relative error of a wrong formula or a
 * missing term. A NaN fails (written !(err <= tol)). The forward output
 * and the softmax need no reduction and match bit for bit. GELU differs
 * by its tanh: the fused path's rational approximation is within 4e-7
 * relative of tanh (fused.c), which moves GELU and GELU' by about
 * 0.5 |v| 4e-7 + 1e-6, two orders below the tolerance; gelu_edges()
 * holds it there over the approximation's regions (tiny, clamped, huge)
 * and sees a NaN come through. */
#include "check.h"

#include "../../nn/nn.h"
#include "../../nn/row_math.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-4

/* Worst |got - ref| / (TOL (|ref| + rms)) over n; > 1 (or NaN) fails. */
static double worst_ratio(const float *got, const float *ref, size_t n)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (double)ref[i] * ref[i];
    double rms = sqrt(ss / (double)(n ? n : 1)) + 1e-30, worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]), tol = TOL * (fabs(ref[i]) + rms);
        if (!(e <= tol))
            return e != e ? NAN : e / tol;
        worst = e / tol > worst ? e / tol : worst;
    }
    return worst;
}

static int same(const char *what, const float *got, const float *ref, size_t n)
{
    double w = worst_ratio(got, ref, n);
    int ok = w <= 1.0;
    printf("%-34s n=%-7zu worst err/limit %.3g%s\n", what, n, w, ok ? "" : "  FAIL");
    return ok;
}

static float *rnd(size_t n, struct nn_rng *r, double scale)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(scale * nn_rng_normal(r));
    return p;
}

static float *dup(const float *p, size_t n)
{
    float *q = malloc((n ? n : 1) * sizeof(float));
    memcpy(q, p, n * sizeof(float));
    return q;
}

/* Each kernel against the ops it replaces, rows x cols. */
static void kernels(size_t rows, size_t cols, struct nn_rng *r)
{
    size_t n = rows * cols;
    char name[64];
    float *x = rnd(n, r, 1), *res = rnd(n, r, 1), *bias = rnd(cols, r, 0.5), *g = rnd(cols, r, 1);
    float *b = rnd(cols, r, 0.5), *dy = rnd(n, r, 1);
    /* residual + bias + layer norm forward */
    float *s_ref = malloc(n * 4), *y_ref = malloc(n * 4), *xh_ref = malloc(n * 4), *rs_ref = malloc(rows * 4);
    float *s_f = dup(x, n), *y_f = malloc(n * 4), *xh_f = malloc(n * 4), *rs_f = malloc(rows * 4);
    for (size_t i = 0; i < n; i++)
        s_ref[i] = res[i] + x[i];
    nn_add_bias(s_ref, bias, rows, cols);
    nn_layernorm_fwd(s_ref, g, b, y_ref, xh_ref, rs_ref, rows, cols, 1e-5f);
    nn_residual_layernorm_fwd(s_f, res, bias, s_f, g, b, y_f, xh_f, rs_f, rows, cols, 1e-5f);
    snprintf(name, sizeof(name), "res+bias+LN fwd %zux%zu", rows, cols);
    EXPECT(same(name, y_f, y_ref, n) && memcmp(s_f, s_ref, n * 4) == 0 &&
           memcmp(xh_f, xh_ref, n * 4) == 0 && memcmp(rs_f, rs_ref, rows * 4) == 0);
    /* layer norm backward + residual + gradients + the input bias's gradient */
    float *dx_ref = malloc(n * 4), *dg_ref = calloc(cols, 4), *db_ref = calloc(cols, 4), *dbb_ref = calloc(cols, 4);
    float *dx_f = malloc(n * 4), *dg_f = calloc(cols, 4), *db_f = calloc(cols, 4), *dbb_f = calloc(cols, 4);
    nn_layernorm_bwd(dy, xh_ref, rs_ref, g, dx_ref, dg_ref, db_ref, rows, cols);
    for (size_t i = 0; i < n; i++)
        dx_ref[i] = res[i] + dx_ref[i];
    nn_bias_bwd(dx_ref, dbb_ref, rows, cols);
    EXPECT(nn_layernorm_bwd_residual(dy, xh_ref, rs_ref, g, res, dx_f, dg_f, db_f, dbb_f, rows, cols) == 0);
    snprintf(name, sizeof(name), "LN bwd+res dx %zux%zu", rows, cols);
    EXPECT(same(name, dx_f, dx_ref, n));
    EXPECT(same("  dg", dg_f, dg_ref, cols) && same("  db", db_f, db_ref, cols) &&
           same("  d(input bias)", dbb_f, dbb_ref, cols));
    /* gradients only (the first block's din = NULL) */
    memset(dg_f, 0, cols * 4);
    EXPECT(nn_layernorm_bwd_residual(dy, xh_ref, rs_ref, g, NULL, NULL, dg_f, db_f, NULL, rows, cols) == 0);
    EXPECT(same("  dg, no dx", dg_f, dg_ref, cols));
    /* the other cases each take a loop of their own: residual only, bias
     * only, neither (LN1), and dx without a residual */
    for (int k = 0; k < 3; k++) {
        const float *rk = k == 1 ? NULL : res, *bk = k == 0 ? NULL : bias;
        for (size_t i = 0; i < n; i++)
            s_ref[i] = k == 2 ? x[i] : (rk ? rk[i] + x[i] : x[i]);
        if (bk && k != 2)
            nn_add_bias(s_ref, bk, rows, cols);
        nn_layernorm_fwd(s_ref, g, b, y_ref, xh_ref, rs_ref, rows, cols, 1e-5f);
        memcpy(s_f, x, n * 4);
        if (k == 2)
            nn_residual_layernorm_fwd(x, NULL, NULL, NULL, g, b, y_f, xh_f, rs_f, rows, cols, 1e-5f);
        else
            nn_residual_layernorm_fwd(x, rk, bk, s_f, g, b, y_f, xh_f, rs_f, rows, cols, 1e-5f);
        snprintf(name, sizeof(name), "%s LN fwd %zux%zu", k == 0 ? "res+" : k == 1 ? "bias+" : "plain",
                 rows, cols);
        EXPECT(same(name, y_f, y_ref, n) && memcmp(xh_f, xh_ref, n * 4) == 0 &&
               memcmp(rs_f, rs_ref, rows * 4) == 0 && (k == 2 || memcmp(s_f, s_ref, n * 4) == 0));
    }
    float *t_ref = calloc(4 * cols, 4), *t_f = calloc(4 * cols, 4); /* dg, db, d(input bias) and one spare */
    nn_layernorm_bwd(dy, xh_ref, rs_ref, g, dx_ref, t_ref, t_ref + cols, rows, cols);
    nn_bias_bwd(dx_ref, t_ref + 2 * cols, rows, cols);
    EXPECT(nn_layernorm_bwd_residual(dy, xh_ref, rs_ref, g, NULL, dx_f, t_f, t_f + cols, t_f + 2 * cols, rows,
                                     cols) == 0);
    snprintf(name, sizeof(name), "LN bwd dx, no res %zux%zu", rows, cols);
    EXPECT(same(name, dx_f, dx_ref, n) && same("  dg, db, d(input bias)", t_f, t_ref, 3 * cols));
    free(t_ref);
    free(t_f);
    /* a GEMM's C preloaded with residual + bias, or the bias alone */
    nn_bias_preload(s_f, res, bias, rows, cols);
    nn_bias_preload(y_f, NULL, bias, rows, cols);
    int pre_ok = 1;
    for (size_t i = 0; i < n; i++)
        pre_ok &= s_f[i] == res[i] + bias[i % cols] && y_f[i] == bias[i % cols];
    printf("bias preload %zux%zu: %s\n", rows, cols, pre_ok ? "exact" : "DIFFERS  FAIL");
    EXPECT(pre_ok);
    /* bias + GELU forward, GELU backward + bias gradient */
    float *h_ref = dup(x, n), *gl_ref = malloc(n * 4), *h_f = dup(x, n), *gl_f = malloc(n * 4);
    nn_add_bias(h_ref, bias, rows, cols);
    nn_gelu_fwd(h_ref, gl_ref, n);
    nn_bias_gelu_fwd(h_f, bias, gl_f, rows, cols);
    snprintf(name, sizeof(name), "bias+GELU fwd %zux%zu", rows, cols);
    EXPECT(same(name, gl_f, gl_ref, n) && memcmp(h_f, h_ref, n * 4) == 0);
    float *d_ref = malloc(n * 4), *d_f = dup(dy, n), *gb_ref = calloc(cols, 4), *gb_f = calloc(cols, 4);
    nn_gelu_bwd(h_ref, dy, d_ref, n);
    nn_bias_bwd(d_ref, gb_ref, rows, cols);
    EXPECT(nn_gelu_bias_bwd(h_ref, d_f, gb_f, rows, cols) == 0);
    snprintf(name, sizeof(name), "GELU+bias bwd %zux%zu", rows, cols);
    EXPECT(same(name, d_f, d_ref, n) && same("  dbias", gb_f, gb_ref, cols));
    float *cb_f = calloc(cols, 4);
    EXPECT(nn_bias_bwd_par(dy, cb_f, rows, cols) == 0);
    memset(gb_ref, 0, cols * 4);
    nn_bias_bwd(dy, gb_ref, rows, cols);
    EXPECT(same("bias bwd (chunked)", cb_f, gb_ref, cols));
    /* the check can fail: one corrupted gradient entry, and a NaN */
    cb_f[cols / 2] += 1.0f + fabsf(cb_f[cols / 2]);
    EXPECT(!(worst_ratio(cb_f, gb_ref, cols) <= 1.0));
    cb_f[cols / 2] = NAN;
    EXPECT(!(worst_ratio(cb_f, gb_ref, cols) <= 1.0));
    float *all[] = {x, res, bias, g, b, dy, s_ref, y_ref, xh_ref, rs_ref, s_f, y_f, xh_f, rs_f,
                    dx_ref, dg_ref, db_ref, dbb_ref, dx_f, dg_f, db_f, dbb_f, h_ref, gl_ref, h_f, gl_f,
                    d_ref, d_f, gb_ref, gb_f, cb_f};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}

/* The fused GELU forward and backward against ops.c's at the edges of
 * the tanh approximation: below its 4e-4 cut-off, around its +-7.9988
 * clamp, far beyond it; a NaN input gives NaN (not a clamped +-1). */
static void gelu_edges(void)
{
    static const float v[] = {0.0f, 1e-7f, -3e-5f, 3.9e-4f, -4.1e-4f, 0.01f, -0.5f, 1.0f, 2.5f,
                              -3.0f, 4.2f, -4.4f, 7.9f, -8.1f, 9.0f, -12.0f, 30.0f, -60.0f, 1e4f, -1e4f};
    enum { N = sizeof(v) / sizeof(v[0]) };
    float zero[N] = {0}, h[N], gl[N], ref[N], ones[N], d[N], dref[N], db[N] = {0};
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f;
    memcpy(h, v, sizeof(h));
    nn_bias_gelu_fwd(h, zero, gl, 1, N);
    nn_gelu_fwd(v, ref, N);
    EXPECT(same("GELU fwd, tanh edges", gl, ref, N));
    memcpy(d, ones, sizeof(d));
    EXPECT(nn_gelu_bias_bwd(v, d, db, 1, N) == 0);
    nn_gelu_bwd(v, ones, dref, N);
    EXPECT(same("GELU bwd, tanh edges", d, dref, N));
    float nan_in = NAN, nan_out = 0, nan_d = 1, nan_db = 0, z = 0;
    nn_bias_gelu_fwd(&nan_in, &z, &nan_out, 1, 1);
    EXPECT(nan_out != nan_out);
    EXPECT(nn_gelu_bias_bwd(&nan_in, &nan_d, &nan_db, 1, 1) == 0 && nan_d != nan_d);
}

/* Batched attention against the per-head one. The batched softmax
 * forward uses nn_exp_nonpos (within 1 ulp of e^x, exp_sweep) and sums
 * each row in SIMD-lane order: per probability a few ulp plus the
 * reordering bound 2 S u of a row sum (S <= 13 here: 1.6e-6), far below
 * TOL; the backward, given the same probabilities, is the same
 * arithmetic as the reference and must match bit for bit. */
static void attention(size_t B, size_t S, size_t A, size_t D, struct nn_rng *r)
{
    size_t H = A * D, M = B * S, SS = B * A * S * S;
    float *qkv = rnd(M * 3 * H, r, 1), *dout = rnd(M * H, r, 1);
    float *p_ref = malloc(SS * 4), *o_ref = malloc(M * H * 4), *p_f = malloc(SS * 4), *o_f = malloc(M * H * 4);
    float *dq_ref = malloc(M * 3 * H * 4), *dq_f = malloc(M * 3 * H * 4);
    float *scr = malloc(A * S * S * 4);
    char name[64];
    EXPECT(nn_attn_fwd(NN_HOST, qkv, p_ref, o_ref, B, S, A, D) == 0);
    EXPECT(nn_attn_fwd_batched(qkv, p_f, o_f, B, S, A, D) == 0);
    EXPECT(nn_attn_bwd(NN_HOST, qkv, p_ref, dout, dq_ref, scr, B, S, A, D) == 0);
    EXPECT(nn_attn_bwd_batched(qkv, p_ref, dout, dq_f, scr, B, S, A, D) == 0);
    snprintf(name, sizeof(name), "attention b%zu s%zu a%zu d%zu probs", B, S, A, D);
    EXPECT(same(name, p_f, p_ref, SS) && same("  out", o_f, o_ref, M * H));
    int ok = memcmp(dq_f, dq_ref, M * 3 * H * 4) == 0;
    printf("  backward: %s\n", ok ? "bit-identical" : "DIFFERS  FAIL");
    EXPECT(ok);
    /* the heads path (nn_gemm's split mode) over one OpenMP thread and
     * over three, OpenBLAS at one thread meanwhile: the same bits (the
     * heads' GEMMs are the same single-threaded calls), within the
     * tolerance of the reference, and OpenBLAS's thread count is back
     * afterwards */
    float *p_1 = malloc(SS * 4), *o_1 = malloc(M * H * 4), *dq_1 = malloc(M * 3 * H * 4);
    int nt = omp_get_max_threads(), nb = openblas_get_num_threads();
    int was = nn_gemm_set_split(1); /* the heads path is the split's */
    omp_set_num_threads(1);
    EXPECT(nn_attn_fwd_batched(qkv, p_1, o_1, B, S, A, D) == 0);
    EXPECT(nn_attn_bwd_batched(qkv, p_1, dout, dq_1, scr, B, S, A, D) == 0);
    omp_set_num_threads(3);
    EXPECT(nn_attn_fwd_batched(qkv, p_f, o_f, B, S, A, D) == 0);
    EXPECT(nn_attn_bwd_batched(qkv, p_f, dout, dq_f, scr, B, S, A, D) == 0);
    omp_set_num_threads(nt);
    nn_gemm_set_split(was);
    ok = memcmp(p_1, p_f, SS * 4) == 0 && memcmp(o_1, o_f, M * H * 4) == 0 &&
         memcmp(dq_1, dq_f, M * 3 * H * 4) == 0;
    printf("  1 vs 3 threads (heads over threads): %s\n", ok ? "bit-identical" : "DIFFER  FAIL");
    EXPECT(ok);
    EXPECT(same("  heads path probs", p_f, p_ref, SS) && same("  heads path out", o_f, o_ref, M * H));
    EXPECT(openblas_get_num_threads() == nb);
    free(p_1); free(o_1); free(dq_1);
    free(qkv); free(dout); free(p_ref); free(o_ref); free(p_f); free(o_f); free(dq_ref); free(dq_f); free(scr);
}

/* nn_exp_nonpos against e^x in double over [-87.3, 0] (steps of 1e-4 +
 * 1e-5 |x|, 228K points): at most 2 ulp of the exact value's binade;
 * below the range it gives e^-87.3 (tiny, positive), and NaN stays NaN. */
static void exp_sweep(void)
{
    double worst = 0;
    for (float x = 0; x >= -87.3f; x = x - 1e-4f - (-x) * 1e-5f) {
        double ref = exp((double)x), e = nn_exp_nonpos(x);
        double err = fabs(e - ref) / ldexp(1.0, ilogb(ref) - 23);
        worst = err > worst ? err : worst;
    }
    printf("exp_nonpos vs exp: worst %.3f ulp\n", worst);
    EXPECT(worst <= 2.0);
    float tiny = nn_exp_nonpos(-1e4f), nan = nn_exp_nonpos(NAN);
    EXPECT(tiny >= 0 && tiny < 1.3e-38f && nan != nan && nn_exp_nonpos(0) == 1.0f);
    /* a NaN score makes its softmax row NaN, as in the reference */
    float row[4] = {0.5f, NAN, -1.0f, 2.0f};
    nn_softmax_causal_row_simd(row, 3, 4);
    EXPECT(row[0] != row[0]);
}

struct pass {
    float *y, *dx, *g;
};

/* One forward + backward of block 1 of cfg at batch B; fused or not. */
static struct pass run_block(const struct nn_gpt_config *cfg, int B, int fused, const float *x,
                             const float *dout, int with_din)
{
    struct nn_precision f32 = {NN_F32, NN_F32, NN_F32};
    size_t n = (size_t)B * (size_t)cfg->seq * (size_t)cfg->hidden;
    struct nn_workspace *ws = nn_workspace_new(cfg, B);
    struct nn_layer *l = nn_layer_new(cfg, B, f32, 1, 11, ws);
    struct pass p = {malloc(n * 4), with_din ? malloc(n * 4) : NULL, NULL};
    EXPECT(l != NULL);
    struct nn_tensor *P = nn_layer_params(l), *G = nn_layer_grads(l);
    struct nn_rng r;
    nn_rng_seed(&r, 5);
    float *pp = P->data; /* away from LN 1/0 and zero biases: every term exercised */
    for (size_t i = 0; i < P->numel; i++)
        pp[i] += (float)(0.3 * nn_rng_normal(&r));
    nn_layer_set_fused(l, fused);
    nn_layer_zero_grad(l);
    EXPECT(nn_layer_forward(l, x, p.y) == 0);
    EXPECT(nn_layer_backward(l, dout, p.dx) == 0);
    p.g = dup(G->data, G->numel);
    nn_layer_free(l);
    nn_workspace_free(ws);
    return p;
}

static void pass_free(struct pass *p) { free(p->y); free(p->dx); free(p->g); }

static void block(const char *name, int heads, int hidden, int seq, int ffn, int B, struct nn_rng *r)
{
    struct nn_gpt_config cfg = {"", 1, heads, hidden, seq, 11, ffn};
    snprintf(cfg.name, sizeof(cfg.name), "%s", name);
    size_t n = (size_t)B * (size_t)seq * (size_t)hidden, H = (size_t)hidden, F = (size_t)ffn;
    float *x = rnd(n, r, 1), *dout = rnd(n, r, 1);
    struct pass ref = run_block(&cfg, B, 0, x, dout, 1), f = run_block(&cfg, B, 1, x, dout, 1);
    char what[96];
    printf("block %s: b%d s%d h%d a%d ffn %d\n", name, B, seq, hidden, heads, ffn);
    EXPECT(same("  y", f.y, ref.y, n));
    EXPECT(same("  dx", f.dx, ref.dx, n));
    static const char *const names[] = {"ln1.g", "ln1.b", "Wqkv", "bqkv", "Wo", "bo",
                                        "ln2.g", "ln2.b", "W1",   "b1",   "W2", "b2"};
    size_t sz[12] = {H, H, 3 * H * H, 3 * H, H * H, H, H, H, H * F, F, F * H, H};
    for (size_t i = 0, o = 0; i < 12; o += sz[i], i++) {
        snprintf(what, sizeof(what), "  d%s", names[i]);
        EXPECT(same(what, f.g + o, ref.g + o, sz[i]));
    }
    /* determinism: 1 thread and 3 threads give the same bits (the
     * column sums go by chunks fixed by the shape) */
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    struct pass one = run_block(&cfg, B, 1, x, dout, 1);
    omp_set_num_threads(3);
    struct pass three = run_block(&cfg, B, 1, x, dout, 1);
    omp_set_num_threads(nt);
    size_t np = 2 * H + 3 * H * H + 3 * H + H * H + H + 2 * H + H * F + F + F * H + H;
    int det = memcmp(one.y, three.y, n * 4) == 0 && memcmp(one.dx, three.dx, n * 4) == 0 &&
              memcmp(one.g, three.g, np * 4) == 0;
    printf("  1 vs 3 threads: %s\n", det ? "bit-identical" : "DIFFER  FAIL");
    EXPECT(det);
    /* the first block's backward without din: the same parameter gradients */
    struct pass nodin = run_block(&cfg, B, 1, x, dout, 0);
    EXPECT(memcmp(nodin.g, f.g, np * 4) == 0);
    pass_free(&ref); pass_free(&f); pass_free(&one); pass_free(&three); pass_free(&nodin);
    free(x); free(dout);
}

int main(void)
{
    /* every fused sweep takes its parallel path, however small */
    setenv("NN_PAR_ELEMS", "1", 1);
    struct nn_rng r;
    nn_rng_seed(&r, 21);
    kernels(13, 40, &r);
    kernels(1, 7, &r);
    kernels(111, 96, &r); /* more rows than chunks x CHUNK_MIN: uneven last chunk */
    kernels(600, 33, &r); /* 64 chunks of 10 rows, last one 30 */
    gelu_edges();
    /* the GELU kernels of every instruction set this CPU has (gelu_simd.c
     * picks the widest): each against the reference, at the edges and at
     * widths that leave a vector tail (33, 40, 96 columns) */
    EXPECT(nn_gelu_isa_set("sse2") == 0);
    EXPECT(nn_gelu_isa_set("mmx") == -1);
    static const char *const isas[] = {"sse2", "avx2", "avx512"};
    for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
        if (nn_gelu_isa_set(isas[i]) != 0) {
            printf("GELU kernels %s: not on this CPU, not tested\n", isas[i]);
            continue;
        }
        printf("GELU kernels %s:\n", nn_gelu_isa());
        EXPECT(strcmp(nn_gelu_isa(), isas[i]) == 0);
        kernels(13, 40, &r);
        kernels(111, 96, &r);
        kernels(600, 33, &r);
        gelu_edges();
    }
    EXPECT(nn_gelu_isa_set(NULL) == 0);
    exp_sweep();
    attention(2, 13, 1, 40, &r);
    attention(3, 7, 3, 8, &r);
    attention(2, 37, 5, 16, &r);
    block("one-head", 1, 40, 13, 160, 3, &r);
    block("three-heads", 3, 72, 7, 100, 2, &r);
    block("s37", 2, 96, 37, 384, 3, &r);
    return TEST_EXIT();
}
