/* Result naming and commit: never overwrite, NAME.1.h5 when NAME exists,
 * the temporary is gone afterwards, the probe names the flag; a planted
 * PATH.tmp or a symlink at a temporary name is never touched; a run
 * killed by SIGTERM/SIGINT keeps its finished cases (complete=0); a
 * failed write leaves nothing and the CSV carries the summary. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static int same_text(const char *p, const char *text)
{
    FILE *f = fopen(p, "r");
    char buf[256] = "";
    int ok = f && fgets(buf, sizeof buf, f) && strcmp(buf, text) == 0;
    if (f)
        fclose(f);
    return ok;
}

/* Entries of dir whose name holds ".tmp". */
static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void add_case(struct mb_result *r, const char *name, double t)
{
    struct mb_case_result *c = mb_result_add_case(r, name);
    c->labels[0] = strdup("x");
    c->bytes = 64;
    c->count = 16;
    c->iters = 3;
    c->nranks = 2;
    c->samples = malloc(6 * sizeof(double));
    for (int i = 0; i < 6; i++)
        c->samples[i] = t * (1 + i);
    mb_stats_compute(c->samples, 3, &c->stats);
    c->check = MB_CHECK_PASS;
}

static void make_result(struct mb_result *r, size_t ncases)
{
    mb_result_init(r);
    mb_kv_str(&r->root, "benchmark", "mb-test");
    mb_kv_str(&r->root, "emulation", "none");
    mb_kv_int(&r->root, "complete", 0);
    mb_kv_int(&r->root, "cases_planned", (long long)ncases);
    mb_kv_int(&r->config, "iters", 3);
    r->label_names[0] = strdup("lab");
    r->nlabels = 1;
    for (size_t k = 0; k < ncases; k++) {
        char name[32];
        snprintf(name, sizeof name, "case/%zu", k);
        add_case(r, name, 1e-6 * (double)(k + 1));
    }
}

/* A symlink at the temporary's name is neither followed nor removed: the
 * writer picks another name, and the link's target is untouched. */
static void planted_symlink(const char *dir)
{
    char path[512], target[512], link_at[600], err[1024];
    snprintf(path, sizeof path, "%s/s.h5", dir);
    snprintf(target, sizeof target, "%s/victim", dir);
    snprintf(link_at, sizeof link_at, "%s.tmp.%ld.%016llx", path, (long)getpid(), 0ULL);
    touch(target, "precious");
    EXPECT(symlink(target, link_at) == 0);
    /* the writer itself refuses a name that is a link */
    struct mb_result r;
    make_result(&r, 1);
    EXPECT(mb_result_begin(&r, link_at, err, sizeof err) == NULL && strstr(err, "exists"));
    setenv("MB_FAULT_INJECT", "tmp-collide", 1); /* first temporary name: the link */
    char *final = mb_output_commit(&r, path, err, sizeof err);
    unsetenv("MB_FAULT_INJECT");
    EXPECT(final && strcmp(final, path) == 0);
    free(final);
    struct stat st;
    EXPECT(lstat(link_at, &st) == 0 && S_ISLNK(st.st_mode));
    EXPECT(same_text(target, "precious"));
    struct mb_result back;
    EXPECT(mb_result_read(path, &back, err, sizeof err) == 0 && back.ncases == 1);
    mb_result_free(&back);
    mb_result_free(&r);
    unlink(link_at);
    unlink(target);
    unlink(path);
}

/* A write failing mid-run (a full disk): add and close fail naming the
 * temporary and the error, and no file is left under any name. */
static void write_failure(const char *dir)
{
    char path[512], err[4608];
    snprintf(path, sizeof path, "%s/full.h5", dir);
    struct mb_result r;
    make_result(&r, 3);
    setenv("MB_FAULT_INJECT", "result-enospc", 1);
    struct mb_output *o = mb_output_open(&r, path, err, sizeof err);
    EXPECT(o != NULL);
    if (o) {
        EXPECT(mb_output_add(o, &r, 0, err, sizeof err) == 0);
        EXPECT(mb_output_add(o, &r, 1, err, sizeof err) == -1 && strstr(err, "No space left"));
        err[0] = '\0';
        EXPECT(mb_output_close(o, &r, err, sizeof err) == NULL && strstr(err, "No space left") &&
               strstr(err, path));
    }
    unsetenv("MB_FAULT_INJECT");
    EXPECT(!exists(path) && count_tmp(dir) == 1); /* main()'s planted PATH.tmp only */
    mb_result_free(&r);
}

/* A program's own handler (its clean-up), installed before the output. */
static char marker[600];
static void program_cleanup(int sig)
{
    (void)sig;
    int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0)
        close(fd);
}

/* A child writes two of four cases and is signalled: it ends with
 * 128 + sig, and the final name holds exactly those cases, complete=0,
 * with no temporary left. */
static void interrupted(const char *dir, int sig)
{
    char path[512], err[1024];
    snprintf(path, sizeof path, "%s/sig%d.h5", dir, sig);
    fflush(NULL);
    pid_t pid = fork();
    snprintf(marker, sizeof marker, "%s/cleanup%d", dir, sig);
    if (pid == 0) {
        signal(sig, program_cleanup);
        struct mb_result r;
        make_result(&r, 4);
        struct mb_output *o = mb_output_open(&r, path, err, sizeof err);
        if (!o)
            _exit(3);
        mb_kv_str(&r.root, "emulation", "after case 0");
        if (mb_output_add(o, &r, 0, err, sizeof err) || mb_output_add(o, &r, 1, err, sizeof err))
            _exit(4);
        raise(sig);
        _exit(5); /* not reached */
    }
    int st = 0;
    EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig);
    struct mb_result back;
    EXPECT(mb_result_read(path, &back, err, sizeof err) == 0);
    if (back.ncases == 2) {
        EXPECT(strcmp(back.cases[1].name, "case/1") == 0 && back.cases[1].samples &&
               back.cases[1].samples[5] == 2e-6 * 6);
        const struct mb_kv *c = mb_kv_get(&back.root, "complete");
        EXPECT(c && c->type == MB_KV_INT && c->i == 0);
        const struct mb_kv *e = mb_kv_get(&back.root, "emulation");
        EXPECT(e && e->type == MB_KV_STR && strcmp(e->s, "after case 0") == 0);
    } else {
        EXPECT(back.ncases == 2);
    }
    mb_result_free(&back);
    EXPECT(exists(marker)); /* the program's handler ran too */
    unlink(marker);
    EXPECT(count_tmp(dir) == 1); /* the planted PATH.tmp of main() only */
    unlink(path);
}

static void csv_and_counts(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sum.csv", dir);
    struct mb_result r;
    make_result(&r, 2);
    FILE *f = fopen(path, "w+");
    EXPECT(f != NULL);
    if (f) {
        mb_result_csv(&r, f);
        rewind(f);
        char line[512] = "";
        EXPECT(fgets(line, sizeof line, f) &&
               strcmp(line, "case,lab,bytes,count,t_min,t_median,t_p95,t_max,algbw,busbw,model,check\n") == 0);
        EXPECT(fgets(line, sizeof line, f) && strncmp(line, "case/0,x,64,16,1e-06,", 21) == 0 &&
               strstr(line, ",pass\n"));
        EXPECT(fgets(line, sizeof line, f) && strncmp(line, "case/1,x,64,16,", 15) == 0);
        EXPECT(!fgets(line, sizeof line, f));
        fclose(f);
    }
    unlink(path);
    mb_result_free(&r);
    EXPECT(mb_count_fits(0) && mb_count_fits(2147483647u));
    EXPECT(!mb_count_fits((size_t)2147483647u + 1));
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
    /* a PATH.tmp left by someone else (the old fixed name) is no obstacle and never touched */
    touch(tmp, "stale");
    EXPECT(mb_output_probe(a, 0, err, sizeof(err)) == 0);

    /* commit: the final name exists -> NAME.1.h5, the original untouched, no temporary left */
    struct mb_result r;
    mb_result_init(&r);
    mb_kv_str(&r.root, "benchmark", "mb-test");
    char *final = mb_output_commit(&r, a, err, sizeof(err));
    EXPECT(final && strcmp(final, a1) == 0);
    free(final);
    FILE *f = fopen(a, "r");
    char buf[16] = "";
    EXPECT(f && fgets(buf, sizeof(buf), f) && strcmp(buf, "first") == 0);
    if (f)
        fclose(f);
    final = mb_output_commit(&r, a, err, sizeof(err));
    EXPECT(final && strcmp(final, a2) == 0);
    free(final);

    EXPECT(same_text(tmp, "stale"));
    EXPECT(count_tmp(dir) == 1); /* only the planted one */

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

    planted_symlink(dir);
    write_failure(dir);
    interrupted(dir, SIGTERM);
    interrupted(dir, SIGINT);
    csv_and_counts(dir);

    unlink(a);
    unlink(a1);
    unlink(a2);
    unlink(tmp);
    EXPECT(count_tmp(dir) == 0);
    rmdir(dir);
    return TEST_EXIT();
}
