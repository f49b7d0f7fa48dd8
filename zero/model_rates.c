/* The model's calibrated rates as "key = value" text (zero.h): strict, so
 * a missing, repeated or malformed rate is refused before any work. */
#include "zero.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keys[] = {"gemm_flops", "adam_params_s", "pool_adam_params_s", "storage_Bps",
                                   "ps_bytes_per_param", "link_gbps", "ps_params_s"};
/* ps_params_s may be left out (0: the PS priced from storage and Adam) */
enum { OPTIONAL_FROM = 6 };
enum { NKEYS = sizeof(keys) / sizeof(keys[0]) };

static double *slot(struct zero_model_in *in, int k)
{
    double *s[NKEYS] = {&in->gemm_flops, &in->adam_params_s, &in->pool_adam_params_s, &in->storage_Bps,
                        &in->ps_bytes_per_param, &in->link_gbps, &in->ps_params_s};
    return s[k];
}

int zero_model_rates_parse(const char *text, const char *name, struct zero_model_in *in, char *err,
                           size_t errlen)
{
    double val[NKEYS];
    int seen[NKEYS] = {0}, lineno = 0;
    const char *p = text ? text : "";
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        lineno++;
        if (n >= sizeof line) {
            snprintf(err, errlen, "rates %s:%d: line too long", name, lineno);
            return -1;
        }
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (nl != NULL);
        char *key, *v, *end;
        int kv = mb_kv_line(line, &key, &v);
        if (kv == 0)
            continue;
        if (kv < 0) {
            snprintf(err, errlen, "rates %s:%d: expected KEY = VALUE, got '%s'", name, lineno, key);
            return -1;
        }
        int k = 0;
        while (k < NKEYS && strcmp(key, keys[k]) != 0)
            k++;
        if (k == NKEYS) {
            snprintf(err, errlen, "rates %s:%d: unknown key '%s'", name, lineno, key);
            return -1;
        }
        if (seen[k]) {
            snprintf(err, errlen, "rates %s:%d: %s given twice", name, lineno, key);
            return -1;
        }
        double d = strtod(v, &end);
        int zero_ok = strcmp(key, "link_gbps") == 0 || k >= OPTIONAL_FROM;
        if (!*v || *end || !isfinite(d) || !(zero_ok ? d >= 0 : d > 0)) {
            snprintf(err, errlen, "rates %s:%d: %s = '%s' is not a finite number %s", name, lineno, key, v,
                     zero_ok ? ">= 0" : "> 0");
            return -1;
        }
        seen[k] = 1;
        val[k] = d;
    }
    for (int k = OPTIONAL_FROM; k < NKEYS; k++)
        if (!seen[k])
            seen[k] = 1, val[k] = 0;
    for (int k = 0; k < NKEYS; k++)
        if (!seen[k]) {
            snprintf(err, errlen, "rates %s: %s missing", name, keys[k]);
            return -1;
        }
    for (int k = 0; k < NKEYS; k++)
        *slot(in, k) = val[k];
    return 0;
}
