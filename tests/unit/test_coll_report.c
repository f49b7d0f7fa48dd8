/* The model-against-measurement reports (report.c) on a hand-made run:
 * each algorithm's median relative error, auto's hits and slowdowns
 * against the measured-fastest, the picks string, the metrics a result
 * file records, a case whose pick did not run beside it, and auto's
 * printed picks (mb_coll_print_pick). */
#include "../../collectives/coll.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct mb_coll_obs obs(const char *name, const char *key, const char *algo, const char *pick, double t,
                              double model)
{
    struct mb_coll_obs o = {name, algo, pick, "", t, model};
    snprintf(o.key, sizeof(o.key), "%s", key);
    return o;
}

static const struct mb_coll_metric *find(const struct mb_coll_metric *m, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].name, name) == 0)
            return &m[i];
    return NULL;
}

int main(void)
{
    /* two sizes, each: mpi, ring, shm and auto; a third size only auto (its pick did not run) */
    struct mb_coll_obs o[] = {
        obs("a/8/mpi", "a/8", "mpi", "mpi", 10e-6, 12e-6),    /* error 0.2 */
        obs("a/8/ring", "a/8", "ring", "ring", 20e-6, 10e-6), /* 0.5 */
        obs("a/8/shm", "a/8", "shm", "shm", 5e-6, 5e-6),      /* 0 */
        obs("a/8/auto", "a/8", "auto", "shm", 6e-6, 5e-6),    /* pick shm = fastest: hit */
        obs("a/1M/mpi", "a/1M", "mpi", "mpi", 100e-6, 130e-6), /* 0.3 */
        obs("a/1M/ring", "a/1M", "ring", "ring", 80e-6, 80e-6), /* 0 */
        obs("a/1M/shm", "a/1M", "shm", "shm", 120e-6, NAN),    /* not modelled: not counted */
        obs("a/1M/auto", "a/1M", "auto", "mpi", 110e-6, 130e-6), /* pick mpi, ring fastest: 1.25 */
        obs("a/4M/auto", "a/4M", "auto", "rd", 1e-3, 1e-3),
    };
    size_t n = sizeof(o) / sizeof(o[0]);
    struct mb_coll_model_error e[64];
    size_t ne = mb_coll_model_errors(o, n, e);
    EXPECT(ne == 3);
    for (size_t i = 0; i < ne; i++) {
        int mpi = strcmp(e[i].algo, "mpi") == 0, ring = strcmp(e[i].algo, "ring") == 0;
        int shm = strcmp(e[i].algo, "shm") == 0;
        EXPECT(mpi || ring || shm); /* never auto, never an algorithm without a modelled case */
        EXPECT_NEAR(e[i].median, shm ? 0 : 0.25, 1e-12);
        EXPECT(e[i].n == (shm ? 1u : 2u));
    }

    struct mb_coll_auto_report rep;
    struct mb_coll_metric m[80];
    size_t nm = mb_coll_report(o, n, NULL, &rep, m);
    EXPECT(rep.cases == 3 && rep.compared == 2 && rep.hits == 1);
    EXPECT_NEAR(rep.hit_rate, 0.5, 1e-12);
    EXPECT_NEAR(rep.slowdown_max, 1.25, 1e-12); /* the picks' own cases: mpi 100/80, shm 5/5 */
    EXPECT_NEAR(rep.slowdown_median, (1.0 + 1.25) / 2, 1e-12);
    EXPECT_NEAR(rep.slowdown_geomean, sqrt(1.25), 1e-12);
    EXPECT_NEAR(rep.run_slowdown_median, (6.0 / 5 + 110.0 / 80) / 2, 1e-12);
    EXPECT(strcmp(rep.picks, "a/8/auto=shm;a/1M/auto=mpi;a/4M/auto=rd") == 0);
    const struct mb_coll_metric *x = find(m, nm, "model_error_median_ring");
    EXPECT(x && x->type == MB_COLL_METRIC_DBL && fabs(x->dbl - 0.25) < 1e-12);
    x = find(m, nm, "auto_hits");
    EXPECT(x && x->type == MB_COLL_METRIC_INT && x->i == 1);
    x = find(m, nm, "auto_picks");
    EXPECT(x && x->type == MB_COLL_METRIC_STR && x->str == rep.picks);
    EXPECT(find(m, nm, "auto_slowdown_max") && find(m, nm, "auto_run_slowdown_median"));
    EXPECT(find(m, nm, "model_error_median_auto") == NULL);
    free(rep.picks);

    /* no auto case: no auto metrics */
    nm = mb_coll_report(o, 3, NULL, &rep, m);
    EXPECT(rep.cases == 0 && find(m, nm, "auto_picks") == NULL && find(m, nm, "auto_hit_rate") == NULL);
    free(rep.picks);

    /* auto's picks printed one line per group, as mb-coll prints them */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const char *last = NULL;
    mb_coll_print_pick(f, &last, "allreduce/float", "8", "shm");
    mb_coll_print_pick(f, &last, "allreduce/float", "1M", "ring");
    mb_coll_print_pick(f, &last, "bcast/float", "4K", "binomial");
    mb_coll_print_pick(f, &last, NULL, NULL, NULL);
    fclose(f);
    EXPECT(strcmp(text, "# auto picks for allreduce/float: 8:shm 1M:ring\n# auto picks for bcast/float: 4K:binomial\n") == 0);
    free(text);
    f = open_memstream(&text, &len); /* no auto case: nothing */
    last = NULL;
    mb_coll_print_pick(f, &last, NULL, NULL, NULL);
    fclose(f);
    EXPECT(len == 0);
    free(text);
    return TEST_EXIT();
}
