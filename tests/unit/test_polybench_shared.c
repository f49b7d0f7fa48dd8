/* polybench/'s shared mode: every kernel x variant (naive, fused) matches
 * its serial reference at small sizes, twice (the reset restores the
 * inputs), and a corrupted element is caught naming the kernel and the
 * index; presets parse; the bootstrap CI of the median is seeded,
 * ordered and inside the data; lstsqr, specialconvolve and wdist draw
 * NPBench's inputs, the doubles NumPy's default_rng(42).random() gives
 * (printed by NumPy 1.26: the values below); atax, bicg and mvt's
 * single pass over A equals the reference within a summation bound at odd
 * sizes and 1 and 3 threads; specialconvolve's fused equals naive bit for
 * bit. */
#include "../../polybench/polybench.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct small {
    const char *kernel;
    long long d[4];
};

static const struct small smalls[] = {
    {"atax", {40, 50}},       {"bicg", {40, 50}},       {"doitgen", {6, 7, 16}},     {"gemm", {40, 50, 60}},
    {"gemver", {50}},         {"gesummv", {60}},        {"mvt", {55}},               {"jacobi_1d", {20, 64}},
    {"jacobi_2d", {10, 30}},  {"heat_3d", {5, 12}},     {"lstsqr", {1000}},          {"specialconvolve", {30, 40}},
    {"wdist", {10, 12, 14}},
};

static void kernels(void)
{
    EXPECT(mb_pbs_nkernels() == sizeof(smalls) / sizeof(smalls[0]));
    for (size_t i = 0; i < sizeof(smalls) / sizeof(smalls[0]); i++) {
        const struct mb_pbs_kernel *k = mb_pbs_find(smalls[i].kernel);
        EXPECT(k != NULL);
        if (!k)
            continue;
        char err[256], msg[512];
        struct mb_pbs_inst *in = mb_pbs_open(k, smalls[i].d, err, sizeof(err));
        EXPECT(in != NULL);
        if (!in)
            continue;
        if (strcmp(k->name, "heat_3d") == 0) {
            /* NPBench's field is linear (a fixed point of the sweeps): a curved one, so the variants must compute */
            for (int a = 0; a < k->narr; a++)
                for (size_t x = 0; x < k->arr_len(in->d, a); x++)
                    in->a0[a][x] = sin(0.37 * (double)x) + (double)a;
            k->reference(in, in->ref);
        }
        for (int v = 0; v < MB_PBS_NVARIANTS; v++)
            for (int rep = 0; rep < 2; rep++) {
                mb_pbs_reset(in);
                mb_pbs_run(in, v);
                msg[0] = 0;
                if (mb_pbs_check(in, msg, sizeof(msg)) != 0) {
                    fprintf(stderr, "%s/%s run %d: %s\n", k->name, mb_pbs_variant_names[v], rep, msg);
                    test_failures++;
                }
            }
        /* a run that skips the kernel leaves the inputs: must fail */
        mb_pbs_reset(in);
        msg[0] = 0;
        if (mb_pbs_check(in, msg, sizeof(msg)) == 0) {
            fprintf(stderr, "%s: the unrun outputs pass the check\n", k->name);
            test_failures++;
        }
        mb_pbs_reset(in);
        mb_pbs_run(in, MB_PBS_FUSED);
        mb_pbs_corrupt(in, 12345 + i);
        msg[0] = 0;
        EXPECT(mb_pbs_check(in, msg, sizeof(msg)) == 1);
        EXPECT(strncmp(msg, k->name, strlen(k->name)) == 0 && strchr(msg, '[') != NULL);
        mb_pbs_close(in);
    }
    int p;
    EXPECT(mb_pbs_preset_parse("S", &p) == 0 && p == MB_PBS_S);
    EXPECT(mb_pbs_preset_parse("paper", &p) == 0 && p == MB_PBS_PAPER);
    EXPECT(mb_pbs_preset_parse("XL", &p) != 0);
    EXPECT(mb_pbs_find("k2mm") == NULL);
    /* NPBench's bench_info: gemm S is NI=1000, NJ=1100, NK=1200 */
    const struct mb_pbs_kernel *g = mb_pbs_find("gemm");
    EXPECT(g && g->preset[MB_PBS_S][0] == 1000 && g->preset[MB_PBS_S][1] == 1100 && g->preset[MB_PBS_S][2] == 1200);
}

static void bootstrap(void)
{
    double x[10] = {5, 1, 9, 3, 7, 2, 8, 4, 6, 10}, lo, hi, lo2, hi2;
    EXPECT(mb_pb_bootstrap_median_ci(x, 10, 300, 0.05, 7, &lo, &hi) == 0);
    EXPECT(lo <= 5.5 && 5.5 <= hi && lo >= 1 && hi <= 10 && lo < hi);
    EXPECT(mb_pb_bootstrap_median_ci(x, 10, 300, 0.05, 7, &lo2, &hi2) == 0);
    EXPECT(lo2 == lo && hi2 == hi); /* same seed, same interval */
    /* the input is not reordered */
    EXPECT(x[0] == 5 && x[9] == 10);
    double same[5] = {2, 2, 2, 2, 2};
    EXPECT(mb_pb_bootstrap_median_ci(same, 5, 300, 0.05, 1, &lo, &hi) == 0 && lo == 2 && hi == 2);
    EXPECT(mb_pb_bootstrap_median_ci(x, 0, 300, 0.05, 1, &lo, &hi) == -1 && isnan(lo) && isnan(hi));
    /* a wide sample gives a wider interval than a tight one */
    double tight[10], wide[10];
    for (int i = 0; i < 10; i++)
        tight[i] = 1 + 0.001 * i, wide[i] = 1 + 0.5 * i;
    double tl, th, wl, wh;
    mb_pb_bootstrap_median_ci(tight, 10, 300, 0.05, 3, &tl, &th);
    mb_pb_bootstrap_median_ci(wide, 10, 300, 0.05, 3, &wl, &wh);
    EXPECT(th - tl < wh - wl);
}

/* np.random.default_rng(42).random(12), and for lstsqr at N=1000 the
 * first and last y (drawn after x) */
static const double npy42[] = {0.7739560485559633, 0.4388784397520523, 0.8585979199113825, 0.6973680290593639,
                               0.09417734788764953, 0.9756223516367559, 0.761139701990353, 0.7860643052769538,
                               0.12811363267554587, 0.45038593789556713, 0.37079802423258124, 0.9267649888486018};

static void npbench_inputs(void)
{
    char err[256];
    long long dl[4] = {1000}, dc[4] = {3, 4}, dw[4] = {2, 2, 2};
    struct mb_pbs_inst *ls = mb_pbs_open(mb_pbs_find("lstsqr"), dl, err, sizeof(err)),
                       *sc = mb_pbs_open(mb_pbs_find("specialconvolve"), dc, err, sizeof(err)),
                       *wd = mb_pbs_open(mb_pbs_find("wdist"), dw, err, sizeof(err));
    EXPECT(ls && sc && wd);
    if (!ls || !sc || !wd)
        return;
    EXPECT(ls->a0[0][0] == npy42[0] && ls->a0[0][4] == npy42[4]);          /* x */
    EXPECT(ls->a0[1][0] == 0.06206310654015523 && ls->a0[1][999] == 0.5200719122614881); /* y */
    for (int i = 0; i < 12; i++)                                                     /* a, 3 x 4 in C order */
        EXPECT(sc->a0[0][i] == npy42[i]);
    for (int i = 0; i < 4; i++) /* A (2 x 2), then B, then W */
        EXPECT(wd->a0[0][i] == npy42[i] && wd->a0[1][i] == npy42[4 + i] && wd->a0[2][i] == npy42[8 + i]);
    mb_pbs_close(ls), mb_pbs_close(sc), mb_pbs_close(wd);
}

/* the protocol's plumbing: cases from a preset or --dims, one instance per
 * kernel shared by its variants, the best variant per kernel */
static void protocol(void)
{
    const struct mb_pbs_kernel *gemm = mb_pbs_find("gemm"), *mvt = mb_pbs_find("mvt");
    struct mb_pbs_case cases[4];
    size_t n = 0;
    char err[256] = "";
    EXPECT(mb_pbs_add_cases(gemm, 3, MB_PBS_S, NULL, cases, 4, &n, err, sizeof(err)) == 0 && n == 2);
    EXPECT(cases[0].variant == MB_PBS_NAIVE && cases[1].variant == MB_PBS_FUSED && cases[0].d[0] == 1000 &&
           cases[0].d[1] == 1100 && cases[0].d[2] == 1200 && strcmp(cases[1].sizes, "NI=1000,NJ=1100,NK=1200") == 0);
    EXPECT(mb_pbs_add_cases(mvt, 2, MB_PBS_S, "40", cases, 4, &n, err, sizeof(err)) == 0 && n == 3);
    EXPECT(cases[2].k == mvt && cases[2].variant == MB_PBS_FUSED && cases[2].d[0] == 40 && cases[2].d[1] == 0);
    EXPECT(mb_pbs_add_cases(mvt, 3, MB_PBS_S, NULL, cases, 4, &n, err, sizeof(err)) == -1); /* a fifth case */
    EXPECT(strstr(err, "more than 4 cases") != NULL);
    long long d[4];
    EXPECT(mb_pbs_dims_parse(gemm, "10,20", d, err, sizeof(err)) == -1);
    EXPECT(strcmp(err, "--dims 10,20: gemm takes 3 integers >= 3 (NI,NJ,NK)") == 0);
    EXPECT(mb_pbs_dims_parse(gemm, "10,20,2", d, err, sizeof(err)) == -1); /* below 3 */
    EXPECT(mb_pbs_dims_parse(gemm, "10,20,30", d, err, sizeof(err)) == 0 && d[2] == 30 && d[3] == 0);

    struct mb_pbs_pool pool = {{0}};
    long long dm[4] = {30};
    struct mb_pbs_inst *a = mb_pbs_pool_get(&pool, mvt, dm, err, sizeof(err)),
                       *b = mb_pbs_pool_get(&pool, mvt, dm, err, sizeof(err));
    EXPECT(a && a == b && a->k == mvt && a->d[0] == 30);
    mb_pbs_pool_close(&pool);
    for (int i = 0; i < MB_PBS_POOL; i++)
        EXPECT(pool.in[i] == NULL);

    const char *kern[] = {"atax", "atax", "gemm", "gemm", "mvt"};
    double med[] = {2.0, 1.0, 3.0, 3.0, NAN};
    EXPECT(mb_pbs_best(kern, med, 5, 0) == 1); /* fused faster */
    EXPECT(mb_pbs_best(kern, med, 5, 1) == (size_t)-1);
    EXPECT(mb_pbs_best(kern, med, 5, 2) == 2); /* a tie: the first */
    EXPECT(mb_pbs_best(kern, med, 5, 4) == 4);
}

/* atax, bicg and mvt's fused variants (one pass over A's rows, row blocks
 * of 4 and per-thread partials) against the serial reference at odd sizes
 * (rows not a multiple of 4, more threads than blocks divide evenly).
 * Every input is >= 0, so each output is a sum of k >= 0 terms, whose
 * computed value in any order is within k u of the exact one (u =
 * DBL_EPSILON / 2); atax's nested sums have k <= M + N: the fused result
 * and the reference are then each within (M + N) u, and apart by at most
 * 2 (M + N) u = (M + N) DBL_EPSILON relatively. NaN fails. */
static void rowpass(void)
{
    static const struct small odd[] = {
        {"atax", {37, 53}}, {"atax", {53, 37}}, {"atax", {3, 41}}, {"bicg", {41, 29}},
        {"bicg", {29, 41}}, {"bicg", {5, 7}},   {"mvt", {41}},     {"mvt", {6}},
    };
    for (int threads = 1; threads <= 3; threads += 2) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#else
        if (threads > 1)
            break;
#endif
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
            const struct mb_pbs_kernel *k = mb_pbs_find(odd[i].kernel);
            char err[256];
            struct mb_pbs_inst *in = k ? mb_pbs_open(k, odd[i].d, err, sizeof(err)) : NULL;
            EXPECT(in != NULL);
            if (!in)
                continue;
            for (int a = 0; a < k->narr; a++) /* the argument's premise: no negative input */
                for (size_t x = 0; x < k->arr_len(in->d, a); x++)
                    EXPECT(in->a0[a][x] >= 0);
            double tol = (double)(odd[i].d[0] + (k->nd > 1 ? odd[i].d[1] : odd[i].d[0]) + 2) * DBL_EPSILON;
            for (int rep = 0; rep < 2; rep++) { /* the second from reset inputs: nothing carried over */
                mb_pbs_reset(in);
                mb_pbs_run(in, MB_PBS_FUSED);
                int bad = 0;
                for (int o = 0; o < k->nout; o++) {
                    const double *got = in->a[k->out[o]], *ref = in->ref[o];
                    for (size_t x = 0; x < k->arr_len(in->d, k->out[o]); x++)
                        if (!(fabs(got[x] - ref[x]) <= tol * fabs(ref[x])) && bad++ == 0)
                            fprintf(stderr, "%s %lldx%lld, %d threads: %s[%zu] = %.17g, reference %.17g\n", k->name,
                                    odd[i].d[0], odd[i].d[1], threads, k->arr_names[k->out[o]], x, got[x], ref[x]);
                }
                EXPECT(bad == 0);
            }
            mb_pbs_close(in);
        }
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

/* specialconvolve's fused row of column sums adds in NumPy's order: the
 * same doubles as naive, which materialises NumPy's temporaries */
static void convolve_order(void)
{
    const long long d[4] = {23, 37};
    char err[256];
    struct mb_pbs_inst *in = mb_pbs_open(mb_pbs_find("specialconvolve"), d, err, sizeof(err));
    EXPECT(in != NULL);
    if (!in)
        return;
    size_t len = (size_t)(d[0] - 2) * (size_t)(d[1] - 2);
    double *naive = malloc(len * sizeof(double));
    EXPECT(naive != NULL);
    if (naive) {
        mb_pbs_reset(in);
        mb_pbs_run(in, MB_PBS_NAIVE);
        memcpy(naive, in->a[1], len * sizeof(double));
        mb_pbs_reset(in);
        mb_pbs_run(in, MB_PBS_FUSED);
        EXPECT(memcmp(naive, in->a[1], len * sizeof(double)) == 0);
        EXPECT(in->a[1][0] == naive[0] && isfinite(naive[len - 1]));
    }
    free(naive);
    mb_pbs_close(in);
}

int main(void)
{
    rowpass();
    convolve_order();
    protocol();
    npbench_inputs();
    kernels();
    bootstrap();
    return TEST_EXIT();
}
