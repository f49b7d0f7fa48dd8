/* The collectives cost model on known parameters: each algorithm's steps
 * and bytes against the sum written out by hand, the cache blend, the
 * fitted MPI model's scaling, NaN for what the model does not know; the
 * profile's write/read round trip and every class of malformed profile. */
#include "../../collectives/coll.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct mb_coll_profile known(void)
{
    struct mb_coll_profile p;
    memset(&p, 0, sizeof(p));
    snprintf(p.host, sizeof(p.host), "testhost");
    snprintf(p.date, sizeof(p.date), "2026-01-01T00:00:00Z");
    snprintf(p.command, sizeof(p.command), "test_coll_model");
    p.ranks = 2;
    p.cache_bytes = 1e6;
    p.p2p_alpha = 1e-6;
    p.p2p = (struct mb_coll_rate){1e-9, 2e-9};
    p.reduce = (struct mb_coll_rate){0.5e-9, 1e-9};
    p.copy = (struct mb_coll_rate){0.25e-9, 0.5e-9};
    p.stream = 0.2e-9;
    p.flag = 2e-6;
    p.cma_alpha = 3e-6;
    p.cma = (struct mb_coll_rate){1e-9, 1e-9};
    p.net_alpha = 20e-6; /* a 10 Gb/s link with 20 us latency */
    p.net_beta = 0.8e-9;
    /* per-message overheads equal to the 8 B latency: a flat overhead, so the
     * sums below are the bare alpha-beta-gamma ones; test_overheads varies them */
    p.p2p_msg1k = p.p2p_msg8k = p.p2p_nb_alpha = 1e-6;
    /* the shm tables at node working sets 256 KiB, 1, 4, 16, 64 MiB: the
     * in-cache copy and reduce rates up to 256 KiB, the memory ones from
     * 4 MiB, between them at 1 MiB (test_ws_table) */
    static const double sc[MB_COLL_NWS] = {0.25e-9, 0.3e-9, 0.5e-9, 0.5e-9, 0.5e-9};
    static const double sr[MB_COLL_NWS] = {0.5e-9, 0.6e-9, 1e-9, 1e-9, 1e-9};
    memcpy(p.shm_copy, sc, sizeof(sc));
    memcpy(p.shm_reduce, sr, sizeof(sr));
    /* UCX's flag round and get request equal to the shm flag and the CMA call
     * (test_ucx_terms varies them) */
    p.ucx_flag = 2e-6;
    p.ucx_get_alpha = 3e-6;
    return p;
}

static char dummy;

static double predict_on(const struct mb_coll_profile *p, const char *algo, enum mb_coll_kind kind, size_t bytes,
                         int inplace, int P, int L, int N, int one_host)
{
    struct mb_coll_args a = {.kind = kind, .sendbuf = inplace ? NULL : &dummy, .recvbuf = &dummy,
                             .count = bytes / 4, .dtype = MB_COLL_FLOAT, .op = MB_COLL_SUM};
    struct mb_coll_shape s = {P, L, N, one_host};
    return mb_coll_model(p, algo, &a, &s);
}

/* ranks on N separate machines */
static double predict(const struct mb_coll_profile *p, const char *algo, enum mb_coll_kind kind, size_t bytes,
                      int inplace, int P, int L, int N)
{
    return predict_on(p, algo, kind, bytes, inplace, P, L, N, 0);
}

#define NEAR(x, want) EXPECT_NEAR((x), (want), 1e-9 * fabs(want) + 1e-15)

static void test_model(void)
{
    struct mb_coll_profile p = known();
    const double a = 1e-6, b = 1e-9, g = 0.5e-9, c = 0.25e-9, fl = 2e-6;
    double n = 16384; /* in cache: working sets stay below 1e6 bytes */

    /* ring allreduce, 4 ranks: copy in, 2(P-1) exchanges of n/P, P-1 reductions of n/P */
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 16384, 0, 4, 4, 1), n * c + 6 * (a + n / 4 * b) + 3 * n / 4 * g);
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 16384, 1, 4, 4, 1), 6 * (a + n / 4 * b) + 3 * n / 4 * g);
    /* ring reduce_scatter with a 4096-byte block at 4 ranks */
    double blk = 4096;
    NEAR(predict(&p, "ring", MB_COLL_REDUCE_SCATTER, 4096, 0, 4, 4, 1),
         4 * blk * c + 3 * (a + blk * b + blk * g) + blk * c);
    NEAR(predict(&p, "ring", MB_COLL_ALLGATHER, 4096, 0, 4, 4, 1), blk * c + 3 * (a + blk * b));
    EXPECT(isnan(predict(&p, "ring", MB_COLL_BCAST, 4096, 0, 4, 4, 1)));

    /* recursive doubling: 3 ranks fold (send + reduce in, send out) onto 2: one step */
    NEAR(predict(&p, "rd", MB_COLL_ALLREDUCE, 16384, 1, 3, 3, 1), 2 * (a + n * b) + n * g + (a + n * b + n * g));
    NEAR(predict(&p, "rd", MB_COLL_ALLREDUCE, 16384, 1, 8, 8, 1), 3 * (a + n * b + n * g));
    /* Rabenseifner at 8: 3 halving + 3 doubling steps, (1-1/8) n each way */
    NEAR(predict(&p, "rabenseifner", MB_COLL_ALLREDUCE, 16384, 1, 8, 8, 1),
         6 * a + n * 7.0 / 8 * (2 * b + g));
    /* at 5 ranks: the fold, then Rabenseifner over 4 */
    NEAR(predict(&p, "rabenseifner", MB_COLL_ALLREDUCE, 16384, 1, 5, 5, 1),
         2 * (a + n * b) + n * g + 4 * a + n * 3.0 / 4 * (2 * b + g));

    /* binomial: ceil(log2 5) = 3 levels */
    NEAR(predict(&p, "binomial", MB_COLL_BCAST, 16384, 1, 5, 5, 1), 3 * (a + n * b));
    NEAR(predict(&p, "binomial", MB_COLL_REDUCE, 16384, 0, 5, 5, 1), 2 * n * c + 3 * (a + n * b + n * g));
    NEAR(predict(&p, "scatter-allgather", MB_COLL_BCAST, 16384, 1, 4, 4, 1),
         3 * a + 3 * n / 4 * b + 3 * (a + n / 4 * b));

    /* shm, small path (<= 16 KiB): copy into the slot, one flag, L-1 reductions over n */
    double s = 1024;
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 1024, 0, 3, 3, 1), s * c + fl + 2 * s * g);
    NEAR(predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 1024, 0, 3, 3, 1), s * c + fl + 2 * s * g);
    NEAR(predict(&p, "shm", MB_COLL_BCAST, 1024, 1, 3, 3, 1), 2 * s * c + fl);
    /* large path, 2 ranks, 64 KiB: ws = 2 ranks * (in + out) = 256 KiB, in cache */
    double m = 65536;
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 65536, 0, 2, 2, 1), 2 * fl + m / 2 * g + m / 2 * c);
    NEAR(predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 65536, 0, 2, 2, 1), 2 * fl + m * c + m / 2 * g + m * c);
    NEAR(predict(&p, "pool", MB_COLL_ALLREDUCE, 65536, 0, 2, 2, 1), 2 * fl + m * c + m / 2 * g + m * c);
    /* allgather and reduce_scatter touch L (L + 1) n = 384 KiB: log2(1.5) / 2 = 0.292481 of the
     * way from the table's 256 KiB point to its 1 MiB one (copy 0.25 -> 0.3, reduce 0.5 -> 0.6 ns/B) */
    double t384 = 0.29248125036057809;
    NEAR(predict(&p, "shm", MB_COLL_ALLGATHER, 65536, 0, 2, 2, 1), 2 * fl + 2 * m * (0.25e-9 + t384 * 0.05e-9));
    NEAR(predict(&p, "shm", MB_COLL_REDUCE_SCATTER, 65536, 0, 2, 2, 1), 2 * fl + m * (0.5e-9 + t384 * 0.1e-9));
    /* shared memory reaches one node */
    EXPECT(isnan(predict(&p, "shm", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2)));
    EXPECT(isnan(predict(&p, "pool", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2)));

    /* out of cache: 8 MiB on 2 ranks, ws = 2 * 2 * 8 MiB > the 1e6 B cache: the memory rates
     * alone (a sweep over more than the cache hits none of it) */
    double big = 8 << 20, f = 0;
    double cb = f * 0.25e-9 + (1 - f) * 0.5e-9, gb = f * 0.5e-9 + (1 - f) * 1e-9;
    /* from 4 MiB shm pushes: each rank streams its reduced half into both outputs */
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 8 << 20, 0, 2, 2, 1), 2 * fl + big / 2 * gb + big * 0.2e-9);
    struct mb_coll_profile nostream = p;
    nostream.stream = NAN; /* an older profile: priced as copies */
    NEAR(predict(&nostream, "shm", MB_COLL_ALLREDUCE, 8 << 20, 0, 2, 2, 1), 2 * fl + big / 2 * gb + big * cb);
    /* below it, the pull path: reduce a half, copy the peer's half out */
    double mid = 2 << 20, fm = 0; /* ws 8 MiB: out of cache too */
    double cm = fm * 0.25e-9 + (1 - fm) * 0.5e-9, gm = fm * 0.5e-9 + (1 - fm) * 1e-9;
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 2 << 20, 0, 2, 2, 1), 2 * fl + mid / 2 * gm + mid / 2 * cm);
    NEAR(predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 8 << 20, 0, 2, 2, 1),
         2 * fl + big * cb + big / 2 * gb + big * cb);

    /* cma: 2 ranks, 256 KiB: 2 chunks of its slice per peer read, twice */
    double sl = 131072, rd = 2 * 3e-6 + sl * 1e-9;
    NEAR(predict(&p, "cma", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1), 2 * fl + 2 * rd + sl * g);
    struct mb_coll_profile nocma = p;
    nocma.cma_alpha = NAN;
    EXPECT(isnan(predict(&nocma, "cma", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1)));
    EXPECT(isfinite(predict(&nocma, "shm", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1)));
    /* ucx: 2 ranks, 256 KiB in place: two UCX flag rounds, one 128 KiB get of a
     * slice each way (one request, its bytes a CMA read, or a copy without
     * CMA), one reduction of the slice */
    NEAR(predict(&p, "ucx", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1), 2 * fl + 2 * (3e-6 + sl * 1e-9) + sl * g);
    NEAR(predict(&nocma, "ucx", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1), 2 * fl + 2 * (3e-6 + sl * c) + sl * g);

    /* hier over 2 nodes of 2: copy-in reduce and broadcast on the node, Rabenseifner over 2 leaders:
     * its one step crosses the link (net alpha, net beta; the leader alone on it), each way */
    const double na = 20e-6, nb = 0.8e-9;
    double node_reduce = 2 * fl + 2 * m * c + m / 2 * g, node_bcast = 2 * fl + 2 * m * c;
    NEAR(predict(&p, "hier", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2),
         node_reduce + node_bcast + 2 * (na + m / 2 * nb) + m / 2 * g);
    /* the same split on one machine (--ranks-per-node): the "link" is point-to-point */
    NEAR(predict_on(&p, "hier", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2, 1),
         node_reduce + node_bcast + 2 * (a + m / 2 * b) + m / 2 * g);

    /* across machines, 4 nodes x 2 ranks, 64 KiB in place (ws = 2 * 64 KiB * 2, in cache) */
    /* ring: every step as slow as its boundary hop over a link (slower than p2p here) */
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 65536, 1, 8, 2, 4), 14 * (na + m / 8 * nb) + 7 * m / 8 * g);
    /* Rabenseifner at 8 = 4 x 2: masks 1 (on the node: n/8), 2 and 4 (across: n/4, n/2, both
     * ranks of the node on the link at once) */
    NEAR(predict(&p, "rabenseifner", MB_COLL_ALLREDUCE, 65536, 1, 8, 2, 4),
         2 * (a + m / 8 * b) + 2 * (na + 2 * m / 4 * nb) + 2 * (na + 2 * m / 2 * nb) + 7 * m / 8 * g);
    /* rd: mask 1 on the node, masks 2 and 4 across with the node's 2 ranks sharing the link */
    NEAR(predict(&p, "rd", MB_COLL_ALLREDUCE, 65536, 1, 8, 2, 4),
         (a + m * b) + 2 * (na + 2 * m * nb) + 3 * m * g);
    /* ucx at 2 x 2, 256 KiB in place: flags over the link; each phase the peer on the node
     * read (a CMA read, 1 chunk of the 64 KiB slice) against the 2 remote slices pulled
     * by both ranks over the link (the slower counts); the reduction of 4 slices */
    double q = 65536, local = 3e-6 + q * 1e-9, remote = na + 2 * q * 2 * nb;
    NEAR(predict(&p, "ucx", MB_COLL_ALLREDUCE, 262144, 1, 4, 2, 2), 2 * (fl + na) + 2 * fmax(local, remote) + 3 * q * g);
    /* binomial bcast over machines: every level priced as a link crossing when slower */
    NEAR(predict(&p, "binomial", MB_COLL_BCAST, 16384, 1, 4, 2, 2), 2 * (na + n * nb));

    /* a profile without the link's terms: every prediction that crosses machines is NaN (not
     * modelled; mb-coll's column says nan), one machine's are unchanged */
    struct mb_coll_profile nonet = p;
    nonet.net_alpha = nonet.net_beta = NAN;
    static const char *const crossing[] = {"ring", "rd", "rabenseifner", "hier", "ucx"};
    for (size_t i = 0; i < sizeof(crossing) / sizeof(crossing[0]); i++) {
        EXPECT(isnan(predict(&nonet, crossing[i], MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2)));
        NEAR(predict_on(&nonet, crossing[i], MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2, 1),
             predict_on(&p, crossing[i], MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2, 1));
        NEAR(predict(&nonet, crossing[i], MB_COLL_ALLREDUCE, 65536, 0, 4, 4, 1),
             predict(&p, crossing[i], MB_COLL_ALLREDUCE, 65536, 0, 4, 4, 1));
    }

    /* mpi: not modelled (the library's own choice of algorithm is not calibrated) */
    EXPECT(isnan(predict(&p, "mpi", MB_COLL_ALLREDUCE, 16384, 0, 2, 2, 1)));

    /* what the model does not know */
    EXPECT(isnan(predict(&p, "nccl", MB_COLL_ALLREDUCE, 16384, 0, 2, 2, 1)));
    EXPECT(!mb_coll_model_knows("nccl") && mb_coll_model_knows("shm") && !mb_coll_model_knows("mpi"));
    EXPECT(isnan(predict(&p, "rd", MB_COLL_BCAST, 16384, 0, 2, 2, 1)));
    EXPECT(isnan(predict(NULL, "rd", MB_COLL_ALLREDUCE, 16384, 0, 2, 2, 1)));
    /* one rank: finite and cheap */
    EXPECT(isfinite(predict(&p, "ring", MB_COLL_ALLREDUCE, 16384, 0, 1, 1, 1)));
    /* every known algorithm: finite, positive, and not faster for more bytes */
    static const char *const names[] = {"ring", "rd", "rabenseifner", "shm", "shm-copyin", "pool", "cma", "hier", "ucx"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        for (int P = 2; P <= 5; P++) {
            double prev = 0;
            for (size_t bytes = 8; bytes <= (64u << 20); bytes *= 8) {
                double t = predict(&p, names[i], MB_COLL_ALLREDUCE, bytes, 0, P, P, 1);
                EXPECT(isfinite(t) && t > 0 && t >= prev);
                prev = t;
            }
        }
}

/* The measured per-message and per-request overheads, each against the sum by hand. */
static void test_overheads(void)
{
    struct mb_coll_profile flat = known(), p = known();
    p.p2p_msg1k = 3e-6, p.p2p_msg8k = 5e-6, p.p2p_nb_alpha = 4e-6;
    const double b = 1e-9, g = 0.5e-9;
    /* ring allreduce at 2 ranks in place: two exchanges of n/2 and one reduction of n/2; the
     * overhead o(n/2) at 8 B (the latency), at 1 KiB, half way to 1 KiB (516 B: 2 us),
     * half way from 1 to 8 KiB (4608 B: 4 us), and beyond 8 KiB (5 us) */
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 16, 1, 2, 2, 1), 2 * (1e-6 + 8 * b) + 8 * g);
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 1032, 1, 2, 2, 1), 2 * (2e-6 + 516 * b) + 516 * g);
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 2048, 1, 2, 2, 1), 2 * (3e-6 + 1024 * b) + 1024 * g);
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 9216, 1, 2, 2, 1), 2 * (4e-6 + 4608 * b) + 4608 * g);
    NEAR(predict(&p, "ring", MB_COLL_ALLREDUCE, 65536, 1, 2, 2, 1), 2 * (5e-6 + 32768 * b) + 32768 * g);
    /* rd at 2: one exchange of n (2 KiB: o = 3 us + 2 us * 1/7), one reduction */
    NEAR(predict(&p, "rd", MB_COLL_ALLREDUCE, 2048, 1, 2, 2, 1), 3e-6 + 2e-6 * 1024 / 7168 + 2048 * b + 2048 * g);
    /* scatter-allgather bcast at 4, 16 KiB: 3 sends and 3 ring steps of 4 KiB, o(4 KiB) each */
    double o4k = 3e-6 + 2e-6 * 3072 / 7168;
    NEAR(predict(&p, "scatter-allgather", MB_COLL_BCAST, 16384, 1, 4, 4, 1), 6 * (o4k + 4096 * b));
    /* hier on 2 nodes of 1 rank on one host (a --ranks-per-node split): the node levels carry
     * no messages; the leaders' ring has 2 non-blocking steps of n/2 (32 KiB), each with the
     * request round's set-up instead of the blocking exchange's (4 - 1 us) and o(32 KiB) */
    NEAR(predict_on(&p, "hier", MB_COLL_ALLREDUCE, 65536, 0, 2, 1, 2, 1),
         predict_on(&flat, "hier", MB_COLL_ALLREDUCE, 65536, 0, 2, 1, 2, 1) + 2 * (4e-6 - 1e-6) + 2 * (5e-6 - 1e-6));
    /* across machines the link's exchange is net_alpha's: only the request set-up is added */
    NEAR(predict(&p, "hier", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2),
         predict(&flat, "hier", MB_COLL_ALLREDUCE, 65536, 0, 4, 2, 2) + 2 * (4e-6 - 1e-6));
    /* 3 leaders (3 nodes of 1, one host): 4 steps of n/3, 2 reductions of n/3 */
    double n3 = 65536.0 / 3, fl = 2e-6, c = 0.25e-9;
    double node = (2 * fl + 3 * 65536 * c) + (2 * fl + 2 * 65536 * c); /* copy-in reduce, bcast, 1 rank */
    NEAR(predict_on(&p, "hier", MB_COLL_ALLREDUCE, 65536, 0, 3, 1, 3, 1),
         node + 4 * (4e-6 - 1e-6 + 5e-6 + n3 * b) + 2 * n3 * g);
    /* the shared-memory algorithms send no messages: unchanged */
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 1024, 0, 2, 2, 1), predict(&flat, "shm", MB_COLL_ALLREDUCE, 1024, 0, 2, 2, 1));
}

static const char *tmpfile_with(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/test_coll_model.XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
    return path;
}

static void test_profile(void)
{
    struct mb_coll_profile p = known(), q;
    char err[600], path[64];
    snprintf(path, sizeof(path), "%s", tmpfile_with(""));
    EXPECT(mb_coll_profile_write(path, &p, err, sizeof(err)) == 0);
    EXPECT(mb_coll_profile_read(path, &q, err, sizeof(err)) == 0);
    EXPECT(strcmp(q.host, "testhost") == 0 && strcmp(q.date, p.date) == 0 && q.ranks == 2);
    EXPECT_NEAR(q.cache_bytes, 1e6, 1e-3);
    EXPECT_NEAR(q.reduce.mem, 1e-9, 1e-15);
    NEAR(predict(&q, "ring", MB_COLL_ALLREDUCE, 16384, 0, 4, 4, 1), predict(&p, "ring", MB_COLL_ALLREDUCE, 16384, 0, 4, 4, 1));

    EXPECT_NEAR(q.net_alpha, 20e-6, 1e-12);
    EXPECT_NEAR(q.net_beta, 0.8e-9, 1e-15);
    for (int i = 0; i < MB_COLL_NWS; i++) /* the shm tables, written and read back in order */
        EXPECT(q.shm_copy[i] == p.shm_copy[i] && q.shm_reduce[i] == p.shm_reduce[i]);

    /* CMA refused: nan is written and read back; cma predicts NaN */
    p.cma_alpha = p.cma.cache = p.cma.mem = NAN;
    EXPECT(mb_coll_profile_write(path, &p, err, sizeof(err)) == 0);
    EXPECT(mb_coll_profile_read(path, &q, err, sizeof(err)) == 0 && isnan(q.cma_alpha));
    /* ucx unavailable: its terms are written and read back as nan (present, not absent) */
    p.ucx_flag = p.ucx_get_alpha = NAN;
    EXPECT(mb_coll_profile_write(path, &p, err, sizeof(err)) == 0);
    EXPECT(mb_coll_profile_read(path, &q, err, sizeof(err)) == 0 && isnan(q.ucx_flag) && isnan(q.ucx_get_alpha));
    unlink(path);

    /* text edits of a good profile, each with the words its error must hold */
    p = known();
    char good[8192];
    snprintf(path, sizeof(path), "%s", tmpfile_with(""));
    mb_coll_profile_write(path, &p, err, sizeof(err));
    FILE *f = fopen(path, "r");
    size_t len = fread(good, 1, sizeof(good) - 1, f);
    good[len] = '\0';
    fclose(f);
    unlink(path);
    EXPECT(mb_coll_profile_parse(good, "x", &q, err, sizeof(err)) == 0);
    char text[9000];
    snprintf(text, sizeof(text), "%s\nsome_future_key = 12\n", good); /* unknown keys are ignored */
    EXPECT(mb_coll_profile_parse(text, "x", &q, err, sizeof(err)) == 0);

    static const struct {
        const char *from, *to, *needle;
    } bad[] = {
        {"flag_s = 2e-06", "flag_s = fast", "flag_s: 'fast'"},
        {"flag_s = 2e-06", "flag_s = -2e-06", "flag_s: '-2e-06'"},
        {"flag_s = 2e-06", "flag_s = nan", "flag_s: 'nan'"},
        {"flag_s = ", "flag_s 2", "expected KEY = VALUE"},
        {"flag_s = ", "xflag_s = ", "missing key flag_s"},
        {"ranks = 2", "ranks = 1", "ranks"},
        {"ranks = 2", "ranks = two", "ranks"},
        {"format = movebench-coll-profile 1", "format = other 9", "format"},
        {"format = movebench-coll-profile 1", "", "no 'format"},
        {"cache_bytes = ", "cache_bytes = inf", "cache_bytes"},
        {"cache_bytes = ", "cache_bytes = 7\ncache_bytes = ", "given twice"},
        {"copy_mem_s_per_B = ", "copy_mem_s_per_B = 1e-9x", "copy_mem_s_per_B"},
        {"net_s_per_B = ", "net_s_per_B = -1", "net_s_per_B"},
        {"net_alpha_s = ", "net_alpha_s = fast", "net_alpha_s"},
        {"p2p_msg_1KiB_s = ", "xp2p_msg_1KiB_s = ", "missing key p2p_msg_1KiB_s"},
        {"p2p_msg_8KiB_s = ", "xp2p_msg_8KiB_s = ", "missing key p2p_msg_8KiB_s"},
        {"p2p_nb_alpha_s = ", "xp2p_nb_alpha_s = ", "missing key p2p_nb_alpha_s"},
        {"p2p_msg_8KiB_s = ", "p2p_msg_8KiB_s = nan\np2p_msg_8KiB_sx = ", "p2p_msg_8KiB_s: 'nan'"},
        {"p2p_nb_alpha_s = ", "p2p_nb_alpha_s = -1\nx = ", "p2p_nb_alpha_s: '-1'"},
        {"shm_copy_ws1MiB_s_per_B = ", "xshm_copy_ws1MiB_s_per_B = ", "missing key shm_copy_ws1MiB_s_per_B"},
        {"ucx_flag_s = ", "xucx_flag_s = ", "missing key ucx_flag_s"},
        {"ucx_get_alpha_s = ", "xucx_get_alpha_s = ", "missing key ucx_get_alpha_s"},
        {"ucx_get_alpha_s = ", "ucx_get_alpha_s = -1\nx = ", "ucx_get_alpha_s: '-1'"},
        {"shm_reduce_ws64MiB_s_per_B = ", "xshm_reduce_ws64MiB_s_per_B = ", "missing key shm_reduce_ws64MiB_s_per_B"},
        {"shm_reduce_ws4MiB_s_per_B = ", "shm_reduce_ws4MiB_s_per_B = nan\nx = ", "shm_reduce_ws4MiB_s_per_B: 'nan'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *at = strstr(good, bad[i].from);
        EXPECT(at != NULL);
        if (!at)
            continue;
        snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, bad[i].to, at + strlen(bad[i].from));
        err[0] = '\0';
        int rc = mb_coll_profile_parse(text, "x.txt", &q, err, sizeof(err));
        EXPECT(rc == -1);
        if (!strstr(err, bad[i].needle) || !strstr(err, "x.txt") || strchr(err, '\n')) {
            fprintf(stderr, "case %zu: error '%s' lacks '%s' or is not one line\n", i, err, bad[i].needle);
            test_failures++;
        }
    }
    /* a malformed line names its number */
    snprintf(text, sizeof(text), "# c\nformat = movebench-coll-profile 1\ngarbage\n");
    EXPECT(mb_coll_profile_parse(text, "y", &q, err, sizeof(err)) == -1 && strstr(err, "y:3:"));
    EXPECT(mb_coll_profile_read("/no/such/profile.txt", &q, err, sizeof(err)) == -1 && strstr(err, "cannot open"));
    snprintf(path, sizeof(path), "%s", tmpfile_with("\x7f" "ELF\x01\x02"));
    EXPECT(mb_coll_profile_read(path, &q, err, sizeof(err)) == -1);
    unlink(path);
    EXPECT(mb_coll_profile_write("/proc/no/such/dir/p.txt", &p, err, sizeof(err)) == -1 && strstr(err, "cannot write"));

    char def[300];
    mb_coll_profile_default(def, sizeof(def));
    EXPECT(strncmp(def, "profiles/", 9) == 0 && strlen(def) > 13 && strcmp(def + strlen(def) - 4, ".txt") == 0);
}

/* The shm family's copies and reductions at each step's node working set,
 * interpolated in log(ws) between the table's points (known(): copy 0.25,
 * 0.3, 0.5 ns/B and reduce 0.5, 0.6, 1 ns/B at 256 KiB, 1 MiB, 4 MiB). */
static void test_ws_table(void)
{
    struct mb_coll_profile p = known();
    const double fl = 2e-6;
    /* shm allreduce out of place, 2 ranks, 512 KiB: the reduction reads both
     * inputs and writes the reduced halves, (L + 1) n = 1.5 MiB, as does the
     * copy-out: t = log2(1.5 MiB / 1 MiB) / 2 = 0.292481 of the way to 4 MiB */
    double n = 524288, t = 0.29248125036057809;
    double c15 = 0.3e-9 + t * 0.2e-9, g15 = 0.6e-9 + t * 0.4e-9; /* 0.358496, 0.716993 ns/B */
    EXPECT_NEAR(c15, 0.358496e-9, 1e-15);
    EXPECT_NEAR(g15, 0.716993e-9, 1e-15);
    NEAR(predict(&p, "shm", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1), 2 * fl + n / 2 * g15 + n / 2 * c15);
    /* copy-in: 2 L n = 2 MiB for the copy into scratch, half-way to 4 MiB: 0.4 ns/B */
    NEAR(predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1),
         2 * fl + n * 0.4e-9 + n / 2 * g15 + n * c15);
    NEAR(predict(&p, "pool", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1),
         predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1));
    /* allgather of 128 KiB blocks, 2 ranks, out of place: 2 copies of n at
     * L (L + 1) n = 768 KiB: t = log2(3) / 2 = 0.792481 between 256 KiB and 1 MiB */
    double m = 131072, c768 = 0.25e-9 + 0.79248125036057809 * 0.05e-9; /* 0.289624 ns/B */
    EXPECT_NEAR(c768, 0.289624e-9, 1e-15);
    NEAR(predict(&p, "shm", MB_COLL_ALLGATHER, 131072, 0, 2, 2, 1), 2 * fl + 2 * m * c768);
    /* beyond the table's last point (64 MiB), its last value: 32 MiB on 2 ranks reduces at 96 MiB */
    double big = 32 << 20;
    NEAR(predict(&p, "shm-copyin", MB_COLL_ALLREDUCE, 32 << 20, 0, 2, 2, 1),
         2 * fl + big * 0.5e-9 + big / 2 * 1e-9 + big * 0.5e-9);
    /* a rate that differs only in the table moves the prediction: the private memcpy
     * rates are not the shm family's (they price the message-passing algorithms' copies) */
    struct mb_coll_profile q = p;
    q.copy = (struct mb_coll_rate){1, 1};
    NEAR(predict(&q, "shm", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1), predict(&p, "shm", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1));
    q = p;
    q.shm_copy[1] = 0.4e-9; /* 1 MiB: 0.3 -> 0.4 ns/B moves c15 by (1 - t) * 0.1 ns/B */
    NEAR(predict(&q, "shm", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1) - predict(&p, "shm", MB_COLL_ALLREDUCE, 524288, 0, 2, 2, 1),
         n / 2 * (1 - t) * 0.1e-9);
}

/* UCX's measured flag round and get request in ucx's closed form. */
static void test_ucx_terms(void)
{
    struct mb_coll_profile p = known();
    p.ucx_flag = 5e-6;
    p.ucx_get_alpha = 7e-6;
    const double g = 0.5e-9, na = 20e-6, nb = 0.8e-9;
    /* 2 ranks, 512 KiB in place: 2 flag rounds; 2 phases of gets of the 256 KiB slice
     * from the one peer, 2 requests of 128 KiB each, at the CMA rate (1 ns/B); one
     * reduction of the slice (ws 1 MiB > the 1e6 B cache: the memory rate 1 ns/B) */
    double sl = 262144;
    NEAR(predict(&p, "ucx", MB_COLL_ALLREDUCE, 524288, 1, 2, 2, 1),
         2 * 5e-6 + 2 * (2 * 7e-6 + sl * 1e-9) + sl * 1e-9);
    /* small (4 KiB, 3 ranks, out of place): 2 flag rounds, one phase of 2 gets of
     * the whole vector (one request each), 2 reductions, no copy */
    double n = 4096;
    NEAR(predict(&p, "ucx", MB_COLL_ALLREDUCE, 4096, 0, 3, 3, 1), 2 * 5e-6 + 2 * (7e-6 + n * 1e-9) + 2 * n * 0.5e-9);
    /* across 2 machines of 2: each flag round crosses the link too */
    double q = 65536, local = 7e-6 + q * 1e-9, remote = na + 2 * q * 2 * nb;
    NEAR(predict(&p, "ucx", MB_COLL_ALLREDUCE, 262144, 1, 4, 2, 2), 2 * (5e-6 + na) + 2 * fmax(local, remote) + 3 * q * g);
    /* not measured (ucx's set-up failed in the calibration): ucx is not modelled */
    p.ucx_flag = p.ucx_get_alpha = NAN;
    EXPECT(isnan(predict(&p, "ucx", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1)));
    EXPECT(isfinite(predict(&p, "shm", MB_COLL_ALLREDUCE, 262144, 1, 2, 2, 1)));
}

int main(void)
{
    test_ucx_terms();
    test_model();
    test_ws_table();
    test_overheads();
    test_profile();
    return TEST_EXIT();
}
