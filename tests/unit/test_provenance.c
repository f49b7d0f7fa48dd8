/* Provenance on one rank (singleton MPI): every documented key is there
 * with a sane value, argv is shell-quoted, and only the whitelisted
 * environment is kept. */
#include "../../benchmarks/harness/harness.h"
#include "check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static const char *str(const struct mb_kvlist *l, const char *key)
{
    const struct mb_kv *kv = mb_kv_get(l, key);
    if (!kv || kv->type != MB_KV_STR || !kv->s) {
        fprintf(stderr, "missing string attribute %s\n", key);
        return NULL;
    }
    return kv->s;
}

static int has_int(const struct mb_kvlist *l, const char *key, long long *v)
{
    const struct mb_kv *kv = mb_kv_get(l, key);
    if (!kv || kv->type != MB_KV_INT) {
        fprintf(stderr, "missing int attribute %s\n", key);
        return 0;
    }
    *v = kv->i;
    return 1;
}

#define NONEMPTY(s) ((s) && *(s))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    setenv("MB_TEST_PROV", "xyz", 1);
    setenv("MB_JOB_SCRIPT", "job_scripts/mb-test.sbatch", 1);
    setenv("HOME", "/nonexistent-home", 0); /* make sure there is one to leave out */

    char *fake[] = {"mb-test", "--label", "two words", "it's", "-n", "5", ""};
    struct mb_result r;
    mb_result_init(&r);
    mb_provenance_collect(MPI_COMM_WORLD, "mb-test", 7, fake, &r);
    const struct mb_kvlist *root = &r.root;
    const char *s;
    long long i;

    EXPECT((s = str(root, "benchmark")) && !strcmp(s, "mb-test"));
    s = str(root, "command_line");
    EXPECT(s && !strcmp(s, "mb-test --label 'two words' 'it'\\''s' -n 5 ''"));
    if (s)
        printf("command_line: %s\n", s);
    s = str(root, "start_time_utc"); /* 2026-12-02T13:53:31Z */
    EXPECT(s && strlen(s) == 20 && s[10] == 'T' && s[19] == 'Z');
    EXPECT(NONEMPTY(str(root, "git_commit")));
    EXPECT(has_int(root, "git_dirty", &i) && (i == 0 || i == 1));
    EXPECT(has_int(root, "nranks", &i) && i == 1);
    EXPECT(has_int(root, "nnodes", &i) && i == 1);
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    EXPECT((s = str(root, "hostnames")) && !strcmp(s, host));
    s = str(root, "mpi_library_version");
    EXPECT(s && strstr(s, "Open MPI") && !isspace((unsigned char)s[strlen(s) - 1]));
    EXPECT((s = str(root, "ucx_version")) && isdigit((unsigned char)s[0]));
    EXPECT((s = str(root, "hdf5_version")) && isdigit((unsigned char)s[0]) && strchr(s, '.'));
    EXPECT((s = str(root, "papi_version")) && !strcmp(s, mb_counters_papi_version()));
    EXPECT(NONEMPTY(str(root, "cuda_version")));
    EXPECT(NONEMPTY(str(root, "compiler")));
    EXPECT((s = str(root, "cflags")) && strstr(s, "-std=c11"));
    struct utsname u;
    uname(&u);
    EXPECT((s = str(root, "kernel")) && !strncmp(s, u.sysname, strlen(u.sysname)) &&
           strstr(s, u.release));
    const struct mb_kv *kv = mb_kv_get(root, "perf_event_paranoid");
    EXPECT(kv && (kv->type == MB_KV_INT || (kv->type == MB_KV_STR && !strcmp(kv->s, "unknown"))));
    const char *slurm = getenv("SLURM_JOB_ID");
    EXPECT((s = str(root, "slurm_job_id")) && !strcmp(s, slurm ? slurm : ""));
    EXPECT(str(root, "slurm_nodelist") != NULL);
    EXPECT((s = str(root, "job_script")) && !strcmp(s, "job_scripts/mb-test.sbatch"));
    /* the caller's keys are left to the caller */
    EXPECT(!mb_kv_get(root, "device") && !mb_kv_get(root, "seed") && !mb_kv_get(root, "emulation"));

    EXPECT((s = str(&r.environment, "MB_TEST_PROV")) && !strcmp(s, "xyz"));
    EXPECT(!mb_kv_get(&r.environment, "HOME"));
    static const char *const ok[] = {"OMPI_", "UCX_", "SLURM_", "PAPI_", "HDF5_", "CUDA_", "MB_"};
    for (size_t k = 0; k < r.environment.n; k++) {
        int allowed = 0;
        for (size_t j = 0; j < sizeof ok / sizeof *ok; j++)
            allowed |= !strncmp(r.environment.v[k].key, ok[j], strlen(ok[j]));
        EXPECT(allowed);
    }

    EXPECT(r.topology_xml && !strncmp(r.topology_xml, "<?xml", 5));
    printf("%zu root attributes, %zu environment variables, %zu bytes of topology\n",
           root->n, r.environment.n, r.topology_xml ? strlen(r.topology_xml) : 0);

    mb_result_free(&r);
    MPI_Finalize();
    return TEST_EXIT();
}
