/* DaCe's weak-scaling size rule (adjust_size) and the kernel table. */
#include "polybench.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MB_PB_KERNEL(n) extern const struct mb_pb_kernel mb_pb_kernel_##n;
#include "kernels.def"
#undef MB_PB_KERNEL

static const struct mb_pb_kernel *const kernels[] = {
#define MB_PB_KERNEL(n) &mb_pb_kernel_##n,
#include "kernels.def"
#undef MB_PB_KERNEL
};

size_t mb_pb_nkernels(void) { return sizeof(kernels) / sizeof(kernels[0]); }

const struct mb_pb_kernel *mb_pb_kernel_at(size_t i) { return i < mb_pb_nkernels() ? kernels[i] : NULL; }

const struct mb_pb_kernel *mb_pb_find(const char *name)
{
    for (size_t i = 0; i < mb_pb_nkernels(); i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

const struct mb_pb_kernel *mb_pb_find_variant(const char *name, const char *variant)
{
    for (size_t i = 0; i < mb_pb_nkernels(); i++)
        if (strcmp(kernels[i]->name, name) == 0 && strcmp(kernels[i]->variant, variant) == 0)
            return kernels[i];
    return NULL;
}

long long mb_pb_adjust(double size, enum mb_pb_scale scale, int p, long long divisor)
{
    double f = scale == MB_PB_SQRT ? sqrt((double)p) : scale == MB_PB_CBRT ? cbrt((double)p) : (double)p;
    double candidate = size * f;
    if (divisor < 1)
        divisor = 1;
    return (long long)(ceil(candidate / (double)divisor) * (double)divisor);
}

void mb_pb_sizes_at(const struct mb_pb_kernel *k, int p, int px, int py, double scale_down,
                    struct mb_pb_sizes *out)
{
    memset(out, 0, sizeof(*out));
    out->nd = k->nd;
    long long div = k->divisor == MB_PB_DIV_P ? p : (px > py ? px : py);
    if (p == 1)
        div = 1;
    for (int i = 0; i < k->nd; i++) {
        double base = ceil((double)k->base[i] / scale_down);
        if (base < 1)
            base = 1;
        out->d[i] = (k->scaled >> i) & 1 ? mb_pb_adjust(base, k->scale, p, div) : (long long)base;
    }
    if (k->tsteps) {
        out->tsteps = (long long)ceil((double)k->tsteps / scale_down);
        if (out->tsteps < 2)
            out->tsteps = 2;
    }
}

void mb_pb_sizes_str(const struct mb_pb_kernel *k, const struct mb_pb_sizes *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < s->nd && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld", i ? "," : "", k->dim_names[i], s->d[i]);
    if (s->tsteps && used < len)
        snprintf(buf + used, len - used, ",TSTEPS=%lld", s->tsteps);
}

int mb_pb_parse_dims(const char *text, long long lo, long long *out, int max)
{
    int n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < lo || v > (1LL << 31) || (*end && *end != ',') || n >= max)
            return -1;
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    return n;
}

int mb_pb_sizes_parse(const struct mb_pb_kernel *k, const char *text, struct mb_pb_sizes *s, char *err, size_t len)
{
    memset(s, 0, sizeof(*s));
    s->nd = k->nd;
    long long v[MB_PB_MAXDIM + 1];
    int want = k->nd + (k->tsteps ? 1 : 0), n = mb_pb_parse_dims(text, 1, v, want);
    if (n < 0) {
        char names[128];
        size_t used = 0;
        for (int i = 0; i < k->nd && used < sizeof(names); i++)
            used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "", k->dim_names[i]);
        snprintf(err, len, "--dims %s: %s takes %d positive integers (%s%s)", text, k->name, want, names,
                 k->tsteps ? ",TSTEPS" : "");
        return -1;
    }
    if (n != want) {
        snprintf(err, len, "--dims %s: %s takes %d values, not %d", text, k->name, want, n);
        return -1;
    }
    memcpy(s->d, v, (size_t)k->nd * sizeof(v[0]));
    if (k->tsteps)
        s->tsteps = v[k->nd] < 2 ? 2 : v[k->nd];
    return 0;
}

int mb_pb_scale_for(const char *spec, const char *kernel, double *f, char *err, size_t len)
{
    double dflt = 1, mine = NAN;
    int ndflt = 0;
    const char *p = spec;
    while (p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[64], *eq, *num_end;
        if (n == 0 || n >= sizeof(item))
            goto bad;
        memcpy(item, p, n);
        item[n] = 0;
        eq = strchr(item, '=');
        const char *num = eq ? eq + 1 : item;
        double v = strtod(num, &num_end);
        if (num_end == num || *num_end || !(v >= 0.01 && v <= 1e9))
            goto bad;
        if (!eq) {
            if (ndflt++)
                goto bad;
            dflt = v;
        } else {
            *eq = 0;
            if (!mb_pb_find(item)) {
                snprintf(err, len, "--scale-down %s: '%s' is not a distributed kernel", spec, item);
                return -1;
            }
            if (kernel && strcmp(item, kernel) == 0)
                mine = v;
        }
        p = end ? end + 1 : NULL;
    }
    *f = isnan(mine) ? dflt : mine;
    return 0;
bad:
    snprintf(err, len, "--scale-down %s: expected F or F,KERNEL=F,... with each F in [0.01, 1e9]", spec);
    return -1;
}
