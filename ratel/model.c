/* Ratel's iteration-time model, Eqs. 1-5 of the paper: forward and
 * backward are each as long as their slowest resource, all transfers
 * overlapping compute; the device link is duplex (a max term per
 * direction), storage simplex (its read and write times add). */
#include "ratel.h"

const char *ratel_bound_name(enum ratel_bound b)
{
    static const char *const n[] = {"compute", "link-g2m", "link-m2g", "storage"};
    return (unsigned)b < 4 ? n[b] : "?";
}

static enum ratel_bound argmax4(const double t[4])
{
    int k = 0;
    for (int i = 1; i < 4; i++)
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
    o->f_terms[RATEL_BOUND_STORAGE] = 2 * P / hw->stor_read + o->act_storage / hw->stor_write;
    /* Eq. 5 */
    o->b_terms[RATEL_BOUND_COMPUTE] = (2 * m->flops_fwd + flops_r) / hw->gemm_flops;
    o->b_terms[RATEL_BOUND_G2M] = 2 * P / hw->link_g2m;
    o->b_terms[RATEL_BOUND_M2G] = (2 * P + a_g2m) / hw->link_m2g;
    o->b_terms[RATEL_BOUND_STORAGE] =
        (14 * P + o->act_storage) / hw->stor_read + 14 * P / hw->stor_write;
    o->bound_f = argmax4(o->f_terms);
    o->bound_b = argmax4(o->b_terms);
    o->t_f = o->f_terms[o->bound_f];
    o->t_b = o->b_terms[o->bound_b];
    o->t_iter = o->t_f + o->t_b; /* Eq. 1 */
}
