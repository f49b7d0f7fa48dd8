/* Provenance of a run: what ran, where, when, built how, against which
 * libraries, under which environment. Collective; rank 0 keeps it. */
#include "harness.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <hdf5.h>
#include <hwloc.h>
#include <ucp/api/ucp.h>

extern char **environ;

/* Environment variables worth keeping: the ones that steer MPI, UCX, Slurm,
 * PAPI, HDF5, CUDA and movebench itself. HOME, PATH etc. stay private. */
static const char *const env_prefixes[] = {
    "OMPI_", "UCX_", "SLURM_", "PAPI_", "HDF5_", "CUDA_", "MB_", NULL,
};

/* An argument a POSIX shell reads back unchanged without quotes. */
static int shell_safe(const char *a)
{
    if (!*a)
        return 0;
    for (; *a; a++)
        if (!isalnum((unsigned char)*a) && !strchr("_@%+=:,./-", *a))
            return 0;
    return 1;
}

/* argv joined with spaces, each unsafe argument in single quotes (a quote
 * inside becomes '\''), so the line can be pasted back into a shell. */
static char *command_line(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += 4 * strlen(argv[i]) + 3;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (i)
            *p++ = ' ';
        if (shell_safe(argv[i])) {
            p = stpcpy(p, argv[i]);
            continue;
        }
        *p++ = '\'';
        for (const char *a = argv[i]; *a; a++) {
            if (*a == '\'')
                p = stpcpy(p, "'\\''");
            else
                *p++ = *a;
        }
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
}

/* Every rank's processor name in rank order; rank 0 records them. */
static void hosts(MPI_Comm comm, int rank, int nranks, struct mb_kvlist *root)
{
    char me[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(me, &len);
    char *all = rank == 0 ? calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME) : NULL;
    int ok = rank != 0 || all;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm); /* rank 0 out of memory: nobody sends */
    if (!ok) {
        mb_warn("provenance: out of memory gathering host names");
        return;
    }
    MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               comm);
    if (rank != 0)
        return;
    char *list = malloc((size_t)nranks * MPI_MAX_PROCESSOR_NAME + 1), *p = list;
    long long nnodes = 0;
    for (int i = 0; list && i < nranks; i++) {
        const char *h = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strncmp(h, all + (size_t)j * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME);
        nnodes += !seen;
        if (i)
            *p++ = ',';
        p += snprintf(p, MPI_MAX_PROCESSOR_NAME, "%.*s", MPI_MAX_PROCESSOR_NAME - 1, h);
    }
    if (list) {
        *p = '\0';
        mb_kv_int(root, "nnodes", nnodes);
        mb_kv_str(root, "hostnames", list);
    }
    free(list);
    free(all);
}

static void versions(struct mb_kvlist *root)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len;
    MPI_Get_library_version(buf, &len);
    rtrim(buf);
    mb_kv_str(root, "mpi_library_version", buf);
    mb_kv_str(root, "ucx_version", ucp_get_version_string());
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    snprintf(buf, sizeof buf, "%u.%u.%u", maj, min, rel);
    mb_kv_str(root, "hdf5_version", buf);
    mb_kv_str(root, "papi_version", mb_counters_papi_version());
    buf[0] = '\0';
    mb_cuda_describe(buf, sizeof buf);
    mb_kv_str(root, "cuda_version", buf[0] ? buf : "none");
}

static void system_info(struct mb_kvlist *root)
{
    struct utsname u;
    char buf[4 * sizeof u.release + 4];
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
        mb_kv_str(root, "kernel", buf);
    } else {
        mb_kv_str(root, "kernel", "unknown");
    }
    /* Whether perf events (PAPI's perf:: and presets) may be opened. An int
     * when readable; the string "unknown" otherwise, since any int is a
     * possible level. */
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int level;
    if (f && fscanf(f, "%d", &level) == 1)
        mb_kv_int(root, "perf_event_paranoid", level);
    else
        mb_kv_str(root, "perf_event_paranoid", "unknown");
    if (f)
        fclose(f);
    const char *v = getenv("SLURM_JOB_ID");
    mb_kv_str(root, "slurm_job_id", v ? v : "");
    v = getenv("SLURM_JOB_NODELIST");
    mb_kv_str(root, "slurm_nodelist", v ? v : "");
    if ((v = getenv("SLURM_JOB_NAME")))
        mb_kv_str(root, "slurm_job_name", v);
    /* Set by the job_scripts/ batch scripts: which one ran this. */
    if ((v = getenv("MB_JOB_SCRIPT")))
        mb_kv_str(root, "job_script", v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The whitelisted variables, sorted by name so two runs diff cleanly. */
static void environment(struct mb_kvlist *env)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **v = malloc((n + 1) * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        for (const char *const *p = env_prefixes; *p; p++)
            if (!strncmp(environ[i], *p, strlen(*p)) && strchr(environ[i], '=')) {
                v[k++] = environ[i];
                break;
            }
    qsort(v, k, sizeof *v, by_name);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(v[i], '=');
        char *name = strndup(v[i], (size_t)(eq - v[i]));
        if (name)
            mb_kv_str(env, name, eq + 1);
        free(name);
    }
    free(v);
}

/* hwloc's XML of this node, malloc'd (hwloc's buffer needs its own free). */
static char *topology_xml(void)
{
    hwloc_topology_t t;
    char *xml = NULL, *copy = NULL;
    int len;
    if (hwloc_topology_init(&t))
        return NULL;
    if (!hwloc_topology_load(t) && !hwloc_topology_export_xmlbuffer(t, &xml, &len, 0)) {
        copy = strdup(xml);
        hwloc_free_xmlbuffer(t, xml);
    }
    hwloc_topology_destroy(t);
    if (!copy)
        mb_warn("provenance: hwloc topology unavailable");
    return copy;
}

void mb_provenance_collect(MPI_Comm comm, const char *benchmark, int argc, char **argv,
                           struct mb_result *r)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    struct mb_kvlist *root = rank == 0 ? &r->root : NULL;
    if (rank == 0) {
        char buf[64];
        mb_kv_str(root, "benchmark", benchmark ? benchmark : "");
        char *cl = command_line(argc, argv);
        mb_kv_str(root, "command_line", cl ? cl : "");
        free(cl);
        mb_utc_iso8601(buf, sizeof buf);
        mb_kv_str(root, "start_time_utc", buf);
        mb_kv_str(root, "git_commit", mb_build_git_commit());
        mb_kv_int(root, "git_dirty", mb_build_git_dirty());
        mb_kv_int(root, "nranks", nranks);
    }
    hosts(comm, rank, nranks, root); /* the only collective step */
    if (rank != 0)
        return;
    versions(root);
    mb_kv_str(root, "compiler", mb_build_compiler());
    mb_kv_str(root, "cflags", mb_build_cflags());
    system_info(root);
    environment(&r->environment);
    free(r->topology_xml);
    r->topology_xml = topology_xml();
}
