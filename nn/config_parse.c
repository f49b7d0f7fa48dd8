/* A GPT shape from a "key=value,..." string (--model on the command line),
 * optionally starting from a preset. */
#include "nn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keys[] = {"layers", "hidden", "heads", "seq", "vocab", "ffn"};
#define NKEYS 6

static int *field(struct nn_gpt_config *c, int k)
{
    int *f[NKEYS] = {&c->layers, &c->hidden, &c->heads, &c->seq, &c->vocab, &c->ffn};
    return f[k];
}

int nn_gpt_config_parse(const char *spec, struct nn_gpt_config *cfg, char *err, size_t errlen)
{
    struct nn_gpt_config c;
    memset(&c, 0, sizeof(c));
    int seen[NKEYS] = {0}, preset = 0;
    const char *p = spec ? spec : "";
    if (!*p) {
        snprintf(err, errlen, "model: empty (layers=,hidden=,heads=,seq=,vocab= or a preset)");
        return -1;
    }
    for (int first = 1; *p; first = 0) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0 || len >= sizeof(item)) {
            snprintf(err, errlen, "model: '%.*s': empty or too long item", (int)(len < 40 ? len : 40), p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = 0;
        p += len + (p[len] == ',');
        char *eq = strchr(item, '=');
        if (!eq) {
            if (!first || nn_gpt_preset(item, &c) != 0) {
                snprintf(err, errlen, "model: '%s' is not key=value%s", item,
                         first ? " nor a preset name" : "");
                return -1;
            }
            preset = 1;
            continue;
        }
        *eq = 0;
        int k = 0;
        while (k < NKEYS && strcmp(item, keys[k]))
            k++;
        if (k == NKEYS) {
            snprintf(err, errlen, "model: unknown key '%s' (layers, hidden, heads, seq, vocab, ffn)",
                     item);
            return -1;
        }
        if (seen[k]++) {
            snprintf(err, errlen, "model: key '%s' given twice", item);
            return -1;
        }
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (eq[1] == 0 || *end || errno || v <= 0 || v > INT_MAX) {
            snprintf(err, errlen, "model: %s=%s: not a positive integer", item, eq + 1);
            return -1;
        }
        *field(&c, k) = (int)v;
    }
    for (int k = 0; k < NKEYS - 1 && !preset; k++)
        if (!seen[k]) {
            snprintf(err, errlen, "model: key '%s' missing", keys[k]);
            return -1;
        }
    if (c.hidden % c.heads) {
        snprintf(err, errlen, "model: hidden=%d is not a multiple of heads=%d", c.hidden, c.heads);
        return -1;
    }
    if (!seen[5])
        c.ffn = 4 * c.hidden;
    if (preset ? seen[0] + seen[1] + seen[2] + seen[3] + seen[4] + seen[5] > 0 : 1)
        snprintf(c.name, sizeof(c.name), "%.31s", spec);
    *cfg = c;
    return 0;
}
