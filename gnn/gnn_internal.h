/* gnn/ internals shared by its files (not part of the public API). */
#ifndef MB_GNN_INTERNAL_H
#define MB_GNN_INTERNAL_H

#include "gnn.h"
#include "../common/common.h"
#include "../offload/aio.h"

#include <stdio.h>

#define GNN_MAX_DEV 64

static inline uint64_t gnn_round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* The striped logical volume as plain file descriptors (generator,
 * topology verification). */
struct gnn_vol {
    int fd[GNN_MAX_DEV];
    int ndev;
    size_t stripe;
};
/* pwrite/pread of the logical range [off, off+len), split by stripe unit.
 * 0, or -errno. */
int gnn_vol_pwrite(const struct gnn_vol *v, uint64_t off, const void *buf, size_t len);
int gnn_vol_pread(const struct gnn_vol *v, uint64_t off, void *buf, size_t len);

/* Layout from the sizes: fills the offset and size fields of h. */
void gnn_layout(struct gnn_header *h);
uint64_t gnn_header_sum(const struct gnn_header *h);

struct gnn_dataset {
    char dir[4096];
    struct gnn_header h;
    struct gnn_open_opts o;
    uint64_t *offsets;
    int32_t *labels;
    uint32_t *train, *val;
    struct gnn_vol vol;          /* O_RDONLY fds of the data files */
    struct mb_storage sto;       /* GNN_AIO: the volume in offload's "async" storage mode */
    struct mb_aio *aio;          /* its engine (sto.eng) when open, else NULL */
    void *map[GNN_MAX_DEV];      /* GNN_MMAP: each data file mapped */
    int map_advice;              /* enum gnn_map_advice in force on map[] */
    uint32_t *neigh_mem;         /* GNN_MEM topology */
    float *feat_mem;             /* GNN_MEM features */
};

/* mmap: copy logical [off, off+len) out of the mapped files. */
void gnn_map_copy(const struct gnn_dataset *ds, uint64_t off, void *dst, size_t len);

/* The generator's CSR: writes the neighbours at off_neigh of vol, fills
 * offs[0..n]; *passes = 0 for the sorted build, else the number of vertex
 * range passes. 0, or -errno. */
int gnn_gen_topology(const struct gnn_vol *vol, uint64_t off_neigh, uint64_t seed, int scale, uint64_t T,
                     uint64_t topo_mem, uint64_t *offs, uint64_t *m, uint64_t *sum, int *passes);
/* Sorts l[0..n) ascending (insertion sort for short lists, else qsort):
 * neighbour lists and sampled neighbours. */
void gnn_sort_u32(uint32_t *l, uint64_t n);

/* The reader's error message (gnn_reader_error), set by the sampler. */
void gnn_reader_set_error(struct gnn_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the reader's error for neighbour `pos` of `node` holding `value`,
 * not a node id: names the data file and byte it came from. */
void gnn_reader_bad_neighbour(struct gnn_reader *r, uint64_t node, uint32_t pos, uint64_t value);

/* The dataset a reader reads. */
struct gnn_dataset *gnn_reader_dataset(const struct gnn_reader *r);

#endif
