/* The step model and the closed-form bytes for one mb-zero run: its GPT,
 * W, micro-batches per worker and link, fp32 on the wire as mb-zero moves
 * it (gathers of fp32 shards, reduce-scatters of int32 or fp32 sums), so
 * the prediction sits beside the measured step and bytes of the same run. */
#include "zero.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zero_predict(const struct zero_opts *o, const char *mode, const struct zero_model_in *rates,
                 struct zero_prediction *p, char *err, size_t errlen)
{
    enum zero_model_mode m;
    if (zero_model_mode_parse(mode, &m) != 0)
        return snprintf(err, errlen, "model: no step model for mode '%s'", mode), -1;
    int nl = o->cfg.layers + 2, micro = zero_micro_per_worker(o);
    struct zero_model_layer *layers = calloc((size_t)nl, sizeof *layers);
    size_t *numel = calloc((size_t)nl, sizeof *numel);
    int rc = -1;
    if (!layers || !numel) {
        snprintf(err, errlen, "model: out of memory");
        goto out;
    }
    zero_model_gpt_layers(&o->cfg, o->micro, layers);
    for (int i = 0; i < nl; i++)
        numel[i] = (size_t)layers[i].numel;
    struct zero_model_in in = *rates;
    in.W = o->lay.W, in.micro = micro, in.nlayers = nl, in.layers = layers;
    in.param_bytes = in.grad_bytes = 4;
    /* link_bps: bytes/s per direction paced in the process; else the
     * caller's rate (a tc-shaped link, zero_tc_gbps), else 0: the profile */
    in.link_gbps = o->link_bps > 0 ? o->link_bps * 8 / 1e9 : rates->link_gbps;
    /* a tc-shaped link (unpaced in the process): every role's node has
     * one, as run.sh --vcluster places them (one role per node) */
    in.role_links = !(o->link_bps > 0) && rates->link_gbps > 0;
    in.switches = o->lay.K, in.ps = o->lay.N;
    /* disdp: the pull pipeline the trace shows (zero.h), mb_disdp's default chunk */
    in.pull_pipeline = 1, in.chunk_elems = 0;
    if (zero_closed_form(m, numel, nl, in.W, micro > 0 ? micro : 1, 4, 4, &p->bytes) != 0) {
        snprintf(err, errlen, "model: closed form refused W=%d micro=%d", in.W, micro);
        goto out;
    }
    if (zero_model_step(m, &in, &p->model, err, errlen) != 0)
        goto out;
    p->mode = m;
    rc = 0;
out:
    free(layers);
    free(numel);
    return rc;
}

double zero_tc_gbps(const char *emulation)
{
    const char *p = emulation ? strstr(emulation, "tbf ") : NULL;
    double g;
    char unit[8];
    if (!p || sscanf(p + 4, "%lf %7s", &g, unit) != 2 || strncmp(unit, "Gbit/s", 6) != 0 || !(g > 0) ||
        !(g < 1e9))
        return 0;
    return g;
}

double zero_tc_node_gbps(const char *emulation, const char *host)
{
    double base = zero_tc_gbps(emulation);
    if (!(base > 0) || !host || !*host)
        return base;
    /* ", HOST tbf R Gbit/s": the name whole (node1 is not node12) */
    char key[300];
    snprintf(key, sizeof key, ", %s tbf ", host);
    const char *p = strstr(emulation, key);
    return p ? zero_tc_gbps(p + 2 + strlen(host)) : base;
}

void zero_role_tc_gbps(const struct zero_layout *lay, const double *gbps, double out[3])
{
    int seen[3] = {0};
    out[0] = out[1] = out[2] = 0;
    for (int r = 0; r < lay->W + lay->K + lay->N; r++) {
        enum zero_role role = zero_role_of(lay, r, NULL);
        double g = gbps[r] > 0 ? gbps[r] : 0; /* NaN: unshaped */
        out[role] = !seen[role] ? g : g < out[role] ? g : out[role];
        seen[role] = 1;
    }
}

const char *zero_model_link_name(const struct zero_opts *o, const struct zero_model_in *rates)
{
    return o->link_bps > 0 ? "paced" : rates->link_gbps > 0 ? "tc" : "collectives profile";
}
