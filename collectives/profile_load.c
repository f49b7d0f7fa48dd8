/* A run's profile: loaded once on rank 0 and shared, or measured here and
 * written (--calibrate's driver around mb_coll_calibrate). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 if rank 0 can create path.tmp (the calibration must not run for
 * nothing), else -1 on every rank. */
static int writable(MPI_Comm comm, int rank, const char *path, char *err, size_t errlen)
{
    int bad = 0;
    if (rank == 0) {
        char tmp[1100];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
        if (fd < 0) {
            snprintf(err, errlen, "--profile %s: cannot write: %s", path, strerror(errno));
            bad = 1;
        } else {
            close(fd);
            unlink(tmp);
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
    return bad ? -1 : 0;
}

int mb_coll_profile_load(MPI_Comm comm, const char *named, int needed, int calibrate, char *path,
                         size_t pathlen, struct mb_coll_profile *prof, char *err, size_t errlen)
{
    int rank, nranks, state = 0; /* 1 loaded, 0 none, -1 bad */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    if (named)
        snprintf(path, pathlen, "%s", named);
    else
        mb_coll_profile_default(path, pathlen);
    err[0] = '\0';
    if (calibrate && nranks < 2) {
        snprintf(err, errlen, "--calibrate: needs 2 or more ranks on one node (got %d)", nranks);
        return -1;
    }
    if (calibrate)
        return writable(comm, rank, path, err, errlen);
    if (rank == 0) {
        char why[1400];
        int missing = access(path, F_OK) != 0;
        if (!named && !needed && missing)
            state = 0;
        else if (mb_coll_profile_read(path, prof, why, sizeof(why)) == 0)
            state = 1;
        else {
            snprintf(err, errlen, "--profile: %s%s", why, missing ? " (make one with mb-coll --calibrate)" : "");
            state = -1;
        }
    }
    MPI_Bcast(&state, 1, MPI_INT, 0, comm);
    if (state > 0)
        MPI_Bcast(prof, (int)sizeof(*prof), MPI_BYTE, 0, comm);
    return state;
}

int mb_coll_calibrate_write(struct mb_coll_ctx *ctx, const char *path, int argc, char *const *argv, FILE *log,
                            char *err, size_t errlen)
{
    double t0 = MPI_Wtime();
    struct mb_coll_profile prof;
    err[0] = '\0';
    if (ctx->nnodes != 1) {
        snprintf(err, errlen, "--calibrate: the ranks must share one node (found %d nodes)", ctx->nnodes);
        return MB_COLL_CALIBRATE_NODES;
    }
    char cerr[400];
    if (mb_coll_calibrate(ctx, &prof, log, cerr, sizeof(cerr)) != 0) {
        snprintf(err, errlen, "--calibrate: %s; no profile written", cerr);
        return MB_COLL_CALIBRATE_FAILED;
    }
    int rc = 0;
    if (ctx->rank == 0) {
        size_t len = 0;
        for (int i = 0; i < argc && len < sizeof(prof.command); i++)
            len += (size_t)snprintf(prof.command + len, sizeof(prof.command) - len, "%s%s", i ? " " : "", argv[i]);
        char why[1400];
        if (mb_coll_profile_write(path, &prof, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--profile: %s", why);
            rc = MB_COLL_CALIBRATE_WRITE;
        }
        else if (log)
            fprintf(log, "# wrote %s in %.1f s\n", path, MPI_Wtime() - t0);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, ctx->comm);
    return rc;
}

int mb_coll_calibrate_net_write(struct mb_coll_ctx *ctx, const char *path, struct mb_coll_profile *prof,
                                FILE *log, char *err, size_t errlen)
{
    char cerr[400];
    err[0] = '\0';
    if (ctx->nnodes < 2 || ctx->one_host) {
        mb_coll_calibrate_net(ctx, prof, NULL, cerr, sizeof(cerr));
        snprintf(err, errlen, "--calibrate-net: %s", cerr);
        return MB_COLL_CALIBRATE_NODES;
    }
    if (mb_coll_calibrate_net(ctx, prof, log, cerr, sizeof(cerr)) != 0) {
        snprintf(err, errlen, "--calibrate-net: %s; %s not changed", cerr, path);
        return MB_COLL_CALIBRATE_FAILED;
    }
    int rc = 0;
    if (ctx->rank == 0) {
        char why[1400];
        if (mb_coll_profile_write(path, prof, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--profile: %s", why);
            rc = MB_COLL_CALIBRATE_WRITE;
        } else if (log)
            fprintf(log, "# added the link's terms to %s\n", path);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, ctx->comm);
    return rc;
}

int mb_coll_calibrate_run(struct mb_coll_ctx *ctx, int net, const char *path, struct mb_coll_profile *prof,
                          int argc, char *const *argv, FILE *log)
{
    char err[1500];
    int rc = net ? mb_coll_calibrate_net_write(ctx, path, prof, log, err, sizeof(err))
                 : mb_coll_calibrate_write(ctx, path, argc, argv, log, err, sizeof(err));
    if (rc && ctx->rank == 0)
        mb_warn("%s", err);
    return rc;
}
