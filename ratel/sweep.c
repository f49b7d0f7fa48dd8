/* Fig. 9b's curve as the trainer walks it: Algorithm 1's order over the
 * table with each of nn's recompute groups (same layer, same nonzero
 * group) merged into one unit, the model at every prefix. A group's
 * tensors are swapped together or not at all (a partial set reruns the
 * whole step), so these are the swap sets the trainer can run and the
 * FLOPs its backward really saves; ratel_sweep over the single tensors
 * priced sets no trainer runs. */
#include "ratel.h"

#include <stdlib.h>

int ratel_units_grouped(const struct ratel_unit *u, int n, struct ratel_unit *g, int *of)
{
    if (n < 0)
        return -1;
    int ng = 0;
    for (int i = 0; i < n; i++) {
        int k = -1;
        for (int j = 0; u[i].group && j < i && k < 0; j++)
            if (u[j].group == u[i].group && u[j].layer == u[i].layer)
                k = of[j];
        if (k < 0) {
            k = ng++;
            g[k] = u[i];
        } else {
            g[k].bytes += u[i].bytes;
            g[k].flops += u[i].flops;
        }
        of[i] = k;
    }
    return ng;
}

int ratel_sweep_groups(const struct ratel_model *m, const struct ratel_hw *hw,
                       const struct ratel_unit *u, int n, enum ratel_case1 c1, struct ratel_point *pts,
                       int max)
{
    if (n < 0)
        return -1;
    struct ratel_unit *g = malloc(((size_t)n + 1) * sizeof(*g));
    int *of = malloc(((size_t)n + 1) * sizeof(*of));
    int rc = -1;
    if (g && of)
        rc = ratel_sweep(m, hw, g, ratel_units_grouped(u, n, g, of), c1, pts, max);
    free(g);
    free(of);
    return rc;
}
