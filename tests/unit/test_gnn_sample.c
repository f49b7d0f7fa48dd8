/* gnn/ readers and sampler: neighbour lists and feature rows agree across
 * memory, mmap and the storage engine (aligned and unaligned output); a
 * corrupted row on storage is caught by verification; the sampler equals
 * a brute-force reference, keeps PyG's block shape, samples uniformly
 * without replacement, is deterministic and independent of the threads;
 * epoch orders and rank batches partition the training set. */
#include "../../gnn/gnn.h"
#include "../../common/common.h"
#include "check.h"

#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static struct gnn_dataset *open_ds(enum gnn_access t, enum gnn_access f)
{
    struct gnn_open_opts o = {.topo = t, .feat = f, .aio_threads = 1, .aio_arena = 4 << 20};
    char err[512];
    struct gnn_dataset *ds = gnn_open(dir, &o, err, sizeof(err));
    if (!ds)
        fprintf(stderr, "open: %s\n", err);
    return ds;
}

static void test_readers(void)
{
    struct gnn_dataset *mem = open_ds(GNN_MEM, GNN_MEM), *mm = open_ds(GNN_MMAP, GNN_MMAP),
                       *io = open_ds(GNN_AIO, GNN_AIO);
    EXPECT(mem && mm && io);
    if (!mem || !mm || !io)
        return;
    const struct gnn_header *h = gnn_dataset_header(mem);
    struct gnn_reader *rm = gnn_reader_new(mem, NULL, 2), *rp = gnn_reader_new(mm, NULL, 2),
                      *ra = gnn_reader_new(io, NULL, 2);
    size_t n = 300;
    int64_t nodes[300];
    for (size_t i = 0; i < n; i++)
        nodes[i] = (int64_t)(mb_mix64(i) % h->n);
    const uint32_t *l1[300], *l2[300], *l3[300];
    uint32_t d1[300], d2[300], d3[300];
    EXPECT(gnn_read_neighbours(rm, nodes, n, l1, d1) == 0);
    EXPECT(gnn_read_neighbours(rp, nodes, n, l2, d2) == 0);
    EXPECT(gnn_read_neighbours(ra, nodes, n, l3, d3) == 0);
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        same &= d1[i] == d2[i] && d1[i] == d3[i];
        if (same && d1[i])
            same &= !memcmp(l1[i], l2[i], 4 * d1[i]) && !memcmp(l1[i], l3[i], 4 * d1[i]);
    }
    EXPECT(same);
    struct gnn_read_stats st;
    gnn_reader_stats(ra, &st);
    EXPECT(st.topo_lists == n && st.topo_misses == n && st.ssd_requests > 0 && st.ssd_tx >= st.ssd_bytes / 64 / 2);

    float *fa = gnn_alloc_rows(io, n), *fp = gnn_alloc_rows(mm, n), *fm = malloc(4 * h->dim * n);
    float *un = malloc(4 * h->dim * n + 16);
    float *fu = (float *)((char *)un + 4); /* not 512-aligned: staged */
    EXPECT(gnn_gather(ra, nodes, n, fa) == 0);
    EXPECT(gnn_gather(ra, nodes, n, fu) == 0);
    EXPECT(gnn_gather(rp, nodes, n, fp) == 0);
    EXPECT(gnn_gather(rm, nodes, n, fm) == 0);
    EXPECT(!memcmp(fa, fm, 4 * h->dim * n) && !memcmp(fu, fm, 4 * h->dim * n) && !memcmp(fp, fm, 4 * h->dim * n));
    gnn_reader_stats(ra, &st);
    EXPECT(st.verified_rows == 2 * n && st.verify_failures == 0 && st.feat_misses == 2 * n);
    /* split submit/wait */
    EXPECT(gnn_gather_submit(ra, nodes, n, fa) == 0);
    EXPECT(gnn_gather_submit(ra, nodes, n, fa) == -1); /* one in flight */
    EXPECT(gnn_gather_wait(ra) == 0);
    gnn_free_rows(io, fa);
    gnn_free_rows(mm, fp);
    free(fm);
    free(un);
    gnn_reader_free(rm);
    gnn_reader_free(rp);
    gnn_reader_free(ra);
    gnn_close(mm);
    gnn_close(io);

    /* corrupt node 5's row on storage: the engine's read is caught */
    uint64_t off = h->off_feat + 5 * h->row_bytes + 4 * (uint64_t)(h->dim - 1);
    uint64_t stripe = h->stripe, unit = off / stripe;
    char path[300];
    snprintf(path, sizeof(path), "%s/data.%llu", dir, (unsigned long long)(unit % h->ndev));
    uint64_t devoff = unit / h->ndev * stripe + off % stripe;
    int fd = open(path, O_RDWR);
    float bad = 1234.5f, orig;
    EXPECT(fd >= 0 && pread(fd, &orig, 4, (off_t)devoff) == 4 && pwrite(fd, &bad, 4, (off_t)devoff) == 4);
    io = open_ds(GNN_AIO, GNN_AIO);
    struct gnn_reader *r = gnn_reader_new(io, NULL, 1);
    int64_t five[2] = {4, 5};
    float *row = gnn_alloc_rows(io, 2);
    EXPECT(gnn_gather(r, five, 2, row) == GNN_ERR_VERIFY); /* a check, not an I/O error */
    EXPECT(strstr(gnn_reader_error(r), "node 5") != NULL);
    gnn_reader_stats(r, &st);
    EXPECT(st.verify_failures == 1 && st.first_bad_node == 5);
    gnn_reader_free(r);
    r = gnn_reader_new(io, NULL, 0); /* without verification the fault passes */
    EXPECT(gnn_gather(r, five, 2, row) == 0);
    gnn_reader_free(r);
    gnn_free_rows(io, row);
    gnn_close(io);
    EXPECT(pwrite(fd, &orig, 4, (off_t)devoff) == 4);
    close(fd);
    gnn_close(mem);
}

/* reference: straightforward re-implementation with linear-search relabel */
static int brute_check(const struct gnn_dataset *ds, const struct gnn_sampler_cfg *cfg,
                       const struct gnn_sample *s, const int64_t *seeds, size_t ns, uint64_t ep, uint64_t b)
{
    const uint64_t *off = gnn_offsets(ds);
    const uint32_t *nb = gnn_neighbours_mem(ds);
    int64_t *nodes = malloc(sizeof(int64_t) * 2000000);
    size_t nn = 0;
    int ok = 1;
    for (size_t i = 0; i < ns; i++)
        nodes[nn++] = seeds[i];
    for (int h = 0; h < cfg->hops; h++) {
        size_t nd = nn;
        const struct nn_sage_block *blk = &s->block[cfg->hops - 1 - h];
        ok &= blk->n_dst == nd && s->hop_end[h] == nd;
        int64_t e = 0;
        for (size_t i = 0; i < nd && ok; i++) {
            uint64_t v = (uint64_t)nodes[i];
            uint32_t deg = (uint32_t)(off[v + 1] - off[v]);
            uint32_t pos[64];
            size_t c = gnn_sample_pick(cfg->seed, ep, b, h, v, deg, cfg->fanout[h], pos);
            ok &= blk->ptr[i] == e && c == (deg < (uint32_t)cfg->fanout[h] ? deg : (size_t)cfg->fanout[h]);
            for (size_t q = 0; q < c && ok; q++) {
                int64_t g = nb[off[v] + pos[q]];
                size_t l = 0;
                while (l < nn && nodes[l] != g)
                    l++;
                if (l == nn)
                    nodes[nn++] = g;
                ok &= blk->idx[e] == (int64_t)l;
                /* distinct, a real neighbour, dst prefix of src */
                ok &= q == 0 || pos[q] > pos[q - 1];
                e++;
            }
        }
        ok &= blk->ptr[nd] == e && blk->n_src == nn && s->hop_end[h + 1] == nn;
    }
    ok &= s->n_nodes == nn && !memcmp(s->nodes, nodes, nn * sizeof(int64_t));
    free(nodes);
    return ok;
}

static void test_sampler(void)
{
    struct gnn_dataset *mem = open_ds(GNN_MEM, GNN_MEM), *io = open_ds(GNN_AIO, GNN_AIO);
    EXPECT(mem && io);
    if (!mem || !io)
        return;
    struct gnn_sampler_cfg cfg = {.seed = 9};
    EXPECT(gnn_parse_fanouts("15,10,5", &cfg) == 0 && cfg.hops == 3 && cfg.fanout[0] == 15 && cfg.fanout[2] == 5);
    EXPECT(gnn_parse_fanouts("25,x", &cfg) == -1 && gnn_parse_fanouts("", &cfg) == -1 &&
           gnn_parse_fanouts("1,2,3,4,5", &cfg) == -1 && gnn_parse_fanouts("0", &cfg) == -1);
    EXPECT(gnn_parse_fanouts("25,10", &cfg) == 0 && cfg.hops == 2);
    size_t ntr;
    const uint32_t *tr = gnn_train_ids(mem, &ntr);
    int64_t *order = malloc(sizeof(int64_t) * ntr);
    gnn_epoch_order(tr, ntr, 9, 3, order);
    struct gnn_reader *rm = gnn_reader_new(mem, NULL, 1), *ra = gnn_reader_new(io, NULL, 1);
    struct gnn_sample s1, s2;
    gnn_sample_init(&s1);
    gnn_sample_init(&s2);
    size_t bs = 16;
    for (size_t b = 0; b < 3; b++) {
        const int64_t *seeds;
        size_t ns = gnn_batch_seeds(order, ntr, bs, 0, 1, b, &seeds);
        EXPECT(gnn_sample(&s1, &cfg, rm, seeds, ns, 3, b) == 0);
        EXPECT(brute_check(mem, &cfg, &s1, seeds, ns, 3, b));
        EXPECT(gnn_sample(&s2, &cfg, ra, seeds, ns, 3, b) == 0); /* same blocks from storage */
        EXPECT(s1.n_nodes == s2.n_nodes && !memcmp(s1.nodes, s2.nodes, 8 * s1.n_nodes));
        /* every edge is a real one */
        const uint64_t *off = gnn_offsets(mem);
        const uint32_t *nb = gnn_neighbours_mem(mem);
        int real = 1;
        for (int l = 0; l < cfg.hops; l++) {
            const struct nn_sage_block *blk = &s1.block[l];
            for (size_t i = 0; i < blk->n_dst; i++)
                for (int64_t q = blk->ptr[i]; q < blk->ptr[i + 1]; q++) {
                    uint64_t v = (uint64_t)s1.nodes[i], u = (uint64_t)s1.nodes[blk->idx[q]];
                    int f = 0;
                    for (uint64_t k = off[v]; k < off[v + 1]; k++)
                        f |= nb[k] == u;
                    real &= f && blk->idx[q] < (int64_t)blk->n_src;
                }
        }
        EXPECT(real);
        EXPECT(s1.block[0].n_dst == s1.block[1].n_src && s1.block[1].n_dst == ns); /* PyG order */
    }
    /* a different epoch samples differently; the same one identically */
    const int64_t *seeds;
    size_t ns = gnn_batch_seeds(order, ntr, bs, 0, 1, 0, &seeds);
    EXPECT(gnn_sample(&s1, &cfg, rm, seeds, ns, 3, 0) == 0);
    EXPECT(gnn_sample(&s2, &cfg, rm, seeds, ns, 4, 0) == 0);
    EXPECT(s1.n_nodes != s2.n_nodes || memcmp(s1.nodes, s2.nodes, 8 * s1.n_nodes));

    /* thread independence on a batch big enough for the parallel pick */
    size_t nall = gnn_dataset_header(mem)->n;
    int64_t *all = malloc(8 * nall);
    for (size_t i = 0; i < nall; i++)
        all[i] = (int64_t)i;
    struct gnn_sampler_cfg c3 = {.seed = 2};
    gnn_parse_fanouts("15,10,5", &c3);
    omp_set_num_threads(1);
    EXPECT(gnn_sample(&s1, &c3, rm, all, nall, 1, 1) == 0);
    omp_set_num_threads(2);
    EXPECT(gnn_sample(&s2, &c3, rm, all, nall, 1, 1) == 0);
    int eq = s1.n_nodes == s2.n_nodes;
    for (int l = 0; l < 3 && eq; l++)
        eq &= s1.block[l].n_src == s2.block[l].n_src &&
              !memcmp(s1.block[l].idx, s2.block[l].idx, 8 * (size_t)s1.block[l].ptr[s1.block[l].n_dst]);
    EXPECT(eq);
    EXPECT(brute_check(mem, &c3, &s2, all, nall, 1, 1));
    free(all);

    /* uniformity: P(position chosen) = k/deg */
    uint32_t deg = 20, pos[5];
    int cnt[20] = {0}, trials = 20000, distinct = 1;
    for (int t = 0; t < trials; t++) {
        size_t c = gnn_sample_pick(1, (uint64_t)t, 0, 0, 77, deg, 5, pos);
        for (size_t q = 0; q < c; q++) {
            cnt[pos[q]]++;
            distinct &= q == 0 || pos[q] > pos[q - 1];
        }
    }
    EXPECT(distinct);
    for (uint32_t i = 0; i < deg; i++)
        EXPECT_NEAR(cnt[i] / (double)trials, 0.25, 0.02);

    /* epoch order is a permutation; rank batches partition it */
    int perm = 1;
    int64_t *o2 = malloc(8 * ntr);
    gnn_epoch_order(tr, ntr, 9, 5, o2);
    for (size_t i = 0; i < ntr; i++) {
        size_t c = 0;
        for (size_t j = 0; j < ntr; j++)
            c += o2[j] == (int64_t)tr[i];
        perm &= c == 1;
    }
    EXPECT(perm);
    size_t seen = 0;
    for (int rk = 0; rk < 3; rk++)
        for (size_t b = 0; b < gnn_num_batches(ntr, 7, rk, 3); b++) {
            const int64_t *sd;
            seen += gnn_batch_seeds(o2, ntr, 7, rk, 3, b, &sd);
        }
    EXPECT(seen == ntr);
    free(o2);
    free(order);
    gnn_sample_free(&s1);
    gnn_sample_free(&s2);
    gnn_reader_free(rm);
    gnn_reader_free(ra);
    gnn_close(mem);
    gnn_close(io);
}

/* Intra-batch overlap: each hop's neighbour reads submitted, the features
 * of the nodes known so far gathered while they are in flight, then the
 * hop finished; the blocks and the feature rows equal the serial
 * sampler's and a gather of every node at once. */
static void test_overlapped(void)
{
    struct gnn_dataset *mem = open_ds(GNN_MEM, GNN_MEM), *io = open_ds(GNN_AIO, GNN_AIO);
    EXPECT(mem && io);
    if (!mem || !io)
        return;
    const struct gnn_header *h = gnn_dataset_header(io);
    struct gnn_sampler_cfg cfg = {.seed = 5};
    gnn_parse_fanouts("25,10", &cfg);
    size_t ntr;
    const uint32_t *tr = gnn_train_ids(mem, &ntr);
    int64_t *order = malloc(sizeof(int64_t) * ntr);
    gnn_epoch_order(tr, ntr, 5, 1, order);
    struct gnn_reader *rm = gnn_reader_new(mem, NULL, 1), *ra = gnn_reader_new(io, NULL, 1);
    struct gnn_reader *rg[GNN_MAX_HOPS + 1];
    for (int i = 0; i <= GNN_MAX_HOPS; i++)
        rg[i] = gnn_reader_new(io, NULL, 2);
    struct gnn_sample s1, s2;
    gnn_sample_init(&s1);
    gnn_sample_init(&s2);
    size_t bs = 16, cap = bs * 26 * 11;
    float *x1 = gnn_alloc_rows(mem, cap), *x2 = gnn_alloc_rows(io, cap);
    for (size_t b = 0; b < 3; b++) {
        const int64_t *seeds;
        size_t ns = gnn_batch_seeds(order, ntr, bs, 0, 1, b, &seeds);
        EXPECT(gnn_sample(&s1, &cfg, rm, seeds, ns, 1, b) == 0);
        EXPECT(gnn_gather(rm, s1.nodes, s1.n_nodes, x1) == 0);
        EXPECT(gnn_sample_begin(&s2, &cfg, seeds, ns, 1, b) == 0);
        size_t fed = 0;
        int ok = 1;
        for (int hop = 0; hop < cfg.hops; hop++) {
            ok &= gnn_sample_hop_submit(&s2, &cfg, ra) == 0;
            size_t known = s2.hop_end[hop];
            ok &= gnn_gather_submit(rg[hop], s2.nodes + fed, known - fed, x2 + fed * (size_t)h->dim) == 0;
            fed = known;
            ok &= gnn_sample_hop_finish(&s2, &cfg, ra) == hop;
        }
        ok &= gnn_gather_submit(rg[cfg.hops], s2.nodes + fed, s2.n_nodes - fed, x2 + fed * (size_t)h->dim) == 0;
        for (int hop = 0; hop <= cfg.hops; hop++)
            ok &= gnn_gather_wait(rg[hop]) == 0;
        EXPECT(ok);
        if (!ok)
            fprintf(stderr, "overlapped batch %zu: %s / %s\n", b, gnn_reader_error(ra), gnn_reader_error(rg[0]));
        EXPECT(s1.n_nodes == s2.n_nodes && !memcmp(s1.nodes, s2.nodes, 8 * s1.n_nodes));
        for (int l = 0; l < cfg.hops; l++) {
            const struct nn_sage_block *a = &s1.block[l], *c = &s2.block[l];
            EXPECT(a->n_src == c->n_src && a->n_dst == c->n_dst);
            EXPECT(!memcmp(a->ptr, c->ptr, 8 * (a->n_dst + 1)) && !memcmp(a->idx, c->idx, 8 * (size_t)a->ptr[a->n_dst]));
        }
        EXPECT(!memcmp(x1, x2, s1.n_nodes * h->row_bytes));
    }
    gnn_free_rows(mem, x1);
    gnn_free_rows(io, x2);
    for (int i = 0; i <= GNN_MAX_HOPS; i++)
        gnn_reader_free(rg[i]);
    gnn_reader_free(rm);
    gnn_reader_free(ra);
    gnn_sample_free(&s1);
    gnn_sample_free(&s2);
    free(order);
    gnn_close(mem);
    gnn_close(io);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/mb-gnn-sample.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.scale = 11;
    p.ndev = 3;
    p.stripe = 4096;
    p.dim = 384; /* 1536 B rows cross stripe units */
    p.train_frac = 0.05;
    p.quiet = 1;
    char err[512];
    if (gnn_generate(dir, &p, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    test_readers();
    test_sampler();
    test_overlapped();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return TEST_EXIT();
}
