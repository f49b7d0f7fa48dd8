/* The alpha-beta-gamma cost model's driver: the inputs of a prediction
 * (the per-byte costs blended for the node's working set) handed to the
 * algorithm's own model (struct mb_coll_algo.model, in its file; the
 * terms in model.h), and auto-selection over the registry. An algorithm
 * without a model predicts NaN. */
#include "model.h"

double mb_coll_model_ws(enum mb_coll_kind kind, double n, int oop, int L)
{
    double in = 0, out = 0;
    switch (kind) {
    case MB_COLL_REDUCE_SCATTER: in = L * n, out = n; break;
    case MB_COLL_ALLGATHER: in = n, out = L * n; break;
    case MB_COLL_BCAST: in = 0, out = n, oop = 0; break;
    default: in = n, out = n; break;
    }
    return L * ((oop ? in : 0) + out);
}

int mb_coll_model_knows(const char *algo)
{
    const struct mb_coll_algo *al = mb_coll_find(algo);
    return al && al->model;
}

double mb_coll_model(const struct mb_coll_profile *p, const char *algo, const struct mb_coll_args *a,
                     const struct mb_coll_shape *s)
{
    if (!p || a->kind >= MB_COLL_NKIND || s->nranks < 1 || s->node_size < 1 || s->nnodes < 1)
        return NAN;
    const struct mb_coll_algo *al = mb_coll_find(algo);
    if (!al || !al->model)
        return NAN;
    struct mb_coll_model_in m = {
        .p = p,
        .kind = a->kind,
        .n = (double)a->count * (double)mb_coll_dtype_size(a->dtype),
        .oop = a->sendbuf != NULL && a->kind != MB_COLL_BCAST,
        .P = s->nranks,
        .L = s->node_size,
        .N = s->nnodes,
        .a = p->p2p_alpha,
        .fl = p->flag,
        .one_host = s->one_host,
    };
    m.na = s->nnodes < 2 ? NAN : s->one_host ? p->p2p_alpha : p->net_alpha;
    m.ws = mb_coll_model_ws(m.kind, m.n, m.oop, m.L);
    m.b = mb_coll_blend(p, p->p2p, m.ws);
    m.g = mb_coll_blend(p, p->reduce, m.ws);
    m.c = mb_coll_blend(p, p->copy, m.ws);
    m.nb = s->nnodes < 2 ? NAN : s->one_host ? m.b : p->net_beta;
    double t = al->model(&m);
    return isfinite(t) && t >= 0 ? t : NAN;
}

void mb_coll_model_shape(const struct mb_coll_ctx *c, struct mb_coll_shape *s)
{
    int local = c->node_size, largest = local;
    MPI_Allreduce(&local, &largest, 1, MPI_INT, MPI_MAX, c->comm);
    s->nranks = c->size;
    s->node_size = largest;
    s->nnodes = c->nnodes;
    s->one_host = c->one_host;
}

const struct mb_coll_algo *mb_coll_pick(const struct mb_coll_profile *p, struct mb_coll_ctx *ctx,
                                        const struct mb_coll_args *a, int registered, double *predicted)
{
    struct mb_coll_shape s;
    mb_coll_model_shape(ctx, &s);
    const struct mb_coll_algo *best = NULL;
    double tbest = INFINITY;
    for (size_t i = 0; i < mb_coll_nalgos(); i++) {
        const struct mb_coll_algo *al = mb_coll_algo_at(i);
        char why[256];
        if (!mb_coll_usable(al, ctx, a->kind, why, sizeof(why)) || (al->wants_registered && !registered))
            continue;
        double t = mb_coll_model(p, al->name, a, &s);
        if (t < tbest) /* NaN never compares less */
            best = al, tbest = t;
    }
    if (predicted)
        *predicted = best ? tbest : NAN;
    return best;
}
