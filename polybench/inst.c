/* A kernel instance: open, reset, run, check against the serial
 * reference, fault injection, close. */
#include "polybench.h"
#include "../common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mb_pb_inst *mb_pb_open(const struct mb_pb_kernel *k, const struct mb_pb_grid *g,
                              const struct mb_pb_sizes *s, int skip_halo, char *err, size_t errlen)
{
    struct mb_pb_inst *in = calloc(1, sizeof(*in));
    if (!in) {
        snprintf(err, errlen, "%s: out of memory", k->name);
        return NULL;
    }
    in->k = k, in->g = g, in->s = *s, in->skip_halo = skip_halo;
    int ok = k->init(in) == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g->cart);
    if (!all) {
        snprintf(err, errlen, "%s: %s", k->name, ok ? "set-up failed on another rank" : in->err);
        mb_pb_close(in);
        return NULL;
    }
    k->reset(in);
    return in;
}

void mb_pb_reset(struct mb_pb_inst *in) { in->k->reset(in); }

int mb_pb_run(struct mb_pb_inst *in) { return in->k->run(in); }

int mb_pb_check(struct mb_pb_inst *in, char *msg, size_t len)
{
    for (int o = 0; o < in->nout; o++) {
        const struct mb_pb_block *b = &in->out[o];
        size_t n = (size_t)(b->rows * b->cols);
        if (!in->ref[o]) {
            in->ref[o] = malloc((n ? n : 1) * sizeof(double));
            if (!in->ref[o]) {
                snprintf(msg, len, "%s: out of memory for the reference", b->name);
                return 1;
            }
            in->k->reference(in, o, in->ref[o]);
        }
        for (long long i = 0; i < b->rows; i++)
            for (long long j = 0; j < b->cols; j++) {
                double got = b->data[i * b->ld + j], want = in->ref[o][i * b->cols + j];
                if (!(fabs(got - want) <= 1e-9 * (1.0 + fabs(want)))) {
                    if (b->rows == 1 && b->row0 == 0)
                        snprintf(msg, len, "%s %s[%lld] = %.17g, expected %.17g", in->k->name, b->name,
                                 b->col0 + j, got, want);
                    else
                        snprintf(msg, len, "%s %s[%lld][%lld] = %.17g, expected %.17g", in->k->name, b->name,
                                 b->row0 + i, b->col0 + j, got, want);
                    return 1;
                }
            }
    }
    return 0;
}

void mb_pb_corrupt(struct mb_pb_inst *in, uint64_t seed)
{
    const struct mb_pb_block *b = &in->out[0];
    uint64_t n = (uint64_t)(b->rows * b->cols);
    if (!n)
        return;
    uint64_t e = mb_mix64(seed) % n;
    b->data[(long long)(e / (uint64_t)b->cols) * b->ld + (long long)(e % (uint64_t)b->cols)] += 1.0;
}

void mb_pb_close(struct mb_pb_inst *in)
{
    if (!in)
        return;
    if (in->k->fini)
        in->k->fini(in);
    for (int o = 0; o < MB_PB_MAXOUT; o++)
        free(in->ref[o]);
    free(in);
}

double mb_pb_rank_flops(const struct mb_pb_inst *in) { return in->k->flops(&in->s) / in->g->p; }

double mb_pb_rank_bytes(const struct mb_pb_inst *in) { return in->k->bytes(&in->s) / in->g->p; }
