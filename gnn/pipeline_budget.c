/* The memory budget: a child memory cgroup (v2, else v1) that the process
 * joins, so anonymous memory and the page cache it faults in are both
 * charged against the limit; else the rest of memory pinned with mlock. */
#include "gnn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Paths are built with snprintf into fixed buffers; a truncated one fails
 * the open/mkdir that follows, with the message saying which. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static int write_file(const char *path, const char *val)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, val, strlen(val));
    int e = n < 0 ? -errno : 0;
    close(fd);
    return e;
}

static int read_u64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long v = 0;
    int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    *out = v;
    return ok ? 0 : -1;
}

/* The cgroup path of this process for controller `ctl` ("" = v2 line). */
static int own_cgroup(const char *ctl, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (fgets(line, sizeof(line), f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = 0;
        const char *ctls = a + 1, *path = b + 1;
        int match = 0;
        if (!*ctl)
            match = !*ctls;
        else
            for (char *save = NULL, *t = strtok_r((char *)ctls, ",", &save); t; t = strtok_r(NULL, ",", &save))
                match |= !strcmp(t, ctl);
        if (match) {
            snprintf(out, len, "%s", path);
            out[strcspn(out, "\n")] = 0;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Mount point of a cgroup hierarchy: v2 ("cgroup2") or v1 with `ctl`. */
static int mount_point(int v2, const char *ctl, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mounts", "r");
    if (!f)
        return -1;
    char dev[256], dir[512], type[64], opts[512];
    int found = -1;
    while (fscanf(f, "%255s %511s %63s %511s %*d %*d", dev, dir, type, opts) == 4) {
        if (v2 && !strcmp(type, "cgroup2")) {
            snprintf(out, len, "%s", dir);
            found = 0;
            break;
        }
        if (!v2 && !strcmp(type, "cgroup")) {
            for (char *save = NULL, *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (!strcmp(t, ctl)) {
                    snprintf(out, len, "%s", dir);
                    found = 0;
                }
            if (!found)
                break;
        }
    }
    fclose(f);
    return found;
}

static int move_self(const char *folder)
{
    char p[600], pid[32];
    snprintf(p, sizeof(p), "%s/cgroup.procs", folder);
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    return write_file(p, pid);
}

/* Empty mb-gnn-<pid> folders of processes that are gone (killed before
 * they could remove theirs). */
static void remove_stale(const char *home)
{
    DIR *d = opendir(home);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid;
        char path[1400];
        if (sscanf(e->d_name, "mb-gnn-%d", &pid) != 1 || pid == (int)getpid())
            continue;
        snprintf(path, sizeof(path), "/proc/%d", pid);
        if (access(path, F_OK) == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", home, e->d_name);
        rmdir(path); /* fails, harmlessly, while anything is inside */
    }
    if (d)
        closedir(d);
}

static int try_cgroup(struct gnn_budget *b, int v2, char *err, size_t errlen)
{
    char mnt[512], own[512], home[1100];
    if (mount_point(v2, "memory", mnt, sizeof(mnt)) || own_cgroup(v2 ? "" : "memory", own, sizeof(own))) {
        snprintf(err, errlen, "no cgroup %s memory hierarchy", v2 ? "v2" : "v1");
        return -1;
    }
    snprintf(home, sizeof(home), "%s%s", mnt, strcmp(own, "/") ? own : "");
    if (v2) { /* the memory controller must be available to children */
        char p[1200], buf[512] = "";
        snprintf(p, sizeof(p), "%s/cgroup.controllers", home);
        FILE *f = fopen(p, "r");
        if (!f || !fgets(buf, sizeof(buf), f) || !strstr(buf, "memory")) {
            if (f)
                fclose(f);
            snprintf(err, errlen, "cgroup v2: memory controller not enabled in %s", home);
            return -1;
        }
        fclose(f);
        snprintf(p, sizeof(p), "%s/cgroup.subtree_control", home);
        write_file(p, "+memory"); /* may be set already; failure shows below */
    }
    remove_stale(home);
    char child[1200];
    snprintf(child, sizeof(child), "%s/mb-gnn-%d", home, (int)getpid());
    if (mkdir(child, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cgroup %s: mkdir %s: %s", v2 ? "v2" : "v1", child, strerror(errno));
        return -1;
    }
    char p[1300], val[32];
    snprintf(val, sizeof(val), "%zu", b->bytes);
    snprintf(p, sizeof(p), "%s/%s", child, v2 ? "memory.max" : "memory.limit_in_bytes");
    int e = write_file(p, val);
    if (!e && v2) {
        snprintf(p, sizeof(p), "%s/memory.swap.max", child);
        write_file(p, "0"); /* absent without swap accounting: fine */
    } else if (!e) {
        snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", child);
        write_file(p, val); /* absent without swap accounting: fine */
    }
    if (!e)
        e = move_self(child);
    if (e) {
        rmdir(child);
        snprintf(err, errlen, "cgroup %s: %s: %s", v2 ? "v2" : "v1", p, strerror(-e));
        return -1;
    }
    snprintf(b->cgroup, sizeof(b->cgroup), "%s", child);
    snprintf(b->home, sizeof(b->home), "%s", home);
    snprintf(b->method, sizeof(b->method), "cgroup-%s", v2 ? "v2" : "v1");
    snprintf(b->detail, sizeof(b->detail), "%s=%zu in %s (anonymous memory and page cache charged)",
             v2 ? "memory.max" : "memory.limit_in_bytes", b->bytes, child);
    b->v2 = v2;
    b->owner = 1;
    return 0;
}

/* The value of the first line of `path` that `fmt` (one %llu) matches, as
 * in /proc/meminfo or a cgroup's memory.stat; 0 when none does. */
static unsigned long long keyed_value(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long long v = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, fmt, &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static int try_mlock(struct gnn_budget *b, char *err, size_t errlen)
{
    const char *over = getenv("MB_GNN_MEMAVAILABLE");
    size_t avail = 0;
    if (over && *over) {
        avail = (size_t)strtoull(over, NULL, 10);
    } else
        avail = (size_t)keyed_value("/proc/meminfo", "MemAvailable: %llu kB") * 1024;
    if (avail <= b->bytes) {
        snprintf(b->method, sizeof(b->method), "mlock");
        snprintf(b->detail, sizeof(b->detail), "available memory %zu is already within the budget: nothing pinned",
                 avail);
        return 0;
    }
    size_t pin = avail - b->bytes;
    void *p = mmap(NULL, pin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED || mlock(p, pin) != 0) {
        snprintf(err, errlen, "mlock of %zu bytes: %s", pin, strerror(errno));
        if (p != MAP_FAILED)
            munmap(p, pin);
        return -1;
    }
    b->pinned = p;
    b->pinned_bytes = pin;
    snprintf(b->method, sizeof(b->method), "mlock");
    snprintf(b->detail, sizeof(b->detail),
             "pinned %zu of %zu available bytes (Ratel's method); the budget is what the kernel has left", pin,
             avail);
    return 0;
}

int gnn_budget_enforce(struct gnn_budget *b, size_t bytes, enum gnn_budget_how how, char *err,
                       size_t errlen)
{
    memset(b, 0, sizeof(*b));
    b->bytes = bytes;
    char e2[300] = "", e1[300] = "";
    if (how == GNN_BUDGET_NONE) {
        snprintf(b->method, sizeof(b->method), "none");
        snprintf(b->detail, sizeof(b->detail), "not enforced (--budget-method none)");
        return 0;
    }
    if (how == GNN_BUDGET_AUTO || how == GNN_BUDGET_CGROUP) {
        if (try_cgroup(b, 1, e2, sizeof(e2)) == 0 || try_cgroup(b, 0, e1, sizeof(e1)) == 0)
            return 0;
        if (how == GNN_BUDGET_CGROUP) {
            snprintf(err, errlen, "%s; %s", e2, e1);
            return -1;
        }
    }
    if (try_mlock(b, err, errlen) == 0) {
        if (*e2 || *e1) {
            size_t n = strlen(b->detail);
            snprintf(b->detail + n, sizeof(b->detail) - n, " (cgroups refused: %s; %s)", e2, e1);
        }
        return 0;
    }
    return -1;
}

int gnn_budget_join(struct gnn_budget *b, char *err, size_t errlen)
{
    if (!b->cgroup[0])
        return 0; /* mlock: the node's first process pinned for everyone */
    int e = move_self(b->cgroup);
    if (e) {
        snprintf(err, errlen, "joining %s: %s", b->cgroup, strerror(-e));
        return -1;
    }
    return 0;
}

static uint64_t cg_value(const struct gnn_budget *b, const char *v1name, const char *v2name)
{
    if (!b->cgroup[0])
        return 0;
    char p[700];
    uint64_t v = 0;
    snprintf(p, sizeof(p), "%s/%s", b->cgroup, b->v2 ? v2name : v1name);
    return read_u64(p, &v) == 0 ? v : 0;
}

uint64_t gnn_budget_usage(const struct gnn_budget *b)
{
    return cg_value(b, "memory.usage_in_bytes", "memory.current");
}

uint64_t gnn_budget_anon(const struct gnn_budget *b)
{
    if (!b->cgroup[0])
        return (uint64_t)keyed_value("/proc/self/status", "RssAnon: %llu kB") * 1024;
    /* what the cgroup was charged (not what the process held before it joined) */
    char p[700];
    snprintf(p, sizeof(p), "%s/memory.stat", b->cgroup);
    return (uint64_t)keyed_value(p, b->v2 ? "anon %llu" : "rss %llu");
}

uint64_t gnn_budget_peak(const struct gnn_budget *b)
{
    return cg_value(b, "memory.max_usage_in_bytes", "memory.peak");
}

uint64_t gnn_budget_limit_hits(const struct gnn_budget *b)
{
    if (!b->cgroup[0])
        return 0;
    if (!b->v2)
        return cg_value(b, "memory.failcnt", "");
    char p[700];
    snprintf(p, sizeof(p), "%s/memory.events", b->cgroup);
    return (uint64_t)keyed_value(p, "max %llu");
}

void gnn_budget_release(struct gnn_budget *b)
{
    if (b->cgroup[0]) {
        move_self(b->home);
        if (b->owner) /* fails while other processes are inside: they leave first */
            for (int i = 0; i < 50 && rmdir(b->cgroup) != 0 && errno == EBUSY; i++)
                usleep(20000);
    }
    if (b->pinned)
        munmap(b->pinned, b->pinned_bytes);
    b->cgroup[0] = 0;
    b->pinned = NULL;
}

int gnn_drop_file_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc ? -1 : 0;
}
