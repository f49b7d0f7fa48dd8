/* Ratel's iteration-time model, Eqs. 1-5 of the paper: forward and
 * backward are each as long as their slowest resource, all transfers
 * overlapping compute; the device link is duplex (a max term per
 * direction), storage simplex (its read and write times add). Ours adds
 * a fifth term, the host's cores: every resource above is emulated on
 * them, so a pass is at least its CPU-seconds over the cores. */
#include "ratel.h"

#include <math.h>

const char *ratel_bound_name(enum ratel_bound b)
{
    static const char *const n[] = {"compute", "link-g2m", "link-m2g", "storage", "cpu"};
    return (unsigned)b < RATEL_BOUND_COUNT ? n[b] : "?";
}

static enum ratel_bound argmax(const double t[RATEL_BOUND_COUNT])
{
    int k = 0;
    for (int i = 1; i < RATEL_BOUND_COUNT; i++)
        if (t[i] > t[k])
            k = i;
    return (enum ratel_bound)k;
}

void ratel_iter_time(const struct ratel_model *m, const struct ratel_hw *hw, double a_g2m,
                     double flops_r, struct ratel_times *o)
{
    double P = m->params;
    /* Eq. 3: the paper's alpha*A_G2M, in bytes */
    double over = a_g2m - hw->mem_avail;
    o->act_storage = over > 0 ? over : 0;
    /* Eqs. 2 and 4 */
    o->f_terms[RATEL_BOUND_COMPUTE] = m->flops_fwd / hw->gemm_flops;
    o->f_terms[RATEL_BOUND_G2M] = a_g2m / hw->link_g2m;
    o->f_terms[RATEL_BOUND_M2G] = 2 * P / hw->link_m2g;
    /* read-ahead: the first tensors' optimizer reads moved from backward
     * to forward (at most all of them, 12 bytes a parameter) */
    double ra = m->read_ahead > 0 ? (m->read_ahead < 12 * P ? m->read_ahead : 12 * P) : 0;
    o->f_terms[RATEL_BOUND_STORAGE] = (2 * P + ra) / hw->stor_read + o->act_storage / hw->stor_write;
    /* Eq. 5 */
    /* + the seconds the store's threads take from backward's GEMMs */
    /* + the store's tail after the last gradient (its last update and
     * writes): on the compute path and the CPU's, which idle through it */
    double tail = hw->store_tail_s > 0 ? hw->store_tail_s : 0;
    o->b_terms[RATEL_BOUND_COMPUTE] =
        (2 * m->flops_fwd + flops_r) / hw->gemm_flops + (hw->bwd_share_s > 0 ? hw->bwd_share_s : 0) + tail;
    o->b_terms[RATEL_BOUND_G2M] = 2 * P / hw->link_g2m;
    o->b_terms[RATEL_BOUND_M2G] = (2 * P + a_g2m) / hw->link_m2g;
    o->b_terms[RATEL_BOUND_STORAGE] =
        (14 * P - ra + o->act_storage) / hw->stor_read + 14 * P / hw->stor_write;
    /* CPU sharing: on this host the emulated device's GEMMs, the link's
     * copy threads and the store (Adam, CRC32C, I/O submission) share the
     * cores, so a pass takes at least their CPU-seconds over the cores
     * (the link's bytes: those of the G2M and M2G terms) */
    double c = hw->cores > 0 ? hw->cores : 0;
    o->f_terms[RATEL_BOUND_CPU] =
        c > 0 ? (m->flops_fwd * hw->cpu_per_flop + (a_g2m + 2 * P) * hw->cpu_per_link_byte + hw->cpu_store_f) / c
              : 0;
    o->b_terms[RATEL_BOUND_CPU] =
        c > 0 ? ((2 * m->flops_fwd + flops_r) * hw->cpu_per_flop + (4 * P + a_g2m) * hw->cpu_per_link_byte +
                 hw->cpu_store_b) / c + tail
              : 0;
    o->bound_f = argmax(o->f_terms);
    o->bound_b = argmax(o->b_terms);
    o->t_f = o->f_terms[o->bound_f];
    o->t_b = o->b_terms[o->bound_b];
    o->t_iter = o->t_f + o->t_b; /* Eq. 1 */
}

void ratel_cpu_inputs(const struct ratel_cpu_sample *c, double cores, struct ratel_hw *hw)
{
    double gemm = c->gemm[0] + c->gemm[1], link = c->link[0] + c->link[1];
    double sf = c->all[0] - c->link[0] - c->gemm[0], sb = c->all[1] - c->link[1] - c->gemm[1];
    hw->cores = cores;
    hw->cpu_per_flop = c->flops_done > 0 ? gemm / c->flops_done : 0;
    hw->cpu_per_link_byte = c->link_bytes > 0 ? link / c->link_bytes : 0;
    hw->cpu_store_f = sf > 0 ? sf : 0;
    hw->cpu_store_b = sb > 0 ? sb : 0;
}

double ratel_stor_rate(double bytes, double busy_s, int nfiles, double file_gbps)
{
    double cap = nfiles > 0 && file_gbps > 0 ? nfiles * file_gbps * 1e9 : INFINITY;
    double r = bytes > 0 && busy_s > 0 ? bytes / busy_s : INFINITY;
    if (cap < r)
        r = cap;
    return isfinite(r) ? r : 1e12;
}

int ratel_share_calibrate(double fwd_flops, double fwd_s, double bwd_flops, double bwd_s, double store_cpu_s,
                          double *share)
{
    /* (written so that NaN fails) */
    if (!(fwd_flops > 0) || !(fwd_s > 0) || !(bwd_flops > 0) || !(bwd_s > 0) || !(store_cpu_s >= 0) ||
        !isfinite(fwd_flops) || !isfinite(fwd_s) || !isfinite(bwd_flops) || !isfinite(bwd_s) || !isfinite(store_cpu_s))
        return -1;
    double x = bwd_s - bwd_flops * fwd_s / fwd_flops;
    x = x < store_cpu_s ? x : store_cpu_s;
    *share = x > 0 ? x : 0;
    return 0;
}
