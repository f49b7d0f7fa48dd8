/* Result naming and commit: never overwrite, NAME.1.h5 when NAME exists,
 * the temporary is gone afterwards, the probe names the flag. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void touch(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    char dir[] = "/tmp/mb-test-output.XXXXXX";
    if (!mkdtemp(dir))
        return 77;
    char a[512], a1[512], a2[512], tmp[512], err[512];
    snprintf(a, sizeof(a), "%s/r.h5", dir);
    snprintf(a1, sizeof(a1), "%s/r.1.h5", dir);
    snprintf(a2, sizeof(a2), "%s/r.2.h5", dir);
    snprintf(tmp, sizeof(tmp), "%s/r.h5.tmp", dir);

    /* unique names */
    char *u = mb_output_unique(a);
    EXPECT(strcmp(u, a) == 0);
    free(u);
    touch(a, "first");
    u = mb_output_unique(a);
    EXPECT(strcmp(u, a1) == 0);
    free(u);

    /* probe: an explicit -o that exists is refused; a free one is fine and leaves nothing */
    EXPECT(mb_output_probe(a, 1, err, sizeof(err)) == -1 && strstr(err, "-o/--out") && strstr(err, "exists"));
    EXPECT(mb_output_probe(a1, 1, err, sizeof(err)) == 0 && !exists(a1) && !exists(tmp));
    snprintf(err, sizeof(err), "%s/missing/x.h5", dir);
    char missing[512];
    snprintf(missing, sizeof(missing), "%s", err);
    EXPECT(mb_output_probe(missing, 1, err, sizeof(err)) == -1 && strstr(err, "cannot create"));
    touch(tmp, "stale");
    EXPECT(mb_output_probe(a, 0, err, sizeof(err)) == -1 && strstr(err, "interrupted"));
    unlink(tmp);

    /* commit: the final name exists -> NAME.1.h5, the original untouched, no temporary left */
    struct mb_result r;
    mb_result_init(&r);
    mb_kv_str(&r.root, "benchmark", "mb-test");
    char *final = mb_output_commit(&r, a, err, sizeof(err));
    EXPECT(final && strcmp(final, a1) == 0);
    free(final);
    EXPECT(!exists(tmp));
    FILE *f = fopen(a, "r");
    char buf[16] = "";
    EXPECT(f && fgets(buf, sizeof(buf), f) && strcmp(buf, "first") == 0);
    if (f)
        fclose(f);
    final = mb_output_commit(&r, a, err, sizeof(err));
    EXPECT(final && strcmp(final, a2) == 0);
    free(final);

    /* the committed file reads back */
    struct mb_result back;
    mb_result_init(&back);
    EXPECT(mb_result_read(a1, &back, err, sizeof(err)) == 0);
    const struct mb_kv *kv = mb_kv_get(&back.root, "benchmark");
    EXPECT(kv && strcmp(kv->s, "mb-test") == 0);
    mb_result_free(&back);

    /* a failed write leaves neither name behind */
    final = mb_output_commit(&r, missing, err, sizeof(err));
    EXPECT(final == NULL && err[0]);
    mb_result_free(&r);

    unlink(a);
    unlink(a1);
    unlink(a2);
    rmdir(dir);
    return TEST_EXIT();
}
