/* Command-line options: the common flags of DESIGN.md plus a program's own
 * table, parsed with getopt_long. Every value is validated here, before any
 * work; a bad one gets one line naming the flag and exit status 2. */
#include "harness.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BASE 1000 /* long-only options get keys KEY_BASE + index */

static struct mb_common defaults_sink;

/* The common flags; dst pointers are rebased onto the caller's struct. */
static const struct mb_opt common_opts[] = {
    {"minbytes", 'b', MB_OPT_SIZE, &defaults_sink.minbytes, "8", NULL, 0, 1e15,
     "smallest message size (K/M/G suffixes)", "SIZE"},
    {"maxbytes", 'e', MB_OPT_SIZE, &defaults_sink.maxbytes, "64M", NULL, 0, 1e15,
     "largest message size", "SIZE"},
    {"stepfactor", 'f', MB_OPT_INT, &defaults_sink.stepfactor, "2", NULL, 2, 1024,
     "multiply the size by this factor between cases", "N"},
    {"iters", 'n', MB_OPT_INT, &defaults_sink.iters, "100", NULL, 1, 1e9,
     "timed iterations per case", "N"},
    {"warmup", 'w', MB_OPT_INT, &defaults_sink.warmup, "10", NULL, 0, 1e9,
     "untimed warm-up iterations per case", "N"},
    {"rounds", 0, MB_OPT_INT, &defaults_sink.rounds, "1", NULL, 1, 1e9,
     "split each case's timed iterations into N rounds taken in turn over all cases (each round sets the "
     "case up and warms it up again), so a slow phase of a shared machine falls on every case alike", "N"},
    {"check", 'c', MB_OPT_FLAG, &defaults_sink.check, "1", NULL, 0, 0,
     "validate every iteration's result (--no-check to skip)", NULL},
    {"device", 'd', MB_OPT_CHOICE, &defaults_sink.device, "host", "host|cuda", 0, 0,
     "where the buffers live", "DEV"},
    {"out", 'o', MB_OPT_STR, &defaults_sink.out, NULL, NULL, 0, 0,
     "result file (default results/<program>-<UTC time>.h5); never overwritten", "FILE.h5"},
    {"papi", 0, MB_OPT_STR, &defaults_sink.papi, NULL, NULL, 0, 0,
     "comma-separated PAPI events, 'none' for no counters (default $MB_PAPI_EVENTS, "
     "else hardware presets, else perf:: software events)",
     "EVENTS"},
    {"sizes", 0, MB_OPT_STR, &defaults_sink.sizes, NULL, NULL, 0, 0,
     "explicit comma-separated sizes (K/M/G suffixes), instead of -b/-e/-f", "LIST"},
    {"agg-iters", 0, MB_OPT_STR, &defaults_sink.batch_arg, "auto", NULL, 0, 0,
     "calls timed back to back per sample, each output still checked after the block: N, or auto "
     "(enough calls for a sample of about 100 us, from the warm-up's per-call time; needs -w 1 or more); "
     "1 times each call alone; programs that hold one iteration's buffers time each call alone",
     "N|auto"},
    {"seed", 0, MB_OPT_INT, &defaults_sink.seed, "1", NULL, 0, 4294967295.0,
     "seed of the generated data", "N"},
    {"quiet", 'q', MB_OPT_FLAG, &defaults_sink.quiet, "0", NULL, 0, 0,
     "print no table or progress, only errors", NULL},
    {"timeout", 0, MB_OPT_DOUBLE, &defaults_sink.timeout, "0", NULL, 0, 1e6,
     "end the run (exit 1, finished cases kept) when it makes no progress for this long, naming the case, "
     "the iteration and the silent rank and host; 0 = off (default $MB_TIMEOUT, else 0); must exceed the "
     "longest single iteration or case setup",
     "SECONDS"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static void *rebase(const struct mb_opt *o, struct mb_common *common)
{
    if (o >= common_opts && o < common_opts + sizeof(common_opts) / sizeof(common_opts[0]))
        return (char *)common + ((char *)o->dst - (char *)&defaults_sink);
    return o->dst;
}

int mb_parse_size(const char *s, size_t *out)
{
    if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    unsigned long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1ULL << 10; end++; break;
    case 'M': mul = 1ULL << 20; end++; break;
    case 'G': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i')
        end++;
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end)
        return -1;
    if (v > (unsigned long long)SIZE_MAX / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

void mb_format_size(size_t bytes, char *buf, size_t len)
{
    static const char suffix[] = "KMG";
    int k = -1;
    size_t v = bytes;
    while (v >= 1024 && v % 1024 == 0 && k < 2) {
        v /= 1024;
        k++;
    }
    if (k < 0)
        snprintf(buf, len, "%zu", bytes);
    else
        snprintf(buf, len, "%zu%c", v, suffix[k]);
}

/* "-b/--minbytes" or "--papi" */
static void flag_name(const struct mb_opt *o, char *buf, size_t len)
{
    if (o->short_name)
        snprintf(buf, len, "-%c/--%s", o->short_name, o->name);
    else
        snprintf(buf, len, "--%s", o->name);
}

/* Index of `word` (length n) in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *word, size_t n)
{
    int idx = 0;
    const char *p = choices;
    while (*p) {
        const char *bar = strpbrk(p, "|;");
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return idx;
        idx++;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* Choices that "all" selects: those before a ';' (every one when none). */
static int nchoices(const char *choices)
{
    int n = 1;
    for (const char *p = choices; *p && *p != ';'; p++)
        n += *p == '|';
    return n;
}

static int bad(FILE *err, const struct mb_opt *o, const char *val, const char *why)
{
    char name[64];
    flag_name(o, name, sizeof(name));
    if (err)
        fprintf(err, "%s: %s: '%s' %s\n", mb_progname(), name, val, why);
    return MB_EXIT_USAGE;
}

static int set_value(const struct mb_opt *o, void *dst, const char *val, FILE *err)
{
    char why[256];
    switch (o->kind) {
    case MB_OPT_FLAG:
        *(int *)dst = atoi(val) != 0;
        return 0;
    case MB_OPT_INT: {
        errno = 0;
        char *end;
        long long v = strtoll(val, &end, 10);
        if (!*val || *end || errno)
            return bad(err, o, val, "is not an integer");
        if ((double)v < o->min || (double)v > o->max) {
            snprintf(why, sizeof(why), "is out of range (accepts %.0f to %.0f)", o->min, o->max);
            return bad(err, o, val, why);
        }
        *(long long *)dst = v;
        return 0;
    }
    case MB_OPT_SIZE: {
        size_t v;
        if (mb_parse_size(val, &v) != 0)
            return bad(err, o, val, "is not a size (accepts a byte count with an optional K, M or G suffix)");
        if ((double)v < o->min || (double)v > o->max) {
            snprintf(why, sizeof(why), "is out of range (accepts %.0f to %.0f bytes)", o->min, o->max);
            return bad(err, o, val, why);
        }
        *(size_t *)dst = v;
        return 0;
    }
    case MB_OPT_DOUBLE: {
        errno = 0;
        char *end;
        double v = strtod(val, &end);
        if (!*val || *end || errno || !isfinite(v))
            return bad(err, o, val, "is not a number");
        if (v < o->min || v > o->max) {
            snprintf(why, sizeof(why), "is out of range (accepts %g to %g)", o->min, o->max);
            return bad(err, o, val, why);
        }
        *(double *)dst = v;
        return 0;
    }
    case MB_OPT_STR:
        if (!*val)
            return bad(err, o, val, "is empty");
        *(const char **)dst = val;
        return 0;
    case MB_OPT_CHOICE: {
        int idx = choice_index(o->choices, val, strlen(val));
        if (idx < 0) {
            snprintf(why, sizeof(why), "is not one of %s", o->choices);
            return bad(err, o, val, why);
        }
        *(int *)dst = idx;
        return 0;
    }
    case MB_OPT_LIST: {
        unsigned mask = 0;
        const char *p = val;
        if (!*val)
            return bad(err, o, val, "is empty");
        while (1) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (len == 3 && strncmp(p, "all", 3) == 0) {
                mask = (nchoices(o->choices) >= 32) ? ~0u : (1u << nchoices(o->choices)) - 1;
            } else {
                int idx = choice_index(o->choices, p, len);
                if (idx < 0) {
                    snprintf(why, sizeof(why), "is not a comma-separated list of %s (or all)", o->choices);
                    return bad(err, o, val, why);
                }
                mask |= 1u << idx;
            }
            if (!comma)
                break;
            p = comma + 1;
        }
        *(unsigned *)dst = mask;
        return 0;
    }
    }
    return bad(err, o, val, "has an unknown option kind");
}

/* --agg-iters N|auto into common->batch (0 = auto). */
static int parse_batch(struct mb_common *common, FILE *err)
{
    const char *v = common->batch_arg ? common->batch_arg : "auto";
    if (strcmp(v, "auto") == 0) {
        common->batch = 0;
        return 0;
    }
    errno = 0;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno || n < 1 || n > MB_BATCH_MAX) {
        if (err)
            fprintf(err, "%s: --agg-iters: '%s' is not a call count or auto (accepts 1 to %d, or auto)\n",
                    mb_progname(), v, MB_BATCH_MAX);
        return MB_EXIT_USAGE;
    }
    common->batch = n;
    return 0;
}

/* Calls fn on every option: common ones first, then the program's. */
#define FOR_EACH_OPT(bench, o)                                                                     \
    for (int pass_ = 0; pass_ < 2; pass_++)                                                        \
        for (const struct mb_opt *o = pass_ ? (bench)->opts : common_opts; o && o->name; o++)

static size_t count_opts(const struct mb_bench *bench)
{
    size_t n = 0;
    FOR_EACH_OPT(bench, o) n++;
    return n;
}

static const struct mb_opt *opt_at(const struct mb_bench *bench, size_t index)
{
    size_t n = 0;
    FOR_EACH_OPT(bench, o) {
        if (n++ == index)
            return o;
    }
    return NULL;
}

int mb_options_parse(const struct mb_bench *bench, struct mb_common *common, int argc,
                     char **argv, FILE *err)
{
    memset(common, 0, sizeof(*common));
    size_t nopts = count_opts(bench);
    /* a program flag named like another (a common one) would be shadowed
     * silently by getopt_long: the program's --batch became the driver's */
    for (size_t a = 0; a < nopts; a++)
        for (size_t b = a + 1; b < nopts; b++)
            if (strcmp(opt_at(bench, a)->name, opt_at(bench, b)->name) == 0) {
                if (err)
                    fprintf(err, "%s: internal error: flag --%s is defined twice\n", mb_progname(),
                            opt_at(bench, a)->name);
                return MB_EXIT_USAGE;
            }
    /* Defaults first, parsed as if typed, so --help shows what is used. */
    for (size_t k = 0; k < nopts; k++) {
        const struct mb_opt *o = opt_at(bench, k);
        if (o->def && set_value(o, rebase(o, common), o->def, err) != 0)
            return MB_EXIT_USAGE;
    }

    /* --timeout's default from the environment (job scripts set it there) */
    const char *env_timeout = getenv("MB_TIMEOUT");
    if (env_timeout && *env_timeout) {
        char *end;
        errno = 0;
        double v = strtod(env_timeout, &end);
        if (*end || errno || !(v >= 0 && v <= 1e6)) {
            if (err)
                fprintf(err, "%s: MB_TIMEOUT: '%s' is not a number of seconds (accepts 0 to 1e+06)\n",
                        mb_progname(), env_timeout);
            return MB_EXIT_USAGE;
        }
        common->timeout = v;
    }

    /* Each option, plus "no-NAME" for flags, plus help. */
    struct option *longs = calloc(2 * nopts + 2, sizeof(*longs));
    char (*nonames)[64] = calloc(nopts, sizeof(*nonames));
    char shorts[3 * 64 + 4] = ":h";
    size_t ns = 2, nl = 0;
    for (size_t k = 0; k < nopts; k++) {
        const struct mb_opt *o = opt_at(bench, k);
        int has_arg = o->kind == MB_OPT_FLAG ? no_argument : required_argument;
        int key = o->short_name ? o->short_name : (int)(KEY_BASE + k);
        longs[nl++] = (struct option){o->name, has_arg, NULL, key};
        if (o->kind == MB_OPT_FLAG) {
            snprintf(nonames[k], sizeof(nonames[k]), "no-%s", o->name);
            longs[nl++] = (struct option){nonames[k], no_argument, NULL, (int)(2 * KEY_BASE + k)};
        }
        if (o->short_name && ns + 3 < sizeof(shorts)) {
            shorts[ns++] = (char)o->short_name;
            if (has_arg == required_argument)
                shorts[ns++] = ':';
        }
    }
    longs[nl++] = (struct option){"help", no_argument, NULL, 'h'};
    shorts[ns] = '\0';

    int rc = 0;
    optind = 0; /* glibc: full re-initialisation, so tests can parse twice */
    opterr = 0;
    int ch;
    while (rc == 0 && (ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (ch == 'h') {
            rc = 1;
            break;
        }
        if (ch == ':') { /* optstring starts with ':' so a missing value is told apart */
            if (err)
                fprintf(err, "%s: %s needs a value (see --help)\n", mb_progname(), argv[optind - 1]);
            rc = MB_EXIT_USAGE;
            break;
        }
        if (ch == '?') {
            if (err) {
                if (optopt > 0 && optopt < KEY_BASE)
                    fprintf(err, "%s: unknown option '-%c' (see --help)\n", mb_progname(), optopt);
                else
                    fprintf(err, "%s: unknown option '%s' (see --help)\n", mb_progname(), argv[optind - 1]);
            }
            rc = MB_EXIT_USAGE;
            break;
        }
        const struct mb_opt *o = NULL;
        const char *val = optarg;
        if (ch >= 2 * KEY_BASE) {
            o = opt_at(bench, (size_t)(ch - 2 * KEY_BASE));
            val = "0";
        } else if (ch >= KEY_BASE) {
            o = opt_at(bench, (size_t)(ch - KEY_BASE));
        } else {
            for (size_t k = 0; k < nopts && !o; k++)
                if (opt_at(bench, k)->short_name == ch)
                    o = opt_at(bench, k);
        }
        if (o && o->kind == MB_OPT_FLAG && ch < 2 * KEY_BASE)
            val = "1";
        rc = o ? set_value(o, rebase(o, common), val, err) : MB_EXIT_USAGE;
    }
    if (rc == 0 && optind < argc) {
        if (err)
            fprintf(err, "%s: unexpected argument '%s' (see --help)\n", mb_progname(), argv[optind]);
        rc = MB_EXIT_USAGE;
    }
    if (rc == 0 && common->sizes) {
        size_t v;
        char *copy = strdup(common->sizes);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && rc == 0;
             tok = strtok_r(NULL, ",", &save))
            if (mb_parse_size(tok, &v) != 0) {
                if (err)
                    fprintf(err, "%s: --sizes: '%s' is not a size (accepts a comma-separated list of "
                                 "byte counts with optional K, M or G suffixes)\n",
                            mb_progname(), tok);
                rc = MB_EXIT_USAGE;
            }
        free(copy);
    }
    if (rc == 0)
        rc = parse_batch(common, err);
    if (rc == 0 && common->minbytes > common->maxbytes) {
        char lo[32], hi[32];
        mb_format_size(common->minbytes, lo, sizeof(lo));
        mb_format_size(common->maxbytes, hi, sizeof(hi));
        if (err)
            fprintf(err, "%s: -b/--minbytes %s is larger than -e/--maxbytes %s\n", mb_progname(), lo, hi);
        rc = MB_EXIT_USAGE;
    }
    if (rc == 0 && common->rounds > common->iters) {
        if (err)
            fprintf(err, "%s: --rounds %lld is more than -n/--iters %lld (every round times at least one iteration)\n",
                    mb_progname(), common->rounds, common->iters);
        rc = MB_EXIT_USAGE;
    }
    free(longs);
    free(nonames);
    return rc;
}

static void format_default(const struct mb_opt *o, char *buf, size_t len)
{
    if (!o->def)
        snprintf(buf, len, "%s", o->kind == MB_OPT_FLAG ? "off" : "unset");
    else if (o->kind == MB_OPT_FLAG)
        snprintf(buf, len, "%s", atoi(o->def) ? "on" : "off");
    else
        snprintf(buf, len, "%s", o->def);
}

void mb_options_help(const struct mb_bench *bench, FILE *out)
{
    fprintf(out, "usage: mpirun [-np N] %s [options]\n%s\n", bench->name, bench->description);
    FOR_EACH_OPT(bench, o) {
        if (o == bench->opts)
            fprintf(out, "\n%s options:\n", bench->name);
        else if (o == common_opts)
            fprintf(out, "\ncommon options:\n");
        char head[96], def[64];
        if (o->short_name)
            snprintf(head, sizeof(head), "-%c, --%s%s%s", o->short_name, o->name,
                     o->metavar ? " " : "", o->metavar ? o->metavar : "");
        else
            snprintf(head, sizeof(head), "    --%s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        if (o->kind == MB_OPT_FLAG)
            snprintf(head + strlen(head), sizeof(head) - strlen(head), ", --no-%s", o->name);
        format_default(o, def, sizeof(def));
        if (strlen(head) < 30)
            fprintf(out, "  %-30s %s", head, o->help);
        else /* a long flag: its text on the next line, so two spaces always part them */
            fprintf(out, "  %s\n  %-30s %s", head, "", o->help);
        if (o->choices)
            fprintf(out, "; one of %s%s", o->choices, o->kind == MB_OPT_LIST ? " (comma list or all)" : "");
        fprintf(out, " [default: %s]\n", def);
    }
    fprintf(out, "  %-30s %s\n", "-h, --help", "show this help and exit");
}

/* The value an option holds now, as text. */
static void format_value(const struct mb_opt *o, const void *dst, char *buf, size_t len)
{
    switch (o->kind) {
    case MB_OPT_FLAG: snprintf(buf, len, "%d", *(const int *)dst); break;
    case MB_OPT_INT: snprintf(buf, len, "%lld", *(const long long *)dst); break;
    case MB_OPT_SIZE: snprintf(buf, len, "%zu", *(const size_t *)dst); break;
    case MB_OPT_DOUBLE: snprintf(buf, len, "%.17g", *(const double *)dst); break;
    case MB_OPT_STR: snprintf(buf, len, "%s", *(char *const *)dst ? *(char *const *)dst : ""); break;
    case MB_OPT_CHOICE:
    case MB_OPT_LIST: {
        unsigned mask = o->kind == MB_OPT_CHOICE ? 1u << *(const int *)dst : *(const unsigned *)dst;
        size_t used = 0;
        int idx = 0;
        buf[0] = '\0';
        for (const char *p = o->choices; *p && used < len; idx++) {
            const char *bar = strpbrk(p, "|;");
            int n = bar ? (int)(bar - p) : (int)strlen(p);
            if (mask & (1u << idx))
                used += (size_t)snprintf(buf + used, len - used, "%s%.*s", used ? "," : "", n, p);
            if (!bar)
                break;
            p = bar + 1;
        }
        break;
    }
    }
}

void mb_options_config(const struct mb_bench *bench, const struct mb_common *common,
                       struct mb_kvlist *config)
{
    FOR_EACH_OPT(bench, o) {
        const void *dst = rebase(o, (struct mb_common *)common);
        char buf[512];
        switch (o->kind) {
        case MB_OPT_FLAG: mb_kv_int(config, o->name, *(const int *)dst); break;
        case MB_OPT_INT: mb_kv_int(config, o->name, *(const long long *)dst); break;
        case MB_OPT_SIZE: mb_kv_int(config, o->name, (long long)*(const size_t *)dst); break;
        case MB_OPT_DOUBLE: mb_kv_dbl(config, o->name, *(const double *)dst); break;
        default:
            format_value(o, dst, buf, sizeof(buf));
            mb_kv_str(config, o->name, buf);
        }
    }
}

/* Appends v to out[0..*k) (capacity *cap); out of memory ends the run. */
static size_t *push_size(size_t *out, size_t *k, size_t *cap, size_t v)
{
    if (mb_grow((void **)&out, cap, *k + 1, sizeof(*out)) != 0)
        mb_die(1, "out of memory: the list of sizes");
    out[(*k)++] = v;
    return out;
}

size_t *mb_sizes(const struct mb_common *common, size_t *n)
{
    size_t cap = 0, k = 0, v;
    size_t *out = NULL;
    if (mb_grow((void **)&out, &cap, 1, sizeof(*out)) != 0) /* never NULL, even for no size */
        mb_die(1, "out of memory: the list of sizes");
    if (common->sizes) {
        char *copy = strdup(common->sizes);
        if (!copy)
            mb_die(1, "out of memory: the list of sizes");
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            if (mb_parse_size(tok, &v) == 0) /* validated by mb_options_parse */
                out = push_size(out, &k, &cap, v);
        free(copy);
        *n = k;
        return out;
    }
    size_t f = (size_t)common->stepfactor;
    for (size_t b = common->minbytes; b <= common->maxbytes;) {
        out = push_size(out, &k, &cap, b);
        if (b == 0)
            b = 1;
        else if (b > common->maxbytes / f)
            break; /* the next step would pass maxbytes (or overflow) */
        else
            b *= f;
    }
    *n = k;
    return out;
}
