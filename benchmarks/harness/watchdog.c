/* The --timeout watchdog (harness.h). MPI cannot be used to find out who
 * stopped: the main threads may be blocked inside it, and a second thread
 * in MPI would need MPI_THREAD_MULTIPLE, which changes what is measured.
 * So each rank's own thread sends its progress to rank 0 over UDP, once a
 * second; rank 0 judges from what it last heard. Only progress is sent
 * (a few bytes), only to rank 0's own addresses. */
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WD_MAGIC 0x6d627764u /* "mbwd" */
#define WD_MAXADDR 8
#define WD_HOST 64

#define WD_LABEL 16

struct wd_beat {
    uint32_t magic, rank;
    int64_t case_index, iter, waiting;
    uint64_t ticks;
    int64_t detail;        /* the program's detail (mb_watchdog_detail), -1 none */
    char label[WD_LABEL];
};

/* Rank 0's view of one rank. */
struct wd_peer {
    double heard, changed; /* when last heard; when its progress last moved */
    int64_t case_index, iter, waiting;
    uint64_t ticks;
    int64_t detail;
    char label[WD_LABEL];
    char host[WD_HOST];
};

/* What rank 0 tells everyone at start. */
struct wd_where {
    uint16_t port;
    uint16_t naddr;
    uint32_t addr[WD_MAXADDR]; /* network order; non-loopback IPv4 */
    char host[WD_HOST];
};

static struct {
    atomic_int on;
    _Atomic int64_t case_index, iter, waiting;
    atomic_uint_fast64_t ticks;
    _Atomic int64_t detail;
    _Atomic(const char *) label;
    atomic_int stop;
    double timeout, period;
    struct mb_run *run;
    int sock;
    struct sockaddr_in dest[WD_MAXADDR];
    int ndest;
    struct wd_peer *peers; /* rank 0: [nranks] */
    double frozen_s;       /* the longest this thread itself did not run (SIGSTOP, a starved host) */
    pthread_t thread;
} wd = {.sock = -1};

void mb_watchdog_progress(size_t case_index, long long iter, int waiting)
{
    if (!atomic_load_explicit(&wd.on, memory_order_relaxed))
        return;
    atomic_store_explicit(&wd.case_index, (int64_t)case_index, memory_order_relaxed);
    atomic_store_explicit(&wd.iter, iter, memory_order_relaxed);
    atomic_store_explicit(&wd.waiting, waiting, memory_order_relaxed);
    atomic_fetch_add_explicit(&wd.ticks, 1, memory_order_relaxed);
}

void mb_watchdog_tick(void)
{
    if (atomic_load_explicit(&wd.on, memory_order_relaxed))
        atomic_fetch_add_explicit(&wd.ticks, 1, memory_order_relaxed);
}

void mb_watchdog_detail(const char *label, long long value)
{
    if (!atomic_load_explicit(&wd.on, memory_order_relaxed))
        return;
    atomic_store_explicit(&wd.label, label, memory_order_relaxed);
    atomic_store_explicit(&wd.detail, value, memory_order_relaxed);
}

/* " (LABEL V)" of a peer's detail, or "". */
static void detail_text(char *buf, size_t len, const char *who, const struct wd_peer *p)
{
    if (p->detail >= 0 && p->label[0])
        snprintf(buf, len, "; %s was last at %s %lld", who, p->label, (long long)p->detail);
    else
        buf[0] = 0;
}

/* Progress order: case, then iteration, then working < waiting. */
static int before(const struct wd_peer *a, const struct wd_peer *b)
{
    if (a->case_index != b->case_index)
        return a->case_index < b->case_index;
    if (a->iter != b->iter)
        return a->iter < b->iter;
    return a->waiting < b->waiting;
}

static const char *case_name(int64_t k)
{
    return k >= 0 && (size_t)k < wd.run->ncases ? wd.run->cases[k].name : "(before the first case)";
}

static void where_text(char *buf, size_t len, int64_t k, int64_t it)
{
    if (it < 0)
        snprintf(buf, len, "case %s, its setup", case_name(k));
    else
        snprintf(buf, len, "case %s, iteration %lld", case_name(k), (long long)it);
}

static const char *doing(const struct wd_peer *p)
{
    return p->waiting ? "inside it (its barrier or the measured call)" : "not yet in it (on its own part before it)";
}

/* Rank 0: who is to blame once rank 0 itself has stalled. */
static void judge(double now)
{
    int n = wd.run->nranks, silent = -1, behind = -1;
    double quiet = 0;
    for (int r = 1; r < n; r++) {
        double q = now - wd.peers[r].heard;
        if (q >= wd.timeout && q > quiet) {
            quiet = q;
            silent = r;
        }
    }
    for (int r = 0; r < n && silent < 0; r++)
        if (behind < 0 || before(&wd.peers[r], &wd.peers[behind]))
            behind = r;
    const struct wd_peer *me = &wd.peers[0];
    char at[400], line[1024];
    where_text(at, sizeof at, me->case_index, me->iter);
    if (silent >= 0) {
        snprintf(line, sizeof line,
                 "--timeout %g s: no progress for %.0f s in %s; rank %d (%s) is silent (not heard from for "
                 "%.0f s: its process or its link is gone)",
                 wd.timeout, now - me->changed, at, silent, wd.peers[silent].host, quiet);
    } else {
        const struct wd_peer *b = &wd.peers[behind];
        int all_same = 1;
        for (int r = 0; r < n; r++)
            all_same &= !before(b, &wd.peers[r]);
        char bat[400];
        where_text(bat, sizeof bat, b->case_index, b->iter);
        if (all_same)
            snprintf(line, sizeof line,
                     "--timeout %g s: no progress for %.0f s in %s; every rank is alive and stuck inside it "
                     "(a hang within the iteration, no rank behind)",
                     wd.timeout, now - me->changed, at);
        else
            snprintf(line, sizeof line,
                     "--timeout %g s: no progress for %.0f s in %s; rank %d (%s) is silent: it is still at %s, %s",
                     wd.timeout, now - me->changed, at, behind, b->host, bat, doing(b));
    }
    /* what the silent rank and rank 0 last said they were at (a layer) */
    int who = silent >= 0 ? silent : behind;
    char d[128], name[32];
    snprintf(name, sizeof name, "rank %d", who);
    detail_text(d, sizeof d, name, &wd.peers[who]);
    size_t l0 = strlen(line);
    snprintf(line + l0, sizeof line - l0, "%s", d);
    if (who != 0) {
        detail_text(d, sizeof d, "rank 0", me);
        l0 = strlen(line);
        snprintf(line + l0, sizeof line - l0, "%s", d);
    }
    if (wd.frozen_s >= wd.timeout) {
        size_t l = strlen(line);
        snprintf(line + l, sizeof line - l, " (rank 0 itself did not run for %.0f s before this)", wd.frozen_s);
    }
    mb_output_abort(line, 1);
}

static void heard(int rank, const struct wd_beat *b, double now)
{
    struct wd_peer *p = &wd.peers[rank];
    p->heard = now;
    if (b->ticks != p->ticks)
        p->changed = now;
    p->case_index = b->case_index;
    p->iter = b->iter;
    p->waiting = b->waiting;
    p->ticks = b->ticks;
    p->detail = b->detail;
    memcpy(p->label, b->label, WD_LABEL);
    p->label[WD_LABEL - 1] = 0;
}

static void *watch(void *arg)
{
    (void)arg;
    int rank = wd.run->rank;
    double changed = mb_now(), looped = changed;
    uint64_t last = atomic_load(&wd.ticks);
    while (!atomic_load(&wd.stop)) {
        double now = mb_now();
        if (now - looped - wd.period > wd.frozen_s) /* one period is the loop's own wait */
            wd.frozen_s = now - looped - wd.period;
        looped = now;
        struct wd_beat b = {WD_MAGIC, (uint32_t)rank, atomic_load_explicit(&wd.case_index, memory_order_relaxed),
                            atomic_load_explicit(&wd.iter, memory_order_relaxed),
                            atomic_load_explicit(&wd.waiting, memory_order_relaxed),
                            atomic_load_explicit(&wd.ticks, memory_order_relaxed),
                            atomic_load_explicit(&wd.detail, memory_order_relaxed), {0}};
        const char *lab = atomic_load_explicit(&wd.label, memory_order_relaxed);
        if (lab)
            snprintf(b.label, WD_LABEL, "%s", lab);
        if (b.ticks != last) {
            last = b.ticks;
            changed = now;
        }
        if (rank == 0) {
            heard(0, &b, now);
            struct pollfd pf = {wd.sock, POLLIN, 0};
            if (poll(&pf, 1, (int)(wd.period * 1e3)) > 0) {
                struct wd_beat in;
                ssize_t got;
                while ((got = recv(wd.sock, &in, sizeof in, MSG_DONTWAIT)) == (ssize_t)sizeof in)
                    if (in.magic == WD_MAGIC && in.rank > 0 && in.rank < (uint32_t)wd.run->nranks)
                        heard((int)in.rank, &in, mb_now());
            }
            if (!atomic_load(&wd.stop) && mb_now() - wd.peers[0].changed >= wd.timeout)
                judge(mb_now());
            continue;
        }
        for (int i = 0; i < wd.ndest; i++)
            sendto(wd.sock, &b, sizeof b, MSG_DONTWAIT, (const struct sockaddr *)&wd.dest[i], sizeof wd.dest[i]);
        /* rank 0 judges after `timeout`; this rank only when rank 0 did not */
        if (now - changed >= 2 * wd.timeout + 2 * wd.period) {
            char at[400], line[1024];
            where_text(at, sizeof at, b.case_index, b.iter);
            snprintf(line, sizeof line,
                     "--timeout %g s: rank %d made no progress for %.0f s in %s, and rank 0 did not end the "
                     "run: rank 0's process or its link is gone",
                     wd.timeout, rank, now - changed, at);
            mb_output_abort(line, 1);
        }
        struct timespec ts = {(time_t)wd.period, (long)(fmod(wd.period, 1.0) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Rank 0: its port and addresses; -1 with the reason in why. */
static int open_listener(struct wd_where *w, char *why, size_t len)
{
    wd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    if (wd.sock < 0 || bind(wd.sock, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(wd.sock, (struct sockaddr *)&a, &al) != 0) {
        snprintf(why, len, "cannot open its UDP socket: %s", strerror(errno));
        return -1;
    }
    w->port = a.sin_port;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i && w->naddr < WD_MAXADDR; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                continue;
            uint32_t ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
            if ((ntohl(ip) >> 24) != 127)
                w->addr[w->naddr++] = ip;
        }
        freeifaddrs(ifs);
    }
    return 0;
}

int mb_watchdog_start(struct mb_run *run)
{
    if (!(run->common.timeout > 0))
        return 0;
    wd.run = run;
    wd.timeout = run->common.timeout;
    wd.period = wd.timeout < 4 ? wd.timeout / 4 : 1.0;
    char why[300] = "";
    struct wd_where w;
    memset(&w, 0, sizeof w);
    int bad = 0;
    if (run->rank == 0)
        bad = open_listener(&w, why, sizeof why) != 0;
    gethostname(w.host, sizeof w.host - 1);
    char me[WD_HOST] = "";
    snprintf(me, sizeof me, "%s", w.host);
    MPI_Bcast(&bad, 1, MPI_INT, 0, run->comm);
    if (bad) {
        if (run->rank == 0)
            mb_warn("--timeout: the watchdog %s", why);
        return -1;
    }
    MPI_Bcast(&w, (int)sizeof w, MPI_BYTE, 0, run->comm);
    char *hosts = run->rank == 0 ? calloc((size_t)run->nranks, WD_HOST) : NULL;
    MPI_Gather(me, WD_HOST, MPI_CHAR, hosts, WD_HOST, MPI_CHAR, 0, run->comm);
    if (run->rank == 0) {
        wd.peers = calloc((size_t)run->nranks, sizeof *wd.peers);
        if (!wd.peers || !hosts)
            mb_die(1, "out of memory: the watchdog's table");
        double now = mb_now();
        for (int r = 0; r < run->nranks; r++) {
            wd.peers[r].heard = wd.peers[r].changed = now;
            wd.peers[r].case_index = wd.peers[r].iter = wd.peers[r].detail = -1;
            wd.peers[r].waiting = 0;
            snprintf(wd.peers[r].host, WD_HOST, "%s", hosts + (size_t)r * WD_HOST);
        }
    } else {
        /* same host as rank 0: loopback; elsewhere rank 0's own addresses */
        wd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (strcmp(me, w.host) == 0) {
            wd.dest[wd.ndest++] = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = w.port,
                                                       .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        } else {
            for (int i = 0; i < w.naddr && i < WD_MAXADDR; i++)
                wd.dest[wd.ndest++] = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = w.port,
                                                           .sin_addr.s_addr = w.addr[i]};
        }
    }
    free(hosts);
    atomic_store(&wd.case_index, -1);
    atomic_store(&wd.iter, -1);
    atomic_store(&wd.detail, -1);
    atomic_store(&wd.stop, 0);
    atomic_store(&wd.on, 1);
    if (pthread_create(&wd.thread, NULL, watch, NULL) != 0)
        mb_die(1, "--timeout: cannot start the watchdog's thread");
    return 0;
}

void mb_watchdog_stop(void)
{
    if (!atomic_load(&wd.on))
        return;
    atomic_store(&wd.stop, 1);
    pthread_join(wd.thread, NULL);
    atomic_store(&wd.on, 0);
    if (wd.sock >= 0)
        close(wd.sock);
    wd.sock = -1;
    free(wd.peers);
    wd.peers = NULL;
}
