/* Roles: workers first, then switch ranks, then parameter servers. */
#include "zero.h"

#include <stdio.h>

const char *zero_role_name(enum zero_role r)
{
    return r == ZERO_WORKER ? "worker" : r == ZERO_SWITCH ? "switch" : "ps";
}

enum zero_role zero_role_of(const struct zero_layout *lay, int rank, int *index)
{
    enum zero_role r = rank < lay->W ? ZERO_WORKER : rank < lay->W + lay->K ? ZERO_SWITCH : ZERO_PS;
    if (index)
        *index = r == ZERO_WORKER ? rank : r == ZERO_SWITCH ? rank - lay->W : rank - lay->W - lay->K;
    return r;
}

int zero_layout_check(const struct zero_layout *lay, int nranks, int needs_ps, char *err, size_t len)
{
    if (lay->W < 1 || lay->K < 0 || lay->N < 0)
        return snprintf(err, len, "--workers %d --switch %d --ps %d: need at least one worker, none negative", lay->W,
                        lay->K, lay->N), -1;
    if (lay->W + lay->K + lay->N != nranks)
        return snprintf(err, len, "--workers %d + --switch %d + --ps %d = %d ranks, but the run has %d", lay->W, lay->K,
                        lay->N, lay->W + lay->K + lay->N, nranks), -1;
    if (needs_ps && lay->N < 1)
        return snprintf(err, len, "--ps 0: this mode needs a parameter server (--ps 1 or more)"), -1;
    return 0;
}
