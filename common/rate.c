/* Token bucket in virtual time (see common.h): t_free is when everything
 * reserved so far has passed; an idle bucket refills to `burst`, so a
 * reservation may start up to burst/rate seconds in the past. */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <time.h>

void mb_rate_init(struct mb_rate *r, double bytes_per_s, double burst_bytes)
{
    r->rate = bytes_per_s;
    r->burst = burst_bytes > 0 ? burst_bytes : 0;
    r->t_free = 0;
}

double mb_rate_reserve(struct mb_rate *r, double n)
{
    double now = mb_now();
    if (!(r->rate > 0))
        return now;
    double start = now - r->burst / r->rate;
    if (r->t_free > start)
        start = r->t_free;
    r->t_free = start + n / r->rate;
    return r->t_free;
}

double mb_rate_reserve_more(struct mb_rate *r, double n)
{
    if (!(r->rate > 0))
        return mb_now();
    r->t_free += n / r->rate;
    return r->t_free;
}

void mb_rate_pace(double t)
{
    for (;;) {
        double left = t - mb_now();
        if (!(left > 0))
            return;
        struct timespec ts = {(time_t)left, (long)((left - floor(left)) * 1e9)};
        if (nanosleep(&ts, NULL) != 0 && errno != EINTR)
            return;
    }
}
