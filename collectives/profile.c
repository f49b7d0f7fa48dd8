/* Cost-model profiles: a small text file of "key = value" lines with '#'
 * comments (profiles/README.md), read strictly (every required number
 * present, finite and not negative; a malformed line names its number) and
 * written through a temporary name. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORMAT "movebench-coll-profile 1"

/* Every number of the profile: its key, where it lives, what it means. */
struct key {
    char name[64];
    size_t off;      /* offset of the double in struct mb_coll_profile */
    int optional;    /* 1: may be "nan" (not measured) or absent; 2: required, may be "nan" */
    char help[120];
};

#define NKEYS (22 + 2 * MB_COLL_NWS)

static int keys(struct key *k)
{
    int n = 0;
#define K(NAME, FIELD, OPT, HELP)                                                                   \
    do {                                                                                        \
        snprintf(k[n].name, sizeof(k[n].name), "%s", NAME);                                     \
        k[n].off = offsetof(struct mb_coll_profile, FIELD);                                     \
        k[n].optional = OPT;                                                                    \
        snprintf(k[n].help, sizeof(k[n].help), "%s", HELP);                                     \
        n++;                                                                                    \
    } while (0)
    K("cache_bytes", cache_bytes, 0, "effective cache of a node: the size that best fits the memcpy sweep 256 KiB-64 MiB (all ranks at once)");
    K("p2p_alpha_s", p2p_alpha, 0, "MPI_Sendrecv exchange of 8 B between rank pairs");
    K("p2p_cache_s_per_B", p2p.cache, 0, "beta in cache: MPI_Sendrecv 64 KiB-32 MiB between rank pairs, fitted, p2p_msg_8KiB_s taken off");
    K("p2p_mem_s_per_B", p2p.mem, 0, "beta out of cache: the same MPI_Sendrecv fit");
    K("reduce_cache_s_per_B", reduce.cache, 0, "gamma in cache: dst += src on floats 256 KiB-64 MiB, all ranks at once, fitted");
    K("reduce_mem_s_per_B", reduce.mem, 0, "gamma out of cache: the same reduction fit");
    K("copy_cache_s_per_B", copy.cache, 0, "memcpy per byte, every node rank copying at once, in cache (the 256 KiB-64 MiB sweep)");
    K("copy_mem_s_per_B", copy.mem, 0, "memcpy, out of cache (the same sweep)");
    K("stream_mem_s_per_B", stream, 1, "non-temporal stores of a cached 64 KiB chunk over 64 MiB, all ranks at once (nan: memcpy's)");
    K("flag_s", flag, 0, "one synchronisation of the node's ranks through shared-memory flags, after an MPI_Barrier");
    K("cma_alpha_s", cma_alpha, 1, "one process_vm_readv call (nan: CMA refused here)");
    K("cma_cache_s_per_B", cma.cache, 1, "process_vm_readv per byte, in cache (256 KiB-32 MiB in 64 KiB calls, fitted)");
    K("cma_mem_s_per_B", cma.mem, 1, "process_vm_readv per byte, out of cache (the same fit)");
    K("net_alpha_s", net_alpha, 1, "inter-node link: 8 B MPI_Sendrecv between two node leaders (nan: --calibrate-net not run)");
    K("net_s_per_B", net_beta, 1, "inter-node link: per byte exchanged, each direction at once (1/rate)");
    K("p2p_msg_1KiB_s", p2p_msg1k, 0, "per-message overhead: MPI_Sendrecv of 1 KiB between rank pairs less 1 KiB at p2p_cache");
    K("p2p_msg_8KiB_s", p2p_msg8k, 0, "per-message overhead: MPI_Sendrecv of 8 KiB between rank pairs less 8 KiB at p2p_cache");
    K("p2p_nb_alpha_s", p2p_nb_alpha, 0, "per request round: MPI_Irecv + MPI_Isend + MPI_Waitall of 8 B between rank pairs");
    K("ucx_flag_s", ucx_flag, 2, "UCX flag round: every rank ucp_put_nbx's a flag to every peer and waits for theirs (nan: ucx unavailable)");
    K("ucx_get_alpha_s", ucx_get_alpha, 2, "one ucp_get_nbx of 8 B from the next rank's registered buffer, set up and completed (nan: ucx unavailable)");
#undef K
    static const char *const ws[MB_COLL_NWS] = {"256KiB", "1MiB", "4MiB", "16MiB", "64MiB"};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < MB_COLL_NWS; i++, n++) {
            snprintf(k[n].name, sizeof(k[n].name), "shm_%s_ws%s_s_per_B", t ? "reduce" : "copy", ws[i]);
            k[n].off = (t ? offsetof(struct mb_coll_profile, shm_reduce) : offsetof(struct mb_coll_profile, shm_copy)) +
                       (size_t)i * sizeof(double);
            k[n].optional = 0;
            snprintf(k[n].help, sizeof(k[n].help), "%s a peer rank's fresh node-shared buffer, all node ranks at once, "
                     "node working set %s", t ? "dst += src (floats) from" : "memcpy from", ws[i]);
        }
    return n;
}

static double *field(struct mb_coll_profile *p, const struct key *k) { return (double *)((char *)p + k->off); }

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

int mb_coll_profile_parse(const char *text, const char *name, struct mb_coll_profile *prof, char *err,
                          size_t errlen)
{
    struct key k[NKEYS];
    int nk = keys(k);
    int seen[NKEYS] = {0}, have_format = 0, have_ranks = 0;
    memset(prof, 0, sizeof(*prof));
    for (int i = 0; i < nk; i++)
        *field(prof, &k[i]) = NAN;
    char *copy = strdup(text), *save = NULL;
    int lineno = 0, rc = 0;
    for (char *line = copy; line && rc == 0; line = save) {
        save = strchr(line, '\n');
        if (save)
            *save++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *t = trim(line);
        if (!*t)
            continue;
        char *eq = strchr(t, '=');
        if (!eq) {
            rc = fail(err, errlen, "profile %s:%d: expected KEY = VALUE, got '%.60s'", name, lineno, t);
            break;
        }
        *eq = '\0';
        char *key = trim(t), *val = trim(eq + 1);
        if (strcmp(key, "format") == 0) {
            if (strcmp(val, FORMAT) != 0)
                rc = fail(err, errlen, "profile %s:%d: format '%.60s' is not '" FORMAT "'", name, lineno, val);
            have_format = 1;
            continue;
        }
        if (strcmp(key, "host") == 0 || strcmp(key, "date") == 0 || strcmp(key, "command") == 0) {
            char *dst = key[0] == 'h' ? prof->host : key[0] == 'd' ? prof->date : prof->command;
            size_t cap = key[0] == 'h' ? sizeof(prof->host) : key[0] == 'd' ? sizeof(prof->date)
                                                                             : sizeof(prof->command);
            snprintf(dst, cap, "%s", val);
            continue;
        }
        char *end = NULL;
        errno = 0;
        if (strcmp(key, "ranks") == 0) {
            long r = strtol(val, &end, 10);
            if (end == val || *end || errno || r < 2 || r > 1 << 24)
                rc = fail(err, errlen, "profile %s:%d: ranks: '%.40s' is not a rank count of 2 or more", name,
                          lineno, val);
            prof->ranks = (int)r;
            have_ranks = 1;
            continue;
        }
        int i = 0;
        while (i < nk && strcmp(k[i].name, key) != 0)
            i++;
        if (i == nk)
            continue; /* unknown keys: a newer profile's extras */
        if (seen[i]) {
            rc = fail(err, errlen, "profile %s:%d: %s is given twice", name, lineno, key);
            break;
        }
        seen[i] = 1;
        double v = strtod(val, &end);
        if (end == val || *end || (isnan(v) && !k[i].optional) || (!isnan(v) && (!isfinite(v) || v < 0))) {
            rc = fail(err, errlen, "profile %s:%d: %s: '%.40s' is not a %snumber >= 0", name, lineno, key, val,
                      k[i].optional ? "nan or " : "finite ");
            break;
        }
        *field(prof, &k[i]) = v;
    }
    free(copy);
    if (rc)
        return rc;
    if (!have_format)
        return fail(err, errlen, "profile %s: no 'format = " FORMAT "' line (not a cost-model profile)", name);
    if (!have_ranks)
        return fail(err, errlen, "profile %s: missing key ranks", name);
    for (int i = 0; i < nk; i++)
        if (!seen[i] && k[i].optional != 1)
            return fail(err, errlen, "profile %s: missing key %s", name, k[i].name);
    return 0;
}

int mb_coll_profile_read(const char *path, struct mb_coll_profile *prof, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, "profile %s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16;
    char *text = malloc(cap + 1);
    size_t len = fread(text, 1, cap, f);
    int toolong = len == cap && fgetc(f) != EOF, bad = ferror(f);
    fclose(f);
    text[len] = '\0';
    int rc = bad ? fail(err, errlen, "profile %s: read error", path)
           : toolong ? fail(err, errlen, "profile %s: larger than 64 KiB, not a profile", path)
           : memchr(text, '\0', len) ? fail(err, errlen, "profile %s: binary data, not a profile", path)
           : mb_coll_profile_parse(text, path, prof, err, errlen);
    free(text);
    return rc;
}

int mb_coll_profile_write(const char *path, const struct mb_coll_profile *prof, char *err, size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fail(err, errlen, "profile %s: cannot write: %s", tmp, strerror(errno));
    struct key k[NKEYS];
    int nk = keys(k);
    fprintf(f, "# movebench collectives cost-model profile, written by mb-coll --calibrate.\n"
               "# Seconds and seconds per byte; see profiles/README.md and collectives/README.md (cost model).\n"
               "format = " FORMAT "\nhost = %s\ndate = %s\ncommand = %s\nranks = %d\n",
            prof->host, prof->date, prof->command, prof->ranks);
    for (int i = 0; i < nk; i++) {
        double v = *field((struct mb_coll_profile *)prof, &k[i]);
        fprintf(f, "\n# %s\n%s = ", k[i].help, k[i].name);
        if (isnan(v))
            fprintf(f, "nan\n");
        else
            fprintf(f, "%.6g\n", v);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(tmp);
        return fail(err, errlen, "profile %s: write error", tmp);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fail(err, errlen, "profile %s: cannot rename %s: %s", path, tmp, strerror(e));
    }
    return 0;
}

void mb_coll_profile_audit(FILE *out, const struct mb_coll_profile *prof)
{
    struct key k[NKEYS];
    int nk = keys(k);
    for (int i = 0; i < nk; i++) {
        size_t len = strlen(k[i].name);
        const char *unit = len > 8 && strcmp(k[i].name + len - 8, "_s_per_B") == 0 ? "s/B"
                         : len > 2 && strcmp(k[i].name + len - 2, "_s") == 0      ? "s"
                                                                                  : "B";
        fprintf(out, "# term %-24s = %-12.6g %-3s <- %s\n", k[i].name, *field((struct mb_coll_profile *)prof, &k[i]),
                unit, k[i].help);
    }
}

void mb_coll_profile_default(char *buf, size_t len)
{
    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    char *dot = strchr(host, '.');
    if (dot)
        *dot = '\0';
    snprintf(buf, len, "profiles/%s.txt", host);
}
