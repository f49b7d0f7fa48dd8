/* The trainer's parts shared by trainer.c (set-up, states, counters) and
 * trainer_step.c (one step: the passes, the swaps, the updates). */
#ifndef MB_RATEL_TRAINER_INTERNAL_H
#define MB_RATEL_TRAINER_INTERNAL_H

#include "../common/common.h"
#include "ratel.h"

#define TR_MAX_INTRA 16
/* Activations on storage pass through host staging slots (outside the host
 * arena, beside mb_ostore's step buffers, as the artifact's 4 activation
 * buffers are beside its optimizer's): chunks of a tensor's extent, written
 * in forward as their copy out lands, read ahead in backward. */
#define TR_ACT_SLOTS 16
#define TR_ACT_CHUNK ((size_t)4 << 20)
_Static_assert(TR_ACT_SLOTS * TR_ACT_CHUNK == RATEL_ACT_STAGING_BYTES, "--plan counts the staging slots");
enum { TR_SLOT_FREE = 0, TR_SLOT_D2H, TR_SLOT_WRITE, TR_SLOT_READ, TR_SLOT_H2D };
struct tr_slot {
    char *buf;
    int state, unit;
    uint64_t off;
    size_t len;
    struct mb_ostore_io *io;
    mb_link_ticket tk;
};
struct tr_chunk {
    int unit;
    uint64_t off;
    size_t len;
    void *dst;                           /* where backward copies it back */
};

struct ratel_trainer {
    struct ratel_trainer_opts o;
    char dir[4096];
    int nl;                              /* layers + 2 */
    int ra_n;                            /* layers read ahead in forward (opts.read_ahead, where it applies) */
    struct mb_arena *dev, *host;
    struct nn_alloc dev_alloc;
    struct nn_workspace *ws;
    struct nn_layer **layer;
    uint64_t *np;                        /* parameters per layer */
    uint64_t max_np;
    float *h[2], *dh[2];                 /* device hidden states */
    void *dev_p16[2], *dev_g16[2];       /* device slots (double-buffered) */
    void *host_p16[2];                   /* host staging */
    void **host_g16;                     /* host landing of layer i: one of two slots
                                          * (zero-infinity: its own, all live until Adam) */
    uint64_t g16_step[2], queued;        /* the store step that last read each slot */
    mb_link_ticket p16_tk[2], g16_tk[2];
    struct mb_ostore_io *p16_io[2];
    struct mb_link *link;
    struct mb_ostore *store;
    struct mb_ostore_tensor *ts;         /* the store keeps this table */
    /* zero-offload (host arena) and no-offload (device arena) states */
    float **p32, **m, **v;
    uint16_t **p16;
    /* activations */
    struct ratel_unit *u;
    int nu;
    unsigned char *swap;
    unsigned char *on_store;             /* per unit: swapped to storage (not the host arena) */
    int *ubase;                          /* per layer: its inter unit's index in u, or -1 */
    int *act_ext;                        /* per unit: its store extent ("L<i>.act.<tensor>") */
    struct tr_slot slot[TR_ACT_SLOTS];
    int slot_next;
    struct tr_chunk *rd;                 /* backward's reads, in the order it consumes them */
    int nrd, rd_next, rd_used;
    uint64_t act_stored;                 /* this step's bytes written to storage */
    void *(*act_host)[TR_MAX_INTRA];     /* per layer: where swapped tensors landed */
    /* ratel, zero-infinity: every layer's intra tensors in one of two
     * shared device regions (layer parity), as the plan counts them */
    char *region[2];
    mb_link_ticket region_d2h[2];        /* the last copy out of each region */
    /* backward's prefetch: layer pf_layer's host-held swapped tensors
     * (pf_back: intra bits; pf_inter: its input) copied in over the link
     * into its region while the layer above runs (pf_tk: the last copy);
     * -1 when none is in flight */
    int pf_layer, pf_inter;
    unsigned pf_back;
    mb_link_ticket pf_tk;
    void **inter_host;
    void **inter_dev;                    /* inputs kept on the device this step */
    long long t;                         /* Adam's step count */
    mb_link_ticket act_d2h;              /* the last activation copied out */
    uint64_t act_alloc;                  /* this step's activations in the host arena, as allocated */
    uint64_t host_beside;                /* --host-mem's bytes beside the arena (ratel_host_beside_bytes) */
    int states_on_store, release_acts;
    char (*lname)[32];
    struct ratel_trainer_stats st;
    double gemm_cpu;                     /* this pass's GEMM CPU-s (tr_cpu_gemm) */
    double store_other_cpu;              /* this step's other threads' CPU-s during
                                          * synchronous store calls (trainer_step.c) */
    struct nn_stage_times stimes;        /* every layer's fused stages, accumulated (recompute
                                          * in backward: its forward stages) */
    struct nn_stage_times fwd_stages;    /* the profiling step's forward alone, per stage */
    struct ratel_unit *u_priced;         /* the units with their recompute priced by time
                                          * (ratel_rc_price_units, units.c) */
};

/* Every staging slot's transfer finished (its errors reported; the slots
 * free): the end of forward, and before the store closes. */
int tr_act_settle(struct ratel_trainer *t, char *err, size_t errlen);
/* Unit k's bytes as its layer holds them (nn's tensor; the table's
 * closed form may differ): its extent's size, what a spill moves. */
uint64_t tr_unit_bytes(struct ratel_trainer *t, int k);
void tr_span(struct ratel_trainer *t, const char *what, const char *name, double t0, double t1);

/* The k-th layer forward reads ahead (k < ra_n): the embedding (updated
 * last), then the top layers down (updated first). */
static inline int tr_read_ahead_layer(const struct ratel_trainer *t, int k) { return k == 0 ? 0 : t->nl - k; }

#endif
