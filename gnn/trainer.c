/* The trainer: one system's dataset, cache, slot pipeline and model, set
 * up from its row of the systems table and the program's configuration,
 * then epochs, held-out scoring and statistics. */
#include "trainer_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Presamples an epoch and builds the cache (cached systems with a tier). */
static int build_cache(struct gnn_trainer *t, char *err, size_t len)
{
    const struct gnn_trainer_cfg *c = &t->cfg;
    struct gnn_reader *r = gnn_reader_new(t->ds, NULL, c->verify);
    struct gnn_hotness h;
    double t0 = mb_now();
    if (gnn_presample(r, &c->scfg, c->batch, 0, &h) != 0) {
        snprintf(err, len, "presampling: %s", gnn_reader_error(r));
        gnn_reader_free(r);
        return -1;
    }
    t->st.presample_s = mb_now() - t0;
    t->st.max_batch_rows = h.max_batch_rows;
    struct gnn_cache_cfg cc;
    memset(&cc, 0, sizeof(cc));
    cc.cap[GNN_TIER_DEV] = c->cache_dev;
    cc.cap[GNN_TIER_HOST] = c->cache_host;
    cc.fill_rest = c->cache_fill;
    if (cc.fill_rest && c->budget && c->budget->on) {
        /* the fill may not push the run over its budget: what is charged
         * now, the cache's index, every slot's feature rows (each slot ends
         * up holding the largest batch it saw, grown by 1/4 as
         * gnn_slot_rows grows it: the largest presampled batch, a quarter
         * more for other epochs' batches) and 64 MiB of slack */
        int nsl = c->slots; /* nopipe too: the same cache as hyperion */
        double need = (double)mb_budget_usage(&c->budget->b) + 16.0 * (double)t->h.n +
                      (double)nsl * (double)h.max_batch_rows * 1.25 * 1.25 * (double)t->h.row_bytes +
                      (double)(64u << 20) + (double)c->cache_dev;
        double lim = (double)c->budget->bytes - need;
        t->st.fill_limit = lim > 1 ? (uint64_t)lim : 1;
        cc.fill_limit[GNN_TIER_HOST] = t->st.fill_limit;
    }
    cc.policy = t->sys->placement;
    char cerr[512];
    t0 = mb_now();
    t->cache = gnn_cache_build(r, &h, &cc, cerr, sizeof(cerr));
    t->st.cache_build_s = mb_now() - t0;
    gnn_hotness_free(&h);
    gnn_reader_free(r);
    if (!t->cache) {
        snprintf(err, len, "cache: %s", cerr);
        return -1;
    }
    gnn_cache_info(t->cache, &t->st.cinfo);
    return 0;
}

/* Every slot comes to hold the largest batch's rows (more, as it grows by
 * a quarter): where even that cannot fit beside what is charged now, the
 * cgroup would kill the run mid-epoch (seen: --slots 12 beside an 819 MiB
 * cache under 1 GiB). */
static int slots_fit(struct gnn_trainer *t, char *err, size_t len)
{
    const struct gnn_budget *g = t->cfg.budget;
    if (!g || !g->on || !t->st.max_batch_rows)
        return 0;
    double held = (double)mb_budget_anon(&g->b), slot = (double)t->st.max_batch_rows * (double)t->h.row_bytes;
    if (held + t->st.nslots * slot <= (double)g->bytes)
        return 0;
    snprintf(err, len,
             "--slots %d: %d slots of the largest presampled batch (%llu rows, %.1f MiB each) beside the "
             "%.0f MiB held now (the cache included) exceed --mem-budget (%.0f MiB); give fewer --slots, a "
             "smaller --cache-host or a larger --mem-budget",
             t->st.nslots, t->st.nslots, (unsigned long long)t->st.max_batch_rows, slot / 1048576.0, held / 1048576.0,
             (double)g->bytes / 1048576.0);
    return -1;
}

/* Slots with their readers, the pipeline, node orders, held-out ids. */
static int build_pipeline(struct gnn_trainer *t, char *err, size_t len)
{
    const struct gnn_trainer_cfg *c = &t->cfg;
    for (int i = 0; i < t->st.nslots; i++) {
        struct gnn_slot *sl = &t->slot[i];
        gnn_sample_init(&sl->smp);
        int ok = (sl->labels = malloc(c->batch * sizeof(int32_t))) != NULL;
        ok = ok && (sl->srd = gnn_reader_new(t->ds, t->cache, c->verify)) != NULL;
        for (int h = 0; ok && t->st.overlap && h < c->scfg.hops; h++)
            ok = (sl->hrd[h] = gnn_reader_new(t->ds, t->cache, c->verify)) != NULL;
        for (int k = 0; ok && k < t->nshares; k++)
            ok = (sl->rd[k] = gnn_reader_new(t->ds, t->cache, c->verify)) != NULL;
        if (!ok) {
            snprintf(err, len, "out of memory for slot %d's readers", i);
            return -1;
        }
    }
    struct mb_stage defs[3];
    t->pipe = mb_pipe_new(gnn_stage_defs(t, c->sample_instances, defs), 3, t->st.nslots, t);
    size_t ntr;
    gnn_train_ids(t->ds, &ntr);
    t->n_train = ntr;
    t->order = malloc((ntr ? ntr : 1) * sizeof(int64_t));
    size_t nval;
    const uint32_t *val = gnn_val_ids(t->ds, &nval);
    t->n_eval = nval < (size_t)c->eval_nodes ? nval : (size_t)c->eval_nodes;
    t->eval_ids = malloc((t->n_eval ? t->n_eval : 1) * sizeof(int64_t));
    if (!t->pipe || !t->order || !t->eval_ids) {
        snprintf(err, len, "out of memory for the pipeline and the node orders");
        return -1;
    }
    for (size_t i = 0; i < t->n_eval; i++)
        t->eval_ids[i] = val[i];
    long nb = (long)gnn_num_batches(ntr, c->batch, t->rank, t->nranks);
    MPI_Allreduce(MPI_IN_PLACE, &nb, 1, MPI_LONG, MPI_MAX, c->comm);
    t->all_batches = nb;
    if (c->epoch_batches > 0 && c->epoch_batches < nb)
        nb = c->epoch_batches;
    t->st.nbatches = nb;
    return 0;
}

static int setup(struct gnn_trainer *t, char *err, size_t len)
{
    const struct gnn_trainer_cfg *c = &t->cfg;
    /* this system's reads are charged to it: nothing of the data in the page cache */
    char path[1200], hit[300];
    snprintf(path, sizeof(path), "%s/graph.meta", c->data);
    mb_drop_file_cache(path);
    struct gnn_open_opts oo;
    memset(&oo, 0, sizeof(oo));
    oo.topo = t->sys->topo;
    oo.feat = t->sys->feat;
    oo.aio_threads = c->io_threads;
    for (unsigned d = 0; d < t->h.ndev; d++) {
        snprintf(path, sizeof(path), "%s/data.%u", c->data, d);
        mb_drop_file_cache(path);
    }
    t->ds = gnn_open(c->data, &oo, err, len);
    if (!t->ds)
        return -1;
    t->h = *gnn_dataset_header(t->ds);
    if (t->sys->feat == GNN_MMAP && t->sys->advice != GNN_ADVICE_NORMAL) {
        int e = gnn_map_advise(t->ds, t->sys->advice);
        if (e) {
            snprintf(err, len, "madvise(MADV_RANDOM): %s", strerror(-e));
            return -1;
        }
    }
    if (t->sys->cached && c->cache_dev + c->cache_host > 0 && build_cache(t, err, len) != 0)
        return -1;
    t->st.nslots = t->sys->pipelined ? c->slots : 1;
    if (gnn_budget_hit(c->budget, hit, sizeof(hit))) {
        snprintf(err, len, "setting up (opening, presampling, the cache): %s", hit);
        return -1;
    }
    if (slots_fit(t, err, len) != 0)
        return -1;
    /* the overlap needs the engine (memory and mmap copy in submit) and a pipeline */
    t->st.overlap = c->overlap && t->st.nslots > 1 && gnn_dataset_feat_access(t->ds) == GNN_AIO;
    t->nshares = c->sub_threads > c->comp_threads ? c->sub_threads : c->comp_threads;
    if (build_pipeline(t, err, len) != 0)
        return -1;
    if (gnn_model_init(&t->model, c->scfg.hops, t->h.dim, c->hidden, t->h.classes, c->lr, c->seed, c->coll, c->algo,
                       t->nranks) != 0) {
        snprintf(err, len, "model: out of memory");
        return -1;
    }
    if (t->sys->feat == GNN_AIO && gnn_measure_rand_read(t, err, len) != 0)
        return -1;
    if (gnn_measure_memcpy(c->rates, t->h.row_bytes) != 0) {
        snprintf(err, len, "the host copy rate: out of memory for 128 MiB of buffers");
        return -1;
    }
    if (gnn_budget_hit(c->budget, hit, sizeof(hit))) {
        snprintf(err, len, "setting up: %s", hit);
        return -1;
    }
    return 0;
}

int gnn_trainer_create(const struct gnn_trainer_cfg *cfg, struct gnn_trainer **out, char *err, size_t len)
{
    struct gnn_trainer *t = calloc(1, sizeof(*t));
    *out = t;
    if (!t) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    t->cfg = *cfg;
    t->sys = cfg->sys;
    if (cfg->budget && cfg->budget->broken[0]) { /* (the systems after inmem would run outside it) */
        snprintf(err, len, "--mem-budget: %s", cfg->budget->broken);
        return -1;
    }
    if (t->sys->upper_bound && cfg->budget && gnn_budget_leave(cfg->budget, err, len) != 0) {
        char why[400];
        snprintf(why, sizeof(why), "%s", err);
        snprintf(err, len, "leaving the budget (inmem runs outside it): %s", why);
        return -1;
    }
    MPI_Comm_rank(cfg->comm, &t->rank);
    MPI_Comm_size(cfg->comm, &t->nranks);
    if (!cfg->rates) { /* (measured for this trainer alone) */
        t->own_rates.rand_read_Bps = t->own_rates.memcpy_Bps = NAN;
        t->cfg.rates = &t->own_rates;
    }
    if (cfg->slots > GNN_MAX_SLOTS || cfg->sub_threads > GNN_MAX_SHARES || cfg->comp_threads > GNN_MAX_SHARES) {
        snprintf(err, len, "at most %d slots and %d submit or complete threads", GNN_MAX_SLOTS, GNN_MAX_SHARES);
        return -1;
    }
    if (cfg->header) {
        t->h = *cfg->header;
    } else { /* (the dataset's own once opened) */
        struct gnn_open_opts o = {GNN_MMAP, GNN_MMAP, 0, 0, 0, 0, 0};
        struct gnn_dataset *ds = gnn_open(cfg->data, &o, err, len);
        if (!ds)
            return -1;
        t->h = *gnn_dataset_header(ds);
        gnn_close(ds);
    }
    return setup(t, err, len);
}

void gnn_trainer_destroy(struct gnn_trainer *t)
{
    if (!t)
        return;
    if (t->pipe)
        mb_pipe_free(t->pipe);
    for (int i = 0; i < t->st.nslots; i++) {
        struct gnn_slot *sl = &t->slot[i];
        gnn_sample_free(&sl->smp);
        if (t->ds)
            gnn_free_rows(t->ds, sl->x);
        free(sl->labels);
        for (int k = 0; k < t->nshares; k++)
            gnn_reader_free(sl->rd[k]);
        gnn_reader_free(sl->srd);
        for (int h = 0; h < GNN_MAX_HOPS; h++)
            gnn_reader_free(sl->hrd[h]);
    }
    gnn_cache_free(t->cache);
    if (t->model.nlayers)
        gnn_model_free(&t->model);
    if (t->ds)
        gnn_close(t->ds);
    free(t->order);
    free(t->eval_ids);
    if (t->sys && t->sys->upper_bound && t->cfg.budget)
        gnn_budget_enter(t->cfg.budget);
    free(t);
}

void gnn_trainer_prepare(struct gnn_trainer *t, uint64_t epoch)
{
    gnn_use_epoch(t, epoch);
    struct gnn_read_stats drop;
    gnn_collect_stats(t, &drop, 1);
}

int gnn_trainer_epoch(struct gnn_trainer *t, uint64_t epoch, double *elapsed)
{
    if (t->st.profiled && t->epoch != epoch) /* the profile left its own order */
        gnn_trainer_prepare(t, epoch);
    double t0 = mb_now(), c0 = mb_cpu_s(0), steal0 = mb_host_steal_s();
    t->epoch_failed = gnn_run_pass(t, t->st.nbatches, 0) != 0;
    double dt = mb_now() - t0;
    if (t->pass_error) { /* the epoch's time is no sample: it did not run through */
        t->epoch_failed = 1;
        return -1;
    }
    *elapsed = dt;
    t->st.cpu_s = mb_cpu_s(0) - c0;
    t->st.steal = gnn_steal_share(steal0, dt);
    t->st.epoch_s = dt;
    gnn_collect_stats(t, &t->st.rs, 0);
    for (int k = 0; k < 3; k++)
        t->st.busy[k] = mb_pipe_stage_busy(t->pipe, k);
    t->st.wait_s = mb_pipe_wait_time(t->pipe);
    return 0;
}

int gnn_trainer_evaluate(struct gnn_trainer *t)
{
    /* (the epoch's counters are kept: the held-out pass restarts them) */
    struct gnn_read_stats keep = t->st.rs;
    double tt = t->st.t_train, ct = t->st.c_train;
    long long cns[3];
    for (int k = 0; k < 3; k++)
        cns[k] = atomic_load(&t->stage_cpu_ns[k]);
    t->pass_error = 0;
    if (!t->epoch_failed && t->n_eval)
        t->epoch_failed = gnn_run_pass(t, gnn_eval_batches(t), 1) != 0;
    if (t->pass_error) {
        t->epoch_failed = 1;
        return -1;
    }
    t->st.rs = keep;
    t->st.t_train = tt;
    t->st.c_train = ct;
    for (int k = 0; k < 3; k++)
        atomic_store(&t->stage_cpu_ns[k], cns[k]);
    return 0;
}

int gnn_trainer_error(const struct gnn_trainer *t) { return t->pass_error; }

void gnn_trainer_stats(const struct gnn_trainer *t, struct gnn_trainer_stats *o)
{
    *o = t->st;
    o->sys = t->sys;
    o->ds = t->ds;
    o->cache = t->cache;
    o->verify = t->cfg.verify;
    for (int k = 0; k < 3; k++)
        o->stage_cpu_ns[k] = atomic_load(&t->stage_cpu_ns[k]);
    o->allreduce_s = t->model.allreduce_s;
    o->failed = t->epoch_failed;
    o->fail_msg = t->fail_msg;
    o->error_msg = t->error_msg;
}

int gnn_trainer_check(const struct gnn_trainer *t, char *msg, size_t len)
{
    const struct gnn_read_stats *rs = &t->st.rs;
    if (t->epoch_failed) {
        snprintf(msg, len, "%s", t->fail_msg[0] ? t->fail_msg : "another rank failed");
        return 1;
    }
    if (rs->verify_failures) {
        snprintf(msg, len, "%llu feature rows failed verification (first: node %llu)",
                 (unsigned long long)rs->verify_failures, (unsigned long long)rs->first_bad_node);
        return 1;
    }
    if (t->cfg.verify && rs->feat_rows && !rs->verified_rows) {
        snprintf(msg, len, "no feature row was verified");
        return 1;
    }
    return 0;
}
