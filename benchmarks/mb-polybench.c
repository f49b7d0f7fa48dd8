/* mb-polybench: DaCe's distributed polybench (SC'21) in C/MPI, one case per
 * kernel x variant at this run's P (polybench/polybench.h holds the
 * kernels, sizes and grids). Sizes follow DaCe's weak-scaling rule
 * (adjust_size) unless --dims names them; the grid is DaCe's table or
 * --grid. Timing as DaCe: warm-up, then barrier, call, barrier; the
 * harness keeps the slowest rank per iteration and every sample. Each
 * call is checked against the serial double reference of every rank's
 * block. Model: max(FLOPs at the dgemm rate (a product kernel's: of its own local
 * dgemm shapes at this P), read bytes at the read-stream
 * rate + written bytes at the memcpy rate, all measured with all ranks at
 * once: the run's 384^3 dgemm, memcpy and read-stream rates at the start
 * of this run (when a chosen case uses them); every rate of one case (a
 * product's dgemm rate, a stencil's sweep and working-set copy rate) in
 * the case's set-up, right before its samples; the stencils: their cells
 * at their own sweep's rate, bytes at their working set's copy rate) plus
 * mb_coll_model for the registry calls and alpha + bytes * beta (the
 * profile's p2p terms) per halo exchange. A matrix-vector case's model is
 * its own local compute (its call without the communication, on its own
 * block), timed in its set-up right before its samples, plus the same
 * communication terms. */
#include "harness/harness.h"
#include "../polybench/polybench.h"

#include <cblas.h>
#include <omp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    unsigned kernels, variants;
    char *grid, *dims, *algo, *profile;
    char *scale_down;
    long long blas_threads;
    int mode, preset, summa_bcast;
} opt;

enum { MODE_DISTRIBUTED, MODE_SHARED };

static struct mb_pb_names nm; /* what --kernel and --variant choose among (polybench.h) */

static const struct mb_opt pb_opts[] = {
    {"kernel", 0, MB_OPT_LIST, &opt.kernels, "all", nm.kernel_choices, 0, 0,
     "kernels to run (all: every kernel of the mode)", "LIST"},
    {"mode", 0, MB_OPT_CHOICE, &opt.mode, "distributed", "distributed|shared", 0, 0,
     "distributed: DaCe's MPI kernels; shared: NPBench's kernels with OpenMP threads on one rank", "MODE"},
    {"preset", 0, MB_OPT_CHOICE, &opt.preset, "S", "S|M|L|paper", 0, 0,
     "--mode shared: NPBench's bench_info sizes", "P"},
    {"variant", 0, MB_OPT_LIST, &opt.variants, "all", nm.variant_choices, 0, 0,
     "variants to run: summa (SUMMA, broadcasts as --summa-bcast says) or pblas (ScaLAPACK pdgemm) for gemm, k2mm, k3mm; "
     "allreduce (registry reductions) or pblas (pdgemv) for atax, bicg, gemver, gesummv, mvt; the others have one "
     "each (all: pblas only when built with ScaLAPACK); --mode shared: naive (NumPy's temporaries materialised) "
     "and/or fused (all: both)", "LIST"},
    {"grid", 0, MB_OPT_STR, &opt.grid, NULL, NULL, 0, 0,
     "process grid PxQ (P*Q ranks); default DaCe's table for 1, 2, 4 ... 256 ranks", "PxQ"},
    {"scale-down", 0, MB_OPT_STR, &opt.scale_down, "1", NULL, 0, 0,
     "divide DaCe's base sizes and TSTEPS by F (rounded up) before scaling with P (100: DaCe's validation sizes; "
     "F in [0.01, 1e9], below 1 larger than DaCe's); F,KERNEL=F,...: another F for the kernels named", "SPEC"},
    {"dims", 0, MB_OPT_STR, &opt.dims, NULL, NULL, 0, 0,
     "global sizes as given, no scaling (one kernel; its dims in order, then TSTEPS for stencils)", "D1,D2,..."},
    {"algo", 0, MB_OPT_STR, &opt.algo, "mpi", NULL, 0, 0,
     "collectives registry algorithm for the broadcasts and reductions, or NAME,NAME: each kind takes the first "
     "that implements it (binomial,rd: both modelled; mpi, Open MPI's choice, is not)", "LIST"},
    {"summa-bcast", 0, MB_OPT_CHOICE, &opt.summa_bcast, "overlap", "overlap|registry", 0, 0,
     "summa's panel broadcasts, both through --algo's broadcast: overlap (the next panel's as the registry's "
     "nonblocking broadcast while the current panel's dgemm runs; mpi, binomial or scatter-allgather) or registry "
     "(blocking)", "HOW"},
    {"blas-threads", 0, MB_OPT_INT, &opt.blas_threads, "1", NULL, 0, 256,
     "OpenBLAS threads per rank (0: OpenBLAS's default; DaCe's setup: one rank per core, 1)", "N"},
    {"profile", 0, MB_OPT_STR, &opt.profile, NULL, NULL, 0, 0,
     "cost-model profile for the communication terms (default: profiles/<host>.txt)", "FILE"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const char *const label_names[] = {"kernel", "variant", "P", "grid", "sizes", NULL};

struct pb_case {
    const struct mb_pb_kernel *k;
    struct mb_pb_sizes s;
    char sizes[128];
    double ws;               /* working set per rank */
    double copy_bytes_s;     /* stencils: its copy rate (the model prices their bytes at it; calibrated in set-up) */
    double cells_s;          /* stencils: the model's loop rate, cells/s per rank (calibrated in set-up) */
    double flops_s;          /* the model's FLOP rate per rank: the products', of their own shapes (calibrated in
                              * set-up), else the run's 384^3 dgemm rate */
    double local_s;          /* the matrix-vector kernels: seconds of one call's local compute, per rank (timed in
                              * set-up, k->local_time); NaN elsewhere */
};

static int px, py;
static struct pb_case pcases[32];
static struct mb_pb_grid grid;
static int have_grid;
static double dgemm_flops_s, memcpy_bytes_s, read_bytes_s; /* per rank, all ranks at once */
static struct mb_coll_profile profile;
static int have_profile;
static char grid_str[32], p_str[16];
static struct mb_coll_shape axis_shape[2]; /* of the row and column communicators (collective to measure) */

static int fault_is(const char *name) { return mb_fault() && strcmp(mb_fault(), name) == 0; }

/* ===== --mode shared: NPBench's protocol on one rank =====================
 * Cases kernel x variant at a preset; the warm-up's first call is
 * validated (every call is), the timed calls are the samples, and finish
 * adds NPBench's bootstrap CI of the median and the best variant. */

static struct mb_pbs_case scases[64];
static size_t nscases;
static struct mb_pbs_pool sh_pool; /* one instance per kernel, shared by its variants */
static char omp_str[32];

static int sh_validate(struct mb_run *run)
{
    char err[512] = "";
    const struct mb_pbs_kernel *ks[32];
    size_t nk = 0;
    unsigned dist_all = (1u << nm.ndist_kernels) - 1, dist_variants = (1u << nm.ndist_variants) - 1;
    if (run->nranks != 1)
        snprintf(err, sizeof(err), "--mode shared: runs on one rank (OpenMP threads do the work), not %d",
                 run->nranks);
    else if (opt.grid)
        snprintf(err, sizeof(err), "--grid: only with --mode distributed");
    else if (opt.kernels == dist_all) /* "all" */
        for (size_t i = 0; i < mb_pbs_nkernels(); i++)
            ks[nk++] = mb_pbs_kernel_at(i);
    else
        for (int i = 0; i < nm.nkernel && !*err; i++)
            if (opt.kernels & (1u << i)) {
                if (!(ks[nk++] = mb_pbs_find(nm.kernel[i])))
                    snprintf(err, sizeof(err), "--kernel %s: not a --mode shared kernel", nm.kernel[i]);
            }
    for (int i = 0; i < nm.ndist_variants && !*err && opt.variants != dist_variants; i++)
        if (opt.variants & (1u << i))
            snprintf(err, sizeof(err), "--variant %s: only with --mode distributed", nm.variant[i]);
    if (!*err && opt.dims && nk != 1)
        snprintf(err, sizeof(err), "--dims: needs exactly one --kernel, not %zu", nk);
    /* all: both variants */
    unsigned vmask = opt.variants == dist_variants ? (1u << MB_PBS_NVARIANTS) - 1 : opt.variants >> nm.ndist_variants;
    for (size_t i = 0; i < nk && !*err; i++)
        mb_pbs_add_cases(ks[i], vmask, opt.preset, opt.dims, scases, 64, &nscases, err, sizeof(err));
    if (!*err && mb_fault() && !fault_is("corrupt") && !fault_is("hang") && !fault_is("result-enospc"))
        snprintf(err, sizeof(err), "MB_FAULT_INJECT=%s: mb-polybench --mode shared knows corrupt", mb_fault());
    if (!*err)
        return 0;
    if (run->rank == 0)
        mb_warn("%s", err);
    return MB_EXIT_USAGE;
}

static void sh_close_all(void *arg) { mb_pbs_pool_close(arg); }

static int sh_plan(struct mb_run *run)
{
    /* NumPy's BLAS uses every core: so do the products here */
    openblas_set_num_threads(omp_get_max_threads());
    snprintf(omp_str, sizeof(omp_str), "omp%d", omp_get_max_threads());
    mb_metric_run_int(&run->result, "omp_threads", omp_get_max_threads());
    mb_finalize_add(sh_close_all, &sh_pool);
    run->cases = calloc(nscases ? nscases : 1, sizeof(*run->cases));
    if (!run->cases)
        mb_die(1, "out of memory planning the cases");
    for (size_t i = 0; i < nscases; i++) {
        struct mb_case *c = &run->cases[run->ncases++];
        struct mb_pbs_case *sc = &scases[i];
        c->user = sc;
        c->labels[0] = sc->k->name;
        c->labels[1] = mb_pbs_variant_names[sc->variant];
        c->labels[2] = "1";
        c->labels[3] = omp_str;
        c->labels[4] = sc->sizes;
        c->bytes = (uint64_t)sc->k->bytes(sc->d);
        c->count = (uint64_t)sc->k->flops(sc->d);
        snprintf(c->name, sizeof(c->name), "%s/%s/%s", sc->k->name, mb_pbs_variant_names[sc->variant],
                 opt.dims ? "dims" : mb_pbs_preset_names[opt.preset]);
        snprintf(c->group, sizeof(c->group), "%s %s  %s %s", sc->k->name, mb_pbs_variant_names[sc->variant], omp_str,
                 sc->sizes);
    }
    return 0;
}

struct sh_st {
    struct mb_run *run;
    struct mb_pbs_inst *in;
    int variant;
};

static int sh_setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    const struct mb_pbs_case *sc = c->user;
    char err[512];
    struct mb_pbs_inst *in = mb_pbs_pool_get(&sh_pool, sc->k, sc->d, err, sizeof(err));
    if (!in) {
        mb_warn("%s: %s", c->name, err);
        return -1;
    }
    struct sh_st *s = calloc(1, sizeof(*s));
    if (!s) {
        mb_warn("out of memory: the case's state");
        return -1;
    }
    s->run = run, s->in = in, s->variant = sc->variant;
    *state = s;
    return 0;
}

static void sh_prepare(void *state, long long iter)
{
    (void)iter;
    mb_pbs_reset(((struct sh_st *)state)->in);
}

static int sh_iterate(void *state, long long iter, double *elapsed)
{
    (void)iter, (void)elapsed;
    struct sh_st *s = state;
    mb_pbs_run(s->in, s->variant);
    return 0;
}

static int sh_check(void *state, long long iter, char *msg, size_t len)
{
    (void)iter;
    struct sh_st *s = state;
    if (fault_is("corrupt")) /* one element drawn from --seed */
        mb_pbs_corrupt(s->in, mb_mix64((uint64_t)s->run->common.seed + 1));
    return mb_pbs_check(s->in, msg, len);
}

/* NPBench's statistics: the bootstrap CI of each case's median (300
 * resamples, seeded by --seed), and per kernel the variant with the lower
 * median. */
static void sh_finish(struct mb_run *run)
{
    for (size_t i = 0; i < run->result.ncases; i++) {
        const struct mb_case_result *r = &run->result.cases[i];
        double lo, hi;
        mb_pb_bootstrap_median_ci(r->samples, r->iters, 300, 0.05, (uint64_t)run->common.seed, &lo, &hi);
        mb_metric_case_dbl(&run->result, r->name, "npbench_ci_lo_s", lo);
        mb_metric_case_dbl(&run->result, r->name, "npbench_ci_hi_s", hi);
        mb_metric_case_dbl(&run->result, r->name, "gflops", (double)r->count / r->stats.median / 1e9);
        mb_metric_case_dbl(&run->result, r->name, "gbps", (double)r->bytes / r->stats.median / 1e9);
    }
    const char *kern[64];
    double med[64];
    size_t n = run->result.ncases < 64 ? run->result.ncases : 64;
    for (size_t i = 0; i < n; i++)
        kern[i] = run->result.cases[i].labels[0], med[i] = run->result.cases[i].stats.median;
    for (size_t i = 0; i < n; i++) {
        size_t b = mb_pbs_best(kern, med, n, i);
        if (b == (size_t)-1)
            continue;
        const struct mb_case_result *r = &run->result.cases[i], *best = &run->result.cases[b];
        char key[64];
        snprintf(key, sizeof(key), "best_%s", r->labels[0]);
        mb_metric_run_str(&run->result, key, best->labels[1]);
        if (!run->common.quiet)
            printf("# best %s: %s, median %.4g ms, bootstrap CI [%.4g, %.4g] ms\n", r->labels[0], best->labels[1],
                   best->stats.median * 1e3, mb_metric_value(&run->result, best->name, "npbench_ci_lo_s", 0) * 1e3,
                   mb_metric_value(&run->result, best->name, "npbench_ci_hi_s", 0) * 1e3);
    }
}

/* the table's rows whose kernel and variant were both chosen */
static size_t selected(const struct mb_pb_kernel **ks)
{
    size_t n = 0;
    for (size_t i = 0; i < mb_pb_nkernels(); i++) {
        const struct mb_pb_kernel *k = mb_pb_kernel_at(i);
        if (opt.kernels & (1u << mb_pb_name_index(nm.kernel, nm.nkernel, k->name)) &&
            opt.variants & (1u << mb_pb_name_index(nm.variant, nm.nvariant, k->variant)))
            ks[n++] = k;
    }
    return n;
}

static int validate(struct mb_run *run)
{
    if (opt.mode == MODE_SHARED)
        return sh_validate(run);
    char err[512] = "";
    const struct mb_pb_kernel *ks[32];
    size_t nk = selected(ks);
    double f;
    if (mb_pb_scale_for(opt.scale_down, NULL, &f, err, sizeof(err)) == 0)
        mb_pb_grid_choose(run->nranks, opt.grid, &px, &py, err, sizeof(err));
    unsigned pblas_bit = 1u << mb_pb_name_index(nm.variant, nm.nvariant, "pblas");
    if (!*err && !mb_pb_pblas_available() && opt.variants & pblas_bit) {
        if (mb_pb_flag_names(run->argc, run->argv, "--variant", "pblas"))
            snprintf(err, sizeof(err), "--variant pblas: this build has no ScaLAPACK (install libscalapack-openmpi-dev "
                     "and rebuild)");
        else { /* "all": the variants this build has */
            opt.variants &= ~pblas_bit;
            nk = selected(ks);
            if (run->rank == 0 && !run->common.quiet)
                printf("# pblas skipped: this build has no ScaLAPACK (libscalapack-openmpi-dev)\n");
        }
    }
    if (!*err)
        mb_pb_algo_check(opt.algo, err, sizeof(err));
    unsigned summa_bit = 1u << mb_pb_name_index(nm.variant, nm.nvariant, "summa");
    const struct mb_coll_algo *bc = *err ? NULL : mb_pb_algo_for(opt.algo, MB_COLL_BCAST);
    if (!*err && opt.summa_bcast == 0 && opt.variants & summa_bit && !mb_coll_nb_supports(bc, MB_COLL_BCAST))
        snprintf(err, sizeof(err), "--summa-bcast overlap: --algo %s's broadcast (%s) has no nonblocking form (mpi, "
                 "binomial, scatter-allgather have one); name one of them or --summa-bcast registry", opt.algo,
                 bc ? bc->name : "none");
    int nnames = 0; /* the chosen kernels (a kernel may run in several variants) */
    for (int i = 0; i < nm.ndist_kernels; i++)
        nnames += (opt.kernels >> i) & 1;
    if (!*err && opt.dims && nnames != 1)
        snprintf(err, sizeof(err), "--dims: needs exactly one --kernel, not %d", nnames);
    for (int i = nm.ndist_kernels; i < nm.nkernel && !*err; i++)
        if (opt.kernels & (1u << i))
            snprintf(err, sizeof(err), "--kernel %s: only with --mode shared", nm.kernel[i]);
    for (int i = nm.ndist_variants; i < nm.nvariant && !*err; i++)
        if (opt.variants & (1u << i))
            snprintf(err, sizeof(err), "--variant %s: only with --mode shared", nm.variant[i]);
    if (!*err && nk == 0)
        snprintf(err, sizeof(err), "--kernel/--variant: no kernel has the chosen variant");
    for (size_t i = 0; i < nk && !*err; i++) {
        struct pb_case *pc = &pcases[i];
        pc->k = ks[i];
        if (opt.dims) {
            if (mb_pb_sizes_parse(ks[i], opt.dims, &pc->s, err, sizeof(err)) != 0)
                break;
        } else {
            if (mb_pb_scale_for(opt.scale_down, ks[i]->name, &f, err, sizeof(err)) != 0)
                break;
            mb_pb_sizes_at(ks[i], run->nranks, px, py, f, &pc->s);
        }
        char why[256];
        if (ks[i]->divides(&pc->s, px, py, why, sizeof(why)) != 0)
            snprintf(err, sizeof(err), "%s: %s", opt.dims ? "--dims" : "--scale-down/--grid", why);
        mb_pb_sizes_str(ks[i], &pc->s, pc->sizes, sizeof(pc->sizes));
    }
    if (!*err && mb_fault() && !fault_is("corrupt") && !fault_is("skip-halo") && !fault_is("hang") &&
        !fault_is("result-enospc"))
        snprintf(err, sizeof(err), "MB_FAULT_INJECT=%s: mb-polybench knows corrupt and skip-halo", mb_fault());
    if (!*err)
        return 0;
    if (run->rank == 0)
        mb_warn("%s", err);
    return MB_EXIT_USAGE;
}

static void config(struct mb_run *run, struct mb_kvlist *cfg)
{
    (void)run;
    if (opt.mode == MODE_SHARED) {
        for (size_t i = 0; i < nscases; i++) {
            char key[64];
            snprintf(key, sizeof(key), "sizes_%s", scases[i].k->name);
            mb_kv_str(cfg, key, scases[i].sizes);
        }
        return;
    }
    mb_kv_int(cfg, "grid_px", px);
    mb_kv_int(cfg, "grid_py", py);
    const struct mb_pb_kernel *ks[32];
    size_t nk = selected(ks);
    for (size_t i = 0; i < nk; i++) {
        char key[64];
        if (i && strcmp(pcases[i - 1].k->name, pcases[i].k->name) == 0)
            continue; /* another variant of the same kernel and sizes */
        snprintf(key, sizeof(key), "sizes_%s", pcases[i].k->name);
        mb_kv_str(cfg, key, pcases[i].sizes);
    }
}

/* The run's rates the model uses, measured now with every rank at once:
 * only when a chosen case is not a stencil (the stencils' model takes
 * only the rates of their own set-up). The rates of one case are taken in
 * its set-up (calibrate). */
static void measure_rates(struct mb_run *run, const struct mb_pb_kernel *const *ks, size_t nk)
{
    int used = 0;
    for (size_t i = 0; i < nk; i++)
        used |= ks[i]->cells == NULL;
    if (!used) {
        dgemm_flops_s = memcpy_bytes_s = read_bytes_s = NAN;
        if (run->rank == 0 && !run->common.quiet)
            printf("# no run-level rates: the chosen stencils' model takes only the rates of their own set-up\n");
        return;
    }
    mb_pb_measure_rates(run->comm, &dgemm_flops_s, &memcpy_bytes_s, &read_bytes_s);
    mb_metric_run_dbl(&run->result, "dgemm_GFlops_per_rank", dgemm_flops_s / 1e9);
    mb_metric_run_dbl(&run->result, "memcpy_GBps_per_rank", memcpy_bytes_s / 1e9);
    mb_metric_run_dbl(&run->result, "read_GBps_per_rank", read_bytes_s / 1e9);
    if (run->rank == 0 && !run->common.quiet)
        printf("# rates with %d ranks at once, per rank: dgemm %.2f GFLOP/s (n=384, median of 5 passes of 40 ms, "
               "all ranks multiplying), memcpy %.2f GB/s (read+write, 32 MiB), read stream %.2f GB/s (dgemv "
               "panels of a 256 MiB matrix, median of 5 passes of 40 ms)\n",
               run->nranks, dgemm_flops_s / 1e9, memcpy_bytes_s / 1e9, read_bytes_s / 1e9);
}

static void load_profile(struct mb_run *run)
{
    char path[1024], err[512] = "";
    if (opt.profile)
        snprintf(path, sizeof(path), "%s", opt.profile);
    else
        mb_coll_profile_default(path, sizeof(path));
    if (run->rank == 0) {
        have_profile = access(path, F_OK) == 0 && mb_coll_profile_read(path, &profile, err, sizeof(err)) == 0;
        if (!have_profile && !run->common.quiet)
            printf("# no cost-model profile %s%s%s: communication terms are NaN at P > 1 (mb-coll --calibrate "
                   "makes one)\n", path, *err ? ": " : "", err);
    }
    MPI_Bcast(&have_profile, 1, MPI_INT, 0, run->comm);
    MPI_Bcast(&profile, (int)sizeof(profile), MPI_BYTE, 0, run->comm);
}

static void free_grid(void *arg)
{
    (void)arg;
    if (have_grid)
        mb_pb_grid_free(&grid);
    have_grid = 0;
}

static int plan(struct mb_run *run)
{
    if (opt.mode == MODE_SHARED)
        return sh_plan(run);
    char err[512] = "";
    if (mb_pb_grid_create(run->comm, px, py, opt.algo, &grid, err, sizeof(err)) != 0) {
        if (run->rank == 0)
            mb_warn("%s", err);
        return MB_EXIT_USAGE;
    }
    have_grid = 1;
    grid.summa_overlap = opt.summa_bcast == 0;
    mb_metric_run_str(&run->result, "summa_bcast",
                      grid.summa_overlap ? "registry, nonblocking: next panel overlapped with the current dgemm"
                                         : "registry, blocking");
    if (opt.blas_threads > 0)
        openblas_set_num_threads((int)opt.blas_threads);
    mb_finalize_add(free_grid, NULL);
    mb_coll_model_shape(grid.row_ctx, &axis_shape[MB_PB_ROW]);
    mb_coll_model_shape(grid.col_ctx, &axis_shape[MB_PB_COL]);
    const struct mb_pb_kernel *ks[32];
    size_t nk = selected(ks);
    measure_rates(run, ks, nk);
    load_profile(run);
    snprintf(grid_str, sizeof(grid_str), "%dx%d", px, py);
    snprintf(p_str, sizeof(p_str), "%d", run->nranks);
    run->cases = calloc(nk, sizeof(*run->cases));
    if (!run->cases)
        mb_die(1, "out of memory planning the cases");
    for (size_t i = 0; i < nk; i++) {
        struct mb_case *c = &run->cases[run->ncases++];
        struct pb_case *pc = &pcases[i];
        c->user = pc;
        c->labels[0] = pc->k->name;
        c->labels[1] = pc->k->variant;
        c->labels[2] = p_str;
        c->labels[3] = grid_str;
        c->labels[4] = pc->sizes;
        c->bytes = (uint64_t)pc->k->bytes(&pc->s);
        c->count = (uint64_t)pc->k->flops(&pc->s);
        snprintf(c->name, sizeof(c->name), "%s/%s/P%d", pc->k->name, pc->k->variant, run->nranks);
        pc->ws = pc->k->footprint(&pc->s) / run->nranks; /* shown beside the model: see docs/mb-polybench.md */
        /* the rates of one case are calibrated in its setup(), right before its samples: the stencils' copy
         * rate and sweep, the matrix-vector kernels' local compute, the products' dgemm rate */
        pc->copy_bytes_s = pc->cells_s = pc->local_s = NAN;
        pc->flops_s = pc->k->gemms ? NAN : dgemm_flops_s;
        snprintf(c->group, sizeof(c->group), "%s %s  P=%d grid=%s %s", pc->k->name, pc->k->variant, run->nranks,
                 grid_str, pc->sizes);
    }
    return 0;
}

/* The rates of one case that need no instance, every rank at once, before
 * its arrays are allocated (so the calibration operands never sit beside
 * them: at DaCe's sizes a product's are as large as its blocks): a
 * stencil's working-set copy rate, a product's dgemm rate on its own local
 * shapes. Collective. */
static void calibrate(struct mb_run *run, struct pb_case *pc)
{
    if (pc->k->cells)
        pc->copy_bytes_s = mb_pb_copy_rate(run->comm, pc->ws);
    struct mb_pb_gemm gm[MB_PB_MAXGEMM];
    int ngm = pc->k->gemms ? pc->k->gemms(&pc->s, &grid, gm) : 0;
    if (ngm <= 0)
        return;
    pc->flops_s = mb_pb_gemm_rate(run->comm, gm, ngm);
    if (run->rank == 0 && !run->common.quiet)
        printf("# %s %s: dgemm %.2f GFLOP/s per rank on its own %d local shape(s) at P=%d (the first %lldx%lldx%lld, "
               "%lld a call), all ranks at once, median of 11 passes, before its samples\n", pc->k->name,
               pc->k->variant, pc->flops_s / 1e9, ngm, run->nranks, gm[0].m, gm[0].n, gm[0].k, gm[0].calls);
}

struct st {
    struct mb_run *run;
    struct mb_pb_inst *in;
    const char *name;
    int corrupt_here;
    double *comm_s; /* this rank's communication seconds, call by call (warm-up included) */
    size_t ncalls, cap;
};

static int setup(struct mb_run *run, const struct mb_case *c, void **state)
{
    if (opt.mode == MODE_SHARED)
        return sh_setup(run, c, state);
    struct pb_case *pc = c->user;
    char err[512];
    struct st *s = calloc(1, sizeof(*s));
    if (!s) {
        mb_warn("out of memory: the case's state");
        return -1;
    }
    *state = s;
    s->run = run;
    s->name = c->name;
    calibrate(run, pc); /* with --rounds, the last round's rates */
    s->in = mb_pb_open(pc->k, &grid, &pc->s, fault_is("skip-halo"), err, sizeof(err));
    if (!s->in) {
        if (run->rank == 0)
            mb_warn("%s: %s", c->name, err);
    }
    int open = s->in != NULL, all_open;
    MPI_Allreduce(&open, &all_open, 1, MPI_INT, MPI_MIN, run->comm); /* the calibration below is collective */
    if (!all_open)
        return -1;
    if (pc->k->cell_rate) {
        /* the model's loop term, right before the samples (the host's speed drifts over a run) and on the
         * block the samples sweep; prepare resets the arrays before every call. With --rounds, the last
         * round's. */
        mb_pb_reset(s->in);
        pc->cells_s = pc->k->cell_rate(s->in, run->comm);
    } else if (pc->k->local_time) {
        /* the matrix-vector kernels: their own call's local compute (no allreduce; pblas: the dgemv_ pdgemv
         * makes on the block) on their own block, right before the samples. A generic read stream (dgemv over a
         * 256 MiB matrix, here until 2026-12-07) left one to seven of them predicted 21-30% fast per quiet run. */
        mb_pb_reset(s->in);
        pc->local_s = pc->k->local_time(s->in, run->comm);
    }
    /* MB_FAULT_INJECT=corrupt: one element of one rank's block, both drawn from --seed */
    uint64_t seed = (uint64_t)run->common.seed;
    s->corrupt_here = fault_is("corrupt") && (int)(mb_mix64(seed) % (uint64_t)run->nranks) == grid.rank;
    return 0;
}

static void prepare(void *state, long long iter)
{
    if (opt.mode == MODE_SHARED) {
        sh_prepare(state, iter);
        return;
    }
    (void)iter;
    struct st *s = state;
    mb_pb_reset(s->in);
}

static int iterate(void *state, long long iter, double *elapsed)
{
    if (opt.mode == MODE_SHARED)
        return sh_iterate(state, iter, elapsed);
    (void)iter, (void)elapsed;
    struct st *s = state;
    double c0 = mb_pb_comm_seconds();
    int rc = mb_pb_run(s->in);
    double comm = mb_pb_comm_seconds() - c0;
    if (s->ncalls == s->cap) { /* untimed bookkeeping is small beside a call; a failed grow drops the value */
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *p = realloc(s->comm_s, cap * sizeof(double));
        if (p)
            s->comm_s = p, s->cap = cap;
    }
    if (s->ncalls < s->cap)
        s->comm_s[s->ncalls++] = comm;
    MPI_Barrier(grid.cart); /* DaCe times "call; Barrier" */
    if (rc != MPI_SUCCESS)
        mb_warn("%s: MPI error %d in the call", s->name, rc);
    return rc != MPI_SUCCESS;
}

static int check(void *state, long long iter, char *msg, size_t len)
{
    if (opt.mode == MODE_SHARED)
        return sh_check(state, iter, msg, len);
    (void)iter;
    struct st *s = state;
    if (s->corrupt_here)
        mb_pb_corrupt(s->in, mb_mix64((uint64_t)s->run->common.seed + 1));
    return mb_pb_check(s->in, msg, len);
}

/* Every rank, case after case: each rank's median communication seconds
 * per call (over warm-up and timed calls; NaN for pblas, whose
 * communication is inside ScaLAPACK) to rank 0, as the case's series
 * comm_s_per_rank. */
static void record_comm(struct st *s)
{
    struct mb_run *run = s->run;
    int pblas = strcmp(s->in->k->variant, "pblas") == 0;
    mb_sort_doubles(s->comm_s, s->ncalls);
    double mine = pblas || s->ncalls == 0 ? NAN : mb_stats_quantile_sorted(s->comm_s, s->ncalls, 0.5);
    double *all = run->rank == 0 ? malloc((size_t)run->nranks * sizeof(double)) : NULL;
    MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, run->comm);
    if (run->rank == 0 && all) {
        for (int r = 0; r < run->nranks; r++)
            mb_metric_at_dbl(&run->result, s->name, "comm_s_per_rank", (size_t)r, all[r]);
    }
    free(all);
}

static void teardown(void *state)
{
    if (opt.mode == MODE_SHARED) {
        free(state); /* the instance stays for the kernel's other variant */
        return;
    }
    struct st *s = state;
    if (s->in)
        record_comm(s);
    free(s->comm_s);
    mb_pb_close(s->in);
    free(s);
}

/* Rank 0 only (the harness calls it there): nothing collective. */
static double model(struct mb_run *run, const struct mb_case *c)
{
    if (opt.mode == MODE_SHARED)
        return NAN; /* no model for the shared mode (NPBench has none) */
    const struct pb_case *pc = c->user;
    struct mb_pb_traffic t;
    pc->k->traffic(&pc->s, &grid, &t);
    double compute, memory, comm = mb_pb_model_comm(&t, px, py, have_profile ? &profile : NULL, opt.algo, axis_shape);
    /* a stencil's bytes at its working set's copy rate: its loop term bounds it where the set sits in a cache
     * (jacobi_1d's 1.5 MB, jacobi_2d's 4 MB per rank at the medium scale), which the 32 MiB memcpy rate cannot
     * see; the other kernels' reads at the read-stream rate, their writes at the memcpy rate
     * (docs/mb-polybench.md) */
    double bytes_s = pc->k->cells ? pc->copy_bytes_s : memcpy_bytes_s;
    double m = mb_pb_model_time(pc->k, &pc->s, run->nranks, pc->flops_s, bytes_s, read_bytes_s, pc->cells_s,
                                pc->local_s, comm, &compute, &memory);
    mb_metric_case_dbl(&run->result, c->name, "model_compute_s", compute);
    mb_metric_case_dbl(&run->result, c->name, "model_memory_s", memory);
    mb_metric_case_dbl(&run->result, c->name, "model_comm_s", comm);
    mb_metric_case_dbl(&run->result, c->name, "working_set_bytes_per_rank", pc->ws);
    if (pc->k->cells) {
        mb_metric_case_dbl(&run->result, c->name, "copy_GBps_per_rank", pc->copy_bytes_s / 1e9);
        mb_metric_case_dbl(&run->result, c->name, "cells_per_s_per_rank", pc->cells_s);
    }
    if (pc->k->gemms)
        mb_metric_case_dbl(&run->result, c->name, "dgemm_GFlops_per_rank", pc->flops_s / 1e9);
    if (pc->k->local_time) { /* the timed local compute, and the bytes per rank it streamed per second */
        mb_metric_case_dbl(&run->result, c->name, "local_s", pc->local_s);
        mb_metric_case_dbl(&run->result, c->name, "local_GBps_per_rank", pc->k->bytes(&pc->s) / run->nranks /
                                                                           pc->local_s / 1e9);
    }
    return m;
}

/* GFLOP/s and GB/s from the closed forms at each case's median. */
static void finish(struct mb_run *run)
{
    if (run->rank != 0)
        return;
    if (opt.mode == MODE_SHARED) {
        sh_finish(run);
        return;
    }
    for (size_t i = 0; i < run->result.ncases; i++) {
        const struct mb_case_result *r = &run->result.cases[i];
        mb_metric_case_dbl(&run->result, r->name, "gflops", (double)r->count / r->stats.median / 1e9);
        mb_metric_case_dbl(&run->result, r->name, "gbps", (double)r->bytes / r->stats.median / 1e9);
    }
}

static const struct mb_bench bench = {
    .name = "mb-polybench",
    .description = "DaCe's distributed polybench (SC'21): gemm, k2mm, k3mm (SUMMA, ScaLAPACK), atax, bicg, gemver, gesummv, mvt, doitgen, jacobi_1d/2d, heat_3d on DaCe's grids and sizes; --mode shared: NPBench's kernels (OpenMP, naive and fused) on one rank",
    .opts = pb_opts,
    .label_names = label_names,
    .validate = validate,
    .config = config,
    .plan = plan,
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .teardown = teardown,
    .model = model,
    .finish = finish,
};

int main(int argc, char **argv)
{
    mb_pb_names_build(&nm);
    return mb_main(&bench, argc, argv);
}
