/* Thread pinning through hwloc (the allowed PUs only: a cgroup's or
 * taskset's cpuset is respected), the last-level cache's size, and
 * another thread's CPU time. */
#include "common.h"

#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static hwloc_topology_t topo;
static int topo_ok;

static void topo_load(void)
{
    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    topo_ok = 1;
}

static int topo_get(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, topo_load);
    return topo_ok;
}

int mb_pu_count(void)
{
    if (!topo_get())
        return 0;
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    return n > 0 ? n : 0;
}

size_t mb_llc_bytes(void)
{
    if (!topo_get())
        return 0;
    size_t best = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L3CACHE, o)) != NULL;)
        best = o->attr->cache.size > best ? o->attr->cache.size : best;
    for (hwloc_obj_t o = NULL; !best && (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L2CACHE, o)) != NULL;)
        best = o->attr->cache.size > best ? o->attr->cache.size : best;
    return (size_t)best;
}

int mb_pin_thread(int pu, char *err, size_t errlen)
{
    if (!topo_get()) {
        snprintf(err, errlen, "hwloc: cannot load the topology");
        return -1;
    }
    hwloc_obj_t o = pu >= 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)pu) : NULL;
    if (!o) {
        snprintf(err, errlen, "PU %d: not among the %d this process may use", pu, mb_pu_count());
        return -1;
    }
    if (hwloc_set_cpubind(topo, o->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
        snprintf(err, errlen, "PU %d: hwloc_set_cpubind: %s", pu, strerror(errno));
        return -1;
    }
    return 0;
}

double mb_thread_cpu_s(unsigned long tid)
{
    clockid_t cid;
    struct timespec ts;
    if (pthread_getcpuclockid((pthread_t)tid, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
