/* Hardware counters through PAPI's low-level API. Nothing here is fatal: an
 * event PAPI refuses (absent, conflicting, not permitted, or PAPI itself
 * failing to initialise) is dropped and listed with its reason, and the run
 * goes on with whatever the ranks agree on. Counting is per calling thread
 * (PAPI's default granularity), so open, start and stop on one thread. */
#include "harness.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <papi.h>

static const char *const preset_defaults[] = {
    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM", NULL,
};
/* Software events of the perf_event component: they exist in VMs and
 * containers that expose no hardware counters. */
static const char *const soft_defaults[] = {
    "perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES", NULL,
};

struct mb_counters {
    int eventset;       /* PAPI_NULL when PAPI is unusable */
    size_t n;           /* agreed events */
    char **names;
    int running;
    int warned;         /* one warning per object, not one per iteration */
    char *unavail;      /* "EVENT: reason; ..." */
    size_t ulen, ucap;
};

/* ---- PAPI library initialisation (once per process) ------------------- */

static int papi_state;          /* 0 untried, 1 ok, -1 failed */
static int papi_lib_version;    /* runtime version when known */
static char papi_reason[160];
static char cpu_disabled[200];  /* why the perf_event component is off, or "" */

static int papi_init(const char *spec)
{
    if (papi_state)
        return papi_state > 0;
    if (PAPI_is_initialized() != PAPI_NOT_INITED) {
        papi_state = 1; /* someone else in the process did it */
    } else {
        /* The AMD GPU components print errors at init on every machine
         * without ROCm; keep them off unless a rocm event is asked for. */
        if (!spec || !strstr(spec, "rocm")) {
            PAPI_disable_component_by_name("rocm_smi");
            PAPI_disable_component_by_name("rocm");
        }
        int v = PAPI_library_init(PAPI_VER_CURRENT);
        if (v == PAPI_VER_CURRENT) {
            papi_state = 1;
        } else if (v > 0) {
            papi_state = -1;
            papi_lib_version = v;
            snprintf(papi_reason, sizeof papi_reason,
                     "PAPI_library_init: library version %d.%d does not match header %d.%d",
                     PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
                     PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION));
        } else {
            papi_state = -1;
            const char *e = PAPI_strerror(v);
            snprintf(papi_reason, sizeof papi_reason, "PAPI_library_init: %s",
                     e ? e : "unknown error");
        }
    }
    if (papi_state > 0) {
        int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);
        if (v > 0)
            papi_lib_version = v;
        /* In a VM without a PMU, libpfm4 disables the whole CPU component,
         * software events included; its reason explains every failure. */
        int cidx = PAPI_get_component_index("perf_event");
        const PAPI_component_info_t *ci = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
        if (ci && ci->disabled)
            snprintf(cpu_disabled, sizeof cpu_disabled, " (perf_event component disabled: %.150s)",
                     ci->disabled_reason);
    }
    return papi_state > 0;
}

const char *mb_counters_papi_version(void)
{
    static char buf[32];
    papi_init(getenv("MB_PAPI_EVENTS"));
    int v = papi_lib_version > 0 ? papi_lib_version : PAPI_VERSION;
    snprintf(buf, sizeof buf, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
             PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));
    return buf;
}

/* ---- small helpers ------------------------------------------------------ */

static const char *papi_err(int rc)
{
    const char *e = PAPI_strerror(rc);
    return e ? e : "unknown PAPI error";
}

/* Appends "name: reason" to the unavailable list; 0 or -1 (out of memory). */
static int note_unavail(struct mb_counters *c, const char *name, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    size_t need = c->ulen + strlen(name) + strlen(reason) + 5;
    if (need > c->ucap) {
        size_t cap = need * 2;
        char *p = realloc(c->unavail, cap);
        if (!p)
            return -1;
        c->unavail = p;
        c->ucap = cap;
    }
    c->ulen += (size_t)sprintf(c->unavail + c->ulen, "%s%s: %s", c->ulen ? "; " : "", name,
                               reason);
    return 0;
}

/* Splits a comma-separated spec into trimmed, distinct names. */
static char **split_spec(const char *spec, size_t *n)
{
    size_t cap = 1;
    for (const char *p = spec; *p; p++)
        cap += *p == ',';
    char **v = calloc(cap, sizeof *v);
    char *copy = strdup(spec);
    if (!v || !copy) {
        free(v);
        free(copy);
        return NULL;
    }
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && isspace((unsigned char)end[-1]))
            *--end = '\0';
        int dup = !*tok;
        for (size_t i = 0; i < *n && !dup; i++)
            dup = !strcmp(v[i], tok);
        if (!dup && !(v[(*n)++] = strdup(tok))) {
            for (size_t i = 0; i + 1 < *n; i++)
                free(v[i]);
            free(v);
            free(copy);
            return NULL;
        }
    }
    free(copy);
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- trying and agreeing ----------------------------------------------- */

#define BIT(m, i) (((m)[(i) / 64] >> ((i) % 64)) & 1)

/* Empties the eventset and adds the events whose bit is set in `want`, one
 * by one, so a conflict is blamed on the event that causes it. Clears the
 * bit of each failure and notes its reason. Sets *oom when noting fails. */
static void add_events(struct mb_counters *c, char **names, int *codes, size_t n,
                       uint64_t *want, int *oom)
{
    if (c->eventset != PAPI_NULL)
        PAPI_cleanup_eventset(c->eventset);
    for (size_t i = 0; i < n; i++) {
        if (!BIT(want, i))
            continue;
        char why[400] = "";
        int rc;
        if (papi_state < 0)
            snprintf(why, sizeof why, "%s", papi_reason);
        else if (c->eventset == PAPI_NULL)
            snprintf(why, sizeof why, "PAPI_create_eventset failed");
        else if ((rc = PAPI_event_name_to_code(names[i], &codes[i])) != PAPI_OK)
            snprintf(why, sizeof why, "PAPI_event_name_to_code: %s", papi_err(rc));
        else if ((rc = PAPI_add_event(c->eventset, codes[i])) != PAPI_OK)
            snprintf(why, sizeof why, "PAPI_add_event: %s", papi_err(rc));
        if (!*why)
            continue;
        if (papi_state > 0 && (!strncmp(names[i], "PAPI_", 5) || !strncmp(names[i], "perf", 4)))
            strncat(why, cpu_disabled, sizeof why - strlen(why) - 1);
        want[i / 64] &= ~(UINT64_C(1) << (i % 64));
        if (note_unavail(c, names[i], "%s", why))
            *oom = 1;
    }
}

/* Collective; names[0..n) is the same list on every rank. Every rank tries
 * every event; the ones that worked everywhere are left in the eventset in
 * list order and their names move into c. Returns how many, or -1 when a
 * rank ran out of memory (on every rank). */
static long try_list(struct mb_counters *c, MPI_Comm comm, char **names, size_t n)
{
    size_t nw = (n + 63) / 64 + 1;
    int *codes = calloc(n + 1, sizeof *codes);
    uint64_t *mine = calloc(nw, sizeof *mine), *all = calloc(nw, sizeof *all);
    int oom = !codes || !mine || !all, anyoom;
    MPI_Allreduce(MPI_IN_PLACE, &oom, 1, MPI_INT, MPI_LOR, comm);
    long k = -1;
    if (oom)
        goto out;
    for (size_t i = 0; i < n; i++)
        mine[i / 64] |= UINT64_C(1) << (i % 64);
    add_events(c, names, codes, n, mine, &oom);
    /* Agree, rebuild with the agreed list, and repeat until no rank drops
     * anything more (a subset of a working set normally works: one pass). */
    for (;;) {
        MPI_Allreduce(mine, all, (int)nw, MPI_UINT64_T, MPI_BAND, comm);
        for (size_t i = 0; i < n; i++)
            if (BIT(mine, i) && !BIT(all, i) &&
                note_unavail(c, names[i], "unavailable on another rank"))
                oom = 1;
        memcpy(mine, all, nw * sizeof *mine);
        add_events(c, names, codes, n, mine, &oom);
        int changed = memcmp(mine, all, nw * sizeof *mine) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_LOR, comm);
        if (!changed)
            break;
    }
    k = 0;
    for (size_t i = 0; i < n; i++)
        k += (long)BIT(all, i);
    if (k > 0) {
        c->names = calloc((size_t)k, sizeof *c->names);
        if (!c->names) {
            oom = 1;
        } else {
            for (size_t i = 0; i < n; i++)
                if (BIT(all, i)) {
                    c->names[c->n++] = names[i];
                    names[i] = NULL;
                }
        }
    }
    MPI_Allreduce(&oom, &anyoom, 1, MPI_INT, MPI_LOR, comm);
    if (anyoom)
        k = -1;
out:
    free(codes);
    free(mine);
    free(all);
    return k;
}

static char **dup_list(const char *const *src, size_t *n)
{
    for (*n = 0; src[*n]; (*n)++)
        ;
    char **v = calloc(*n, sizeof *v);
    for (size_t i = 0; v && i < *n; i++)
        if (!(v[i] = strdup(src[i]))) {
            free_names(v, i);
            return NULL;
        }
    return v;
}

/* Rank 0's spec (NULL stays NULL) goes to every rank, so the bit positions
 * mean the same events everywhere even if the environment differs. Returns
 * 0, or -1 on every rank when one ran out of memory. */
static int bcast_spec(MPI_Comm comm, const char *spec, int ok, char **out)
{
    int rank, len;
    MPI_Comm_rank(comm, &rank);
    len = spec ? (int)strlen(spec) : -1;
    MPI_Bcast(&len, 1, MPI_INT, 0, comm);
    *out = len >= 0 ? malloc((size_t)len + 1) : NULL;
    ok = ok && (len < 0 || *out);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok) {
        free(*out);
        *out = NULL;
        return -1;
    }
    if (len >= 0) {
        if (rank == 0)
            memcpy(*out, spec, (size_t)len + 1);
        MPI_Bcast(*out, len + 1, MPI_CHAR, 0, comm);
    }
    return 0;
}

struct mb_counters *mb_counters_open(MPI_Comm comm, const char *spec)
{
    struct mb_counters *c = calloc(1, sizeof *c);
    char *s;
    if (!spec)
        spec = getenv("MB_PAPI_EVENTS"); /* set but empty means none, as --papi "" */
    if (bcast_spec(comm, spec, c != NULL, &s)) {
        free(c);
        return NULL;
    }
    c->eventset = PAPI_NULL;
    if (s && (!*s || !strcmp(s, "none"))) { /* no counters: PAPI is not touched */
        free(s);
        return c;
    }
    if (papi_init(s) && PAPI_create_eventset(&c->eventset) != PAPI_OK)
        c->eventset = PAPI_NULL;

    size_t n = 0;
    char **names = s ? split_spec(s, &n) : dup_list(preset_defaults, &n);
    int ok = names != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    long got = ok ? try_list(c, comm, names, n) : -1;
    free_names(names, n);
    if (!s && got == 0) {
        /* No preset worked everywhere (they are listed as unavailable with
         * their reasons): count the perf_event software events instead. */
        names = dup_list(soft_defaults, &n);
        ok = names != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        got = ok ? try_list(c, comm, names, n) : -1;
        free_names(names, n);
    }
    free(s);
    if (got < 0) {
        mb_counters_close(c);
        return NULL;
    }
    return c;
}

size_t mb_counters_nevents(const struct mb_counters *c) { return c ? c->n : 0; }

const char *mb_counters_name(const struct mb_counters *c, size_t i)
{
    return c && i < c->n ? c->names[i] : NULL;
}

const char *mb_counters_unavailable(const struct mb_counters *c)
{
    return c && c->unavail ? c->unavail : "";
}

/* Stops a running eventset, discarding the counts. */
static void stop_quietly(struct mb_counters *c)
{
    long long *scratch = calloc(c->n, sizeof *scratch);
    if (scratch)
        PAPI_stop(c->eventset, scratch);
    free(scratch);
    c->running = 0;
}

void mb_counters_start(struct mb_counters *c)
{
    if (!c || !c->n)
        return;
    if (c->running) /* a start without a stop: restart */
        stop_quietly(c);
    PAPI_reset(c->eventset);
    int rc = PAPI_start(c->eventset);
    c->running = rc == PAPI_OK;
    if (!c->running && !c->warned++)
        mb_warn("PAPI_start: %s (counts will read -1)", papi_err(rc));
}

/* A failed start or read gives -1 for every event: never a plausible count. */
void mb_counters_stop(struct mb_counters *c, long long *values)
{
    if (!c || !c->n)
        return;
    int rc = c->running ? PAPI_stop(c->eventset, values) : PAPI_ENOTRUN;
    c->running = 0;
    if (rc != PAPI_OK)
        for (size_t i = 0; i < c->n; i++)
            values[i] = -1;
}

void mb_counters_close(struct mb_counters *c)
{
    if (!c)
        return;
    if (c->eventset != PAPI_NULL) {
        if (c->running)
            stop_quietly(c);
        PAPI_cleanup_eventset(c->eventset);
        PAPI_destroy_eventset(&c->eventset);
    }
    free_names(c->names, c->n);
    free(c->unavail);
    free(c);
}
