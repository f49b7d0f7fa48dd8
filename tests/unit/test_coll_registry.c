/* The collectives registry's table invariants, so a row missing a field
 * fails here: every entry has a name (unique, found by mb_coll_find), a
 * description, collectives it implements, available() and run(); the
 * optional callbacks come in the pairs the library relies on; the model is
 * found for exactly the entries that have one, and predicts a number for
 * one of their collectives; mpi is the first entry (mb-coll's reference).
 * Then every algorithm's set-up, buffer registration and teardown on a
 * 1-rank context, three times: the second and third rounds must leave as
 * many file descriptors and shared mappings as the first (nothing left
 * behind). */
#include "../../collectives/coll.h"
#include "../../common/common.h"
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_table(void)
{
    size_t n = mb_coll_nalgos();
    unsigned all = (1u << MB_COLL_NKIND) - 1;
    struct mb_coll_profile prof;
    memset(&prof, 0, sizeof(prof));
    prof.ranks = 2, prof.cache_bytes = 1e6, prof.p2p_alpha = 1e-6, prof.flag = 1e-6;
    prof.p2p_msg1k = prof.p2p_msg8k = prof.p2p_nb_alpha = 1e-6; /* per-message overheads: flat */
    prof.p2p = prof.reduce = prof.copy = prof.cma = (struct mb_coll_rate){1e-9, 2e-9};
    prof.stream = 1e-9, prof.cma_alpha = 1e-6;
    EXPECT(n > 0 && strcmp(mb_coll_algo_at(0)->name, "mpi") == 0);
    EXPECT(mb_coll_algo_at(n) == NULL && mb_coll_find("no-such-algorithm") == NULL);
    for (size_t i = 0; i < n; i++) {
        const struct mb_coll_algo *al = mb_coll_algo_at(i);
        const char *name = al->name ? al->name : "(unnamed)";
        if (!al->name || !al->name[0] || !al->description || !al->description[0] || !al->kinds ||
            (al->kinds & ~all) || !al->available || !al->run) {
            fprintf(stderr, "test_coll_registry: entry %zu (%s) lacks a required field\n", i, name);
            test_failures++;
            continue;
        }
        EXPECT(mb_coll_find(al->name) == al); /* the first of its name: names are unique */
        EXPECT(!al->reg_map == !al->reg_unmap);
        EXPECT(!al->reg_map || (al->setup && al->teardown)); /* mapped after set-up, undone at teardown */
        EXPECT(!al->setup || al->teardown);
        EXPECT(mb_coll_model_knows(al->name) == (al->model != NULL));
        int finite = 0;
        for (int k = 0; k < MB_COLL_NKIND; k++) {
            static char dummy;
            struct mb_coll_args a = {.kind = (enum mb_coll_kind)k, .sendbuf = &dummy, .recvbuf = &dummy,
                                     .count = 1024, .dtype = MB_COLL_FLOAT, .op = MB_COLL_SUM};
            struct mb_coll_shape s = {2, 2, 1, 0};
            double t = mb_coll_model(&prof, al->name, &a, &s);
            if (!al->model)
                EXPECT(isnan(t));
            finite |= (al->kinds & (1u << k)) && isfinite(t) && t > 0;
        }
        if (al->model && !finite) {
            fprintf(stderr, "test_coll_registry: %s has a model that predicts nothing it implements\n", name);
            test_failures++;
        }
    }
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Shared mappings of this process (/proc/self/maps lines whose
 * permissions end in 's'): the pool file, node-shared windows, registered
 * segments. Private anonymous ones come and go with malloc (and with a
 * sanitizer's allocator), so they say nothing about a leak. */
static int count_shared_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char perms[8] = "";
        if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's')
            n++;
    }
    fclose(f);
    return n;
}

/* One context through every algorithm's life: a pool, a registered buffer
 * before the set-ups and one after, every algorithm asked (its set-up) and
 * run once where usable on host buffers, the buffers released, the
 * context freed. */
static void one_round(void)
{
    char err[256], why[256];
    struct mb_coll_ctx *ctx = mb_coll_ctx_create(MPI_COMM_SELF, 0, err, sizeof(err));
    if (!ctx)
        mb_die(1, "test_coll_registry: %s", err);
    EXPECT(mb_coll_pool_open(ctx, NULL) == 0);
    float *before = mb_coll_alloc(ctx, 4096, err, sizeof(err));
    EXPECT(before != NULL);
    int usable[64] = {0};
    for (size_t i = 0; i < mb_coll_nalgos() && i < 64; i++) { /* the set-ups: `before` is mapped after them */
        usable[i] = mb_coll_usable(mb_coll_algo_at(i), ctx, MB_COLL_ALLREDUCE, why, sizeof(why));
        EXPECT(usable[i] || why[0]);
    }
    float *after = mb_coll_alloc(ctx, 4096, err, sizeof(err)); /* mapped as it is allocated */
    EXPECT(after != NULL);
    for (size_t i = 0; i < mb_coll_nalgos() && i < 64 && before && after; i++) {
        const struct mb_coll_algo *al = mb_coll_algo_at(i);
        if (!usable[i] || al->device)
            continue;
        for (int k = 0; k < 1024; k++)
            before[k] = (float)k, after[k] = 0;
        struct mb_coll_args a = {MB_COLL_ALLREDUCE, before, after, 1024, MB_COLL_FLOAT, MB_COLL_SUM, 0};
        EXPECT(al->run(ctx, &a) == 0);
        EXPECT(after[1023] == 1023.0f);
    }
    mb_coll_release(ctx, after);
    mb_coll_release(ctx, before);
    mb_coll_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mb_set_progname("test_coll_registry");
    test_table();
    one_round();
    int fds = count_dir("/proc/self/fd"), maps = count_shared_maps();
    one_round();
    one_round();
    int fds2 = count_dir("/proc/self/fd"), maps2 = count_shared_maps();
    if (fds2 != fds || maps2 != maps) {
        fprintf(stderr, "test_coll_registry: set-up and teardown left %d file descriptors and %d shared mappings behind\n",
                fds2 - fds, maps2 - maps);
        test_failures++;
    } else {
        printf("test_coll_registry: %zu algorithms; set-up/teardown x3 left %d fds and %d shared mappings, as after the "
               "first\n", mb_coll_nalgos(), fds2, maps2);
    }
    MPI_Finalize();
    return TEST_EXIT();
}
