/* mb-zero's "emulation" text (zero.h): what stands in for the paper's
 * hardware, and where the roles' ranks ran (one host, or the hosts of a
 * multi-node run from the recorded host list). */
#include "zero.h"

#include <stdlib.h>
#include <string.h>

/* Appends ", "-separated the distinct hosts of ranks [from, to) to buf. */
static void role_hosts(char **host, int nhost, int from, int to, char *buf, size_t len)
{
    for (int r = from; r < to && r < nhost; r++) {
        int seen = 0;
        for (int q = from; q < r && !seen; q++)
            seen = strcmp(host[q], host[r]) == 0;
        size_t used = strlen(buf);
        if (!seen && used < len)
            snprintf(buf + used, len - used, "%s%s", r > from ? ", " : "", host[r]);
    }
}

/* Where the roles ran: "" when on one host (or unknown), else a list. */
static void placement(const struct zero_layout *lay, const char *hostnames, char *out, size_t len)
{
    *out = '\0';
    char *copy = hostnames ? strdup(hostnames) : NULL, **host = NULL;
    int n = 0, distinct = 0;
    if (copy && (host = calloc(strlen(copy) / 2 + 2, sizeof(*host))))
        for (char *save = NULL, *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save))
            host[n++] = h;
    for (int r = 0; r < n; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(host[q], host[r]) == 0;
        distinct += !seen;
    }
    if (distinct > 1) {
        const char *name[3] = {"workers", "switches", "parameter servers"};
        int count[3] = {lay->W, lay->K, lay->N}, first = 0;
        snprintf(out, len, "%d hosts (", distinct);
        for (int k = 0; k < 3; first += count[k], k++) {
            size_t used = strlen(out);
            if (count[k] <= 0 || used >= len)
                continue;
            snprintf(out + used, len - used, "%s%s on ", first ? "; " : "", name[k]);
            role_hosts(host, n, first, first + count[k], out, len);
        }
        size_t used = strlen(out);
        if (used < len)
            snprintf(out + used, len - used, "), the ranks on one host sharing its cores");
    }
    free(host);
    free(copy);
}

void zero_emulation(const struct zero_layout *lay, const char *hostnames, int disdp, int paced, char *buf,
                    size_t len)
{
    char where[400];
    placement(lay, hostnames, where, sizeof(where));
    snprintf(buf, len, "workers, switches and parameter servers: MPI ranks on %s%s%s",
             *where ? where : "this host's cores",
             disdp ? "; SmartNIC: an agent thread per worker doing its MPI traffic; SmartSwitch: switch ranks summing "
                     "and multicasting; PS storage: mb_ostore files in --dir" : "",
             !paced ? ""
             : disdp ? "; network link per worker: the agent's bytes paced per direction by mb_link (" MB_LINK_EMULATION ")"
                     : "; network link per worker: its collective sends paced per direction by a token bucket (mb_coll pacing hook)");
}
