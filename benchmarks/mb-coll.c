/* mb-coll: collective latency and bandwidth, OSU/nccl-tests style.
 * Sizes follow nccl-tests: SIZE is the largest buffer (allgather's output,
 * reduce_scatter's input, alltoall's per-rank send); counts for the
 * partitioned collectives are rounded down to a multiple of the ranks.
 * Every iteration gets fresh data that varies by rank, index, iteration
 * and seed, chosen so reductions are exact in every dtype, and every
 * output element is checked. */
#include "harness/harness.h"
#include "../collectives/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The collectives: the library's (enum mb_coll_kind, mb_coll_kind_names),
 * then two only the MPI library runs here. */
enum { ALLTOALL = MB_COLL_NKIND, BARRIER, NCOLL };
static const char *coll_name(int c)
{
    return c < MB_COLL_NKIND ? mb_coll_kind_names[c] : c == ALLTOALL ? "alltoall" : "barrier";
}
/* Algorithms: the collectives library's registry, in its order (index 0 is
 * `mpi`, the MPI library's own); the --algo choices are built from it in
 * main(), and --coll's, --dtype's and --op's from the library's names. */
typedef int algo_t;
#define MAX_ALGOS 32
static const char *algo_names[MAX_ALGOS];
static size_t nalgos;
static char algo_choices[512], coll_choices[256], dtype_choices[128], op_choices[64];
/* `auto`: after the registry's names (outside `all`); each case runs the
 * algorithm the cost model predicts fastest. */
static algo_t algo_auto;

static struct {
    unsigned colls, dtypes, ops, algos;
    int inplace; /* --inplace's choice: 0 no, 1 yes, 2 both (mb_coll_forms) */
    long long root;
    long long ranks_per_node;
    char *pool_path;
    int calibrate, calibrate_net;
    char *profile;
    long long heldout, heldout_points;
} opt;

static struct mb_opt coll_opts[] = {
    {"coll", 0, MB_OPT_LIST, &opt.colls, "allreduce", coll_choices, 0, 0,
     "collectives to measure", "LIST"},
    {"dtype", 0, MB_OPT_LIST, &opt.dtypes, "float", dtype_choices, 0, 0,
     "element types", "LIST"},
    {"op", 0, MB_OPT_LIST, &opt.ops, "sum", op_choices, 0, 0,
     "reduction operations (reducing collectives)", "LIST"},
    {"inplace", 0, MB_OPT_CHOICE, &opt.inplace, "no", "no|yes|both", 0, 0,
     "run in place (MPI_IN_PLACE), out of place, or both", "WHEN"},
    {"algo", 0, MB_OPT_LIST, &opt.algos, "mpi", algo_choices, 0, 0,
     "algorithms (collectives/ registry; all: every one but auto); mpi is the MPI library's own; "
     "auto: the cost model's pick per case", "LIST"},
    {"ranks-per-node", 0, MB_OPT_INT, &opt.ranks_per_node, "0", NULL, 0, 1 << 30,
     "split the ranks into \"nodes\" of this many consecutive ranks (0: the real nodes)", "N"},
    {"pool-path", 0, MB_OPT_STR, &opt.pool_path, NULL, NULL, 0, 0,
     "memory pool of --algo pool: a file, DAX device or directory (default: a new file in /dev/shm)", "PATH"},
    {"root", 0, MB_OPT_INT, &opt.root, "0", NULL, 0, 1 << 30, "root rank of bcast and reduce", "RANK"},
    {"calibrate", 0, MB_OPT_FLAG, &opt.calibrate, "0", NULL, 0, 0,
     "measure the cost model's parameters here, write them to --profile and exit", NULL},
    {"calibrate-net", 0, MB_OPT_FLAG, &opt.calibrate_net, "0", NULL, 0, 0,
     "measure the inter-node link's terms across machines, add them to --profile and exit", NULL},
    {"profile", 0, MB_OPT_STR, &opt.profile, NULL, NULL, 0, 0,
     "cost-model profile for the model column and --algo auto (default: profiles/<host>.txt)", "FILE"},
    {"heldout", 0, MB_OPT_INT, &opt.heldout, "-1", NULL, -1, 1LL << 62, "validate the model at sizes drawn with "
     "this seed from the held-out grid, never the calibration's (-1: off; replaces -b/-e/--sizes)", "SEED"},
    {"heldout-points", 0, MB_OPT_INT, &opt.heldout_points, "6", NULL, 1, 48, "sizes --heldout draws", "N"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"coll", "algo", "dtype", "op", "inplace", NULL};

/* What one case measures (mb_case.user). */
struct coll_case {
    int coll;                /* enum mb_coll_kind, ALLTOALL or BARRIER */
    enum mb_coll_dtype dtype;
    enum mb_coll_op op;
    int inplace;
    algo_t algo;
    algo_t pick;  /* what runs: algo, or the model's choice for auto */
    size_t count; /* elements of the largest buffer */
};

struct coll_state {
    struct mb_run *run;
    const struct coll_case *cc;
    struct mb_coll_vcase vc;    /* buffers, inputs, expected outputs, test fault (collectives/vcase.c) */
    int device;                 /* buffers live on the CUDA device, staged through pinned host */
    struct mb_cuda_timer timer; /* device runs: CUDA events bracket copies and the MPI call */
};

/* ---- the collectives library ---------------------------------------- */

static struct mb_coll_ctx *ctx_world;

static void ctx_delete(void *arg)
{
    (void)arg;
    mb_coll_ctx_free(ctx_world); /* the harness's hook before MPI_Finalize */
    ctx_world = NULL;
}

/* The context of MPI_COMM_WORLD, created on first use (collective). */
static struct mb_coll_ctx *coll_ctx(void)
{
    if (ctx_world)
        return ctx_world;
    char err[256];
    ctx_world = mb_coll_ctx_create(MPI_COMM_WORLD, (int)opt.ranks_per_node, err, sizeof(err));
    if (!ctx_world)
        mb_die(1, "collectives: %s", err);
    /* failure: `pool` reports itself unavailable; an explicit --pool-path is checked in validate */
    mb_coll_pool_open(ctx_world, opt.pool_path);
    if (mb_finalize_add(ctx_delete, NULL) != 0)
        mb_die(1, "collectives: no room for the context's clean-up");
    return ctx_world;
}

/* The registry entry of algorithm a; NULL for auto. */
static const struct mb_coll_algo *lib_algo(algo_t a) { return mb_coll_algo_at((size_t)a); }
#define ALGO_MPI 0 /* the registry's first entry: the MPI library's own */

static int is_reduction(int c) { return c == MB_COLL_ALLREDUCE || c == MB_COLL_REDUCE_SCATTER || c == MB_COLL_REDUCE; }
static int is_partitioned(int c) { return c == MB_COLL_REDUCE_SCATTER || c == MB_COLL_ALLGATHER || c == ALLTOALL; }

/* The library call of a case (count as in mb_coll_args). */
static struct mb_coll_args case_args(const struct coll_case *cc, int p, const void *send, void *recv)
{
    return mb_coll_case_args((enum mb_coll_kind)cc->coll, cc->count, p, cc->inplace, cc->dtype, cc->op,
                             (int)opt.root, send, recv);
}

/* ---- the cost model (collectives/model.c) ----------------------------- */

static struct mb_coll_profile profile;
static int have_profile;
static char profile_path[1024];
static struct mb_coll_shape shape;

/* Before any work: --calibrate's profile must be writable; otherwise the
 * profile loads (collectives/profile_load.c). A missing default profile
 * only leaves the model column NaN, unless auto needs it; a named or
 * malformed one is an error. */
static int load_profile(struct mb_run *run)
{
    char err[1500];
    int needed = opt.profile || (opt.algos & (1u << algo_auto)) || opt.heldout >= 0 || opt.calibrate_net;
    if (opt.calibrate && opt.calibrate_net) {
        if (run->rank == 0)
            mb_warn("--calibrate-net: not with --calibrate (calibrate on one node first, then across machines)");
        return MB_EXIT_USAGE;
    }
    int state = mb_coll_profile_load(run->comm, opt.profile, needed, opt.calibrate, profile_path,
                                     sizeof(profile_path), &profile, err, sizeof(err));
    if (state < 0 && run->rank == 0)
        mb_warn("%s", err);
    if (state < 0)
        return MB_EXIT_USAGE;
    have_profile = state;
    if (!have_profile && !opt.calibrate && run->rank == 0 && !run->common.quiet)
        printf("# no cost-model profile %s: the model column is NaN (mb-coll --calibrate makes one)\n",
               profile_path);
    return 0;
}

/* --calibrate (the node's terms) or --calibrate-net (the link's): measures and writes the profile. */
static int calibrate(struct mb_run *run)
{
    int rc = mb_coll_calibrate_run(coll_ctx(), opt.calibrate_net, profile_path, &profile, run->argc, run->argv,
                                   run->common.quiet ? NULL : stdout);
    if (rc == MB_COLL_CALIBRATE_FAILED) { /* a failed measurement (agreed on every rank): exit 1, no profile */
        MPI_Finalize();
        exit(1);
    }
    return rc ? MB_EXIT_USAGE : MB_PLAN_DONE;
}

/* auto: the registry index of the model's pick for this case (collective). */
static algo_t auto_pick(const struct coll_case *cc, int p)
{
    if (cc->coll >= MB_COLL_NKIND)
        return ALGO_MPI; /* only mpi implements it */
    static char dummy;
    struct mb_coll_args a = case_args(cc, p, &dummy, &dummy);
    const struct mb_coll_algo *al = mb_coll_pick(&profile, coll_ctx(), &a, 1, NULL);
    return al ? (algo_t)mb_coll_index(al) : ALGO_MPI;
}

static double model(struct mb_run *run, const struct mb_case *c)
{
    const struct coll_case *cc = c->user;
    if (!have_profile || cc->coll >= MB_COLL_NKIND)
        return NAN;
    static char dummy;
    struct mb_coll_args a = case_args(cc, run->nranks, &dummy, &dummy);
    return mb_coll_model(&profile, algo_names[cc->pick], &a, &shape);
}

/* Batched timing (--agg-iters): at most MAX_BATCH iterations' buffers, and at
 * most BATCH_BYTES of each buffer, per case. A call short enough to batch
 * moves little data, so the sets of an 8 B case take a few KiB. */
#define MAX_BATCH 256
#define BATCH_BYTES ((size_t)4 << 20)

/* ---- cases ------------------------------------------------------------ */

/* The sizes of the run: -b/-e/--sizes, or the held-out draw (malloc'd). */
static size_t *points(struct mb_run *run, size_t *n)
{
    if (opt.heldout < 0)
        return mb_sizes(&run->common, n);
    size_t *s = malloc(sizeof(size_t) * (size_t)opt.heldout_points);
    if (!s)
        mb_die(1, "out of memory drawing the held-out sizes");
    *n = mb_coll_heldout_draw((uint64_t)opt.heldout, (size_t)opt.heldout_points, s);
    return s;
}

/* Every case's element count must fit MPI's count type (int), and its
 * bytes the library algorithms' byte counts (int as well). */
static int check_counts(struct mb_run *run)
{
    size_t nsizes, *sizes = points(run, &nsizes);
    int bad = 0;
    for (size_t k = 0; k < nsizes && !bad; k++)
        for (int d = 0; d < MB_COLL_NDTYPE && !bad; d++) {
            char why[300], sz[32];
            if (!(opt.dtypes & (1u << d)) || mb_coll_count_fits(sizes[k], d, (opt.algos & ~1u) != 0, why,
                                                                sizeof(why)) == 0)
                continue; /* the library's algorithms pass byte counts */
            mb_format_size(sizes[k], sz, sizeof(sz));
            if (run->rank == 0)
                mb_warn("%s: %s%s", run->common.sizes ? "--sizes" : "-e/--maxbytes", sz, why);
            bad = 1;
        }
    free(sizes);
    return bad ? MB_EXIT_USAGE : 0;
}

static int validate(struct mb_run *run)
{
    if (opt.root >= run->nranks) {
        if (run->rank == 0)
            mb_warn("--root: %lld is not a rank (accepts 0 to %d)", opt.root, run->nranks - 1);
        return MB_EXIT_USAGE;
    }
    if (check_counts(run))
        return MB_EXIT_USAGE;
    if (opt.pool_path && !opt.calibrate) { /* a path the user named must be usable, before any work */
        const char *why = mb_coll_pool_error(coll_ctx());
        if (why[0]) {
            if (run->rank == 0)
                mb_warn("%s", why);
            return MB_EXIT_USAGE;
        }
    }
    return load_profile(run);
}

static void add_case(struct mb_run *run, size_t *cap, const struct coll_case *proto, size_t count)
{
    for (size_t k = 0; k < run->ncases; k++) { /* a size listed twice runs once */
        const struct coll_case *o = run->cases[k].user;
        if (o->coll == proto->coll && o->dtype == proto->dtype && o->op == proto->op &&
            o->inplace == proto->inplace && o->algo == proto->algo && o->count == count)
            return;
    }
    struct coll_case *cc = malloc(sizeof(*cc));
    if (mb_grow((void **)&run->cases, cap, run->ncases + 1, sizeof(*run->cases)) != 0 || !cc)
        mb_die(1, "out of memory planning the cases");
    struct mb_case *c = &run->cases[run->ncases++];
    memset(c, 0, sizeof(*c));
    *cc = *proto;
    cc->count = count;
    cc->pick = cc->algo == algo_auto ? auto_pick(cc, run->nranks) : cc->algo;
    c->user = cc;
    int red = is_reduction(cc->coll), bar = cc->coll == BARRIER;
    const char *dt = bar ? "-" : mb_coll_dtype_names[cc->dtype];
    const char *op = red ? mb_coll_op_names[cc->op] : "-";
    const char *ip = bar ? "-" : cc->inplace ? "inplace" : "oop";
    const char *labels[] = {coll_name(cc->coll), algo_names[cc->algo], dt, op, ip}; /* label_names' order */
    memcpy(c->labels, labels, sizeof(labels));
    c->count = count;
    c->bytes = count * (bar ? 0 : mb_coll_dtype_size(cc->dtype));
    /* batched timing: up to BATCH_BYTES of every buffer kind held at once */
    size_t fit = BATCH_BYTES / (c->bytes ? c->bytes : 1);
    c->max_batch = run->common.device == MB_DEV_CUDA ? 1 : fit < 1 ? 1 : fit > MAX_BATCH ? MAX_BATCH : (int)fit;
    snprintf(c->name, sizeof(c->name), "%s/%s/%s/%s/%s/%llu", coll_name(cc->coll), dt, op, ip,
             algo_names[cc->algo], (unsigned long long)c->bytes);
    snprintf(c->group, sizeof(c->group), "%s  dtype=%s op=%s %s algo=%s  ranks=%d", coll_name(cc->coll),
             dt, op, bar ? "" : cc->inplace ? "in-place" : "out-of-place", algo_names[cc->algo],
             run->nranks);
}

static void plan_sizes(struct mb_run *run, size_t *cap, const struct coll_case *proto)
{
    if (proto->coll == BARRIER) {
        add_case(run, cap, proto, 0);
        return;
    }
    size_t nsizes, p = (size_t)run->nranks;
    size_t *sizes = points(run, &nsizes);
    for (size_t k = 0; k < nsizes; k++) {
        size_t count = sizes[k] / mb_coll_dtype_size(proto->dtype);
        if (is_partitioned(proto->coll))
            count = count / p * p;
        add_case(run, cap, proto, count); /* sizes that round to the same count run once */
    }
    free(sizes);
}

/* Memory bandwidth of this machine, measured in this run for mem_busbw:
 * every rank copies a buffer of the largest size at once. */
static void measure_memcpy(struct mb_run *run)
{
    size_t nsizes, *sizes = points(run, &nsizes), bytes = mb_coll_largest(sizes, nsizes);
    free(sizes);
    mb_metric_run_dbl(&run->result, "memcpy_GBps",
                      mb_coll_memcpy_gbps(run->comm, bytes, run->common.quiet ? NULL : stdout));
}

/* One line per auto section: size:pick. */
static void print_picks(struct mb_run *run)
{
    const char *group = NULL;
    for (size_t k = 0; k < run->ncases && run->rank == 0 && !run->common.quiet; k++) {
        const struct coll_case *cc = run->cases[k].user;
        char sz[32];
        mb_format_size(run->cases[k].bytes, sz, sizeof(sz));
        if (cc->algo == algo_auto)
            mb_coll_print_pick(stdout, &group, run->cases[k].group, sz, algo_names[cc->pick]);
    }
    mb_coll_print_pick(stdout, &group, NULL, NULL, NULL);
}

/* The root `emulation` attribute: fake nodes (--ranks-per-node) and the
 * pool's backing when pool or auto runs; "none" otherwise. */
static void describe_emulation(struct mb_run *run)
{
    static char emulation[1200];
    const struct mb_coll_algo *pool = mb_coll_find("pool");
    int pool_used = (opt.algos & (1u << algo_auto)) || (pool && (opt.algos & (1u << mb_coll_index(pool))));
    run->emulation = mb_coll_describe_emulation(coll_ctx(), (int)opt.ranks_per_node, pool_used, emulation,
                                                sizeof(emulation)) ? emulation : "none";
}

static int plan(struct mb_run *run)
{
    size_t cap = 0;
    if (opt.calibrate || opt.calibrate_net)
        return calibrate(run);
    if (have_profile) /* where the cases run, for the model */
        mb_coll_model_shape(coll_ctx(), &shape);
    if (opt.algos & ~1u) {
        measure_memcpy(run);
        const char *pb = mb_coll_pool_backing(coll_ctx());
        mb_metric_run_str(&run->result, "pool_backing", pb[0] ? pb : "none");
        mb_metric_run_int(&run->result, "nodes", mb_coll_ctx_nnodes(coll_ctx()));
    }
    for (int a = 0; a <= algo_auto; a++) { /* the registry, then auto */
        if (!(opt.algos & (1u << a)))
            continue;
        const struct mb_coll_algo *la = lib_algo(a);
        for (int c = 0; c < NCOLL; c++) {
            if (!(opt.colls & (1u << c)))
                continue;
            if (c >= MB_COLL_NKIND) { /* alltoall, barrier: the MPI library's own, for mpi and auto */
                if (la && a != ALGO_MPI)
                    continue;
            } else if (la) { /* all/lists run what each algorithm implements, and say what is unavailable */
                char why[256];
                int r = mb_coll_runnable(la, coll_ctx(), c, run->common.device == MB_DEV_CUDA, why, sizeof(why));
                if (r < 0 && run->rank == 0 && !run->common.quiet)
                    mb_warn("--algo %s: unavailable for %s: %s", la->name, coll_name(c), why);
                if (r <= 0)
                    continue;
            }
            struct mb_coll_form f[MB_COLL_NDTYPE * MB_COLL_NOP * 2] = {{MB_COLL_FLOAT, MB_COLL_SUM, 0}};
            size_t nf = c == BARRIER ? 1 /* no data: one case */
                                     : mb_coll_forms(is_reduction(c), c == MB_COLL_BCAST, opt.dtypes, opt.ops,
                                                     opt.inplace, f);
            for (size_t i = 0; i < nf; i++) {
                struct coll_case proto = {c, f[i].dtype, f[i].op, f[i].inplace, a, a, 0};
                plan_sizes(run, &cap, &proto);
            }
        }
    }
    print_picks(run);
    describe_emulation(run);
    return 0;
}

/* ---- set-up, iteration, check ----------------------------------------- */

/* What the output of collective c holds. */
static enum mb_coll_layout layout(int c)
{
    static const enum mb_coll_layout l[NCOLL] = {
        [MB_COLL_ALLREDUCE] = MB_COLL_OUT_REDUCED, [MB_COLL_REDUCE_SCATTER] = MB_COLL_OUT_REDUCED_BLOCK,
        [MB_COLL_ALLGATHER] = MB_COLL_OUT_GATHERED, [MB_COLL_BCAST] = MB_COLL_OUT_ROOT,
        [MB_COLL_REDUCE] = MB_COLL_OUT_REDUCED_ROOT, [ALLTOALL] = MB_COLL_OUT_EXCHANGED, [BARRIER] = MB_COLL_OUT_NONE};
    return l[c];
}

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    struct coll_state *s = calloc(1, sizeof(*s));
    *state = s;
    s->run = run;
    s->cc = c->user;
    s->device = run->common.device == MB_DEV_CUDA;
    char err[300];
    if (s->device && mb_cuda_timer_init(&s->timer, err, sizeof(err)) != 0) {
        mb_warn("%s", err);
        return -1;
    }
    const struct mb_coll_algo *la = lib_algo(s->cc->pick);
    if (mb_coll_vcase_init(&s->vc, coll_ctx(), layout(s->cc->coll), s->cc->op, s->cc->dtype, s->cc->count,
                           (int)opt.root, s->cc->inplace, (uint64_t)run->common.seed, (size_t)c->max_batch,
                           la && la->wants_registered, s->device, mb_fault(), err, sizeof(err)) != 0) {
        mb_warn("%s", err);
        return -1;
    }
    return 0;
}

static void prepare(void *state, long long iter) { mb_coll_vcase_prepare(&((struct coll_state *)state)->vc, iter); }

/* One call of the case: the registry's algorithm (mpi's entry included),
 * or the MPI library's own alltoall and barrier, which the collectives
 * library does not have. */
static int run_case(struct coll_state *s)
{
    const struct coll_case *cc = s->cc;
    const struct mb_coll_vcase *v = &s->vc;
    if (cc->coll < MB_COLL_NKIND) {
        const struct mb_coll_algo *la = lib_algo(cc->pick);
        int dev = la->device && s->device; /* device algorithms take the device buffers, unstaged */
        struct mb_coll_args a = case_args(cc, s->run->nranks, dev ? v->bufs.dsend.ptr : v->send,
                                          dev ? v->bufs.drecv.ptr : v->recv);
        return la->run(coll_ctx(), &a);
    }
    MPI_Datatype t = mb_coll_mpi_dtype(cc->dtype);
    if (cc->coll == ALLTOALL)
        return MPI_Alltoall(cc->inplace ? MPI_IN_PLACE : v->send, (int)v->blk, t, v->recv, (int)v->blk, t,
                            MPI_COMM_WORLD);
    return MPI_Barrier(MPI_COMM_WORLD);
}

static int iterate(void *state, long long iter, double *elapsed)
{
    struct coll_state *s = state;
    struct mb_coll_vcase *v = &s->vc;
    if (s->cc->coll != BARRIER)
        mb_coll_vcase_select(v, iter);
    const struct mb_coll_algo *la = lib_algo(s->cc->algo);
    int staged = s->device && !(la && la->device); /* pinned staging around a host algorithm */
    if (s->device)
        mb_cuda_timer_start(&s->timer);
    if (staged)
        mb_coll_vcase_stage(v, 1);
    int rc = run_case(s);
    if (staged)
        mb_coll_vcase_stage(v, 0);
    if (s->device)
        *elapsed = mb_cuda_timer_stop(&s->timer);
    if (v->rank == v->fault_rank && iter == s->run->common.warmup) {
        /* Test-only fault: one output element of a call of the first timed
         * sample, the call at a seeded random position of its block */
        const struct coll_case *cc = s->cc;
        long long k = s->run->batch > 0 ? s->run->batch : 1;
        v->fault_iter = iter + mb_coll_fault_call((uint64_t)s->run->common.seed, cc->count, cc->coll, (int)cc->dtype,
                                                  cc->algo, (int)cc->op, cc->inplace, k);
        mb_warn("fault injection: rank %d corrupts iteration %lld (call %lld of %lld in the first timed sample)",
                v->rank, v->fault_iter, v->fault_iter - iter + 1, k);
    }
    mb_coll_vcase_fault(v, iter, mb_fault());
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int check(void *state, long long iter, char *msg, size_t mlen)
{
    return mb_coll_vcase_verify(&((struct coll_state *)state)->vc, iter, msg, mlen);
}

static void teardown(void *state)
{
    struct coll_state *s = state;
    mb_coll_vcase_free(&s->vc);
    if (s->device)
        mb_cuda_timer_free(&s->timer);
    free(s);
}

/* nccl-tests' bus-bandwidth factors (PERFORMANCE.md there). */
static double busbw_factor(struct mb_run *run, const struct mb_case *c)
{
    const struct coll_case *cc = c->user;
    double p = run->nranks;
    switch (cc->coll) {
    case MB_COLL_ALLREDUCE: return 2 * (p - 1) / p;
    case MB_COLL_REDUCE_SCATTER: case MB_COLL_ALLGATHER: case ALLTOALL: return (p - 1) / p;
    case MB_COLL_BCAST: case MB_COLL_REDUCE: return 1;
    default: return 0;
    }
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    mb_kv_str(cfg, "size_semantics", "nccl-tests: largest buffer in bytes; partitioned counts rounded down to a multiple of nranks");
    if (run->common.device == MB_DEV_CUDA)
        mb_kv_str(cfg, "cuda_staging", "device buffers copied through pinned host memory around the MPI call (timed); "
                                       "nccl and cuda-ipc work on the device buffers, unstaged");
    mb_kv_str(cfg, "model_profile", have_profile ? profile_path : "none");
    if (!have_profile)
        return;
    mb_kv_str(cfg, "model_profile_date", profile.date);
    /* the link's terms the predictions across machines used (nan: not calibrated: not modelled there) */
    mb_kv_dbl(cfg, "model_net_alpha_s", profile.net_alpha);
    mb_kv_dbl(cfg, "model_net_s_per_B", profile.net_beta);
    struct mb_coll_metric v[8]; /* the validation protocol: which set these points are in */
    int split = shape.nnodes > 1 ? shape.node_size : 0; /* real nodes or a --ranks-per-node split */
    size_t n, *sizes = points(run, &n), nv = mb_coll_validation_values(&profile, sizes, n, run->nranks, split,
                                                                  opt.heldout, v);
    for (size_t i = 0; i < nv; i++)
        v[i].type == MB_COLL_METRIC_INT ? mb_kv_int(cfg, v[i].name, v[i].i) : mb_kv_str(cfg, v[i].name, v[i].str);
    free(sizes);
}

/* ---- after the run: the model against the measurements (collectives/report.c) */

static void finish(struct mb_run *run)
{
    if (run->rank != 0 || !have_profile)
        return;
    /* cases that differ only in the algorithm share a key: coll, dtype, op, in place, bytes, count */
    struct mb_result *r = &run->result;
    struct mb_coll_obs *obs = calloc(r->ncases + 1, sizeof(*obs));
    if (!obs)
        mb_die(1, "out of memory reporting the model");
    for (size_t k = 0; k < r->ncases; k++) {
        const struct mb_case_result *cr = &r->cases[k];
        obs[k] = (struct mb_coll_obs){cr->name, cr->labels[1], NULL, "", cr->stats.median, cr->model_s};
        snprintf(obs[k].key, sizeof(obs[k].key), "%s/%s/%s/%s/%zu/%zu", cr->labels[0], cr->labels[2],
                 cr->labels[3], cr->labels[4], (size_t)cr->bytes, (size_t)cr->count);
        for (size_t j = 0; j < run->ncases && !obs[k].pick; j++)
            if (strcmp(run->cases[j].name, cr->name) == 0)
                obs[k].pick = algo_names[((const struct coll_case *)run->cases[j].user)->pick];
    }
    struct mb_coll_auto_report rep;
    struct mb_coll_metric m[MAX_ALGOS + 10];
    size_t nm = mb_coll_report(obs, r->ncases, run->common.quiet ? NULL : stdout, &rep, m);
    for (size_t i = 0; i < nm; i++)
        m[i].type == MB_COLL_METRIC_STR   ? mb_metric_run_str(r, m[i].name, m[i].str)
        : m[i].type == MB_COLL_METRIC_INT ? mb_metric_run_int(r, m[i].name, m[i].i)
                                          : mb_metric_run_dbl(r, m[i].name, m[i].dbl);
    free(rep.picks);
    free(obs);
}

static const struct mb_bench bench = {
    .name = "mb-coll",
    .description = "Latency and bandwidth of MPI collectives, validated element by element.",
    .opts = coll_opts,
    .label_names = label_names,
    .max_batch = MAX_BATCH,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .busbw_factor = busbw_factor,
    .model = model,
    .teardown = teardown,
    .finish = finish,
};

int main(int argc, char **argv)
{
    /* --algo's choices are the registry's names, in its order */
    nalgos = mb_coll_nalgos() < MAX_ALGOS - 1 ? mb_coll_nalgos() : MAX_ALGOS - 1;
    for (size_t i = 0; i < nalgos; i++)
        algo_names[i] = mb_coll_algo_at(i)->name;
    mb_coll_join_names(algo_choices, sizeof(algo_choices), algo_names, nalgos);
    algo_auto = (algo_t)nalgos;
    algo_names[nalgos] = "auto";
    snprintf(algo_choices + strlen(algo_choices), sizeof(algo_choices) - strlen(algo_choices), ";auto");
    const char *colls[NCOLL];
    for (int c = 0; c < NCOLL; c++)
        colls[c] = coll_name(c);
    mb_coll_join_names(coll_choices, sizeof(coll_choices), colls, NCOLL);
    mb_coll_join_names(dtype_choices, sizeof(dtype_choices), mb_coll_dtype_names, MB_COLL_NDTYPE);
    mb_coll_join_names(op_choices, sizeof(op_choices), mb_coll_op_names, MB_COLL_NOP);
    return mb_main(&bench, argc, argv);
}
