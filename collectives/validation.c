/* The cost model's validation protocol: held-out sizes drawn by a seeded
 * random choice from a declared grid that never meets the calibration's
 * sizes (docs: collectives/README.md, "Validation"). */
#include "coll.h"
#include "../common/common.h"

#include <stdio.h>
#include <string.h>

/* Every size a calibration microbenchmark times (calibrate.c: latencies at
 * 8 B, rates over powers of two from 64 KiB to 64 MiB). */
const size_t mb_coll_calibration_sizes[] = {8,       64 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20,
                                            4 << 20, 8 << 20,  16 << 20,  32 << 20,  64 << 20};
const size_t mb_coll_ncalibration_sizes = sizeof(mb_coll_calibration_sizes) / sizeof(size_t);

/* The declared grid: 1.25, 1.5 and 1.75 times each power of two from
 * 1 KiB to 32 MiB: never a power of two, so never a calibration size. */
#define GRID_LO 10
#define GRID_HI 25
size_t mb_coll_heldout_grid(size_t *sizes, size_t cap)
{
    size_t n = 0;
    for (int k = GRID_LO; k <= GRID_HI; k++)
        for (size_t q = 5; q <= 7; q++)
            if (n < cap)
                sizes[n++] = q * ((size_t)1 << k) / 4;
    return n;
}

int mb_coll_is_calibration_size(size_t bytes)
{
    for (size_t i = 0; i < mb_coll_ncalibration_sizes; i++)
        if (mb_coll_calibration_sizes[i] == bytes)
            return 1;
    return 0;
}

size_t mb_coll_heldout_draw(uint64_t seed, size_t want, size_t *out)
{
    size_t grid[64], n = mb_coll_heldout_grid(grid, 64), got = 0;
    uint64_t st = seed ^ 0x68656c646f7574u; /* "heldout" */
    /* a partial Fisher-Yates shuffle of the grid, then ascending order */
    for (size_t i = 0; i < n && got < want; i++) {
        size_t j = i + (size_t)(mb_splitmix64(&st) % (uint64_t)(n - i));
        size_t t = grid[i];
        grid[i] = grid[j], grid[j] = t;
        if (!mb_coll_is_calibration_size(grid[i])) /* never, by the grid's construction; checked anyway */
            out[got++] = grid[i];
    }
    for (size_t i = 1; i < got; i++)
        for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            size_t t = out[j];
            out[j] = out[j - 1], out[j - 1] = t;
        }
    return got;
}

void mb_coll_sizes_string(const size_t *sizes, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%zu", i ? "," : "", sizes[i]);
}

int mb_coll_is_calibration_point(int nranks, int ranks_per_node, size_t bytes, int calibration_ranks)
{
    int split = ranks_per_node > 0 && ranks_per_node < nranks; /* the calibration ran unsplit, on one node */
    return !split && nranks == calibration_ranks && mb_coll_is_calibration_size(bytes);
}

const char *mb_coll_point_set(const size_t *sizes, size_t n, int nranks, int ranks_per_node, int calibration_ranks)
{
    size_t on = 0;
    for (size_t i = 0; i < n; i++)
        on += (size_t)mb_coll_is_calibration_point(nranks, ranks_per_node, sizes[i], calibration_ranks);
    if (n && on == n)
        return "calibration";
    return on == 0 ? "heldout" : "mixed";
}

size_t mb_coll_validation_values(const struct mb_coll_profile *prof, const size_t *sizes, size_t n, int nranks,
                                 int ranks_per_node, long long seed, struct mb_coll_metric *v)
{
    memset(v, 0, 7 * sizeof(*v));
    for (int i = 0; i < 7; i++)
        v[i].type = MB_COLL_METRIC_STR, v[i].str = v[i].text;
    snprintf(v[0].name, sizeof(v[0].name), "model_calibration_ranks");
    v[0].type = MB_COLL_METRIC_INT, v[0].i = prof->ranks;
    snprintf(v[1].name, sizeof(v[1].name), "model_calibration_sizes");
    mb_coll_sizes_string(mb_coll_calibration_sizes, mb_coll_ncalibration_sizes, v[1].text, sizeof(v[1].text));
    snprintf(v[2].name, sizeof(v[2].name), "model_point_set");
    snprintf(v[2].text, sizeof(v[2].text), "%s", mb_coll_point_set(sizes, n, nranks, ranks_per_node, prof->ranks));
    snprintf(v[3].name, sizeof(v[3].name), "model_heldout_seed");
    v[3].type = MB_COLL_METRIC_INT, v[3].i = seed;
    snprintf(v[4].name, sizeof(v[4].name), "model_heldout_sizes");
    if (seed >= 0)
        mb_coll_sizes_string(sizes, n, v[4].text, sizeof(v[4].text));
    else
        snprintf(v[4].text, sizeof(v[4].text), "none");
    snprintf(v[5].name, sizeof(v[5].name), "model_heldout_grid");
    snprintf(v[5].text, sizeof(v[5].text), "1.25, 1.5 and 1.75 x 2^k B, k = %d..%d (never a calibration size)",
             GRID_LO, GRID_HI);
    snprintf(v[6].name, sizeof(v[6].name), "model_point_ranks_per_node");
    v[6].type = MB_COLL_METRIC_INT, v[6].i = ranks_per_node > 0 && ranks_per_node < nranks ? ranks_per_node : 0;
    return 7;
}
