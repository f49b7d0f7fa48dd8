/* Shared-memory mode: the kernel table, presets, instances (arrays, their
 * initial copies, naive's temporaries, the reference), NPBench's
 * validation and the fault injection. */
#include "polybench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MB_PBS_KERNEL(n) extern const struct mb_pbs_kernel mb_pbs_kernel_##n;
#include "shared_kernels.def"
#undef MB_PBS_KERNEL

static const struct mb_pbs_kernel *const kernels[] = {
#define MB_PBS_KERNEL(n) &mb_pbs_kernel_##n,
#include "shared_kernels.def"
#undef MB_PBS_KERNEL
};

const char *const mb_pbs_variant_names[MB_PBS_NVARIANTS] = {"naive", "fused"};
const char *const mb_pbs_preset_names[MB_PBS_NPRESETS] = {"S", "M", "L", "paper"};

size_t mb_pbs_nkernels(void) { return sizeof(kernels) / sizeof(kernels[0]); }

const struct mb_pbs_kernel *mb_pbs_kernel_at(size_t i) { return i < mb_pbs_nkernels() ? kernels[i] : NULL; }

const struct mb_pbs_kernel *mb_pbs_find(const char *name)
{
    for (size_t i = 0; i < mb_pbs_nkernels(); i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

int mb_pbs_preset_parse(const char *s, int *preset)
{
    for (int i = 0; i < MB_PBS_NPRESETS; i++)
        if (strcmp(s, mb_pbs_preset_names[i]) == 0) {
            *preset = i;
            return 0;
        }
    return -1;
}

void mb_pbs_sizes_str(const struct mb_pbs_kernel *k, const long long *d, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < k->nd && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld", i ? "," : "", k->dim_names[i], d[i]);
}

void mb_pbs_close(struct mb_pbs_inst *in)
{
    if (!in)
        return;
    for (int i = 0; i < MB_PBS_MAXARR; i++)
        free(in->a[i]), free(in->a0[i]);
    for (int i = 0; i < MB_PBS_MAXWS; i++)
        free(in->ws[i]);
    for (int i = 0; i < 4; i++)
        free(in->ref[i]);
    free(in);
}

static double *alloc_doubles(size_t n)
{
    /* 64-byte aligned for the vector loops; at least one element */
    size_t bytes = ((n ? n : 1) * sizeof(double) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

struct mb_pbs_inst *mb_pbs_open(const struct mb_pbs_kernel *k, const long long *d, char *err, size_t errlen)
{
    struct mb_pbs_inst *in = calloc(1, sizeof(*in));
    if (!in) {
        snprintf(err, errlen, "%s: out of memory", k->name);
        return NULL;
    }
    in->k = k;
    memcpy(in->d, d, sizeof(in->d));
    in->alpha = 1.5, in->beta = 1.2;
    int ok = 1;
    for (int i = 0; i < k->narr; i++) {
        size_t n = k->arr_len(d, i);
        in->a[i] = alloc_doubles(n), in->a0[i] = alloc_doubles(n);
        ok = ok && in->a[i] && in->a0[i];
        if (in->a[i])
            memset(in->a[i], 0, n * sizeof(double));
    }
    for (int i = 0; i < k->nws && ok; i++)
        ok = (in->ws[i] = alloc_doubles(k->ws_len(d, i))) != NULL;
    for (int o = 0; o < k->nout && ok; o++)
        ok = (in->ref[o] = alloc_doubles(k->arr_len(d, k->out[o]))) != NULL;
    if (!ok) {
        char sz[128];
        mb_pbs_sizes_str(k, d, sz, sizeof(sz));
        snprintf(err, errlen, "%s (%s): out of memory for its arrays", k->name, sz);
        mb_pbs_close(in);
        return NULL;
    }
    k->init(in);
    for (int i = 0; i < k->narr; i++)
        memcpy(in->a0[i], in->a[i], k->arr_len(d, i) * sizeof(double));
    k->reference(in, in->ref);
    return in;
}

void mb_pbs_reset(struct mb_pbs_inst *in)
{
    for (int i = 0; i < in->k->narr; i++)
        memcpy(in->a[i], in->a0[i], in->k->arr_len(in->d, i) * sizeof(double));
}

void mb_pbs_run(struct mb_pbs_inst *in, int variant) { in->k->run[variant](in); }

int mb_pbs_check(const struct mb_pbs_inst *in, char *msg, size_t len)
{
    const double rtol = 1e-5, atol = 1e-8, norm_tol = 1e-5;
    for (int o = 0; o < in->k->nout; o++) {
        int idx = in->k->out[o];
        size_t n = in->k->arr_len(in->d, idx), first = n;
        const double *val = in->a[idx], *ref = in->ref[o];
        double diff2 = 0, ref2 = 0;
        for (size_t i = 0; i < n; i++) {
            double e = ref[i] - val[i];
            diff2 += e * e, ref2 += ref[i] * ref[i];
            /* np.allclose(ref, val): |ref - val| <= atol + rtol |val|, written so NaN fails */
            if (first == n && !(fabs(e) <= atol + rtol * fabs(val[i])))
                first = i;
        }
        if (first == n)
            continue;
        double norm_err = sqrt(diff2) / sqrt(ref2);
        if (ref2 == 0)
            norm_err = sqrt(diff2) == 0 ? 0 : INFINITY;
        if (norm_err < norm_tol) /* NPBench's fallback: the relative norm error */
            continue;
        snprintf(msg, len, "%s: %s[%zu] = %.17g, expected %.17g (norm error %.3g)", in->k->name,
                 in->k->arr_names[idx], first, val[first], ref[first], norm_err);
        return 1;
    }
    return 0;
}

void mb_pbs_corrupt(struct mb_pbs_inst *in, uint64_t seed)
{
    int o = in->k->out[mb_mix64(seed) % (uint64_t)in->k->nout], idx = o;
    size_t n = in->k->arr_len(in->d, idx);
    size_t i = (size_t)(mb_mix64(seed + 1) % (uint64_t)n);
    double *v = &in->a[idx][i];
    *v = (fabs(*v) + 1) * 1e9; /* outside allclose and the norm test at any size */
}
