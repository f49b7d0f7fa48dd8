/* The one registry of algorithms: a new algorithm is its file and one row
 * of algos.def. Also what the rows share: availability with the
 * algorithm's set-up, and the per-algorithm slots of a context. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *const mb_coll_kind_names[MB_COLL_NKIND] = {"allreduce", "reduce_scatter_block", "allgather",
                                                         "bcast", "reduce"};

static const struct mb_coll_algo *const registry[] = {
#define MB_COLL_ALGO(x) &mb_coll_algo_##x,
#include "algos.def"
#undef MB_COLL_ALGO
};

size_t mb_coll_nalgos(void) { return sizeof(registry) / sizeof(registry[0]); }
const struct mb_coll_algo *mb_coll_algo_at(size_t i) { return i < mb_coll_nalgos() ? registry[i] : NULL; }

const struct mb_coll_algo *mb_coll_find(const char *name)
{
    for (size_t i = 0; i < mb_coll_nalgos(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

size_t mb_coll_index(const struct mb_coll_algo *algo)
{
    for (size_t i = 0; i < mb_coll_nalgos(); i++)
        if (registry[i] == algo)
            return i;
    mb_die(1, "collectives: algorithm %s is not in the registry", algo->name);
}

int mb_coll_always(struct mb_coll_ctx *c, char *why, size_t len)
{
    (void)c, (void)why, (void)len;
    return 1;
}

int mb_coll_usable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx, enum mb_coll_kind kind,
                   char *why, size_t len)
{
    if (!(algo->kinds & (1u << kind))) {
        snprintf(why, len, "%s does not implement %s", algo->name, mb_coll_kind_names[kind]);
        return 0;
    }
    struct mb_coll_slot *s = mb_coll_slot(ctx, algo);
    if (algo->setup && s->setup == 0) { /* the first ask, on every rank at once */
        s->setup = algo->setup(ctx, &s->state, s->why, sizeof(s->why)) == 0 ? 1 : -1;
        if (s->setup > 0)
            mb_coll_reg_map_all(ctx, algo); /* buffers registered before the set-up */
    }
    if (!algo->available(ctx, why, len))
        return 0;
    if (s->setup < 0) {
        snprintf(why, len, "%s", s->why);
        return 0;
    }
    return 1;
}

int mb_coll_runnable(const struct mb_coll_algo *algo, struct mb_coll_ctx *ctx, enum mb_coll_kind kind,
                     int device_run, char *why, size_t len)
{
    if (!(algo->kinds & (1u << kind)))
        return 0;
    if (algo->device && !device_run) {
        snprintf(why, len, "it works on device buffers (-d cuda)");
        return -1;
    }
    return mb_coll_usable(algo, ctx, kind, why, len) ? 1 : -1;
}
