/* The memory budget: a child memory cgroup (v2, else v1) that the process
 * joins, so anonymous memory and the page cache it faults in are both
 * charged against the limit; else the rest of memory pinned with mlock. */
#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Paths are built with snprintf into fixed buffers; a truncated one fails
 * the open/mkdir that follows, with the message saying which. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* (async-signal-safe: open, write, close) 0, or -errno. */
static int write_file(const char *path, const char *val)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(val);
    ssize_t n = write(fd, val, len);
    int e = n < 0 ? -errno : (size_t)n < len ? -EIO : 0;
    if (close(fd) != 0 && !e)
        e = -errno;
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

static int try_cgroup(struct mb_budget *b, int v2, char *err, size_t errlen)
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
        f = fopen(p, "r");
        buf[0] = 0;
        if (!f || !fgets(buf, sizeof(buf), f))
            buf[0] = 0;
        if (f)
            fclose(f);
        if (!strstr(buf, "memory")) { /* enabled by this run: restored at release */
            int e = write_file(p, "+memory");
            if (e) {
                snprintf(err, errlen, "cgroup v2: %s: +memory: %s", p, strerror(-e));
                return -1;
            }
            b->subtree_added = 1;
        }
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
    /* v2: memory.high is the budget (reclaim, then throttling: never the
     * OOM killer), memory.max a quarter above it (at least 64 MiB) as the
     * backstop; v1: the limit with its OOM killer disabled (a task at the
     * limit waits), so that the watcher can report a limit hit instead of
     * the kernel killing the run */
    char hard[32];
    size_t slack = b->bytes / 4 > (64u << 20) ? b->bytes / 4 : (64u << 20);
    snprintf(hard, sizeof(hard), "%zu", b->bytes + slack);
    snprintf(p, sizeof(p), "%s/%s", child, v2 ? "memory.max" : "memory.limit_in_bytes");
    int e = write_file(p, v2 ? hard : val);
    if (!e && v2) {
        snprintf(p, sizeof(p), "%s/memory.high", child);
        e = write_file(p, val);
        if (!e) {
            snprintf(p, sizeof(p), "%s/memory.swap.max", child);
            e = write_file(p, "0");
            if (e == -ENOENT) /* absent without swap accounting: fine */
                e = 0;
        }
    } else if (!e) {
        snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", child);
        e = write_file(p, val);
        if (e == -ENOENT) /* absent without swap accounting: fine */
            e = 0;
        if (!e) {
            snprintf(p, sizeof(p), "%s/memory.oom_control", child);
            e = write_file(p, "1");
        }
    }
    if (!e) {
        snprintf(p, sizeof(p), "%s/%s", child, v2 ? "memory.high" : "memory.limit_in_bytes");
        if (read_u64(p, &b->limit_read) != 0)
            e = -EIO;
    }
    if (!e) {
        snprintf(p, sizeof(p), "%s/cgroup.procs", child);
        e = move_self(child);
    }
    if (e) {
        rmdir(child);
        snprintf(err, errlen, "cgroup %s: %s: %s", v2 ? "v2" : "v1", p, strerror(-e));
        if (b->subtree_added) {
            snprintf(p, sizeof(p), "%s/cgroup.subtree_control", home);
            write_file(p, "-memory");
            b->subtree_added = 0;
        }
        return -1;
    }
    snprintf(b->cgroup, sizeof(b->cgroup), "%s", child);
    snprintf(b->home, sizeof(b->home), "%s", home);
    snprintf(b->method, sizeof(b->method), "cgroup-%s", v2 ? "v2" : "v1");
    if (v2)
        snprintf(b->detail, sizeof(b->detail),
                 "memory.high=%zu (memory.max=%s as the backstop) in %s (anonymous memory and page cache charged)%s",
                 b->bytes, hard, child, b->subtree_added ? "; +memory enabled in the parent's subtree_control" : "");
    else
        snprintf(b->detail, sizeof(b->detail),
                 "memory.limit_in_bytes=%zu in %s, its OOM killer disabled (anonymous memory and page cache charged)",
                 b->bytes, child);
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

static int try_mlock(struct mb_budget *b, char *err, size_t errlen)
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

int mb_budget_enforce(struct mb_budget *b, size_t bytes, enum mb_budget_how how, char *err,
                      size_t errlen)
{
    memset(b, 0, sizeof(*b));
    b->bytes = bytes;
    char e2[300] = "", e1[300] = "";
    if (how == MB_BUDGET_NONE) {
        snprintf(b->method, sizeof(b->method), "none");
        snprintf(b->detail, sizeof(b->detail), "not enforced (--budget-method none)");
        return 0;
    }
    if (how == MB_BUDGET_AUTO || how == MB_BUDGET_CGROUP) {
        if (try_cgroup(b, 1, e2, sizeof(e2)) == 0 || try_cgroup(b, 0, e1, sizeof(e1)) == 0)
            return 0;
        if (how == MB_BUDGET_CGROUP) {
            snprintf(err, errlen, "%s; %s", e2, e1);
            return -1;
        }
    }
    if (how == MB_BUDGET_AUTO && geteuid() == 0) {
        /* pinning is node-wide: as root on a node others share it would take
         * their memory; only an explicit --budget-method mlock does that */
        snprintf(err, errlen, "%s; %s; auto does not fall back to mlock as root (it pins memory node-wide): give "
                 "--budget-method mlock to pin, or none", e2, e1);
        return -1;
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

int mb_budget_join(struct mb_budget *b, char *err, size_t errlen)
{
    if (!b->cgroup[0])
        return 0; /* mlock: the node's first process pinned for everyone (its pin, not ours) */
    int e = move_self(b->cgroup);
    if (e) {
        snprintf(err, errlen, "joining %s: %s", b->cgroup, strerror(-e));
        return -1;
    }
    return 0;
}

int mb_budget_suspend(struct mb_budget *b, char *err, size_t errlen)
{
    if (b->cgroup[0]) {
        int e = move_self(b->home);
        if (e) {
            snprintf(err, errlen, "leaving %s for %s: %s", b->cgroup, b->home, strerror(-e));
            return -1;
        }
    }
    if (b->pinned) { /* this process's own pin (the node's first rank) */
        munmap(b->pinned, b->pinned_bytes);
        b->pinned = NULL;
        b->repin = 1;
    }
    return 0;
}

int mb_budget_resume(struct mb_budget *b, char *err, size_t errlen)
{
    if (b->cgroup[0] && mb_budget_join(b, err, errlen) != 0)
        return -1;
    if (b->repin) {
        void *p = mmap(NULL, b->pinned_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p == MAP_FAILED || mlock(p, b->pinned_bytes) != 0) {
            snprintf(err, errlen, "pinning %zu bytes again: %s", b->pinned_bytes, strerror(errno));
            if (p != MAP_FAILED)
                munmap(p, b->pinned_bytes);
            return -1;
        }
        b->pinned = p;
        b->repin = 0;
    }
    return 0;
}

static uint64_t cg_value(const struct mb_budget *b, const char *v1name, const char *v2name)
{
    if (!b->cgroup[0])
        return 0;
    char p[700];
    uint64_t v = 0;
    snprintf(p, sizeof(p), "%s/%s", b->cgroup, b->v2 ? v2name : v1name);
    return read_u64(p, &v) == 0 ? v : 0;
}

uint64_t mb_budget_usage(const struct mb_budget *b)
{
    return cg_value(b, "memory.usage_in_bytes", "memory.current");
}

uint64_t mb_budget_anon(const struct mb_budget *b)
{
    if (!b->cgroup[0])
        return (uint64_t)keyed_value("/proc/self/status", "RssAnon: %llu kB") * 1024;
    /* what the cgroup was charged (not what the process held before it joined) */
    char p[700];
    snprintf(p, sizeof(p), "%s/memory.stat", b->cgroup);
    return (uint64_t)keyed_value(p, b->v2 ? "anon %llu" : "rss %llu");
}

uint64_t mb_budget_peak(const struct mb_budget *b)
{
    return cg_value(b, "memory.max_usage_in_bytes", "memory.peak");
}

uint64_t mb_budget_limit_hits(const struct mb_budget *b)
{
    if (!b->cgroup[0])
        return 0;
    if (!b->v2)
        return cg_value(b, "memory.failcnt", "");
    char p[700];
    snprintf(p, sizeof(p), "%s/memory.events", b->cgroup);
    return (uint64_t)keyed_value(p, "max %llu");
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The watcher runs inside the cgroup it watches: at the limit (v1, its
 * OOM killer disabled) any page it faulted in would make it wait too. So
 * it allocates nothing in its loop: its files are opened before, read with
 * pread into its stack, and v1's OOM is an eventfd notification. */
struct watch_fds {
    int efd;       /* v1: eventfd signalled on OOM (cgroup.event_control) */
    int limit;     /* v1 memory.limit_in_bytes / v2 memory.high */
    int stat;      /* v2 memory.stat (anon) */
    int lift[2];   /* what to write "-1"/"max" to, in order */
};

static int pread_u64(int fd, uint64_t *v)
{
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    *v = strtoull(buf, NULL, 10);
    return 0;
}

/* v2: "anon N" of memory.stat, read into the stack */
static uint64_t pread_anon(int fd)
{
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *a = strstr(buf, "anon ");
    return a && (a == buf || a[-1] == '\n') ? strtoull(a + 5, NULL, 10) : 0;
}

static int over_limit(const struct mb_budget *b, const struct watch_fds *w)
{
    uint64_t lim = 0;
    if (pread_u64(w->limit, &lim) == 0 && lim != b->limit_read)
        return 1; /* lifted by another rank's watcher */
    if (b->v2)
        return w->stat >= 0 && pread_anon(w->stat) >= b->bytes;
    struct pollfd pf = {w->efd, POLLIN, 0};
    uint64_t cnt;
    return poll(&pf, 1, 0) == 1 && read(w->efd, &cnt, sizeof(cnt)) == (ssize_t)sizeof(cnt);
}

static void lift_limit(const struct mb_budget *b, const struct watch_fds *w)
{
    const char *v = b->v2 ? "max" : "-1"; /* v1: memsw first, the limit may not exceed it */
    for (int i = 0; i < 2; i++)
        if (w->lift[i] >= 0 && pwrite(w->lift[i], v, strlen(v), 0) < 0) {
            /* (nothing to do: the run is told either way) */
        }
}

static struct watch_fds wfds = {-1, -1, -1, {-1, -1}};

static void *watch_main(void *arg)
{
    struct mb_budget *b = arg;
    const struct watch_fds *w = &wfds;
    while (!atomic_load(&b->watch_stop)) {
        if (!atomic_load(&b->exceeded) && over_limit(b, w)) {
            lift_limit(b, w);
            b->exceeded_peak = b->limit_read > b->bytes ? b->limit_read : b->bytes;
            atomic_store(&b->exceeded, 1);
        }
        if (b->v2 || w->efd < 0)
            nap_ms(10);
        else {
            struct pollfd pf = {w->efd, POLLIN, 0};
            poll(&pf, 1, 10);
        }
    }
    return NULL;
}

static void watch_close(void)
{
    int *fd[] = {&wfds.efd, &wfds.limit, &wfds.stat, &wfds.lift[0], &wfds.lift[1]};
    for (size_t i = 0; i < sizeof(fd) / sizeof(fd[0]); i++)
        if (*fd[i] >= 0) {
            close(*fd[i]);
            *fd[i] = -1;
        }
}

/* Opens the watcher's files; 0, or -1. */
static int watch_open(const struct mb_budget *b)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%s", b->cgroup, b->v2 ? "memory.high" : "memory.limit_in_bytes");
    wfds.limit = open(p, O_RDONLY | O_CLOEXEC);
    uint64_t v;
    if (wfds.limit < 0 || pread_u64(wfds.limit, &v) != 0) /* (the first read allocates its buffer) */
        return -1;
    if (b->v2) {
        snprintf(p, sizeof(p), "%s/memory.stat", b->cgroup);
        wfds.stat = open(p, O_RDONLY | O_CLOEXEC);
        if (wfds.stat < 0)
            return -1;
        pread_anon(wfds.stat);
        snprintf(p, sizeof(p), "%s/memory.max", b->cgroup);
        wfds.lift[0] = open(p, O_WRONLY | O_CLOEXEC);
        snprintf(p, sizeof(p), "%s/memory.high", b->cgroup);
        wfds.lift[1] = open(p, O_WRONLY | O_CLOEXEC);
    } else {
        snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", b->cgroup);
        wfds.lift[0] = open(p, O_WRONLY | O_CLOEXEC); /* (absent without swap accounting) */
        snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", b->cgroup);
        wfds.lift[1] = open(p, O_WRONLY | O_CLOEXEC);
        snprintf(p, sizeof(p), "%s/memory.oom_control", b->cgroup);
        int ofd = open(p, O_RDONLY | O_CLOEXEC);
        wfds.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        char reg[64];
        snprintf(reg, sizeof(reg), "%d %d", wfds.efd, ofd);
        snprintf(p, sizeof(p), "%s/cgroup.event_control", b->cgroup);
        int e = ofd >= 0 && wfds.efd >= 0 ? write_file(p, reg) : -1;
        if (ofd >= 0)
            close(ofd);
        if (e)
            return -1;
    }
    return wfds.lift[1] >= 0 ? 0 : -1;
}

int mb_budget_watch(struct mb_budget *b)
{
    atomic_store(&b->exceeded, 0);
    atomic_store(&b->watch_stop, 0);
    b->watching = 0;
    if (!b->cgroup[0])
        return -1;
    if (watch_open(b) != 0) {
        watch_close();
        return -1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, watch_main, b) != 0) {
        watch_close();
        return -1;
    }
    b->watcher = (unsigned long)t;
    b->watching = 1;
    return 0;
}

int mb_budget_exceeded(const struct mb_budget *b, uint64_t *peak)
{
    int e = atomic_load(&b->exceeded);
    if (e && peak)
        *peak = b->exceeded_peak;
    return e;
}

static void watch_stop(struct mb_budget *b)
{
    if (!b->watching)
        return;
    atomic_store(&b->watch_stop, 1);
    pthread_join((pthread_t)b->watcher, NULL);
    watch_close();
    b->watching = 0;
}

/* rmdir of the child (while other ranks leave) and subtree_control back:
 * async-signal-safe. 0, or -errno of the step that failed (*what). */
static int remove_child(struct mb_budget *b, const char **what)
{
    int e = 0;
    *what = b->cgroup;
    for (int i = 0; i < 50; i++) {
        e = rmdir(b->cgroup) == 0 ? 0 : -errno;
        if (e != -EBUSY)
            break;
        nap_ms(20);
    }
    if (e == -ENOENT)
        e = 0;
    if (!e && b->subtree_added) {
        static char p[600];
        size_t n = strlen(b->home);
        if (n + 24 < sizeof(p)) {
            memcpy(p, b->home, n);
            memcpy(p + n, "/cgroup.subtree_control", 24);
            *what = p;
            e = write_file(p, "-memory");
        }
        if (!e)
            b->subtree_added = 0;
    }
    return e;
}

void mb_budget_release(struct mb_budget *b)
{
    watch_stop(b);
    if (b->cgroup[0]) {
        char p[600];
        snprintf(p, sizeof(p), "%s/cgroup.procs", b->home);
        int e = move_self(b->home);
        if (e)
            fprintf(stderr, "gnn budget: leaving %s: %s: %s\n", b->cgroup, p, strerror(-e));
        const char *what;
        if (b->owner && (e = remove_child(b, &what)) != 0)
            fprintf(stderr, "gnn budget: removing the budget's cgroup: %s: %s\n", what, strerror(-e));
    }
    if (b->pinned)
        munmap(b->pinned, b->pinned_bytes);
    b->cgroup[0] = 0;
    b->pinned = NULL;
}

void mb_budget_release_signal(struct mb_budget *b)
{
    if (!b->cgroup[0])
        return;
    move_self(b->home);
    const char *what;
    if (b->owner)
        remove_child(b, &what);
}

int mb_drop_file_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc ? -1 : 0;
}
