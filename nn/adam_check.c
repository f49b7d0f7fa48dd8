/* One checked Adam step on n fp32 parameters (mb-nn's Adam case): the
 * buffers, a fresh gradient and a snapshot before each step, and every
 * element of p, m and v against the update computed in double. */
#include "nn.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nn_adam_case_init(struct nn_adam_case *c, size_t n)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    c->hp = nn_adam_default();
    float **all[] = {&c->p, &c->m, &c->v, &c->grad, &c->p0, &c->m0, &c->v0};
    const int na = (int)(sizeof(all) / sizeof(all[0]));
    for (int i = 0; i < na; i++)
        if (!(*all[i] = aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096)))
            return -1;
    /* page-aligned, as mb-nn's memcpy peer's buffers; first touch by the
     * thread that updates each page (the step's shares), as the peer's */
#pragma omp parallel if (n >= 65536)
    {
        size_t lo, hi;
        nn_adam_share(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int i = 0; i < na; i++)
            memset(*all[i] + lo, 0, (hi - lo) * sizeof(float));
    }
    nn_fill_hashed(c->p, n, 1, 1.0);
    nn_fill_hashed(c->m, n, 2, 0.01);
    for (size_t i = 0; i < n; i++) /* a second moment that fits the first */
        c->v[i] = c->m[i] * c->m[i] + 1e-6f;
    return 0;
}

void nn_adam_case_free(struct nn_adam_case *c)
{
    float *all[] = {c->p, c->m, c->v, c->grad, c->p0, c->m0, c->v0};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
    memset(c, 0, sizeof(*c));
}

void nn_adam_case_prepare(struct nn_adam_case *c, uint64_t seed, long long step)
{
    nn_fill_hashed(c->grad, c->n, seed, 0.1);
    memcpy(c->p0, c->p, c->n * sizeof(float));
    memcpy(c->m0, c->m, c->n * sizeof(float));
    memcpy(c->v0, c->v, c->n * sizeof(float));
    c->step = step;
}

void nn_adam_case_step(struct nn_adam_case *c)
{
    nn_adam_step(&c->hp, c->step, c->n, c->p, c->m, c->v, c->grad, NN_F32, 1.0f, NULL, NN_F32);
}

int nn_adam_case_check(const struct nn_adam_case *c, char *msg, size_t len)
{
    const struct nn_adam *hp = &c->hp;
    double t = (double)c->step, c1 = 1 / (1 - pow(hp->beta1, t)), c2 = 1 / (1 - pow(hp->beta2, t));
    double b1 = hp->beta1, b2 = hp->beta2, decay = 1 - (double)hp->lr * hp->weight_decay;
    for (size_t i = 0; i < c->n; i++) {
        double g = c->grad[i], m = b1 * c->m0[i] + (1 - b1) * g, v = b2 * c->v0[i] + (1 - b2) * g * g;
        double p = c->p0[i] * decay - hp->lr * (m * c1) / (sqrt(v * c2) + hp->eps);
        const char *what = NULL;
        double got = 0, want = 0;
        if (!(fabs(p - c->p[i]) <= 1e-5 * (1 + fabs(p))))
            what = "p", got = c->p[i], want = p;
        else if (!(fabs(m - c->m[i]) <= 1e-6 * (1 + fabs(m))))
            what = "m", got = c->m[i], want = m;
        else if (!(fabs(v - c->v[i]) <= 1e-5 * fabs(v) + 1e-12))
            what = "v", got = c->v[i], want = v;
        if (what) {
            snprintf(msg, len, "adam %s[%zu] = %.9g, reference %.9g", what, i, got, want);
            return 1;
        }
    }
    return 0;
}
