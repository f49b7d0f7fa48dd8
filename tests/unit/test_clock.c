/* common's clocks: mb_now is monotonic; mb_host_steal_s reads the steal
 * column (the 8th value of /proc/stat's "cpu" line), not its neighbours,
 * in seconds, and never goes back. */
#include "../../common/common.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/stat's aggregate line split on spaces; column k (1 = user) in ticks */
static double stat_column(int k)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[512];
    if (!f || !fgets(line, sizeof(line), f)) {
        if (f)
            fclose(f);
        return NAN;
    }
    fclose(f);
    int col = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), col++)
        if (col == k)
            return strtod(tok, NULL);
    return NAN;
}

int main(void)
{
    double a = mb_now(), b = mb_now();
    EXPECT(b >= a);

    double hz = (double)sysconf(_SC_CLK_TCK);
    double before = stat_column(8), s0 = mb_host_steal_s(), after = stat_column(8);
    if (isnan(before)) {
        fprintf(stderr, "no /proc/stat steal column here: mb_host_steal_s must say NAN\n");
        EXPECT(isnan(s0));
        return TEST_EXIT();
    }
    EXPECT(isfinite(s0) && s0 >= 0);
    /* the same column as the independent parse, taken between two reads of it */
    EXPECT(s0 >= before / hz - 1e-9 && s0 <= after / hz + 1e-9);
    double s1 = mb_host_steal_s();
    EXPECT(s1 >= s0);
    return TEST_EXIT();
}
