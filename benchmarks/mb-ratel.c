/* mb-ratel: Ratel (ICDE'25, "LoHan") fine-tuning a GPT whose model states
 * live on storage, with the device, the host and the link between them
 * emulated on this host (ratel/'s trainer: a dev-mem arena, a host-mem
 * arena, an mb_link, an mb_ostore on --dir). One case; each iteration is
 * one synchronous training step (the first one profiles the rates the
 * activation policy is chosen from). Validated by default: after every
 * step every layer's P32 and P16 must equal, bit for bit, nn's whole-model
 * reference (nn_gpt_forward/_backward + nn_gpt_adam_step) on the same
 * tokens. --plan prints the bytes per tier and the largest model per host
 * budget without allocating. */
#include "harness/harness.h"
#include "../ratel/ratel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct {
    char *model, *dir, *swap_set;
    long long batch, files, read_ahead, update_chunk;
    int system, act, order, case1, plan, trace, budget_how, recompute;
    size_t dev_mem, host_mem, storage;
    double link_gbps, file_gbps;
    struct nn_gpt_config cfg;
} opt;

static const struct mb_opt ratel_opts[] = {
    {"model", 0, MB_OPT_STR, &opt.model, "gpt-tiny", NULL, 0, 0,
     "a preset (gpt-tiny, gpt-13b, ...) or layers=,hidden=,heads=,seq=,vocab= (after a preset: overrides)", "SPEC"},
    {"batch", 0, MB_OPT_INT, &opt.batch, "2", NULL, 1, 1 << 20, "micro-batch (sequences)", "N"},
    {"system", 0, MB_OPT_CHOICE, &opt.system, "ratel", "ratel|zero-offload|zero-infinity|no-offload", 0, 0,
     "where states and activations live (ratel/ratel.h)", "SYS"},
    {"act", 0, MB_OPT_CHOICE, &opt.act, "ratel", "ratel|swap-all|inter-block|recompute-all|host-only", 0, 0,
     "activation policy (system ratel)", "POLICY"},
    {"optimizer", 0, MB_OPT_CHOICE, &opt.order, "optimized", "serial|naive|optimized", 0, 0,
     "order of the out-of-core Adam steps (system ratel)", "ORDER"},
    {"read-ahead", 0, MB_OPT_INT, &opt.read_ahead, "1", NULL, 0, RATEL_READ_AHEAD_MAX,
     "--optimizer optimized (system ratel): read the optimizer states of N layers during forward into the "
     "store's idle buffer sets: the embedding's (updated last, so the step does not end reading it), then the "
     "top layers' (updated first: off backward's storage path) (0: the paper's order alone; the other orders: "
     "none)", "N"},
    {"update-chunk", 0, MB_OPT_INT, &opt.update_chunk, "2097152", NULL, 32768, 1LL << 40,
     "elements the store updates at a time (DeepSpeed's sub_group_size; rounded up to 32768): a layer's "
     "chunks are read, updated and written last to first as its G16 lands, and the store's 3 buffer sets "
     "hold a chunk each, within --host-mem", "N"},
    {"recompute", 0, MB_OPT_CHOICE, &opt.recompute, "auto", "auto|whole|partial", 0, 0,
     "what a dropped block reruns in backward: its whole forward (whole: DeepSpeed's checkpointing, FLOP_r = "
     "FLOP_f) or the steps its tensors need (partial: nn's); auto: whole for zero-infinity, else partial; whole "
     "with --system ratel only for --act inter-block|recompute-all", "WHAT"},
    {"case1", 0, MB_OPT_CHOICE, &opt.case1, "inter", "inter|bytes", 0, 0,
     "Algorithm 1's reading of case 1", "READING"},
    {"dir", 0, MB_OPT_STR, &opt.dir, "build/ratel-data", NULL, 0, 0,
     "folder for the state files (node-local disk, not tmpfs)", "DIR"},
    {"files", 0, MB_OPT_INT, &opt.files, "2", NULL, 1, 64, "files striped together (stand-in SSDs)", "N"},
    {"file-gbps", 0, MB_OPT_DOUBLE, &opt.file_gbps, "0", NULL, 0, 1e6, "per-file rate cap, 1e9 B/s (0: none)", "GBPS"},
    {"dev-mem", 0, MB_OPT_SIZE, &opt.dev_mem, "1G", NULL, 4096, 1e15, "emulated device memory (an arena)", "SIZE"},
    {"host-mem", 0, MB_OPT_SIZE, &opt.host_mem, "1G", NULL, 4096, 1e15, "host memory: P16/G16 slots, the store's buffers, swapped activations", "SIZE"},
    {"storage", 0, MB_OPT_SIZE, &opt.storage, "0", NULL, 0, 1e18, "--plan: storage capacity (0: unlimited)", "SIZE"},
    {"link-gbps", 0, MB_OPT_DOUBLE, &opt.link_gbps, "0", NULL, 0, 1e6,
     "device-host link per direction, 1e9 B/s (0: memcpy speed)", "GBPS"},
    {"budget-method", 0, MB_OPT_CHOICE, &opt.budget_how, "none", "auto|cgroup|mlock|none", 0, 0,
     "also hold the whole process (dev-mem + host-mem + 64 MiB) to a memory budget "
     "(mlock pins the rest of the machine's memory: not on a shared host)", "HOW"},
    {"plan", 0, MB_OPT_FLAG, &opt.plan, NULL, NULL, 0, 0, "print bytes per tier and fit, allocate nothing", NULL},
    {"swap-set", 0, MB_OPT_STR, &opt.swap_set, NULL, NULL, 0, 0,
     "system ratel: swap this set instead of the policy's pick (another run's policy_swap_set, so two "
     "--optimizer orders run the same activations; the profiling step still runs and prices it)", "HEX"},
    {"trace", 0, MB_OPT_FLAG, &opt.trace, NULL, NULL, 0, 0, "record spans (mb-report --chrome-trace)", NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"system", "act", "optimizer", NULL};
enum { RECOMPUTE_AUTO, RECOMPUTE_WHOLE, RECOMPUTE_PARTIAL }; /* --recompute's choices, in order */

/* the systems that drop activations and recompute them in backward */
static int recomputes(void) { return opt.system == RATEL_SYS_RATEL || opt.system == RATEL_SYS_ZERO_INFINITY; }

/* whole forward reruns: zero-infinity's own rule (auto), or asked for */
static int recompute_whole(void)
{
    return recomputes() && (opt.recompute == RECOMPUTE_WHOLE ||
                            (opt.recompute == RECOMPUTE_AUTO && opt.system == RATEL_SYS_ZERO_INFINITY));
}

static unsigned char *given_set; /* --swap-set parsed (validate) */
static const struct nn_precision PREC = {NN_F16, NN_F16, NN_F32};

static struct ratel_budget budget(void)
{
    return (struct ratel_budget){opt.dev_mem, opt.host_mem, opt.storage, opt.act == RATEL_ACT_HOST_ONLY,
                                 (uint64_t)opt.update_chunk};
}

static int usage(struct mb_run *run, const char *line)
{
    if (run->rank == 0)
        mb_warn("%s", line);
    return MB_EXIT_USAGE;
}

static int validate(struct mb_run *run)
{
    char err[600];
    struct stat st;
    int B = (int)opt.batch;
    if (nn_gpt_config_parse(opt.model, &opt.cfg, err, sizeof(err)) != 0)
        return snprintf(err + 300, 300, "--model: %.280s", err), usage(run, err + 300);
    if (run->common.device == MB_DEV_CUDA)
        return usage(run, "-d cuda: refused until nn's blocks run on CUDA (mb-ratel emulates the device on the host)");
    if (run->nranks > 1)
        return snprintf(err, sizeof(err), "runs on one rank, not %d", run->nranks), usage(run, err);
    if (!opt.plan && (stat(opt.dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        return snprintf(err, sizeof(err), "--dir: %.500s: %s", opt.dir,
                        errno && stat(opt.dir, &st) != 0 ? strerror(errno) : "not a folder"),
               usage(run, err);
    struct ratel_budget b = budget();
    struct ratel_plan p;
    ratel_plan(&opt.cfg, B, PREC, &b, 0, &p);
    int most = ratel_largest_batch(&opt.cfg, PREC, &b, 1 << 20);
    if (opt.plan)
        return 0; /* --plan prints the verdict */
    if (most == 0) {
        struct ratel_plan p1;
        ratel_plan(&opt.cfg, 1, PREC, &b, 0, &p1);
        if (!p1.fits_dev)
            snprintf(err, sizeof(err), "--dev-mem: %zu bytes is below one layer's working set; the smallest that fits is %llu",
                     opt.dev_mem, (unsigned long long)p1.dev_need);
        else if (!p1.fits_host)
            snprintf(err, sizeof(err), "--host-mem: %zu bytes is below one layer's working set; the smallest that fits is %llu",
                     opt.host_mem, (unsigned long long)(p1.host_fixed + p1.host_store + (b.host_only_act ? p1.host_act : 0)));
        else
            snprintf(err, sizeof(err), "--storage: %s", p1.why);
        return usage(run, err);
    }
    if (B > most)
        return snprintf(err, sizeof(err), "--batch: %d is over the plan's limit %d for these budgets", B, most),
               usage(run, err);
    /* Algorithm 1 and the rules that keep single tensors price nn's partial
     * recompute; only the rules that drop whole blocks can rerun them whole */
    if (opt.recompute == RECOMPUTE_WHOLE && opt.system == RATEL_SYS_RATEL && opt.act != RATEL_ACT_INTER_BLOCK &&
        opt.act != RATEL_ACT_RECOMPUTE_ALL)
        return snprintf(err, sizeof(err), "--recompute whole: --act %s keeps single tensors, priced by nn's partial "
                        "recompute; whole is for zero-infinity and --act inter-block|recompute-all",
                        ratel_act_name((enum ratel_act)opt.act)), usage(run, err);
    if (opt.swap_set && opt.swap_set[0]) {
        if (opt.system != RATEL_SYS_RATEL)
            return usage(run, "--swap-set: only with --system ratel (the others' activations are fixed)");
        int n = ratel_gpt_units(&opt.cfg, B, PREC, NULL, 0);
        struct ratel_unit *u = calloc((size_t)n + 1, sizeof(*u));
        given_set = calloc((size_t)n + 1, 1);
        if (!u || !given_set)
            return free(u), usage(run, "--swap-set: out of memory");
        ratel_gpt_units(&opt.cfg, B, PREC, u, n);
        int bad = ratel_swap_set_parse(opt.swap_set, u, n, given_set, err, 300);
        free(u);
        if (bad)
            return snprintf(err + 300, 300, "--swap-set: %.280s", err), usage(run, err + 300);
    }
    /* --host-mem holds the store's buffers and the activations' staging
     * slots, and its arena the slots and the swapped activations up to
     * MEM_avail (the rest go to storage): at least the block inputs the
     * first two steps swap there */
    uint64_t need = ratel_host_arena_need(&opt.cfg, B, PREC, (enum ratel_system)opt.system,
                                          (enum ratel_act)opt.act) +
                    ratel_host_beside_bytes(&opt.cfg, B, PREC, (enum ratel_system)opt.system,
                                            (enum ratel_act)opt.act, (uint64_t)opt.update_chunk);
    if (need > opt.host_mem)
        return snprintf(err, sizeof(err), "--host-mem: %zu bytes cannot hold %s activations that --act %s swaps "
                        "beside the P16/G16 slots, the store's buffers and the staging slots; the smallest that "
                        "fits is %llu",
                        opt.host_mem, "the block-input",
                        opt.system == RATEL_SYS_RATEL ? ratel_act_name((enum ratel_act)opt.act) : "inter-block",
                        (unsigned long long)need),
               usage(run, err);
    return 0;
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    (void)run;
    mb_kv_str(cfg, "model_shape", opt.model);
    mb_kv_int(cfg, "layers", opt.cfg.layers);
    mb_kv_int(cfg, "hidden", opt.cfg.hidden);
    mb_kv_int(cfg, "heads", opt.cfg.heads);
    mb_kv_int(cfg, "seq", opt.cfg.seq);
    mb_kv_int(cfg, "vocab", opt.cfg.vocab);
    mb_kv_str(cfg, "precision", "P16/G16 fp16, activations fp32, P32/m/v fp32");
}

static int print_plan(void)
{
    struct ratel_budget b = budget();
    struct ratel_plan p;
    char buf[4096];
    ratel_plan(&opt.cfg, (int)opt.batch, PREC, &b, 0, &p);
    ratel_plan_format(&p, &b, buf, sizeof(buf));
    printf("# plan for %s at batch %lld (block inputs swapped; nn/'s working set)\n%s", opt.model, opt.batch, buf);
    struct nn_layer_account tot;
    nn_gpt_account(&opt.cfg, (int)opt.batch, PREC, &tot);
    printf("# states on storage: 14P = %llu bytes (nn_gpt_account: %llu)\n",
           (unsigned long long)p.stor_states, (unsigned long long)(tot.opt_bytes + tot.param_bytes));
    /* Eq. 3: what exceeds the host goes to storage; at most (swap-all) */
    struct ratel_model m;
    ratel_gpt_model(&opt.cfg, (int)opt.batch, PREC, &m);
    struct ratel_plan ap;
    ratel_plan(&opt.cfg, (int)opt.batch, PREC, &b, (uint64_t)m.act_all, &ap);
    printf("# activations beyond the host go to storage (Eq. 3's alpha A_G2M: written in forward, T_f's storage "
           "term; read back in backward, T_b's): swapping all %.3f GB, %.3f GB would (through staging slots of "
           "%.3f GB, in the host's buffers); Algorithm 1 picks A_G2M from the profiling step's rates\n",
           m.act_all / 1e9, ap.stor_act / 1e9, RATEL_ACT_STAGING_BYTES / 1e9);
    struct ratel_plan lp;
    const char *big = ratel_largest_preset((int)opt.batch, PREC, &b, &lp);
    printf("# largest Table IV preset for these budgets: %s\n", big ? big : "none");
    printf("# largest batch: %d\n", ratel_largest_batch(&opt.cfg, PREC, &b, 1 << 20));
    b.host_only_act = 1; /* the variant whose size the host budget bounds (ratel/README.md) */
    printf("# largest layer count of this shape, activations in host memory only: %d\n",
           ratel_largest_layers(&opt.cfg, (int)opt.batch, PREC, &b, 4096));
    return p.fits ? 0 : 1;
}

/* What the system really runs: zero-infinity its own policy and order,
 * the others keep every activation and update where the states are. */
static const char *act_label(void)
{
    /* the rule is in the name where it is not the system's own (auto) */
    static char buf[48];
    const char *a = opt.system == RATEL_SYS_ZERO_INFINITY ? ratel_act_name(RATEL_ACT_INTER_BLOCK)
                    : opt.system == RATEL_SYS_RATEL      ? ratel_act_name((enum ratel_act)opt.act)
                                                         : "keep-all";
    int zi = opt.system == RATEL_SYS_ZERO_INFINITY;
    if (!recomputes() || recompute_whole() == zi)
        return a;
    snprintf(buf, sizeof(buf), "%s-%s", a, zi ? "partial" : "whole");
    return buf;
}

static const char *order_label(void)
{
    if (opt.system == RATEL_SYS_ZERO_INFINITY)
        return mb_ostore_order_names[MB_OSTORE_SERIAL];
    if (opt.system == RATEL_SYS_RATEL)
        return mb_ostore_order_names[opt.order];
    return opt.system == RATEL_SYS_ZERO_OFFLOAD ? "host-adam" : "device-adam";
}

static int plan(struct mb_run *run)
{
    if (opt.plan) {
        if (run->rank == 0)
            print_plan();
        return MB_PLAN_DONE;
    }
    run->cases = calloc(1, sizeof(*run->cases));
    if (!run->cases)
        mb_die(1, "out of memory planning the case");
    struct mb_case *c = &run->cases[run->ncases++];
    c->labels[0] = ratel_system_name((enum ratel_system)opt.system);
    c->labels[1] = act_label();
    c->labels[2] = order_label();
    c->count = (uint64_t)opt.batch * (uint64_t)opt.cfg.seq; /* tokens per step */
    snprintf(c->name, sizeof(c->name), "%s/%s/%s", c->labels[0], c->labels[1], c->labels[2]);
    snprintf(c->group, sizeof(c->group), "%.60s batch=%lld dev-mem=%zu host-mem=%zu link-gbps=%g files=%lld",
             opt.model, opt.batch, opt.dev_mem, opt.host_mem, opt.link_gbps, opt.files);
    return 0;
}

static struct mb_budget budget_held;
static volatile int budget_on;
static struct mb_ostore *volatile store_open;

/* However the run ends: no state files left, the budget's cgroup left. */
static void cleanup_signal_safe(void *ctx)
{
    (void)ctx;
    if (store_open)
        mb_ostore_unlink(store_open);
    if (budget_on)
        mb_budget_release_signal(&budget_held);
}

/* The trainer's arenas and the store's buffers are within --dev-mem and
 * --host-mem already; the budget holds what they do not see (the page
 * cache of the state files, the program). The reference model is made
 * before, outside it. */
static int budget_enforce(void)
{
    if (opt.budget_how == MB_BUDGET_NONE)
        return 0;
    size_t bytes = opt.dev_mem + opt.host_mem + ((size_t)64 << 20);
    char err[700];
    if (mb_budget_enforce(&budget_held, bytes, (enum mb_budget_how)opt.budget_how, err, sizeof(err)) != 0)
        return mb_warn("--budget-method: cannot enforce %zu bytes: %s", bytes, err), -1;
    budget_on = 1;
    if (budget_held.cgroup[0] && mb_budget_watch(&budget_held) != 0)
        return mb_warn("--budget-method: no thread to watch %s", budget_held.cgroup), -1;
    return 0;
}

struct st {
    struct mb_run *run;
    const char *name;
    struct ratel_trainer *t;
    struct nn_gpt *ref;
    struct nn_adam_state rs;
    struct nn_adam hp;
    int32_t *tok, *tgt;
    long long steps, ref_steps, timed_steps, flushed_steps;
    int flush_failed;
    double step_s, compute_flops;
    char err[600];
};

static void tokens_of(long long step, int32_t *tok, int32_t *tgt)
{
    size_t M = (size_t)opt.batch * (size_t)opt.cfg.seq;
    struct nn_rng r;
    nn_rng_seed(&r, 0x7261746c ^ (uint64_t)step);
    for (size_t i = 0; i < M; i++) {
        tok[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)opt.cfg.vocab);
        tgt[i] = (int32_t)(nn_rng_next(&r) % (uint64_t)opt.cfg.vocab);
    }
}

static void on_span(void *ctx, const char *what, const char *name, double start, double end)
{
    (void)ctx;
    if (mb_trace_enabled())
        mb_trace_span(mb_trace_lane(what), name, mb_trace_clock(start), mb_trace_clock(end));
}

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    struct st *s = calloc(1, sizeof(*s));
    if (!s)
        return mb_warn("out of memory: the case's state"), -1;
    *state = s;
    s->run = run;
    s->name = c->name;
    s->hp = nn_adam_default();
    size_t M = (size_t)opt.batch * (size_t)opt.cfg.seq;
    s->tok = malloc(M * 4);
    s->tgt = malloc(M * 4);
    if (!s->tok || !s->tgt)
        return mb_warn("out of memory: tokens"), -1;
    if (opt.trace)
        mb_trace_enable(1);
    struct ratel_trainer_opts o = {
        .cfg = opt.cfg, .batch = (int)opt.batch, .prec = PREC, .seed = (uint64_t)run->common.seed,
        .system = (enum ratel_system)opt.system, .act = (enum ratel_act)opt.act,
        .case1 = (enum ratel_case1)opt.case1, .order = (enum mb_ostore_order)opt.order,
        .dir = opt.dir, .nfiles = (int)opt.files, .file_gbps = opt.file_gbps, .dev_mem = opt.dev_mem,
        .host_mem = opt.host_mem, .link_gbps = opt.link_gbps, .hp = s->hp, .on_span = on_span,
        .swap_set = given_set, .recompute_whole = recompute_whole(), .read_ahead = (int)opt.read_ahead,
        .update_chunk = (uint64_t)opt.update_chunk};
    if (run->common.check) {
        s->ref = nn_gpt_new(&opt.cfg, (int)opt.batch, PREC, (uint64_t)run->common.seed);
        if (!s->ref || nn_adam_state_init(&s->rs, s->ref) != 0)
            return mb_warn("out of memory: the reference model (--no-check skips it)"), -1;
    }
    mb_cleanup_add(cleanup_signal_safe, NULL);
    if (budget_enforce() != 0)
        return -1;
    if (!(s->t = ratel_trainer_new(&o, s->err, sizeof(s->err))))
        return mb_warn("%s", s->err), -1;
    store_open = ratel_trainer_store(s->t);
    /* the run's emulation says all of it: link, arenas and, when capped,
     * the files standing for SSDs (per case too, as storage_emulation) */
    static char emulation[1024];
    char files[512] = "";
    if (store_open)
        mb_ostore_emulation(store_open, files, sizeof(files));
    snprintf(emulation, sizeof(emulation), "%s; device memory: a capped host arena (dev-mem); host memory: a capped "
             "arena (host-mem)%s%s", MB_LINK_EMULATION, files[0] ? "; storage: " : "", files);
    run->emulation = emulation;
    return 0;
}

/* With --trace, the finished steps' spans go to the result file before
 * the next step (untimed), so a run killed mid-way keeps them; steps_done
 * says how many steps they cover (the case's row is written at its end). */
static void prepare(void *state, long long iter)
{
    struct st *s = state;
    (void)iter;
    tokens_of(s->steps, s->tok, s->tgt);
    if (opt.trace && s->steps > s->flushed_steps && !s->flush_failed) {
        if (s->run->rank == 0)
            mb_metric_case_int(&s->run->result, s->name, "steps_done", s->steps);
        s->flush_failed = mb_run_flush(s->run) != 0;
        s->flushed_steps = s->steps;
    }
}

static int iterate(void *state, long long iter, double *elapsed)
{
    (void)elapsed;
    struct st *s = state;
    struct ratel_trainer_stats before;
    ratel_trainer_stats(s->t, &before);
    if (s->flush_failed)
        return -1; /* mb_run_flush said why */
    double t0 = mb_now();
    if (ratel_trainer_step(s->t, s->tok, s->tgt, s->err, sizeof(s->err)) != 0) {
        mb_warn("%s: step %lld: %s", s->name, s->steps + 1, s->err);
        return -1;
    }
    uint64_t peak;
    if (budget_on && mb_budget_exceeded(&budget_held, &peak)) {
        mb_warn("%s: step %lld: --budget-method %s: %llu bytes charged at the limit %zu", s->name, s->steps + 1,
                budget_held.method, (unsigned long long)peak, budget_held.bytes);
        return -1;
    }
    struct ratel_trainer_stats st;
    ratel_trainer_stats(s->t, &st);
    /* neither the warm-up steps (a cold step is several times slower) nor
     * the steps up to the profiling one (the second: another policy) count */
    s->steps++;
    if (mb_trace_enabled()) {
        char name[32];
        snprintf(name, sizeof(name), "step %lld", s->steps);
        mb_trace_span(mb_trace_lane("step"), name, mb_trace_clock(t0), mb_trace_clock(mb_now()));
    }
    if (iter >= s->run->common.warmup && (before.choice_made || !st.choice_made)) {
        s->timed_steps++;
        s->step_s += st.step_s;
        s->compute_flops += st.gemm_flops_done;
    }
    return 0;
}

/* The reference catches up on the steps the trainer took, then every
 * layer's P32 and P16 must be the same bits. */
static int check(void *state, long long iter, char *msg, size_t len)
{
    (void)iter;
    struct st *s = state;
    while (s->ref_steps < s->steps) {
        double loss;
        tokens_of(s->ref_steps++, s->tok, s->tgt);
        nn_gpt_zero_grad(s->ref);
        if (nn_gpt_forward(s->ref, s->tok, s->tgt, &loss) != 0 || nn_gpt_backward(s->ref) != 0)
            return snprintf(msg, len, "the reference step failed"), 1;
        nn_gpt_adam_step(s->ref, &s->rs, &s->hp, 1.0f);
    }
    int bad = 0;
    for (int i = 0; i < ratel_trainer_layers(s->t) && !bad; i++) {
        uint64_t n = ratel_trainer_layer_params(s->t, i);
        float *p32 = malloc(n * 4);
        uint16_t *p16 = malloc(n * 2);
        if (!p32 || !p16)
            bad = (snprintf(msg, len, "out of memory"), 1);
        else if (ratel_trainer_params(s->t, i, p32, p16, s->err, sizeof(s->err)) != 0)
            bad = (snprintf(msg, len, "%s", s->err), 1);
        else
            for (uint64_t k = 0; k < n && !bad; k++)
                if (memcmp(&p32[k], &s->rs.p[i][k], 4) != 0 ||
                    p16[k] != ((uint16_t *)nn_layer_params(s->ref->layer[i])->data)[k])
                    bad = (snprintf(msg, len, "step %lld: layer %d parameter %llu: P32 %.9g P16 %04x, reference %.9g",
                                   s->steps, i, (unsigned long long)k, p32[k], p16[k], s->rs.p[i][k]), 1);
        free(p32);
        free(p16);
    }
    return bad;
}

/* The link's and the store's counters (the whole run) and how the store
 * is emulated. */
static void record_tiers(struct st *s, struct mb_result *r, const char *cn)
{
    static const char *const dirs[2] = {"h2d", "d2h"};
    for (int d = 0; d < 2; d++) {
        struct mb_link_stats ls;
        char k[64];
        mb_link_stats(ratel_trainer_link(s->t), d, &ls);
        snprintf(k, sizeof(k), "link_%s_bytes", dirs[d]);
        mb_metric_case_int(r, cn, k, (long long)ls.bytes);
        snprintf(k, sizeof(k), "link_%s_busy_s", dirs[d]);
        mb_metric_case_dbl(r, cn, k, ls.busy_s);
    }
    struct mb_ostore *so = ratel_trainer_store(s->t);
    if (so) {
        struct mb_ostore_stats os;
        char emu[300];
        mb_ostore_stats(so, &os);
        mb_metric_case_int(r, cn, "storage_read_bytes", (long long)os.read_bytes);
        mb_metric_case_int(r, cn, "storage_write_bytes", (long long)os.write_bytes);
        mb_metric_case_dbl(r, cn, "storage_read_busy_s", os.read_busy_s);
        mb_metric_case_dbl(r, cn, "storage_write_busy_s", os.write_busy_s);
        mb_metric_case_dbl(r, cn, "storage_io_busy_s", os.io_busy_s);
        mb_metric_case_dbl(r, cn, "optimizer_stall_s", os.stall_s);
        mb_metric_case_int(r, cn, "storage_read_aheads", (long long)os.read_aheads);
        mb_metric_case_int(r, cn, "storage_read_aheads_dropped", (long long)os.read_aheads_dropped);
        mb_ostore_emulation(so, emu, sizeof(emu));
        mb_metric_case_str(r, cn, "storage_emulation", emu[0] ? emu : "none");
    }
}

/* The policy the profiling step chose: the model's T_f/T_b for it at
 * that step's rates, the rates themselves, and Fig. 9b's curve. */
static void record_policy(struct st *s, struct mb_result *r, const char *cn, const struct ratel_trainer_stats *st)
{
    /* the model's T_f/T_b for the choice, at the profiling step's rates */
    struct ratel_model m;
    struct ratel_times tm;
    ratel_trainer_model(s->t, &m);
    ratel_iter_time(&m, &st->hw, st->choice.a_g2m, st->choice.flops_r, &tm);
    mb_metric_case_int(r, cn, "policy_case", st->choice.which_case);
    /* the swap set itself (--swap-set gives it to another run) and where it came from */
    int nu = ratel_gpt_units(&opt.cfg, (int)opt.batch, PREC, NULL, 0);
    unsigned char *sw = calloc((size_t)nu + 1, 1);
    char *hex = malloc((size_t)nu / 4 + 2);
    ratel_trainer_swap(s->t, sw, nu);
    if (sw && hex && ratel_swap_set_format(sw, nu, hex, (size_t)nu / 4 + 2) >= 0)
        mb_metric_case_str(r, cn, "policy_swap_set", hex);
    free(sw);
    free(hex);
    mb_metric_case_str(r, cn, "policy_source", given_set ? "given (--swap-set)" : "profiling step (--act)");
    /* the cores' sharing priced in T_b's compute term (the profiling step) */
    mb_metric_case_dbl(r, cn, "hw_bwd_share_s", st->hw.bwd_share_s);
    /* and the store's tail after backward's last gradient (the profiling step's drain) */
    mb_metric_case_dbl(r, cn, "hw_store_tail_s", st->hw.store_tail_s);
    /* FLOP_r with nothing swapped as the model priced it (recompute by time; 0: by FLOPs) */
    mb_metric_case_dbl(r, cn, "recompute_priced_flops_all", st->recompute_priced_all);
    /* and T_b as the model put it before the sharing was priced */
    struct ratel_hw alone = st->hw;
    struct ratel_times tu;
    alone.bwd_share_s = 0;
    ratel_iter_time(&m, &alone, st->choice.a_g2m, st->choice.flops_r, &tu);
    mb_metric_case_dbl(r, cn, "t_b_predicted_unshared_s", tu.t_b);
    mb_metric_case_dbl(r, cn, "policy_swap_bytes", st->choice.a_g2m);
    /* Eq. 3's alpha A_G2M, priced in T_f (written) and T_b (read) */
    mb_metric_case_dbl(r, cn, "policy_act_storage_bytes", tm.act_storage);
    mb_metric_case_dbl(r, cn, "t_f_predicted_s", tm.t_f);
    mb_metric_case_dbl(r, cn, "t_b_predicted_s", tm.t_b);
    mb_metric_case_str(r, cn, "t_f_bound", ratel_bound_name(tm.bound_f));
    mb_metric_case_str(r, cn, "t_b_bound", ratel_bound_name(tm.bound_b));
    mb_metric_case_dbl(r, cn, "hw_gemm_flops", st->hw.gemm_flops);
    mb_metric_case_dbl(r, cn, "hw_stor_read", st->hw.stor_read);
    mb_metric_case_dbl(r, cn, "hw_stor_write", st->hw.stor_write);
    /* MEM_avail (the host arena's bytes for activations) and the
     * profiling step's transient host bytes it leaves out */
    mb_metric_case_dbl(r, cn, "hw_mem_avail_bytes", st->hw.mem_avail);
    mb_metric_case_int(r, cn, "host_transient_bytes", (long long)st->host_transient);
    /* the CPU-sharing term's inputs (the profiling step) */
    mb_metric_case_dbl(r, cn, "hw_cores", st->hw.cores);
    mb_metric_case_dbl(r, cn, "hw_cpu_per_flop", st->hw.cpu_per_flop);
    mb_metric_case_dbl(r, cn, "hw_cpu_per_link_byte", st->hw.cpu_per_link_byte);
    mb_metric_case_dbl(r, cn, "hw_cpu_store_f_s", st->hw.cpu_store_f);
    mb_metric_case_dbl(r, cn, "hw_cpu_store_b_s", st->hw.cpu_store_b);
    /* Fig. 9b's curve at the profiling step's rates: the model at every
     * prefix of Algorithm 1's walk over nn's recompute groups (the swap
     * sets the trainer runs); this run's own set is policy_swap_bytes
     * with t_f/t_b predicted and measured, the other policies' runs the
     * other measured points (nu: the unit table's length, above) */
    struct ratel_unit *u = malloc((size_t)nu * sizeof(*u));
    struct ratel_point *pts = malloc(((size_t)nu + 1) * sizeof(*pts));
    /* (the units as the policy priced them: recompute by time) */
    if (u)
        ratel_trainer_units(s->t, u, nu);
    int np = u && pts ? ratel_sweep_groups(&m, &st->hw, u, nu, (enum ratel_case1)opt.case1, pts, nu + 1) : -1;
    for (int j = 0; j < np; j++) {
        mb_metric_at_dbl(r, cn, "sweep_swap_bytes", (size_t)j, pts[j].a_g2m);
        mb_metric_at_dbl(r, cn, "sweep_recompute_flops", (size_t)j, pts[j].flops_r);
        mb_metric_at_dbl(r, cn, "sweep_t_f_predicted_s", (size_t)j, pts[j].t.t_f);
        mb_metric_at_dbl(r, cn, "sweep_t_b_predicted_s", (size_t)j, pts[j].t.t_b);
    }
    free(u);
    free(pts);
    if (!s->run->common.quiet)
        printf("#   policy %s: case %d, %.0f bytes swapped (%.0f beyond MEM_avail %.0f to storage: model %.0f, "
               "Eq. 3); T_f predicted %.4f s measured %.4f s, T_b predicted %.4f s measured %.4f s (last step)\n",
               act_label(), st->choice.which_case, st->choice.a_g2m, (double)st->act_stored, st->hw.mem_avail,
               tm.act_storage, tm.t_f, st->fwd_s, tm.t_b, st->bwd_s);
}

static void record(struct st *s)
{
    struct mb_result *r = &s->run->result;
    const char *cn = s->name;
    struct ratel_trainer_stats st;
    ratel_trainer_stats(s->t, &st);
    double tokens = (double)s->timed_steps * (double)opt.batch * (double)opt.cfg.seq;
    mb_metric_case_dbl(r, cn, "tokens_per_s", s->step_s > 0 ? tokens / s->step_s : 0);
    mb_metric_case_dbl(r, cn, "loss_last", st.loss);
    mb_metric_case_dbl(r, cn, "flop_rate", s->step_s > 0 ? s->compute_flops / s->step_s : 0);
    double peer_s, peer = ratel_gemm_peer_rate(&opt.cfg, (int)opt.batch, &peer_s);
    mb_metric_case_dbl(r, cn, "cblas_sgemm_rate", peer);
    mb_metric_case_dbl(r, cn, "flop_rate_of_sgemm", peer > 0 && s->step_s > 0 ? s->compute_flops / s->step_s / peer : 0);
    mb_metric_case_dbl(r, cn, "recompute_flops_last", st.recompute_flops);
    mb_metric_case_int(r, cn, "act_swapped_bytes_last", (long long)st.act_swapped);
    /* of them, host-held ones copied back a layer ahead in backward (the prefetch) */
    mb_metric_case_int(r, cn, "act_prefetched_bytes_last", (long long)st.act_prefetched);
    /* of them, beyond MEM_avail: written to storage in forward, read back in backward */
    mb_metric_case_int(r, cn, "act_storage_bytes_last", (long long)st.act_stored);
    mb_metric_case_int(r, cn, "act_staging_bytes", (long long)st.act_staging);
    mb_metric_case_int(r, cn, "dev_peak_bytes", (long long)st.dev_peak);
    mb_metric_case_int(r, cn, "host_peak_bytes", (long long)st.host_peak);
    mb_metric_case_int(r, cn, "host_beside_bytes", (long long)st.host_beside);
    record_tiers(s, r, cn);
    mb_metric_case_str(r, cn, "recompute_rule",
                       !recomputes()       ? "none (every activation kept)"
                       : recompute_whole() ? "whole forward (DeepSpeed)"
                                           : "steps needed (nn partial)");
    /* forward's read-ahead of optimizer states (the embedding's, then the top layers') */
    mb_metric_case_int(r, cn, "read_ahead_layers", st.read_ahead);
    mb_metric_case_int(r, cn, "read_ahead_bytes", (long long)st.read_ahead_bytes);
    if (st.choice_made)
        record_policy(s, r, cn, &st);
    mb_metric_case_dbl(r, cn, "t_f_measured_s", st.fwd_s);
    mb_metric_case_dbl(r, cn, "t_b_measured_s", st.bwd_s);
    /* with --optimizer serial: storage (and Adam) alone; t_b less it, backward alone */
    mb_metric_case_dbl(r, cn, "t_store_caller_s", st.store_caller_s);
    /* the last step's Adam alone (the store's update callback): naive's model */
    mb_metric_case_dbl(r, cn, "optimizer_update_s", st.update_s);
    mb_metric_case_dbl(r, cn, "step_s_last", st.step_s);
    /* the last step's CPU-seconds: all, the link's threads, the GEMMs */
    mb_metric_case_dbl(r, cn, "cpu_s_last", st.cpu_s);
    mb_metric_case_dbl(r, cn, "cpu_link_s_last", st.cpu_link_s);
    mb_metric_case_dbl(r, cn, "cpu_gemm_s_last", st.cpu_gemm_s);
    /* the last step's backward by what the trainer's thread did: the
     * compute calls, of them the blocks' recompute, the waits for swapped
     * activations (link, storage) and for P16/G16 */
    mb_metric_case_dbl(r, cn, "t_b_compute_s", st.bwd_compute_s);
    mb_metric_case_dbl(r, cn, "t_b_recompute_s", st.bwd_recompute_s);
    mb_metric_case_dbl(r, cn, "t_b_swapin_wait_s", st.bwd_swapin_s);
    mb_metric_case_dbl(r, cn, "t_b_stage_wait_s", st.bwd_stage_s);
    if (!s->run->common.quiet)
        printf("#   backward %.4f s: compute %.4f (recompute %.4f), swap-in waits %.4f, P16/G16 waits %.4f, "
               "in the store %.4f (last step)\n", st.bwd_s, st.bwd_compute_s, st.bwd_recompute_s, st.bwd_swapin_s,
               st.bwd_stage_s, st.store_caller_s);
    if (!s->run->common.quiet)
        printf("#   %.1f tokens/s, %.3g FLOP/s = %.2f of cblas_sgemm's %.3g on the block's GEMMs\n",
               s->step_s > 0 ? tokens / s->step_s : 0, s->step_s > 0 ? s->compute_flops / s->step_s : 0,
               peer > 0 && s->step_s > 0 ? s->compute_flops / s->step_s / peer : 0, peer);
}

static void teardown(void *state)
{
    struct st *s = state;
    if (s->t && s->steps && s->run->rank == 0)
        record(s);
    if (mb_trace_enabled())
        mb_trace_gather(s->run->comm, &s->run->result);
    store_open = NULL;
    ratel_trainer_free(s->t);
    if (budget_on) {
        mb_metric_case_int(&s->run->result, s->name, "budget_peak_bytes", (long long)mb_budget_peak(&budget_held));
        mb_metric_case_str(&s->run->result, s->name, "budget_method", budget_held.method);
        budget_on = 0;
        mb_budget_release(&budget_held);
    }
    if (s->ref) {
        nn_adam_state_free(&s->rs);
        nn_gpt_free(s->ref);
    }
    free(s->tok);
    free(s->tgt);
    free(s);
    free(given_set);
    given_set = NULL;
}

static const struct mb_bench bench = {
    .name = "mb-ratel",
    .description = "Ratel: GPT fine-tuning with model states on storage, activations swapped or recomputed (emulated device)",
    .opts = ratel_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
};

int main(int argc, char **argv) { return mb_main(&bench, argc, argv); }
