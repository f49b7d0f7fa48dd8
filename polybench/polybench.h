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

/* The run's grid: --grid "PxQ" (grid not NULL; P*Q must be nranks), else
 * DaCe's table. 0, or -1 with the one-line reason (naming the flag). */
int mb_pb_grid_choose(int nranks, const char *grid, int *px, int *py, char *err, size_t len);

/* A Px x Py Cartesian grid (row-major ranks, non-periodic, no reordering)
 * with its row communicator (same cx, size Py, rank cy) and column
 * communicator (same cy, size Px, rank cx) from MPI_Cart_sub, a 1-D line
 * of all P for 1-D kernels, and a collectives context on each of row and
 * column, driven by registry algorithms (one for the broadcasts, one for
 * the reductions; the same one unless --algo names two). */
struct mb_pb_grid {
    int p, px, py, rank, cx, cy;
    MPI_Comm cart, row, col, line;
    struct mb_coll_ctx *row_ctx, *col_ctx;
    const struct mb_coll_algo *bcast_algo, *allreduce_algo;
    /* SUMMA's broadcasts, both through the registry (bcast_algo): 0
     * blocking, 1 the next panel's as nonblocking broadcasts
     * (mb_pb_ibcast_start) while the current panel's dgemm runs (summa.c;
     * set by the program after mb_pb_grid_create) */
    int summa_overlap;
};
enum mb_pb_axis { MB_PB_ROW = 0, MB_PB_COL = 1 };

/* --algo LIST: a registry name, or names separated by commas; a kind of
 * collective takes the first name whose algorithm implements it (NULL:
 * none does). mb_pb_algo_check: 0 when every name is in the registry and
 * bcast and allreduce both have one, else -1 with the one-line reason
 * naming --algo. */
const struct mb_coll_algo *mb_pb_algo_for(const char *list, enum mb_coll_kind kind);
int mb_pb_algo_check(const char *list, char *err, size_t len);

/* Collective over comm (px * py ranks). algo: an --algo list (above) whose
 * bcast and allreduce algorithms must be usable on both contexts. 0, or -1
 * with the reason in err (the same on every rank). */
int mb_pb_grid_create(MPI_Comm comm, int px, int py, const char *algo, struct mb_pb_grid *g, char *err,
                      size_t errlen);
void mb_pb_grid_free(struct mb_pb_grid *g);
/* Broadcast and sum-allreduce of doubles over the row or column
 * communicator through the registry algorithm. MPI_SUCCESS or an error. */
int mb_pb_bcast(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *buf, size_t n, int root);
int mb_pb_allreduce(const struct mb_pb_grid *g, enum mb_pb_axis axis, const double *in, double *out, size_t n);
/* A broadcast of doubles over the row or column communicator as a
 * request (mb_coll_start_algo with bcast_algo, which must have a
 * nonblocking form: mb_coll_nb_supports), its first step posted; *req
 * NULL on a one-rank axis. _test advances it without blocking, _wait
 * finishes and frees it (*req NULL after). Their time counts in
 * mb_pb_comm_seconds. MPI_SUCCESS or an error. */
int mb_pb_ibcast_start(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *buf, size_t n, int root,
                       struct mb_coll_req **req);
int mb_pb_ibcast_test(struct mb_coll_req *req);
int mb_pb_ibcast_wait(struct mb_coll_req **req);
/* Seconds this process has spent in the grid's broadcasts, reductions and
 * stencil halo exchanges so far (pdgemm's communication is inside
 * ScaLAPACK: not counted); mb_pb_comm_add counts more. */
double mb_pb_comm_seconds(void);
void mb_pb_comm_add(double seconds);
/* Buffers for the algorithms on an axis: node-registered (mb_coll_alloc)
 * when either algorithm wants them, else host memory. NULL on failure. */
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
/* Measures the model's rates with every rank of comm at once, as the
 * kernels will run them: the dgemm rate (FLOP/s) from 5 calibration
 * passes (after a warm-up) in which every rank multiplies 384^3 products
 * from one barrier for 40 ms, counting the products that end inside the
 * window (all ranks busy), the median pass of each rank, then the slowest
 * rank's; the memcpy rate (bytes read + written per second per rank) from
 * the best of three 32 MiB copies on every rank at once, each timed to the
 * last rank's end (collectives' mb_coll_memcpy_gbps); the read-stream
 * rate (mb_pb_read_rate, below). Collective. */
void mb_pb_measure_rates(MPI_Comm comm, double *dgemm_flops_s, double *memcpy_bytes_s, double *read_bytes_s);
/* The read-stream rate (bytes read per second per rank, the slowest
 * rank's) at which the model prices the reads of the kernels without a
 * timed loop of their own (the products' memory term; the matrix-vector
 * kernels time their own call instead, local_time): OpenBLAS dgemv, NoTrans and
 * Trans alternating, each call over the next 1024 x cols panel of a
 * total_bytes matrix (far beyond the LLC, so no panel is in a cache when
 * read), every rank at once, through mb_pb_window_rate (40 ms windows).
 * The bytes counted are the panel's; x and y stay in cache. mb-polybench
 * calls it from mb_pb_measure_rates with 256 MiB and cols 8192 (*read_bytes_s). Collective. */
double mb_pb_read_rate(MPI_Comm comm, size_t total_bytes, long cols);
/* The median of work[i] / secs[i] over the passes with work and seconds
 * both > 0 (at most 64 passes; NaN when none). */
double mb_pb_median_rate(const double *work, const double *secs, int n);
/* A calibration rate: after a warm-up pass, 5 passes in which every rank
 * calls call(ctx, k) (k = 0, 1, ...: the calls so far in the pass) from one
 * barrier for `window` seconds, counting only the calls that end inside
 * it; each rank's median rate (work_per_call per counted call), then the
 * slowest rank's; NaN when a rank counted none. Collective. */
double mb_pb_window_rate(MPI_Comm comm, double window, double work_per_call, void (*call)(void *ctx, long k),
                         void *ctx);
/* mb_pb_window_rate's loop with each pass timed on the rank's own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID, read at the pass's start and after its last
 * call, mb_pb_cpu_pass): the rate while the rank runs, so a pass in which
 * another process (mpirun, a neighbour) took the rank's core off it does
 * not read slow. 11 passes, every rank's gathered; the result is
 * mb_pb_slowest_median's (the slowest rank in each pass, as the timed
 * kernels' slowest rank in each call, then the median over the passes),
 * the same on every rank. For the stencils' cell rates. Collective. */
double mb_pb_window_cpu_rate(MPI_Comm comm, double window, double work_per_call, void (*call)(void *ctx, long k),
                             void *ctx);
/* One CPU-timed pass: work = work_per_call * (done + 1) (the calls that
 * ended inside the window and the one that crossed it, all on the rank's
 * CPU clock), secs = cpu1 - cpu0, or 0 when cpu1 <= cpu0 (not counted). */
void mb_pb_cpu_pass(double work_per_call, long done, double cpu0, double cpu1, double *work, double *secs);
/* rates[q * n + p]: rank q's rate in pass p (nranks x n). The median over
 * the passes of each pass's slowest rank, counting only the passes in
 * which every rank's rate is > 0 (0 or NaN: the pass is dropped; at most
 * 64 passes); NaN when none counts. */
double mb_pb_slowest_median(const double *rates, int nranks, int n);
/* ---- the products' own dgemm rate (gemm_rate.c) -----------------------
 * What one rank multiplies in one call of a product kernel, at its P: the
 * local dgemm shapes (SUMMA's panels and row slices, pdgemm's local rank-32
 * updates, doitgen's per-rank slices), each `calls` products
 * C (m x n) += A (m x k) B (k x n), cycling through `sets` distinct A
 * operands and `csets` distinct C operands (B shared; csets 1: one C every
 * product writes, as doitgen's one output plane; csets = sets: SUMMA's row
 * slices of the C block), in the kernel's order. The model prices a product
 * kernel's FLOPs at the rate of its own shapes, which mb-polybench
 * measures in each product case's set-up, right before its samples (the
 * 384^3 rate of mb_pb_measure_rates ran faster than the products at
 * P = 2: a rate of other shapes). */
#define MB_PB_MAXGEMM 12
struct mb_pb_gemm {
    long long m, n, k, calls, sets, csets;
};
/* FLOPs of one call's products: sum of 2 m n k calls (0 when n is 0). */
double mb_pb_gemm_work(const struct mb_pb_gemm *g, int n);
/* Bytes of mb_pb_gemm_rate's calibration operands for the n shapes: per
 * shape sets x m x k (A) + k x n (B) + csets x m x n (C) doubles, sets and
 * csets taken as at least 1 and csets at most sets. */
double mb_pb_gemm_bytes(const struct mb_pb_gemm *g, int n);
/* Products per calibration pass: enough that a pass lasts at least window
 * seconds when one call of the cycle takes cycle_secs / cycle_calls (the
 * warm-up's), at least 1; 1 when cycle_secs is not > 0 (no estimate). */
long long mb_pb_gemm_pass_calls(double window, double cycle_secs, long long cycle_calls);
/* The rate (FLOP/s per rank, the slowest rank's) of the n shapes in g:
 * every rank of comm at once on calibration operands of its own (never
 * the timed samples': mb_pb_gemm_bytes of them); a warm-up cycle through every product, then 11
 * passes from one barrier, each the same number of products on every rank
 * (mb_pb_gemm_pass_calls, 50 ms windows), continuing the cycle; the median
 * pass of each rank (mb_pb_median_rate), then the slowest rank's. NaN when
 * n is 0 or a rank counted nothing. Collective. */
double mb_pb_gemm_rate(MPI_Comm comm, const struct mb_pb_gemm *g, int n);

/* --dims text "a,b,c" into at most max integers, each in [lo, 2^31]:
 * how many, or -1 when the text is not such a list or has more than max. */
int mb_pb_parse_dims(const char *text, long long lo, long long *out, int max);

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
    /* the bytes of bytes() that are written (the rest are read), whole
     * problem: the model prices reads at the read-stream rate and writes
     * at the copy rate. NULL (the stencils): all at the copy rate given. */
    double (*written)(const struct mb_pb_sizes *s);
    double (*footprint)(const struct mb_pb_sizes *s); /* bytes of its arrays, whole problem: the working set */
    void (*traffic)(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t);
    void (*fini)(struct mb_pb_inst *in);
    /* stencils only (NULL elsewhere): the cell updates of one call, whole
     * problem, and the calibration of the model's loop term: this kernel's
     * own sweep over this rank's own block of in (the cells its time loop
     * updates, in the arrays it sweeps: the same size, layout and cache
     * residency), back and forth, every rank of comm sweeping at once
     * (mb_pb_stencil_cell_rate); cells per second per rank, the same on
     * every rank. It overwrites in's arrays: mb_pb_reset before a call.
     * Collective. */
    double (*cells)(const struct mb_pb_sizes *s);
    double (*cell_rate)(struct mb_pb_inst *in, MPI_Comm comm);
    /* the products (gemm, k2mm, k3mm, doitgen; NULL elsewhere): the local
     * dgemm shapes one rank runs in one call at sizes s on grid g into
     * out[0..MB_PB_MAXGEMM), how many; mb-polybench calibrates their rate
     * (mb_pb_gemm_rate) and the model prices the FLOPs at it */
    int (*gemms)(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_gemm *out);
    /* the matrix-vector kernels (atax, bicg, gemver, gesummv, mvt, both
     * variants; NULL elsewhere): the model's local term, seconds of one
     * call's local compute on this rank's own block of in: the kernel's
     * run() with its communication left out (no allreduce; for pblas the
     * one local dgemv_ each pdgemv makes on the block, same trans, sizes
     * and lda, without pdgemv's reduction), every rank of comm at once,
     * through mb_pb_window_cpu_rate (the slowest rank per pass, the median
     * of 11 passes: mb_pb_mv_local_time). The same on every rank. It
     * overwrites in's arrays: mb_pb_reset before a call. Collective. */
    double (*local_time)(struct mb_pb_inst *in, MPI_Comm comm);
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
/* --dims text for k: its nd sizes, then TSTEPS for a stencil (at least 2),
 * as given (no scaling). 0, or -1 with the reason in err. */
/* --scale-down SPEC: "F", or items "F" (the default, at most one; 1 when
 * absent) and "KERNEL=F" separated by commas, each F in [0.01, 1e9] (below 1:
 * larger than DaCe's sizes, e.g. jacobi_1d=0.25 for samples of 0.1-2 s): *f is
 * kernel's factor (kernel NULL: the default). 0, or -1 with the one-line
 * reason naming --scale-down (a malformed item, an unknown kernel). */
int mb_pb_scale_for(const char *spec, const char *kernel, double *f, char *err, size_t len);
int mb_pb_sizes_parse(const struct mb_pb_kernel *k, const char *text, struct mb_pb_sizes *s, char *err, size_t len);
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

/* The copy rate (bytes read + written per second, per rank) of a
 * working set of ws_bytes per rank: memcpy back and forth between its two
 * halves, every rank of comm at once, the slowest rank's best of three
 * rounds after a warm-up. Collective. A set that fits a cache copies at
 * the cache's rate; mb-polybench measures it in a stencil case's set-up
 * (footprint / P) and records it there.
 * The model prices the stencils' bytes at it, beside their loop term; the
 * other kernels' reads at the read-stream rate and writes at the 32 MiB
 * memcpy rate: the in-cache copy rate overstates their loops, which have
 * no loop term (docs/mb-polybench.md). */
double mb_pb_copy_rate(MPI_Comm comm, double ws_bytes);

/* The model of one call. A kernel with local_time (the matrix-vector
 * kernels): local_s + comm, local_s its timed local compute (*compute =
 * local_s; *memory = its closed-form bytes at the rates below, shown, not
 * used); NaN when local_s is not > 0. Any other kernel: compute and memory
 * overlap, communication adds: max(compute, memory) + comm. Memory is, for a kernel with written():
 * (bytes - written) / P at read_s (the read-stream rate) + written / P at
 * bytes_s (the run's memcpy rate, read + write); without written() (the
 * stencils), bytes / P at bytes_s. Compute is FLOPs / P at flops_s (the
 * dgemm rate), or for a kernel with cells (the stencils) its loop term,
 * cells / P at cells_s (its own sweep's calibrated rate). NaN when a rate
 * the kernel needs is not > 0. The parts in *compute and *memory. */
double mb_pb_model_time(const struct mb_pb_kernel *k, const struct mb_pb_sizes *s, int nranks, double flops_s,
                        double bytes_s, double read_s, double cells_s, double local_s, double comm,
                        double *compute, double *memory);

/* The model's communication seconds of one call with traffic t on a
 * px x py grid: each registry call by mb_coll_model (the --algo list's
 * algorithm for its kind, the axis's
 * shape: shape[MB_PB_ROW], shape[MB_PB_COL]), each halo exchange alpha +
 * bytes * beta of the profile's p2p terms. NaN when something moves and
 * prof is NULL (no profile); 0 at one rank. */
double mb_pb_model_comm(const struct mb_pb_traffic *t, int px, int py, const struct mb_coll_profile *prof,
                        const char *algo, const struct mb_coll_shape shape[2]);

/* Per-rank FLOPs and bytes of one call (the closed forms / P). */
double mb_pb_rank_flops(const struct mb_pb_inst *in);
double mb_pb_rank_bytes(const struct mb_pb_inst *in);

/* ===== shared-memory mode (NPBench's kernels, OpenMP) ===================
 * One ops row per kernel (shared_kernels.def, files shared_*.c): the
 * NumPy kernel of NPBench in two variants, `naive` (every NumPy temporary
 * materialised, in NumPy's order of evaluation) and `fused` (one pass
 * where the math allows, BLAS for the products), and a serial double
 * reference. Sizes are NPBench's bench_info presets. */

#define MB_PBS_MAXARR 10
#define MB_PBS_MAXWS 8
enum { MB_PBS_NAIVE = 0, MB_PBS_FUSED = 1, MB_PBS_NVARIANTS = 2 };
enum { MB_PBS_S = 0, MB_PBS_M, MB_PBS_L, MB_PBS_PAPER, MB_PBS_NPRESETS };

struct mb_pbs_inst;

struct mb_pbs_kernel {
    const char *name;
    int nd;                           /* dims, TSTEPS first for the stencils */
    const char *dim_names[4];
    long long preset[MB_PBS_NPRESETS][4]; /* S, M, L, paper (bench_info) */
    int narr;                         /* the kernel's arrays, inputs and outputs */
    const char *arr_names[MB_PBS_MAXARR];
    size_t (*arr_len)(const long long *d, int i);
    int nout;                         /* the arrays checked (indices into arr) */
    int out[4];
    int nws;                          /* naive's temporaries */
    size_t (*ws_len)(const long long *d, int i);
    void (*init)(struct mb_pbs_inst *in);            /* NPBench's initialize() */
    void (*run[MB_PBS_NVARIANTS])(struct mb_pbs_inst *in);
    void (*reference)(struct mb_pbs_inst *in, double **ref); /* serial, from the initial arrays */
    double (*flops)(const long long *d);
    double (*bytes)(const long long *d);  /* compulsory traffic of one call */
};

struct mb_pbs_inst {
    const struct mb_pbs_kernel *k;
    long long d[4];
    double *a[MB_PBS_MAXARR];  /* the arrays the variants work on */
    double *a0[MB_PBS_MAXARR]; /* their initial values (each run starts from them, as NPBench copies) */
    double *ws[MB_PBS_MAXWS];
    double *ref[4];
    double alpha, beta;        /* the kernels' scalars (1.5, 1.2) */
};

extern const char *const mb_pbs_variant_names[MB_PBS_NVARIANTS];
extern const char *const mb_pbs_preset_names[MB_PBS_NPRESETS];
size_t mb_pbs_nkernels(void);
const struct mb_pbs_kernel *mb_pbs_kernel_at(size_t i);
const struct mb_pbs_kernel *mb_pbs_find(const char *name);
/* 0 and *preset, or -1 (not S, M, L or paper). */
int mb_pbs_preset_parse(const char *s, int *preset);
/* "NI=1000,NJ=1100,NK=1200" */
void mb_pbs_sizes_str(const struct mb_pbs_kernel *k, const long long *d, char *buf, size_t len);

/* Allocates and initialises the arrays and computes the reference. NULL
 * with err (out of memory) on failure. */
struct mb_pbs_inst *mb_pbs_open(const struct mb_pbs_kernel *k, const long long *d, char *err, size_t errlen);
/* Rewrites every array from its initial values (untimed). */
void mb_pbs_reset(struct mb_pbs_inst *in);
void mb_pbs_run(struct mb_pbs_inst *in, int variant);
/* NPBench's validation of every output: np.allclose(ref, val, rtol 1e-5,
 * atol 1e-8), else the relative norm error ||ref - val|| / ||ref|| < 1e-5
 * (NaN fails both). 0, or 1 with "kernel: OUT[index] = got, expected ref
 * (norm error e)" in msg for the first element outside allclose. */
int mb_pbs_check(const struct mb_pbs_inst *in, char *msg, size_t len);
/* Fault injection: one element of one output, both drawn from seed, set
 * far from its value. */
void mb_pbs_corrupt(struct mb_pbs_inst *in, uint64_t seed);
void mb_pbs_close(struct mb_pbs_inst *in);

/* ---- NPBench's protocol around the kernels (npbench.c) ---- */

/* One case of a run: kernel x variant at its sizes ("N=1000,...") */
struct mb_pbs_case {
    const struct mb_pbs_kernel *k;
    int variant;
    long long d[4];
    char sizes[128];
};
/* --dims text for k: its nd integers >= 3 into d (zero-filled). 0, or -1
 * with "--dims TEXT: KERNEL takes N integers >= 3 (NAMES)" in err. */
int mb_pbs_dims_parse(const struct mb_pbs_kernel *k, const char *text, long long *d, char *err, size_t len);
/* Appends k's cases, one per variant v with bit v of variant_mask set, at
 * the preset's sizes or (dims not NULL) the --dims text, to cases[*n..max).
 * 0, or -1 with err (bad --dims, or more than max cases). */
int mb_pbs_add_cases(const struct mb_pbs_kernel *k, unsigned variant_mask, int preset, const char *dims,
                     struct mb_pbs_case *cases, size_t max, size_t *n, char *err, size_t len);
/* One instance per kernel, opened on first use and shared by its
 * variants (NPBench resets the inputs between runs, not the arrays). */
#define MB_PBS_POOL 32
struct mb_pbs_pool {
    struct mb_pbs_inst *in[MB_PBS_POOL];
};
/* NULL with err when it cannot be opened. */
struct mb_pbs_inst *mb_pbs_pool_get(struct mb_pbs_pool *p, const struct mb_pbs_kernel *k, const long long *d,
                                    char *err, size_t len);
void mb_pbs_pool_close(struct mb_pbs_pool *p);
/* NPBench's best variant: among the n cases (kernel name, median), the
 * index of the lowest median of kernel[i]'s cases (the first on ties), or
 * (size_t)-1 when case i is not its kernel's first (report each once). */
size_t mb_pbs_best(const char *const *kernel, const double *median, size_t n, size_t i);

/* NPBench's confidence interval of the median: `resamples` bootstrap
 * resamples of x[0..n) (drawn from seed), their medians sorted, the order
 * statistics round((R-1) alpha/2) and round((R-1)(1 - alpha/2)). 0, or -1
 * when n or resamples is 0 (lo, hi NaN). */
int mb_pb_bootstrap_median_ci(const double *x, size_t n, int resamples, double alpha, uint64_t seed, double *lo,
                              double *hi);

/* ===== mb-polybench's choices ===========================================
 * The names --kernel and --variant choose among, distinct: the
 * distributed kernels first (ndist_kernels; "all" means them), then the
 * shared mode's others; the distributed variants (pblas last,
 * ndist_variants), then naive and fused. *_choices: "a|b|c;d|e", the
 * shared-mode-only names after ';'. */
struct mb_pb_names {
    const char *kernel[32], *variant[8];
    int nkernel, nvariant, ndist_kernels, ndist_variants;
    char kernel_choices[512], variant_choices[160];
};
void mb_pb_names_build(struct mb_pb_names *nm);
/* the index of name in names[0..n), or -1 */
int mb_pb_name_index(const char *const *names, int n, const char *name);
/* 1 when argv gives flag ("--flag V" or "--flag=V") a value containing word */
int mb_pb_flag_names(int argc, char **argv, const char *flag, const char *word);

#endif
