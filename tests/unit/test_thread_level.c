/* The harness's MPI thread level (struct mb_bench.thread_level): mb_main
 * asks MPI_Init_thread for the program's level (MPI_THREAD_SINGLE when
 * unset) and records the requested and provided levels in /config; a
 * library that provides less (MB_FAULT_INJECT=thread-single plays one)
 * ends the run before any work with one line naming both and exit 2, and
 * no result file. Each run is mb_main in a child process (one MPI_Init
 * per process). */
#include "../../benchmarks/harness/harness.h"
#include "check.h"
#include "one_case_fixture.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long long iterations; /* in the child: iterate calls made */

static int plan(struct mb_run *run)
{
    return one_case_plan(run, 0);
}

static int setup(struct mb_run *run, const struct mb_case *c, void **st)
{
    (void)c;
    *st = run;
    return 0;
}

static int iterate(void *st, long long it, double *elapsed)
{
    (void)st, (void)it, (void)elapsed;
    iterations++;
    return 0;
}

static const struct mb_bench multiple = {
    .name = "test_thread_level",
    .description = "thread level",
    .thread_level = MPI_THREAD_MULTIPLE,
    .plan = plan,
    .setup = setup,
    .iterate = iterate,
};
static const struct mb_bench unset = {
    .name = "test_thread_level",
    .description = "thread level unset",
    .plan = plan,
    .setup = setup,
    .iterate = iterate,
};

/* mb_main(bench) in a child, stderr into errpath, MB_FAULT_INJECT=fault
 * when fault is set; its exit status, or 3 when it iterated though it
 * must not have (refused runs do no work). */
static int run_child(const struct mb_bench *bench, const char *out, const char *errpath, const char *fault)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(4);
        if (fault)
            setenv("MB_FAULT_INJECT", fault, 1);
        else
            unsetenv("MB_FAULT_INJECT");
        char *argv[] = {"test_thread_level", "-n", "2", "-w", "1", "--papi", "none", "-q", "-o", (char *)out, NULL};
        int rc = mb_main(bench, 10, argv);
        _exit(rc == 2 && iterations ? 3 : rc);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* /config's string attribute key of a result file into buf ("" when missing). */
static void config_str(const char *path, const char *key, char *buf, size_t len)
{
    struct mb_result r;
    char err[256];
    mb_result_init(&r);
    buf[0] = 0;
    if (mb_result_read(path, &r, err, sizeof(err)) != 0) {
        fprintf(stderr, "test_thread_level: %s\n", err);
    } else {
        const struct mb_kv *kv = mb_kv_get(&r.config, key);
        if (kv && kv->type == MB_KV_STR)
            snprintf(buf, len, "%s", kv->s);
    }
    mb_result_free(&r);
}

static int file_has(const char *path, const char *needle)
{
    char text[4096] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    return strstr(text, needle) != NULL;
}

int main(void)
{
    char dir[] = "/tmp/test_thread_level.XXXXXX", out[96], errp[96], v[64];
    if (!mkdtemp(dir))
        return 1;

    /* MPI_THREAD_MULTIPLE asked for, provided, both recorded */
    snprintf(out, sizeof(out), "%s/multiple.h5", dir);
    snprintf(errp, sizeof(errp), "%s/multiple.err", dir);
    int rc = run_child(&multiple, out, errp, NULL);
    if (rc == 2 && file_has(errp, "MPI thread level")) {
        printf("skip: this MPI library does not provide MPI_THREAD_MULTIPLE\n");
        return 77;
    }
    EXPECT(rc == 0);
    config_str(out, "mpi_thread_requested", v, sizeof(v));
    EXPECT(strcmp(v, "MPI_THREAD_MULTIPLE") == 0);
    config_str(out, "mpi_thread_provided", v, sizeof(v));
    EXPECT(strcmp(v, "MPI_THREAD_MULTIPLE") == 0);

    /* unset: MPI_THREAD_SINGLE asked for; the library may give more */
    snprintf(out, sizeof(out), "%s/unset.h5", dir);
    snprintf(errp, sizeof(errp), "%s/unset.err", dir);
    EXPECT(run_child(&unset, out, errp, NULL) == 0);
    config_str(out, "mpi_thread_requested", v, sizeof(v));
    EXPECT(strcmp(v, "MPI_THREAD_SINGLE") == 0);
    config_str(out, "mpi_thread_provided", v, sizeof(v));
    EXPECT(strncmp(v, "MPI_THREAD_", 11) == 0);

    /* provided below requested: one line naming both, exit 2, no file */
    snprintf(out, sizeof(out), "%s/low.h5", dir);
    snprintf(errp, sizeof(errp), "%s/low.err", dir);
    EXPECT(run_child(&multiple, out, errp, "thread-single") == 2);
    EXPECT(file_has(errp, "MPI thread level: the MPI library provides MPI_THREAD_SINGLE, test_thread_level "
                          "needs MPI_THREAD_MULTIPLE"));
    EXPECT(access(out, F_OK) != 0);
    /* the same fault is no refusal where SINGLE was asked for */
    snprintf(out, sizeof(out), "%s/low-unset.h5", dir);
    snprintf(errp, sizeof(errp), "%s/low-unset.err", dir);
    EXPECT(run_child(&unset, out, errp, "thread-single") == 0);
    config_str(out, "mpi_thread_provided", v, sizeof(v));
    EXPECT(strcmp(v, "MPI_THREAD_SINGLE") == 0);

    static const char *const names[] = {"multiple", "unset", "low", "low-unset"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(out, sizeof(out), "%s/%s.h5", dir, names[i]);
        unlink(out);
        snprintf(errp, sizeof(errp), "%s/%s.err", dir, names[i]);
        unlink(errp);
    }
    rmdir(dir);
    return TEST_EXIT();
}
