/* nn/ ops: finite-difference gradient checks for every op (layer norm,
 * GELU, ReLU, bias, softmax cross-entropy, log-softmax NLL, causal
 * attention, GEMM), the causal mask, dtype conversions (the array ones
 * against the scalar ones, bit for bit), and that a wrong
 * gradient is caught by the checker; the parallel normal draw against
 * the serial one. */
#include "check.h"
#include "nn_gradcheck.h"
#include "../../common/common.h"

#include <stdlib.h>
#include <string.h>

enum opk { LN, GELU, RELU, BIAS, XENT, NLL, ATTN, GEMM };

struct ctx {
    enum opk op;
    size_t rows, cols;
    float *x, *g, *b, *y, *R, *tmp, *tmp2;
    int32_t *tg;
    size_t B, S, A, D;
};

static double run(void *p)
{
    struct ctx *c = p;
    size_t n = c->rows * c->cols, cnt;
    switch (c->op) {
    case LN:
        nn_layernorm_fwd(c->x, c->g, c->b, c->y, NULL, NULL, c->rows, c->cols, 1e-5f);
        return gc_dot(c->y, c->R, n);
    case GELU: nn_gelu_fwd(c->x, c->y, n); return gc_dot(c->y, c->R, n);
    case RELU: nn_relu_fwd(c->x, c->y, n); return gc_dot(c->y, c->R, n);
    case BIAS:
        memcpy(c->y, c->x, n * sizeof(float));
        nn_add_bias(c->y, c->b, c->rows, c->cols);
        return gc_dot(c->y, c->R, n);
    case XENT: return nn_softmax_xent_fwd(c->x, c->tg, c->y, c->rows, c->cols, &cnt);
    case NLL: return nn_logsoftmax_nll_fwd(c->x, c->tg, c->y, c->rows, c->cols, &cnt);
    case ATTN:
        nn_attn_fwd(NN_HOST, c->x, c->tmp, c->y, c->B, c->S, c->A, c->D);
        return gc_dot(c->y, c->R, c->B * c->S * c->A * c->D);
    case GEMM: /* y = x g, x [rows, cols], g [cols, 5] */
        nn_gemm(NN_HOST, 0, 0, (int)c->rows, 5, (int)c->cols, 1.0f, c->x, (int)c->cols, c->g, 5,
                0.0f, c->y, 5);
        return gc_dot(c->y, c->R, c->rows * 5);
    }
    return 0;
}

int main(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 42);
    struct ctx c = {0};
    c.rows = 6;
    c.cols = 10;
    size_t n = 60, big = 4096;
    c.x = malloc(big * 4); c.g = malloc(big * 4); c.b = malloc(big * 4); c.y = malloc(big * 4);
    c.R = malloc(big * 4); c.tmp = malloc(big * 4); c.tmp2 = malloc(big * 4);
    float *dx = malloc(big * 4), *dg = calloc(big, 4), *db = calloc(big, 4);
    float *xhat = malloc(big * 4), *rstd = malloc(big * 4);
    c.tg = malloc(64 * sizeof(int32_t));
    for (int i = 0; i < 6; i++)
        c.tg[i] = i == 2 ? -1 : (i * 7) % 10;
    gc_fill(c.x, big, 1.0, &r);
    gc_fill(c.g, big, 1.0, &r);
    gc_fill(c.b, big, 1.0, &r);
    gc_fill(c.R, big, 1.0, &r);

    /* layer norm: x, g, b */
    c.op = LN;
    nn_layernorm_fwd(c.x, c.g, c.b, c.y, xhat, rstd, c.rows, c.cols, 1e-5f);
    nn_layernorm_bwd(c.R, xhat, rstd, c.g, dx, dg, db, c.rows, c.cols);
    EXPECT(gc_check("layernorm dx", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    EXPECT(gc_check("layernorm dg", run, &c, c.g, dg, c.cols, c.cols, 1e-2, &r) == 0);
    EXPECT(gc_check("layernorm db", run, &c, c.b, db, c.cols, c.cols, 1e-2, &r) == 0);
    /* the checker catches a wrong gradient */
    dx[7] += 0.5f;
    EXPECT(gc_check("layernorm dx (corrupted)", run, &c, c.x, dx, n, n, 1e-2, &r) == 1);

    c.op = GELU;
    nn_gelu_bwd(c.x, c.R, dx, n);
    EXPECT(gc_check("gelu", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    c.op = RELU; /* away from the kink */
    for (size_t i = 0; i < n; i++)
        if (fabsf(c.x[i]) < 0.05f)
            c.x[i] = 0.3f;
    nn_relu_fwd(c.x, c.y, n);
    nn_relu_bwd(c.y, c.R, dx, n);
    EXPECT(gc_check("relu", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    c.op = BIAS;
    memset(db, 0, c.cols * 4);
    nn_bias_bwd(c.R, db, c.rows, c.cols);
    EXPECT(gc_check("bias", run, &c, c.b, db, c.cols, c.cols, 1e-2, &r) == 0);

    c.op = XENT;
    run(&c);
    nn_softmax_xent_bwd(c.y, c.tg, dx, c.rows, c.cols, 1.0f);
    EXPECT(gc_check("softmax-xent", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    for (size_t j = 0; j < c.cols; j++) /* ignored row: no gradient */
        EXPECT(dx[2 * c.cols + j] == 0);
    c.op = NLL;
    run(&c);
    nn_logsoftmax_nll_bwd(c.y, c.tg, dx, c.rows, c.cols, 1.0f);
    EXPECT(gc_check("logsoftmax-nll", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);

    c.op = GEMM;
    float *dW = calloc(big, 4);
    run(&c);
    nn_gemm(NN_HOST, 1, 0, (int)c.cols, 5, (int)c.rows, 1.0f, c.x, (int)c.cols, c.R, 5, 0.0f, dW, 5);
    nn_gemm(NN_HOST, 0, 1, (int)c.rows, (int)c.cols, 5, 1.0f, c.R, 5, c.g, 5, 0.0f, dx, (int)c.cols);
    EXPECT(gc_check("gemm dA", run, &c, c.x, dx, n, n, 1e-2, &r) == 0);
    EXPECT(gc_check("gemm dB", run, &c, c.g, dW, c.cols * 5, c.cols * 5, 1e-2, &r) == 0);

    /* attention: B=2, S=5, A=2, D=3 on qkv [10, 18] */
    c.op = ATTN;
    c.B = 2; c.S = 5; c.A = 2; c.D = 3;
    size_t nq = c.B * c.S * 3 * c.A * c.D;
    run(&c);
    nn_attn_bwd(NN_HOST, c.x, c.tmp, c.R, dx, c.tmp2, c.B, c.S, c.A, c.D);
    EXPECT(gc_check("attention dqkv", run, &c, c.x, dx, nq, nq, 1e-2, &r) == 0);
    /* causality: the output at position 0 ignores later positions' k, v */
    float *y0 = malloc(big * 4);
    run(&c);
    memcpy(y0, c.y, c.B * c.S * c.A * c.D * 4);
    for (size_t col = 6; col < 18; col++)
        c.x[4 * 18 + col] += 1.0f; /* k and v of position 4, batch 0 */
    run(&c);
    for (size_t s = 0; s < 4; s++)
        for (size_t j = 0; j < 6; j++)
            EXPECT(c.y[s * 6 + j] == y0[s * 6 + j]);
    int changed = 0;
    for (size_t j = 0; j < 6; j++)
        changed |= c.y[4 * 6 + j] != y0[4 * 6 + j];
    EXPECT(changed);
    /* probabilities: rows sum to 1, masked entries 0 */
    for (size_t i = 0; i < c.S; i++) {
        double s = 0;
        for (size_t j = 0; j < c.S; j++) {
            s += c.tmp[i * c.S + j];
            if (j > i)
                EXPECT(c.tmp[i * c.S + j] == 0);
        }
        EXPECT_NEAR(s, 1.0, 1e-6);
    }

    /* conversions: exact values and rounding */
    EXPECT(nn_f32_to_f16(1.0f) == 0x3c00);
    EXPECT(nn_f32_to_f16(-2.0f) == 0xc000);
    EXPECT(nn_f32_to_f16(65504.0f) == 0x7bff);
    EXPECT(nn_f32_to_f16(1e6f) == 0x7c00);
    EXPECT(nn_f32_to_f16(5.9604645e-8f) == 0x0001);
    EXPECT(nn_f16_to_f32(0x3555) == 0.333251953125f);
    EXPECT(nn_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00);  /* tie to even */
    EXPECT(nn_f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02);
    EXPECT(nn_f32_to_bf16(1.0f) == 0x3f80);
    EXPECT(nn_bf16_to_f32(0x4049) == 3.140625f);
    EXPECT(nn_f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80); /* tie to even */
    for (int i = 0; i < 1000; i++) {
        float v = (float)(nn_rng_normal(&r) * 100);
        EXPECT(fabsf(nn_f16_to_f32(nn_f32_to_f16(v)) - v) <= fabsf(v) * (1.0f / 2048) + 1e-7f);
        EXPECT(fabsf(nn_bf16_to_f32(nn_f32_to_bf16(v)) - v) <= fabsf(v) * (1.0f / 256));
    }
    /* the array conversions (F16C where the CPU has it, 8 at a time, over
     * the threads) equal the scalar ones bit for bit: every half loaded;
     * stored, 2^20 seeded float bit patterns (NaNs, infinities, subnormals,
     * ties among them) and the edges; accumulated, seeded pairs; lengths
     * that leave tails of a block and of 8 */
    {
        size_t nh = 65536 + 5, nf = (1u << 20) + 3;
        uint16_t *h = malloc(nf * 2), *hs = malloc(nf * 2);
        float *f = malloc(nf * 4), *g = malloc(nf * 4);
        for (size_t i = 0; i < nh; i++)
            h[i] = (uint16_t)i;
        nn_load_f32(f, h, NN_F16, nh);
        size_t bad = 0;
        for (size_t i = 0; i < nh; i++) {
            float w = nn_f16_to_f32(h[i]);
            bad += memcmp(&w, &f[i], 4) != 0;
        }
        EXPECT(bad == 0);
        uint64_t st = 77;
        const uint32_t edges[] = {0x477fefffu, 0x477ff000u, 0x47800000u, 0x38800000u, 0x387fffffu, 0x33000000u,
                                  0x33000001u, 0x7f800000u, 0x7f800001u, 0x7fc00000u, 0xffffffffu, 0x80000000u};
        for (size_t i = 0; i < nf; i++) {
            uint32_t u = i < 12 ? edges[i] : (uint32_t)mb_splitmix64(&st);
            memcpy(&f[i], &u, 4);
            g[i] = (float)(nn_rng_normal(&r) * 8);
        }
        nn_store_f32(h, NN_F16, f, nf);
        bad = 0;
        for (size_t i = 0; i < nf; i++)
            bad += nn_f32_to_f16(f[i]) != h[i];
        EXPECT(bad == 0);
        for (size_t i = 0; i < nf; i++) /* finite halves to add to */
            hs[i] = h[i] = nn_f32_to_f16((float)(nn_rng_normal(&r) * 8));
        nn_accum_f32(h, NN_F16, g, nf);
        bad = 0;
        for (size_t i = 0; i < nf; i++)
            bad += nn_f32_to_f16(nn_f16_to_f32(hs[i]) + g[i]) != h[i];
        EXPECT(bad == 0);
        free(h);
        free(hs);
        free(f);
        free(g);
    }
    /* the parallel draw is the serial stream value for value, across its
     * chunks (65536) and from a stream already advanced */
    {
        size_t nn = 150001;
        float *one = malloc(nn * 4), *par = malloc(nn * 4);
        struct nn_rng a, b;
        nn_rng_seed(&a, 7);
        nn_rng_next(&a);
        b = a;
        for (size_t i = 0; i < nn; i++)
            one[i] = (float)(0.02 * nn_rng_normal(&a));
        nn_normal_f32(par, nn, 0.02, &b);
        EXPECT(memcmp(one, par, nn * 4) == 0);
        EXPECT(nn_rng_next(&a) == nn_rng_next(&b)); /* both streams left at the same place */
        free(one);
        free(par);
    }
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half round-trips */
        if (nn_f32_to_f16(nn_f16_to_f32((uint16_t)h)) != h) {
            EXPECT(!"half round trip");
            break;
        }
    return TEST_EXIT();
}
