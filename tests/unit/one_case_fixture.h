/* The harness tests' plan: a single 8-byte case "g/c", whose batch limit the
 * test chooses (0: the harness's default). */
#ifndef MB_TEST_ONE_CASE_FIXTURE_H
#define MB_TEST_ONE_CASE_FIXTURE_H

#include "../../benchmarks/harness/harness.h"

#include <stdio.h>
#include <string.h>

static int one_case_plan(struct mb_run *run, int max_batch)
{
    static struct mb_case c;
    memset(&c, 0, sizeof(c));
    snprintf(c.name, sizeof(c.name), "c");
    snprintf(c.group, sizeof(c.group), "g");
    c.bytes = c.count = 8;
    c.max_batch = max_batch;
    run->cases = &c;
    run->ncases = 1;
    return 0;
}

#endif
