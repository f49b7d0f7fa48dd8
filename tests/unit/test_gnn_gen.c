/* gnn/ generator: determinism for a seed, independence from the thread
 * count and from the topology-memory passes, Graph500 R-MAT shape, CSR
 * invariants (sorted, deduplicated, symmetric, no self-loops), scrambling
 * is a bijection, every feature row verifies, labels and split. */
#include "../../gnn/gnn.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char base[256];

static void slurp(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *buf = NULL;
    *len = 0;
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(*len + 1);
    if (fread(*buf, 1, *len, f) != *len)
        *len = 0;
    fclose(f);
}

static int same_files(const char *a, const char *b, const char *name)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof(pa), "%s/%s", a, name);
    snprintf(pb, sizeof(pb), "%s/%s", b, name);
    char *x, *y;
    size_t lx, ly;
    slurp(pa, &x, &lx);
    slurp(pb, &y, &ly);
    int same = x && y && lx == ly && lx > 0 && memcmp(x, y, lx) == 0;
    free(x);
    free(y);
    return same;
}

static int gen(const char *dir, int scale, int threads, uint64_t topo_mem, int ndev, uint64_t seed)
{
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.scale = scale;
    p.dim = 128;
    p.seed = seed;
    p.nthreads = threads;
    p.topo_mem = topo_mem;
    p.ndev = ndev;
    p.stripe = 8192;
    p.train_frac = 0.05;
    p.signal = 0.25f; /* strong, so ~6 training rows per class estimate a class mean */
    p.quiet = 1;
    char err[512];
    int rc = gnn_generate(dir, &p, err, sizeof(err));
    if (rc)
        fprintf(stderr, "generate %s: %s\n", dir, err);
    return rc;
}

static void test_scramble(void)
{
    int scale = 10;
    char *seen = calloc(1 << scale, 1);
    for (uint64_t x = 0; x < (1u << scale); x++) {
        uint64_t y = gnn_scramble(42, scale, x);
        EXPECT(y < (1u << scale));
        if (y < (1u << scale))
            seen[y]++;
    }
    int ok = 1;
    for (int i = 0; i < 1 << scale; i++)
        ok &= seen[i] == 1;
    EXPECT(ok);
    free(seen);
    /* R-MAT quadrant frequencies of the top level follow A, B, C, D */
    uint64_t q[4] = {0}, N = 200000;
    for (uint64_t e = 0; e < N; e++) {
        uint64_t u, v;
        gnn_rmat_edge(7, 12, e, &u, &v);
        q[((u >> 11) & 1) * 2 + ((v >> 11) & 1)]++;
    }
    EXPECT_NEAR((double)q[0] / N, 0.57, 0.01);
    EXPECT_NEAR((double)q[1] / N, 0.19, 0.01);
    EXPECT_NEAR((double)q[2] / N, 0.19, 0.01);
    EXPECT_NEAR((double)q[3] / N, 0.05, 0.01);
}

static void test_dataset(void)
{
    char a[300], b[300], c[300], d[300];
    snprintf(a, sizeof(a), "%s/a", base);
    snprintf(b, sizeof(b), "%s/b", base);
    snprintf(c, sizeof(c), "%s/c", base);
    snprintf(d, sizeof(d), "%s/d", base);
    EXPECT(gen(a, 11, 1, 0, 2, 5) == 0);
    EXPECT(gen(b, 11, 2, 0, 2, 5) == 0);
    EXPECT(gen(c, 11, 2, 20000, 2, 5) == 0); /* many vertex-range passes */
    EXPECT(gen(d, 11, 2, 0, 2, 6) == 0);
    const char *files[] = {"graph.meta", "data.0", "data.1"};
    for (int i = 0; i < 3; i++) {
        EXPECT(same_files(a, b, files[i]));
        EXPECT(same_files(a, c, files[i]));
        EXPECT(!same_files(a, d, files[i]));
    }

    struct gnn_open_opts o = {.topo = GNN_MEM, .feat = GNN_MEM, .verify_topology = 1};
    char err[512] = "";
    struct gnn_dataset *ds = gnn_open(a, &o, err, sizeof(err));
    EXPECT(ds != NULL);
    if (!ds) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const struct gnn_header *h = gnn_dataset_header(ds);
    EXPECT(h->n == 2048 && h->tuples == 16 * 2048 && h->dim == 128);
    const uint64_t *off = gnn_offsets(ds);
    const uint32_t *nb = gnn_neighbours_mem(ds);
    int sorted = 1, noloop = 1, sym = 1;
    for (uint64_t v = 0; v < h->n; v++) {
        for (uint64_t i = off[v]; i < off[v + 1]; i++) {
            if (i > off[v] && nb[i] <= nb[i - 1])
                sorted = 0;
            if (nb[i] == v)
                noloop = 0;
            /* v must appear in nb[i]'s list */
            uint32_t u = nb[i];
            int found = 0;
            for (uint64_t k = off[u]; k < off[u + 1]; k++)
                found |= nb[k] == v;
            sym &= found;
        }
    }
    EXPECT(sorted && noloop && sym);
    /* a brute-force edge set built from the tuples equals the CSR */
    char *adj = calloc(h->n * h->n, 1);
    for (uint64_t e = 0; e < h->tuples; e++) {
        uint64_t u, v;
        gnn_rmat_edge(h->seed, h->scale, e, &u, &v);
        u = gnn_scramble(h->seed, h->scale, u);
        v = gnn_scramble(h->seed, h->scale, v);
        if (u != v)
            adj[u * h->n + v] = adj[v * h->n + u] = 1;
    }
    uint64_t m = 0;
    for (uint64_t i = 0; i < h->n * h->n; i++)
        m += adj[i];
    EXPECT(m == h->m);
    int match = 1;
    for (uint64_t v = 0; v < h->n; v++)
        for (uint64_t i = off[v]; i < off[v + 1]; i++)
            match &= adj[v * h->n + nb[i]];
    EXPECT(match);
    free(adj);
    /* skew: the top 5% of vertices hold a large share of the entries */
    uint64_t *deg = malloc(8 * h->n);
    for (uint64_t v = 0; v < h->n; v++)
        deg[v] = off[v + 1] - off[v];
    uint64_t top = 0;
    for (uint64_t k = 0; k < h->n / 20; k++) {
        uint64_t best = 0, bi = 0;
        for (uint64_t v = 0; v < h->n; v++)
            if (deg[v] > best)
                best = deg[v], bi = v;
        top += best;
        deg[bi] = 0;
    }
    EXPECT((double)top / (double)h->m > 0.25);
    free(deg);

    /* features verify; a flipped element is caught by full and cheap checks */
    const float *F = gnn_features_mem(ds);
    int allok = 1;
    for (uint64_t v = 0; v < h->n; v++)
        allok &= gnn_verify_row(h, v, F + v * h->dim, 1) == 0;
    EXPECT(allok);
    float row[128];
    memcpy(row, F + 7 * h->dim, sizeof(row));
    row[0] += 1e-3f;
    EXPECT(gnn_verify_row(h, 7, row, 0) == 1);
    EXPECT(gnn_verify_row(h, 7, row, 1) == 1);
    EXPECT(gnn_verify_row(h, 8, F + 7 * h->dim, 0) != 0); /* wrong node's row */
    EXPECT(gnn_feature_value(h->seed, h->classes, h->signal, 9, 3) == F[9 * h->dim + 3]);

    /* labels: a brute-force evaluation of the rule in doubles
     * (argmax_k 0.5 [z(v)=k] + share of neighbours of class k; ties to
     * z(v), then the smaller k) equals what was stored */
    const int32_t *lab = gnn_labels(ds);
    int labok = 1;
    int cnt[16] = {0};
    uint64_t differ = 0, deg1 = 0, deg1_nb = 0;
    for (uint64_t v = 0; v < h->n; v++) {
        int32_t z = gnn_node_class(h->seed, h->classes, v), want = z;
        uint64_t d = off[v + 1] - off[v];
        double best = 0.5;
        for (int k = 0; k < h->classes && d; k++) {
            double sc = 0.5 * (k == z);
            for (uint64_t i = off[v]; i < off[v + 1]; i++)
                sc += (gnn_node_class(h->seed, h->classes, nb[i]) == k) / (double)d;
            if (sc > best + 1e-12 || (k == z && sc >= best - 1e-12))
                best = sc, want = k;
            else if (fabs(sc - best) < 1e-12 && want != z && k < want)
                want = k;
        }
        labok &= lab[v] == want;
        differ += lab[v] != z;
        if (d == 1) {
            deg1++;
            deg1_nb += lab[v] == gnn_node_class(h->seed, h->classes, nb[off[v]]);
        }
        if (lab[v] >= 0 && lab[v] < 16)
            cnt[lab[v]]++;
    }
    EXPECT(labok);
    for (int k = 0; k < 16; k++)
        EXPECT(cnt[k] > 50);
    /* the neighbourhood matters: a node of degree 1 takes its neighbour's
     * class, and a good share of labels is not the node's own class */
    EXPECT(deg1 > 20 && deg1_nb == deg1);
    EXPECT(differ > h->n / 20 && differ < h->n * 3 / 4);
    size_t ntr, nva;
    const uint32_t *tr = gnn_train_ids(ds, &ntr), *va = gnn_val_ids(ds, &nva);
    EXPECT(ntr > 50 && ntr < 160 && nva > 5 && nva < 50);
    int splitok = 1;
    for (size_t i = 0; i < ntr; i++)
        splitok &= gnn_node_split(h->seed, h->train_frac, h->val_frac, tr[i]) == 1 && (i == 0 || tr[i] > tr[i - 1]);
    for (size_t i = 0; i < nva; i++)
        splitok &= gnn_node_split(h->seed, h->train_frac, h->val_frac, va[i]) == 2;
    EXPECT(splitok);
    /* the features encode the latent class: class means of the training
     * rows classify validation rows' latent class far above chance (1/16) */
    int C = h->classes, D = h->dim;
    double *mean = calloc((size_t)C * D, sizeof(double));
    for (size_t i = 0; i < ntr; i++)
        for (int j = 0; j < D; j++)
            mean[gnn_node_class(h->seed, h->classes, tr[i]) * D + j] += F[tr[i] * D + j];
    size_t right = 0;
    for (size_t i = 0; i < nva; i++) {
        int best = -1;
        double bd = -1e300;
        for (int k = 0; k < C; k++) {
            double dot = 0;
            for (int j = 0; j < D; j++)
                dot += mean[k * D + j] * F[va[i] * D + j];
            if (dot > bd)
                bd = dot, best = k;
        }
        right += best == gnn_node_class(h->seed, h->classes, va[i]);
    }
    fprintf(stderr, "nearest class mean: %.3f of validation rows (chance 1/16)\n", (double)right / (double)nva);
    EXPECT((double)right / (double)nva > 0.5);
    free(mean);
    gnn_close(ds);
}

static void test_bad_params(void)
{
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.quiet = 1;
    char err[256], dir[300];
    snprintf(dir, sizeof(dir), "%s/bad", base);
    p.dim = 100;
    EXPECT(gnn_generate(dir, &p, err, sizeof(err)) == -1 && strstr(err, "dim"));
    p.dim = 128;
    p.scale = 2;
    EXPECT(gnn_generate(dir, &p, err, sizeof(err)) == -1 && strstr(err, "scale"));
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/mb-gnn-gen.XXXXXX");
    if (!mkdtemp(base))
        return 1;
    test_scramble();
    test_dataset();
    test_bad_params();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return TEST_EXIT();
}
