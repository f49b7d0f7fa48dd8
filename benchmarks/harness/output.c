/* Result-file naming and commit: a run writes NAME.tmp and links it to the
 * final name, which never replaces an existing file (link() fails with
 * EEXIST where rename() would overwrite). A signal mid-write removes the
 * temporary, so an interrupted run leaves nothing under either name. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* "dir/x.h5", k -> "dir/x.k.h5"; names without .h5 get ".k" appended. */
static char *numbered(const char *path, int k)
{
    size_t len = strlen(path);
    char *out = malloc(len + 24);
    const char *ext = len > 3 && strcmp(path + len - 3, ".h5") == 0 ? path + len - 3 : path + len;
    snprintf(out, len + 24, "%.*s.%d%s", (int)(ext - path), path, k, ext);
    return out;
}

char *mb_output_unique(const char *path)
{
    if (!exists(path))
        return strdup(path);
    for (int k = 1;; k++) {
        char *p = numbered(path, k);
        if (!exists(p))
            return p;
        free(p);
    }
}

/* The temporary being written, for the signal handler. */
static char tmp_for_signal[4096];

static void on_signal(int sig)
{
    if (tmp_for_signal[0])
        unlink(tmp_for_signal); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void mb_output_guard(const char *tmp)
{
    snprintf(tmp_for_signal, sizeof(tmp_for_signal), "%s", tmp ? tmp : "");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

int mb_output_probe(const char *path, int must_not_exist, char *err, size_t errlen)
{
    if (must_not_exist && exists(path)) {
        snprintf(err, errlen, "-o/--out: %s exists; movebench never overwrites a result (choose another name)", path);
        return -1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "-o/--out: %s exists (left by an interrupted run?); remove it", tmp);
        else
            snprintf(err, errlen, "-o/--out: cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(tmp);
    return 0;
}

char *mb_output_commit(const struct mb_result *r, const char *path, char *err, size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    mb_output_guard(tmp);
    if (mb_result_write(r, tmp, err, errlen) != 0) {
        unlink(tmp);
        mb_output_guard(NULL);
        return NULL;
    }
    char *final = strdup(path);
    for (int k = 1;; k++) {
        if (link(tmp, final) == 0)
            break;
        if (errno == EEXIST) {
            free(final);
            final = numbered(path, k);
            continue;
        }
        /* File systems without hard links: rename after an existence check. */
        if ((errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP) && !exists(final) &&
            rename(tmp, final) == 0)
            break;
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
        unlink(tmp);
        free(final);
        mb_output_guard(NULL);
        return NULL;
    }
    unlink(tmp);
    mb_output_guard(NULL);
    return final;
}

const char *mb_fault(void)
{
    const char *f = getenv("MB_FAULT_INJECT");
    return f && *f ? f : NULL;
}
