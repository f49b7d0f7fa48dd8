/* common's emulated link: copies land byte-exact in both directions,
 * tickets complete in order, counters add up, a paced direction cannot
 * beat its rate (a lower bound the bucket guarantees whatever the load),
 * the token bucket's arithmetic, thread pinning and thread CPU time. */
#include "../../common/common.h"
#include "check.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seen_bytes[2], seen_copies[2];
static int bad_times;

static void on_copy(void *ctx, int dir, size_t bytes, double start, double end)
{
    (void)ctx;
    seen_bytes[dir] += bytes; /* each direction's own thread: no sharing */
    seen_copies[dir]++;
    bad_times += !(end >= start);
}

int main(void)
{
    /* the bucket: 1000 bytes/s, 100 deep; an idle bucket passes 100 at once */
    struct mb_rate r;
    mb_rate_init(&r, 1000, 100);
    double now = mb_now();
    double t1 = mb_rate_reserve(&r, 100);
    EXPECT(t1 <= mb_now() + 1e-9 && t1 >= now - 1e-9);
    double t2 = mb_rate_reserve(&r, 500);
    EXPECT_NEAR(t2 - t1, 0.5, 1e-9);
    /* the rest of a transfer follows the previous reservation, not the clock */
    double t3 = mb_rate_reserve_more(&r, 200);
    EXPECT_NEAR(t3 - t2, 0.2, 1e-9);
    struct mb_rate unlimited;
    mb_rate_init(&unlimited, 0, 0);
    EXPECT(mb_rate_reserve(&unlimited, 1e12) <= mb_now());

    char err[200];
    int npu = mb_pu_count();
    EXPECT(npu >= 1);
    EXPECT(mb_pin_thread(0, err, sizeof(err)) == 0);
    EXPECT(mb_pin_thread(npu, err, sizeof(err)) == -1 && strstr(err, "PU") != NULL);
    double c = mb_thread_cpu_s((unsigned long)pthread_self());
    EXPECT(isfinite(c) && c >= 0);

    /* unthrottled host-to-device, paced device-to-host at 0.2 GB/s */
    struct mb_link_opts o = {.gbps = {0, 0.2}, .chunk = 64 << 10, .cpu = {0, npu > 1 ? 1 : 0}, .on_copy = on_copy};
    struct mb_link *l = mb_link_new(&o, err, sizeof(err));
    EXPECT(l != NULL);
    if (!l)
        return TEST_EXIT();
    enum { N = 8, BYTES = (1 << 20) + 13 };
    unsigned char *host = malloc((size_t)N * BYTES), *dev = malloc((size_t)N * BYTES),
                  *back = malloc((size_t)N * BYTES);
    uint64_t s = 1;
    for (size_t i = 0; i < (size_t)N * BYTES; i++)
        host[i] = (unsigned char)mb_splitmix64(&s);
    mb_link_ticket th[N], td[N];
    for (int k = 0; k < N; k++)
        th[k] = mb_link_copy(l, MB_LINK_H2D, dev + (size_t)k * BYTES, host + (size_t)k * BYTES, BYTES);
    mb_link_wait(l, th[N - 1]);
    for (int k = 0; k < N; k++)
        EXPECT(mb_link_test(l, th[k])); /* in order: the last done means all done */
    EXPECT(memcmp(dev, host, (size_t)N * BYTES) == 0);
    for (int k = 0; k < N; k++)
        td[k] = mb_link_copy(l, MB_LINK_D2H, back + (size_t)k * BYTES, dev + (size_t)k * BYTES, BYTES);
    for (int k = N - 1; k >= 0; k--) /* waited out of order */
        mb_link_wait(l, td[k]);
    EXPECT(memcmp(back, host, (size_t)N * BYTES) == 0);

    struct mb_link_stats h2d, d2h;
    mb_link_stats(l, MB_LINK_H2D, &h2d);
    mb_link_stats(l, MB_LINK_D2H, &d2h);
    EXPECT(h2d.bytes == (uint64_t)N * BYTES && h2d.copies == N);
    EXPECT(d2h.bytes == (uint64_t)N * BYTES && d2h.copies == N);
    EXPECT(h2d.paced_s == 0 || h2d.paced_s < 1e-3); /* unlimited: the bucket never holds it */
    /* (no floor on busy_s: tests assert no timings; the bucket having held
     * the paced direction at all is what the counters must show) */
    EXPECT(d2h.paced_s > 0 && d2h.paced_s <= d2h.busy_s);
    EXPECT(isfinite(d2h.cpu_s) && d2h.cpu_s >= 0);
    mb_link_free(l); /* joins the copy threads: their callbacks are visible */
    EXPECT(seen_bytes[0] == (uint64_t)N * BYTES && seen_bytes[1] == (uint64_t)N * BYTES);
    EXPECT(seen_copies[0] == N && seen_copies[1] == N && bad_times == 0);
    free(host);
    free(dev);
    free(back);
    return TEST_EXIT();
}
