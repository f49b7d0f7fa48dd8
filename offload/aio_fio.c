/* fio's io_uring engine on the same striped files, block size, queue depth
 * and O_DIRECT as a storage mode: the outside reference mb-aio compares the
 * engine with. Started from an argument vector (no shell: a path may hold
 * any character); its terse output is read from a pipe. */
#include "aio.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int mb_aio_fio_argv(const struct mb_aio_fio_job *j, struct mb_aio_fio_argv *v)
{
    if (j->nfiles < 1 || j->nfiles > MB_STORAGE_MAX_FILES)
        return -1;
    size_t l = (size_t)snprintf(v->filename, sizeof(v->filename), "--filename=");
    for (int f = 0; f < j->nfiles; f++) {
        l += (size_t)snprintf(v->filename + l, sizeof(v->filename) - l, "%s%.1023s%s", f ? ":" : "", j->paths[f],
                              j->suffix ? j->suffix : "");
        if (l >= sizeof(v->filename))
            return -1;
    }
    const char *rw = j->write ? (j->sequential ? "write" : "randwrite") : (j->sequential ? "read" : "randread");
    snprintf(v->a[0], sizeof(v->a[0]), "--direct=%d", j->direct ? 1 : 0);
    snprintf(v->a[1], sizeof(v->a[1]), "--rw=%s", rw);
    snprintf(v->a[2], sizeof(v->a[2]), "--bs=%zu", j->bs);
    snprintf(v->a[3], sizeof(v->a[3]), "--iodepth=%lld", j->qd);
    snprintf(v->a[4], sizeof(v->a[4]), "--iodepth_batch_submit=%lld", j->batch);
    /* fio splits --size over the files */
    snprintf(v->a[5], sizeof(v->a[5]), "--size=%llu", (unsigned long long)j->size);
    snprintf(v->a[6], sizeof(v->a[6]), "--io_size=%llu", (unsigned long long)j->io_size);
    char *argv[] = {"fio", "--name=mb", v->filename, "--ioengine=io_uring", v->a[0], v->a[1], v->a[2], v->a[3],
                    v->a[4], v->a[5], v->a[6], "--fixedbufs", "--registerfiles", "--thread", "--randrepeat=0",
                    "--norandommap", "--output-format=terse", "--terse-version=3", NULL};
    memcpy(v->argv, argv, sizeof(argv));
    return 0;
}

int mb_aio_fio_terse(char *line, int write, double *iops, int *fio_err)
{
    if (strncmp(line, "3;", 2) != 0)
        return 0;
    char *f[200], *rest = line, *tok;
    int nf = 0;
    while (nf < 200 && (tok = strsep(&rest, ";")) != NULL)
        f[nf++] = tok;
    if (nf < 50)
        return 0;
    *fio_err = atoi(f[4]);
    *iops = atof(f[write ? 48 : 7]); /* terse v3: read iops is field 8, write iops field 49 */
    return 1;
}

int mb_aio_fio_run(const struct mb_aio_fio_job *j, double *iops, char *err, size_t errlen)
{
    static struct mb_aio_fio_argv v; /* 70 KB: not on the stack */
    if (mb_aio_fio_argv(j, &v) != 0) {
        snprintf(err, errlen, "fio: %d files do not fit its --filename", j->nfiles);
        return -1;
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "fio: pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    pid_t pid;
    int e = posix_spawnp(&pid, "fio", &fa, NULL, v.argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (e != 0) {
        close(pfd[0]);
        snprintf(err, errlen, "fio: cannot start it: %s", strerror(e));
        return -1;
    }
    FILE *p = fdopen(pfd[0], "r");
    char line[16384], last[512] = "";
    int got = 0, fio_err = 0;
    *iops = 0;
    while (p && fgets(line, sizeof(line), p)) {
        if (mb_aio_fio_terse(line, j->write, iops, &fio_err))
            got = 1;
        else if (strncmp(line, "3;", 2) != 0)
            snprintf(last, sizeof(last), "%.500s", line);
    }
    if (p)
        fclose(p);
    else
        close(pfd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!got || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || fio_err) {
        last[strcspn(last, "\n")] = 0;
        snprintf(err, errlen, "fio failed (%s %d, fio error %d): %s", WIFEXITED(st) ? "exit" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), fio_err, got ? "" : last);
        return -1;
    }
    return 0;
}
