/* The stencils' overlapped halo exchange (polybench/stencil.c): the split
 * of a block's cells into the interior (swept while the exchange flies)
 * and the edge cells covers every cell once, the interior reads no ghost;
 * and jacobi_1d, jacobi_2d and heat_3d equal their serial reference bit
 * for bit (the same expression, the same order) on every rank. Runs as a
 * singleton in the unit tests and under mpirun at 2 and 4 ranks and on a
 * 1x3 grid (tests/integration/polybench.sh); MB_FAULT_INJECT=skip-halo
 * (no exchange) must fail it at P > 1. The stencils' calibrated cell
 * rates (the model's loop term) are finite and the same on every rank.
 * The matrix-vector kernels' timed local compute (their model term) is
 * finite, the same on every rank, moves nothing through the grid's
 * communication, and leaves a block that, reset, computes the same bits
 * as before it and still validates. */
#include "../../polybench/stencil.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int covers_once(const struct mb_pb_rect *upd, long long rl, long long cl)
{
    struct mb_pb_rect part[5];
    mb_pb_stencil_split(upd, rl, cl, part);
    for (long long i = upd->i0; i <= upd->i1; i++)
        for (long long j = upd->j0; j <= upd->j1; j++) {
            int n = 0;
            for (int p = 0; p < 5; p++)
                n += i >= part[p].i0 && i <= part[p].i1 && j >= part[p].j0 && j <= part[p].j1;
            if (n != 1)
                return 0;
        }
    /* nothing outside upd, and the interior reads no ghost row or column */
    for (int p = 0; p < 5; p++) {
        const struct mb_pb_rect *r = &part[p];
        if (r->i0 > r->i1 || r->j0 > r->j1)
            continue;
        if (r->i0 < upd->i0 || r->i1 > upd->i1 || r->j0 < upd->j0 || r->j1 > upd->j1)
            return 0;
        if (p == 0 && (r->j0 < 2 || r->j1 > cl - 1 || (rl && (r->i0 < 2 || r->i1 > rl - 1))))
            return 0;
    }
    return 1;
}

static void split_cases(void)
{
    for (long long rl = 0; rl <= 6; rl++)
        for (long long cl = 1; cl <= 6; cl++)
            for (int lo = 1; lo <= 2; lo++)
                for (int hi = 0; hi <= 1; hi++) {
                    struct mb_pb_rect upd = {rl ? lo : 0, rl ? rl - hi : 0, lo, cl - hi};
                    EXPECT(covers_once(&upd, rl, cl));
                }
    struct mb_pb_rect part[5], upd = {1, 8, 1, 8};
    mb_pb_stencil_split(&upd, 8, 8, part);
    EXPECT(part[0].i0 == 2 && part[0].i1 == 7 && part[0].j0 == 2 && part[0].j1 == 7);
    upd = (struct mb_pb_rect){0, 0, 2, 9}; /* 1-D, the left end global: only cell 10 reads a ghost */
    mb_pb_stencil_split(&upd, 0, 10, part);
    EXPECT(part[0].i0 == 0 && part[0].i1 == 0 && part[0].j0 == 2 && part[0].j1 == 9);
}

/* out[o] == its reference, every bit; the first difference to stderr */
static int exact(struct mb_pb_inst *in, int rank)
{
    int bad = 0;
    for (int o = 0; o < in->nout && !bad; o++) {
        const struct mb_pb_block *b = &in->out[o];
        for (long long i = 0; i < b->rows && !bad; i++)
            if (memcmp(b->data + i * b->ld, in->ref[o] + i * b->cols, (size_t)b->cols * sizeof(double))) {
                fprintf(stderr, "%s: rank %d: %s row %lld differs from the serial reference\n", in->k->name, rank,
                        b->name, b->row0 + i);
                bad = 1;
            }
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, px, py;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    split_cases();
    char err[256];
    const char *grid = getenv("MB_TEST_GRID"); /* PxQ; unset or empty: DaCe's table */
    if (grid && !*grid)
        grid = NULL;
    if (mb_pb_grid_choose(nranks, grid, &px, &py, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct mb_pb_grid g;
    EXPECT(mb_pb_grid_create(MPI_COMM_WORLD, px, py, "mpi", &g, err, sizeof(err)) == 0);
    const char *fault = getenv("MB_FAULT_INJECT");
    int skip = fault && strcmp(fault, "skip-halo") == 0;
    /* sizes every grid of 1..4 ranks and 1x3 divides (N % 12 == 0) */
    static const struct { const char *name, *dims; } ks[] = {
        {"jacobi_1d", "48,7"}, {"jacobi_2d", "24,6"}, {"heat_3d", "12,4"}};
    int wrong = 0;
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        const struct mb_pb_kernel *k = mb_pb_find(ks[i].name);
        struct mb_pb_sizes s;
        EXPECT(k && mb_pb_sizes_parse(k, ks[i].dims, &s, err, sizeof(err)) == 0);
        struct mb_pb_inst *in = mb_pb_open(k, &g, &s, skip, err, sizeof(err));
        EXPECT(in != NULL);
        if (!in)
            continue;
        char msg[256];
        for (int call = 0; call < 2; call++) { /* twice: reset restores the inputs */
            mb_pb_reset(in);
            EXPECT(mb_pb_run(in) == MPI_SUCCESS);
            mb_pb_check(in, msg, sizeof(msg)); /* computes in->ref */
            wrong += exact(in, rank);
        }
        mb_pb_close(in);
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("3 stencils x 2 calls at %d ranks (%dx%d): %d block(s) not bit for bit\n", nranks, px, py, wrong);
    EXPECT(wrong == 0);
    /* the model's loop term: each stencil's sweep rate, calibrated on its own block, is a finite rate, the same
     * on every rank (the other kernels have none); reset afterwards, the block computes bit for bit again */
    for (size_t i = 0; i < mb_pb_nkernels(); i++) {
        const struct mb_pb_kernel *k = mb_pb_kernel_at(i);
        int stencil = strcmp(k->variant, "halo") == 0;
        EXPECT(!k->cells == !stencil && !k->cell_rate == !stencil);
        if (!stencil)
            continue;
        const char *dims = NULL;
        for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++)
            if (strcmp(ks[j].name, k->name) == 0)
                dims = ks[j].dims;
        struct mb_pb_sizes s;
        EXPECT(dims && mb_pb_sizes_parse(k, dims, &s, err, sizeof(err)) == 0);
        struct mb_pb_inst *in = dims ? mb_pb_open(k, &g, &s, skip, err, sizeof(err)) : NULL;
        EXPECT(in != NULL);
        if (!in)
            continue;
        mb_pb_reset(in);
        double r = k->cell_rate(in, MPI_COMM_WORLD), lo = r, hi = r;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (!(r > 1e5 && r < 1e12 && lo == hi)) {
            fprintf(stderr, "%s: cell rate %g per rank (ranks between %g and %g)\n", k->name, r, lo, hi);
            test_failures++;
        }
        char msg[256];
        mb_pb_reset(in);
        EXPECT(mb_pb_run(in) == MPI_SUCCESS);
        mb_pb_check(in, msg, sizeof(msg));
        EXPECT(exact(in, rank) == 0 || skip);
        mb_pb_close(in);
    }
    /* the matrix-vector kernels' local term (k->local_time): every row of atax, bicg, gemver, gesummv, mvt
     * has one, nothing else does; sizes every grid of 1..4 ranks and 1x3 divides */
    int nlocal = 0;
    for (size_t i = 0; i < mb_pb_nkernels(); i++) {
        const struct mb_pb_kernel *k = mb_pb_kernel_at(i);
        int mv = strcmp(k->variant, "allreduce") == 0 || (strcmp(k->variant, "pblas") == 0 && !k->gemms);
        EXPECT(!k->local_time == !mv);
        if (!mv || (strcmp(k->variant, "pblas") == 0 && !mb_pb_pblas_available()))
            continue;
        struct mb_pb_sizes s;
        EXPECT(mb_pb_sizes_parse(k, k->nd == 1 ? "24" : "24,36", &s, err, sizeof(err)) == 0);
        struct mb_pb_inst *in = mb_pb_open(k, &g, &s, 0, err, sizeof(err));
        EXPECT(in != NULL);
        if (!in)
            continue;
        char msg[256];
        double *before[MB_PB_MAXOUT] = {0};
        mb_pb_reset(in);
        EXPECT(mb_pb_run(in) == MPI_SUCCESS);
        EXPECT(mb_pb_check(in, msg, sizeof(msg)) == 0);
        for (int o = 0; o < in->nout; o++) { /* the bits of a call before any calibration */
            const struct mb_pb_block *b = &in->out[o];
            before[o] = malloc((size_t)b->cols * sizeof(double));
            EXPECT(b->rows == 1 && before[o] != NULL);
            if (before[o])
                memcpy(before[o], b->data, (size_t)b->cols * sizeof(double));
        }
        mb_pb_reset(in);
        double c0 = mb_pb_comm_seconds(), t = k->local_time(in, MPI_COMM_WORLD), c1 = mb_pb_comm_seconds();
        double lo = t, hi = t;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (!(t > 0 && t < 1 && lo == hi) || c1 != c0) {
            fprintf(stderr, "%s/%s: local time %g s per call (ranks between %g and %g), %g s in the grid's "
                    "communication during it\n", k->name, k->variant, t, lo, hi, c1 - c0);
            test_failures++;
        }
        mb_pb_reset(in);
        EXPECT(mb_pb_run(in) == MPI_SUCCESS);
        int same = mb_pb_check(in, msg, sizeof(msg)) == 0;
        for (int o = 0; o < in->nout; o++)
            same &= before[o] && memcmp(before[o], in->out[o].data, (size_t)in->out[o].cols * sizeof(double)) == 0;
        if (!same) {
            fprintf(stderr, "%s/%s: rank %d: after the local calibration and a reset, the call differs from "
                    "before it (%s)\n", k->name, k->variant, rank, msg);
            test_failures++;
        }
        for (int o = 0; o < in->nout; o++)
            free(before[o]);
        mb_pb_close(in);
        nlocal++;
    }
    if (rank == 0)
        printf("%d matrix-vector rows: local compute timed, the block bit for bit the same after it\n", nlocal);
    EXPECT(nlocal >= 5);
    /* the model's read-stream rate (the products' reads): a finite rate, the slowest rank's on
     * every rank (a small matrix here: the rate is the cache's, the arithmetic is what is checked) */
    double rr = mb_pb_read_rate(MPI_COMM_WORLD, (size_t)2 << 20, 1024), rlo = rr, rhi = rr;
    MPI_Allreduce(MPI_IN_PLACE, &rlo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &rhi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!(rr > 1e7 && rr < 1e13 && rlo == rhi)) {
        fprintf(stderr, "read-stream rate %g B/s per rank (ranks between %g and %g)\n", rr, rlo, rhi);
        test_failures++;
    }
    mb_pb_grid_free(&g);
    MPI_Finalize();
    return TEST_EXIT();
}
