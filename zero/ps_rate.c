/* The parameter server's update rate for the step model, measured the way
 * the PS updates a layer (zero.h): an mb_ostore in the run's --dir with
 * the PS's options (files, rate cap, O_DIRECT or not, the optimized
 * order), two throw-away tensors of a layer's size, each step reading
 * P32, m and v (CRC32C-checked), running nn_adam_step and writing P32, m,
 * v and P16 back; never the steps the model predicts. */
#include "zero.h"

#include "../common/common.h"
#include "../offload/aio.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct calib {
    struct nn_adam hp;
    long long t;
};

static int update(void *ctx, int i, const struct mb_ostore_state *st, const void *grad, char *err, size_t errlen)
{
    struct calib *c = ctx;
    (void)i, (void)err, (void)errlen;
    /* as mb-zero's PS with fp32 on the wire: P16 is written, not made */
    nn_adam_step(&c->hp, c->t, st->n, st->p32, st->m, st->v, (const float *)grad + st->off, NN_F32, 1.0f, NULL,
                 NN_F32);
    return 0;
}

int zero_model_measure_ps(const struct zero_ps_calib *pc, struct zero_ps_rate *out, char *err, size_t errlen)
{
    static atomic_uint seq;
    enum { NT = 2 }; /* the read-ahead of the next layer needs a next layer */
    size_t n = pc->numel;
    if (n == 0 || !pc->dir) {
        snprintf(err, errlen, "PS rate: %s", n == 0 ? "0 parameters to measure" : "no folder");
        return -1;
    }
    char names[NT][64];
    struct mb_ostore_tensor t[NT];
    unsigned id = atomic_fetch_add(&seq, 1);
    for (int i = 0; i < NT; i++) {
        snprintf(names[i], sizeof names[i], "zero-ps-rate-%ld-%u-%d", (long)getpid(), id, i);
        t[i] = (struct mb_ostore_tensor){names[i], n};
    }
    struct calib c = {.hp = nn_adam_default()};
    struct mb_ostore_opts so = {.dir = pc->dir, .nfiles = pc->nfiles, .file_gbps = pc->file_gbps,
                                .buffered = pc->buffered, .order = MB_OSTORE_OPTIMIZED, .update = update,
                                .ctx = &c, .tensors = t, .ntensors = NT, .seed = 1};
    float *g = malloc(n * sizeof(float) + 4), *z = calloc(n + 1, sizeof(float));
    uint16_t *h = calloc(n + 1, sizeof(uint16_t));
    struct mb_ostore *s = g && z && h ? mb_ostore_open(&so, err, errlen) : NULL;
    int rc = -1;
    if (!s) {
        if (!g || !z || !h)
            snprintf(err, errlen, "PS rate: out of memory for %zu parameters", n);
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        g[k] = (float)((k % 17) + 1) * 1e-3f;
    for (int i = 0; i < NT; i++) /* the state the first read checks: P32 = 1, m = v = 0 */
        if (mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_M), 0, n * 4, z, err, errlen) ||
            mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_V), 0, n * 4, z, err, errlen) ||
            mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_P16), 0, n * 2, h, err, errlen))
            goto out;
    for (size_t k = 0; k < n; k++)
        z[k] = 1.0f;
    for (int i = 0; i < NT; i++)
        if (mb_ostore_rw(s, MB_AIO_WRITE, mb_ostore_tensor_extent(s, i, MB_OSTORE_P32), 0, n * 4, z, err, errlen))
            goto out;
    struct mb_ostore_stats s0, s1;
    double best = INFINITY, adam = 0, io = 0, cbest = INFINITY; /* best of the passes each */
    for (int r = 0; r < (pc->reps < 1 ? 1 : pc->reps); r++) {
        c.t = r + 1;
        mb_ostore_stats(s, &s0);
        double t0 = mb_now(), c0 = mb_cpu_s(0);
        for (int i = NT - 1; i >= 0; i--) /* backward order, as the PS */
            if (mb_ostore_step(s, i, g, err, errlen) != 0)
                goto out;
        if (mb_ostore_drain(s, err, errlen) != 0)
            goto out;
        double dt = mb_now() - t0, dc = mb_cpu_s(0) - c0;
        mb_ostore_stats(s, &s1);
        cbest = dc < cbest ? dc : cbest;
        double bytes = (double)(s1.read_bytes - s0.read_bytes + s1.write_bytes - s0.write_bytes);
        double busy = s1.io_busy_s - s0.io_busy_s, upd = s1.update_s - s0.update_s;
        best = dt < best ? dt : best;
        if (upd > 0 && NT * (double)n / upd > adam)
            adam = NT * (double)n / upd;
        if (busy > 0 && bytes / busy > io)
            io = bytes / busy;
    }
    /* Read back what the last pass wrote: every step updated P32 against
     * its positive gradient (a step that did nothing is not a rate). */
    if (mb_ostore_rw(s, MB_AIO_READ, mb_ostore_tensor_extent(s, 0, MB_OSTORE_P32), 0, n * 4, z, err, errlen) != 0)
        goto out;
    if (!(z[0] < 1.0f) || !(z[n - 1] < 1.0f) || !(best > 0) || !(adam > 0) || !(io > 0)) {
        snprintf(err, errlen, "PS rate: the update left P32 at %g (expected below 1)", z[0]);
        goto out;
    }
    out->params_s = NT * (double)n / best;
    out->adam_params_s = adam;
    out->storage_Bps = io;
    out->cpu_params_s = cbest > 0 ? NT * (double)n / cbest : NAN;
    rc = 0;
out:
    if (s)
        mb_ostore_close(s); /* removes the files */
    free(g);
    free(z);
    free(h);
    return rc;
}
