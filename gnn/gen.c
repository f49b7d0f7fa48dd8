/* R-MAT dataset generator. Topology: a degree-count pass over the edge
 * tuples, then fill passes over vertex ranges sized to topo_mem (each
 * regenerates the tuples: the counter-based RNG makes that cheap and keeps
 * the result independent of threads), each list sorted and deduplicated
 * and streamed to the volume. Features stream through a fixed buffer. */
#include "gnn_internal.h"
#include "../offload/aio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void gnn_gen_defaults(struct gnn_gen_params *p)
{
    memset(p, 0, sizeof(*p));
    p->scale = 16;
    p->edge_factor = 16;
    p->dim = 128;
    p->classes = 16;
    p->seed = 1;
    p->train_frac = 0.01;
    p->val_frac = 0.01;
    p->signal = 0; /* by dim: GNN_SIGNAL_SNR / sqrt(3 dim) */
    p->ndev = 1;
    p->stripe = 64 << 10;
}

static void progress(const struct gnn_gen_params *p, const char *fmt, ...)
{
    if (p->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gnn-generate: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Writes the whole of buf to fd. */
static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t r = pwrite(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

/* The temporary files a generate in progress has created, for
 * gnn_generate_cleanup (a signal handler): fixed storage, no allocation. */
static char live_tmp[GNN_MAX_DEV + 1][4200];
static volatile sig_atomic_t live_on[GNN_MAX_DEV + 1];

void gnn_generate_cleanup(void)
{
    for (int i = 0; i <= GNN_MAX_DEV; i++)
        if (live_on[i]) {
            live_on[i] = 0;
            unlink(live_tmp[i]);
        }
}

/* Creates a temporary file of this process: exclusively, never through a
 * link, registered for the cleanup; slot k of the registry. fd or -1. */
static int create_tmp(int k, const char *path)
{
    snprintf(live_tmp[k], sizeof(live_tmp[k]), "%s", path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
        live_on[k] = 1;
    return fd;
}

/* Temporary files of generates whose process is gone (killed outright):
 * "data.N.tmp-PID" and "graph.meta.tmp-PID" with no /proc/PID. A live
 * process's are left alone. */
static void remove_stale_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *t = strstr(e->d_name, ".tmp-");
        int dev, pid, end = 0;
        if (!t || (sscanf(e->d_name, "data.%d.tmp-%d%n", &dev, &pid, &end) != 2 &&
                   sscanf(e->d_name, "graph.meta.tmp-%d%n", &pid, &end) != 1))
            continue;
        if (e->d_name[end] || pid <= 0 || pid == (int)getpid())
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "/proc/%d", pid);
        if (access(path, F_OK) == 0 || errno != ENOENT)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

int gnn_generate(const char *dir, const struct gnn_gen_params *pin, char *err, size_t errlen)
{
    struct gnn_gen_params p = *pin;
    if (!p.edge_factor) p.edge_factor = 16;
    if (!p.classes) p.classes = 16;
    if (p.train_frac == 0) p.train_frac = 0.01;
    if (p.val_frac == 0) p.val_frac = 0.01;
    if (p.signal == 0 && p.dim > 0) p.signal = (float)(GNN_SIGNAL_SNR / sqrt(3.0 * p.dim));
    if (!p.ndev) p.ndev = 1;
    if (!p.stripe) p.stripe = 64 << 10;
    if (p.scale < 4 || p.scale > 31) {
        snprintf(err, errlen, "scale %d: expected 4..31", p.scale);
        return -1;
    }
    if (p.dim < GNN_DIM_ALIGN || p.dim > 4096 || p.dim % GNN_DIM_ALIGN) {
        snprintf(err, errlen, "dim %d: expected a multiple of %d in %d..4096", p.dim, GNN_DIM_ALIGN,
                 GNN_DIM_ALIGN);
        return -1;
    }
    if (p.edge_factor < 1 || p.edge_factor > 1024 || p.classes < 2 || p.classes > 1 << 20 ||
        p.train_frac < 0 || p.val_frac < 0 || p.train_frac + p.val_frac > 1) {
        snprintf(err, errlen, "edge factor 1..1024, classes 2.., train+val fractions in [0,1]");
        return -1;
    }
    if (p.ndev < 1 || p.ndev > GNN_MAX_DEV || p.stripe % 4096) {
        snprintf(err, errlen, "ndev 1..%d and a stripe that is a multiple of 4096", GNN_MAX_DEV);
        return -1;
    }
    if (p.nthreads > 0)
        omp_set_num_threads(p.nthreads);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    remove_stale_tmp(dir);

    const uint64_t n = 1ULL << p.scale, T = (uint64_t)p.edge_factor * n;
    const uint64_t seed = p.seed;
    const int scale = p.scale;
    struct gnn_header h = {.magic = GNN_MAGIC, .version = GNN_FORMAT_VERSION, .header_bytes = GNN_HEADER_BYTES,
                           .seed = seed, .scale = scale, .edge_factor = p.edge_factor, .dim = p.dim,
                           .classes = p.classes, .n = n, .tuples = T, .train_frac = p.train_frac,
                           .val_frac = p.val_frac, .signal = p.signal, .ndev = (uint32_t)p.ndev,
                           .stripe = p.stripe};

    int rc = -1;
    uint64_t *offs = NULL;
    uint32_t *ids = NULL;
    int32_t *labels = NULL;
    char *fbuf = NULL;
    struct gnn_vol vol = {.ndev = p.ndev, .stripe = p.stripe};
    char tmp[GNN_MAX_DEV][4200], fin[GNN_MAX_DEV][4200], mtmp[4200], mfin[4200];
    int metafd = -1;
    for (int i = 0; i < p.ndev; i++)
        vol.fd[i] = -1;
    for (int i = 0; i < p.ndev; i++) {
        snprintf(fin[i], sizeof(fin[i]), "%s/data.%d", dir, i);
        snprintf(tmp[i], sizeof(tmp[i]), "%s/data.%d.tmp-%d", dir, i, (int)getpid());
        vol.fd[i] = create_tmp(i, tmp[i]);
        if (vol.fd[i] < 0) {
            snprintf(err, errlen, "%s: %s", tmp[i], strerror(errno));
            goto out;
        }
    }
    snprintf(mfin, sizeof(mfin), "%s/graph.meta", dir);
    snprintf(mtmp, sizeof(mtmp), "%s/graph.meta.tmp-%d", dir, (int)getpid());

    offs = calloc(n + 1, sizeof(*offs));
    if (!offs) {
        snprintf(err, errlen, "out of memory for %llu offsets", (unsigned long long)n);
        goto out;
    }
    progress(&p, "scale %d: %llu vertices, %llu tuples", scale, (unsigned long long)n,
             (unsigned long long)T);
    /* off_neigh depends only on n and the stripe, so the neighbours can be
     * written before m is known */
    uint64_t off_neigh = gnn_round_up(8 * (n + 1), p.stripe);
    uint64_t m = 0, sum_neigh = 0;
    int passes = 0;
    {
        int e = gnn_gen_topology(&vol, off_neigh, seed, scale, T, p.topo_mem, offs, &m, &sum_neigh, &passes);
        if (e) {
            snprintf(err, errlen, "%s: building the topology: %s", dir, strerror(-e));
            goto out;
        }
    }
    h.m = m;
    if (passes)
        progress(&p, "topology: %llu neighbour entries in %d vertex-range pass(es)", (unsigned long long)m, passes);
    else
        progress(&p, "topology: %llu neighbour entries (sorted build)", (unsigned long long)m);
    {
        int e = gnn_vol_pwrite(&vol, 0, offs, 8 * (n + 1));
        if (e) {
            snprintf(err, errlen, "%s: write: %s", dir, strerror(-e));
            goto out;
        }
    }
    h.sum_topology = gnn_checksum(offs, 8 * (n + 1), 0) + sum_neigh;

    /* 3: labels (from each node's neighbour list, read back in vertex
     * ranges of at most 8M entries) and split */
    labels = malloc(4 * n);
    ids = malloc(4 * n);
    if (!labels || !ids) {
        snprintf(err, errlen, "out of memory for labels");
        goto out;
    }
    {
        uint32_t *nb = NULL;
        size_t nb_cap = 0;
        for (uint64_t v0 = 0; v0 < n;) {
            uint64_t v1 = v0 + 1;
            while (v1 < n && offs[v1 + 1] - offs[v0] <= (8u << 20))
                v1++;
            size_t cnt = (size_t)(offs[v1] - offs[v0]);
            if (mb_grow((void **)&nb, &nb_cap, cnt ? cnt : 1, sizeof(*nb))) {
                free(nb);
                snprintf(err, errlen, "out of memory for neighbour lists");
                goto out;
            }
            int e = cnt ? gnn_vol_pread(&vol, off_neigh + 4 * offs[v0], nb, 4 * cnt) : 0;
            if (e) {
                free(nb);
                snprintf(err, errlen, "%s: reading the neighbours back: %s", dir, strerror(-e));
                goto out;
            }
            int bad = 0;
#pragma omp parallel reduction(|| : bad)
            {
                uint32_t *scratch = calloc((size_t)p.classes, sizeof(uint32_t));
                bad = !scratch;
#pragma omp for schedule(dynamic, 4096)
                for (uint64_t v = v0; v < v1; v++)
                    if (scratch)
                        labels[v] = gnn_node_label(seed, p.classes, v, nb + (offs[v] - offs[v0]),
                                                   offs[v + 1] - offs[v], scratch);
                free(scratch);
            }
            if (bad) {
                free(nb);
                snprintf(err, errlen, "out of memory for label scratch");
                goto out;
            }
            v0 = v1;
        }
        free(nb);
    }
    free(offs);
    offs = NULL;
    uint64_t ntr = 0, nva = 0;
    for (uint64_t v = 0; v < n; v++)
        if (gnn_node_split(seed, p.train_frac, p.val_frac, v) == 1)
            ids[ntr++] = (uint32_t)v;
    for (uint64_t v = 0; v < n; v++)
        if (gnn_node_split(seed, p.train_frac, p.val_frac, v) == 2)
            ids[ntr + nva++] = (uint32_t)v;
    h.n_train = ntr;
    h.n_val = nva;
    gnn_layout(&h);
    if (h.off_neigh != off_neigh) {
        snprintf(err, errlen, "internal: layout moved the neighbours section");
        goto out;
    }
    h.sum_labels = gnn_checksum(labels, 4 * n, 0);
    h.sum_split = gnn_checksum(ids, 4 * (ntr + nva), 0);

    /* 4: features, streamed */
    {
        size_t rows_per = (16u << 20) / h.row_bytes;
        if (rows_per < 1)
            rows_per = 1;
        if (posix_memalign((void **)&fbuf, 4096, rows_per * h.row_bytes) != 0) {
            fbuf = NULL;
            snprintf(err, errlen, "out of memory for the feature buffer");
            goto out;
        }
        uint64_t report = n / 10 ? n / 10 : n;
        for (uint64_t v0 = 0; v0 < n; v0 += rows_per) {
            uint64_t cnt = n - v0 < rows_per ? n - v0 : rows_per;
#pragma omp parallel for schedule(static)
            for (uint64_t i = 0; i < cnt; i++)
                gnn_feature_row(&h, v0 + i, (float *)(fbuf + i * h.row_bytes));
            int e = gnn_vol_pwrite(&vol, h.off_feat + v0 * h.row_bytes, fbuf, cnt * h.row_bytes);
            if (e) {
                snprintf(err, errlen, "%s: write features: %s", dir, strerror(-e));
                goto out;
            }
            if ((v0 + cnt) / report != v0 / report && v0 + cnt < n)
                progress(&p, "features: %llu%%", (unsigned long long)((v0 + cnt) * 100 / n));
        }
    }
    for (int i = 0; i < p.ndev; i++) {
        if (ftruncate(vol.fd[i], (off_t)h.file_bytes) != 0) {
            snprintf(err, errlen, "%s: %s", tmp[i], strerror(errno));
            goto out;
        }
    }

    /* 5: meta file */
    h.sum_header = gnn_header_sum(&h);
    metafd = create_tmp(GNN_MAX_DEV, mtmp);
    if (metafd < 0) {
        snprintf(err, errlen, "%s: %s", mtmp, strerror(errno));
        goto out;
    }
    {
        char hb[GNN_HEADER_BYTES];
        memset(hb, 0, sizeof(hb));
        memcpy(hb, &h, sizeof(h));
        int e = write_all(metafd, hb, sizeof(hb), 0);
        if (!e) e = write_all(metafd, labels, 4 * n, h.meta_labels);
        if (!e) e = write_all(metafd, ids, 4 * ntr, h.meta_train);
        if (!e) e = write_all(metafd, ids + ntr, 4 * nva, h.meta_val);
        if (!e && ftruncate(metafd, (off_t)h.meta_bytes) != 0) e = -errno;
        if (e) {
            snprintf(err, errlen, "%s: %s", mtmp, strerror(-e));
            goto out;
        }
    }
    for (int i = 0; i < p.ndev; i++) {
        if (fsync(vol.fd[i]) != 0 || rename(tmp[i], fin[i]) != 0) {
            snprintf(err, errlen, "%s: %s", fin[i], strerror(errno));
            goto out;
        }
        live_on[i] = 0;
    }
    if (fsync(metafd) != 0 || rename(mtmp, mfin) != 0) {
        snprintf(err, errlen, "%s: %s", mfin, strerror(errno));
        goto out;
    }
    live_on[GNN_MAX_DEV] = 0;
    /* data files of an earlier dataset with more devices would confuse a reader */
    for (int i = p.ndev; i < GNN_MAX_DEV; i++) {
        char old[4200];
        snprintf(old, sizeof(old), "%s/data.%d", dir, i);
        if (unlink(old) != 0)
            break;
    }
    progress(&p, "wrote %s: %llu B topology, %llu B features over %d file(s)", dir,
             (unsigned long long)gnn_topology_bytes(&h), (unsigned long long)gnn_feature_bytes(&h),
             p.ndev);
    rc = 0;
out:
    if (rc != 0)
        gnn_generate_cleanup(); /* the temporary files not yet renamed */
    for (int i = 0; i < p.ndev; i++)
        if (vol.fd[i] >= 0)
            close(vol.fd[i]);
    if (metafd >= 0)
        close(metafd);
    free(offs);
    free(ids);
    free(labels);
    free(fbuf);
    return rc;
}
