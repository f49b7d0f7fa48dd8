/* DisDP's protocol (zero/disdp_*.c) on a fake layer stack: every worker's
 * gradient is a deterministic function of the parameters it pulled, so the
 * PS's final fp32 parameters equal a serial Adam over the same pushes only
 * if every pull, push, sum and update was right; they must be bit-identical
 * (fixed point sums exactly; fp32 sums in worker order here as in the
 * switch). Also: payload bytes per worker are exactly S sent (4-byte
 * gradients) and 2S received (16-bit parameters, pulled twice).
 *   test_disdp                 singleton: fixed point, checksums, layout
 *   mpirun -np W+K+N test_disdp W K N fixed|fp32 [link_gbps [f32|bf16|f16 [micro]]]
 * MB_FAULT_INJECT=corrupt-grad|corrupt-state|write-error must end it with
 * exit 1 and a message (tests/integration/zero_disdp.sh). */
#include "../../zero/disdp_internal.h"
#include "../../common/common.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NL 5
static const uint64_t numel[NL] = {1000, 5000, 3, 4097, 2500};
static const int steps_ = 3;

static float init_param(int l, uint64_t i)
{
    return (float)((int)(mb_mix64(((uint64_t)l << 40) ^ i ^ 0x1234) % 2001) - 1000) * 1e-3f;
}

static void init_cb(void *ctx, int l, float *p, uint64_t n)
{
    (void)ctx;
    for (uint64_t i = 0; i < n; i++)
        p[i] = init_param(l, i);
}

/* micro-batch m of worker w's gradient at step s from the parameters it pulled */
static void grad_of(int w, int m, int s, int l, const void *pw, enum nn_dtype wire, float *g, uint64_t n)
{
    nn_load_f32(g, pw, wire, n);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = mb_mix64(((uint64_t)l << 48) ^ ((uint64_t)s << 40) ^ ((uint64_t)w << 32) ^ ((uint64_t)m << 28) ^ i);
        g[i] = 0.5f * g[i] + (float)((int)(h % 2001) - 1000) * 1e-4f * (float)(w + 1);
    }
}

/* What worker w pushes for layer l at step s: its micro-batches'
 * gradients summed, in fixed point (q, each micro-batch quantized, as a
 * ZeRO worker accumulates) or fp32 (sum); g is scratch. */
static void worker_grad(const struct mb_disdp_cfg *c, int w, int s, int l, const void *pw, float *sum, int32_t *q,
                        float *g, uint64_t n)
{
    char err[256];
    int32_t *qm = malloc(n * 4 + 4);
    memset(q, 0, n * 4);
    for (int m = 0; m < mb_disdp_micro(c); m++) {
        grad_of(w, m, s, l, pw, c->wire, g, n);
        if (c->agg == MB_DISDP_AGG_FIXED) {
            if (mb_disdp_quantize(g, n, MB_DISDP_FIXED_BITS, c->W * mb_disdp_micro(c), qm, err, sizeof err) != 0) {
                fprintf(stderr, "test_disdp: %s\n", err);
                abort();
            }
            for (uint64_t i = 0; i < n; i++)
                q[i] += qm[i];
        } else {
            for (uint64_t i = 0; i < n; i++)
                sum[i] = m ? sum[i] + g[i] : g[i];
        }
    }
    free(qm);
}

struct ref_ctx {
    struct mb_disdp_cfg *c;
    struct nn_adam hp;
    int mismatches;
};

/* The serial reference of one layer: every worker's gradient from the same
 * parameters, summed in worker order, the same Adam. */
static void final_cb(void *ctx, int l, const float *got, uint64_t n)
{
    struct ref_ctx *r = ctx;
    struct mb_disdp_cfg *c = r->c;
    float *p = malloc(n * 4), *m = calloc(n, 4), *v = calloc(n, 4), *sum = malloc(n * 4), *g = malloc(n * 4);
    float *wsum = malloc(n * 4);
    void *pw = malloc(n * 4);
    int32_t *q = malloc(n * 4), *qs = calloc(n, 4);
    int micro = mb_disdp_micro(c);
    init_cb(NULL, l, p, n);
    nn_store_f32(pw, c->wire, p, n);
    for (int s = 0; s < c->steps; s++) {
        memset(qs, 0, n * 4);
        for (int w = 0; w < c->W; w++) {
            worker_grad(c, w, s, l, pw, wsum, q, g, n);
            if (c->agg == MB_DISDP_AGG_FIXED) {
                for (uint64_t i = 0; i < n; i++)
                    qs[i] += q[i];
            } else {
                for (uint64_t i = 0; i < n; i++)
                    sum[i] = w ? sum[i] + wsum[i] : wsum[i];
            }
        }
        (void)micro;
        if (c->agg == MB_DISDP_AGG_FIXED)
            mb_disdp_dequantize(qs, n, mb_disdp_grad_scale(c), sum);
        int work = c->wire != NN_F32;
        nn_adam_step(&r->hp, s + 1, n, p, m, v, sum, NN_F32,
                     c->agg == MB_DISDP_AGG_FIXED ? 1.0f : (float)mb_disdp_grad_scale(c), work ? pw : NULL,
                     work ? c->wire : NN_F32);
        if (!work)
            memcpy(pw, p, n * 4);
    }
    for (uint64_t i = 0; i < n; i++)
        if (memcmp(&p[i], &got[i], 4) != 0) {
            if (r->mismatches++ < 3)
                fprintf(stderr, "layer %d element %llu: PS has %.9g, serial Adam %.9g\n", l, (unsigned long long)i,
                        (double)got[i], (double)p[i]);
        }
    free(p), free(m), free(v), free(g), free(sum), free(wsum), free(pw), free(q), free(qs);
}

static int run_worker(struct mb_disdp_cfg *c, double gbps, int rank)
{
    char err[512];
    struct mb_disdp_agent_opts ao = {.link_gbps = gbps, .cpu = -1};
    struct mb_disdp_agent *a = mb_disdp_agent_start(c, &ao, err, sizeof err);
    if (!a) {
        fprintf(stderr, "test_disdp: rank %d: %s\n", rank, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t ws = nn_dtype_size(c->wire);
    char *fw[NL], *bw[NL];
    float *g[NL], *scratch[NL];
    int32_t *q[NL];
    for (int l = 0; l < NL; l++) {
        fw[l] = malloc(numel[l] * ws);
        bw[l] = malloc(numel[l] * ws);
        g[l] = malloc(numel[l] * 4);
        scratch[l] = malloc(numel[l] * 4);
        q[l] = malloc(numel[l] * 4);
    }
    int bad = 0, micro = mb_disdp_micro(c);
    for (int s = 0; s < c->steps; s++) {
        struct mb_disdp_op *push[NL];
        for (int m = 0; m < micro; m++) {
            struct mb_disdp_op *pull = mb_disdp_pull(a, 0, MB_DISDP_FWD, fw[0]);
            for (int l = 0; l < NL; l++) { /* the next layer's pull flies while this one "computes" */
                struct mb_disdp_op *next = l + 1 < NL ? mb_disdp_pull(a, l + 1, MB_DISDP_FWD, fw[l + 1]) : NULL;
                if (mb_disdp_wait(a, pull, err, sizeof err) != 0)
                    goto fail;
                pull = next;
            }
            pull = mb_disdp_pull(a, NL - 1, MB_DISDP_BWD, bw[NL - 1]);
            for (int l = NL - 1; l >= 0; l--) {
                struct mb_disdp_op *next = l > 0 ? mb_disdp_pull(a, l - 1, MB_DISDP_BWD, bw[l - 1]) : NULL;
                if (mb_disdp_wait(a, pull, err, sizeof err) != 0)
                    goto fail;
                pull = next;
                if (memcmp(fw[l], bw[l], numel[l] * ws) != 0 && bad++ < 3)
                    fprintf(stderr, "rank %d step %d layer %d: backward pulled other parameters than forward\n", rank,
                            s, l);
                if (m == micro - 1) { /* all micro-batches pulled the same parameters: the sum at once */
                    worker_grad(c, rank, s, l, bw[l], g[l], q[l], scratch[l], numel[l]);
                    push[l] = mb_disdp_push(a, l, c->agg == MB_DISDP_AGG_FIXED ? (void *)q[l] : (void *)g[l]);
                }
            }
        }
        for (int l = 0; l < NL; l++)
            if (mb_disdp_wait(a, push[l], err, sizeof err) != 0)
                goto fail;
    }
    struct mb_disdp_stats st;
    if (mb_disdp_agent_stop(a, &st, err, sizeof err) != 0)
        goto fail_stopped;
    uint64_t P = 0;
    for (int l = 0; l < NL; l++)
        P += numel[l];
    /* S: the model's bytes per step, 4-byte gradients out, parameters in as the wire carries them */
    uint64_t S_grad = (uint64_t)c->steps * P * 4, S_param = (uint64_t)c->steps * P * ws;
    printf("worker %d: sent %llu bytes (S = %llu), received %llu (%dS = %llu), %llu pulls, %llu pushes, agent %.3f CPU s\n",
           rank, (unsigned long long)st.sent_bytes, (unsigned long long)S_grad, (unsigned long long)st.recv_bytes,
           2 * micro, (unsigned long long)(2 * (uint64_t)micro * S_param), (unsigned long long)st.pulls,
           (unsigned long long)st.pushes, st.agent_cpu_s);
    EXPECT(st.sent_bytes == S_grad);
    EXPECT(st.recv_bytes == 2 * (uint64_t)micro * S_param);
    EXPECT(st.pulls == (uint64_t)(2 * micro * NL * c->steps));
    EXPECT(st.pushes == (uint64_t)(NL * c->steps));
    EXPECT(bad == 0);
    for (int l = 0; l < NL; l++)
        free(fw[l]), free(bw[l]), free(g[l]), free(scratch[l]), free(q[l]);
    return 0;
fail:
    mb_disdp_agent_stop(a, NULL, err + 256, 256);
fail_stopped:
    fprintf(stderr, "test_disdp: rank %d (worker): %s\n", rank, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

static void singleton(void)
{
    char err[256];
    float g[5] = {0.5f, -0.25f, 1e-7f, -3.0f, 0.0f}, back[5];
    int32_t q[5];
    EXPECT(mb_disdp_quantize(g, 5, 20, 2, q, err, sizeof err) == 0);
    EXPECT(q[0] == 1 << 19 && q[1] == -(1 << 18) && q[2] == 0 && q[3] == -3 * (1 << 20));
    for (int i = 0; i < 5; i++)
        q[i] *= 2; /* two workers, the same gradient: the mean is it again (quantized) */
    mb_disdp_dequantize(q, 5, ldexp(0.5, -20), back);
    EXPECT(back[0] == 0.5f && back[1] == -0.25f && back[2] == 0.0f && back[3] == -3.0f);
    float big = 2000.0f, nan = NAN;
    EXPECT(mb_disdp_quantize(&big, 1, 20, 2, q, err, sizeof err) != 0 && strstr(err, "does not fit"));
    EXPECT(mb_disdp_quantize(&nan, 1, 20, 2, q, err, sizeof err) != 0);
    /* the checksum: exact for fixed, a flipped bit 30 is caught; NaN fails */
    int32_t blk[4] = {5, -7, 11, 3};
    double s, a;
    mb_disdp_block_sums(blk, 4, MB_DISDP_AGG_FIXED, &s, &a);
    EXPECT(s == 12 && a == 26);
    blk[2] ^= 1 << 30;
    double s2, a2;
    mb_disdp_block_sums(blk, 4, MB_DISDP_AGG_FIXED, &s2, &a2);
    EXPECT(!mb_disdp_sums_match(MB_DISDP_AGG_FIXED, 2, s2, s, a));
    float f[3] = {0.1f, 0.2f, 0.3f};
    mb_disdp_block_sums(f, 3, MB_DISDP_AGG_FP32, &s, &a);
    EXPECT(mb_disdp_sums_match(MB_DISDP_AGG_FP32, 2, s + 1e-8, s, a));
    EXPECT(!mb_disdp_sums_match(MB_DISDP_AGG_FP32, 2, NAN, s, a));
    EXPECT(!mb_disdp_sums_match(MB_DISDP_AGG_FP32, 2, s + 1e-3, s, a));
    /* layout: every chunk has one switch, every layer one PS, tags distinct */
    struct mb_disdp_cfg c = {.comm = MPI_COMM_WORLD, .W = 2, .K = 3, .N = 2, .nlayers = NL, .numel = numel,
                             .chunk_elems = 1024, .wire = NN_BF16, .steps = 1, .agg = MB_DISDP_AGG_FIXED};
    EXPECT(mb_disdp_grad_scale(&c) == ldexp(0.5, -MB_DISDP_FIXED_BITS));
    EXPECT(mb_disdp_cfg_check(&c, err, sizeof err) != 0 && strstr(err, "1 ranks, but W+K+N = 2+3+2 = 7"));
    EXPECT(mb_disdp_nchunks(&c, 1) == 5 && mb_disdp_nchunks(&c, 2) == 1);
    size_t off, n;
    mb_disdp_chunk_range(&c, 3, 4, &off, &n);
    EXPECT(off == 4096 && n == 1);
    for (int l = 0; l < NL; l++) {
        EXPECT(mb_disdp_ps_rank(&c, l) == 5 + l % 2);
        for (size_t k = 0; k < mb_disdp_nchunks(&c, l); k++) {
            int r = mb_disdp_switch_rank(&c, l, k);
            EXPECT(r >= 2 && r < 5);
        }
        EXPECT(mb_disdp_tag(&c, 0, MB_DISDP_FWD, l) != mb_disdp_tag(&c, 0, MB_DISDP_BWD, l));
        EXPECT(mb_disdp_tag(&c, 1, MB_DISDP_FWD, l) == 1 + 2 * NL + l);
    }
    c.wire = NN_I32;
    c.K = 1, c.N = 4;
    EXPECT(mb_disdp_cfg_check(&c, err, sizeof err) != 0 && strstr(err, "fp32, fp16 or bf16"));
    c.wire = NN_F32;
    c.K = 1, c.N = 0;
    EXPECT(mb_disdp_cfg_check(&c, err, sizeof err) != 0 && strstr(err, "parameter server"));
}

int main(int argc, char **argv)
{
    int level, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1) {
        singleton();
        if (!test_failures)
            printf("singleton: fixed point, checksums and layout (the protocol runs under mpirun: "
                   "tests/integration/zero_disdp.sh)\n");
        MPI_Finalize();
        return TEST_EXIT();
    }
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: test_disdp W K N fixed|fp32 [link_gbps]\n");
        MPI_Finalize();
        return 2;
    }
    struct mb_disdp_cfg c = {.comm = MPI_COMM_WORLD, .W = atoi(argv[1]), .K = atoi(argv[2]), .N = atoi(argv[3]),
                             .nlayers = NL, .numel = numel, .chunk_elems = 1024, .wire = NN_F32,
                             .agg = strcmp(argv[4], "fixed") == 0 ? MB_DISDP_AGG_FIXED : MB_DISDP_AGG_FP32, .steps = steps_,
                             .seed = 42};
    double gbps = argc > 5 ? atof(argv[5]) : 0;
    if (argc > 6 && nn_dtype_parse(argv[6], &c.wire) != 0) {
        if (rank == 0)
            fprintf(stderr, "test_disdp: unknown dtype %s\n", argv[6]);
        MPI_Finalize();
        return 2;
    }
    if (argc > 7)
        c.micro = atoi(argv[7]);
    char err[512];
    if (mb_disdp_cfg_check(&c, err, sizeof err) != 0) {
        if (rank == 0)
            fprintf(stderr, "test_disdp: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    if (level < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("this MPI gives thread level %d, not MPI_THREAD_MULTIPLE: skipped\n", level);
        MPI_Finalize();
        return 77;
    }
    int idx;
    enum mb_disdp_role role = mb_disdp_role_of(&c, rank, &idx);
    struct ref_ctx ref = {.c = &c, .hp = nn_adam_default()};
    ref.hp.weight_decay = 0.01f;
    if (role == MB_DISDP_WORKER) {
        run_worker(&c, gbps, rank);
    } else if (role == MB_DISDP_SWITCH) {
        struct mb_disdp_switch *sw = mb_disdp_switch_new(&c, err, sizeof err);
        for (int s = 0; sw && s < c.steps; s++)
            if (mb_disdp_switch_step(sw, err, sizeof err) != 0) {
                mb_disdp_switch_free(sw);
                sw = NULL;
            }
        if (!sw) {
            fprintf(stderr, "test_disdp: rank %d (switch): %s\n", rank, err);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mb_disdp_switch_free(sw);
    } else {
        const char *dir = getenv("MB_DISDP_DIR");
        struct mb_disdp_ps_opts po = {.dir = dir ? dir : "/tmp", .nfiles = 2, .buffered = 1, .hp = ref.hp,
                                      .init = init_cb, .final = final_cb, .ctx = &ref};
        struct mb_disdp_ps_stats st;
        struct mb_disdp_ps *ps = mb_disdp_ps_open(&c, &po, err, sizeof err);
        int rc = ps ? 0 : -1;
        for (int s = 0; rc == 0 && s < c.steps; s++)
            rc = mb_disdp_ps_step(ps, err, sizeof err);
        if (rc == 0)
            rc = mb_disdp_ps_final(ps, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "test_disdp: rank %d (PS): %s\n", rank, err);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mb_disdp_ps_stats(ps, &st);
        mb_disdp_ps_close(ps);
        printf("PS %d: %llu layers, %llu updates, final P32 %s the serial Adam\n", idx, (unsigned long long)st.layers,
               (unsigned long long)st.updates, ref.mismatches ? "DIFFERS from" : "bit-identical to");
        EXPECT(ref.mismatches == 0);
        EXPECT(st.updates == st.layers * (uint64_t)c.steps);
    }
    int mine = test_failures, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("disdp W=%d K=%d N=%d %s: %d failure(s)\n", c.W, c.K, c.N, argv[4], all);
    MPI_Finalize();
    return all ? 1 : 0;
}
