/* The cost model against a run's measurements: each algorithm's median
 * relative error, and auto's picks against the measured-fastest. */
#include "coll.h"
#include "../common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t mb_coll_model_errors(const struct mb_coll_obs *obs, size_t nobs, struct mb_coll_model_error *out)
{
    double *err = malloc(sizeof(double) * (nobs + 1));
    size_t nout = 0;
    for (size_t a = 0; err && a < mb_coll_nalgos(); a++) {
        const char *name = mb_coll_algo_at(a)->name;
        size_t n = 0;
        for (size_t k = 0; k < nobs; k++)
            if (strcmp(obs[k].algo, name) == 0 && isfinite(obs[k].predicted_s) && obs[k].measured_s > 0)
                err[n++] = fabs(obs[k].predicted_s - obs[k].measured_s) / obs[k].measured_s;
        if (n)
            out[nout++] = (struct mb_coll_model_error){name, mb_median(err, n), n};
    }
    free(err);
    return nout;
}

static void model_errors_print(FILE *out, const struct mb_coll_model_error *e, size_t n)
{
    if (!n)
        return;
    fprintf(out, "\n# model: median |predicted - measured| / measured per algorithm (cases):");
    for (size_t a = 0; a < n; a++)
        fprintf(out, " %s %.0f%% (%zu)", e[a].algo, 100 * e[a].median, e[a].n);
    fprintf(out, "\n");
}

static int append(char **buf, size_t *len, const char *name, const char *pick)
{
    size_t add = strlen(name) + strlen(pick) + 3;
    char *b = realloc(*buf, *len + add + 1);
    if (!b)
        return -1;
    *buf = b;
    *len += (size_t)snprintf(b + *len, add + 1, "%s%s=%s", *len ? ";" : "", name, pick);
    return 0;
}

int mb_coll_auto_report(const struct mb_coll_obs *obs, size_t nobs, FILE *out, struct mb_coll_auto_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    double *slow = malloc(sizeof(double) * (nobs + 1)), *own = malloc(sizeof(double) * (nobs + 1));
    size_t picks_len = 0;
    double geo = 0;
    rep->picks = calloc(1, 1);
    int rc = slow && own && rep->picks ? 0 : -1;
    for (size_t k = 0; k < nobs && rc == 0; k++) {
        const struct mb_coll_obs *ca = &obs[k];
        if (strcmp(ca->algo, "auto") != 0)
            continue;
        rep->cases++;
        if (!ca->pick)
            continue;
        const struct mb_coll_obs *best = NULL, *mine = NULL;
        for (size_t j = 0; j < nobs; j++) {
            const struct mb_coll_obs *o = &obs[j];
            if (o == ca || strcmp(o->key, ca->key) != 0 || strcmp(o->algo, "auto") == 0)
                continue;
            if (!best || o->measured_s < best->measured_s)
                best = o;
            if (strcmp(o->algo, ca->pick) == 0)
                mine = o;
        }
        if (append(&rep->picks, &picks_len, ca->name, ca->pick) != 0)
            rc = -1;
        if (!mine || !best) /* the pick was not measured on its own: not compared */
            continue;
        double sd = mine->measured_s / best->measured_s;
        if (rep->compared == 0 && out)
            fprintf(out, "\n# auto against the measured-fastest of the same run (pick/best: the pick's own case)\n"
                         "# %-44s %-18s %-18s %9s %9s\n", "case", "pick", "fastest", "pick/best", "auto/best");
        if (out)
            fprintf(out, "# %-44s %-18s %-18s %9.3f %9.3f\n", ca->name, ca->pick, best->algo, sd,
                    ca->measured_s / best->measured_s);
        own[rep->compared] = ca->measured_s / best->measured_s;
        slow[rep->compared++] = sd;
        rep->hits += mine == best;
        geo += log(sd);
        rep->slowdown_max = sd > rep->slowdown_max ? sd : rep->slowdown_max;
    }
    if (rep->compared && rc == 0) {
        rep->hit_rate = (double)rep->hits / (double)rep->compared;
        rep->slowdown_median = mb_median(slow, rep->compared);
        rep->slowdown_geomean = exp(geo / (double)rep->compared);
        rep->run_slowdown_median = mb_median(own, rep->compared);
        if (out)
            fprintf(out, "# auto picked the measured-fastest in %zu of %zu cases (hit rate %.2f); pick/best: median "
                         "%.3f, geomean %.3f, max %.3f\n", rep->hits, rep->compared, rep->hit_rate,
                    rep->slowdown_median, rep->slowdown_geomean, rep->slowdown_max);
    } else if (rep->cases && out && rc == 0) {
        fprintf(out, "# auto: no case had its pick measured beside it (run --algo all,auto for the hit rate)\n");
    }
    free(slow);
    free(own);
    return rc;
}

static struct mb_coll_metric *metric(struct mb_coll_metric *m, size_t *n, const char *name)
{
    struct mb_coll_metric *x = &m[(*n)++];
    memset(x, 0, sizeof(*x));
    snprintf(x->name, sizeof(x->name), "%s", name);
    return x;
}

#define DBL(name_, v) (metric(m, &n, name_)->dbl = (v))
#define INT(name_, v) (x = metric(m, &n, name_), x->type = MB_COLL_METRIC_INT, x->i = (long long)(v))

size_t mb_coll_report(const struct mb_coll_obs *obs, size_t nobs, FILE *out, struct mb_coll_auto_report *rep,
                      struct mb_coll_metric *m)
{
    struct mb_coll_model_error *e = malloc(sizeof(*e) * (mb_coll_nalgos() + 1));
    if (!e)
        mb_die(1, "out of memory reporting the model");
    size_t ne = mb_coll_model_errors(obs, nobs, e), n = 0;
    struct mb_coll_metric *x;
    for (size_t a = 0; a < ne; a++) {
        char key[64];
        snprintf(key, sizeof(key), "model_error_median_%s", e[a].algo);
        DBL(key, e[a].median);
    }
    if (out)
        model_errors_print(out, e, ne);
    free(e);
    if (mb_coll_auto_report(obs, nobs, out, rep) != 0)
        mb_die(1, "out of memory reporting auto's picks");
    if (rep->cases) {
        x = metric(m, &n, "auto_picks");
        x->type = MB_COLL_METRIC_STR, x->str = rep->picks;
        INT("auto_cases", rep->cases);
        INT("auto_compared", rep->compared);
    }
    if (rep->compared) {
        INT("auto_hits", rep->hits);
        DBL("auto_hit_rate", rep->hit_rate);
        DBL("auto_slowdown_median", rep->slowdown_median);
        DBL("auto_slowdown_geomean", rep->slowdown_geomean);
        DBL("auto_slowdown_max", rep->slowdown_max);
        /* auto's own run of its pick against the best: the same choice, measured again */
        DBL("auto_run_slowdown_median", rep->run_slowdown_median);
    }
    return n;
}

void mb_coll_print_pick(FILE *out, const char **last, const char *group, const char *size, const char *pick)
{
    if (!group) {
        if (*last)
            fprintf(out, "\n");
        *last = NULL;
        return;
    }
    if (!*last || strcmp(*last, group) != 0)
        fprintf(out, "%s# auto picks for %s:", *last ? "\n" : "", group);
    *last = group;
    fprintf(out, " %s:%s", size, pick);
}
