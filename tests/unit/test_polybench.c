/* polybench/: DaCe's grid table, --grid parsing and the weak-scaling size
 * rule (adjust_size: size * f(P) rounded up to a multiple of the divisor)
 * for every P of the table, against values worked out by hand from
 * DaCe's base sizes, e.g. atax at P = 2: 20000 * sqrt(2) = 28284.27,
 * / max(1, 2) = 14142.1 -> 14143 * 2 = 28286; jacobi_2d at P = 256:
 * 500 * 16 / 256 = 31.25 -> 32 * 256 = 8192. */
#include "../../polybench/polybench.h"
#include "../../polybench/summa.h"
#include "check.h"

#include <math.h>
#include <string.h>

static const int ps[9] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const int pxs[9] = {1, 1, 2, 2, 4, 4, 8, 8, 16}, pys[9] = {1, 2, 2, 4, 4, 8, 8, 16, 16};

struct expect_row {
    const char *kernel;
    long long d[9][5];
};

static const struct expect_row expected[] = {
    {"atax", {{20000, 25000}, {28286, 35356}, {40000, 50000}, {56572, 70712}, {80000, 100000}, {113144, 141424},
              {160000, 200000}, {226288, 282848}, {320000, 400000}}},
    {"bicg", {{25000, 20000}, {35356, 28286}, {50000, 40000}, {70712, 56572}, {100000, 80000}, {141424, 113144},
              {200000, 160000}, {282848, 226288}, {400000, 320000}}},
    {"doitgen", {{128, 512, 512}, {256, 512, 512}, {512, 512, 512}, {1024, 512, 512}, {2048, 512, 512},
                 {4096, 512, 512}, {8192, 512, 512}, {16384, 512, 512}, {32768, 512, 512}}},
    {"gemm", {{8000, 9200, 5200}, {10080, 11592, 6552}, {12700, 14606, 8256}, {16000, 18400, 10400},
              {20160, 23184, 13104}, {25400, 29216, 16512}, {32000, 36800, 20800}, {40320, 46368, 26208},
              {50800, 58432, 33024}}},
    {"gemver", {{10000}, {14144}, {20000}, {28288}, {40000}, {56576}, {80000}, {113152}, {160000}}},
    {"gesummv", {{22400}, {31680}, {44800}, {63360}, {89600}, {126720}, {179200}, {253440}, {358400}}},
    {"k2mm", {{6400, 7200, 4400, 4800}, {8064, 9072, 5544, 6048}, {10160, 11430, 6986, 7620}, {12800, 14400, 8800, 9600},
              {16128, 18144, 11088, 12096}, {20320, 22864, 13976, 15240}, {25600, 28800, 17600, 19200},
              {32256, 36288, 22176, 24192}, {40640, 45728, 27952, 30480}}},
    {"k3mm", {{6400, 7200, 4000, 4400, 4800}, {8064, 9072, 5040, 5544, 6048}, {10160, 11430, 6350, 6986, 7620},
              {12800, 14400, 8000, 8800, 9600}, {16128, 18144, 10080, 11088, 12096}, {20320, 22864, 12704, 13976, 15240},
              {25600, 28800, 16000, 17600, 19200}, {32256, 36288, 20160, 22176, 24192},
              {40640, 45728, 25408, 27952, 30480}}},
    {"mvt", {{22000}, {31114}, {44000}, {62228}, {88000}, {124456}, {176000}, {248912}, {352000}}},
    {"jacobi_1d", {{24000}, {48000}, {96000}, {192000}, {384000}, {768000}, {1536000}, {3072000}, {6144000}}},
    {"jacobi_2d", {{500}, {708}, {1000}, {1416}, {2000}, {2848}, {4032}, {5760}, {8192}}},
    /* heat_3d: cbrt(P), max(Px, Py); e.g. P = 2: 500 * 1.26 = 629.96 / 2 -> 315 * 2 = 630 */
    {"heat_3d", {{500}, {630}, {794}, {1000}, {1260}, {1592}, {2000}, {2528}, {3184}}},
};

int main(void)
{
    int px, py;
    for (int i = 0; i < 9; i++) {
        EXPECT(mb_pb_grid_table(ps[i], &px, &py) == 0);
        EXPECT(px == pxs[i] && py == pys[i]);
    }
    EXPECT(mb_pb_grid_table(3, &px, &py) != 0);
    EXPECT(mb_pb_grid_table(5, &px, &py) != 0);
    EXPECT(mb_pb_grid_table(512, &px, &py) != 0);
    EXPECT(mb_pb_grid_parse("1x3", &px, &py) == 0 && px == 1 && py == 3);
    EXPECT(mb_pb_grid_parse("4X2", &px, &py) == 0 && px == 4 && py == 2);
    EXPECT(mb_pb_grid_parse("0x3", &px, &py) != 0);
    EXPECT(mb_pb_grid_parse("3", &px, &py) != 0);
    EXPECT(mb_pb_grid_parse("2x3x4", &px, &py) != 0);
    long long v[3] = {0};
    EXPECT(mb_pb_parse_dims("10,20,5", 1, v, 3) == 3 && v[0] == 10 && v[1] == 20 && v[2] == 5);
    EXPECT(mb_pb_parse_dims("7", 3, v, 3) == 1 && v[0] == 7);
    EXPECT(mb_pb_parse_dims("", 1, v, 3) == 0);
    EXPECT(mb_pb_parse_dims("1,2,3,4", 1, v, 3) == -1); /* more than max */
    EXPECT(mb_pb_parse_dims("2", 3, v, 3) == -1);       /* below lo */
    EXPECT(mb_pb_parse_dims("4,x", 1, v, 3) == -1);
    EXPECT(mb_pb_parse_dims("4;5", 1, v, 3) == -1);
    EXPECT(mb_pb_parse_dims("4294967296", 1, v, 3) == -1); /* over 2^31 */
    EXPECT(mb_pb_grid_parse("x3", &px, &py) != 0);

    /* the run's grid: --grid, else DaCe's table; the reasons name the flag */
    char gerr[256] = "";
    EXPECT(mb_pb_grid_choose(4, NULL, &px, &py, gerr, sizeof(gerr)) == 0 && px == 2 && py == 2);
    EXPECT(mb_pb_grid_choose(3, "1x3", &px, &py, gerr, sizeof(gerr)) == 0 && px == 1 && py == 3);
    EXPECT(mb_pb_grid_choose(3, NULL, &px, &py, gerr, sizeof(gerr)) == -1 && strstr(gerr, "--grid: 3 ranks") == gerr);
    EXPECT(mb_pb_grid_choose(4, "1x3", &px, &py, gerr, sizeof(gerr)) == -1 &&
           strcmp(gerr, "--grid 1x3: 3 ranks, but the run has 4") == 0);
    EXPECT(mb_pb_grid_choose(4, "2y2", &px, &py, gerr, sizeof(gerr)) == -1 && strstr(gerr, "expected PxQ") != NULL);

    /* the model's communication: nothing on a 1x1 grid, NaN without a profile where something moves */
    struct mb_pb_traffic tr = {.ncoll = 1, .halos = 0};
    tr.coll[0].kind = MB_COLL_ALLREDUCE, tr.coll[0].axis = MB_PB_ROW, tr.coll[0].count = 100, tr.coll[0].calls = 1;
    struct mb_coll_shape shp[2];
    memset(shp, 0, sizeof(shp));
    EXPECT(mb_pb_model_comm(&tr, 1, 1, NULL, "mpi", shp) == 0);
    EXPECT(mb_pb_model_comm(&tr, 2, 1, NULL, "mpi", shp) == 0); /* the row axis has one rank */
    EXPECT(isnan(mb_pb_model_comm(&tr, 1, 2, NULL, "mpi", shp)));
    struct mb_coll_profile prof;
    memset(&prof, 0, sizeof(prof));
    prof.p2p_alpha = 1e-6, prof.p2p.mem = 1e-9;
    struct mb_pb_traffic halo = {.ncoll = 0, .halos = 4, .halo_bytes = 1000};
    EXPECT(fabs(mb_pb_model_comm(&halo, 2, 1, &prof, "mpi", shp) - 4 * (1e-6 + 1000 * 1e-9)) < 1e-15);
    EXPECT(mb_pb_model_comm(&halo, 1, 1, &prof, "mpi", shp) == 0);

    /* --kernel/--variant's names: distributed first, pblas last of theirs, shared-only after ';' */
    struct mb_pb_names nm;
    mb_pb_names_build(&nm);
    EXPECT(nm.ndist_kernels == 12 && nm.nkernel > nm.ndist_kernels && strcmp(nm.kernel[0], "atax") == 0);
    EXPECT(strcmp(nm.variant[nm.ndist_variants - 1], "pblas") == 0 && nm.nvariant == nm.ndist_variants + 2);
    EXPECT(mb_pb_name_index(nm.kernel, nm.nkernel, "heat_3d") >= 0 && mb_pb_name_index(nm.kernel, nm.nkernel, "x") == -1);
    EXPECT(strstr(nm.variant_choices, "|pblas;naive|fused") && strstr(nm.kernel_choices, "|heat_3d;lstsqr|"));
    char *av1[] = {"p", "--variant", "summa,pblas", NULL}, *av2[] = {"p", "--variant=pblas", NULL},
         *av3[] = {"p", "--kernel", "pblas", "--variant", "all", NULL};
    EXPECT(mb_pb_flag_names(3, av1, "--variant", "pblas") && mb_pb_flag_names(2, av2, "--variant", "pblas"));
    EXPECT(!mb_pb_flag_names(5, av3, "--variant", "pblas") && !mb_pb_flag_names(2, av1, "--variant", "pblas"));

    /* --scale-down F,KERNEL=F: the kernel's own factor, else the default (1 when absent) */
    double sf;
    char serr[256] = "";
    EXPECT(mb_pb_scale_for("10", "gemm", &sf, serr, sizeof(serr)) == 0 && sf == 10);
    EXPECT(mb_pb_scale_for("5,atax=2,jacobi_1d=1", "atax", &sf, serr, sizeof(serr)) == 0 && sf == 2);
    EXPECT(mb_pb_scale_for("5,atax=2,jacobi_1d=1", "gemm", &sf, serr, sizeof(serr)) == 0 && sf == 5);
    EXPECT(mb_pb_scale_for("heat_3d=4", "gemm", &sf, serr, sizeof(serr)) == 0 && sf == 1);
    EXPECT(mb_pb_scale_for("heat_3d=4", NULL, &sf, serr, sizeof(serr)) == 0 && sf == 1);
    EXPECT(mb_pb_scale_for("5,jacobi_1d=0.25", "jacobi_1d", &sf, serr, sizeof(serr)) == 0 && sf == 0.25);
    EXPECT(mb_pb_scale_for("0.005", "gemm", &sf, serr, sizeof(serr)) == -1);
    EXPECT(strcmp(serr, "--scale-down 0.005: expected F or F,KERNEL=F,... with each F in [0.01, 1e9]") == 0);
    EXPECT(mb_pb_scale_for("0", "gemm", &sf, serr, sizeof(serr)) == -1);
    EXPECT(mb_pb_scale_for("5,6", "gemm", &sf, serr, sizeof(serr)) == -1);
    EXPECT(mb_pb_scale_for("5,atax=", "gemm", &sf, serr, sizeof(serr)) == -1);
    EXPECT(mb_pb_scale_for("5,k5mm=2", "gemm", &sf, serr, sizeof(serr)) == -1);
    EXPECT(strcmp(serr, "--scale-down 5,k5mm=2: 'k5mm' is not a distributed kernel") == 0);
    EXPECT(mb_pb_scale_for("nan", "gemm", &sf, serr, sizeof(serr)) == -1);

    /* the model of a call: max(FLOPs / P at the FLOP rate, bytes / P at the byte rate) + comm; the
     * working set is the arrays once (gemm M=2, N=3, K=4: A 2x4, B 4x3, C 2x3) */
    struct mb_pb_sizes g234 = {.nd = 3, .d = {2, 3, 4}};
    const struct mb_pb_kernel *gk = mb_pb_find("gemm");
    EXPECT(gk->footprint(&g234) == 8.0 * (8 + 12 + 6));
#define NEAR(a, b) (fabs((a) - (b)) <= 1e-12 * fabs(b))
    /* gemm's bytes: A 8 + B 12 + C read and written 2 x 6 = 32 doubles, 256 bytes, of which C's 48 written */
    EXPECT(gk->bytes(&g234) == 256 && gk->written(&g234) == 48);
    double cpt, mem, mt = mb_pb_model_time(gk, &g234, 2, 1e3, 1e9, 1e9, NAN, NAN, 0.5, &cpt, &mem);
    EXPECT(cpt == gk->flops(&g234) / 2 / 1e3 && NEAR(mem, 256.0 / 2 / 1e9) && mt == cpt + 0.5);
    mt = mb_pb_model_time(gk, &g234, 1, 1e12, 1e3, 1e3, NAN, NAN, 0, &cpt, &mem);
    EXPECT(mt == mem && NEAR(mem, 256.0 / 1e3));
    EXPECT(gk->cells == NULL && gk->cell_rate == NULL);

    /* the matrix-vector kernels: the model is their timed local compute + comm (local_s, mb-polybench's
     * k->local_time in set-up); the closed-form memory term is still computed and shown, never used. By
     * hand: atax M=3, N=5: A read twice 30 + x 5 + the temporary written 3 and read 3 + y written 5 = 46
     * doubles (368 bytes), 8 of them written (64 bytes): at P=2, reads at 1e3 B/s and writes at 1e2,
     * 304 / 2 / 1e3 + 64 / 2 / 1e2 = 0.152 + 0.32 = 0.472 s of memory; 0.3 s timed + 0.01 of comm = 0.31,
     * below the memory term: it is not a max with it */
    const struct mb_pb_kernel *ak = mb_pb_find("atax"), *gv = mb_pb_find("gemver");
    struct mb_pb_sizes a35 = {.nd = 2, .d = {3, 5}}, n4 = {.nd = 1, .d = {4}};
    EXPECT(ak->bytes(&a35) == 368 && ak->written(&a35) == 64 && ak->flops(&a35) == 60);
    EXPECT(ak->local_time != NULL && gk->local_time == NULL);
    mt = mb_pb_model_time(ak, &a35, 2, 1e9, 1e2, 1e3, NAN, 0.3, 0.01, &cpt, &mem);
    EXPECT(NEAR(mem, 0.472) && cpt == 0.3 && NEAR(mt, 0.31));
    /* the rates do not move it: a 10x faster read stream shortens only the shown memory term (0.0152 + 0.32),
     * the FLOP rate nothing */
    mt = mb_pb_model_time(ak, &a35, 2, 1e-300, 1e2, 1e4, NAN, 0.3, 0.01, &cpt, &mem);
    EXPECT(NEAR(mem, 0.3352) && NEAR(mt, 0.31));
    /* gemver N=4: A read three times and written once (48 + 16 doubles) + 10 vectors' worth (40) = 104
     * doubles, 832 bytes; written: A 16 + x 4 + w 4 = 24 doubles, 192 bytes. P=1, reads at 64 B/s and
     * writes at 32: 640 / 64 + 192 / 32 = 10 + 6 = 16 s shown; the model 2.5 s timed + 0 comm */
    EXPECT(gv->bytes(&n4) == 832 && gv->written(&n4) == 192);
    mt = mb_pb_model_time(gv, &n4, 1, 1e9, 32, 64, NAN, 2.5, 0, &cpt, &mem);
    EXPECT(NEAR(mem, 16.0) && mt == 2.5);
    /* no timed local compute (NaN, 0): no model, never a term of 0; the missing read stream only the shown term */
    EXPECT(isnan(mb_pb_model_time(ak, &a35, 2, 1e9, 1e2, 1e3, NAN, NAN, 0, &cpt, &mem)) && isnan(cpt));
    EXPECT(isnan(mb_pb_model_time(ak, &a35, 2, 1e9, 1e2, 1e3, NAN, 0, 0.01, &cpt, &mem)));
    mt = mb_pb_model_time(ak, &a35, 2, 1e9, 1e2, NAN, NAN, 0.3, 0, &cpt, &mem);
    EXPECT(mt == 0.3 && isnan(mem));
    /* a product or stencil ignores local_s */
    EXPECT(mb_pb_model_time(gk, &g234, 1, 1e12, 1e3, 1e3, NAN, 123.0, 0, &cpt, &mem) == mem);

    /* the stencils: max(bytes / P at the byte rate given (mb-polybench: the working set's copy rate),
     * cells / P at their own sweep's rate) + halo, the dgemm rate unused; by hand: jacobi_1d N=1002, TSTEPS=11: 2 x 1000 x 10 = 20000 cells, 32 x 1002 x 10
     * = 320640 bytes; P=2 at 1e6 cells/s: 0.01 s of loop against 320640 / 2 / 1e8 = 0.0016032 s of memory */
    const struct mb_pb_kernel *j1 = mb_pb_find("jacobi_1d"), *jk2 = mb_pb_find("jacobi_2d"), *h3 = mb_pb_find("heat_3d");
    struct mb_pb_sizes sj1 = {.nd = 1, .d = {1002}, .tsteps = 11}, sj2 = {.nd = 1, .d = {102}, .tsteps = 3},
                       sh3 = {.nd = 1, .d = {12}, .tsteps = 5};
    EXPECT(j1->cells(&sj1) == 20000 && j1->bytes(&sj1) == 320640);
    mt = mb_pb_model_time(j1, &sj1, 2, 1e300, 1e8, NAN, 1e6, NAN, 0.001, &cpt, &mem);
    EXPECT(NEAR(cpt, 0.01) && NEAR(mem, 0.0016032) && NEAR(mt, 0.011));
    mt = mb_pb_model_time(j1, &sj1, 2, 1e-300, 1e8, NAN, 1e9, NAN, 0.001, &cpt, &mem); /* memory-bound: dgemm's rate ignored */
    EXPECT(NEAR(cpt, 1e-5) && NEAR(mt, 0.0026032));
    /* jacobi_2d N=102, TSTEPS=3: 2 x 100^2 x 2 = 40000 cells; heat_3d N=12, TSTEPS=5: 2 x 10^3 x 4 = 8000
     * cells, 32 x 12^3 x 4 = 221184 bytes: at 1e5 B/s 2.21184 s beside 2 s of loop at 4000 cells/s, 8 s at 1000 */
    EXPECT(jk2->cells(&sj2) == 40000 && h3->cells(&sh3) == 8000 && h3->bytes(&sh3) == 221184);
    mt = mb_pb_model_time(jk2, &sj2, 4, 1, 1e12, NAN, 1e4, NAN, 0, &cpt, &mem);
    EXPECT(NEAR(cpt, 1.0) && NEAR(mt, 1.0));
    mt = mb_pb_model_time(h3, &sh3, 1, 1, 1e5, NAN, 4000, NAN, 0, &cpt, &mem);
    EXPECT(NEAR(cpt, 2.0) && NEAR(mem, 2.21184) && NEAR(mt, 2.21184));
    mt = mb_pb_model_time(h3, &sh3, 1, 1, 1e5, NAN, 1000, NAN, 0.25, &cpt, &mem);
    EXPECT(NEAR(mt, 8.25));
    mt = mb_pb_model_time(h3, &sh3, 1, 1, 1e5, NAN, NAN, NAN, 0, &cpt, &mem); /* no calibrated rate: no model */
    EXPECT(isnan(mt) && isnan(cpt));
    EXPECT(isnan(mb_pb_model_time(h3, &sh3, 1, 1, 1e5, NAN, 0, NAN, 0, &cpt, &mem)));
#undef NEAR
    for (size_t i = 0; i < mb_pb_nkernels(); i++) { /* every row has a working set below its traffic */
        const struct mb_pb_kernel *k = mb_pb_kernel_at(i);
        struct mb_pb_sizes z;
        mb_pb_sizes_at(k, 1, 1, 1, 100, &z);
        /* the written bytes: every kernel but the stencils splits its traffic, writes a part of it */
        EXPECT(!k->written == !!k->cells);
        if (k->written && !(k->written(&z) > 0 && k->written(&z) < k->bytes(&z)))
            printf("# %s/%s: written %g of %g bytes\n", k->name, k->variant, k->written(&z), k->bytes(&z));
        EXPECT(!k->written || (k->written(&z) > 0 && k->written(&z) < k->bytes(&z)));
        if (!(k->footprint(&z) > 0 && k->footprint(&z) <= k->bytes(&z)))
            printf("# %s/%s: working set %g, traffic %g\n", k->name, k->variant, k->footprint(&z), k->bytes(&z));
        EXPECT(k->footprint(&z) > 0 && k->footprint(&z) <= k->bytes(&z));
    }

    /* --algo lists: each kind takes the first name implementing it */
    EXPECT(mb_pb_algo_for("binomial,rd", MB_COLL_BCAST) == mb_coll_find("binomial"));
    EXPECT(mb_pb_algo_for("binomial,rd", MB_COLL_ALLREDUCE) == mb_coll_find("rd"));
    EXPECT(mb_pb_algo_for("rd,binomial", MB_COLL_ALLREDUCE) == mb_coll_find("rd"));
    EXPECT(mb_pb_algo_for("shm", MB_COLL_BCAST) == mb_coll_find("shm"));
    EXPECT(mb_pb_algo_for("rd", MB_COLL_BCAST) == NULL);
    char aerr[256] = "";
    EXPECT(mb_pb_algo_check("mpi", aerr, sizeof(aerr)) == 0 && mb_pb_algo_check("binomial,rd", aerr, sizeof(aerr)) == 0);
    EXPECT(mb_pb_algo_check("rd", aerr, sizeof(aerr)) == -1);
    EXPECT(strcmp(aerr, "--algo rd: no bcast among them (the grid needs bcast and allreduce)") == 0);
    EXPECT(mb_pb_algo_check("binomial,nosuch", aerr, sizeof(aerr)) == -1);
    EXPECT(strcmp(aerr, "--algo nosuch: not in the collectives registry (mb-coll --help lists them)") == 0);
    EXPECT(mb_pb_algo_check("binomial,", aerr, sizeof(aerr)) == -1);
    /* the model prices each kind with its own algorithm: rd's allreduce, a number; mpi's, NaN */
    prof.p2p_msg1k = 2e-6, prof.p2p_msg8k = 3e-6, prof.reduce.mem = 2e-10, prof.copy.mem = 1e-10, prof.p2p.cache = 1e-10, prof.reduce.cache = 1e-10, prof.copy.cache = 5e-11, prof.cache_bytes = 1e6;
    shp[MB_PB_ROW] = (struct mb_coll_shape){.nranks = 2, .node_size = 2, .nnodes = 1, .one_host = 1};
    struct mb_coll_args ra = {.kind = MB_COLL_ALLREDUCE, .sendbuf = &ra, .count = 100, .dtype = MB_COLL_DOUBLE,
                              .op = MB_COLL_SUM, .root = 0};
    double rd_s = mb_coll_model(&prof, "rd", &ra, &shp[MB_PB_ROW]);
    printf("# rd's allreduce of 800 B on 2 ranks: %g s\n", rd_s);
    EXPECT(rd_s > 0 && mb_pb_model_comm(&tr, 1, 2, &prof, "binomial,rd", shp) == rd_s);
    EXPECT(isnan(mb_pb_model_comm(&tr, 1, 2, &prof, "mpi", shp)));

    /* --dims for a kernel: its sizes, TSTEPS last for a stencil (at least 2) */
    struct mb_pb_sizes sz;
    char dwhy[256] = "";
    EXPECT(mb_pb_sizes_parse(mb_pb_find("gemm"), "8,9,10", &sz, dwhy, sizeof(dwhy)) == 0 && sz.nd == 3 &&
           sz.d[0] == 8 && sz.d[2] == 10 && sz.tsteps == 0);
    EXPECT(mb_pb_sizes_parse(mb_pb_find("jacobi_2d"), "12,1", &sz, dwhy, sizeof(dwhy)) == 0 && sz.d[0] == 12 &&
           sz.tsteps == 2);
    EXPECT(mb_pb_sizes_parse(mb_pb_find("jacobi_2d"), "8", &sz, dwhy, sizeof(dwhy)) == -1);
    EXPECT(strcmp(dwhy, "--dims 8: jacobi_2d takes 2 values, not 1") == 0);
    EXPECT(mb_pb_sizes_parse(mb_pb_find("k3mm"), "1,2,x", &sz, dwhy, sizeof(dwhy)) == -1);
    EXPECT(strcmp(dwhy, "--dims 1,2,x: k3mm takes 5 positive integers (M,N,K,R,S)") == 0);

    /* one row per kernel and variant: the first ones, plus pblas for the
     * products (after summa) and the matrix-vector kernels (after allreduce) */
    EXPECT(mb_pb_nkernels() == sizeof(expected) / sizeof(expected[0]) + 8);
    const char *pbl[][2] = {{"gemm", "summa"},     {"k2mm", "summa"},      {"k3mm", "summa"},
                            {"atax", "allreduce"}, {"bicg", "allreduce"},  {"gemver", "allreduce"},
                            {"gesummv", "allreduce"}, {"mvt", "allreduce"}};
    for (int i = 0; i < 8; i++) {
        const struct mb_pb_kernel *su = mb_pb_find_variant(pbl[i][0], pbl[i][1]),
                                  *pb = mb_pb_find_variant(pbl[i][0], "pblas");
        EXPECT(su && pb && su != pb && su == mb_pb_find(pbl[i][0]));
        if (su && pb) /* the same problem: sizes and closed forms */
            EXPECT(su->nd == pb->nd && memcmp(su->base, pb->base, sizeof(su->base)) == 0 && su->scaled == pb->scaled &&
                   su->scale == pb->scale && su->divisor == pb->divisor && su->flops == pb->flops &&
                   su->traffic == pb->traffic);
    }
    EXPECT(mb_pb_find_variant("doitgen", "pblas") == NULL);
    EXPECT(mb_pb_find_variant("jacobi_2d", "pblas") == NULL);
    for (size_t k = 0; k < sizeof(expected) / sizeof(expected[0]); k++) {
        const struct mb_pb_kernel *kern = mb_pb_find(expected[k].kernel);
        EXPECT(kern != NULL);
        if (!kern)
            continue;
        for (int i = 0; i < 9; i++) {
            struct mb_pb_sizes s;
            mb_pb_sizes_at(kern, ps[i], pxs[i], pys[i], 1.0, &s);
            for (int d = 0; d < kern->nd; d++)
                if (s.d[d] != expected[k].d[i][d]) {
                    fprintf(stderr, "%s P=%d %s = %lld, expected %lld\n", kern->name, ps[i], kern->dim_names[d],
                            s.d[d], expected[k].d[i][d]);
                    test_failures++;
                }
            /* DaCe's rounding makes every table grid divide its sizes */
            char why[256];
            EXPECT(kern->divides(&s, pxs[i], pys[i], why, sizeof(why)) == 0);
            EXPECT(s.tsteps == kern->tsteps);
        }
    }
    /* validation sizes (DaCe: base / 100, TSTEPS too) and a grid that does not divide */
    const struct mb_pb_kernel *j2 = mb_pb_find("jacobi_2d"), *gemm = mb_pb_find("gemm");
    struct mb_pb_sizes s;
    mb_pb_sizes_at(j2, 1, 1, 1, 100, &s);
    EXPECT(s.d[0] == 5 && s.tsteps == 10);
    mb_pb_sizes_at(gemm, 4, 2, 2, 100, &s);
    EXPECT(s.d[0] == 128 && s.d[1] == 148 && s.d[2] == 84); /* 80*1.5874=126.99 -> 128; 92 -> 146.04 -> 148; 52 -> 82.5 -> 84 */
    s.d[2] = 85;
    char why[256] = "";
    EXPECT(gemm->divides(&s, 2, 2, why, sizeof(why)) != 0 && strstr(why, "K=85"));
    EXPECT(mb_pb_adjust(24000, MB_PB_LINEAR, 3, 3) == 72000);
    EXPECT(mb_pb_adjust(10, MB_PB_SQRT, 2, 1) == 15); /* 14.14 rounds up */
    EXPECT(mb_pb_find("nosuch") == NULL);
    /* the model's dgemm rate: the median of work / seconds over the
     * calibration passes; passes without work or time are left out */
    {
        const double w[5] = {8, 9, 10, 0, 30}, t[5] = {1, 1, 2, 1, 3};
        EXPECT_NEAR(mb_pb_median_rate(w, t, 5), 8.5, 1e-12); /* 8, 9, 5, 10: (8 + 9) / 2 */
        EXPECT_NEAR(mb_pb_median_rate(w, t, 3), 8, 1e-12);   /* 8, 9, 5 */
        const double t0[2] = {0, -1};
        EXPECT(isnan(mb_pb_median_rate(w, t0, 2)));
        EXPECT(isnan(mb_pb_median_rate(w, t, 0)));
    }
    /* the stencils' cell rate on the rank's CPU clock: every call of the
     * pass counts (the one that crossed the window ran on that clock too);
     * a pass whose clock did not advance is left out by the median */
    {
        double w[3], t[3];
        mb_pb_cpu_pass(100, 4, 1.0, 1.5, &w[0], &t[0]); /* 5 calls of 100 in 0.5 s */
        EXPECT_NEAR(w[0], 500, 1e-12);
        EXPECT_NEAR(t[0], 0.5, 1e-12);
        mb_pb_cpu_pass(100, 0, 2.0, 2.25, &w[1], &t[1]); /* one call, past the window */
        EXPECT_NEAR(w[1], 100, 1e-12);
        EXPECT_NEAR(t[1], 0.25, 1e-12);
        mb_pb_cpu_pass(100, 3, 3.0, 3.0, &w[2], &t[2]); /* the clock did not move */
        EXPECT(t[2] == 0);
        EXPECT_NEAR(mb_pb_median_rate(w, t, 3), 700, 1e-9); /* 1000 and 400: (1000 + 400) / 2 */
        mb_pb_cpu_pass(100, 3, NAN, 3.0, &w[2], &t[2]); /* no clock: not counted */
        EXPECT(t[2] == 0);
    }
    /* the stencils' rate over the ranks: each pass's slowest rank, then the median over the passes (not each
     * rank's median, then the slowest: min(8, 8) = 8 for r, where each pass has one rank at 2); a pass with a 0
     * or NaN on any rank is dropped */
    {
        const double r[2 * 3] = {/* rank 0 */ 2, 8, 8,
                                 /* rank 1 */ 8, 2, 8};
        EXPECT_NEAR(mb_pb_slowest_median(r, 2, 3), 2, 1e-12); /* slowest 2, 2, 8 */
        const double r4[2 * 4] = {2, 8, 8, 6, 8, 2, 8, 6};
        EXPECT_NEAR(mb_pb_slowest_median(r4, 2, 4), 4, 1e-12); /* slowest 2, 2, 8, 6: (2 + 6) / 2 */
        EXPECT_NEAR(mb_pb_slowest_median(r, 1, 3), 8, 1e-12);  /* one rank: its median */
        const double z[2 * 3] = {3, 0, 2, 6, 5, NAN};
        EXPECT_NEAR(mb_pb_slowest_median(z, 2, 3), 3, 1e-12); /* pass 0: min(3, 6); passes 1, 2 dropped */
        const double bad[2 * 2] = {0, NAN, 1, 1};
        EXPECT(isnan(mb_pb_slowest_median(bad, 2, 2)));       /* no pass counts */
        EXPECT(isnan(mb_pb_slowest_median(r, 0, 3)));          /* no rank */
    }
    /* the products' own dgemm shapes (the model's FLOP rate is theirs), by hand from the kernels' loops */
    {
        struct mb_pb_gemm gm[MB_PB_MAXGEMM];
        /* gemm at the medium scale, P = 2 (1x2): ml = 2016, nl = 1160, 2 panels of w = 656; overlap: 4 slices of
         * 504 rows a panel, 4 distinct A and C slices */
        int n = mb_pb_summa_gemms(2016, 2320, 1312, 1, 2, 1, gm, 0);
        EXPECT(n == 1 && gm[0].m == 504 && gm[0].n == 1160 && gm[0].k == 656 && gm[0].calls == 8 && gm[0].sets == 4);
        EXPECT(gm[0].csets == 4); /* each A slice's own C slice */
        EXPECT_NEAR(mb_pb_gemm_work(gm, n), 2.0 * 2016 * 2320 * 1312 / 2, 1); /* the product's FLOPs / P */
        /* its calibration operands: 4 A slices 504 x 656, B 656 x 1160, 4 C slices 504 x 1160, 8 bytes each:
         * 10579968 + 6087680 + 18708480 */
        EXPECT_NEAR(mb_pb_gemm_bytes(gm, n), 35376128.0, 0.5);
        n = mb_pb_summa_gemms(2016, 2320, 1312, 1, 2, 0, gm, 0); /* blocking: one product a panel */
        EXPECT(n == 1 && gm[0].m == 2016 && gm[0].n == 1160 && gm[0].k == 656 && gm[0].calls == 2 && gm[0].sets == 1);
        /* ml = 10 on a 2x2 grid (M = 20): slices of ceil(10 / 4) = 3 rows, three of them and one of 1 row */
        n = mb_pb_summa_gemms(20, 12, 8, 2, 2, 1, gm, 0);
        EXPECT(n == 2 && gm[0].m == 3 && gm[0].n == 6 && gm[0].k == 4 && gm[0].calls == 6 && gm[0].sets == 3);
        EXPECT(gm[1].m == 1 && gm[1].n == 6 && gm[1].k == 4 && gm[1].calls == 2 && gm[1].sets == 1);
        EXPECT_NEAR(mb_pb_gemm_work(gm, n), 2.0 * 20 * 12 * 8 / 4, 1e-9); /* 2 (3 x 6 x 4 x 6 + 6 x 4 x 2) = 960 */
        /* pdgemm: one product of the whole blocks on one process; else rank-32 updates (41 x 32 = 1312; at 2x2
         * M=636, N=732, K=414: 12 x 32 + 30, local 318 x 366, as a dgemm_ interposer saw at --scale-down 20) */
        n = mb_pb_pdgemm_gemms(1600, 1840, 1040, 1, 1, gm, 0);
        EXPECT(n == 1 && gm[0].m == 1600 && gm[0].n == 1840 && gm[0].k == 1040 && gm[0].calls == 1);
        n = mb_pb_pdgemm_gemms(2016, 2320, 1312, 1, 2, gm, 0);
        EXPECT(n == 1 && gm[0].m == 2016 && gm[0].n == 1160 && gm[0].k == 32 && gm[0].calls == 41);
        n = mb_pb_pdgemm_gemms(636, 732, 414, 2, 2, gm, 0);
        EXPECT(n == 2 && gm[0].m == 318 && gm[0].n == 366 && gm[0].k == 32 && gm[0].calls == 12);
        EXPECT(gm[1].m == 318 && gm[1].n == 366 && gm[1].k == 30 && gm[1].calls == 1);
        EXPECT_NEAR(mb_pb_gemm_work(gm, n), 2.0 * 636 * 732 * 414 / 4, 1e-6);
        /* the kernels' hooks: k2mm's two products in order (tmp = A B, D = tmp C; ml = 1614: three slices of
         * 404 rows and one of 402), doitgen's K/P planes */
        struct mb_pb_grid g12 = {.p = 2, .px = 1, .py = 2, .summa_overlap = 1};
        struct mb_pb_sizes k2 = {.nd = 4, .d = {1614, 1816, 1110, 1210}};
        n = mb_pb_find_variant("k2mm", "summa")->gemms(&k2, &g12, gm);
        EXPECT(n == 4 && gm[0].m == 404 && gm[0].n == 908 && gm[0].k == 555 && gm[0].calls == 6);
        EXPECT(gm[1].m == 402 && gm[1].calls == 2 && gm[2].m == 404 && gm[2].n == 605 && gm[2].k == 908);
        EXPECT_NEAR(mb_pb_gemm_work(gm, n), (2.0 * 1614 * 1816 * 1110 + 2.0 * 1614 * 1210 * 1816) / 2, 1);
        n = mb_pb_find_variant("k2mm", "pblas")->gemms(&k2, &g12, gm);
        EXPECT(n == 4 && gm[0].k == 32 && gm[0].calls == 34 && gm[1].k == 22 && gm[2].calls == 56 && gm[3].k == 24);
        struct mb_pb_sizes dg = {.nd = 3, .d = {128, 256, 256}};
        n = mb_pb_find("doitgen")->gemms(&dg, &g12, gm);
        EXPECT(n == 1 && gm[0].m == 256 && gm[0].n == 256 && gm[0].k == 256 && gm[0].calls == 64 && gm[0].sets == 64);
        /* doitgen's one sum buffer: one C (0.5 MiB) beside the 64 A planes (32 MiB) and C4 (0.5 MiB), not 64 C
         * planes (another 32 MiB, as before 2026-12-07): 64 x 256 x 256 x 8 + 2 x 256 x 256 x 8 */
        EXPECT(gm[0].csets == 1);
        EXPECT_NEAR(mb_pb_gemm_bytes(gm, n), 34603008.0, 0.5);
        /* DaCe's doitgen at P = 1 (K = 128, M = N = 512): 256 MiB of A planes, 2 MiB each of C4 and C */
        struct mb_pb_sizes dgf = {.nd = 3, .d = {128, 512, 512}};
        struct mb_pb_grid g11 = {.p = 1, .px = 1, .py = 1};
        EXPECT(mb_pb_find("doitgen")->gemms(&dgf, &g11, gm) == 1 && gm[0].csets == 1);
        EXPECT_NEAR(mb_pb_gemm_bytes(gm, 1), 268435456.0 + 2 * 2097152.0, 0.5);
        /* sets and csets out of range: at least one of each, no more C than A */
        const struct mb_pb_gemm odd[2] = {{2, 3, 4, 1, 0, 0}, {2, 3, 4, 5, 2, 7}};
        EXPECT_NEAR(mb_pb_gemm_bytes(odd, 1), 8.0 * (8 + 12 + 6), 1e-9);            /* 1 A, B, 1 C */
        EXPECT_NEAR(mb_pb_gemm_bytes(odd + 1, 1), 8.0 * (2 * 8 + 12 + 2 * 6), 1e-9); /* 2 A, B, 2 C */
        EXPECT(mb_pb_gemm_bytes(odd, 0) == 0);
        EXPECT(mb_pb_find("atax")->gemms == NULL && mb_pb_find("jacobi_2d")->gemms == NULL);
        EXPECT(mb_pb_gemm_work(gm, 0) == 0);
        /* products a calibration pass: a call of the cycle takes 0.12 / 8 = 15 ms, 50 ms -> 4 (3.33 rounded up);
         * a call longer than the window: 1; no estimate: 1 */
        EXPECT(mb_pb_gemm_pass_calls(0.05, 0.12, 8) == 4);
        EXPECT(mb_pb_gemm_pass_calls(0.05, 0.13, 1) == 1);
        EXPECT(mb_pb_gemm_pass_calls(0.05, 0.0, 8) == 1);
        EXPECT(mb_pb_gemm_pass_calls(0.05, NAN, 8) == 1);
        EXPECT(mb_pb_gemm_pass_calls(0.05, 0.001, 64) == 3200);
    }
    return TEST_EXIT();
}
