/* gnn/ training side (mb-gnn's owner): the memory budget, the pipeline
 * runtime and the GraphSAGE model with data-parallel Adam. To be folded
 * into gnn/gnn.h at merge (a folder has one public header); kept apart
 * while gnn.h is written on another branch. */
#ifndef MB_GNN_PIPELINE_H
#define MB_GNN_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "../nn/nn.h"
#include "../collectives/coll.h"

/* ===== memory budget ===================================================
 * The budget holds for everything the process touches, the page cache of
 * mmap'd files included: a child memory cgroup (v2 memory.max, or v1
 * memory.limit_in_bytes) that the process joins before it loads data.
 * Where cgroups are refused, the rest of memory is pinned (mlock), as
 * Ratel's evaluation does, so the kernel has only the budget left. */

enum gnn_budget_how { GNN_BUDGET_AUTO, GNN_BUDGET_CGROUP, GNN_BUDGET_MLOCK, GNN_BUDGET_NONE };

struct gnn_budget {
    size_t bytes;
    char method[16];      /* "cgroup-v2", "cgroup-v1", "mlock", "none" */
    char detail[600];     /* the cgroup folder, or what was pinned, or why none */
    char cgroup[512];     /* the child cgroup folder ("" when none) */
    char home[512];       /* the folder we came from (to move back) */
    int v2;
    void *pinned;
    size_t pinned_bytes;
    int owner;            /* created the cgroup: removes it on release */
};

/* Creates the limit for `bytes` and moves this process in. AUTO tries a
 * cgroup then mlock. 0, or -1 with the reason in err. MLOCK pins
 * MemAvailable - bytes ($MB_GNN_MEMAVAILABLE overrides MemAvailable, for
 * tests on a shared machine). */
int gnn_budget_enforce(struct gnn_budget *b, size_t bytes, enum gnn_budget_how how, char *err,
                       size_t errlen);
/* This process (re)joins the cgroup `b` describes (MPI ranks: the node's
 * first rank creates, the others join a copy with owner = 0). 0 or -1. */
int gnn_budget_join(struct gnn_budget *b, char *err, size_t errlen);
/* Charged bytes now and the peak since enforcement (cgroup), else 0. */
uint64_t gnn_budget_usage(const struct gnn_budget *b);
uint64_t gnn_budget_peak(const struct gnn_budget *b);
/* Times the kernel hit the limit (v1 failcnt, v2 events "max"), else 0. */
uint64_t gnn_budget_limit_hits(const struct gnn_budget *b);
/* Moves back, removes the cgroup (owner), unpins. */
void gnn_budget_release(struct gnn_budget *b);
/* Writes back and evicts a file's pages from the page cache, so its pages
 * are charged to whoever reads them next. 0 or -1. */
int gnn_drop_file_cache(const char *path);

/* ===== pipeline runtime ================================================
 * Stages run in order on every batch; each stage is a team of threads
 * (its leader takes the next batch from the stage's input queue, the team
 * runs fn together, the leader passes the batch on). Batches live in
 * `nslots` slots, which bounds every queue: with nslots = 1 the stages
 * and training are serialised (nopipe), with more, preparation of batch i
 * overlaps training of batch i-1. The caller (training) takes finished
 * batches in order with gnn_pipe_next and gives the slot back with
 * gnn_pipe_release. */

/* One stage's work on one batch: thread tid of nthreads. Returns 0, or
 * non-zero to mark the batch failed (later stages skip it). */
typedef int (*gnn_stage_fn)(void *ctx, int slot, long batch, int tid, int nthreads);

struct gnn_stage {
    const char *name;
    int nthreads;
    gnn_stage_fn fn;
};

#define GNN_PIPE_MAX_STAGES 8

struct gnn_pipe;
struct gnn_pipe *gnn_pipe_new(const struct gnn_stage *stages, int nstages, int nslots, void *ctx);
/* Starts a pass over batches 0..nbatches-1 (the previous pass must be
 * drained). 0 or -1. */
int gnn_pipe_start(struct gnn_pipe *p, long nbatches);
/* Next finished batch, in order: 1 with *slot, *batch and *status (the
 * first failing stage's return, 0 when fine); 0 when the pass is done. */
int gnn_pipe_next(struct gnn_pipe *p, int *slot, long *batch, int *status);
void gnn_pipe_release(struct gnn_pipe *p, int slot);
/* Stops feeding new batches; the caller drains what is in flight with
 * gnn_pipe_next/gnn_pipe_release (after an error). */
void gnn_pipe_abort(struct gnn_pipe *p);
/* Seconds stage s spent working during the current pass (wall time of its
 * team on the batches), and the time gnn_pipe_next waited. */
double gnn_pipe_stage_busy(const struct gnn_pipe *p, int s);
double gnn_pipe_wait_time(const struct gnn_pipe *p);
int gnn_pipe_nstages(const struct gnn_pipe *p);
const char *gnn_pipe_stage_name(const struct gnn_pipe *p, int s);
void gnn_pipe_free(struct gnn_pipe *p);

/* ===== GraphSAGE model ==================================================
 * nlayers SAGEConv layers (mean aggregator), ReLU between them, a
 * log-softmax NLL head; Adam. blocks[0] is the outermost hop (the first
 * layer's input, as PyG returns them), blocks[nlayers-1] ends at the seeds. */

#define GNN_MAX_LAYERS 4

struct gnn_model {
    int nlayers, in, hidden, classes;
    struct nn_sage layer[GNN_MAX_LAYERS];
    float *act[GNN_MAX_LAYERS];   /* output of each layer */
    size_t act_cap[GNN_MAX_LAYERS];
    float *dact[GNN_MAX_LAYERS];  /* gradient w.r.t. each layer's input (layers >= 1) */
    size_t dact_cap[GNN_MAX_LAYERS];
    float *logp, *dlogits;
    size_t logp_cap;
    struct nn_adam hp;
    float *m[GNN_MAX_LAYERS], *v[GNN_MAX_LAYERS];
    long long t;
    /* data parallel: gradients summed over ranks, then averaged */
    struct mb_coll_ctx *coll;
    const struct mb_coll_algo *algo;
    int nranks;
    float *flat;                  /* packed gradients of every layer */
    size_t nparams;
    double allreduce_s;           /* time in the allreduce (accumulated) */
};

/* Weights from seed (equal on every rank for the same seed). coll/algo
 * NULL: no allreduce. 0 or -1. */
int gnn_model_init(struct gnn_model *m, int nlayers, int in, int hidden, int classes, float lr,
                   uint64_t seed, struct mb_coll_ctx *coll, const struct mb_coll_algo *algo,
                   int nranks);
void gnn_model_free(struct gnn_model *m);
/* One step on a batch of n seeds (labels[n]; x: features of the
 * outermost block's n_src nodes): forward, loss, backward, gradient
 * allreduce, Adam. n may be 0 (a rank without seeds still joins the
 * allreduce). *loss: summed NLL over the seeds; *correct: seeds whose
 * argmax matched. 0 or -1 (with the reason in err). */
int gnn_model_step(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct, char *err,
                   size_t errlen);
/* Forward only: *correct seeds predicted right, *loss their summed NLL. */
int gnn_model_eval(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct);
/* Forward FLOPs of the model on these blocks (x3 for a training step). */
double gnn_model_flops(const struct gnn_model *m, const struct nn_sage_block *blocks);

#endif
