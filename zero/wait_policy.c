/* The OpenMP wait policy a run is under (zero.h). GOMP reads
 * OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when libgomp loads (before
 * main), so mb-zero cannot set them itself: the launch lines do
 * (job_scripts/mb-zero.sbatch, reproduce/disdp/run.sh, the tests) and
 * this reads back what the process started with. GOMP's rules: "passive"
 * spins 0 times unless GOMP_SPINCOUNT says otherwise; unset, a waiting
 * thread spins 300000 times (about 0.1-1 ms) before it sleeps. */
#include "zero.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* GOMP's parse: case-insensitive, surrounding blanks allowed. */
static int is_word(const char *v, const char *w)
{
    while (isspace((unsigned char)*v))
        v++;
    size_t n = strlen(w);
    if (strncasecmp(v, w, n) != 0)
        return 0;
    for (v += n; *v; v++)
        if (!isspace((unsigned char)*v))
            return 0;
    return 1;
}

const char *zero_omp_wait_policy(char *buf, size_t len, int *passive)
{
    const char *p = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    int pas = p && is_word(p, "passive"), spin0 = !spin || is_word(spin, "0");
    *passive = pas && spin0;
    if (!p)
        snprintf(buf, len, "unset (GOMP: spin 300000 times, then sleep)");
    else
        snprintf(buf, len, "%s", pas ? "passive" : is_word(p, "active") ? "active" : p);
    if (spin) {
        size_t n = strlen(buf);
        snprintf(buf + n, len > n ? len - n : 0, ", GOMP_SPINCOUNT=%s", spin);
    }
    return buf;
}
