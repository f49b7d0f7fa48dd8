/* The collectives model's validation protocol (validation.c): the held-out
 * grid never holds a calibration size, so no draw overlaps the calibration
 * set, for many seeds; a draw is reproducible from its seed, distinct,
 * ascending and from the grid; different seeds draw different sets; the
 * point-set label and the values a result file records. */
#include "../../collectives/coll.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int in(const size_t *v, size_t n, size_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

int main(void)
{
    size_t grid[64], n = mb_coll_heldout_grid(grid, 64);
    EXPECT(n == 48);
    for (size_t i = 0; i < n; i++) {
        EXPECT(!mb_coll_is_calibration_size(grid[i]));
        EXPECT(i == 0 || grid[i] > grid[i - 1]);
    }
    /* every calibration size is known as one */
    for (size_t i = 0; i < mb_coll_ncalibration_sizes; i++)
        EXPECT(mb_coll_is_calibration_size(mb_coll_calibration_sizes[i]) && !in(grid, n, mb_coll_calibration_sizes[i]));
    size_t a[64], b[64];
    int differ = 0;
    for (uint64_t seed = 0; seed < 500; seed++) {
        size_t want = 1 + seed % 48, got = mb_coll_heldout_draw(seed, want, a);
        EXPECT(got == want);
        for (size_t i = 0; i < got; i++) {
            EXPECT(in(grid, n, a[i]));                        /* from the declared grid */
            EXPECT(!in(mb_coll_calibration_sizes, mb_coll_ncalibration_sizes, a[i])); /* never calibration */
            EXPECT(i == 0 || a[i] > a[i - 1]);                /* distinct, ascending */
        }
        EXPECT(mb_coll_heldout_draw(seed, want, b) == got && memcmp(a, b, got * sizeof(size_t)) == 0);
        mb_coll_heldout_draw(seed + 1000, want, b);
        differ += want < 48 && memcmp(a, b, got * sizeof(size_t)) != 0;
    }
    EXPECT(differ > 400);
    EXPECT(mb_coll_heldout_draw(7, 100, a) == 48); /* at most the grid */

    size_t cal[] = {65536, 1 << 20}, held[] = {1280, 98304}, mixed[] = {65536, 98304};
    EXPECT(strcmp(mb_coll_point_set(cal, 2, 2, 0, 2), "calibration") == 0);
    EXPECT(strcmp(mb_coll_point_set(cal, 2, 2, 2, 2), "calibration") == 0); /* a split of whole: unsplit */
    EXPECT(strcmp(mb_coll_point_set(cal, 2, 3, 0, 2), "heldout") == 0); /* calibration sizes at other ranks */
    EXPECT(strcmp(mb_coll_point_set(cal, 2, 2, 1, 2), "heldout") == 0); /* ... or split into nodes */
    EXPECT(strcmp(mb_coll_point_set(held, 2, 2, 0, 2), "heldout") == 0);
    EXPECT(strcmp(mb_coll_point_set(mixed, 2, 2, 0, 2), "mixed") == 0);

    /* reproduce/models/coll.sh's declared configurations: ranks 2..cores, unsplit or split
     * into nodes of every proper divisor; with the drawn sizes no point is a calibration
     * point, whatever the cores and the calibration's rank count */
    for (int cores = 2; cores <= 16; cores++)
        for (int calr = 2; calr <= cores; calr++)
            for (int P = 2; P <= cores; P++)
                for (int L = 0; L < P; L++) {
                    if (L && P % L)
                        continue;
                    for (uint64_t seed = 1; seed <= 20; seed++) {
                        size_t got = mb_coll_heldout_draw(seed, 8, a);
                        EXPECT(strcmp(mb_coll_point_set(a, got, P, L, calr), "heldout") == 0);
                        for (size_t i = 0; i < got; i++)
                            EXPECT(!mb_coll_is_calibration_point(P, L, a[i], calr));
                    }
                }

    struct mb_coll_profile prof;
    memset(&prof, 0, sizeof(prof));
    prof.ranks = 2;
    struct mb_coll_metric v[8];
    size_t nv = mb_coll_validation_values(&prof, held, 2, 4, 2, 42, v);
    EXPECT(nv == 7);
    int seen = 0;
    for (size_t i = 0; i < nv; i++) {
        if (!strcmp(v[i].name, "model_point_set")) {
            seen++;
            EXPECT(!strcmp(v[i].str, "heldout"));
        }
        if (!strcmp(v[i].name, "model_heldout_sizes")) {
            seen++;
            EXPECT(!strcmp(v[i].str, "1280,98304"));
        }
        if (!strcmp(v[i].name, "model_heldout_seed")) {
            seen++;
            EXPECT(v[i].type == MB_COLL_METRIC_INT && v[i].i == 42);
        }
        if (!strcmp(v[i].name, "model_calibration_ranks")) {
            seen++;
            EXPECT(v[i].i == 2);
        }
        if (!strcmp(v[i].name, "model_point_ranks_per_node")) {
            seen++;
            EXPECT(v[i].type == MB_COLL_METRIC_INT && v[i].i == 2);
        }
    }
    EXPECT(seen == 5);
    return TEST_EXIT();
}
