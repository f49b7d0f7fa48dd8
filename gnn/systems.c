/* The systems mb-gnn trains with, side by side: one row each. A new
 * system that combines existing mechanisms is one row here; a new
 * mechanism (a placement policy, an access path) is its own file in gnn/
 * and a row that names it. Cases run in this order: the in-memory upper
 * bound first, since the others' bound needs its time. */
#include "gnn.h"

#include <string.h>

static const struct gnn_system systems[] = {
    /* name          topology  features  cached placement            pipelined advice              upper bound */
    {"inmem",        GNN_MEM,  GNN_MEM,  0, GNN_PLACE_HYPERION,   1, GNN_ADVICE_NORMAL, 1},
    {"hyperion",     GNN_AIO,  GNN_AIO,  1, GNN_PLACE_HYPERION,   1, GNN_ADVICE_NORMAL, 0},
    {"topo-first",   GNN_AIO,  GNN_AIO,  1, GNN_PLACE_TOPO_FIRST, 1, GNN_ADVICE_NORMAL, 0},
    {"feat-first",   GNN_AIO,  GNN_AIO,  1, GNN_PLACE_FEAT_FIRST, 1, GNN_ADVICE_NORMAL, 0},
    {"nopipe",       GNN_AIO,  GNN_AIO,  1, GNN_PLACE_HYPERION,   0, GNN_ADVICE_NORMAL, 0},
    {"nocache",      GNN_AIO,  GNN_AIO,  0, GNN_PLACE_HYPERION,   1, GNN_ADVICE_NORMAL, 0},
    {"mmap",         GNN_MMAP, GNN_MMAP, 0, GNN_PLACE_HYPERION,   1, GNN_ADVICE_NORMAL, 0},
    {"mmap-random",  GNN_MMAP, GNN_MMAP, 0, GNN_PLACE_HYPERION,   1, GNN_ADVICE_RANDOM, 0},
};

size_t gnn_nsystems(void) { return sizeof(systems) / sizeof(systems[0]); }

const struct gnn_system *gnn_system_at(size_t i) { return i < gnn_nsystems() ? &systems[i] : NULL; }

const struct gnn_system *gnn_system_find(const char *name)
{
    for (size_t i = 0; name && i < gnn_nsystems(); i++)
        if (!strcmp(systems[i].name, name))
            return &systems[i];
    return NULL;
}

void gnn_system_choices(char *buf, size_t len)
{
    size_t n = 0;
    if (len)
        buf[0] = 0;
    for (size_t i = 0; i < gnn_nsystems() && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", systems[i].name);
}
