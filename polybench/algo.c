/* --algo for the grid's collectives: one registry name for both the
 * broadcasts and the reductions, or a comma-separated list in which each
 * kind takes the first name that implements it (`binomial,rd`: the
 * binomial broadcast and the recursive-doubling allreduce, both modelled,
 * where `mpi`, Open MPI's own choice, is not). */
#include "polybench.h"

#include <stdio.h>
#include <string.h>

/* The next name of the comma list at *p into name (*p moves past it, NULL
 * after the last): 0, or -1 when that name is empty or too long. */
static int next_name(const char **p, char (*name)[64])
{
    const char *end = strchr(*p, ',');
    size_t n = end ? (size_t)(end - *p) : strlen(*p);
    int ok = n > 0 && n < sizeof(*name);
    if (ok) {
        memcpy(*name, *p, n);
        (*name)[n] = 0;
    }
    *p = end ? end + 1 : NULL;
    return ok ? 0 : -1;
}

const struct mb_coll_algo *mb_pb_algo_for(const char *list, enum mb_coll_kind kind)
{
    char name[64];
    for (const char *p = list; p && *p;) {
        const struct mb_coll_algo *al = next_name(&p, &name) == 0 ? mb_coll_find(name) : NULL;
        if (al && al->kinds & (1u << kind))
            return al;
    }
    return NULL;
}

int mb_pb_algo_check(const char *list, char *err, size_t len)
{
    char name[64];
    for (const char *p = list; p;) {
        if (next_name(&p, &name) != 0) {
            snprintf(err, len, "--algo %s: expected NAME or NAME,NAME (registry names)", list);
            return -1;
        }
        if (!mb_coll_find(name)) {
            snprintf(err, len, "--algo %s: not in the collectives registry (mb-coll --help lists them)", name);
            return -1;
        }
    }
    static const enum mb_coll_kind need[2] = {MB_COLL_BCAST, MB_COLL_ALLREDUCE};
    for (int i = 0; i < 2; i++)
        if (!mb_pb_algo_for(list, need[i])) {
            snprintf(err, len, "--algo %s: no %s among them (the grid needs bcast and allreduce)", list,
                     mb_coll_kind_names[need[i]]);
            return -1;
        }
    return 0;
}
