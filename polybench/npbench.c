/* Shared mode's NPBench protocol around the kernels: the cases of a run
 * (kernel x variant at a preset or --dims), one instance per kernel shared
 * by its variants, and the best variant per kernel (lowest median). The
 * timed runs, the validation of every call and the bootstrap CI
 * (bootstrap.c) are driven by mb-polybench through the harness. */
#include "polybench.h"

#include <stdio.h>
#include <string.h>

int mb_pbs_dims_parse(const struct mb_pbs_kernel *k, const char *text, long long *d, char *err, size_t len)
{
    memset(d, 0, 4 * sizeof(*d));
    if (mb_pb_parse_dims(text, 3, d, k->nd) == k->nd)
        return 0;
    char names[128];
    size_t used = 0;
    for (int i = 0; i < k->nd && used < sizeof(names); i++)
        used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "", k->dim_names[i]);
    snprintf(err, len, "--dims %s: %s takes %d integers >= 3 (%s)", text, k->name, k->nd, names);
    return -1;
}

int mb_pbs_add_cases(const struct mb_pbs_kernel *k, unsigned variant_mask, int preset, const char *dims,
                     struct mb_pbs_case *cases, size_t max, size_t *n, char *err, size_t len)
{
    long long d[4] = {0};
    if (dims) {
        if (mb_pbs_dims_parse(k, dims, d, err, len) != 0)
            return -1;
    } else
        memcpy(d, k->preset[preset], sizeof(d));
    for (int v = 0; v < MB_PBS_NVARIANTS; v++) {
        if (!(variant_mask & (1u << v)))
            continue;
        if (*n >= max) {
            snprintf(err, len, "more than %zu cases", max);
            return -1;
        }
        struct mb_pbs_case *c = &cases[(*n)++];
        c->k = k, c->variant = v;
        memcpy(c->d, d, sizeof(d));
        mb_pbs_sizes_str(k, d, c->sizes, sizeof(c->sizes));
    }
    return 0;
}

struct mb_pbs_inst *mb_pbs_pool_get(struct mb_pbs_pool *p, const struct mb_pbs_kernel *k, const long long *d,
                                    char *err, size_t len)
{
    size_t i = 0;
    while (i < mb_pbs_nkernels() && mb_pbs_kernel_at(i) != k)
        i++;
    if (i >= MB_PBS_POOL) {
        snprintf(err, len, "%s: not in the kernel table", k->name);
        return NULL;
    }
    if (!p->in[i])
        p->in[i] = mb_pbs_open(k, d, err, len);
    return p->in[i];
}

void mb_pbs_pool_close(struct mb_pbs_pool *p)
{
    for (size_t i = 0; i < MB_PBS_POOL; i++)
        mb_pbs_close(p->in[i]), p->in[i] = NULL;
}

size_t mb_pbs_best(const char *const *kernel, const double *median, size_t n, size_t i)
{
    size_t best = i;
    for (size_t j = 0; j < n; j++) {
        if (strcmp(kernel[j], kernel[i]) != 0)
            continue;
        if (j < i)
            return (size_t)-1; /* not the kernel's first case */
        if (median[j] < median[best])
            best = j;
    }
    return best;
}
