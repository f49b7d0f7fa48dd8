/* gnn/ placement and cache: every policy against brute force on tiny
 * inputs (the joint scan equals the best prefix placement, which equals
 * the best arbitrary assignment when costs are monotone; Hyperion's
 * device scan maximises the device savings), the transaction formulas of
 * both ceiling variants, and a cache built from a presampled epoch:
 * lookups return the right data, tiers respect capacities, measured hit
 * rates of the presampled epoch equal the predicted ones, and a cached
 * reader samples and gathers exactly what an uncached one does. */
#include "../../gnn/gnn.h"
#include "../../common/common.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double cost_of(const struct gnn_chunk_cost *T, size_t nT, const struct gnn_chunk_cost *F, size_t nF,
                      size_t a, size_t b, size_t c, size_t d)
{
    double x = 0;
    for (size_t i = 0; i < nT; i++)
        x += i < a ? 0 : i < a + c ? T[i].mem : T[i].ssd;
    for (size_t i = 0; i < nF; i++)
        x += i < b ? 0 : i < b + d ? F[i].mem : F[i].ssd;
    return x;
}

static uint64_t rnd_state = 12345;
static double rnd(void)
{
    rnd_state = mb_mix64(rnd_state);
    return (double)(rnd_state >> 11) / 9007199254740992.0;
}

static void test_formulas(void)
{
    EXPECT_NEAR(gnn_item_tx(3, 100, 64, 64, 0), 5, 0);  /* ceil(300/64) */
    EXPECT_NEAR(gnn_item_tx(3, 100, 64, 64, 1), 6, 0);  /* 3*ceil(100/64) */
    EXPECT_NEAR(gnn_item_tx(3, 100, 512, 64, 0), 8, 0); /* ceil(300/512)*512/64 */
    EXPECT_NEAR(gnn_item_tx(3, 100, 512, 64, 1), 24, 0);
    EXPECT_NEAR(gnn_item_tx(0, 100, 512, 64, 1), 0, 0);
    enum gnn_placement_policy p;
    EXPECT(gnn_placement_parse("feat-first", &p) == 0 && p == GNN_PLACE_FEAT_FIRST);
    EXPECT(gnn_placement_parse("best", &p) == -1);
}

static void test_placement_brute(void)
{
    for (int trial = 0; trial < 300; trial++) {
        size_t nT = 1 + (size_t)(rnd() * 5), nF = 1 + (size_t)(rnd() * 5);
        size_t kdev = (size_t)(rnd() * 4), khost = (size_t)(rnd() * 4);
        int monotone = trial % 2;
        struct gnn_chunk_cost T[6], F[6];
        double rt = 1 + rnd() * 8, rf = 1 + rnd() * 8, lt = 100, lf = 100;
        for (size_t i = 0; i < nT; i++) {
            lt = monotone ? lt * (0.3 + 0.7 * rnd()) : 1 + rnd() * 100;
            T[i].mem = lt;
            T[i].ssd = monotone ? lt * rt : lt * (1 + rnd() * 8);
        }
        for (size_t i = 0; i < nF; i++) {
            lf = monotone ? lf * (0.3 + 0.7 * rnd()) : 1 + rnd() * 100;
            F[i].mem = lf;
            F[i].ssd = monotone ? lf * rf : lf * (1 + rnd() * 8);
        }
        /* best prefix placement */
        double bp = INFINITY, best_dev_saving = -1;
        for (size_t a = 0; a <= nT; a++)
            for (size_t b = 0; b <= nF && a + b <= kdev; b++) {
                double sv = 0;
                for (size_t i = 0; i < a; i++)
                    sv += T[i].mem;
                for (size_t i = 0; i < b; i++)
                    sv += F[i].mem;
                if (sv > best_dev_saving)
                    best_dev_saving = sv;
                for (size_t c = 0; a + c <= nT; c++)
                    for (size_t d = 0; b + d <= nF && c + d <= khost; d++) {
                        double x = cost_of(T, nT, F, nF, a, b, c, d);
                        if (x < bp)
                            bp = x;
                    }
            }
        /* best arbitrary assignment (3^(nT+nF)) */
        size_t nc = nT + nF, total = 1;
        for (size_t i = 0; i < nc; i++)
            total *= 3;
        double ba = INFINITY;
        for (size_t code = 0; code < total; code++) {
            size_t x = code, ud = 0, uh = 0;
            double cost = 0;
            for (size_t i = 0; i < nc; i++, x /= 3) {
                const struct gnn_chunk_cost *ch = i < nT ? &T[i] : &F[i - nT];
                int t = (int)(x % 3);
                ud += t == 1;
                uh += t == 2;
                cost += t == 0 ? ch->ssd : t == 2 ? ch->mem : 0;
            }
            if (ud <= kdev && uh <= khost && cost < ba)
                ba = cost;
        }
        struct gnn_split s;
        gnn_place_chunks(T, nT, F, nF, kdev, khost, GNN_PLACE_JOINT, 0, &s);
        EXPECT(s.t_dev + s.f_dev <= kdev && s.t_host + s.f_host <= khost);
        EXPECT(s.t_dev + s.t_host <= nT && s.f_dev + s.f_host <= nF);
        EXPECT_NEAR(s.cost, bp, 1e-9 * bp + 1e-9);
        EXPECT_NEAR(s.cost, cost_of(T, nT, F, nF, s.t_dev, s.f_dev, s.t_host, s.f_host), 1e-9 * bp + 1e-9);
        EXPECT_NEAR(s.mem_tx + s.ssd_tx, s.cost, 1e-9 * bp + 1e-9);
        EXPECT(ba <= s.cost + 1e-9 * bp);
        if (monotone)
            EXPECT_NEAR(s.cost, ba, 1e-9 * ba + 1e-9);
        double joint = s.cost;
        gnn_place_chunks(T, nT, F, nF, kdev, khost, GNN_PLACE_HYPERION, 0, &s);
        double sv = 0;
        for (size_t i = 0; i < s.t_dev; i++)
            sv += T[i].mem;
        for (size_t i = 0; i < s.f_dev; i++)
            sv += F[i].mem;
        EXPECT_NEAR(sv, best_dev_saving, 1e-9 * sv + 1e-9);
        EXPECT(s.cost >= joint - 1e-9 * joint && s.t_host + s.f_host <= khost);
        /* fixed orders */
        gnn_place_chunks(T, nT, F, nF, kdev, khost, GNN_PLACE_TOPO_FIRST, 0, &s);
        size_t a = kdev < nT ? kdev : nT;
        EXPECT(s.t_dev == a && s.f_dev == (kdev - a < nF ? kdev - a : nF));
        EXPECT(s.cost >= joint - 1e-9 * joint);
        gnn_place_chunks(T, nT, F, nF, kdev, khost, GNN_PLACE_FEAT_FIRST, 0, &s);
        size_t b = kdev < nF ? kdev : nF;
        EXPECT(s.f_dev == b && s.t_dev == (kdev - b < nT ? kdev - b : nT));
        EXPECT(s.cost >= joint - 1e-9 * joint);
        gnn_place_chunks(T, nT, F, nF, kdev, khost, GNN_PLACE_HYBRID, 0.5, &s);
        EXPECT(s.t_dev + s.f_dev == (kdev < nT + nF ? kdev : nT + nF));
        EXPECT(s.cost >= joint - 1e-9 * joint);
    }
}

/* fill_rest: with room beyond every presampled item, the chunked
 * placement is kept (everything it cached stays in the same tier), the
 * rest of each tier's capacity goes to never-presampled nodes (so some
 * cached item has hotness 0), no tier holds more than its capacity and
 * what is left is less than one row, every cached item is right. */
static void test_fill_rest(struct gnn_dataset *ds, struct gnn_dataset *dm, struct gnn_reader *r,
                           const struct gnn_hotness *hot)
{
    const struct gnn_header *h = gnn_dataset_header(ds);
    const uint64_t *off = gnn_offsets(ds);
    const uint64_t z = 16384;
    uint64_t hot_bytes = 0;
    for (uint64_t v = 0; v < h->n; v++) {
        hot_bytes += hot->feat[v] ? h->row_bytes : 0;
        uint64_t lb = 4 * (off[v + 1] - off[v]);
        hot_bytes += hot->topo[v] && lb <= z ? lb : 0;
    }
    char err[512];
    struct gnn_cache_cfg cc = {.chunk = z, .per_access_ceil = 1, .policy = GNN_PLACE_HYPERION};
    cc.cap[GNN_TIER_DEV] = 48 << 10;
    cc.cap[GNN_TIER_HOST] = hot_bytes + hot_bytes / 2 + (64 << 10);
    struct gnn_cache *plain = gnn_cache_build(r, hot, &cc, err, sizeof(err));
    cc.fill_rest = 1;
    struct gnn_cache *full = gnn_cache_build(r, hot, &cc, err, sizeof(err));
    EXPECT(plain && full);
    if (!plain || !full)
        return;
    struct gnn_cache_info ip, inf, plan;
    gnn_cache_info(plain, &ip);
    gnn_cache_info(full, &inf);
    EXPECT(gnn_cache_plan(ds, hot, &cc, &plan, err, sizeof(err)) == 0);
    EXPECT(!memcmp(&plan, &inf, sizeof(inf)));
    int kept = 1, ok = 1, cold = 0;
    uint64_t nf = 0, nt = 0;
    for (uint64_t v = 0; v < h->n; v++) {
        const float *fr;
        const uint32_t *l;
        uint32_t d;
        enum gnn_tier tp = gnn_cache_feat(plain, v, &fr), tf = gnn_cache_feat(full, v, &fr);
        kept &= tp == GNN_TIER_NONE || tp == tf;
        if (tf != GNN_TIER_NONE) {
            nf++;
            ok &= gnn_verify_row(h, v, fr, 1) == 0;
            cold |= hot->feat[v] == 0;
        }
        tp = gnn_cache_topo(plain, v, &l, &d);
        tf = gnn_cache_topo(full, v, &l, &d);
        kept &= tp == GNN_TIER_NONE || tp == tf;
        if (tf != GNN_TIER_NONE) {
            nt++;
            ok &= d == off[v + 1] - off[v] && !memcmp(l, gnn_neighbours_mem(dm) + off[v], 4 * d);
            cold |= hot->topo[v] == 0;
        }
    }
    EXPECT(kept && ok && cold);
    EXPECT(nf == inf.feat_nodes[1] + inf.feat_nodes[2] && nt == inf.topo_nodes[1] + inf.topo_nodes[2]);
    EXPECT(nf + nt > ip.feat_nodes[1] + ip.feat_nodes[2] + ip.topo_nodes[1] + ip.topo_nodes[2]);
    for (int t = GNN_TIER_DEV; t <= GNN_TIER_HOST; t++) {
        uint64_t used = inf.feat_bytes[t] + inf.topo_bytes[t];
        EXPECT(used <= cc.cap[t]);
        EXPECT(cc.cap[t] - used < h->row_bytes || nf == h->n);
    }
    EXPECT(gnn_cache_mem_bytes(full, GNN_TIER_DEV) == inf.feat_bytes[1] + inf.topo_bytes[1]);
    /* the hit rates it reports count what presampling would have hit */
    EXPECT(inf.hit_feat[1] + inf.hit_feat[2] >= ip.hit_feat[1] + ip.hit_feat[2] - 1e-12);
    gnn_cache_free(plain);
    gnn_cache_free(full);
}

static void test_cache(const char *dir)
{
    struct gnn_open_opts o = {.topo = GNN_AIO, .feat = GNN_AIO, .aio_threads = 1, .aio_arena = 4 << 20};
    char err[512];
    struct gnn_dataset *ds = gnn_open(dir, &o, err, sizeof(err));
    EXPECT(ds != NULL);
    if (!ds) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const struct gnn_header *h = gnn_dataset_header(ds);
    struct gnn_open_opts om = {.topo = GNN_MEM, .feat = GNN_MMAP};
    struct gnn_dataset *dm = gnn_open(dir, &om, err, sizeof(err)); /* reference lists */
    EXPECT(dm != NULL);
    if (!dm)
        return;
    struct gnn_reader *r = gnn_reader_new(ds, NULL, 2);
    struct gnn_sampler_cfg sc = {.seed = 4};
    gnn_parse_fanouts("10,5", &sc);
    struct gnn_hotness hot;
    size_t bs = 32;
    EXPECT(gnn_presample(r, &sc, bs, 0, &hot) == 0);
    uint64_t sumf = 0, maxf = 0, hv = 0;
    for (uint64_t v = 0; v < h->n; v++) {
        sumf += hot.feat[v];
        if (hot.feat[v] > maxf)
            maxf = hot.feat[v], hv = v;
    }
    EXPECT(sumf > 0 && maxf > 1);
    for (int pol = 0; pol <= 4; pol++) {
        struct gnn_cache_cfg cc = {.chunk = 16384, .per_access_ceil = 1, .policy = (enum gnn_placement_policy)pol};
        cc.cap[GNN_TIER_DEV] = 64 << 10;
        cc.cap[GNN_TIER_HOST] = 160 << 10;
        struct gnn_cache *c = gnn_cache_build(r, &hot, &cc, err, sizeof(err));
        EXPECT(c != NULL);
        if (!c) {
            fprintf(stderr, "%s\n", err);
            continue;
        }
        struct gnn_cache_info in, plan;
        gnn_cache_info(c, &in);
        EXPECT(gnn_cache_plan(ds, &hot, &cc, &plan, err, sizeof(err)) == 0);
        EXPECT(!memcmp(&plan, &in, sizeof(in)));
        EXPECT(in.topo_bytes[1] + in.feat_bytes[1] <= cc.cap[1] && in.topo_bytes[2] + in.feat_bytes[2] <= cc.cap[2]);
        EXPECT(gnn_cache_mem_bytes(c, GNN_TIER_DEV) == in.topo_bytes[1] + in.feat_bytes[1]);
        EXPECT(in.feat_nodes[1] + in.feat_nodes[2] + in.topo_nodes[1] + in.topo_nodes[2] > 0);
        if (pol == GNN_PLACE_FEAT_FIRST) {
            const float *row;
            EXPECT(gnn_cache_feat(c, hv, &row) == GNN_TIER_DEV); /* the hottest row sits on the device */
            EXPECT(in.topo_nodes[1] == 0);
        }
        if (pol == GNN_PLACE_TOPO_FIRST)
            EXPECT(in.topo_nodes[1] > 0);
        /* every cached item is right */
        const uint64_t *off = gnn_offsets(ds);
        float *row = malloc(4 * (size_t)h->dim);
        int ok = 1;
        uint64_t nt = 0, nf = 0;
        for (uint64_t v = 0; v < h->n; v++) {
            const float *fr;
            const uint32_t *l;
            uint32_t d;
            if (gnn_cache_feat(c, v, &fr) != GNN_TIER_NONE) {
                nf++;
                ok &= gnn_verify_row(h, v, fr, 1) == 0 && hot.feat[v] > 0;
            }
            if (gnn_cache_topo(c, v, &l, &d) != GNN_TIER_NONE) {
                nt++;
                ok &= d == off[v + 1] - off[v] && hot.topo[v] > 0;
                ok &= !memcmp(l, gnn_neighbours_mem(dm) + off[v], 4 * d);
            }
        }
        free(row);
        EXPECT(ok);
        EXPECT(nf == in.feat_nodes[1] + in.feat_nodes[2] && nt == in.topo_nodes[1] + in.topo_nodes[2]);
        /* the presampled epoch through the cached reader: same samples and
         * rows as without the cache; hit rates as predicted */
        struct gnn_reader *rc = gnn_reader_new(ds, c, 1), *rn = gnn_reader_new(ds, NULL, 1);
        size_t ntr;
        const uint32_t *tr = gnn_train_ids(ds, &ntr);
        int64_t *order = malloc(8 * ntr);
        gnn_epoch_order(tr, ntr, sc.seed, 0, order);
        struct gnn_sample s1, s2;
        gnn_sample_init(&s1);
        gnn_sample_init(&s2);
        int same = 1;
        uint64_t max_rows = 0;
        for (size_t b = 0; b < gnn_num_batches(ntr, bs, 0, 1); b++) {
            const int64_t *seeds;
            size_t ns = gnn_batch_seeds(order, ntr, bs, 0, 1, b, &seeds);
            same &= gnn_sample(&s1, &sc, rc, seeds, ns, 0, b) == 0 && gnn_sample(&s2, &sc, rn, seeds, ns, 0, b) == 0;
            same &= s1.n_nodes == s2.n_nodes && !memcmp(s1.nodes, s2.nodes, 8 * s1.n_nodes);
            max_rows = s1.n_nodes > max_rows ? s1.n_nodes : max_rows;
            float *x1 = gnn_alloc_rows(ds, s1.n_nodes), *x2 = gnn_alloc_rows(ds, s1.n_nodes);
            same &= gnn_gather(rc, s1.nodes, s1.n_nodes, x1) == 0 && gnn_gather(rn, s1.nodes, s1.n_nodes, x2) == 0;
            same &= !memcmp(x1, x2, s1.n_nodes * h->row_bytes);
            gnn_free_rows(ds, x1);
            gnn_free_rows(ds, x2);
        }
        EXPECT(same);
        EXPECT(max_rows > 0 && hot.max_batch_rows == max_rows); /* the largest batch, for the budget */
        struct gnn_read_stats st, sn;
        gnn_reader_stats(rc, &st);
        gnn_reader_stats(rn, &sn);
        EXPECT(st.feat_rows == sumf && st.feat_dev_hits + st.feat_host_hits + st.feat_misses == st.feat_rows);
        EXPECT_NEAR((double)st.feat_dev_hits / (double)st.feat_rows, in.hit_feat[1], 1e-12);
        EXPECT_NEAR((double)st.feat_host_hits / (double)st.feat_rows, in.hit_feat[2], 1e-12);
        EXPECT_NEAR((double)st.topo_dev_hits / (double)st.topo_lists, in.hit_topo[1], 1e-12);
        EXPECT_NEAR((double)st.topo_host_hits / (double)st.topo_lists, in.hit_topo[2], 1e-12);
        EXPECT(st.ssd_bytes < sn.ssd_bytes);
        gnn_sample_free(&s1);
        gnn_sample_free(&s2);
        free(order);
        gnn_reader_free(rc);
        gnn_reader_free(rn);
        gnn_cache_free(c);
    }
    test_fill_rest(ds, dm, r, &hot);
    /* hotness of another size is refused */
    struct gnn_hotness wrong = hot;
    wrong.n = 5;
    struct gnn_cache_cfg cc = {.chunk = 16384};
    cc.cap[1] = 1 << 20;
    EXPECT(gnn_cache_build(r, &wrong, &cc, err, sizeof(err)) == NULL && strstr(err, "hotness"));
    gnn_hotness_free(&hot);
    gnn_reader_free(r);
    gnn_close(ds);
    gnn_close(dm);
}

int main(void)
{
    test_formulas();
    test_placement_brute();
    char dir[] = "/tmp/mb-gnn-cache.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.scale = 11;
    p.ndev = 2;
    p.stripe = 8192;
    p.train_frac = 0.1;
    p.quiet = 1;
    char err[512];
    if (gnn_generate(dir, &p, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    test_cache(dir);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return TEST_EXIT();
}
