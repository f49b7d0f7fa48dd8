/* movebench gnn/: out-of-core GNN data (Hyperion, ICDE'25). An R-MAT
 * graph generator that writes a dataset to storage, readers that fetch
 * neighbour lists and feature rows from memory, mmap or the asynchronous
 * storage engine (offload/aio), a PyG-style neighbour sampler building
 * nn_sage_blocks, Hyperion's presampled unified static cache with chunked
 * transaction-minimising placement over two memory tiers, and the TPC
 * (throughput per cost) model with hardware profiles.
 *
 * The systems compared (a table) and the trainer that runs one: the slot
 * pipeline, the pass driver, the TPC profiling run, measured rates.
 *
 * Depends on offload/ (storage engine), nn/ (struct nn_sage_block),
 * collectives/ (gradient allreduce) and common/. Programs (mb-gnn) are
 * options, set-up from the systems table, callbacks and reporting.
 *
 * ---- Dataset on storage (format version GNN_FORMAT_VERSION) -------------
 * A dataset is a directory:
 *   DIR/graph.meta  header (4096 B, struct gnn_header), then labels
 *                   int32[n], train ids uint32[n_train], validation ids
 *                   uint32[n_val]; each section starts at a 4096 B boundary.
 *   DIR/data.0 .. DIR/data.<ndev-1>
 *                   one logical volume striped RAID0-like (stripe unit
 *                   `stripe` bytes, offload/aio's mb_aio_map) over ndev
 *                   files standing for ndev SSDs; every file has exactly
 *                   file_bytes bytes. Logical sections, each starting at a
 *                   stripe boundary:
 *                     offsets    uint64[n+1]  CSR row pointers (in neighbours)
 *                     neighbours uint32[m]    CSR column indices
 *                     features   float32[n][dim], row v at feat_off + v*row_bytes
 * Topology: Graph500 R-MAT (A,B,C,D = .57,.19,.19,.05), n = 2^scale
 * vertices, edge_factor*n generated edge tuples, vertex ids scrambled by a
 * seed-keyed bijection. Stored undirected: each tuple (u,v) with u != v
 * gives u->v and v->u; self-loops dropped; each list sorted ascending and
 * deduplicated. m counts the stored (directed) entries.
 * Features: dim must be a multiple of 128 (row_bytes = 4*dim is a multiple
 * of 512 B, the O_DIRECT granularity, so rows need no padding).
 * x[v][j] = signal * c[z(v)][j] + u(seed, v, j), c in {-1,+1} and u
 * uniform in [-1,1), both from a counter hash; z(v) = hash(seed, v) mod
 * classes is v's latent class. So every row can be recomputed (verified)
 * from (seed, v). The label depends on the neighbourhood (version 2):
 * label(v) = argmax_k 0.5 [z(v) = k] + share of v's neighbours of latent
 * class k (gnn_node_label): a node's own class unless a class holds more
 * than half of its neighbours beyond its own class's share (low-degree
 * nodes take their neighbours' class). GraphSAGE's self and mean-aggregated
 * neighbour terms express exactly this score, but the signal (default SNR
 * GNN_SIGNAL_SNR per node) is noisy and the sampled neighbours a subset, so
 * accuracy rises over several epochs rather than in one.
 * Split: node v is a training node when hash(seed, v) falls below
 * train_frac, a validation node when below train_frac + val_frac; ids are
 * listed ascending.
 * Everything depends only on the parameters and the seed, never on the
 * number of threads or ranks (each edge is generated from (seed, index)
 * by a counter-based RNG).
 *
 * ---- Sampling (PyG convention) ------------------------------------------
 * fanout[0] is the hop next to the seeds (PyG NeighborSampler sizes[0]),
 * fanout[1] the next hop out, and so on. The GNN's first (input) layer
 * consumes the outermost hop's block, its last layer the seeds' hop.
 * So PyG [25,10] == DGL [10,25]. Uniform without replacement; a node with
 * degree <= fan-out keeps all its neighbours. Deterministic for (seed,
 * epoch, batch): the choice for node v at hop h depends only on (seed,
 * epoch, batch, h, v).
 */
#ifndef MB_GNN_H
#define MB_GNN_H

#include <stddef.h>
#include <stdint.h>

#include "../common/common.h"
#include "../nn/nn.h"
#include "../collectives/coll.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mb_aio;

#define GNN_FORMAT_VERSION 2 /* 2: labels from the neighbourhood (1: the node's own class) */
/* Default feature signal: a row's projection on its class centroid stands
 * this many noise standard deviations above the others' (signal * sqrt(3 dim)). */
#define GNN_SIGNAL_SNR 4.0
#define GNN_MAGIC 0x314e4e47424d4d00ULL /* "\0MMBGNN1" little-endian */
#define GNN_HEADER_BYTES 4096
#define GNN_MAX_HOPS 4
#define GNN_DIM_ALIGN 128 /* dim must be a multiple: rows are 512 B multiples */

/* ===== hashing (shared by generator, verifier and sampler) ============== */

/* A keyed hash of up to four words (mb_mix64 of common.h, chained). */
uint64_t gnn_hash4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* ===== generation ========================================================= */

struct gnn_gen_params {
    int scale;          /* n = 2^scale vertices (4..31) */
    int edge_factor;    /* generated tuples = edge_factor * n; 0 = 16 */
    int dim;            /* feature dimension, multiple of 128, 128..4096 */
    int classes;        /* labels in [0, classes); 0 = 16 */
    uint64_t seed;
    double train_frac;  /* fraction of nodes that train; 0 = 0.01 (paper) */
    double val_frac;    /* validation fraction; 0 = 0.01 */
    float signal;       /* class-centroid amplitude vs noise in [-1,1); 0 = GNN_SIGNAL_SNR / sqrt(3 dim) */
    int ndev;           /* data files (stand-in SSDs); 0 = 1 */
    size_t stripe;      /* stripe unit, multiple of 4096; 0 = 64 KiB */
    int nthreads;       /* OpenMP threads; 0 = default. Output does not depend on it */
    uint64_t topo_mem;  /* bytes the topology build may hold; 0 = up to half the
                           machine's memory. With 32 B per tuple available the
                           CSR is built by a parallel radix sort of all
                           entries; below that in vertex-range passes (each
                           regenerates the tuples) so memory stays bounded.
                           Both give the same bytes. Features always stream
                           through a fixed 16 MiB buffer. */
    int quiet;          /* no progress lines on stderr */
};

/* Fills p with the defaults above (scale 16, dim 128, seed 1). */
void gnn_gen_defaults(struct gnn_gen_params *p);
/* Writes the dataset into directory dir (created if missing; existing
 * dataset files are replaced through temporary names). 0, or -1 with the
 * reason in err. */
int gnn_generate(const char *dir, const struct gnn_gen_params *p, char *err, size_t errlen);
/* Removes the temporary files of a generate in progress in this process
 * (async-signal-safe: for a signal handler; a failed generate calls it).
 * They are created exclusively (O_EXCL | O_NOFOLLOW) under names holding
 * the pid, so only this process's are removed. */
void gnn_generate_cleanup(void);

/* R-MAT edge e of the generated tuple list (before scrambling: raw ids),
 * and the scrambling bijection on [0, 2^scale); exposed for tests. */
void gnn_rmat_edge(uint64_t seed, int scale, uint64_t e, uint64_t *u, uint64_t *v);
uint64_t gnn_scramble(uint64_t seed, int scale, uint64_t x);
/* The same bijection with its seed-derived constants computed once. */
struct gnn_scrambler {
    uint64_t mul[3], add[3], mask;
    int sh;
};
void gnn_scrambler_init(struct gnn_scrambler *s, uint64_t seed, int scale);
static inline uint64_t gnn_scramble_fast(const struct gnn_scrambler *s, uint64_t x)
{
    for (int r = 0; r < 3; r++) {
        x = (x * s->mul[r] + s->add[r]) & s->mask;
        x ^= x >> s->sh;
    }
    return x;
}
/* Latent class z(v) (what v's features encode), label, split membership
 * (0 none, 1 train, 2 validation) and feature value of node v, as the
 * generator computes them. The label takes v's neighbour list (deg ids)
 * and a zeroed scratch of `classes` counters (left zeroed):
 * argmax_k 0.5 [z(v) = k] + (share of v's neighbours u with z(u) = k),
 * ties to z(v), then to the smaller k; z(v) when deg = 0. */
int32_t gnn_node_class(uint64_t seed, int classes, uint64_t v);
int32_t gnn_node_label(uint64_t seed, int classes, uint64_t v, const uint32_t *nbrs, uint64_t deg,
                       uint32_t *scratch);
int gnn_node_split(uint64_t seed, double train_frac, double val_frac, uint64_t v);
float gnn_feature_value(uint64_t seed, int classes, float signal, uint64_t v, uint32_t j);

/* ===== header and opening ================================================ */

struct gnn_header {
    uint64_t magic;           /* GNN_MAGIC */
    uint32_t version;         /* GNN_FORMAT_VERSION */
    uint32_t header_bytes;    /* GNN_HEADER_BYTES */
    uint64_t seed;
    int32_t scale, edge_factor, dim, classes;
    uint64_t n;               /* vertices */
    uint64_t m;               /* stored neighbour entries (directed) */
    uint64_t tuples;          /* generated edge tuples */
    uint64_t n_train, n_val;
    double train_frac, val_frac;
    float signal;
    uint32_t ndev;
    uint64_t stripe;
    uint64_t row_bytes;       /* 4 * dim */
    uint64_t file_bytes;      /* size of each data file */
    /* logical volume offsets */
    uint64_t off_offsets, off_neigh, off_feat;
    /* graph.meta offsets */
    uint64_t meta_labels, meta_train, meta_val, meta_bytes;
    /* checksums (gnn_checksum) */
    uint64_t sum_topology;    /* offsets then neighbours, as stored */
    uint64_t sum_labels;
    uint64_t sum_split;       /* train ids then validation ids */
    uint64_t sum_header;      /* of this struct with sum_header = 0 */
};

/* Position-keyed 64-bit checksum of len bytes that start at byte `pos` of
 * a longer stream; checksums of consecutive pieces combine by addition
 * (so it parallelises and streams). pos and len multiples of 4. */
uint64_t gnn_checksum(const void *p, size_t len, uint64_t pos);

enum gnn_access {
    GNN_MEM = 0,   /* loaded into memory at open (the in-memory upper bound) */
    GNN_MMAP = 1,  /* through the page cache (PyG/Ginex-like baseline) */
    GNN_AIO = 2,   /* through offload/aio (O_DIRECT, batched, asynchronous) */
};
const char *gnn_access_name(enum gnn_access a);
int gnn_access_parse(const char *s, enum gnn_access *out); /* "mem"|"mmap"|"aio": 0, else -1 */

struct gnn_open_opts {
    enum gnn_access topo;     /* where neighbour lists are read from */
    enum gnn_access feat;     /* where feature rows are read from */
    int verify_topology;      /* checksum the topology at open (reads it all) */
    /* offload/aio engine options (used when topo or feat is GNN_AIO) */
    int aio_threads;          /* 0 = engine default */
    unsigned aio_depth;       /* 0 = engine default */
    size_t aio_arena;         /* registered arena; 0 = engine default */
    int buffered;             /* never O_DIRECT */
};

struct gnn_dataset;

/* Opens DIR. Checks magic, version, header checksum, sizes of every file
 * (a short or long file is named), labels and split checksums, and with
 * verify_topology the topology checksum. The CSR offsets are always held
 * in memory (8 B per node); labels and split ids too. o may be NULL:
 * everything in memory. Errors: NULL and one line in err naming the file. */
struct gnn_dataset *gnn_open(const char *dir, const struct gnn_open_opts *o, char *err,
                             size_t errlen);
void gnn_close(struct gnn_dataset *ds);
const struct gnn_header *gnn_dataset_header(const struct gnn_dataset *ds);
const uint64_t *gnn_offsets(const struct gnn_dataset *ds);       /* [n+1] */
const int32_t *gnn_labels(const struct gnn_dataset *ds);         /* [n] */
const uint32_t *gnn_train_ids(const struct gnn_dataset *ds, size_t *count);
const uint32_t *gnn_val_ids(const struct gnn_dataset *ds, size_t *count);
/* The engine (NULL unless something is GNN_AIO). */
struct mb_aio *gnn_dataset_aio(const struct gnn_dataset *ds);
/* In-memory arrays (NULL unless that part is GNN_MEM). */
const uint32_t *gnn_neighbours_mem(const struct gnn_dataset *ds);
const float *gnn_features_mem(const struct gnn_dataset *ds);
enum gnn_access gnn_dataset_topo_access(const struct gnn_dataset *ds);
enum gnn_access gnn_dataset_feat_access(const struct gnn_dataset *ds);
/* Bytes the dataset holds in memory (offsets, labels, split, and whatever
 * GNN_MEM loaded), for memory-budget accounting. */
uint64_t gnn_dataset_mem_bytes(const struct gnn_dataset *ds);
/* Access advice for the mapped files (GNN_MMAP): NORMAL is the kernel's
 * default (each page fault reads read_ahead_kb around the miss), RANDOM
 * is madvise(MADV_RANDOM) (each fault reads just the page). 0, or -errno
 * (-EINVAL when nothing is mapped). The advice in force is named by
 * gnn_map_advice_name ("normal", "random"; "" when nothing is mapped). */
enum gnn_map_advice { GNN_ADVICE_NORMAL = 0, GNN_ADVICE_RANDOM = 1 };
int gnn_map_advise(struct gnn_dataset *ds, enum gnn_map_advice a);
const char *gnn_map_advice_name(const struct gnn_dataset *ds);
/* Whole-file sizes: topology section (offsets + neighbours) and features. */
uint64_t gnn_topology_bytes(const struct gnn_header *h);
uint64_t gnn_feature_bytes(const struct gnn_header *h);

/* Verification of a feature row read for node v: 0 when right, else the
 * index of the first wrong element + 1. full = every element, else 4
 * elements at positions derived from v (cheap, still node-specific). */
size_t gnn_verify_row(const struct gnn_header *h, uint64_t v, const float *row, int full);
/* Fills row with node v's features (the generator's values). */
void gnn_feature_row(const struct gnn_header *h, uint64_t v, float *row);

/* ===== cache (Hyperion 3.2) — declared before the reader uses it ========= */

struct gnn_cache;

/* ===== readers ============================================================ */

/* Counters of one reader (or summed). Transactions count CLS-sized PCIe
 * transfers (cls bytes, gnn_reader_set_granularity) as the TPC model does:
 * mem_tx for data served by the host tier, ssd_tx for data read from
 * storage, counted at SSD granularity (ssds bytes, read amplification). */
struct gnn_read_stats {
    uint64_t topo_lists, topo_dev_hits, topo_host_hits, topo_misses;
    uint64_t feat_rows, feat_dev_hits, feat_host_hits, feat_misses;
    uint64_t ssd_requests, ssd_bytes;   /* issued to the engine (or mmap) */
    uint64_t mem_tx, ssd_tx;
    uint64_t verified_rows, verify_failures;
    uint64_t first_bad_node;            /* valid when verify_failures > 0 */
};

/* One reader per thread/stage; holds scratch buffers and counters. The
 * cache may be NULL (nothing cached). verify: 0 off, 1 a few words per
 * row (default), 2 every element. */
struct gnn_reader;
struct gnn_reader *gnn_reader_new(struct gnn_dataset *ds, const struct gnn_cache *cache,
                                  int verify);
void gnn_reader_free(struct gnn_reader *r);
/* CLS (PCIe transaction size, default 64) and SSDS (SSD granularity,
 * default 512) used for the transaction counters. */
void gnn_reader_set_granularity(struct gnn_reader *r, unsigned cls, unsigned ssds);
void gnn_reader_stats(const struct gnn_reader *r, struct gnn_read_stats *out);
void gnn_reader_reset_stats(struct gnn_reader *r);
void gnn_read_stats_add(struct gnn_read_stats *acc, const struct gnn_read_stats *s);

/* Neighbour lists of nodes[0..n): lists[i] points at deg[i] sorted ids,
 * valid until the next gnn_read_neighbours on this reader. Cache hits
 * point into tier memory; misses are read in one batch (aligned to 512 B)
 * from the engine or copied out of the mapping. 0, or -1 (I/O error, with
 * gnn_reader_error). */
int gnn_read_neighbours(struct gnn_reader *r, const int64_t *nodes, size_t n,
                        const uint32_t **lists, uint32_t *deg);
/* The same split so the storage reads overlap other work: submit fills
 * lists/deg for the hits and sends the misses to the engine (GNN_MEM and
 * GNN_MMAP finish in submit); the miss lists are valid after wait. One
 * neighbour read in flight per reader, independent of a gather in
 * flight on it. 0, or -1. */
int gnn_read_neighbours_submit(struct gnn_reader *r, const int64_t *nodes, size_t n,
                               const uint32_t **lists, uint32_t *deg);
int gnn_read_neighbours_wait(struct gnn_reader *r);

/* Feature gather, split so the storage reads overlap other work:
 * submit copies the cache hits into out (n x dim floats, row-major) and
 * sends the misses to the engine in one batch (directly into out when out
 * is 512-aligned, e.g. from gnn_alloc_rows, else via the reader's staging);
 * wait completes the batch, then verifies rows. Only one gather in flight
 * per reader; the node ids are copied at submit (nodes may change after). GNN_MEM and GNN_MMAP copy synchronously in submit. 0,
 * -1 (an error: I/O, memory) or GNN_ERR_VERIFY (the rows arrived but one
 * failed verification); gnn_reader_error says which row or file. */
#define GNN_ERR_VERIFY (-2)
int gnn_gather_submit(struct gnn_reader *r, const int64_t *nodes, size_t n, float *out);
int gnn_gather_wait(struct gnn_reader *r);
/* Both in one call. */
int gnn_gather(struct gnn_reader *r, const int64_t *nodes, size_t n, float *out);
const char *gnn_reader_error(const struct gnn_reader *r);

/* 4096-aligned memory for rows*dim floats from the engine's registered
 * arena when there is one (O_DIRECT target); free with gnn_free_rows. */
float *gnn_alloc_rows(struct gnn_dataset *ds, size_t rows);
void gnn_free_rows(struct gnn_dataset *ds, float *p);

/* ===== sampling =========================================================== */

struct gnn_sampler_cfg {
    int hops;                   /* 1..GNN_MAX_HOPS */
    int fanout[GNN_MAX_HOPS];   /* fanout[0]: the hop next to the seeds */
    uint64_t seed;
};
/* Parses "25,10" into cfg (hops and fanouts). 0, or -1. */
int gnn_parse_fanouts(const char *s, struct gnn_sampler_cfg *cfg);

/* A sampled mini-batch. nodes[] holds the global ids of every sampled
 * node: the seeds first (nodes[0..hop_end[0])), then nodes first reached
 * at hop h in nodes[hop_end[h]..hop_end[h+1]). Hop h's block has the
 * n_dst = hop_end[h] known nodes as destinations and the n_src =
 * hop_end[h+1] nodes as sources (destinations are the sources' prefix,
 * ids relabelled to positions in nodes[]). block[l] is the block GNN layer
 * l consumes: block[0] = outermost hop (input features of nodes[0..
 * block[0].n_src)), block[hops-1] = seeds' hop. */
struct gnn_sample {
    int hops;
    int hops_done;
    size_t n_seeds;
    int64_t *nodes;
    size_t n_nodes;
    size_t hop_end[GNN_MAX_HOPS + 1];
    struct nn_sage_block block[GNN_MAX_HOPS];
    /* storage behind the blocks, per hop (block[hops-1-h] uses hop h's) */
    int64_t *ptr[GNN_MAX_HOPS], *idx[GNN_MAX_HOPS];
    size_t cap_nodes, cap_idx[GNN_MAX_HOPS], cap_ptr[GNN_MAX_HOPS];
    /* scratch: global id -> local position (open addressing) */
    int64_t *map_key;
    uint32_t *map_val;
    size_t map_cap;
    uint64_t epoch, batch;
    /* scratch: the destinations' neighbour lists of the hop being sampled */
    const uint32_t **lists;
    uint32_t *degs;
    size_t cap_lists;
};
void gnn_sample_init(struct gnn_sample *s);
void gnn_sample_free(struct gnn_sample *s);
/* Starts a batch: seeds become nodes[0..n). 0, or -1 (memory). */
int gnn_sample_begin(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg,
                     const int64_t *seeds, size_t n, uint64_t epoch, uint64_t batch);
/* Samples the next hop (reads the destinations' neighbour lists through
 * r). Returns the hop number just sampled (0-based), -1 on an error
 * (a read error: gnn_reader_error; else out of memory), or `hops` when
 * all were done already. After
 * it, nodes[hop_end[h]..hop_end[h+1]) are new: their features can be
 * gathered while the next hop samples (Hyperion's intra-batch overlap). */
int gnn_sample_hop(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r);
/* gnn_sample_hop in two halves: submit starts reading the destinations'
 * neighbour lists (nothing else may use r's neighbour read until finish),
 * finish waits for them and samples. Between the two the caller may
 * gather the features of nodes already known (Hyperion's intra-batch
 * overlap: hop h's frontier is read while hop h+1 samples). Same results
 * as gnn_sample_hop. submit: 0 or -1; finish: as gnn_sample_hop. */
int gnn_sample_hop_submit(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r);
int gnn_sample_hop_finish(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r);
/* begin + every hop. */
int gnn_sample(struct gnn_sample *s, const struct gnn_sampler_cfg *cfg, struct gnn_reader *r,
               const int64_t *seeds, size_t n, uint64_t epoch, uint64_t batch);
/* The choice for one node: writes min(deg, k) distinct positions in
 * [0, deg), ascending, into out; returns their number. */
size_t gnn_sample_pick(uint64_t seed, uint64_t epoch, uint64_t batch, int hop, uint64_t node,
                       uint32_t deg, int k, uint32_t *out);

/* The epoch's order of ids[0..n) (a seed- and epoch-keyed permutation,
 * written to out), and this rank's batches: batch b of rank r takes
 * out[(b*nranks + r)*bs ..] (bs each, the last one shorter). */
void gnn_epoch_order(const uint32_t *ids, size_t n, uint64_t seed, uint64_t epoch, int64_t *out);
size_t gnn_num_batches(size_t n, size_t bs, int rank, int nranks);
size_t gnn_batch_seeds(const int64_t *order, size_t n, size_t bs, int rank, int nranks, size_t b,
                       const int64_t **seeds);

/* ===== presampling and the unified static cache (Hyperion 3.2) ========== */

/* Hotness of one presampled epoch: topo[v] = how often v's neighbour list
 * was read, feat[v] = how often v's feature row was needed. */
struct gnn_hotness {
    uint64_t n;
    uint32_t *topo, *feat;
    uint64_t max_batch_rows;  /* the most feature rows one presampled batch needed */
};
/* Presamples one epoch (all training ids, batch size bs, the given epoch
 * number) through r, counting hotness. 0, or -1. Free with
 * gnn_hotness_free. */
int gnn_presample(struct gnn_reader *r, const struct gnn_sampler_cfg *cfg, size_t bs,
                  uint64_t epoch, struct gnn_hotness *h);
void gnn_hotness_free(struct gnn_hotness *h);

enum gnn_tier { GNN_TIER_NONE = 0, GNN_TIER_DEV = 1, GNN_TIER_HOST = 2 };

enum gnn_placement_policy {
    GNN_PLACE_HYPERION = 0,   /* minimise transactions: device scan, then host scan */
    GNN_PLACE_JOINT = 1,      /* exact joint scan over both tiers' splits */
    GNN_PLACE_TOPO_FIRST = 2, /* each tier: hottest topology, then features */
    GNN_PLACE_FEAT_FIRST = 3, /* each tier: hottest features, then topology */
    GNN_PLACE_HYBRID = 4,     /* each tier: hybrid_topo_frac of chunks topology */
};
const char *gnn_placement_name(enum gnn_placement_policy p);
/* "hyperion", "joint", "topo-first", "feat-first", "hybrid": 0, else -1. */
int gnn_placement_parse(const char *s, enum gnn_placement_policy *out);

struct gnn_cache_cfg {
    uint64_t cap[3];          /* bytes: cap[GNN_TIER_DEV], cap[GNN_TIER_HOST]; cap[0] unused */
    uint64_t chunk;           /* Z, bytes; 0 = 100 MB (paper) capped to a quarter of
                                 the smallest non-empty tier. Items larger than Z
                                 (huge neighbour lists) are never cached. */
    unsigned cls;             /* PCIe transaction bytes; 0 = 64 */
    unsigned ssds;            /* SSD access granularity; 0 = 512 */
    int per_access_ceil;      /* 0: ceil(H*size/g) as printed; 1: H*ceil(size/g) */
    enum gnn_placement_policy policy;
    double hybrid_topo_frac;  /* for GNN_PLACE_HYBRID; 0 = 0.5 */
    int fill_rest;            /* 1: after the chunked placement, fill each tier's
                                 remaining capacity (device first): presampled items
                                 whose chunk did not fit (rows, then lists, hottest
                                 first), then never-presampled nodes by degree
                                 (list, then row); 0: placed chunks only */
    uint64_t fill_limit[3];   /* fill_rest fills tier t up to this many bytes
                                 (0 or more than cap[t]: cap[t]); for a memory
                                 budget that cannot hold the whole capacity */
};

/* Transaction cost of one chunk per epoch if it lives in the host tier
 * (mem) or on storage (ssd); the device tier costs 0. */
struct gnn_chunk_cost {
    double mem, ssd;
};
/* Chunk counts per tier and type: the device tier takes topology chunks
 * [0, t_dev) and feature chunks [0, f_dev) of the hotness queues, the host
 * tier the next t_host and f_host. */
struct gnn_split {
    size_t t_dev, f_dev, t_host, f_host;
    double cost;              /* total transactions left: host mem + ssd */
    double mem_tx, ssd_tx;
};
/* Chunked placement: T[0..nT) and F[0..nF) are the topology and feature
 * chunks in hotness order, kdev and khost the chunk capacities. Pure
 * function (tested against brute force). 0, or -1 out of memory (out
 * then places nothing). */
int gnn_place_chunks(const struct gnn_chunk_cost *T, size_t nT, const struct gnn_chunk_cost *F,
                     size_t nF, size_t kdev, size_t khost, enum gnn_placement_policy policy,
                     double hybrid_topo_frac, struct gnn_split *out);
/* Transactions of one item of `bytes` read `hot` times from a source of
 * granularity g (then counted in cls units), per the ceiling variant. */
double gnn_item_tx(uint64_t hot, uint64_t bytes, unsigned g, unsigned cls, int per_access_ceil);

/* What a built cache holds. */
struct gnn_cache_info {
    struct gnn_split split;
    uint64_t chunk;                              /* Z used */
    uint64_t topo_nodes[3], feat_nodes[3];       /* per tier */
    uint64_t topo_bytes[3], feat_bytes[3];       /* per tier */
    double hit_topo[3], hit_feat[3];             /* presampled hit fractions per tier */
    double tx_mem, tx_ssd;                       /* predicted transactions / epoch (of
                                                    the chunked placement; fill_rest's
                                                    additions are not counted) */
};

/* Builds the cache: queues by hotness, chunks of Z, placement, then fills
 * tier memory from the dataset (reading through r). The device tier is
 * host memory standing for GPU memory (no CUDA lookups here). NULL with a
 * message on error. */
struct gnn_cache *gnn_cache_build(struct gnn_reader *r, const struct gnn_hotness *h,
                                  const struct gnn_cache_cfg *cfg, char *err, size_t errlen);
void gnn_cache_free(struct gnn_cache *c);
/* The same placement without allocating or reading anything: what a cache
 * of these capacities would hold and its predicted hit rates and
 * transactions per presampled epoch (for TPC predictions over cache
 * sizes). 0, or -1 with a message. */
int gnn_cache_plan(const struct gnn_dataset *ds, const struct gnn_hotness *h, const struct gnn_cache_cfg *cfg,
                   struct gnn_cache_info *out, char *err, size_t errlen);
void gnn_cache_info(const struct gnn_cache *c, struct gnn_cache_info *out);
/* Lookups: tier of v's topology / features, and the pointer into tier
 * memory (NULL on a miss). */
enum gnn_tier gnn_cache_topo(const struct gnn_cache *c, uint64_t v, const uint32_t **list,
                             uint32_t *deg);
enum gnn_tier gnn_cache_feat(const struct gnn_cache *c, uint64_t v, const float **row);
/* Bytes the cache holds per tier (data + its index) for budget accounting. */
uint64_t gnn_cache_mem_bytes(const struct gnn_cache *c, enum gnn_tier t);

/* ===== TPC model (Hyperion 3.4) =========================================== */

/* A machine: published or measured figures and prices (US $). Loaded
 * from profiles/<name>.txt ("key = value" lines, '#' comments). */
struct gnn_hw_profile {
    char name[64];
    double ssd_bw;            /* bytes/s one SSD delivers at SSD granularity (Th_ssd) */
    double pcie_bw;           /* bytes/s host <-> GPU (Th_pcie) */
    unsigned cls, ssds;       /* transaction and SSD granularity, bytes */
    int max_ssd;              /* SSD slots */
    int n_ssd;                /* SSDs the machine has (for its TCO) */
    int n_gpu;
    double c_mac, c_gpu, c_ssd, c_ele; /* prices: machine, per GPU, per SSD, electricity (5 y) */
    int n_mac;                /* machines */
};
/* Parses a profile file. 0, or -1 with the line in err. */
int gnn_profile_load(const char *path, struct gnn_hw_profile *p, char *err, size_t errlen);
/* 5-year TCO (Eq. 5): (C_mac + C_gpu*N_gpu + C_ssd*N_ssd + C_ele) * N_mac. */
double gnn_tco(const struct gnn_hw_profile *p, int n_ssd);

/* The workload per batch, from the cache model and a profiling run. */
struct gnn_workload {
    double batch_size;        /* Bs, seeds per batch */
    double n_ssd_tx;          /* N_ssd: transactions served by storage per batch */
    double n_mem_tx;          /* N_mem: transactions served by host memory per batch */
    double alpha;             /* s, cache-lookup overhead per batch */
    double t_train;           /* s, training time per batch */
};

enum gnn_bound {
    GNN_BOUND_SSD = 0,
    GNN_BOUND_PCIE = 1,
    GNN_BOUND_TRAIN = 2,
    GNN_BOUND_SAMPLE = 3,     /* our addition: the sampler stage (CPU sampling + its topology reads) */
    GNN_BOUND_CPU = 4,        /* our addition: every thread's CPU time shared over the cores */
    GNN_BOUND_SERIAL = 5,     /* nopipe: the stages add up */
    GNN_BOUND_LOOKUP = 6,     /* our addition: the lookup/submission team */
    GNN_BOUND_COMPLETE = 7,   /* our addition: the completion team (copy, verify) */
};
const char *gnn_bound_name(enum gnn_bound b);

struct gnn_prediction {
    int q;                    /* SSDs */
    double t_ssd, t_pcie, t_train, t_batch; /* s */
    double t_sample, t_cpu, t_pipe; /* s, gnn_tpc_predict_pipeline only */
    double throughput;        /* seeds/s = Bs / T_batch */
    double cost;              /* C_ssd*Q + C_machine, i.e. the TCO with Q SSDs */
    double tpc;               /* seeds/s per $ */
    enum gnn_bound bound;
};
/* T_ssd = N_ssd / (Th_ssd * Q) + alpha, Th_ssd in transactions/s
 * (ssd_bw / cls); T_pcie = (N_ssd + N_mem) / (pcie_bw / cls);
 * T_batch = max(T_ssd, T_pcie, T_train); TPC = Bs / (T_batch * TCO(Q)). */
void gnn_tpc_predict(const struct gnn_hw_profile *p, const struct gnn_workload *w, int q,
                     struct gnn_prediction *out);
/* Per-batch inputs of the pipelined model, measured in a short profiling
 * run of two phases (Hyperion's profiler times ~10 iterations): a serial
 * one (one batch in flight, so each stage is timed alone) and, for a
 * pipelined system, one through the pipeline itself. */
struct gnn_profile {
    double batches;           /* profiled batches (per phase) */
    double batch_size;        /* Bs, seeds per batch */
    int hops;                 /* sampling rounds that read topology (the fan-outs) */
    /* wall seconds per batch of each stage running alone (serial phase) */
    double t_sample;          /* sampling, its topology misses read synchronously */
    double t_lookup;          /* cache lookups (host-tier copies) and I/O submission */
    double t_complete;        /* waiting for the batch's feature reads, copy, verification */
    double t_train;           /* the training step */
    /* seconds per batch the sampler and the completion wait for storage
     * alone (serial phase: the stage's wall less its own CPU) */
    double io_sample, io_complete;
    /* CPU seconds per batch: the stages' own threads, the training thread,
     * and the rest of the process (the engine's I/O threads). Pipelined
     * systems: measured in the pipelined phase, where the stages share the
     * cores and caches (training's CPU per batch rises there, e.g. 6.4 ->
     * 7.4 ms); nopipe: the serial phase's */
    double cpu_sample, cpu_lookup, cpu_complete, cpu_train, cpu_other;
    /* storage traffic per batch (topology and feature misses) */
    double ssd_bytes, ssd_requests, ssd_tx, mem_tx;
    double io_rate;           /* bytes/s storage delivers for requests of this size
                                 at the pipeline's queue depth, reading rows the profile
                                 read from storage (measured; all devices) */
    double cpu_share;         /* the share of a core a thread of ours gets (serial phase:
                                 training's CPU / its wall, both less the allreduce's;
                                 1 on an idle machine, less where other processes
                                 share the cores). 0 = not measured, taken as 1 */
    double allreduce_s;       /* the gradient allreduce when every rank arrives at once:
                                 the median of a few after a barrier (0 with one rank).
                                 cpu_train leaves the allreduce out (its polling while
                                 another rank catches up is not this rank's demand) */
};
/* The pipelined model (our extension of Eq. 3 for CPU stand-ins; Hyperion's
 * max() is its limit for many slots and no shared cores):
 *   T_ssd  = ssd_bytes / io_rate                  (Hyperion: N_ssd / (Th_ssd Q) + alpha,
 *                                                  Th_ssd Q measured at this request size/depth)
 *   T_pcie = (ssd_tx + mem_tx) / (pcie_bw / cls)
 *   T_cpu  = (every CPU term) / (cores * a)        (the stages share `cores` cores where
 *                                                  Hyperion partitions the GPU's SMs)
 *   a      = cpu_share: every CPU demand below is cpu_k / a, the part of a
 *            core other processes leave a thread (measured in the profile);
 *            the training station adds allreduce_s (the gradient allreduce
 *            with every rank arriving at once, measured; not stretched)
 *   T_pipe = the period of the pipeline's closed loop: `slots` batches circulate
 *            through five single-server stations, solved by exact mean-value
 *            analysis (MVA): sampler, storage, lookup CPU, completion CPU,
 *            training CPU, plus a delay. The batch's storage waits alone,
 *            io = io_sample + io_complete (one engine serving both), are the
 *            device's occupancy, min(io, T_ssd), which queues, and latency,
 *            the rest, which overlaps other batches' reads (the delay: a
 *            read in flight does not hold the device). Each CPU demand is
 *            stretched by core sharing, 1 / (1 - (U_other / cores)^cores):
 *            U_other = X * (the other stations' CPU per batch) is the cores
 *            the other threads keep busy at throughput X, and the power the
 *            chance they hold every core at once (each core busy with them
 *            independently); X is the fixed point t = max(T_pipe(t),
 *            T_cpu), found by bisection on [T_cpu, T_pipe(T_cpu)] (at
 *            t >= T_cpu the stretch is finite, so no cap). (1 core:
 *            processor sharing's 1 / (1 - U_other).) The
 *            sampler holds its thread while its reads wait at the storage
 *            station: its demand is its stretched CPU + its own I/O wait +
 *            per hop the mean residual of the feature reads the engine is
 *            busy with, X s_c * s_c / 2 (s_c = io_complete's occupancy share,
 *            io_complete * min(io, T_ssd) / io).
 *   T_batch = max(T_pipe, T_ssd, T_pcie, T_cpu)
 * slots <= 1 (nopipe, stages serialised): the same stations with one batch
 * in flight (MVA, n = 1), from the model's terms, not the stage walls:
 * T_batch = max((cpu_sample + cpu_lookup + cpu_complete + cpu_train) / a
 * + allreduce_s + max(io, T_ssd), T_cpu), io = io_sample + io_complete, the batch's
 * storage waits in one station (no core-sharing stretch: one stage runs
 * at a time).
 * out->t_sample and out->t_train are those stations' stretched demands;
 * out->bound the largest of the max() terms, or the busiest station.
 * Q = p->n_ssd; throughput Bs / T_batch, cost and TPC as gnn_tpc_predict. */
void gnn_tpc_predict_pipeline(const struct gnn_hw_profile *p, const struct gnn_profile *f, int cores,
                              int slots, struct gnn_prediction *out);
/* The model above in one paragraph, for a result file's /config. */
extern const char gnn_tpc_model_text[];
/* Exact MVA of a closed loop of n customers over k single-server queueing
 * stations with service demands d[k] (s per visit) and a delay of z s per
 * cycle (no queue): the cycle time 1 / X(n). n = 1 gives the sum of d plus
 * z; many customers tend to max(d). */
double gnn_mva_period(const double *d, int k, double z, int n);
/* The Q in [1, max_ssd] that maximises TPC with TCO(Q) <= budget (budget
 * <= 0: no limit). 0, or -1 when no Q fits the budget. */
int gnn_tpc_optimise(const struct gnn_hw_profile *p, const struct gnn_workload *w, double budget,
                     struct gnn_prediction *best);


/* ===== training side: GraphSAGE model with data-parallel Adam (mb-gnn);
 * the memory budget and the pipeline runtime are common/'s (mb_budget_*,
 * mb_pipe_*) ============================================================= */

/* ===== GraphSAGE model ==================================================
 * nlayers SAGEConv layers (mean aggregator), ReLU between them, a
 * log-softmax NLL head; Adam. blocks[0] is the outermost hop (the first
 * layer's input, as PyG returns them), blocks[nlayers-1] ends at the seeds. */

#define GNN_MAX_LAYERS 4

struct gnn_model {
    int nlayers, in, hidden, classes;
    struct nn_sage layer[GNN_MAX_LAYERS];
    float *act[GNN_MAX_LAYERS];   /* output of each layer */
    size_t act_cap[GNN_MAX_LAYERS];
    float *dact[GNN_MAX_LAYERS];  /* gradient w.r.t. each layer's input (layers >= 1) */
    size_t dact_cap[GNN_MAX_LAYERS];
    float *logp, *dlogits;
    size_t logp_cap;
    struct nn_adam hp;
    float *m[GNN_MAX_LAYERS], *v[GNN_MAX_LAYERS];
    long long t;
    /* data parallel: gradients summed over ranks, then averaged */
    struct mb_coll_ctx *coll;
    const struct mb_coll_algo *algo;
    int nranks;
    float *flat;                  /* packed gradients of every layer */
    size_t nparams;
    double allreduce_s;           /* time in the allreduce (accumulated) */
    double allreduce_cpu_s;       /* the calling thread's CPU in it (accumulated): it polls
                                     while other ranks catch up */
};

/* Weights from seed (equal on every rank for the same seed). coll/algo
 * NULL: no allreduce. 0 or -1. */
int gnn_model_init(struct gnn_model *m, int nlayers, int in, int hidden, int classes, float lr,
                   uint64_t seed, struct mb_coll_ctx *coll, const struct mb_coll_algo *algo,
                   int nranks);
void gnn_model_free(struct gnn_model *m);
/* One step on a batch of n seeds (labels[n]; x: features of the
 * outermost block's n_src nodes): forward, loss, backward, gradient
 * allreduce, Adam. n may be 0 (a rank without seeds still joins the
 * allreduce). *loss: summed NLL over the seeds; *correct: seeds whose
 * argmax matched. 0 or -1 (with the reason in err). */
int gnn_model_step(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct, char *err,
                   size_t errlen);
/* Forward only: *correct seeds predicted right, *loss their summed NLL. */
int gnn_model_eval(struct gnn_model *m, const struct nn_sage_block *blocks, const float *x,
                   const int32_t *labels, size_t n, double *loss, size_t *correct);
/* Forward FLOPs of the model on these blocks (x3 for a training step). */
double gnn_model_flops(const struct gnn_model *m, const struct nn_sage_block *blocks);

/* ===== trainer: the systems side by side (mb-gnn) =========================
 * A system is a row of the systems table (gnn/systems.c): how it reads
 * topology and features, whether it builds the presampled static cache and
 * with which placement, whether its stages are pipelined, the mmap advice.
 * A trainer runs one system: the slot pipeline (sample, submit, complete
 * stages over common/'s mb_pipe runtime, gnn/stages.c), the pass driver
 * (gnn/pass.c), the TPC profiling run (gnn/profile.c) and the measured
 * rates (gnn/measure.c). Everything it needs from the program arrives in
 * struct gnn_trainer_cfg at create time. */

struct gnn_system {
    const char *name;
    enum gnn_access topo, feat;      /* where lists and rows are read from */
    int cached;                      /* presampled unified static cache (when a tier has bytes) */
    enum gnn_placement_policy placement; /* of the cache */
    int pipelined;                   /* --slots batches in flight; 0: one (stages serialised) */
    enum gnn_map_advice advice;      /* GNN_MMAP: page-fault read-around */
    int upper_bound;                 /* the in-memory upper bound: runs outside the memory
                                        budget, its epoch bounds the others' */
};
/* The table, in the order cases run (the upper bound first). */
size_t gnn_nsystems(void);
const struct gnn_system *gnn_system_at(size_t i);
const struct gnn_system *gnn_system_find(const char *name); /* NULL when unknown */
/* "a|b|c" of every name into buf (for an option's choices). */
void gnn_system_choices(char *buf, size_t len);

/* The memory budget of a node's ranks (common/'s mb_budget: the node's
 * first rank creates it, the others join). */
struct gnn_budget {
    struct mb_budget b;
    size_t bytes;               /* the limit (0: none) */
    int on;                     /* enforced */
    char broken[400];           /* why it no longer holds ("" while it does) */
};
/* Collective over comm: enforces `bytes` for every rank of each node.
 * 0 (bytes 0: nothing to do), or -1 on every rank (a failing rank warns). */
int gnn_budget_enforce(struct gnn_budget *g, MPI_Comm comm, size_t bytes, enum mb_budget_how how);
/* Collective over comm: each rank's host, whether it created its node's
 * budget or joined it, and where the budget is, "; "-separated, gathered
 * on rank 0 (malloc'd; NULL elsewhere or out of memory), so a result file
 * shows that each node's ranks share one budget of their own. */
char *gnn_budget_ranks(const struct gnn_budget *g, MPI_Comm comm);
/* A limit hit: one line naming the budget and the peak into msg; 1, or 0. */
int gnn_budget_hit(const struct gnn_budget *g, char *msg, size_t len);
/* The upper bound runs outside: leave (0 or -1 with err), enter again
 * (a failure is kept in g->broken and warned). */
int gnn_budget_leave(struct gnn_budget *g, char *err, size_t len);
void gnn_budget_enter(struct gnn_budget *g);
/* How the in-memory upper bound is exempt from the budget, as its method
 * allows it (a constant string). */
const char *gnn_budget_inmem_text(const struct gnn_budget *g);
/* Collective over MPI_COMM_WORLD: every rank leaves, the owner removes it. */
void gnn_budget_release(struct gnn_budget *g);
/* Async-signal-safe and idempotent: a generate's temporary files go and
 * this rank leaves the budget's cgroup (a struct gnn_budget *, may be
 * NULL; the owner removes it). The program runs it however the run ends
 * (the harness's clean-up hook: signals, exit, the watchdog); the library
 * installs no signal handler itself. */
void gnn_cleanup_signal_safe(void *budget);

/* Rates of the machine, measured once per run and shared by the trainers
 * (NAN until measured). */
struct gnn_rates {
    double rand_read_Bps;       /* the engine's random row reads (first engine system) */
    double memcpy_Bps;          /* host row copies (the "PCIe" of the emulation) */
};
/* Host copy rate of rows of row_bytes through 64 MiB buffers (once). 0, or -1 out of memory. */
int gnn_measure_memcpy(struct gnn_rates *r, uint64_t row_bytes);
/* The cores this process may run on (its affinity mask). */
int gnn_usable_cores(void);
/* The cores one rank's threads may count on when host_ranks ranks run the
 * same pipeline on a machine's `cores` (the TPC model's `cores`): each
 * rank's threads demand as much CPU per batch as every other's, so the
 * ranks share the cores equally: cores / host_ranks, rounded down, at
 * least 1 (derived, not fitted; docs: gnn/README.md, "TPC model"). */
int gnn_cores_per_rank(int cores, int host_ranks);
/* The read-ahead of the block device under dir/data.0 (kB; -1 unknown). */
long long gnn_read_ahead_kb(const char *dir);
/* Share of the machine's CPU time the host took since steal0
 * (mb_host_steal_s) over dt s; NAN where it cannot be resolved. */
double gnn_steal_share(double steal0, double dt);

#define GNN_MAX_SLOTS 16 /* batches in flight */
#define GNN_MAX_TEAM 32  /* submit or complete threads */

struct gnn_trainer_cfg {
    const char *data;               /* dataset folder */
    const struct gnn_header *header;/* its header as validated (NULL: read at create) */
    const struct gnn_system *sys;
    struct gnn_sampler_cfg scfg;
    const char *fanout_text;        /* the fan-outs as the user wrote them (messages; NULL: from scfg) */
    size_t batch;                   /* seeds per batch and rank */
    int hidden;
    float lr;
    uint64_t cache_dev, cache_host;
    int cache_fill;                 /* 1: fill what the placement leaves (by degree) */
    int slots, sub_threads, comp_threads, sample_instances, io_threads, stage_nice;
    int overlap;                    /* intra-batch overlap (pipelined engine systems) */
    long epoch_batches;             /* per epoch and rank (0: every training node) */
    long eval_nodes, profile_batches;
    int verify;                     /* 0 off, 1 a few elements per row, 2 all */
    uint64_t seed;
    MPI_Comm comm;
    struct mb_coll_ctx *coll;       /* NULL: one rank, no allreduce */
    const struct mb_coll_algo *algo;
    struct gnn_budget *budget;      /* NULL or not on: none */
    struct gnn_rates *rates;        /* shared, filled once (NULL: the trainer's own) */
    const char *hw_profile;         /* TPC profile file; NULL: this machine, from the profiling run */
    uint64_t pre_rows;              /* the largest presampled batch's rows (gnn_plan_presample), 0 unknown */
};

/* Budget planning before any work, from the header and a presampling
 * through the topology alone: the largest presampled batch's rows and what
 * the caches' placement holds of the presampled items. */
struct gnn_plan {
    uint64_t pre_rows, pre_placed;
};
int gnn_plan_presample(const struct gnn_trainer_cfg *c, struct gnn_plan *out, char *err, size_t len);
/* Bytes system sys needs under a budget (dataset arrays, caches, slots,
 * engine arena, storage-rate buffers, model, slack), with a one-line
 * account of it in what. plan may be NULL (nothing presampled). */
uint64_t gnn_plan_need(const struct gnn_trainer_cfg *c, const struct gnn_header *h, const struct gnn_plan *plan,
                       const struct gnn_system *sys, char *what, size_t len);

/* The check before any work: presamples (gnn_plan_presample) and checks
 * every system of mask (bit i: gnn_system_at(i)) but the upper bound
 * against `bytes`. 0 all fit (*pre_rows: the largest presampled batch's
 * rows, for cfg.pre_rows), 1 one does not (msg names it, its need and what
 * to change), -1 presampling failed (no check; msg says why). */
int gnn_plan_check(const struct gnn_trainer_cfg *c, const struct gnn_header *h, unsigned mask, uint64_t bytes,
                   uint64_t *pre_rows, char *msg, size_t len);

struct gnn_trainer;

/* What a trainer set up and measured; pointers valid while it lives. */
struct gnn_trainer_stats {
    const struct gnn_system *sys;
    const struct gnn_dataset *ds;   /* NULL where opening failed */
    const struct gnn_cache *cache;  /* NULL: nothing cached */
    struct gnn_cache_info cinfo;
    double presample_s, cache_build_s;
    uint64_t fill_limit;            /* host-tier bytes the fill could reach under the budget (0: cap) */
    uint64_t max_batch_rows;        /* the largest presampled batch's rows */
    int nslots, overlap, verify;
    long nbatches;                  /* per epoch and rank */
    /* the last epoch (the held-out pass leaves them) */
    struct gnn_read_stats rs;
    double loss, acc_train, acc_val;
    double epoch_s, t_train, c_train, cpu_s, steal;
    long long stage_cpu_ns[3];      /* sample, submit, complete: CPU of every team thread */
    double busy[3], wait_s;         /* stage walls, training's wait for batches */
    double miss_rate;               /* storage's rate on the epoch's misses read again (NAN: none) */
    size_t miss_read_rows;
    double allreduce_s;
    int failed;                     /* a failed batch or check */
    const char *fail_msg, *error_msg;
    /* the TPC profiling run */
    int profiled;
    struct gnn_profile prof;
    long prof_batches;
    int prof_phases;                /* 1 serial, 2 serial + pipelined */
    double prof_steal;
    size_t prof_pool_rows;
    const char *prof_t_source;
};

/* Leaves cfg->budget for the upper bound (gnn_trainer_destroy enters it
 * again) and refuses to run once the budget is broken. Opens the dataset
 * for cfg->sys (its files dropped from the page cache first), presamples and builds the cache, slots, readers, pipeline and
 * model, measures the engine's random-read rate once. Collective over
 * cfg->comm. *out is set whenever memory allowed, even on failure (its
 * stats say how far it came): free it with gnn_trainer_destroy. 0, or -1
 * with one line in err. */
int gnn_trainer_create(const struct gnn_trainer_cfg *cfg, struct gnn_trainer **out, char *err, size_t len);
void gnn_trainer_destroy(struct gnn_trainer *t);
/* The next pass trains `epoch` (its node order); counters restart. */
void gnn_trainer_prepare(struct gnn_trainer *t, uint64_t epoch);
/* The TPC model's profiling run (untimed, with a throwaway model). 0 when
 * profiled now, 1 when there is nothing to do (done, or a system without a
 * model), -1 when it failed: an error (gnn_trainer_stats' error_msg, and
 * gnn_trainer_error says so) or a failed check. */
int gnn_trainer_profile(struct gnn_trainer *t);
/* One timed epoch over this rank's batches (*elapsed: its wall seconds).
 * 0 (a failed batch or check shows in the stats' failed), or -1 on an
 * error (I/O, memory, budget), whatever --check says. */
int gnn_trainer_epoch(struct gnn_trainer *t, uint64_t epoch, double *elapsed);
/* The bound's storage rate: the epoch's own misses read again right after
 * it (untimed; NAN where features are not read through the engine). 0, or
 * -1 on an error. */
int gnn_trainer_read_misses(struct gnn_trainer *t);
/* Scores the held-out nodes (untimed; the epoch's counters are kept).
 * 0, or -1 on an error. */
int gnn_trainer_evaluate(struct gnn_trainer *t);
/* The verdict on the last epoch: 0, or 1 with one line in msg (a failed
 * batch, rows failing verification, or verification on but no row
 * verified). */
int gnn_trainer_check(const struct gnn_trainer *t, char *msg, size_t len);
/* Whether the last call failed with an error (not a check). */
int gnn_trainer_error(const struct gnn_trainer *t);
void gnn_trainer_stats(const struct gnn_trainer *t, struct gnn_trainer_stats *out);
/* The TPC model's epoch time for this system (gnn_tpc_predict_pipeline
 * on the profile, with cfg->hw_profile or this machine's profile); NAN and
 * bound "n/a" before profiling or for a system without a model. */
double gnn_trainer_predict(const struct gnn_trainer *t, const char **bound, struct gnn_prediction *pr);

/* ----- Reporting: a trainer's measurements under stable names ------------
 * The library names what a trainer measures, so every program records the
 * same names; the program decides where they go (mb-gnn: its result
 * file's /metrics/<case>/). Strings point into the trainer or static
 * storage: copy them before the trainer goes. */
enum gnn_value_type { GNN_VALUE_DBL, GNN_VALUE_INT, GNN_VALUE_STR };
struct gnn_value {
    const char *name;
    enum gnn_value_type type;
    double d;        /* DBL and INT (integers are exact below 2^53) */
    const char *s;   /* STR */
};
#define GNN_MAX_VALUES 64
/* What the trainer set up (access path, slots, engine, cache and its
 * predicted hits, budget peak) and its profiling run per batch
 * (profile_*): at most max values into out; returns how many. */
size_t gnn_trainer_setup_values(const struct gnn_trainer *t, struct gnn_value *out, size_t max);
/* What only the program knows about the last epoch: sums over the ranks,
 * the prediction, and the bound it holds the epoch to. */
struct gnn_epoch_totals {
    double ssd_bytes, verified_rows;      /* every rank's */
    double miss_read_Bps, miss_read_s;    /* the storage rate taken and the reads' time at it */
    double model_s;                       /* gnn_trainer_predict's */
    const char *model_bound;
    struct gnn_prediction pred;
    double floor_estimate_s;              /* docs/models.md: an estimate, systems can run below it */
};
/* What floor_estimate_s is and leaves out, for a result file's /config. */
extern const char gnn_floor_estimate_text[];
/* docs/models.md's floor estimate of an epoch: the upper bound's own
 * epoch_s for the upper bound; otherwise the storage reads' time, bytes
 * (every rank's) over rate (the ranks' summed rate; NAN unless rate > 0),
 * or the upper bound's median epoch (inmem_epoch_s, measured first) where
 * that is longer. *miss_s gets the reads' time. */
double gnn_floor_estimate(int upper_bound, double epoch_s, double inmem_epoch_s, double bytes, double rate,
                          double *miss_s);
/* A host steal share for progress lines ("1.5%", or "n/a" for NAN): buf. */
const char *gnn_steal_text(char *buf, size_t len, double share);
/* The profiling run's progress line for system `name` (per-batch stage
 * walls, waits and CPU, bytes read and their rate, CPU share, allreduce,
 * host steal), without '#' or newline: what a program prints on rank 0
 * after gnn_trainer_profile returned 0. */
void gnn_trainer_profile_text(const struct gnn_trainer *t, const char *name, char *buf, size_t len);
/* The last epoch's values (time_s, loss, hit rates, stage walls, the model's
 * terms, ...): at most max into out; returns how many. */
size_t gnn_trainer_epoch_values(const struct gnn_trainer *t, const struct gnn_epoch_totals *e,
                                struct gnn_value *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif
