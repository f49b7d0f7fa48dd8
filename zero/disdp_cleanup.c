/* A killed PS's files (disdp_internal.h): a SIGKILLed process runs no clean-up, so
 * its mb_ostore files would stay in --dir. At set-up every PS tells the
 * other ranks its host and its store's file paths; each rank on that host
 * (the PS too) keeps them; zero_disdp_remove_files, the program's
 * clean-up hook (async-signal-safe: unlink only), removes them when the
 * run ends any other way than through the mode's teardown: mpirun's
 * SIGTERM to the survivors, their exit after an MPI error, the --timeout
 * watchdog. The teardown disarms it (the PS's own close removes the
 * files then). Every file of a store is shared (--files N: N of them),
 * one broadcast per file, until the PS sends an empty path. */
#include "disdp_internal.h"
#include "zero.h"
#include "../offload/aio.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { MAX_FILES = 256, PATH_LEN = 1024 }; /* store files kept per host, all PSes */

static char paths[MAX_FILES][PATH_LEN];
static atomic_int npaths, armed;

void zero_disdp_remove_files(void *arg)
{
    (void)arg;
    if (!atomic_exchange(&armed, 0))
        return;
    for (int i = 0; i < atomic_load(&npaths); i++)
        unlink(paths[i]);
}

int mb_disdp_files_share(const struct mb_disdp_cfg *c, struct mb_disdp_ps *ps)
{
    char host[MPI_MAX_PROCESSOR_NAME], buf[MPI_MAX_PROCESSOR_NAME + PATH_LEN];
    int me, hl;
    MPI_Comm_rank(c->comm, &me);
    MPI_Get_processor_name(host, &hl);
    int full = 0;
    for (int k = 0; k < c->N; k++) {
        int root = c->W + c->K + k;
        struct mb_ostore *s = me == root && ps ? mb_disdp_ps_store(ps) : NULL;
        for (int f = 0;; f++) { /* the store's files in turn; an empty path ends them */
            memset(buf, 0, sizeof buf);
            if (me == root) {
                const char *p = s ? mb_ostore_path(s, f) : NULL;
                snprintf(buf, MPI_MAX_PROCESSOR_NAME, "%s", host);
                if (p && strlen(p) < PATH_LEN)
                    snprintf(buf + MPI_MAX_PROCESSOR_NAME, PATH_LEN, "%s", p);
            }
            if (MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, root, c->comm) != MPI_SUCCESS)
                return -1;
            const char *p = buf + MPI_MAX_PROCESSOR_NAME;
            if (!*p)
                break;
            int n = atomic_load(&npaths);
            if (strcmp(buf, host) != 0)
                continue;
            if (n < MAX_FILES) {
                snprintf(paths[n], PATH_LEN, "%s", p);
                atomic_store(&npaths, n + 1);
            } else
                full = 1;
        }
    }
    if (atomic_load(&npaths) > 0)
        atomic_store(&armed, 1);
    return full ? -1 : 0;
}

void mb_disdp_files_disarm(void)
{
    atomic_store(&armed, 0);
    atomic_store(&npaths, 0);
}
