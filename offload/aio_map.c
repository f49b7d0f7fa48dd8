/* Striping math, CAM's I/O-thread rule and the verification pattern. */
#include "aio.h"
#include "aio_pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t mb_aio_map(uint64_t off, size_t stripe, int ndev, int *dev, uint64_t *devoff)
{
    uint64_t unit = off / stripe, in = off % stripe;
    *dev = (int)(unit % (uint64_t)ndev);
    *devoff = unit / (uint64_t)ndev * stripe + in;
    return stripe - (size_t)in;
}

int mb_aio_volume_rw(const int *fds, int ndev, size_t stripe, int op, uint64_t off, size_t len, void *buf)
{
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        int dev;
        uint64_t devoff;
        size_t room = mb_aio_map(off + done, stripe, ndev, &dev, &devoff);
        size_t n = len - done < room ? len - done : room;
        ssize_t k = op == MB_AIO_WRITE ? pwrite(fds[dev], p + done, n, (off_t)devoff)
                                       : pread(fds[dev], p + done, n, (off_t)devoff);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return op == MB_AIO_WRITE ? -ENOSPC : -ENODATA;
        done += (size_t)k; /* a short transfer resumes at the next byte */
    }
    return 0;
}

int mb_aio_open_volume(const char *const *paths, int n, int flags, int *direct, int *fds, int *bad)
{
    const char *inj = getenv("MB_AIO_INJECT");
    int refuse = inj && strcmp(inj, "nodirect") == 0;
    flags |= O_NOFOLLOW | O_CLOEXEC;
    for (int f = 0; f < n; f++)
        fds[f] = -1;
    for (int f = 0; f < n; f++) {
        errno = EINVAL;
        if (*direct && !refuse)
            fds[f] = open(paths[f], flags | O_DIRECT);
        if (*direct && fds[f] < 0 && errno == EINVAL) {
            *direct = 0; /* the files opened before go buffered too */
            for (int e = 0; e < f; e++)
                fcntl(fds[e], F_SETFL, fcntl(fds[e], F_GETFL) & ~O_DIRECT);
        }
        if (fds[f] < 0 && !*direct)
            fds[f] = open(paths[f], flags);
        if (fds[f] < 0) {
            int e = errno;
            for (int g = 0; g < f; g++) {
                close(fds[g]);
                fds[g] = -1;
            }
            *bad = f;
            errno = e;
            return -1;
        }
    }
    return 0;
}

int mb_aio_adaptive_threads(int ndev, double io_frac)
{
    int lo = (ndev + 3) / 4, hi = (ndev + 1) / 2;
    if (lo < 1)
        lo = 1;
    if (hi < lo)
        hi = lo;
    if (!(io_frac >= 0)) /* also NaN */
        io_frac = 0;
    if (io_frac > 1)
        io_frac = 1;
    /* I/O-bound work gets the upper end, compute-bound the lower. */
    return lo + (int)((double)(hi - lo) * io_frac + 0.5);
}

int mb_aio_parse_threads(const char *s, int *out)
{
    char *end = NULL;
    if (strcmp(s, "adaptive") == 0) {
        *out = MB_AIO_ADAPTIVE;
        return 0;
    }
    long long v = strtoll(s, &end, 10);
    if (!end || *end || end == s || v < 0 || v > 64)
        return -1;
    *out = (int)v;
    return 0;
}

double mb_aio_io_fraction(uint64_t wait_ns, uint64_t compute_ns)
{
    if (wait_ns + compute_ns == 0)
        return 1;
    return (double)wait_ns / ((double)wait_ns + (double)compute_ns);
}

void mb_aio_pattern_fill(void *buf, uint64_t off, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    if (off % 8 == 0 && len % 8 == 0) { /* writes refill slots in the timed loop: word by word */
        for (; i < len; i += 8) {
            uint64_t v = mb_aio_pattern_word(seed, off + i);
            memcpy(p + i, &v, 8);
        }
        return;
    }
    while (i < len) {
        uint64_t pos = off + i, w = pos & ~7ULL, v = mb_aio_pattern_word(seed, w);
        size_t skip = (size_t)(pos - w), n = 8 - skip;
        if (n > len - i)
            n = len - i;
        memcpy(p + i, (unsigned char *)&v + skip, n);
        i += n;
    }
}

size_t mb_aio_pattern_check(const void *buf, uint64_t off, size_t len, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t i = 0;
    while (i < len) {
        uint64_t pos = off + i, w = pos & ~7ULL, v = mb_aio_pattern_word(seed, w);
        size_t skip = (size_t)(pos - w), n = 8 - skip;
        if (n > len - i)
            n = len - i;
        if (memcmp(p + i, (unsigned char *)&v + skip, n) != 0) {
            for (size_t k = 0; k < n; k++)
                if (p[i + k] != ((unsigned char *)&v)[skip + k])
                    return i + k;
        }
        i += n;
    }
    return len;
}
