/* The result file on disk: its unique temporary, the commit to the final
 * name, and what an interrupted run keeps.
 *
 * A run writes PATH.tmp.<pid>.<random> (created with O_EXCL, so never an
 * existing file nor a planted link) case by case, and links it to PATH
 * when it ends; link() fails with EEXIST where rename() would overwrite.
 * The file is fsynced before it appears under its final name and the
 * folder after.
 *
 * Signals: SIGINT/SIGTERM (mpirun forwards them to every rank; Slurm
 * sends SIGTERM at the time limit) may arrive in any thread, also while
 * HDF5 is writing. HDF5 is not async-signal-safe, so the handler never
 * calls it: the file on disk is consistent after each case's flush, and
 * the handler only fsyncs it, links it to the final name, removes the
 * temporary, fsyncs the folder, writes one line and _exits. One atomic
 * state orders it against the writer: a signal during a write is left
 * pending and taken by the writer as soon as that case is flushed; a
 * write that would start after the handler began waits for the exit.
 * A rank blocked in a collective ends all the same (_exit).
 *
 * Open MPI 4's mpirun, itself sent SIGTERM or SIGINT, does not pass it on:
 * each rank gets SIGCONT, and a second later its runtime ends it with
 * _exit (no handler, no atexit). So SIGCONT links the file to its final
 * name at once (fsynced, the temporary removed) and the run goes on
 * writing into it there; a genuine resume after a stop just finishes the
 * file in place. Slurm's time limit signals every process of the step, so
 * the ranks see SIGTERM themselves. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* "dir/x.h5", k -> "dir/x.k.h5"; names without .h5 get ".k" appended. */
static void numbered_into(const char *path, int k, char *out, size_t len)
{
    size_t n = strlen(path);
    const char *ext = n > 3 && strcmp(path + n - 3, ".h5") == 0 ? path + n - 3 : path + n;
    snprintf(out, len, "%.*s.%d%s", (int)(ext - path), path, k, ext);
}

static char *numbered(const char *path, int k)
{
    size_t len = strlen(path) + 24;
    char *out = malloc(len);
    if (out)
        numbered_into(path, k, out, len);
    return out;
}

char *mb_output_unique(const char *path)
{
    if (!exists(path))
        return strdup(path);
    for (int k = 1;; k++) {
        char *p = numbered(path, k);
        if (!p || !exists(p))
            return p;
        free(p);
    }
}

/* PATH.tmp.<pid>.<16 hex digits>; MB_FAULT_INJECT=tmp-collide makes the
 * first try's digits all zero, so a test can plant something there. */
static void tmp_name(const char *path, int attempt, char *out, size_t len)
{
    unsigned long long rnd = 0;
    const char *f = mb_fault();
    if (!(attempt == 0 && f && strcmp(f, "tmp-collide") == 0) &&
        getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd = (unsigned long long)ts.tv_nsec * 2654435761u ^ (unsigned long long)ts.tv_sec ^
              ((unsigned long long)attempt << 48);
    }
    snprintf(out, len, "%s.tmp.%ld.%016llx", path, (long)getpid(), rnd);
}

/* The folder holding path, open for fsync (-1 if it cannot be opened). */
static int open_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int mb_output_probe(const char *path, int must_not_exist, char *err, size_t errlen)
{
    if (must_not_exist && exists(path)) {
        snprintf(err, errlen, "-o/--out: %s exists; movebench never overwrites a result (choose another name)", path);
        return -1;
    }
    char tmp[4200];
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        tmp_name(path, attempt, tmp, sizeof tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        snprintf(err, errlen, "-o/--out: cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(tmp); /* ours: created just now */
    return 0;
}

/* ===== the one open result file and its signal path ==================== */

enum { G_OFF, G_IDLE, G_WRITING, G_PENDING, G_SALVAGING };
#define MB_ABORT_PENDING (-1) /* pending_sig: mb_output_abort waits on a write */

#define G_FINALS 9 /* PATH, then NAME.1.h5 ... NAME.8.h5 */

/* Everything the handler needs, prepared in advance (no allocation, no
 * formatting with stdio there). */
static struct {
    atomic_int state;
    atomic_int pending_sig;
    pid_t owner; /* a forked child never salvages its parent's file */
    int fd, dirfd;
    int broken;  /* a write failed: the file is not kept */
    atomic_size_t ncases;
    atomic_int cont_pending; /* SIGCONT during a write: link after it */
    int linked;              /* index into finals once linked, else -1 */
    size_t planned;
    char tmp[4200];
    char finals[G_FINALS][4200];
    struct sigaction old_int, old_term, old_hup, old_cont;
    int handlers, atexit_done;
    char abort_line[1024]; /* mb_output_abort's, for a writer that takes it over */
    int abort_status;
} g = {.state = G_OFF, .fd = -1, .dirfd = -1, .linked = -1};

struct mb_output {
    struct mb_result_writer *w;
    char *path;
    int failed;
    char first_err[4608]; /* the failure that ended the writing */
};

static void say(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void say_num(unsigned long long v)
{
    char b[24];
    size_t i = sizeof b;
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    (void)!write(STDERR_FILENO, b + i, sizeof b - i);
}

/* Async-signal-safe: fsyncs the file and gives it the first free final
 * name, removing the temporary (once; later calls only fsync). */
static const char *link_final(void)
{
    if (g.fd >= 0)
        fsync(g.fd);
    for (int i = 0; i < G_FINALS && g.linked < 0; i++) {
        if (link(g.tmp, g.finals[i]) == 0) {
            g.linked = i;
            unlink(g.tmp);
        } else if (errno != EEXIST) {
            /* no hard links here: rename, after an existence check */
            if ((errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP) &&
                !exists(g.finals[i]) && rename(g.tmp, g.finals[i]) == 0)
                g.linked = i;
            break;
        }
    }
    if (g.dirfd >= 0)
        fsync(g.dirfd);
    return g.linked >= 0 ? g.finals[g.linked] : NULL;
}

/* Async-signal-safe: keeps what the last flush left on disk, under the
 * first free final name; reports in one line. why: the signal, or 0 for
 * an exit without close; reason (when not NULL) replaces the line's
 * opening words. */
static void salvage_because(int why, const char *reason)
{
    if (getpid() != g.owner)
        return;
    say(mb_progname());
    if (reason) {
        say(": ");
        say(reason);
    } else {
        say(why ? ": interrupted by signal " : ": exited before the end of the run");
        if (why)
            say_num((unsigned long long)why);
    }
    if (g.broken) {
        unlink(g.tmp);
        say("; the result file could not be written, nothing kept\n");
        return;
    }
    const char *kept = link_final();
    say(": ");
    say_num(atomic_load(&g.ncases));
    say(" of ");
    say_num(g.planned);
    say(" cases kept in ");
    say(kept ? kept : g.tmp);
    say(kept ? " (complete=0)\n" : " (could not link it to its final name)\n");
}

static void salvage(int why) { salvage_because(why, NULL); }

/* ===== clean-up hooks (harness.h) ===================================== */

#define MB_CLEANUPS 8
static struct {
    void (*fn)(void *);
    void *arg;
} cleanups[MB_CLEANUPS];
static atomic_int ncleanups, cleanup_claim;

static void cleanup_at_exit(void) { mb_cleanup_run(); }

static void install_handlers(void);

int mb_cleanup_add(void (*fn)(void *arg), void *arg)
{
    int n = atomic_load(&ncleanups);
    if (n >= MB_CLEANUPS || (n == 0 && atexit(cleanup_at_exit) != 0))
        return -1;
    install_handlers();
    cleanups[n].fn = fn;
    cleanups[n].arg = arg;
    atomic_store(&ncleanups, n + 1); /* published after the entry */
    return 0;
}

void mb_cleanup_run(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&cleanup_claim, &expect, 1))
        return; /* once, by whoever comes first */
    for (int i = atomic_load(&ncleanups) - 1; i >= 0; i--)
        cleanups[i].fn(cleanups[i].arg);
}

/* A program's own SIGINT/SIGTERM handler, installed before ours (its
 * clean-up: pool files, cgroups), still runs: after the salvage, before
 * the exit. */
static void chain(int sig)
{
    const struct sigaction *o = sig == SIGINT ? &g.old_int : sig == SIGHUP ? &g.old_hup : &g.old_term;
    if (o->sa_flags & SA_SIGINFO) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_signo = sig;
        if (o->sa_sigaction)
            o->sa_sigaction(sig, &info, NULL);
    } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
    }
}

static void nap(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* SIGINT/SIGTERM blocked in the calling thread (the writer's, so HDF5 is
 * never interrupted by our handler), and back. */
static sigset_t g_saved_mask;
static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCONT);
    pthread_sigmask(SIG_BLOCK, &set, &g_saved_mask);
}
static void unblock_signals(void) { pthread_sigmask(SIG_SETMASK, &g_saved_mask, NULL); }

static void on_signal(int sig)
{
    atomic_store(&g.pending_sig, sig);
    for (;;) {
        int s = G_IDLE;
        if (atomic_compare_exchange_strong(&g.state, &s, G_SALVAGING)) {
            salvage(sig);
            mb_cleanup_run();
            chain(sig);
            _exit(128 + sig);
        }
        if (s == G_WRITING) {
            if (atomic_compare_exchange_strong(&g.state, &s, G_PENDING))
                return; /* the writer takes it after its flush */
            continue;
        }
        if (s == G_PENDING)
            return; /* the writer takes it after its flush */
        if (s == G_OFF) {
            mb_cleanup_run();
            chain(sig);
            _exit(128 + sig); /* the file is committed (or was never opened) */
        }
        nap(); /* SALVAGING elsewhere: an exit, or a SIGCONT link that ends */
    }
}

/* SIGCONT: see the top comment. */
static void on_cont(int sig)
{
    (void)sig;
    int s = G_IDLE;
    if (getpid() != g.owner || g.broken)
        return;
    if (atomic_compare_exchange_strong(&g.state, &s, G_SALVAGING)) {
        link_final();
        atomic_store(&g.state, G_IDLE);
    } else if (s == G_WRITING) {
        atomic_store(&g.cont_pending, 1);
    }
}

/* SIGINT, SIGTERM and SIGHUP end the run through on_signal (salvage,
 * clean-up hooks, the program's own earlier handler); once, from the
 * result file's open or the first clean-up hook, whichever is first. */
static void install_handlers(void)
{
    if (g.handlers)
        return; /* again would record our own handler as the program's */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, &g.old_int);
    sigaction(SIGTERM, &sa, &g.old_term);
    sigaction(SIGHUP, &sa, &g.old_hup);
    sa.sa_handler = on_cont;
    sigaction(SIGCONT, &sa, &g.old_cont);
    g.handlers = 1;
}

static void on_exit_salvage(void)
{
    block_signals(); /* this thread salvages; a signal here must not wait on it */
    int s = G_IDLE;
    if (atomic_compare_exchange_strong(&g.state, &s, G_SALVAGING)) {
        salvage(0);
        atomic_store(&g.state, G_OFF);
    } else if (s == G_WRITING && getpid() == g.owner) {
        /* exit() from inside a write: the file may be torn, keep nothing */
        g.broken = 1;
        salvage(0);
        atomic_store(&g.state, G_OFF);
    }
}

static void write_begin(void)
{
    block_signals();
    for (;;) {
        int s = G_IDLE;
        if (atomic_compare_exchange_strong(&g.state, &s, G_WRITING))
            return;
        nap(); /* a handler is salvaging (and will _exit) or linking (and ends) */
    }
}

static void write_end(void)
{
    int s = G_WRITING;
    if (atomic_load(&g.cont_pending) && !g.broken) {
        /* still WRITING, so no handler salvages meanwhile */
        atomic_store(&g.cont_pending, 0);
        link_final();
    }
    if (atomic_compare_exchange_strong(&g.state, &s, G_IDLE)) {
        unblock_signals(); /* a signal held back meanwhile is taken now */
        return;
    }
    /* a signal came during the write: take it now the file is flushed */
    atomic_store(&g.state, G_SALVAGING);
    int sig = atomic_load(&g.pending_sig);
    if (sig == MB_ABORT_PENDING) {
        salvage_because(0, g.abort_line);
        mb_cleanup_run();
        _exit(g.abort_status);
    }
    salvage(sig);
    mb_cleanup_run();
    chain(sig);
    _exit(128 + sig);
}

void mb_output_abort(const char *line, int status)
{
    snprintf(g.abort_line, sizeof g.abort_line, "%s", line);
    g.abort_status = status;
    block_signals(); /* this thread ends the process; a signal must not wait on it */
    for (int tries = 0;; tries++) {
        int s = G_IDLE;
        if (atomic_compare_exchange_strong(&g.state, &s, G_SALVAGING)) {
            salvage_because(0, g.abort_line);
            break;
        }
        if (s == G_WRITING) {
            atomic_store(&g.pending_sig, MB_ABORT_PENDING);
            if (atomic_compare_exchange_strong(&g.state, &s, G_PENDING))
                for (int i = 0; i < 5000; i++)
                    nap(); /* the writer ends the process after its flush */
        }
        if (s == G_OFF || s == G_SALVAGING || tries > 5000) {
            /* no file open here (another rank's, or the run's end), or a
             * writer that never returns: the line, nothing kept */
            say(mb_progname());
            say(": ");
            say(g.abort_line);
            say("\n");
            break;
        }
        nap();
    }
    mb_cleanup_run();
    _exit(status);
}

static void disarm(void)
{
    atomic_store(&g.state, G_OFF);
    if (g.handlers && !atomic_load(&ncleanups)) { /* clean-up hooks keep them */
        sigaction(SIGINT, &g.old_int, NULL);
        sigaction(SIGTERM, &g.old_term, NULL);
        sigaction(SIGHUP, &g.old_hup, NULL);
        sigaction(SIGCONT, &g.old_cont, NULL);
        g.handlers = 0;
    }
    g.linked = -1;
    if (g.fd >= 0)
        close(g.fd);
    if (g.dirfd >= 0)
        close(g.dirfd);
    g.fd = g.dirfd = -1;
}

struct mb_output *mb_output_open(const struct mb_result *r, const char *path, char *err,
                                 size_t errlen)
{
    if (atomic_load(&g.state) != G_OFF) {
        snprintf(err, errlen, "%s: another result file is open", path);
        return NULL;
    }
    size_t plen = strlen(path);
    if (plen + 64 > sizeof g.tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return NULL;
    }
    struct mb_output *o = calloc(1, sizeof *o);
    char *p = strdup(path);
    if (!o || !p) {
        free(o);
        free(p);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    o->path = p;
    for (int attempt = 0; attempt < 16 && !o->w; attempt++) {
        tmp_name(path, attempt, g.tmp, sizeof g.tmp);
        o->w = mb_result_begin(r, g.tmp, err, errlen);
        if (!o->w && !exists(g.tmp))
            break; /* not a name clash */
    }
    if (!o->w) {
        free(o->path);
        free(o);
        return NULL;
    }
    g.owner = getpid();
    g.broken = 0;
    g.fd = mb_result_writer_fd(o->w);
    g.dirfd = open_dir_of(path);
    atomic_store(&g.ncases, 0);
    const struct mb_kv *planned = mb_kv_get(&r->root, "cases_planned");
    g.planned = planned && planned->type == MB_KV_INT && planned->i > 0 ? (size_t)planned->i : 0;
    snprintf(g.finals[0], sizeof g.finals[0], "%s", path);
    for (int i = 1; i < G_FINALS; i++)
        numbered_into(path, i, g.finals[i], sizeof g.finals[i]);
    atomic_store(&g.pending_sig, 0);
    atomic_store(&g.cont_pending, 0);
    g.linked = -1;
    atomic_store(&g.state, G_IDLE);
    install_handlers();
    if (!g.atexit_done)
        g.atexit_done = atexit(on_exit_salvage) == 0;
    return o;
}

int mb_output_add(struct mb_output *o, const struct mb_result *r, size_t k, char *err,
                  size_t errlen)
{
    if (o->failed)
        return -1;
    const char *f = mb_fault();
    if (f && strcmp(f, "result-enospc") == 0 && atomic_load(&g.ncases) >= 1) {
        snprintf(o->first_err, sizeof o->first_err, "%s: write case %s: %s (injected)", g.tmp,
                 r->cases[k].name, strerror(ENOSPC));
        snprintf(err, errlen, "%s", o->first_err);
        o->failed = g.broken = 1;
        return -1;
    }
    write_begin();
    int rc = mb_result_append(o->w, r, k, err, errlen);
    if (rc == 0) {
        atomic_fetch_add(&g.ncases, 1);
    } else {
        o->failed = g.broken = 1;
        snprintf(o->first_err, sizeof o->first_err, "%s", err);
    }
    write_end();
    return rc;
}

int mb_output_sync(struct mb_output *o, const struct mb_result *r, char *err, size_t errlen)
{
    if (o->failed)
        return snprintf(err, errlen, "%s", o->first_err), -1;
    write_begin();
    int rc = mb_result_sync(o->w, r, err, errlen);
    if (rc != 0) {
        o->failed = g.broken = 1;
        snprintf(o->first_err, sizeof o->first_err, "%s", err);
    }
    write_end();
    return rc;
}

void mb_output_discard(struct mb_output *o)
{
    if (!o)
        return;
    write_begin();
    mb_result_end(o->w, NULL, NULL, 0);
    /* ours: created by open, or linked by SIGCONT (then torn by the failure) */
    unlink(g.linked >= 0 ? g.finals[g.linked] : g.tmp);
    disarm();
    unblock_signals();
    free(o->path);
    free(o);
}

char *mb_output_close(struct mb_output *o, const struct mb_result *r, char *err, size_t errlen)
{
    if (o->failed) {
        snprintf(err, errlen, "%s", o->first_err);
        mb_output_discard(o);
        return NULL;
    }
    write_begin();
    struct mb_result_writer *w = o->w;
    o->w = NULL;
    int rc = mb_result_end(w, r, err, errlen);
    if (rc == 0 && (g.fd < 0 || fsync(g.fd) != 0)) {
        snprintf(err, errlen, "%s: fsync: %s", g.tmp, g.fd < 0 ? "no descriptor" : strerror(errno));
        rc = -1;
    }
    int renamed = 0;
    if (rc == 0 && g.linked >= 0) {
        /* linked at a SIGCONT: complete now, in place under that name */
        char *final = strdup(g.finals[g.linked]);
        if (!final)
            snprintf(err, errlen, "%s: out of memory", g.finals[g.linked]);
        if (g.dirfd >= 0)
            fsync(g.dirfd);
        disarm();
        unblock_signals();
        free(o->path);
        free(o);
        return final;
    }
    char *final = rc == 0 ? strdup(o->path) : NULL;
    if (rc == 0 && !final) {
        snprintf(err, errlen, "%s: out of memory", o->path);
        rc = -1;
    }
    for (int k = 1; rc == 0; k++) {
        if (link(g.tmp, final) == 0)
            break;
        int e = errno;
        if (e == EEXIST) {
            free(final);
            if (!(final = numbered(o->path, k))) {
                snprintf(err, errlen, "%s: out of memory", o->path);
                rc = -1;
            }
            continue;
        }
        /* File systems without hard links: rename after an existence check. */
        if ((e == EPERM || e == ENOTSUP || e == EOPNOTSUPP) && !exists(final) &&
            rename(g.tmp, final) == 0) {
            renamed = 1;
            break;
        }
        snprintf(err, errlen, "%s: cannot link %s to it: %s", final, g.tmp, strerror(e));
        free(final);
        final = NULL;
        rc = -1;
    }
    if (g.linked >= 0)
        unlink(g.finals[g.linked]); /* ours, linked at a SIGCONT, and now torn */
    else if (!renamed)
        unlink(g.tmp); /* ours (after a rename the name may be someone else's) */
    if (rc == 0 && g.dirfd >= 0 && fsync(g.dirfd) != 0) {
        snprintf(err, errlen, "%s: fsync of its folder: %s", final, strerror(errno));
        /* the file is there and complete; only its name may not be durable yet */
    }
    disarm();
    unblock_signals();
    free(o->path);
    free(o);
    return rc == 0 ? final : NULL;
}

char *mb_output_commit(const struct mb_result *r, const char *path, char *err, size_t errlen)
{
    struct mb_output *o = mb_output_open(r, path, err, errlen);
    if (!o)
        return NULL;
    for (size_t k = 0; k < r->ncases; k++)
        if (mb_output_add(o, r, k, err, errlen) != 0)
            break;
    return mb_output_close(o, r, err, errlen);
}

void mb_csv_field(FILE *out, const char *s, int last)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

void mb_result_csv(const struct mb_result *r, FILE *out)
{
    static const char *const tail[] = {"bytes", "count", "t_min", "t_median", "t_p95",
                                       "t_max", "algbw", "busbw", "model",    "check"};
    mb_csv_field(out, "case", 0);
    for (size_t i = 0; i < r->nlabels; i++)
        mb_csv_field(out, r->label_names[i] ? r->label_names[i] : "", 0);
    for (size_t i = 0; i < 10; i++)
        mb_csv_field(out, tail[i], i == 9);
    for (size_t k = 0; k < r->ncases; k++) {
        const struct mb_case_result *c = &r->cases[k];
        mb_csv_field(out, c->name, 0);
        for (size_t i = 0; i < r->nlabels; i++)
            mb_csv_field(out, c->labels[i] ? c->labels[i] : "", 0);
        fprintf(out, "%llu,%llu,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,",
                (unsigned long long)c->bytes, (unsigned long long)c->count, c->stats.min,
                c->stats.median, c->stats.p95, c->stats.max, c->algbw, c->busbw, c->model_s);
        mb_csv_field(out, mb_check_name(c->check), 1);
    }
    fflush(out);
}

int mb_count_fits(size_t count) { return count <= (size_t)2147483647; }

const char *mb_fault(void)
{
    const char *f = getenv("MB_FAULT_INJECT");
    return f && *f ? f : NULL;
}
