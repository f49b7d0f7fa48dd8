/* Bytes per worker per direction of one step, in closed form (issue 19's
 * "counted bytes equal the closed form exactly"): the counts the ring
 * collectives and DisDP's agent move, padding included. */
#include "zero.h"

#include "../nn/nn.h"

#include <string.h>

const char *const zero_model_mode_names[ZERO_MODEL_NMODES] = {"zero3-serial", "zero3-overlap", "zero-offload",
                                                              "disdp"};

int zero_model_mode_parse(const char *s, enum zero_model_mode *m)
{
    for (int i = 0; s && i < ZERO_MODEL_NMODES; i++)
        if (strcmp(s, zero_model_mode_names[i]) == 0) {
            *m = (enum zero_model_mode)i;
            return 0;
        }
    return -1;
}

int zero_closed_form_layer(enum zero_model_mode m, size_t numel, int W, int micro, size_t param_bytes,
                           size_t grad_bytes, struct zero_wire_bytes *out)
{
    if (W < 1 || micro < 1 || param_bytes == 0 || grad_bytes == 0 || (unsigned)m >= ZERO_MODEL_NMODES)
        return -1;
    if (m == ZERO_MODEL_DISDP) {
        out->send = (uint64_t)numel * grad_bytes;
        out->recv = 2 * (uint64_t)micro * numel * param_bytes;
        return 0;
    }
    size_t off, n;
    /* A ring over W ranks passes W-1 blocks of the padded shard each way. */
    uint64_t S = nn_shard_range(numel, 0, W, &off, &n);
    out->send = out->recv = (uint64_t)(W - 1) * S * (2 * (uint64_t)micro * param_bytes + grad_bytes);
    return 0;
}

int zero_closed_form(enum zero_model_mode m, const size_t *numel, int nlayers, int W, int micro,
                     size_t param_bytes, size_t grad_bytes, struct zero_wire_bytes *out)
{
    struct zero_wire_bytes sum = {0, 0}, one;
    if (nlayers < 0 || (nlayers > 0 && !numel))
        return -1;
    for (int i = 0; i < nlayers; i++) {
        if (zero_closed_form_layer(m, numel[i], W, micro, param_bytes, grad_bytes, &one) != 0)
            return -1;
        sum.send += one.send;
        sum.recv += one.recv;
    }
    if (nlayers == 0 && zero_closed_form_layer(m, 0, W, micro, param_bytes, grad_bytes, &one) != 0)
        return -1;
    *out = sum;
    return 0;
}
