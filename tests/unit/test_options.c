/* Option parsing: defaults, good values, every class of bad value. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static struct {
    unsigned colls;
    int mode;
    long long n;
    double x;
    int flag;
    unsigned picks;
} p;

static const struct mb_opt opts[] = {
    {"coll", 0, MB_OPT_LIST, &p.colls, "b", "a|b|c", 0, 0, "list", "LIST"},
    {"mode", 0, MB_OPT_CHOICE, &p.mode, "fast", "slow|fast", 0, 0, "choice", "M"},
    {"count", 0, MB_OPT_INT, &p.n, "3", NULL, 1, 10, "int", "N"},
    {"ratio", 0, MB_OPT_DOUBLE, &p.x, "0.5", NULL, 0, 1, "double", "X"},
    {"extra", 'x', MB_OPT_FLAG, &p.flag, "0", NULL, 0, 0, "flag", NULL},
    {"pick", 0, MB_OPT_LIST, &p.picks, "x", "x|y;z", 0, 0, "list with a choice outside all", "LIST"},
    {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
};

static const struct mb_bench bench = {.name = "mb-test", .description = "test", .opts = opts};

/* Parses a NULL-terminated argument list; the error line goes to errbuf. */
static char errbuf[1024];
static int parse(struct mb_common *c, const char **args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = "mb-test";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    FILE *f = fmemopen(errbuf, sizeof(errbuf), "w");
    memset(errbuf, 0, sizeof(errbuf));
    int rc = mb_options_parse(&bench, c, argc, argv, f);
    fclose(f);
    return rc;
}

#define PARSE(...) parse(&c, (const char *[]){__VA_ARGS__, NULL})
#define BAD(needle, ...)                                                                           \
    do {                                                                                           \
        EXPECT(PARSE(__VA_ARGS__) == MB_EXIT_USAGE);                                               \
        if (!strstr(errbuf, needle)) {                                                             \
            fprintf(stderr, "error line lacks '%s': %s\n", needle, errbuf);                       \
            test_failures++;                                                                       \
        }                                                                                          \
        EXPECT(strchr(errbuf, '\n') == errbuf + strlen(errbuf) - 1); /* exactly one line */        \
    } while (0)

int main(void)
{
    mb_set_progname("mb-test");
    struct mb_common c;
    size_t sz;

    /* sizes */
    EXPECT(mb_parse_size("0", &sz) == 0 && sz == 0);
    EXPECT(mb_parse_size("17", &sz) == 0 && sz == 17);
    EXPECT(mb_parse_size("4K", &sz) == 0 && sz == 4096);
    EXPECT(mb_parse_size("4k", &sz) == 0 && sz == 4096);
    EXPECT(mb_parse_size("64M", &sz) == 0 && sz == 64u << 20);
    EXPECT(mb_parse_size("2GiB", &sz) == 0 && sz == 2ull << 30);
    EXPECT(mb_parse_size("8B", &sz) == 0 && sz == 8);
    EXPECT(mb_parse_size("", &sz) != 0);
    EXPECT(mb_parse_size("-1", &sz) != 0);
    EXPECT(mb_parse_size("4X", &sz) != 0);
    EXPECT(mb_parse_size("M", &sz) != 0);
    EXPECT(mb_parse_size("99999999999999999999", &sz) != 0);
    EXPECT(mb_parse_size("99999999999G", &sz) != 0);
    char buf[32];
    mb_format_size(64u << 20, buf, sizeof(buf));
    EXPECT(strcmp(buf, "64M") == 0);
    mb_format_size(1000, buf, sizeof(buf));
    EXPECT(strcmp(buf, "1000") == 0);

    /* defaults */
    EXPECT(PARSE("-q") == 0);
    EXPECT(c.minbytes == 8 && c.maxbytes == 64u << 20 && c.stepfactor == 2);
    EXPECT(c.iters == 100 && c.warmup == 10 && c.check == 1 && c.device == MB_DEV_HOST);
    EXPECT(c.out == NULL && c.quiet == 1 && c.seed == 1);
    EXPECT(p.colls == 2 && p.mode == 1 && p.n == 3 && p.x == 0.5 && p.flag == 0);

    /* good values, short and long forms */
    EXPECT(PARSE("-b", "1K", "-e", "1M", "-f", "4", "-n", "7", "-w", "0", "--no-check", "-d", "cuda",
                 "-o", "x.h5", "--papi", "perf::TASK-CLOCK", "--coll", "a,c", "--mode=slow",
                 "--count", "10", "--ratio", "1", "-x") == 0);
    EXPECT(c.minbytes == 1024 && c.maxbytes == 1u << 20 && c.stepfactor == 4 && c.iters == 7);
    EXPECT(c.warmup == 0 && c.check == 0 && c.device == MB_DEV_CUDA && strcmp(c.out, "x.h5") == 0);
    EXPECT(strcmp(c.papi, "perf::TASK-CLOCK") == 0);
    EXPECT(p.colls == 5 && p.mode == 0 && p.n == 10 && p.x == 1 && p.flag == 1);
    EXPECT(PARSE("--coll", "all") == 0 && p.colls == 7);
    EXPECT(PARSE("--no-check", "--check") == 0 && c.check == 1);
    EXPECT(PARSE("-b", "0", "-e", "0") == 0 && c.minbytes == 0);

    /* size lists */
    size_t n, *sizes;
    EXPECT(PARSE("-b", "0", "-e", "20", "-f", "4") == 0);
    sizes = mb_sizes(&c, &n);
    EXPECT(n == 4 && sizes[0] == 0 && sizes[1] == 1 && sizes[2] == 4 && sizes[3] == 16);
    free(sizes);
    EXPECT(PARSE("-b", "1G", "-e", "16G", "-f", "1024") == 0);
    sizes = mb_sizes(&c, &n);
    EXPECT(n == 1 && sizes[0] == 1ull << 30);
    free(sizes);
    EXPECT(PARSE("--sizes", "0,13,4K") == 0);
    sizes = mb_sizes(&c, &n);
    EXPECT(n == 3 && sizes[0] == 0 && sizes[1] == 13 && sizes[2] == 4096);
    free(sizes);
    BAD("--sizes: 'x' is not a size", "--sizes", "1,x");

    /* --help */
    EXPECT(PARSE("--help") == 1);
    EXPECT(PARSE("-h") == 1);

    /* bad input: each names the flag, one line, status 2 */
    BAD("unknown option '--bogus'", "--bogus");
    BAD("unknown option '-z'", "-z");
    BAD("-b/--minbytes: 'abc' is not a size", "-b", "abc");
    BAD("-e/--maxbytes: '12Q' is not a size", "-e", "12Q");
    BAD("-b/--minbytes 2M is larger than -e/--maxbytes 1M", "-b", "2M", "-e", "1M");
    BAD("-n/--iters: '0' is out of range", "-n", "0");
    BAD("-n/--iters: 'ten' is not an integer", "-n", "ten");
    BAD("-f/--stepfactor: '1' is out of range", "-f", "1");
    BAD("-d/--device: 'gpu' is not one of host|cuda", "-d", "gpu");
    BAD("--coll: 'a,d' is not a comma-separated list of a|b|c", "--coll", "a,d");
    BAD("--mode: 'medium' is not one of slow|fast", "--mode", "medium");
    BAD("--count: '11' is out of range", "--count", "11");
    BAD("--ratio: 'nan' is not a number", "--ratio", "nan");
    BAD("needs a value", "-n");
    BAD("needs a value", "--coll");
    BAD("unexpected argument 'stray'", "stray");
    BAD("-o/--out: '' is empty", "-o", "");

    /* help output shows defaults */
    char help[8192];
    FILE *f = fmemopen(help, sizeof(help), "w");
    mb_options_help(&bench, f);
    fclose(f);
    EXPECT(strstr(help, "--maxbytes SIZE") && strstr(help, "[default: 64M]"));
    EXPECT(strstr(help, "--no-check") && strstr(help, "--coll LIST"));

    /* config records every value, defaults included */
    struct mb_kvlist cfg = {0};
    EXPECT(PARSE("--coll", "a,c") == 0);
    mb_options_config(&bench, &c, &cfg);
    const struct mb_kv *kv = mb_kv_get(&cfg, "coll");
    EXPECT(kv && kv->type == MB_KV_STR && strcmp(kv->s, "a,c") == 0);
    kv = mb_kv_get(&cfg, "maxbytes");
    EXPECT(kv && kv->type == MB_KV_INT && kv->i == 64ll << 20);
    kv = mb_kv_get(&cfg, "device");
    EXPECT(kv && strcmp(kv->s, "host") == 0);
    kv = mb_kv_get(&cfg, "out");
    EXPECT(kv && strcmp(kv->s, "") == 0);
    mb_kv_free(&cfg);

    /* a choice after ';' is named only explicitly: `all` leaves it out */
    EXPECT(PARSE("--pick", "all") == 0 && p.picks == 3u);
    EXPECT(PARSE("--pick", "all,z") == 0 && p.picks == 7u);
    EXPECT(PARSE("--pick", "z") == 0 && p.picks == 4u);
    BAD("--pick", "--pick", "w");
    cfg = (struct mb_kvlist){0};
    EXPECT(PARSE("--pick", "y,z") == 0);
    mb_options_config(&bench, &c, &cfg);
    kv = mb_kv_get(&cfg, "pick");
    EXPECT(kv && strcmp(kv->s, "y,z") == 0);
    mb_kv_free(&cfg);
    /* a program flag named like a common one is refused, never shadowed
     * (mb-aio's --batch was silently the driver's) */
    static long long shadow;
    static const struct mb_opt dup[] = {
        {"iters", 0, MB_OPT_INT, &shadow, "4", NULL, 1, 10, "clashes with -n/--iters", "N"},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL},
    };
    const struct mb_bench dup_bench = {.name = "mb-test", .description = "test", .opts = dup};
    char *dargv[] = {"mb-test", NULL};
    FILE *df = fmemopen(errbuf, sizeof(errbuf), "w");
    memset(errbuf, 0, sizeof(errbuf));
    EXPECT(mb_options_parse(&dup_bench, &c, 1, dargv, df) == MB_EXIT_USAGE);
    fclose(df);
    EXPECT(strstr(errbuf, "--iters is defined twice") != NULL);
    return TEST_EXIT();
}
