/* Hyperion's TPC model (Sec. 3.4, Eq. 5): per-batch time is the slowest
 * of storage, PCIe and training; cost is the 5-year TCO. */
#include "gnn.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gnn_bound_name(enum gnn_bound b)
{
    switch (b) {
    case GNN_BOUND_SSD: return "ssd";
    case GNN_BOUND_PCIE: return "pcie";
    case GNN_BOUND_TRAIN: return "train";
    case GNN_BOUND_SAMPLE: return "sample";
    case GNN_BOUND_CPU: return "cpu";
    case GNN_BOUND_SERIAL: return "serial";
    case GNN_BOUND_LOOKUP: return "lookup";
    case GNN_BOUND_COMPLETE: return "complete";
    }
    return "?";
}

double gnn_tco(const struct gnn_hw_profile *p, int n_ssd)
{
    return (p->c_mac + p->c_gpu * p->n_gpu + p->c_ssd * n_ssd + p->c_ele) * (p->n_mac > 0 ? p->n_mac : 1);
}

void gnn_tpc_predict(const struct gnn_hw_profile *p, const struct gnn_workload *w, int q,
                     struct gnn_prediction *o)
{
    double cls = p->cls ? p->cls : 64;
    double th_ssd = p->ssd_bw / cls, th_pcie = p->pcie_bw / cls; /* transactions/s */
    memset(o, 0, sizeof(*o));
    o->q = q;
    o->t_ssd = (q > 0 && th_ssd > 0 ? w->n_ssd_tx / (th_ssd * q) : (w->n_ssd_tx > 0 ? 1e300 : 0)) + w->alpha;
    o->t_pcie = th_pcie > 0 ? (w->n_ssd_tx + w->n_mem_tx) / th_pcie : 0;
    o->t_train = w->t_train;
    o->t_batch = o->t_ssd;
    o->bound = GNN_BOUND_SSD;
    if (o->t_pcie > o->t_batch) {
        o->t_batch = o->t_pcie;
        o->bound = GNN_BOUND_PCIE;
    }
    if (o->t_train > o->t_batch) {
        o->t_batch = o->t_train;
        o->bound = GNN_BOUND_TRAIN;
    }
    o->throughput = o->t_batch > 0 ? w->batch_size / o->t_batch : 0;
    o->cost = gnn_tco(p, q);
    o->tpc = o->cost > 0 ? o->throughput / o->cost : 0;
}

double gnn_mva_period(const double *d, int k, double z, int n)
{
    double q[16] = {0}, r[16];
    if (k > 16)
        k = 16;
    double x = 0;
    for (int m = 1; m <= n; m++) {
        double sum = z > 0 ? z : 0;
        for (int i = 0; i < k; i++)
            sum += r[i] = d[i] * (1 + q[i]);
        x = sum > 0 ? m / sum : 0;
        for (int i = 0; i < k; i++)
            q[i] = x * r[i];
    }
    return x > 0 ? 1 / x : 0;
}

/* The pipelined model's stations at cycle time t (throughput 1/t), into
 * d[5] (sampler, storage occupancy, lookup, completion, training); returns
 * the closed loop's period over them (MVA, `slots` customers, delay lat). */
struct pipe_terms {
    double cpu[4], tot, C, io_s, occ, occ_c, lat, allreduce;
    int hops, slots;
};

static double pipe_period(const struct pipe_terms *m, double t, double d[5])
{
    double x = t > 0 ? 1 / t : 0;
    for (int k = 0; k < 4; k++) {
        /* core sharing: the chance the other threads hold every core, each
         * core busy with them independently with probability U_other / C.
         * At t >= T_cpu, U_other / C = (tot - cpu_k) / tot * T_cpu / t < 1
         * for cpu_k > 0, so the stretch is finite without a cap */
        double busy = pow(fmin(1, x * (m->tot - m->cpu[k]) / m->C), m->C);
        d[k == 0 ? 0 : k + 1] = m->cpu[k] > 0 ? m->cpu[k] / (1 - busy) : 0;
    }
    d[1] = m->occ;
    d[4] += m->allreduce; /* the training thread waits in it: no CPU demand of ours to stretch */
    /* the sampler holds its thread through its own reads, and per hop waits
     * for the feature read the engine is serving: a deterministic service
     * s_c found busy with probability X s_c has mean residual s_c / 2 */
    d[0] += m->io_s + m->hops * fmin(1, x * m->occ_c) * m->occ_c / 2;
    return gnn_mva_period(d, 5, m->lat, m->slots);
}

void gnn_tpc_predict_pipeline(const struct gnn_hw_profile *p, const struct gnn_profile *f, int cores,
                              int slots, struct gnn_prediction *o)
{
    double cls = p->cls ? p->cls : 64;
    memset(o, 0, sizeof(*o));
    o->q = p->n_ssd > 0 ? p->n_ssd : 1;
    o->t_ssd = f->ssd_bytes > 0 ? (f->io_rate > 0 ? f->ssd_bytes / f->io_rate : 1e300) : 0;
    o->t_pcie = p->pcie_bw > 0 ? (f->ssd_tx + f->mem_tx) / (p->pcie_bw / cls) : 0;
    /* CPU demands in wall seconds: a thread gets share a of a core */
    double a = f->cpu_share > 0 && f->cpu_share <= 1 ? f->cpu_share : 1;
    struct pipe_terms m = {.cpu = {f->cpu_sample / a, f->cpu_lookup / a, f->cpu_complete / a, f->cpu_train / a},
                           .C = cores > 0 ? cores : 1, .hops = f->hops > 0 ? f->hops : 1,
                           .slots = slots > 1 ? slots : 1, .allreduce = fmax(0, f->allreduce_s)};
    m.tot = m.cpu[0] + m.cpu[1] + m.cpu[2] + m.cpu[3] + f->cpu_other / a;
    o->t_cpu = m.tot / m.C;
    /* the engine's time on the batch: what the sampler and the completion
     * waited for. Of it, bytes / rate holds the device; the rest is
     * latency, which other batches' reads overlap */
    m.io_s = fmax(0, f->io_sample);
    double io_c = fmax(0, f->io_complete), io = m.io_s + io_c;
    m.occ = fmin(io, o->t_ssd);
    m.lat = io - m.occ;
    m.occ_c = io > 0 ? io_c * m.occ / io : 0;
    double d[5];
    if (slots <= 1) {
        /* nopipe: one batch in flight, the stations in sequence (MVA with
         * one customer) over the model's own terms: each stage's CPU
         * alone (no other stage runs at once, so no stretch) and its
         * storage time at the measured rate, never the serial phase's walls */
        for (int k = 0; k < 4; k++)
            d[k == 0 ? 0 : k + 1] = m.cpu[k];
        d[4] += m.allreduce;
        double t_io = fmin(io, o->t_ssd) + m.lat; /* = io: its own waits, no other batch's reads */
        d[1] = fmax(t_io, o->t_ssd);
        o->t_pipe = gnn_mva_period(d, 5, 0, 1);
        o->t_batch = fmax(o->t_pipe, o->t_cpu);
        o->t_sample = d[0];
        o->t_train = d[4];
        o->bound = GNN_BOUND_SERIAL;
    } else {
        /* the fixed point t = max(T_pipe(t), T_cpu): T_pipe falls as t
         * rises (less sharing), so g(t) - t is decreasing with one root in
         * [T_cpu, g(T_cpu)]: bisection (no damping constant) */
        double lo = o->t_cpu, t = lo;
        double g = fmax(pipe_period(&m, lo, d), o->t_cpu);
        if (g > lo) {
            double hi = g;
            for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
                double mid = 0.5 * (lo + hi);
                if (fmax(pipe_period(&m, mid, d), o->t_cpu) > mid)
                    lo = mid;
                else
                    hi = mid;
            }
            t = hi;
        }
        o->t_pipe = fmax(pipe_period(&m, t, d), o->t_cpu);
        o->t_sample = d[0];
        o->t_train = d[4];
        /* the busiest station names the pipeline's bottleneck */
        static const enum gnn_bound st[5] = {GNN_BOUND_SAMPLE, GNN_BOUND_SSD, GNN_BOUND_LOOKUP, GNN_BOUND_COMPLETE,
                                             GNN_BOUND_TRAIN};
        int kb = 0;
        for (int k = 1; k < 5; k++)
            if (d[k] > d[kb])
                kb = k;
        o->t_batch = o->t_pipe;
        o->bound = st[kb];
        if (o->t_ssd > o->t_batch)
            o->t_batch = o->t_ssd, o->bound = GNN_BOUND_SSD;
        if (o->t_pcie > o->t_batch)
            o->t_batch = o->t_pcie, o->bound = GNN_BOUND_PCIE;
        if (o->t_cpu >= o->t_batch)
            o->t_batch = o->t_cpu, o->bound = GNN_BOUND_CPU;
    }
    o->throughput = o->t_batch > 0 ? f->batch_size / o->t_batch : 0;
    o->cost = gnn_tco(p, o->q);
    o->tpc = o->cost > 0 ? o->throughput / o->cost : 0;
}

int gnn_tpc_optimise(const struct gnn_hw_profile *p, const struct gnn_workload *w, double budget,
                     struct gnn_prediction *best)
{
    int found = 0;
    int qmax = p->max_ssd > 0 ? p->max_ssd : 1;
    for (int q = 1; q <= qmax; q++) {
        struct gnn_prediction pr;
        gnn_tpc_predict(p, w, q, &pr);
        if (budget > 0 && pr.cost > budget)
            continue;
        if (!found || pr.tpc > best->tpc) {
            *best = pr;
            found = 1;
        }
    }
    return found ? 0 : -1;
}

/* Every key a profile must give (none has a default: a profile says where
 * each figure comes from), and whether it must be a positive integer. */
static const struct {
    const char *key;
    int integer, positive; /* (a cluster of in-memory machines has no SSDs: n_ssd = 0) */
} profile_keys[] = {{"ssd_bw", 0, 1},  {"pcie_bw", 0, 1}, {"cls", 1, 1},   {"ssds", 1, 1},
                    {"max_ssd", 1, 0}, {"n_ssd", 1, 0},   {"n_gpu", 1, 0}, {"n_mac", 1, 1},
                    {"c_mac", 0, 0},   {"c_gpu", 0, 0},   {"c_ssd", 0, 0}, {"c_ele", 0, 0}};
#define NPROFILE_KEYS (sizeof(profile_keys) / sizeof(profile_keys[0]))

static void profile_set(struct gnn_hw_profile *p, size_t k, double d)
{
    switch (k) {
    case 0: p->ssd_bw = d; break;
    case 1: p->pcie_bw = d; break;
    case 2: p->cls = (unsigned)d; break;
    case 3: p->ssds = (unsigned)d; break;
    case 4: p->max_ssd = (int)d; break;
    case 5: p->n_ssd = (int)d; break;
    case 6: p->n_gpu = (int)d; break;
    case 7: p->n_mac = (int)d; break;
    case 8: p->c_mac = d; break;
    case 9: p->c_gpu = d; break;
    case 10: p->c_ssd = d; break;
    default: p->c_ele = d; break;
    }
}

static int profile_fail(FILE *f, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int profile_fail(FILE *f, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (f)
        fclose(f);
    return -1;
}

int gnn_profile_load(const char *path, struct gnn_hw_profile *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return profile_fail(NULL, err, errlen, "%s: %s", path, strerror(errno));
    memset(p, 0, sizeof(*p));
    int seen[NPROFILE_KEYS] = {0};
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *key, *val;
        int kv = mb_kv_line(line, &key, &val);
        if (kv == 0)
            continue;
        if (kv < 0)
            return profile_fail(f, err, errlen, "%s:%d: expected key = value", path, lineno);
        if (!strcmp(key, "name")) {
            snprintf(p->name, sizeof(p->name), "%s", val);
            continue;
        }
        size_t k = 0;
        while (k < NPROFILE_KEYS && strcmp(key, profile_keys[k].key))
            k++;
        if (k == NPROFILE_KEYS)
            return profile_fail(f, err, errlen, "%s:%d: unknown key %s", path, lineno, key);
        if (seen[k])
            return profile_fail(f, err, errlen, "%s:%d: %s given twice", path, lineno, key);
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (end == val || *mb_trim(end) || errno || !isfinite(d))
            return profile_fail(f, err, errlen, "%s:%d: %s: not a number: %s", path, lineno, key, val);
        /* (written so that NaN fails; prices and counts may be 0, rates not) */
        int positive = profile_keys[k].positive, integer = profile_keys[k].integer;
        if (!(d >= 0) || (positive && !(d > 0)) || (integer && (d != floor(d) || d > 1 << 30)))
            return profile_fail(f, err, errlen, "%s:%d: %s: must be %s: %s", path, lineno, key,
                                positive ? (integer ? "a positive integer" : "a positive number")
                                         : (integer ? "an integer >= 0" : "a number >= 0"),
                                val);
        profile_set(p, k, d);
        seen[k] = 1;
    }
    fclose(f);
    for (size_t k = 0; k < NPROFILE_KEYS; k++)
        if (!seen[k])
            return profile_fail(NULL, err, errlen, "%s: missing key %s", path, profile_keys[k].key);
    if (!p->name[0])
        snprintf(p->name, sizeof(p->name), "%s", path);
    return 0;
}

const char gnn_tpc_model_text[] =
    "TPC model (Hyperion Eq. 3-4, extended; gnn_tpc_predict_pipeline): epoch = batches x max(T_pipe, T_ssd = "
    "storage bytes / the engine's rate at the pipeline's depth, T_pcie, T_cpu = every thread's CPU time / cores); "
    "T_pipe = mean-value analysis of the slots circulating through sampler, storage, lookup, completion and "
    "training, CPU demands stretched by core sharing (fixed point by bisection); inputs per batch from a profiling "
    "run of --profile-batches batches before the first epoch (profile/ keys); nopipe: the same stations with one "
    "batch in flight (docs/models.md, gnn/README.md)";
