/* The PS's terms of the step model (zero/model.c) when the PS's update
 * rate is a calibrated input (ps_params_s), against values computed by
 * hand; the rates text's optional ps_params_s; and the calibration itself
 * (zero/ps_rate.c): finite rates, its files removed, a bad folder named.
 * No timing is asserted. */
#include "../../zero/zero.h"
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zero_model_fixture.h"

static void model(void)
{
    struct zero_model_in in = base();
    struct zero_model_step s;
    char err[256];
    /* ps_params_s = 200: the PS's update of layer 1 takes 300/200 = 1.5 s
     * from the end of its backward term (0.8 s: max(0.8, 0.6)), done at
     * 2.3; layer 0's (100/200 = 0.5 s) arrives at 1.0, starts at 2.3,
     * done at 2.8: 1.8 s past backward's end. Passes as in test_zero_model:
     * fwd 0.8, bwd 1.0. Step 0.8 + 1.0 + 1.8 = 3.6; the update alone
     * (optimizer) 2.0 s; storage alone still 400*26/5200 = 2.0 s. Without
     * ps_params_s the same inputs give max(storage, Adam) = n/100: 5.6 s. */
    in.ps_params_s = 200;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.optimizer, 2.0, T);
    EXPECT_NEAR(s.exposed_optimizer, 1.8, T);
    EXPECT_NEAR(s.storage, 2.0, T);
    EXPECT_NEAR(s.step, 3.6, T);
    /* A PS faster than backward: 1e4 params/s, layer 1 done at 0.83,
     * layer 0 from 1.0 to 1.01: 0.01 exposed, step 1.81. */
    in.ps_params_s = 1e4;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.exposed_optimizer, 0.01, T);
    EXPECT_NEAR(s.step, 1.81, T);
    /* The ZeRO-3 modes do not use it. */
    in.ps_params_s = 1e-9;
    EXPECT(zero_model_step(ZERO_MODEL_OVERLAP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 3.5, T);
    in = base();
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == 0);
    EXPECT_NEAR(s.step, 5.6, T);
    /* Refused when not a number >= 0 (NaN fails). */
    in.ps_params_s = NAN;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "ps_params_s"));
    in.ps_params_s = -1;
    EXPECT(zero_model_step(ZERO_MODEL_DISDP, &in, &s, err, sizeof err) == -1 && strstr(err, "ps_params_s"));
}

static void rates(void)
{
    const char *with = "gemm_flops = 2e10\nadam_params_s = 5e8\npool_adam_params_s=4e8\nstorage_Bps = 1.5e9\n"
                       "ps_bytes_per_param = 26\nlink_gbps = 0\nps_params_s = 7e7\n";
    const char *without = "gemm_flops = 2e10\nadam_params_s = 5e8\npool_adam_params_s=4e8\nstorage_Bps = 1.5e9\n"
                          "ps_bytes_per_param = 26\nlink_gbps = 0\n";
    struct zero_model_in in = base();
    char err[256];
    EXPECT(zero_model_rates_parse(with, "r.txt", &in, err, sizeof err) == 0 && in.ps_params_s == 7e7);
    in.ps_params_s = 5;
    EXPECT(zero_model_rates_parse(without, "r.txt", &in, err, sizeof err) == 0 && in.ps_params_s == 0);
    char bad[512];
    snprintf(bad, sizeof bad, "%sps_params_s = -3\n", without);
    EXPECT(zero_model_rates_parse(bad, "r.txt", &in, err, sizeof err) == -1 && strstr(err, "ps_params_s"));
    snprintf(bad, sizeof bad, "%sps_params_s = 1\nps_params_s = 2\n", without);
    EXPECT(zero_model_rates_parse(bad, "r.txt", &in, err, sizeof err) == -1 && strstr(err, "twice"));
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return d ? n : -1;
}

static void calibration(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512], err[512];
    snprintf(dir, sizeof dir, "%s/test_zero_model_ps.XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        printf("SKIP calibration: cannot make a folder in %s\n", tmp);
        return;
    }
    struct zero_ps_calib pc = {.dir = dir, .numel = 100000, .nfiles = 1, .reps = 2};
    struct zero_ps_rate r = {0};
    EXPECT(zero_model_measure_ps(&pc, &r, err, sizeof err) == 0);
    if (r.params_s == 0)
        fprintf(stderr, "zero_model_measure_ps: %s\n", err);
    EXPECT(r.params_s > 0 && isfinite(r.params_s));
    EXPECT(r.adam_params_s > 0 && isfinite(r.adam_params_s));
    EXPECT(r.storage_Bps > 0 && isfinite(r.storage_Bps));
    /* the whole update (read, Adam, write) is no faster than its Adam */
    EXPECT(r.params_s <= r.adam_params_s);
    EXPECT(entries(dir) == 0); /* the store's files are gone */
    printf("measured here (informational): PS update %.3g params/s, its Adam %.3g params/s, storage %.3g B/s\n",
           r.params_s, r.adam_params_s, r.storage_Bps);
    pc.numel = 0;
    EXPECT(zero_model_measure_ps(&pc, &r, err, sizeof err) == -1 && strstr(err, "0 parameters"));
    pc.numel = 1000, pc.dir = "/nonexistent-dir";
    EXPECT(zero_model_measure_ps(&pc, &r, err, sizeof err) == -1 && strstr(err, "/nonexistent-dir"));
    rmdir(dir);
}

int main(void)
{
    model();
    rates();
    calibration();
    return TEST_EXIT();
}
