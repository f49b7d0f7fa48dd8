/* zero/'s pieces that need no MPI run: the role layout and its refusals,
 * the mode registry, the micro-batch split, fixed-point sums (exact in any
 * order, clamped so that no sum wraps, NaN to 0), the wire bytes against
 * nn_shard_range and the tokens' independence of who draws them; the
 * emulation text: one host's cores, or each role's hosts of a multi-host
 * run; the uses' order and the prefetch window. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void layout(void)
{
    struct zero_layout lay = {3, 1, 2};
    char err[200];
    int idx;
    EXPECT(zero_layout_check(&lay, 6, 1, err, sizeof(err)) == 0);
    EXPECT(zero_layout_check(&lay, 5, 0, err, sizeof(err)) == -1 && strstr(err, "= 6 ranks, but the run has 5"));
    struct zero_layout nops = {3, 1, 0};
    EXPECT(zero_layout_check(&nops, 4, 1, err, sizeof(err)) == -1 && strstr(err, "--ps 0"));
    EXPECT(zero_layout_check(&nops, 4, 0, err, sizeof(err)) == 0);
    struct zero_layout none = {0, 0, 0};
    EXPECT(zero_layout_check(&none, 0, 0, err, sizeof(err)) == -1);
    EXPECT(zero_role_of(&lay, 0, &idx) == ZERO_WORKER && idx == 0);
    EXPECT(zero_role_of(&lay, 2, &idx) == ZERO_WORKER && idx == 2);
    EXPECT(zero_role_of(&lay, 3, &idx) == ZERO_SWITCH && idx == 0);
    EXPECT(zero_role_of(&lay, 4, &idx) == ZERO_PS && idx == 0);
    EXPECT(zero_role_of(&lay, 5, &idx) == ZERO_PS && idx == 1);
}

static void modes(void)
{
    int n = 0;
    for (; zero_modes[n]; n++) {
        EXPECT(zero_mode_find(zero_modes[n]->name) == zero_modes[n]);
        EXPECT(zero_modes[n]->step != NULL && zero_modes[n]->description != NULL);
        EXPECT(strstr(zero_mode_names(), zero_modes[n]->name) != NULL);
        for (int k = 0; k < n; k++)
            EXPECT(strcmp(zero_modes[k]->name, zero_modes[n]->name) != 0);
    }
    EXPECT(n >= 3);
    EXPECT(zero_mode_find("nosuch") == NULL && zero_mode_find(NULL) == NULL);
    struct zero_opts o = {.progress = ZERO_PROGRESS_THREAD};
    EXPECT(zero_mode_needs_threads(zero_mode_find("zero3-overlap"), &o));
    EXPECT(!zero_mode_needs_threads(zero_mode_find("zero3-serial"), &o));
    o.progress = ZERO_PROGRESS_POLL;
    EXPECT(!zero_mode_needs_threads(zero_mode_find("zero3-overlap"), &o));
}

static void split(void)
{
    struct zero_opts o = {.batch = 12, .micro = 1, .lay = {4, 0, 0}};
    EXPECT(zero_micro_per_worker(&o) == 3);
    o.micro = 2, o.lay.W = 3;
    EXPECT(zero_micro_per_worker(&o) == 2);
    o.batch = 9;
    EXPECT(zero_micro_per_worker(&o) == 0);
    o.micro = 0;
    EXPECT(zero_micro_per_worker(&o) == 0);
}

static void fixed(void)
{
    enum { N = 1000, T = 7 };
    float *g = malloc(sizeof(float) * N * T);
    int32_t fwd[N] = {0}, rev[N] = {0};
    struct nn_rng r;
    nn_rng_seed(&r, 42);
    for (int i = 0; i < N * T; i++)
        g[i] = (float)(nn_rng_normal(&r) * 1e-3);
    for (int t = 0; t < T; t++)
        zero_fixed_accumulate(fwd, g + t * N, N, T);
    for (int t = T - 1; t >= 0; t--)
        zero_fixed_accumulate(rev, g + t * N, N, T);
    EXPECT(memcmp(fwd, rev, sizeof(fwd)) == 0); /* order-independent */
    double one = ldexp(1.0, ZERO_FIXED_FRAC_BITS), worst = 0;
    for (int k = 0; k < N; k++) {
        double s = 0;
        for (int t = 0; t < T; t++)
            s += g[t * N + k];
        worst = fmax(worst, fabs(fwd[k] / one - s));
    }
    EXPECT(worst <= T * 0.5 / one); /* each term rounds by half a unit */
    /* clamping: T huge terms cannot wrap; NaN counts 0 */
    int32_t acc[3] = {0};
    float big[3] = {1e9f, -1e9f, NAN};
    for (int t = 0; t < T; t++)
        zero_fixed_accumulate(acc, big, 3, T);
    EXPECT(acc[0] > 0 && acc[0] <= INT32_MAX && acc[0] >= INT32_MAX - T);
    EXPECT(acc[1] < 0 && acc[1] >= -INT32_MAX && acc[1] <= -INT32_MAX + T);
    EXPECT(acc[2] == 0);
    free(g);
}

static void wire(void)
{
    struct zero_opts o = {.batch = 3, .micro = 1, .lay = {3, 0, 0}};
    char err[200];
    EXPECT(nn_gpt_config_parse("gpt-tiny", &o.cfg, err, sizeof(err)) == 0);
    uint64_t want = 0;
    for (int i = 0; i < o.cfg.layers + 2; i++) {
        struct nn_layer_account a;
        size_t off, n;
        nn_gpt_layer_account(&o.cfg, 1, (struct nn_precision){NN_F32, NN_F32, NN_F32}, i, &a);
        size_t S = nn_shard_range(a.params, 0, 3, &off, &n);
        EXPECT(S * 3 >= a.params && S * 3 < a.params + 3);
        want += 3 * S * 4;
    }
    EXPECT(zero_wire_param_bytes(&o) == want);
    EXPECT(zero_worker_bytes(&o) > 4 * want / 3);
    /* micro-batch g's tokens depend on (seed, step, g) only */
    size_t M = (size_t)o.cfg.seq;
    int32_t *a = malloc(M * 8), *b = malloc(M * 8);
    zero_tokens(&o, 2, 5, a, a + M);
    o.lay.W = 1, o.batch = 12;
    zero_tokens(&o, 2, 5, b, b + M);
    EXPECT(memcmp(a, b, M * 8) == 0);
    zero_tokens(&o, 2, 6, b, b + M);
    EXPECT(memcmp(a, b, M * 8) != 0);
    free(a), free(b);
}

static void emulation(void)
{
    char one[1000], buf[1000];
    struct zero_layout lay = {2, 1, 1};
    zero_emulation(&lay, NULL, 0, 0, one, sizeof one);
    EXPECT(strcmp(one, "workers, switches and parameter servers: MPI ranks on this host's cores") == 0);
    zero_emulation(&lay, "vm,vm,vm,vm", 0, 0, buf, sizeof buf);
    EXPECT(strcmp(buf, one) == 0);
    zero_emulation(&lay, "node1,node2,node3,node4", 1, 1, buf, sizeof buf);
    EXPECT(strncmp(buf, "workers, switches and parameter servers: MPI ranks on 4 hosts (workers on node1, node2; "
                        "switches on node3; parameter servers on node4), the ranks on one host sharing its cores; "
                        "SmartNIC", 169) == 0);
    EXPECT(strstr(buf, "this host") == NULL && strstr(buf, "paced per direction by mb_link"));
    zero_emulation(&lay, "node1,node1,node2,node2", 0, 1, buf, sizeof buf);
    EXPECT(strstr(buf, "on 2 hosts (workers on node1; switches on node2; parameter servers on node2)") &&
           strstr(buf, "mb_coll pacing hook") && !strstr(buf, "SmartNIC"));
    struct zero_layout w3 = {3, 0, 0};
    zero_emulation(&w3, "a,b,a", 0, 0, buf, sizeof buf);
    EXPECT(strstr(buf, "on 2 hosts (workers on a, b), the ranks") != NULL);
}

/* The uses' order and how far the overlapping modes fetch ahead: with
 * L = 6 (embedding, 4 blocks, head) a step's uses are layers
 * 0 1 2 3 4 5 | 5 4 3 2 1 0; a fetch stops before a use whose layer is
 * the current use's or an earlier fetched one's (one buffer a layer). */
static void prefetch(void)
{
    struct zero_run z;
    memset(&z, 0, sizeof z);
    z.L = 6;
    const int order[12] = {0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0};
    for (int u = 0; u < 24; u++)
        EXPECT(zero_use_layer(&z, u) == order[u % 12]);
    EXPECT(ZERO_PREFETCH == 2);
    EXPECT(zero_prefetch_ahead(&z, 0, 12) == 2);  /* embedding: blocks 0 and 1 */
    EXPECT(zero_prefetch_ahead(&z, 4, 12) == 1);  /* last block: the head's forward, not its backward */
    EXPECT(zero_prefetch_ahead(&z, 5, 12) == 0);  /* the head's forward: its backward refills its buffer */
    EXPECT(zero_prefetch_ahead(&z, 6, 12) == 2);  /* the head's backward: blocks 3 and 2 */
    EXPECT(zero_prefetch_ahead(&z, 10, 12) == 1); /* block 0's backward: the embedding's, then the step ends */
    EXPECT(zero_prefetch_ahead(&z, 11, 12) == 0);
    EXPECT(zero_prefetch_ahead(&z, 10, 24) == 1); /* two micro-batches: the embedding's backward then forward */
    EXPECT(zero_prefetch_ahead(&z, 12, 24) == 2);
    z.L = 1; /* one layer: every use refills the one buffer */
    EXPECT(zero_prefetch_ahead(&z, 0, 4) == 0);
}

/* zero3's window with a second buffer: the head's backward (use 6) may be
 * fetched while its forward (use 5) is bound, nothing else repeats. At
 * most 3 buffers: uses 4, 5, 6 from use 4; 5, 6, 7 from use 5. */
static void prefetch_spare(void)
{
    struct zero_run z;
    memset(&z, 0, sizeof z);
    z.L = 6;
    EXPECT(zero_prefetch_ahead_spare(&z, 0, 12) == 2);  /* as before */
    EXPECT(zero_prefetch_ahead_spare(&z, 3, 12) == 2);  /* block 3: block 4, the head's forward */
    EXPECT(zero_prefetch_ahead_spare(&z, 4, 12) == 2);  /* last block: the head's forward and backward */
    EXPECT(zero_prefetch_ahead_spare(&z, 5, 12) == 2);  /* the head's forward: its backward, block 4's */
    EXPECT(zero_prefetch_ahead_spare(&z, 6, 12) == 2);  /* as before */
    EXPECT(zero_prefetch_ahead_spare(&z, 10, 12) == 1); /* the step ends after the embedding's backward */
    EXPECT(zero_prefetch_ahead_spare(&z, 10, 24) == 1); /* embedding backward then forward: one buffer */
    EXPECT(zero_prefetch_ahead_spare(&z, 17, 24) == 2); /* the second micro-batch's head: 18, 19 */
    z.L = 1; /* one layer, the head: its backward only, not the next forward */
    EXPECT(zero_prefetch_ahead_spare(&z, 0, 4) == 1);
    EXPECT(zero_prefetch_ahead_spare(&z, 1, 4) == 0);
}

int main(void)
{
    prefetch();
    prefetch_spare();
    emulation();
    layout();
    modes();
    split();
    fixed();
    wire();
    return TEST_EXIT();
}
