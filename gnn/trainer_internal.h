/* gnn/ trainer internals: the trainer's state, shared by trainer.c (create,
 * epochs), stages.c (slots and the pipeline's stages), pass.c (the pass
 * driver), measure.c (rates, misses) and profile.c (the TPC profiling run).
 * Everything the program gave lives in cfg, copied once at create. */
#ifndef MB_GNN_TRAINER_INTERNAL_H
#define MB_GNN_TRAINER_INTERNAL_H

#include "gnn_internal.h"

#include <stdatomic.h>

#define GNN_MAX_SHARES GNN_MAX_TEAM /* submit/complete threads sharing a batch's rows */

struct gnn_slot {
    struct gnn_sample smp;
    float *x;
    size_t x_rows;
    int32_t *labels;
    size_t n_seeds;
    struct gnn_reader *rd[GNN_MAX_SHARES];
    struct gnn_reader *srd;  /* the sampler's (topology) reader: sampling instances run at once */
    /* intra-batch overlap: hop h's gather of nodes[fed_before .. hop_end[h]) */
    struct gnn_reader *hrd[GNN_MAX_HOPS];
    int hpending[GNN_MAX_HOPS];
    size_t fed;              /* rows [0, fed) are gathered by the sample stage */
    char err[300];
    int err_verify;          /* err is a row failing verification (a check), not an error */
    double t_sample, t_submit, t_complete;
};

struct gnn_trainer {
    struct gnn_trainer_cfg cfg;
    struct gnn_header h;
    const struct gnn_system *sys;
    int rank, nranks;
    struct gnn_dataset *ds;
    struct gnn_cache *cache;
    /* what gnn_trainer_stats reports (its pointers and atomics are added
     * there): set-up, the last epoch's counters and times, the profile */
    struct gnn_trainer_stats st;
    int nshares;
    struct gnn_slot slot[GNN_MAX_SLOTS];
    struct mb_pipe *pipe;
    struct gnn_model model;
    int64_t *order;          /* this epoch's permutation of the training ids */
    size_t n_train;
    int64_t *eval_ids;
    size_t n_eval;
    int eval_mode;
    long all_batches;        /* in a whole pass over the training nodes (epoch_batches may cut an epoch short) */
    uint64_t epoch;
    int epoch_failed;
    char fail_msg[600];
    /* the last pass hit an error (I/O, corrupted topology, memory), not
     * just a failed verification: a failure whatever --check says (agreed
     * by every rank) */
    int pass_error;
    char error_msg[600];     /* this rank's first error ("" where another rank's) */
    /* CPU seconds of the pass by stage (sample, submit, complete: every
     * team thread; train: the training thread), summed atomically */
    _Atomic long long stage_cpu_ns[3];
    double *rec;             /* profiling: per batch sample, submit, complete, train walls */
    long nrec, rec_cap;
    struct gnn_rates own_rates; /* where the program shares none */
};

/* stages.c: the three stage teams (sample_instances batches sampled at
 * once) and a slot's row buffer grown to `rows` (0, or 1 with sl->err). */
const struct mb_stage *gnn_stage_defs(const struct gnn_trainer *t, int sample_instances, struct mb_stage st[3]);
int gnn_slot_rows(struct gnn_trainer *t, struct gnn_slot *sl, size_t rows, long b);
/* The most feature rows one batch can hold, and what a slot comes to hold
 * (the largest presampled batch and a quarter more, at most the bound). */
uint64_t gnn_batch_rows_bound(const struct gnn_trainer_cfg *c, const struct gnn_header *h);
uint64_t gnn_slot_rows_need(const struct gnn_trainer_cfg *c, const struct gnn_header *h);

/* pass.c: one pass (training or held-out) of nb batches through the
 * pipeline; 0, or -1 after a failed batch on any rank. */
int gnn_run_pass(struct gnn_trainer *t, long nb, int eval);
long gnn_eval_batches(const struct gnn_trainer *t);
/* Every reader's counters summed into acc (and reset). */
void gnn_collect_stats(struct gnn_trainer *t, struct gnn_read_stats *acc, int reset);
/* Records this rank's error (the first message kept). */
void gnn_pass_error(struct gnn_trainer *t, const char *msg);
/* Whether any rank failed (rc != 0) or hit an error; pass_error agreed. */
int gnn_agree_error(struct gnn_trainer *t, int rc);
/* The next pass runs `epoch`: its order and the sampling's key. */
void gnn_use_epoch(struct gnn_trainer *t, uint64_t epoch);

/* measure.c */
int gnn_measure_rand_read(struct gnn_trainer *t, char *err, size_t errlen);
int64_t *gnn_miss_rows(struct gnn_trainer *t, long nb, size_t *n_out, char *err, size_t errlen);
double gnn_measure_io_rate(struct gnn_trainer *t, size_t depth, const int64_t *pool, size_t npool, int once,
                           char *err, size_t errlen);

/* profile.c */
int gnn_profile_run(struct gnn_trainer *t);

#endif
