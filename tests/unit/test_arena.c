/* common's capped arena: alignment, marks and reset, the overrun message
 * (tier, bytes asked, bytes free), a caller's region, threads sharing it. */
#include "../../common/common.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static struct mb_arena *shared;

static void *grab(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        if (!mb_arena_alloc(shared, 16, 16, NULL, 0))
            return (void *)1;
    return NULL;
}

int main(void)
{
    char err[200];
    struct mb_arena *a = mb_arena_new("dev-mem", 1 << 20, NULL, err, sizeof(err));
    EXPECT(a != NULL);
    if (!a)
        return TEST_EXIT();
    EXPECT(mb_arena_capacity(a) == 1 << 20 && mb_arena_used(a) == 0);
    EXPECT(strcmp(mb_arena_name(a), "dev-mem") == 0 && mb_arena_error(a)[0] == 0);

    char *p1 = mb_arena_alloc(a, 3, 1, err, sizeof(err));
    char *p2 = mb_arena_alloc(a, 100, 4096, err, sizeof(err));
    EXPECT(p1 && p2 && ((uintptr_t)p2 & 4095) == 0 && p2 >= p1 + 3);
    EXPECT(mb_arena_alloc(a, 1, 3, err, sizeof(err)) == NULL); /* not a power of two */
    size_t mark = mb_arena_mark(a);
    char *p3 = mb_arena_alloc(a, 1000, 0, err, sizeof(err));
    EXPECT(p3 && ((uintptr_t)p3 & 63) == 0);
    memset(p3, 1, 1000);
    mb_arena_release(a, mark);
    EXPECT(mb_arena_used(a) == mark);
    EXPECT(mb_arena_alloc(a, 1000, 0, err, sizeof(err)) == p3); /* the same place again */
    EXPECT(mb_arena_peak(a) == mb_arena_used(a));

    /* the overrun names the tier, the bytes asked and the bytes free */
    size_t free_now = mb_arena_free_bytes(a);
    EXPECT(free_now == (1u << 20) - mb_arena_used(a));
    err[0] = 0;
    EXPECT(mb_arena_alloc(a, free_now + 1, 1, err, sizeof(err)) == NULL);
    char want[200];
    snprintf(want, sizeof(want), "dev-mem: arena overrun: asked %zu bytes, %zu free of %d", free_now + 1, free_now,
             1 << 20);
    EXPECT(strcmp(err, want) == 0);
    EXPECT(strcmp(mb_arena_error(a), want) == 0);
    if (strcmp(err, want) != 0)
        fprintf(stderr, "got \"%s\"\n", err);
    EXPECT(mb_arena_used(a) == (1u << 20) - free_now); /* a failure takes nothing */
    EXPECT(mb_arena_alloc(a, free_now, 1, err, sizeof(err)) != NULL); /* exactly full fits */
    EXPECT(mb_arena_free_bytes(a) == 0 && mb_arena_peak(a) == 1u << 20);
    EXPECT(mb_arena_alloc(a, 1, 1, NULL, 0) == NULL);
    mb_arena_reset(a);
    EXPECT(mb_arena_used(a) == 0 && mb_arena_peak(a) == 1u << 20);
    mb_arena_free(a);

    /* over a caller's region: addresses inside it, the region kept */
    static char region[4096 + 7];
    a = mb_arena_new("host-mem", sizeof(region) - 7, region + 7, err, sizeof(err));
    char *q = mb_arena_alloc(a, 64, 64, err, sizeof(err));
    EXPECT(q && q >= region + 7 && q + 64 <= region + sizeof(region) && ((uintptr_t)q & 63) == 0);
    mb_arena_free(a);

    /* four threads, 1000 x 16 bytes each: no allocation lost or shared */
    shared = mb_arena_new("threads", 4 * 1000 * 16, NULL, err, sizeof(err));
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, grab, NULL);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        EXPECT(r == NULL);
    }
    EXPECT(mb_arena_free_bytes(shared) == 0);
    mb_arena_free(shared);
    return TEST_EXIT();
}
