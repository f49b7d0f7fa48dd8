/* Process grids (DaCe's table or PxQ) and the row/column collectives
 * through the registry. */
#include "polybench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int grid_table[][3] = {
    {1, 1, 1}, {2, 1, 2}, {4, 2, 2}, {8, 2, 4}, {16, 4, 4},
    {32, 4, 8}, {64, 8, 8}, {128, 8, 16}, {256, 16, 16},
};

int mb_pb_grid_table(int p, int *px, int *py)
{
    for (size_t i = 0; i < sizeof(grid_table) / sizeof(grid_table[0]); i++)
        if (grid_table[i][0] == p) {
            *px = grid_table[i][1];
            *py = grid_table[i][2];
            return 0;
        }
    return -1;
}

int mb_pb_grid_parse(const char *s, int *px, int *py)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || a < 1 || a > 1 << 20)
        return -1;
    const char *q = end + 1;
    long b = strtol(q, &end, 10);
    if (end == q || *end || b < 1 || b > 1 << 20)
        return -1;
    *px = (int)a;
    *py = (int)b;
    return 0;
}

static int usable_everywhere(const struct mb_pb_grid *g, char *err, size_t errlen)
{
    char why[256] = "";
    struct mb_coll_ctx *ctxs[2] = {g->row_ctx, g->col_ctx};
    enum mb_coll_kind kinds[2] = {MB_COLL_BCAST, MB_COLL_ALLREDUCE};
    const struct mb_coll_algo *algos[2] = {g->bcast_algo, g->allreduce_algo};
    int ok = 1;
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++)
            if (ok && !mb_coll_usable(algos[k], ctxs[c], kinds[k], why, sizeof(why))) {
                snprintf(err, errlen, "--algo %s: %s unusable on the grid's %s: %s", algos[k]->name,
                         mb_coll_kind_names[kinds[k]], c ? "columns" : "rows", why);
                ok = 0;
            }
    /* the answer may differ between the row and column communicators */
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g->cart);
    if (ok && !all)
        snprintf(err, errlen, "--algo %s: unusable on another rank's row or column", algos[0]->name);
    return all ? 0 : -1;
}

int mb_pb_grid_create(MPI_Comm comm, int px, int py, const char *algo, struct mb_pb_grid *g, char *err,
                      size_t errlen)
{
    memset(g, 0, sizeof(*g));
    g->cart = g->row = g->col = g->line = MPI_COMM_NULL;
    int size;
    MPI_Comm_size(comm, &size);
    if (px * py != size) {
        snprintf(err, errlen, "--grid %dx%d: %d ranks, not %d", px, py, px * py, size);
        return -1;
    }
    if (mb_pb_algo_check(algo, err, errlen) != 0)
        return -1;
    g->bcast_algo = mb_pb_algo_for(algo, MB_COLL_BCAST);
    g->allreduce_algo = mb_pb_algo_for(algo, MB_COLL_ALLREDUCE);
    int dims[2] = {px, py}, periods[2] = {0, 0}, coords[2];
    MPI_Cart_create(comm, 2, dims, periods, 0, &g->cart);
    MPI_Comm_rank(g->cart, &g->rank);
    MPI_Cart_coords(g->cart, g->rank, 2, coords);
    g->p = size, g->px = px, g->py = py, g->cx = coords[0], g->cy = coords[1];
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, line_dims[1] = {size}, line_periods[1] = {0};
    MPI_Cart_sub(g->cart, keep_row, &g->row);
    MPI_Cart_sub(g->cart, keep_col, &g->col);
    MPI_Cart_create(comm, 1, line_dims, line_periods, 0, &g->line);
    char e1[256] = "", e2[256] = "";
    g->row_ctx = mb_coll_ctx_create(g->row, 0, e1, sizeof(e1));
    g->col_ctx = mb_coll_ctx_create(g->col, 0, e2, sizeof(e2));
    int ok = g->row_ctx && g->col_ctx, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g->cart);
    if (!all) {
        snprintf(err, errlen, "collectives context on the grid: %s%s", e1, *e1 ? "" : *e2 ? e2 : "failed on another rank");
        mb_pb_grid_free(g);
        return -1;
    }
    if (usable_everywhere(g, err, errlen) != 0) {
        mb_pb_grid_free(g);
        return -1;
    }
    return 0;
}

void mb_pb_grid_free(struct mb_pb_grid *g)
{
    if (g->row_ctx)
        mb_coll_ctx_free(g->row_ctx);
    if (g->col_ctx)
        mb_coll_ctx_free(g->col_ctx);
    MPI_Comm *comms[4] = {&g->row, &g->col, &g->line, &g->cart};
    for (int i = 0; i < 4; i++)
        if (*comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(comms[i]);
    memset(g, 0, sizeof(*g));
}

static struct mb_coll_ctx *axis_ctx(const struct mb_pb_grid *g, enum mb_pb_axis axis)
{
    return axis == MB_PB_ROW ? g->row_ctx : g->col_ctx;
}

/* this process's seconds inside the grid's communication (one MPI rank: a
 * plain static is its own) */
static double comm_seconds;

double mb_pb_comm_seconds(void) { return comm_seconds; }

void mb_pb_comm_add(double seconds) { comm_seconds += seconds; }

static int timed_run(const struct mb_pb_grid *g, enum mb_pb_axis axis, const struct mb_coll_args *a)
{
    double t0 = MPI_Wtime();
    const struct mb_coll_algo *al = a->kind == MB_COLL_BCAST ? g->bcast_algo : g->allreduce_algo;
    int rc = al->run(axis_ctx(g, axis), a);
    comm_seconds += MPI_Wtime() - t0;
    return rc;
}

int mb_pb_bcast(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *buf, size_t n, int root)
{
    struct mb_coll_args a = {.kind = MB_COLL_BCAST, .sendbuf = NULL, .recvbuf = buf, .count = n,
                             .dtype = MB_COLL_DOUBLE, .op = MB_COLL_SUM, .root = root};
    return timed_run(g, axis, &a);
}

int mb_pb_allreduce(const struct mb_pb_grid *g, enum mb_pb_axis axis, const double *in, double *out, size_t n)
{
    struct mb_coll_args a = {.kind = MB_COLL_ALLREDUCE, .sendbuf = in, .recvbuf = out, .count = n,
                             .dtype = MB_COLL_DOUBLE, .op = MB_COLL_SUM, .root = 0};
    return timed_run(g, axis, &a);
}

int mb_pb_ibcast_start(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *buf, size_t n, int root,
                       struct mb_coll_req **req)
{
    *req = NULL;
    if ((axis == MB_PB_ROW ? g->py : g->px) < 2)
        return MPI_SUCCESS; /* a one-rank axis moves nothing */
    double t0 = MPI_Wtime();
    char err[256];
    struct mb_coll_args a = {.kind = MB_COLL_BCAST, .sendbuf = NULL, .recvbuf = buf, .count = n,
                             .dtype = MB_COLL_DOUBLE, .op = MB_COLL_SUM, .root = root};
    int rc = MPI_SUCCESS;
    if (mb_coll_start_algo(axis_ctx(g, axis), g->bcast_algo, &a, NULL, req, err, sizeof(err)) != 0) {
        mb_warn("%s", err);
        rc = MPI_ERR_OTHER;
    } else if (mb_coll_progress(*req) < 0) { /* the first sends go now: a root posts them in progress */
        rc = MPI_ERR_OTHER;
    }
    comm_seconds += MPI_Wtime() - t0;
    return rc;
}

int mb_pb_ibcast_test(struct mb_coll_req *req)
{
    if (!req)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    int rc = mb_coll_progress(req);
    comm_seconds += MPI_Wtime() - t0;
    return rc < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int mb_pb_ibcast_wait(struct mb_coll_req **req)
{
    if (!*req)
        return MPI_SUCCESS;
    double t0 = MPI_Wtime();
    int rc = mb_coll_req_wait(*req);
    *req = NULL;
    comm_seconds += MPI_Wtime() - t0;
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* a buffer of an axis may serve both kinds */
static int wants_registered(const struct mb_pb_grid *g)
{
    return g->bcast_algo->wants_registered || g->allreduce_algo->wants_registered;
}

double *mb_pb_buf(const struct mb_pb_grid *g, enum mb_pb_axis axis, size_t n)
{
    size_t bytes = (n ? n : 1) * sizeof(double);
    if (wants_registered(g)) {
        char err[256];
        return mb_coll_alloc(axis_ctx(g, axis), bytes, err, sizeof(err));
    }
    return calloc(n ? n : 1, sizeof(double));
}

void mb_pb_buf_free(const struct mb_pb_grid *g, enum mb_pb_axis axis, double *p)
{
    if (!p)
        return;
    if (wants_registered(g))
        mb_coll_release(axis_ctx(g, axis), p);
    else
        free(p);
}
