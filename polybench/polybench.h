/* movebench polybench library: DaCe's distributed polybench kernels
 * (SC'21, samples/distributed/polybench.py) in C/MPI. One file per kernel
 * (gapbs style), each an ops-table row (struct mb_pb_kernel): its sizes
 * and their weak-scaling rule, init, the distributed run, a serial double
 * reference of each rank's output block, closed-form FLOPs, bytes and
 * communication. Process grids come from DaCe's table (P = 1, 2, 4 ...
 * 256) or an explicit PxQ, built with MPI_Cart_create; collectives go
 * through the collectives registry (collectives/coll.h).
 * Depends on collectives/, common/, MPI and OpenBLAS (cblas). */
#ifndef MB_POLYBENCH_H
#define MB_POLYBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "../collectives/coll.h"

#define MB_PB_MAXDIM 5
#define MB_PB_MAXOUT 2

/* ---- process grid ------------------------------------------------------ */

/* DaCe's table: (Px, Py) for P = 1, 2, 4 ... 256. 0, or -1 for any other P. */
int mb_pb_grid_table(int p, int *px, int *py);
/* "PxQ" with P, Q >= 1. 0 or -1. */
int mb_pb_grid_parse(const char *s, int *px, int *py);

/* A Px x Py Cartesian grid (row-major ranks, non-periodic, no reordering)
 * with its row communicator (same cx, size Py, rank cy) and column
 * communicator (same cy, size Px, rank cx) from MPI_Cart_sub, a 1-D line
 * of all P for 1-D kernels, and a collectives context on each of row and
 * column, driven by one registry algorithm. */
struct mb_pb_grid {
    int p, px, py, rank, cx, cy;
    MPI_Comm cart, row, col, line;
    struct mb_coll_ctx *row_ctx, *col_ctx;
    const struct mb_coll_algo *algo;
};
enum mb_pb_axis { MB_PB_ROW = 0, MB_PB_COL = 1 };

/* Collective over comm (px * py ranks). algo: a registry name that must
 * implement bcast and allreduce and be usable on both contexts. 0, or -1
 * with the reason in err (the same on every rank). */
int mb_pb_grid_create(MPI_Comm comm, int px, int py, const char *algo, struct mb_pb_grid *g, char *err,
                      size_t errlen);
void mb_pb_grid_free(struct mb_pb_grid *g);
/* Broadcast and sum-allreduce of doubles over the row or column
 * communicator through the registry algorithm. MPI_SUCCESS or an error. */
int mb_pb_bcast(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *buf, size_t n, int root);
int mb_pb_allreduce(const struct mb_pb_grid *g, enum mb_pb_axis axis, const double *in, double *out, size_t n);
/* Seconds this process has spent in the grid's broadcasts, reductions and
 * stencil halo exchanges so far (pdgemm's communication is inside
 * ScaLAPACK: not counted); mb_pb_comm_add counts more. */
double mb_pb_comm_seconds(void);
void mb_pb_comm_add(double seconds);
/* Buffers for the algorithm on an axis: node-registered (mb_coll_alloc)
 * when the algorithm wants them, else host memory. NULL on failure. */
double *mb_pb_buf(const struct mb_pb_grid *g, enum mb_pb_axis axis, size_t n);
void mb_pb_buf_free(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *p);

/* ---- sizes ------------------------------------------------------------- */

enum mb_pb_scale { MB_PB_SQRT, MB_PB_CBRT, MB_PB_LINEAR };
enum mb_pb_divisor { MB_PB_DIV_MAXGRID, MB_PB_DIV_P };

struct mb_pb_sizes {
    int nd;
    long long d[MB_PB_MAXDIM];
    long long tsteps; /* 0: no time loop */
};

/* DaCe's adjust_size: size * f(P), rounded up to a multiple of divisor
 * (ceil(size * f(P) / divisor) * divisor). */
long long mb_pb_adjust(double size, enum mb_pb_scale scale, int p, long long divisor);

/* ---- kernels ----------------------------------------------------------- */

/* A rank's part of one output: rows x cols of a row-major global array
 * starting at (row0, col0), stored with leading dimension ld. */
struct mb_pb_block {
    const char *name;
    double *data;
    long long rows, cols, ld, row0, col0;
};

/* Per-rank communication of one call, for the model. */
struct mb_pb_traffic {
    int ncoll;
    struct {
        enum mb_coll_kind kind;
        enum mb_pb_axis axis;
        size_t count;  /* doubles per call */
        double calls;
    } coll[8];
    double halos;      /* halo exchanges (one per array per step) */
    double halo_bytes; /* the largest message of one exchange */
};

struct mb_pb_inst;

struct mb_pb_kernel {
    const char *name, *variant;
    int nd;
    const char *dim_names[MB_PB_MAXDIM];
    long long base[MB_PB_MAXDIM];
    unsigned scaled;            /* bit mask: dims that grow with P */
    long long tsteps;           /* 0: none */
    enum mb_pb_scale scale;
    enum mb_pb_divisor divisor;
    /* 0 if the grid divides the sizes, else -1 and why */
    int (*divides)(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len);
    /* allocate this rank's arrays (in->priv), set in->out; 0 or -1 with in->err */
    int (*init)(struct mb_pb_inst *in);
    /* (re)write the inputs: every call starts from the same data */
    void (*reset)(struct mb_pb_inst *in);
    /* the distributed call: MPI_SUCCESS or an error */
    int (*run)(struct mb_pb_inst *in);
    /* serial double reference of out[o] (its rows x cols, dense) */
    void (*reference)(const struct mb_pb_inst *in, int o, double *ref);
    double (*flops)(const struct mb_pb_sizes *s); /* whole problem */
    double (*bytes)(const struct mb_pb_sizes *s); /* compulsory traffic, whole problem */
    void (*traffic)(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t);
    void (*fini)(struct mb_pb_inst *in);
};

struct mb_pb_inst {
    const struct mb_pb_kernel *k;
    const struct mb_pb_grid *g;
    struct mb_pb_sizes s;
    int skip_halo; /* fault injection: stencils skip their halo exchanges */
    int nout;
    struct mb_pb_block out[MB_PB_MAXOUT];
    double *ref[MB_PB_MAXOUT];
    void *priv;
    char err[256];
};

size_t mb_pb_nkernels(void);
const struct mb_pb_kernel *mb_pb_kernel_at(size_t i);
/* the first row of that name (rows of one kernel differ in variant) */
const struct mb_pb_kernel *mb_pb_find(const char *name);
const struct mb_pb_kernel *mb_pb_find_variant(const char *name, const char *variant);
/* 1 when built with ScaLAPACK (MB_HAVE_SCALAPACK): the pblas rows work */
int mb_pb_pblas_available(void);

/* The sizes at P on a px x py grid: the base sizes divided by scale_down
 * (rounded up, tsteps too, at least 1 and tsteps at least 2), then
 * mb_pb_adjust on the scaled dims. */
void mb_pb_sizes_at(const struct mb_pb_kernel *k, int p, int px, int py, double scale_down,
                    struct mb_pb_sizes *out);
/* "M=80,N=92,K=52" (and ",TSTEPS=10") */
void mb_pb_sizes_str(const struct mb_pb_kernel *k, const struct mb_pb_sizes *s, char *buf, size_t len);

/* An instance on grid g (collective over it). NULL with err on failure. */
struct mb_pb_inst *mb_pb_open(const struct mb_pb_kernel *k, const struct mb_pb_grid *g,
                              const struct mb_pb_sizes *s, int skip_halo, char *err, size_t errlen);
void mb_pb_reset(struct mb_pb_inst *in);
int mb_pb_run(struct mb_pb_inst *in);
/* Compares this rank's outputs with the reference (computed on the first
 * call, kept): 0, or 1 with "OUT[global index] = got, expected ref" in
 * msg for the first element off by more than 1e-9 relative (NaN fails). */
int mb_pb_check(struct mb_pb_inst *in, char *msg, size_t len);
/* Fault injection: adds 1 to one element of out[0], drawn from seed. */
void mb_pb_corrupt(struct mb_pb_inst *in, uint64_t seed);
void mb_pb_close(struct mb_pb_inst *in);

/* Per-rank FLOPs and bytes of one call (the closed forms / P). */
double mb_pb_rank_flops(const struct mb_pb_inst *in);
double mb_pb_rank_bytes(const struct mb_pb_inst *in);

#endif
