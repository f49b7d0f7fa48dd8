/* Clocks: monotonic for intervals, UTC for provenance. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

double mb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mb_utc_iso8601(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double mb_cpu_s(int thread)
{
    struct timespec ts;
    if (clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double mb_host_steal_s(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return NAN;
    /* cpu  user nice system idle iowait irq softirq steal ... (USER_HZ ticks) */
    unsigned long long v[8];
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return n == 8 && hz > 0 ? (double)v[7] / (double)hz : NAN;
}
