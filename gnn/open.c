/* Opening a dataset: every check names the file it failed on. */
#include "gnn_internal.h"
#include "../offload/aio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *gnn_access_name(enum gnn_access a)
{
    switch (a) {
    case GNN_MEM: return "mem";
    case GNN_MMAP: return "mmap";
    case GNN_AIO: return "aio";
    }
    return "?";
}

int gnn_access_parse(const char *s, enum gnn_access *out)
{
    for (int a = GNN_MEM; a <= GNN_AIO; a++)
        if (!strcmp(s, gnn_access_name((enum gnn_access)a))) {
            *out = (enum gnn_access)a;
            return 0;
        }
    return -1;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -ENODATA;
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

static void *xmalloc(size_t n)
{
    return malloc(n ? n : 1);
}

struct gnn_dataset *gnn_open(const char *dir, const struct gnn_open_opts *o, char *err,
                             size_t errlen)
{
    struct gnn_dataset *ds = calloc(1, sizeof(*ds));
    if (!ds) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(ds->dir, sizeof(ds->dir), "%s", dir);
    if (o)
        ds->o = *o;
    for (int i = 0; i < GNN_MAX_DEV; i++)
        ds->vol.fd[i] = -1;
    char path[4200];
    snprintf(path, sizeof(path), "%s/graph.meta", dir);
    int mfd = open(path, O_RDONLY);
    if (mfd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    struct gnn_header *h = &ds->h;
    struct stat st;
    if (fstat(mfd, &st) != 0 || st.st_size < (off_t)sizeof(*h) ||
        read_at(mfd, h, sizeof(*h), 0) != 0) {
        snprintf(err, errlen, "%s: truncated header (%lld bytes)", path, (long long)st.st_size);
        goto fail_m;
    }
    if (h->magic != GNN_MAGIC) {
        snprintf(err, errlen, "%s: not a movebench GNN dataset (bad magic)", path);
        goto fail_m;
    }
    if (h->version != GNN_FORMAT_VERSION) {
        snprintf(err, errlen, "%s: format version %u, this build reads version %d", path,
                 h->version, GNN_FORMAT_VERSION);
        goto fail_m;
    }
    if (h->sum_header != gnn_header_sum(h)) {
        snprintf(err, errlen, "%s: header checksum mismatch (corrupted header)", path);
        goto fail_m;
    }
    {
        /* the layout must follow from the sizes */
        struct gnn_header c = *h;
        gnn_layout(&c);
        if (h->scale < 4 || h->scale > 31 || h->n != 1ULL << h->scale || h->ndev < 1 ||
            h->ndev > GNN_MAX_DEV || h->stripe % 4096 || h->stripe == 0 ||
            h->dim % GNN_DIM_ALIGN || h->classes < 2 || memcmp(&c, h, sizeof(c)) != 0) {
            snprintf(err, errlen, "%s: inconsistent sizes in the header", path);
            goto fail_m;
        }
    }
    if ((uint64_t)st.st_size != h->meta_bytes) {
        snprintf(err, errlen, "%s: size %lld bytes, the header says %llu", path,
                 (long long)st.st_size, (unsigned long long)h->meta_bytes);
        goto fail_m;
    }
    uint64_t n = h->n;
    ds->labels = xmalloc(4 * n);
    ds->train = xmalloc(4 * h->n_train);
    ds->val = xmalloc(4 * h->n_val);
    ds->offsets = xmalloc(8 * (n + 1));
    if (!ds->labels || !ds->train || !ds->val || !ds->offsets) {
        snprintf(err, errlen, "out of memory for the labels and offsets");
        goto fail_m;
    }
    if (read_at(mfd, ds->labels, 4 * n, h->meta_labels) || read_at(mfd, ds->train, 4 * h->n_train, h->meta_train) ||
        read_at(mfd, ds->val, 4 * h->n_val, h->meta_val)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail_m;
    }
    close(mfd);
    mfd = -1;
    if (gnn_checksum(ds->labels, 4 * n, 0) != h->sum_labels) {
        snprintf(err, errlen, "%s: labels checksum mismatch (corrupted labels)", path);
        goto fail;
    }
    if (gnn_checksum(ds->train, 4 * h->n_train, 0) + gnn_checksum(ds->val, 4 * h->n_val, 4 * h->n_train) !=
        h->sum_split) {
        snprintf(err, errlen, "%s: train/validation split checksum mismatch", path);
        goto fail;
    }
    for (uint64_t v = 0; v < n; v++)
        if (ds->labels[v] < 0 || ds->labels[v] >= h->classes) {
            snprintf(err, errlen, "%s: label of node %llu out of range", path, (unsigned long long)v);
            goto fail;
        }

    /* data files */
    const char *paths[GNN_MAX_DEV];
    char pbuf[GNN_MAX_DEV][4200];
    ds->vol.ndev = (int)h->ndev;
    ds->vol.stripe = h->stripe;
    for (uint32_t i = 0; i < h->ndev; i++) {
        snprintf(pbuf[i], sizeof(pbuf[i]), "%s/data.%u", dir, i);
        paths[i] = pbuf[i];
        ds->vol.fd[i] = open(pbuf[i], O_RDONLY);
        if (ds->vol.fd[i] < 0) {
            snprintf(err, errlen, "%s: %s", pbuf[i], strerror(errno));
            goto fail;
        }
        if (fstat(ds->vol.fd[i], &st) != 0 || (uint64_t)st.st_size != h->file_bytes) {
            snprintf(err, errlen, "%s: size %lld bytes, the header says %llu (truncated or wrong file)",
                     pbuf[i], (long long)st.st_size, (unsigned long long)h->file_bytes);
            goto fail;
        }
    }
    int e = gnn_vol_pread(&ds->vol, h->off_offsets, ds->offsets, 8 * (n + 1));
    if (e) {
        snprintf(err, errlen, "%s: reading the offsets: %s", pbuf[0], strerror(-e));
        goto fail;
    }
    if (ds->offsets[0] != 0 || ds->offsets[n] != h->m) {
        snprintf(err, errlen, "%s: CSR offsets do not match the header (corrupted topology)", pbuf[0]);
        goto fail;
    }
    for (uint64_t v = 0; v < n; v++)
        if (ds->offsets[v + 1] < ds->offsets[v]) {
            snprintf(err, errlen, "%s: CSR offsets decrease at node %llu (corrupted topology)", pbuf[0],
                     (unsigned long long)v);
            goto fail;
        }
    if (ds->o.verify_topology || ds->o.topo == GNN_MEM) {
        uint64_t sum = gnn_checksum(ds->offsets, 8 * (n + 1), 0);
        uint32_t *nb = xmalloc(4 * h->m);
        if (!nb) {
            snprintf(err, errlen, "out of memory for the neighbours");
            goto fail;
        }
        e = gnn_vol_pread(&ds->vol, h->off_neigh, nb, 4 * h->m);
        if (e) {
            free(nb);
            snprintf(err, errlen, "%s: reading the neighbours: %s", pbuf[0], strerror(-e));
            goto fail;
        }
        sum += gnn_checksum(nb, 4 * h->m, 8 * (n + 1));
        if (ds->o.topo == GNN_MEM)
            ds->neigh_mem = nb;
        else
            free(nb);
        if (sum != h->sum_topology) {
            snprintf(err, errlen, "%s: topology checksum mismatch (corrupted data files)", pbuf[0]);
            goto fail;
        }
    }
    if (ds->o.feat == GNN_MEM) {
        if (posix_memalign((void **)&ds->feat_mem, 4096, gnn_round_up(gnn_feature_bytes(h), 4096) + 4096)) {
            ds->feat_mem = NULL;
            snprintf(err, errlen, "out of memory for %llu B of features",
                     (unsigned long long)gnn_feature_bytes(h));
            goto fail;
        }
        e = gnn_vol_pread(&ds->vol, h->off_feat, ds->feat_mem, gnn_feature_bytes(h));
        if (e) {
            snprintf(err, errlen, "%s: reading the features: %s", pbuf[0], strerror(-e));
            goto fail;
        }
    }
    if (ds->o.feat == GNN_MMAP || ds->o.topo == GNN_MMAP) {
        for (uint32_t i = 0; i < h->ndev; i++) {
            ds->map[i] = mmap(NULL, h->file_bytes, PROT_READ, MAP_SHARED, ds->vol.fd[i], 0);
            if (ds->map[i] == MAP_FAILED) {
                ds->map[i] = NULL;
                snprintf(err, errlen, "%s: mmap: %s", pbuf[i], strerror(errno));
                goto fail;
            }
        }
    }
    if (ds->o.feat == GNN_AIO || ds->o.topo == GNN_AIO) {
        /* the storage registry's async mode: the batched engine, waited for later */
        struct mb_storage_params sp = {
            .paths = paths, .nfiles = (int)h->ndev, .stripe = h->stripe, .buffered = ds->o.buffered,
            .engine = {.nthreads = ds->o.aio_threads, .arena = ds->o.aio_arena, .depth = ds->o.aio_depth},
        };
        char aerr[512];
        if (mb_storage_open(&ds->sto, mb_storage_find("async"), &sp, aerr, sizeof(aerr)) != 0) {
            snprintf(err, errlen, "%s: %s", dir, aerr);
            goto fail;
        }
        ds->aio = ds->sto.eng;
    }
    return ds;
fail_m:
    close(mfd);
fail:
    gnn_close(ds);
    return NULL;
}

void gnn_close(struct gnn_dataset *ds)
{
    if (!ds)
        return;
    if (ds->aio)
        mb_storage_close(&ds->sto);
    ds->aio = NULL;
    for (int i = 0; i < GNN_MAX_DEV; i++) {
        if (ds->map[i])
            munmap(ds->map[i], ds->h.file_bytes);
        if (ds->vol.fd[i] >= 0)
            close(ds->vol.fd[i]);
    }
    free(ds->offsets);
    free(ds->labels);
    free(ds->train);
    free(ds->val);
    free(ds->neigh_mem);
    free(ds->feat_mem);
    free(ds);
}

const struct gnn_header *gnn_dataset_header(const struct gnn_dataset *ds) { return &ds->h; }
const uint64_t *gnn_offsets(const struct gnn_dataset *ds) { return ds->offsets; }
const int32_t *gnn_labels(const struct gnn_dataset *ds) { return ds->labels; }
struct mb_aio *gnn_dataset_aio(const struct gnn_dataset *ds) { return ds->aio; }
const uint32_t *gnn_neighbours_mem(const struct gnn_dataset *ds) { return ds->neigh_mem; }
const float *gnn_features_mem(const struct gnn_dataset *ds) { return ds->feat_mem; }
enum gnn_access gnn_dataset_topo_access(const struct gnn_dataset *ds) { return ds->o.topo; }
enum gnn_access gnn_dataset_feat_access(const struct gnn_dataset *ds) { return ds->o.feat; }

const uint32_t *gnn_train_ids(const struct gnn_dataset *ds, size_t *count)
{
    *count = ds->h.n_train;
    return ds->train;
}

const uint32_t *gnn_val_ids(const struct gnn_dataset *ds, size_t *count)
{
    *count = ds->h.n_val;
    return ds->val;
}

uint64_t gnn_dataset_mem_bytes(const struct gnn_dataset *ds)
{
    const struct gnn_header *h = &ds->h;
    uint64_t b = 8 * (h->n + 1) + 4 * h->n + 4 * (h->n_train + h->n_val);
    if (ds->neigh_mem)
        b += 4 * h->m;
    if (ds->feat_mem)
        b += gnn_feature_bytes(h);
    return b;
}

void gnn_map_copy(const struct gnn_dataset *ds, uint64_t off, void *dst, size_t len)
{
    char *p = dst;
    while (len) {
        int dev;
        uint64_t devoff;
        size_t room = mb_aio_map(off, ds->vol.stripe, ds->vol.ndev, &dev, &devoff);
        size_t k = room < len ? room : len;
        memcpy(p, (const char *)ds->map[dev] + devoff, k);
        p += k;
        off += k;
        len -= k;
    }
}

float *gnn_alloc_rows(struct gnn_dataset *ds, size_t rows)
{
    size_t bytes = rows * ds->h.row_bytes;
    if (ds->aio)
        return mb_storage_alloc(&ds->sto, bytes ? bytes : 4096);
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 4096) != 0)
        return NULL;
    return p;
}

void gnn_free_rows(struct gnn_dataset *ds, float *p)
{
    if (ds->aio)
        mb_storage_free(&ds->sto, p);
    else
        free(p);
}

int gnn_map_advise(struct gnn_dataset *ds, enum gnn_map_advice a)
{
    if (!ds->map[0])
        return -EINVAL;
    int adv = a == GNN_ADVICE_RANDOM ? MADV_RANDOM : MADV_NORMAL;
    for (uint32_t i = 0; i < ds->h.ndev; i++)
        if (madvise(ds->map[i], ds->h.file_bytes, adv) != 0)
            return -errno;
    ds->map_advice = (int)a;
    return 0;
}

const char *gnn_map_advice_name(const struct gnn_dataset *ds)
{
    if (!ds->map[0])
        return "";
    return ds->map_advice == GNN_ADVICE_RANDOM ? "random" : "normal";
}
