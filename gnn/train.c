/* GraphSAGE for node classification: SAGEConv layers (nn/), ReLU between
 * them, log-softmax NLL head, gradients averaged over ranks with the
 * collectives library, Adam (nn/). */
#include "gnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

static int grow(float **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    free(*p);
    *p = malloc(n * sizeof(float) + 64);
    *cap = *p ? n : 0;
    return *p ? 0 : -1;
}

int gnn_model_init(struct gnn_model *m, int nlayers, int in, int hidden, int classes, float lr,
                   uint64_t seed, struct mb_coll_ctx *coll, const struct mb_coll_algo *algo,
                   int nranks)
{
    memset(m, 0, sizeof(*m));
    if (nlayers < 1 || nlayers > GNN_MAX_LAYERS)
        return -1;
    m->nlayers = nlayers;
    m->in = in;
    m->hidden = hidden;
    m->classes = classes;
    m->hp = nn_adam_default();
    m->hp.lr = lr;
    m->coll = coll;
    m->algo = algo;
    m->nranks = nranks;
    for (int l = 0; l < nlayers; l++) {
        int li = l == 0 ? in : hidden, lo = l == nlayers - 1 ? classes : hidden;
        if (nn_sage_init(&m->layer[l], li, lo, l < nlayers - 1, seed * 1000003u + (uint64_t)l) != 0)
            return -1;
        size_t n = m->layer[l].params.numel;
        m->m[l] = calloc(n, sizeof(float));
        m->v[l] = calloc(n, sizeof(float));
        if (!m->m[l] || !m->v[l])
            return -1;
        m->nparams += n;
    }
    m->flat = malloc(m->nparams * sizeof(float));
    return m->flat ? 0 : -1;
}

void gnn_model_free(struct gnn_model *m)
{
    for (int l = 0; l < m->nlayers; l++) {
        nn_sage_free(&m->layer[l]);
        free(m->act[l]);
        free(m->dact[l]);
        free(m->m[l]);
        free(m->v[l]);
    }
    free(m->logp);
    free(m->dlogits);
    free(m->flat);
    memset(m, 0, sizeof(*m));
}

static int forward(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x)
{
    const float *h = x;
    for (int l = 0; l < m->nlayers; l++) {
        const struct nn_sage_block *b = &blocks[l];
        if (grow(&m->act[l], &m->act_cap[l], b->n_dst * (size_t)m->layer[l].out))
            return -1;
        if (nn_sage_forward(&m->layer[l], b, h, m->act[l]) != 0)
            return -1;
        h = m->act[l];
    }
    return 0;
}

static size_t count_correct(const float *logits, const int32_t *labels, size_t n, int classes)
{
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        const float *r = logits + i * (size_t)classes;
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (r[c] > r[best])
                best = c;
        ok += best == labels[i];
    }
    return ok;
}

int gnn_model_eval(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct)
{
    *loss = 0;
    *correct = 0;
    if (n == 0)
        return 0;
    if (blocks[m->nlayers - 1].n_dst != n || forward(m, blocks, x) != 0)
        return -1;
    const float *z = m->act[m->nlayers - 1];
    if (grow(&m->logp, &m->logp_cap, n * (size_t)m->classes))
        return -1;
    size_t cnt = 0;
    *loss = nn_logsoftmax_nll_fwd(z, labels, m->logp, n, (size_t)m->classes, &cnt);
    *correct = count_correct(z, labels, n, m->classes);
    return 0;
}

int gnn_model_step(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct, char *err,
                   size_t errlen)
{
    int L = m->nlayers;
    for (int l = 0; l < L; l++)
        nn_sage_zero_grad(&m->layer[l]);
    *loss = 0;
    *correct = 0;
    if (n > 0) {
        if (gnn_model_eval(m, blocks, x, labels, n, loss, correct) != 0) {
            snprintf(err, errlen, "forward failed (%zu seeds, last block has %zu)", n, blocks[L - 1].n_dst);
            return -1;
        }
        size_t cap = 0;
        float *dz = NULL;
        if (grow(&dz, &cap, n * (size_t)m->classes))
            return -1;
        nn_logsoftmax_nll_bwd(m->logp, labels, dz, n, (size_t)m->classes, 1.0f / (float)n);
        float *dy = dz;
        for (int l = L - 1; l >= 0; l--) {
            float *dx = NULL;
            if (l > 0) {
                if (grow(&m->dact[l], &m->dact_cap[l], blocks[l].n_src * (size_t)m->layer[l].in))
                    return -1;
                dx = m->dact[l];
            }
            if (nn_sage_backward(&m->layer[l], dy, dx) != 0) {
                free(dz);
                snprintf(err, errlen, "backward of layer %d failed", l);
                return -1;
            }
            dy = dx;
        }
        free(dz);
    }
    /* data parallel: average the gradients over the ranks (zeros from a
     * rank without seeds) */
    float scale = 1.0f;
    if (m->coll && m->algo && m->nranks > 1) {
        size_t off = 0;
        for (int l = 0; l < L; l++) {
            memcpy(m->flat + off, m->layer[l].grads.data, m->layer[l].grads.numel * sizeof(float));
            off += m->layer[l].grads.numel;
        }
        double t0 = mb_now(), c0 = mb_cpu_s(1);
        struct mb_coll_args a = {MB_COLL_ALLREDUCE, NULL, m->flat, m->nparams, MB_COLL_FLOAT, MB_COLL_SUM, 0};
        int rc = m->algo->run(m->coll, &a);
        m->allreduce_s += mb_now() - t0;
        m->allreduce_cpu_s += mb_cpu_s(1) - c0;
        if (rc != MPI_SUCCESS) {
            snprintf(err, errlen, "gradient allreduce (%s) failed: %d", m->algo->name, rc);
            return -1;
        }
        off = 0;
        for (int l = 0; l < L; l++) {
            memcpy(m->layer[l].grads.data, m->flat + off, m->layer[l].grads.numel * sizeof(float));
            off += m->layer[l].grads.numel;
        }
        scale = 1.0f / (float)m->nranks;
    }
    m->t++;
    for (int l = 0; l < L; l++) {
        struct nn_sage *s = &m->layer[l];
        nn_adam_step(&m->hp, m->t, s->params.numel, s->params.data, m->m[l], m->v[l], s->grads.data, NN_F32,
                     scale, NULL, NN_F32);
    }
    return 0;
}

double gnn_model_flops(const struct gnn_model *m, const struct nn_sage_block *blocks)
{
    double f = 0;
    for (int l = 0; l < m->nlayers; l++)
        f += nn_sage_flops_fwd(&m->layer[l], &blocks[l]);
    return f;
}
