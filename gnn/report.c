/* A trainer's measurements under stable names (gnn.h, "Reporting"): what
 * it set up, its profiling run and each epoch. The names are the library's,
 * so every program records the same ones; where they go is the program's. */
#include "trainer_internal.h"

#include <math.h>
#include <stdio.h>

struct values {
    struct gnn_value *v;
    size_t n, max;
};

static void put(struct values *o, const char *name, enum gnn_value_type type, double d, const char *s)
{
    if (o->n < o->max)
        o->v[o->n++] = (struct gnn_value){name, type, d, s};
}

static void dbl(struct values *o, const char *name, double d) { put(o, name, GNN_VALUE_DBL, d, NULL); }
static void num(struct values *o, const char *name, double d) { put(o, name, GNN_VALUE_INT, d, NULL); }
static void str(struct values *o, const char *name, const char *s) { put(o, name, GNN_VALUE_STR, 0, s ? s : ""); }

size_t gnn_trainer_setup_values(const struct gnn_trainer *t, struct gnn_value *out, size_t max)
{
    struct gnn_trainer_stats st;
    gnn_trainer_stats(t, &st);
    struct values o = {out, 0, max};
    const struct gnn_dataset *ds = st.ds;
    dbl(&o, "presample_s", st.presample_s);
    dbl(&o, "cache_build_s", st.cache_build_s);
    str(&o, "access", ds ? gnn_access_name(gnn_dataset_feat_access(ds)) : "");
    num(&o, "slots", st.nslots);
    num(&o, "sample_instances", t->cfg.sample_instances);
    str(&o, "overlap", st.overlap ? "intra-batch" : "none");
    if (ds && t->sys->feat == GNN_MMAP) {
        str(&o, "mmap_advice", gnn_map_advice_name(ds));
        num(&o, "read_ahead_kb", (double)gnn_read_ahead_kb(t->cfg.data));
    }
    num(&o, "dataset_mem_bytes", ds ? (double)gnn_dataset_mem_bytes(ds) : 0);
    if (ds && gnn_dataset_aio(ds)) { /* the engine as it ran, fallbacks included */
        static struct mb_aio_info ai; /* its strings outlive the call */
        mb_aio_info(gnn_dataset_aio(ds), &ai);
        str(&o, "engine", ai.engine);
        num(&o, "engine_direct", ai.direct);
        str(&o, "engine_fallback", ai.fallback && ai.fallback[0] ? ai.fallback : "none");
    }
    if (st.cache) {
        static const char *const bytes_names[3][3] = {
            {"", "", ""},
            {"cache_dev_topo_bytes", "cache_dev_feat_bytes", "cache_dev_mem_bytes"},
            {"cache_host_topo_bytes", "cache_host_feat_bytes", "cache_host_mem_bytes"}};
        str(&o, "placement", gnn_placement_name(t->sys->placement));
        for (int i = 1; i <= 2; i++) {
            num(&o, bytes_names[i][0], (double)st.cinfo.topo_bytes[i]);
            num(&o, bytes_names[i][1], (double)st.cinfo.feat_bytes[i]);
            num(&o, bytes_names[i][2], (double)gnn_cache_mem_bytes(st.cache, (enum gnn_tier)i));
        }
        str(&o, "cache_fill", t->cfg.cache_fill ? "degree" : "none");
        num(&o, "cache_fill_limit_bytes", (double)st.fill_limit);
        num(&o, "presample_max_batch_rows", (double)st.max_batch_rows);
        dbl(&o, "cache_pred_hit_feat", st.cinfo.hit_feat[1] + st.cinfo.hit_feat[2]);
        dbl(&o, "cache_pred_hit_topo", st.cinfo.hit_topo[1] + st.cinfo.hit_topo[2]);
        dbl(&o, "cache_pred_tx_mem", st.cinfo.tx_mem);
        dbl(&o, "cache_pred_tx_ssd", st.cinfo.tx_ssd);
    }
    const struct gnn_budget *b = t->cfg.budget;
    if (b && b->on && !t->sys->upper_bound) {
        num(&o, "budget_peak_bytes", (double)mb_budget_peak(&b->b));
        num(&o, "budget_limit_hits", (double)mb_budget_limit_hits(&b->b));
    }
    /* per batch, from the profiling run */
    const struct gnn_profile *f = &st.prof;
    dbl(&o, "profile_batches", f->batches);
    dbl(&o, "profile_t_sample_s", f->t_sample);
    dbl(&o, "profile_t_lookup_s", f->t_lookup);
    dbl(&o, "profile_t_complete_s", f->t_complete);
    dbl(&o, "profile_t_train_s", f->t_train);
    dbl(&o, "profile_io_sample_s", f->io_sample);
    dbl(&o, "profile_io_complete_s", f->io_complete);
    dbl(&o, "profile_cpu_sample_s", f->cpu_sample);
    dbl(&o, "profile_cpu_lookup_s", f->cpu_lookup);
    dbl(&o, "profile_cpu_complete_s", f->cpu_complete);
    dbl(&o, "profile_cpu_train_s", f->cpu_train);
    dbl(&o, "profile_cpu_other_s", f->cpu_other);
    dbl(&o, "profile_ssd_bytes", f->ssd_bytes);
    dbl(&o, "profile_ssd_requests", f->ssd_requests);
    dbl(&o, "profile_ssd_tx", f->ssd_tx);
    dbl(&o, "profile_mem_tx", f->mem_tx);
    dbl(&o, "profile_io_rate_Bps", f->io_rate);
    dbl(&o, "profile_cpu_share", f->cpu_share);
    dbl(&o, "profile_allreduce_s", f->allreduce_s);
    if (st.profiled) {
        str(&o, "profile_t_source", st.prof_t_source);
        dbl(&o, "profile_host_steal", st.prof_steal);
        num(&o, "profile_io_rate_rows", (double)st.prof_pool_rows);
    }
    const struct gnn_rates *r = t->cfg.rates;
    dbl(&o, "engine_random_read_Bps", r ? r->rand_read_Bps : NAN);
    dbl(&o, "memcpy_Bps", r ? r->memcpy_Bps : NAN);
    return o.n;
}

size_t gnn_trainer_epoch_values(const struct gnn_trainer *t, const struct gnn_epoch_totals *e, struct gnn_value *out,
                                size_t max)
{
    struct gnn_trainer_stats st;
    gnn_trainer_stats(t, &st);
    const struct gnn_read_stats *r = &st.rs;
    const struct gnn_prediction *p = &e->pred;
    double nb = (double)st.nbatches;
    struct values o = {out, 0, max};
    dbl(&o, "time_s", st.epoch_s);
    dbl(&o, "batches_per_s", nb / st.epoch_s);
    dbl(&o, "loss", st.loss);
    dbl(&o, "train_acc", st.acc_train);
    dbl(&o, "val_acc", st.acc_val);
    dbl(&o, "feat_hit_dev", r->feat_rows ? (double)r->feat_dev_hits / (double)r->feat_rows : 0);
    dbl(&o, "feat_hit_host", r->feat_rows ? (double)r->feat_host_hits / (double)r->feat_rows : 0);
    dbl(&o, "topo_hit_dev", r->topo_lists ? (double)r->topo_dev_hits / (double)r->topo_lists : 0);
    dbl(&o, "topo_hit_host", r->topo_lists ? (double)r->topo_host_hits / (double)r->topo_lists : 0);
    num(&o, "storage_bytes", e->ssd_bytes);
    num(&o, "ssd_requests", (double)r->ssd_requests);
    dbl(&o, "mem_tx", (double)r->mem_tx);
    dbl(&o, "ssd_tx", (double)r->ssd_tx);
    dbl(&o, "stage_sample_s", st.busy[0]);
    dbl(&o, "stage_submit_s", st.busy[1]);
    dbl(&o, "stage_complete_s", st.busy[2]);
    dbl(&o, "stage_train_s", st.t_train);
    dbl(&o, "cpu_s", st.cpu_s);
    dbl(&o, "host_steal", st.steal);
    dbl(&o, "miss_read_Bps", e->miss_read_Bps);
    dbl(&o, "miss_read_s", e->miss_read_s);
    num(&o, "miss_read_rows", (double)st.miss_read_rows);
    num(&o, "feat_miss_rows", (double)r->feat_misses);
    dbl(&o, "train_wait_s", st.wait_s);
    dbl(&o, "allreduce_s", st.allreduce_s);
    dbl(&o, "model_s", e->model_s);
    dbl(&o, "model_t_ssd_s", p->t_ssd * nb);
    dbl(&o, "model_t_pcie_s", p->t_pcie * nb);
    dbl(&o, "model_t_train_s", p->t_train * nb);
    dbl(&o, "model_t_sample_s", p->t_sample * nb);
    dbl(&o, "model_t_cpu_s", p->t_cpu * nb);
    dbl(&o, "model_t_pipe_s", p->t_pipe * nb);
    str(&o, "model_bound", e->model_bound);
    dbl(&o, "floor_estimate_s", e->floor_estimate_s);
    dbl(&o, "verified_rows", e->verified_rows);
    return o.n;
}

const char gnn_floor_estimate_text[] =
    "an estimate, not a bound (systems can run below it): max(inmem epoch time, every rank's storage bytes / the "
    "ranks' summed rate on the epoch's own misses, read again at once after it (mmap: the random-read rate "
    "measured at setup)); it leaves out the pipeline's deeper queue, blocks the host caches between the epoch and "
    "the re-read, and overlap across ranks (docs/models.md)";

double gnn_floor_estimate(int upper_bound, double epoch_s, double inmem_epoch_s, double bytes, double rate,
                          double *miss_s)
{
    *miss_s = rate > 0 ? bytes / rate : NAN;
    if (upper_bound)
        return epoch_s;
    return isnan(inmem_epoch_s) ? *miss_s : fmax(inmem_epoch_s, *miss_s);
}

const char *gnn_steal_text(char *buf, size_t len, double share)
{
    if (share == share)
        snprintf(buf, len, "%.1f%%", 100 * share);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

void gnn_trainer_profile_text(const struct gnn_trainer *tr, const char *name, char *buf, size_t len)
{
    struct gnn_trainer_stats t;
    gnn_trainer_stats(tr, &t);
    const struct gnn_profile *f = &t.prof;
    char st[16];
    snprintf(buf, len,
             "profile %s: %ld batches serial%s, per batch ms: sample %.2f lookup %.2f complete %.2f train %.2f "
             "(waits: sample %.2f complete %.2f); cpu ms%s: sample %.2f lookup %.2f complete %.2f train %.2f "
             "other %.2f; read %.0f B in %.0f requests, io rate %.1f MB/s (%zu of the profile's row reads); "
             "cpu share %.2f, synchronised allreduce %.3f ms, host steal %s",
             name, t.prof_batches, t.prof_phases > 1 ? " + pipelined" : "", 1e3 * f->t_sample, 1e3 * f->t_lookup,
             1e3 * f->t_complete, 1e3 * f->t_train, 1e3 * f->io_sample, 1e3 * f->io_complete,
             t.prof_phases > 1 ? " (pipelined)" : "", 1e3 * f->cpu_sample, 1e3 * f->cpu_lookup, 1e3 * f->cpu_complete,
             1e3 * f->cpu_train, 1e3 * f->cpu_other, f->ssd_bytes, f->ssd_requests, f->io_rate / 1e6,
             t.prof_pool_rows, f->cpu_share, 1e3 * f->allreduce_s, gnn_steal_text(st, sizeof(st), t.prof_steal));
}
