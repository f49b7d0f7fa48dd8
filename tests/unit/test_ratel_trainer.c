/* ratel/'s trainer against nn's whole-model reference: gpt-tiny, a
 * small parsed shape and one whose layers the store updates in chunks, 3 synchronous steps, under every system, every
 * optimizer order and every activation policy: P32 and P16 of every layer
 * bit-identical to nn_gpt_forward/_backward + nn_gpt_adam_step (same
 * thread count). Then the failures a run must stop on: a corrupted state
 * (named by tensor and offset), a write error, and a device arena too
 * small (the tier, the bytes asked and free). */
#include "check.h"

#include "../../common/common.h"
#include "../../ratel/ratel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fp32 activations: a tensor recomputed equals its stored copy only when
 * storing does not round it (nn: bit-identical with fp32 storage) */
static const struct nn_precision PREC = {NN_F16, NN_F16, NN_F32};
static const int B = 2, STEPS = 3;
static const uint64_t SEED = 11;

struct data {
    int32_t *tok[3], *tgt[3];
};

static void make_data(const struct nn_gpt_config *cfg, struct data *d)
{
    size_t M = (size_t)B * (size_t)cfg->seq;
    struct nn_rng r;
    nn_rng_seed(&r, 99);
    for (int s = 0; s < STEPS; s++) {
        d->tok[s] = malloc(M * 4);
        d->tgt[s] = malloc(M * 4);
        for (size_t i = 0; i < M; i++) {
            d->tok[s][i] = (int32_t)(nn_rng_next(&r) % (uint64_t)cfg->vocab);
            d->tgt[s][i] = (int32_t)(nn_rng_next(&r) % (uint64_t)cfg->vocab);
        }
    }
}

static struct ratel_trainer_opts opts(const struct nn_gpt_config *cfg, const char *dir)
{
    struct ratel_trainer_opts o = {0};
    o.cfg = *cfg;
    o.batch = B;
    o.prec = PREC;
    o.seed = SEED;
    o.dir = dir;
    o.nfiles = 2;
    o.dev_mem = 64u << 20;
    o.host_mem = 192u << 20; /* (the store's buffers and 64 MiB of staging slots beside the arena) */
    o.hp = nn_adam_default();
    return o;
}

static uint64_t last_stored; /* run_same's last run: activation bytes its last step wrote to storage */
static uint64_t last_read_bytes; /* and the bytes its store read in all */

/* Runs STEPS steps; 0 when every layer's P32 and P16 equal the reference's.
 * *swapped: the activation bytes the last step sent over the link. */
static int run_same(const struct ratel_trainer_opts *o, const struct data *d, struct nn_gpt *ref,
                    struct nn_adam_state *rs, const char *what, uint64_t *swapped)
{
    char err[512];
    struct ratel_trainer *t = ratel_trainer_new(o, err, sizeof(err));
    if (!t) {
        fprintf(stderr, "%s: %s\n", what, err);
        return -1;
    }
    int bad = 0;
    for (int s = 0; s < STEPS && !bad; s++)
        if (ratel_trainer_step(t, d->tok[s], d->tgt[s], err, sizeof(err)) != 0) {
            fprintf(stderr, "%s: step %d: %s\n", what, s, err);
            bad = 1;
        }
    for (int i = 0; i < ratel_trainer_layers(t) && !bad; i++) {
        uint64_t n = ratel_trainer_layer_params(t, i);
        float *p32 = malloc(n * 4);
        uint16_t *p16 = malloc(n * 2);
        if (ratel_trainer_params(t, i, p32, p16, err, sizeof(err)) != 0)
            bad = 1;
        else if (n != rs->n[i] || memcmp(p32, rs->p[i], n * 4) != 0 ||
                 memcmp(p16, nn_layer_params(ref->layer[i])->data, n * 2) != 0) {
            fprintf(stderr, "%s: layer %d differs from the reference\n", what, i);
            bad = 1;
        }
        free(p32);
        free(p16);
    }
    struct ratel_trainer_stats st;
    ratel_trainer_stats(t, &st);
    *swapped = st.act_swapped;
    last_stored = st.act_stored;
    /* forward's read-ahead: where it applies, one per layer asked and step,
     * each used by its layer's update (none dropped) */
    struct mb_ostore *so = ratel_trainer_store(t);
    struct mb_ostore_stats os = {0};
    if (so)
        mb_ostore_stats(so, &os);
    last_read_bytes = os.read_bytes;
    int ra = o->system == RATEL_SYS_RATEL && o->order == MB_OSTORE_OPTIMIZED ? o->read_ahead : 0;
    uint64_t ra_bytes = 0;
    for (int k = 0; k < ra; k++) { /* the layer's last update chunk */
        uint64_t n = ratel_trainer_layer_params(t, k ? ratel_trainer_layers(t) - k : 0);
        ra_bytes += 12 * mb_ostore_first_unit_elems(n, o->update_chunk ? o->update_chunk : RATEL_UPDATE_CHUNK, 0);
    }
    if (st.read_ahead != ra || st.read_ahead_bytes != ra_bytes || os.read_aheads != (uint64_t)(ra * STEPS) ||
        os.read_aheads_dropped != 0)
        bad = 1, fprintf(stderr, "%s: read-ahead %d layers (%llu B), %llu submitted, %llu dropped; want %d\n", what,
                         st.read_ahead, (unsigned long long)st.read_ahead_bytes, (unsigned long long)os.read_aheads,
                         (unsigned long long)os.read_aheads_dropped, ra);
    /* zero-infinity (and Ratel's inter-block and recompute-all rules when
     * asked) recompute every block's and the head's whole forward, as
     * DeepSpeed does (FLOP_r = FLOP_f), else nn's partial recompute (all
     * of it for zero-infinity); the model prices the rule the trainer ran */
    if (o->system == RATEL_SYS_ZERO_INFINITY || o->recompute_whole) {
        struct ratel_model m;
        ratel_gpt_model(&o->cfg, o->batch, o->prec, &m);
        double want = o->recompute_whole ? m.flops_fwd : m.flops_rc_all;
        /* priced: FLOP_f for whole blocks (forward's rate is FLOP_f over
         * its seconds); nn's partial recompute by its stages' time, every
         * intra unit dropped (ratel_rc_price_units, test_ratel) */
        double price = o->recompute_whole ? m.flops_fwd : st.recompute_priced_all;
        if (!(fabs(st.recompute_flops - want) <= 1e-9 * want) || !(price > 0) ||
            !(fabs(st.choice.flops_r - price) <= 1e-9 * price))
            bad = 1, fprintf(stderr, "%s: recompute %g FLOPs (want %g), priced %g (want %g)\n", what,
                             st.recompute_flops, want, st.choice.flops_r, price);
    }
    if (st.act_stored > st.act_swapped || (st.act_stored && !st.act_staging))
        bad = 1, fprintf(stderr, "%s: %llu bytes to storage of %llu swapped\n", what,
                         (unsigned long long)st.act_stored, (unsigned long long)st.act_swapped);
    /* backward copies every host-held swapped tensor in a layer ahead (the
     * prefetch), the ones on storage at their layer: no more, no less */
    if (st.act_prefetched != st.act_swapped - st.act_stored)
        bad = 1, fprintf(stderr, "%s: %llu bytes copied in ahead, %llu host-held\n", what,
                         (unsigned long long)st.act_prefetched,
                         (unsigned long long)(st.act_swapped - st.act_stored));
    struct mb_link_stats h2d;
    mb_link_stats(ratel_trainer_link(t), MB_LINK_H2D, &h2d);
    /* P16 crosses the link twice per step (forward, backward) but on no-offload */
    if (o->system != RATEL_SYS_NO_OFFLOAD && !(h2d.bytes >= 2 * STEPS * ratel_trainer_layer_params(t, 0)))
        bad = 1, fprintf(stderr, "%s: %llu bytes host to device\n", what, (unsigned long long)h2d.bytes);
    /* the device arena's peak is what ratel_dev_bytes (--plan) counts, to the byte */
    uint64_t need = ratel_dev_bytes(&o->cfg, o->batch, o->prec, o->system);
    /* recompute-all keeps every block's and the head's input on the device */
    if (o->act == RATEL_ACT_RECOMPUTE_ALL &&
        (o->system == RATEL_SYS_RATEL || o->system == RATEL_SYS_ZERO_INFINITY))
        need += (uint64_t)(o->cfg.layers + 1) *
                (((uint64_t)o->batch * o->cfg.seq * o->cfg.hidden * nn_dtype_size(o->prec.act) + 63) / 64 * 64);
    if (st.dev_peak != need)
        bad = 1, fprintf(stderr, "%s: device peak %llu, ratel_dev_bytes %llu\n", what,
                         (unsigned long long)st.dev_peak, (unsigned long long)need);
    /* the host arena's peak: the plan's fixed host bytes (two P16 and two
     * G16 slots) plus the most activations a step swapped, to the byte */
    if (o->system == RATEL_SYS_RATEL) {
        struct ratel_budget bud = {0};
        bud.dev_mem = bud.host_mem = 1ull << 40;
        struct ratel_plan pl;
        ratel_plan(&o->cfg, o->batch, o->prec, &bud, 0, &pl);
        /* the profiling step swaps the blocks' and the head's inputs, the others the choice */
        uint64_t in = (uint64_t)(o->cfg.layers + 1) * o->batch * o->cfg.seq * o->cfg.hidden *
                      nn_dtype_size(o->prec.act);
        /* (in host memory: what the last step did not send to storage) */
        uint64_t host = st.act_swapped - st.act_stored;
        uint64_t most = host > in ? host : in;
        if (st.host_peak != pl.host_fixed + most)
            bad = 1, fprintf(stderr, "%s: host peak %llu, plan %llu + swapped %llu\n", what,
                             (unsigned long long)st.host_peak, (unsigned long long)pl.host_fixed,
                             (unsigned long long)st.act_swapped);
    }
    if (st.steps != STEPS || !(st.loss > 0))
        bad = 1, fprintf(stderr, "%s: %d steps, loss %g\n", what, st.steps, st.loss);
    fprintf(stderr, "%-40s loss %.6f swapped %8llu B, choice case %d (%d units): %s\n", what,
            st.loss, (unsigned long long)st.act_swapped, st.choice.which_case, st.choice.nswap,
            bad ? "DIFFERS" : "bit-identical");
    ratel_trainer_free(t);
    return bad ? -1 : 0;
}

/* Runs until a step fails; returns the message (empty when none failed). */
static void run_fail(const struct ratel_trainer_opts *o, const struct data *d, char *err, size_t len)
{
    err[0] = 0;
    struct ratel_trainer *t = ratel_trainer_new(o, err, len);
    for (int s = 0; t && s < STEPS; s++)
        if (ratel_trainer_step(t, d->tok[s], d->tgt[s], err, len) != 0)
            break;
    if (t) {
        /* reading every state back catches a corruption the steps did not read */
        uint64_t n = 0;
        for (int i = 0; i < ratel_trainer_layers(t); i++)
            n = ratel_trainer_layer_params(t, i) > n ? ratel_trainer_layer_params(t, i) : n;
        float *p32 = malloc(n * 4);
        uint16_t *p16 = malloc(n * 2);
        for (int i = 0; !err[0] && i < ratel_trainer_layers(t); i++)
            ratel_trainer_params(t, i, p32, p16, err, len);
        free(p32);
        free(p16);
        ratel_trainer_free(t);
    }
}

int main(void)
{
    char dir[] = "/tmp/mb-ratel-trainer-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "SKIP: no temporary folder\n");
        return 77;
    }
    /* the third: blocks of 50k parameters, which the store updates in two
     * chunks of at most 32768 (--update-chunk) */
    const char *shapes[] = {"gpt-tiny", "layers=3,hidden=32,heads=4,seq=16,vocab=24",
                            "layers=2,hidden=64,heads=4,seq=16,vocab=64"};
    const char *names[] = {"gpt-tiny", "parsed", "chunked"};
    for (int c = 0; c < 3; c++) {
        struct nn_gpt_config cfg;
        char err[512];
        EXPECT(nn_gpt_config_parse(shapes[c], &cfg, err, sizeof(err)) == 0);
        struct data d;
        make_data(&cfg, &d);
        struct nn_gpt *ref = nn_gpt_new(&cfg, B, PREC, SEED);
        struct nn_adam_state rs;
        EXPECT(ref && nn_adam_state_init(&rs, ref) == 0);
        struct nn_adam hp = nn_adam_default();
        for (int s = 0; s < STEPS; s++) {
            double loss;
            nn_gpt_zero_grad(ref);
            EXPECT(nn_gpt_forward(ref, d.tok[s], d.tgt[s], &loss) == 0 && nn_gpt_backward(ref) == 0);
            nn_gpt_adam_step(ref, &rs, &hp, 1.0f);
        }
        struct ratel_trainer_opts o = opts(&cfg, dir);
        o.update_chunk = c == 2 ? 32768 : 0;
        char what[128];
        uint64_t sw, swapped[RATEL_ACT_COUNT] = {0};
        for (int sys = 0; sys < RATEL_SYS_COUNT; sys++) {
            o.system = (enum ratel_system)sys;
            int norders = sys == RATEL_SYS_RATEL ? 3 : sys == RATEL_SYS_ZERO_INFINITY ? 2 : 1;
            int nacts = sys == RATEL_SYS_RATEL ? RATEL_ACT_COUNT : 1;
            for (int ord = 0; ord < norders; ord++)
                for (int act = 0; act < nacts; act++) {
                    /* (zero-infinity: its one order, recompute partial then whole) */
                    int zi = sys == RATEL_SYS_ZERO_INFINITY;
                    o.order = zi ? MB_OSTORE_SERIAL : (enum mb_ostore_order)ord;
                    o.recompute_whole = zi && ord == 1;
                    o.act = (enum ratel_act)act;
                    snprintf(what, sizeof(what), "%s %s %s %s%s", names[c],
                             ratel_system_name(o.system), mb_ostore_order_names[o.order],
                             ratel_act_name(o.act), o.recompute_whole ? " whole" : "");
                    EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
                    if (sys == RATEL_SYS_RATEL)
                        swapped[act] = sw;
                    else
                        EXPECT(sw == (sys == RATEL_SYS_ZERO_INFINITY ? swapped[RATEL_ACT_INTER_BLOCK] : 0));
                }
        }
        /* Ratel's block-dropping rules rerun whole blocks when asked (the
         * study's zero-infinity stages alone): the same bits, FLOP_f
         * recomputed and priced */
        o.system = RATEL_SYS_RATEL;
        o.recompute_whole = 1;
        const enum ratel_act drops[2] = {RATEL_ACT_INTER_BLOCK, RATEL_ACT_RECOMPUTE_ALL};
        for (int k = 0; k < 2; k++)
            for (int ord = 0; ord < 3; ord += 2) {
                o.act = drops[k];
                o.order = (enum mb_ostore_order)ord;
                snprintf(what, sizeof(what), "%s ratel %s %s whole", names[c],
                         mb_ostore_order_names[ord], ratel_act_name(o.act));
                EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
                EXPECT(sw == swapped[o.act]);
            }
        o.recompute_whole = 0;
        /* the policies move what they say: everything, block inputs, nothing */
        EXPECT(swapped[RATEL_ACT_SWAP_ALL] > swapped[RATEL_ACT_INTER_BLOCK]);
        EXPECT(swapped[RATEL_ACT_INTER_BLOCK] > 0 && swapped[RATEL_ACT_RECOMPUTE_ALL] == 0);
        EXPECT(swapped[RATEL_ACT_RATEL] >= swapped[RATEL_ACT_INTER_BLOCK]);
        /* the host arena at its least (the block inputs beside the slots):
         * MEM_avail below what swap-all and Algorithm 1 may swap, the rest
         * on storage (the lowest layers'), read back CRC-checked: the same
         * bits under every order */
        o.system = RATEL_SYS_RATEL;
        o.host_mem = ratel_host_arena_need(&cfg, B, PREC, RATEL_SYS_RATEL, RATEL_ACT_RATEL) +
                     ratel_host_beside_bytes(&cfg, B, PREC, RATEL_SYS_RATEL, RATEL_ACT_RATEL, o.update_chunk);
        for (int ord = 0; ord < 3; ord++) {
            o.order = (enum mb_ostore_order)ord;
            o.act = RATEL_ACT_SWAP_ALL;
            snprintf(what, sizeof(what), "%s spill swap-all %s", names[c], mb_ostore_order_names[ord]);
            EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
            fprintf(stderr, "  %llu of %llu bytes to storage\n", (unsigned long long)last_stored, (unsigned long long)sw);
            EXPECT(sw == swapped[RATEL_ACT_SWAP_ALL] && last_stored > 0 && last_stored < sw);
            o.act = RATEL_ACT_RATEL;
            snprintf(what, sizeof(what), "%s spill ratel %s", names[c], mb_ostore_order_names[ord]);
            EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
        }
        /* a given swap set (--swap-set: another run's pick) is what every
         * order swaps: the block inputs and each block's attention group,
         * the same bytes under each order, the set in use the given one,
         * the same bits as the reference */
        {
            int nu = ratel_gpt_units(&cfg, B, PREC, NULL, 0);
            struct ratel_unit *u = calloc((size_t)nu, sizeof(*u));
            unsigned char *given = calloc((size_t)nu, 1), *used = calloc((size_t)nu, 1);
            ratel_gpt_units(&cfg, B, PREC, u, nu);
            for (int k = 0; k < nu; k++)
                given[k] = u[k].inter || (u[k].group == 3 && u[k].layer <= cfg.layers);
            o.swap_set = given;
            o.act = RATEL_ACT_RATEL;
            uint64_t first = 0;
            for (int ord = 0; ord < 3; ord++) {
                o.order = (enum mb_ostore_order)ord;
                snprintf(what, sizeof(what), "%s given set %s", names[c], mb_ostore_order_names[ord]);
                EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
                first = ord ? first : sw;
                EXPECT(sw == first && sw > swapped[RATEL_ACT_INTER_BLOCK]);
                char e2[256];
                struct ratel_trainer *t = ratel_trainer_new(&o, e2, sizeof(e2));
                EXPECT(t != NULL);
                for (int s = 0; t && s < 2; s++)
                    EXPECT(ratel_trainer_step(t, d.tok[s], d.tgt[s], e2, sizeof(e2)) == 0);
                if (t)
                    ratel_trainer_swap(t, used, nu);
                EXPECT(memcmp(used, given, (size_t)nu) == 0);
                ratel_trainer_free(t);
            }
            o.swap_set = NULL;
            free(u);
            free(given);
            free(used);
        }
        if (c == 0) { /* a bit flipped in an activation's extent on storage: named */
            o.act = RATEL_ACT_SWAP_ALL;
            setenv("MB_FAULT_INJECT", "corrupt-act", 1);
            run_fail(&o, &d, err, sizeof(err));
            unsetenv("MB_FAULT_INJECT");
            fprintf(stderr, "corrupt-act: \"%s\"\n", err);
            EXPECT(strstr(err, "CRC32C mismatch") && strstr(err, ".act.") && strstr(err, "offset"));
        }
        o.host_mem = 192u << 20;
        /* a link and storage rate cap change the timing, never the bits */
        o.system = RATEL_SYS_RATEL;
        o.order = MB_OSTORE_OPTIMIZED;
        o.act = RATEL_ACT_RATEL;
        o.link_gbps = 0.5;
        o.file_gbps = 0.5;
        EXPECT(run_same(&o, &d, ref, &rs, "capped link and files", &sw) == 0);
        o.link_gbps = o.file_gbps = 0;
        /* forward's read-ahead of 1, 2 and 3 layers (the embedding, then
         * the top ones): the same bits, and the store reads no byte more
         * (each read ahead is its step's) */
        uint64_t rb0 = 0;
        for (int ra = 0; ra <= RATEL_READ_AHEAD_MAX; ra++) {
            o.read_ahead = ra;
            snprintf(what, sizeof(what), "optimized, read-ahead %d", ra);
            EXPECT(run_same(&o, &d, ref, &rs, what, &sw) == 0);
            rb0 = ra ? rb0 : last_read_bytes;
            EXPECT(last_read_bytes == rb0 && rb0 > 0);
        }
        o.order = MB_OSTORE_NAIVE; /* the other orders: not applied (run_same checks) */
        EXPECT(run_same(&o, &d, ref, &rs, "naive, read-ahead asked", &sw) == 0);
        o.order = MB_OSTORE_OPTIMIZED;
        o.read_ahead = RATEL_READ_AHEAD_MAX + 1;
        EXPECT(ratel_trainer_new(&o, err, sizeof(err)) == NULL && strstr(err, "read-ahead"));
        o.read_ahead = 0;
        if (c == 0) {
            setenv("MB_FAULT_INJECT", "corrupt-state", 1);
            for (int ord = 0; ord < 3; ord++) {
                o.order = (enum mb_ostore_order)ord;
                run_fail(&o, &d, err, sizeof(err));
                fprintf(stderr, "corrupt-state %s: \"%s\"\n", mb_ostore_order_names[ord], err);
                EXPECT(strstr(err, "offset") && strstr(err, "L"));
            }
            /* other seeds, other tensors and blocks: each named */
            for (uint64_t seed = 1; seed <= 4; seed++) {
                o.seed = seed;
                run_fail(&o, &d, err, sizeof(err));
                fprintf(stderr, "corrupt-state seed %llu: \"%s\"\n", (unsigned long long)seed, err);
                EXPECT(strstr(err, "CRC32C mismatch") && strstr(err, "offset"));
            }
            o.seed = SEED;
            setenv("MB_FAULT_INJECT", "write-error", 1);
            run_fail(&o, &d, err, sizeof(err));
            fprintf(stderr, "write-error: \"%s\"\n", err);
            EXPECT(err[0] != 0);
            unsetenv("MB_FAULT_INJECT");
            /* exactly the planned device memory trains; one byte less is refused */
            struct ratel_budget bud = {0};
            bud.dev_mem = bud.host_mem = 1ull << 40;
            struct ratel_plan pl;
            ratel_plan(&o.cfg, o.batch, o.prec, &bud, 0, &pl);
            EXPECT(o.system == RATEL_SYS_RATEL && pl.dev_need == ratel_dev_bytes(&o.cfg, o.batch, o.prec, o.system));
            o.dev_mem = pl.dev_need;
            run_fail(&o, &d, err, sizeof(err));
            fprintf(stderr, "device at the plan's %llu bytes: \"%s\"\n", (unsigned long long)pl.dev_need, err);
            EXPECT(err[0] == 0);
            o.dev_mem = pl.dev_need - 1;
            EXPECT(ratel_trainer_new(&o, err, sizeof(err)) == NULL);
            fprintf(stderr, "one byte under the plan: \"%s\"\n", err);
            EXPECT(strstr(err, "dev-mem") && strstr(err, "asked") && strstr(err, "free"));
            o.dev_mem = 16384;
            EXPECT(ratel_trainer_new(&o, err, sizeof(err)) == NULL);
            fprintf(stderr, "small device: \"%s\"\n", err);
            EXPECT(strstr(err, "dev-mem") && strstr(err, "asked") && strstr(err, "free"));
            o.dev_mem = 64u << 20;
            /* --host-mem holds the store's buffers and the staging slots
             * beside the arena: exactly those leave it nothing, and 4096
             * more an arena that overruns */
            uint64_t beside = ratel_host_beside_bytes(&o.cfg, o.batch, PREC, o.system, o.act, o.update_chunk);
            o.host_mem = beside;
            EXPECT(ratel_trainer_new(&o, err, sizeof(err)) == NULL);
            fprintf(stderr, "host budget all beside the arena: \"%s\"\n", err);
            EXPECT(strstr(err, "host-mem") && strstr(err, "leave nothing"));
            o.host_mem = beside + 4096;
            EXPECT(ratel_trainer_new(&o, err, sizeof(err)) == NULL);
            fprintf(stderr, "small host: \"%s\"\n", err);
            EXPECT(strstr(err, "host-mem") && strstr(err, "asked"));
        }
        nn_adam_state_free(&rs);
        nn_gpt_free(ref);
        for (int s = 0; s < STEPS; s++) {
            free(d.tok[s]);
            free(d.tgt[s]);
        }
    }
    for (int i = 0; i < RATEL_SYS_COUNT; i++) {
        enum ratel_system sy;
        EXPECT(ratel_system_parse(ratel_system_name((enum ratel_system)i), &sy) == 0 && (int)sy == i);
    }
    enum ratel_system sy;
    EXPECT(ratel_system_parse("zero", &sy) == -1);
    struct nn_gpt_config tiny;
    nn_gpt_preset("gpt-tiny", &tiny);
    EXPECT(ratel_gemm_peer_rate(&tiny, B, NULL) > 0);
    rmdir(dir);
    return TEST_EXIT();
}
