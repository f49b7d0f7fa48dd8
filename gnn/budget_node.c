/* The memory budget of a node's ranks: the node's first rank creates the
 * limit (common/'s mb_budget: a cgroup, or mlock of the rest), the others
 * join it; every rank agrees on failure. The in-memory upper bound leaves
 * and rejoins it. */
#include "gnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gnn_budget_enforce(struct gnn_budget *g, MPI_Comm comm, size_t bytes, enum mb_budget_how how)
{
    struct mb_budget *budget = &g->b;
    g->bytes = bytes;
    if (!bytes)
        return 0;
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int lr;
    MPI_Comm_rank(node, &lr);
    char err[700] = "";
    int rc = 0;
    if (lr == 0)
        rc = mb_budget_enforce(budget, bytes, how, err, sizeof(err));
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    MPI_Bcast(budget, (int)sizeof(*budget), MPI_BYTE, 0, node);
    budget->owner = lr == 0 && !rc;
    if (lr != 0) { /* the pin and the settings to restore are the first rank's own */
        budget->pinned = NULL;
        budget->pinned_bytes = 0;
        budget->subtree_added = 0;
    }
    if (!rc && lr != 0)
        rc = mb_budget_join(budget, err, sizeof(err));
    if (!rc && budget->cgroup[0] && mb_budget_watch(budget) != 0) {
        snprintf(err, sizeof(err), "no thread to watch %s", budget->cgroup);
        rc = -1;
    }
    MPI_Comm_free(&node);
    int any = rc != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        if (rc)
            mb_warn("--mem-budget: cannot enforce %zu bytes: %s", bytes, err);
        if (!rc || budget->cgroup[0])
            mb_budget_release(budget); /* (the others leave before the owner removes it) */
        return -1;
    }
    g->on = 1;
    return 0;
}

/* (the watcher lifted the limit rather than let the kernel kill the run) */
int gnn_budget_hit(const struct gnn_budget *g, char *msg, size_t len)
{
    uint64_t peak = 0;
    if (!g || !g->on || !mb_budget_exceeded(&g->b, &peak))
        return 0;
    snprintf(msg, len,
             "--mem-budget %zu B (%.1f MiB) exceeded: %llu B (%.1f MiB) charged at the limit (%s); the run stops "
             "here, the cases finished are kept",
             g->bytes, (double)g->bytes / 1048576.0, (unsigned long long)peak, (double)peak / 1048576.0, g->b.method);
    return 1;
}

int gnn_budget_leave(struct gnn_budget *g, char *err, size_t len)
{
    return g->on ? mb_budget_suspend(&g->b, err, len) : 0;
}

void gnn_budget_enter(struct gnn_budget *g)
{
    char err[300];
    if (g->on && mb_budget_resume(&g->b, err, sizeof(err)) != 0) {
        snprintf(g->broken, sizeof(g->broken), "after inmem, the budget could not be restored: %s", err);
        mb_warn("--mem-budget: %s", g->broken);
    }
}

void gnn_budget_release(struct gnn_budget *g)
{
    if (!g->on)
        return;
    int owner = g->b.owner;
    if (!owner)
        mb_budget_release(&g->b);
    MPI_Barrier(MPI_COMM_WORLD); /* the node's others leave before the owner removes it */
    if (owner)
        mb_budget_release(&g->b);
    g->on = 0;
}

/* Async-signal-safe: a generate's temporary files go and this rank leaves
 * the budget's cgroup (its owner removes it); for the program's clean-up
 * hook, which runs however the run ends (signal, exit, watchdog). */
void gnn_cleanup_signal_safe(void *budget)
{
    struct gnn_budget *g = budget;
    gnn_generate_cleanup();
    if (g && g->on)
        mb_budget_release_signal(&g->b);
}

enum { BUDGET_WHERE = 640 }; /* bytes of one rank's line */

char *gnn_budget_ranks(const struct gnn_budget *g, MPI_Comm comm)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    char mine[BUDGET_WHERE], host[64] = "?";
    gethostname(host, sizeof(host) - 1);
    snprintf(mine, sizeof(mine), "rank %d on %s %s %s", rank, host, g->b.owner ? "created" : "joined",
             g->b.cgroup[0] ? g->b.cgroup : g->b.method);
    size_t n = (size_t)nranks;
    char *all = rank == 0 ? malloc(n * BUDGET_WHERE) : NULL;
    MPI_Gather(mine, BUDGET_WHERE, MPI_CHAR, all, BUDGET_WHERE, MPI_CHAR, 0, comm);
    if (rank != 0 || !all)
        return NULL;
    char *list = calloc(n, BUDGET_WHERE + 2);
    for (size_t r = 0; list && r < n; r++) {
        if (r)
            strcat(list, "; ");
        strcat(list, all + r * BUDGET_WHERE);
    }
    free(all);
    return list;
}

const char *gnn_budget_inmem_text(const struct gnn_budget *g)
{
    if (!g->on)
        return "no budget enforced";
    if (g->b.cgroup[0])
        return "exempt: inmem leaves the budget's cgroup and rejoins it after";
    if (strcmp(g->b.method, "mlock") != 0)
        return "no budget enforced (--budget-method none)";
    if (g->b.pinned || g->b.pinned_bytes)
        return "exempt: the first rank of the node releases its pin for inmem and pins the same bytes again after";
    return "exempt: nothing was pinned (available memory already within the budget)";
}
