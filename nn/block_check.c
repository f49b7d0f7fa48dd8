/* An independent check of one decoder block's fp32 forward and backward:
 * the same pass in double precision, written out op by op with BLAS in
 * double for the products (it shares no code with block.c or
 * block_fused.c), every element of y, dx and each parameter gradient
 * compared. mb-nn checks every block iteration with it. */
#include "nn.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const param_names[12] = {"ln1.g", "ln1.b", "Wqkv", "bqkv", "Wo", "bo",
                                            "ln2.g", "ln2.b", "W1",   "b1",   "W2", "b2"};

const char *nn_block_param_name(int i) { return i >= 0 && i < 12 ? param_names[i] : "?"; }

void nn_block_param_sizes(size_t H, size_t F, size_t n[12])
{
    size_t v[12] = {H, H, 3 * H * H, 3 * H, H * H, H, H, H, H * F, F, F * H, H};
    memcpy(n, v, sizeof(v));
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

static struct bref *bref_new(const struct nn_gpt_config *cfg, size_t B, size_t np)
{
    struct bref *R = calloc(1, sizeof(*R));
    if (!R)
        return NULL;
    R->B = B; R->S = (size_t)cfg->seq; R->H = (size_t)cfg->hidden; R->F = (size_t)cfg->ffn;
    R->A = (size_t)cfg->heads; R->D = R->H / R->A; R->M = R->B * R->S; R->np = np;
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
    nn_block_param_sizes(H, F, n);
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

struct nn_block_ref {
    struct nn_gpt_config cfg;
    int B;
    struct bref *R;    /* allocated by the first check */
};

struct nn_block_ref *nn_block_ref_new(const struct nn_gpt_config *cfg, int B)
{
    struct nn_block_ref *r = calloc(1, sizeof(*r));
    if (r) {
        r->cfg = *cfg;
        r->B = B;
    }
    return r;
}

void nn_block_ref_free(struct nn_block_ref *r)
{
    if (r)
        bref_free(r->R);
    free(r);
}

double nn_block_ref_bytes(const struct nn_gpt_config *c, int B)
{
    double M = (double)B * c->seq, H = c->hidden, F = c->ffn;
    return 8.0 * (2 * 12.0 * H * H + M * (19.0 * H + 3.0 * F) + (double)B * c->heads * c->seq * c->seq);
}

int nn_block_ref_check(struct nn_block_ref *r, struct nn_layer *l, const float *x, const float *dout,
                       const float *y, const float *dx, char *msg, size_t len)
{
    struct nn_tensor *pt = nn_layer_params(l), *gt = nn_layer_grads(l);
    if (pt->dtype != NN_F32 || gt->dtype != NN_F32) {
        snprintf(msg, len, "block: the reference checks fp32 layers only");
        return 1;
    }
    if (!r->R && !(r->R = bref_new(&r->cfg, (size_t)r->B, pt->numel))) {
        snprintf(msg, len, "block: out of memory for the reference");
        return 1;
    }
    struct bref *R = r->R;
    size_t MH = R->M * R->H, S = R->S, H = R->H;
    const float *P = pt->data, *Gf = gt->data;
    for (size_t i = 0; i < R->np; i++) R->W[i] = P[i];
    for (size_t i = 0; i < MH; i++) {
        R->x[i] = x[i];
        R->dout[i] = dout[i];
    }
    bref_run(R);
    const char *names[2] = {"y", "dx"};
    const float *got[2] = {y, dx};
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
    nn_block_param_sizes((size_t)r->cfg.hidden, (size_t)r->cfg.ffn, n);
    for (size_t p = 0, o = 0; p < 12 && !rc; o += n[p], p++) {
        size_t i = compare(Gf + o, R->G + o, n[p]);
        if (i < n[p]) {
            snprintf(msg, len, "block grads[%zu] (d%s[%zu]) = %.7g, reference %.7g", o + i,
                     nn_block_param_name((int)p), i, Gf[o + i], R->G[o + i]);
            rc = 1;
        }
    }
    return rc;
}

