/* What a run records about the machine under the algorithms: the memory
 * bandwidth to compare mem_busbw with, and what stands for missing hardware. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double mb_coll_memcpy_gbps(MPI_Comm comm, size_t bytes, FILE *log)
{
    int nranks, rank;
    MPI_Comm_size(comm, &nranks);
    MPI_Comm_rank(comm, &rank);
    bytes = bytes > ((size_t)64 << 20) ? (size_t)64 << 20 : bytes < 4096 ? 4096 : bytes;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b)
        mb_die(1, "out of memory: 2 x %zu bytes for the memcpy bandwidth", bytes);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        memcpy(b, a, bytes);
        MPI_Barrier(comm);
        double gbps = (double)bytes * nranks / (MPI_Wtime() - t0) / 1e9;
        best = gbps > best ? gbps : best;
        char *t = a;
        a = b, b = t;
    }
    free(a);
    free(b);
    if (rank == 0 && log)
        fprintf(log, "# memcpy bandwidth, %d ranks copying %zu bytes each at once: %.2f GB/s "
                     "(mem_busbw = 2*ranks*size/t against it)\n", nranks, bytes, best);
    return best;
}

size_t mb_coll_describe_emulation(struct mb_coll_ctx *ctx, int ranks_per_node, int pool_used, char *buf,
                                  size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (ranks_per_node > 0) {
        MPI_Comm host;
        MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &host);
        int hr, lead, hosts;
        MPI_Comm_rank(host, &hr);
        lead = hr == 0;
        MPI_Allreduce(&lead, &hosts, 1, MPI_INT, MPI_SUM, ctx->comm);
        MPI_Comm_free(&host);
        int fake = (ctx->size + ranks_per_node - 1) / ranks_per_node;
        used += (size_t)snprintf(buf + used, len - used,
                                 "fake_nodes=%d: --ranks-per-node %d splits %d ranks on %d host%s into nodes of "
                                 "consecutive ranks, for the collectives library's algorithms and the model (the "
                                 "MPI library's own collectives see the real hosts)",
                                 fake, ranks_per_node, ctx->size, hosts, hosts == 1 ? "" : "s");
    }
    const char *backing = mb_coll_pool_backing(ctx);
    if (pool_used && ctx->nnodes == 1 && backing[0] && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%spool=%s stands for CXL memory shared by the node's ranks",
                                 used ? "; " : "", backing);
    return used < len ? used : len - 1;
}
