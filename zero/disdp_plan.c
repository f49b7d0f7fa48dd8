/* DisDP's layout: who is what, which switch and PS own a chunk and a
 * layer, and the message tags (disdp_internal.h). */
#include "disdp_internal.h"

#include <stdio.h>

int mb_disdp_cfg_check(const struct mb_disdp_cfg *c, char *err, size_t errlen)
{
    int size = 0;
    MPI_Comm_size(c->comm, &size);
    if (c->wire != NN_F32 && c->wire != NN_F16 && c->wire != NN_BF16) {
        snprintf(err, errlen, "disdp: parameters on the wire must be fp32, fp16 or bf16, not %s",
                 nn_dtype_name(c->wire));
        return -1;
    }
    if (c->W < 1 || c->K < 1 || c->N < 1) {
        snprintf(err, errlen, "disdp needs at least one worker, switch and parameter server (W=%d K=%d N=%d)",
                 c->W, c->K, c->N);
        return -1;
    }
    if (c->W + c->K + c->N != size) {
        snprintf(err, errlen, "disdp: %d ranks, but W+K+N = %d+%d+%d = %d", size, c->W, c->K, c->N,
                 c->W + c->K + c->N);
        return -1;
    }
    if (c->nlayers < 1 || c->steps < 0) {
        snprintf(err, errlen, "disdp: %d layers, %d steps", c->nlayers, c->steps);
        return -1;
    }
    /* tags: 2 per layer for parameters, 1 per layer for gradients, from 1 */
    if (3 * (long)c->nlayers + 1 > 32767) {
        snprintf(err, errlen, "disdp: %d layers need more MPI tags than the 32767 every MPI has", c->nlayers);
        return -1;
    }
    return 0;
}

enum mb_disdp_role mb_disdp_role_of(const struct mb_disdp_cfg *c, int rank, int *index)
{
    if (rank < c->W) {
        *index = rank;
        return MB_DISDP_WORKER;
    }
    if (rank < c->W + c->K) {
        *index = rank - c->W;
        return MB_DISDP_SWITCH;
    }
    *index = rank - c->W - c->K;
    return MB_DISDP_PS;
}

size_t mb_disdp_chunk_elems(const struct mb_disdp_cfg *c)
{
    return c->chunk_elems ? c->chunk_elems : 65536;
}

size_t mb_disdp_nchunks(const struct mb_disdp_cfg *c, int layer)
{
    size_t ce = mb_disdp_chunk_elems(c);
    uint64_t n = c->numel[layer];
    return n == 0 ? 0 : (size_t)((n + ce - 1) / ce);
}

void mb_disdp_chunk_range(const struct mb_disdp_cfg *c, int layer, size_t chunk, size_t *off, size_t *n)
{
    size_t ce = mb_disdp_chunk_elems(c);
    *off = chunk * ce;
    *n = c->numel[layer] - *off < ce ? (size_t)(c->numel[layer] - *off) : ce;
}

/* (layer + chunk) so that layers of one chunk still spread over K switches */
int mb_disdp_switch_rank(const struct mb_disdp_cfg *c, int layer, size_t chunk)
{
    return c->W + (int)(((size_t)layer + chunk) % (size_t)c->K);
}

int mb_disdp_ps_rank(const struct mb_disdp_cfg *c, int layer)
{
    return c->W + c->K + layer % c->N;
}

int mb_disdp_tag(const struct mb_disdp_cfg *c, int grad, enum mb_disdp_phase ph, int layer)
{
    return grad ? 1 + 2 * c->nlayers + layer : 1 + 2 * layer + (int)ph;
}
