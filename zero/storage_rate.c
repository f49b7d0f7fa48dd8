/* The PS's storage rate for the step model, from a file written and read
 * back in the run's --dir (issue 19: "storage rate (mb_ostore / file
 * read/write)"), never from the steps the model predicts. */
#include "zero.h"

#include "../common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char pattern(size_t i) { return (unsigned char)((i * 2654435761u) >> 13); }

int zero_model_measure_storage(const char *dir, size_t bytes, double *write_Bps, double *read_Bps, char *err,
                               size_t errlen)
{
    static atomic_uint seq;
    char path[4096];
    size_t chunk = 1 << 20;
    if (bytes == 0) {
        snprintf(err, errlen, "storage rate: 0 bytes to measure");
        return -1;
    }
    snprintf(path, sizeof path, "%s/zero-storage-%ld-%u.bin", dir, (long)getpid(), atomic_fetch_add(&seq, 1));
    unsigned char *buf = malloc(chunk);
    int fd = buf ? open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600) : -1;
    if (fd < 0) {
        snprintf(err, errlen, "storage rate: %s: %s", path, buf ? strerror(errno) : "out of memory");
        free(buf);
        return -1;
    }
    int rc = -1;
    double t0 = mb_now();
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        for (size_t i = 0; i < n; i++)
            buf[i] = pattern(off + i);
        if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
            snprintf(err, errlen, "storage rate: %s: write: %s", path, errno ? strerror(errno) : "short write");
            goto out;
        }
    }
    if (fsync(fd) != 0) {
        snprintf(err, errlen, "storage rate: %s: fsync: %s", path, strerror(errno));
        goto out;
    }
    double tw = mb_now() - t0;
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    t0 = mb_now();
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        if (pread(fd, buf, n, (off_t)off) != (ssize_t)n) {
            snprintf(err, errlen, "storage rate: %s: read: %s", path, errno ? strerror(errno) : "short read");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            if (buf[i] != pattern(off + i)) {
                snprintf(err, errlen, "storage rate: %s: byte %zu read back wrong", path, off + i);
                goto out;
            }
    }
    double tr = mb_now() - t0;
    *write_Bps = (double)bytes / tw;
    *read_Bps = (double)bytes / tr;
    rc = 0;
out:
    close(fd);
    unlink(path);
    free(buf);
    return rc;
}

double zero_model_storage_Bps(double read_per_param, double write_per_param, double read_Bps, double write_Bps)
{
    if (!(read_Bps > 0) || !(write_Bps > 0) || !(read_per_param >= 0) || !(write_per_param >= 0) ||
        !(read_per_param + write_per_param > 0))
        return NAN;
    return (read_per_param + write_per_param) / (read_per_param / read_Bps + write_per_param / write_Bps);
}

int zero_model_calibrate(const struct nn_gpt_config *cfg, int B, const char *dir, size_t storage_bytes,
                         struct zero_model_in *in, char *err, size_t errlen)
{
    double g = zero_model_measure_gemm(cfg, B, 3), a = zero_model_measure_adam((size_t)4 << 20, 3), w, r;
    if (!(g > 0) || !(a > 0)) {
        snprintf(err, errlen, "model calibration: the %s (%s) failed its check or ran out of memory",
                 !(g > 0) ? "GEMM rate" : "Adam rate", cfg->name);
        return -1;
    }
    if (zero_model_measure_storage(dir, storage_bytes, &w, &r, err, errlen) != 0)
        return -1;
    in->gemm_flops = g;
    in->adam_params_s = in->pool_adam_params_s = a;
    in->ps_bytes_per_param = 26;
    in->storage_Bps = zero_model_storage_Bps(12, 14, r, w);
    return 0;
}
