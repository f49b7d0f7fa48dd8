/* nn/ GEMM: every transpose combination with leading dimensions larger
 * than the matrices, against a naive double-precision product; tensors
 * (alloc, view, slice, dtype copy). Where a CUDA device answers (or
 * NN_REQUIRE_CUDA=1, as tests/gpu/nn.sh sets), cuBLAS is compared with
 * the CPU path on the same inputs; otherwise that part is reported as
 * not run. */
#include "check.h"
#include "../../nn/nn.h"
#include "../../common/common.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double ref(int ta, int tb, const float *A, int lda, const float *B, int ldb, int i, int j, int K)
{
    double s = 0;
    for (int k = 0; k < K; k++)
        s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
    return s;
}

int main(void)
{
    struct nn_rng r;
    nn_rng_seed(&r, 5);
    int M = 37, N = 29, K = 41, pad = 3;
    size_t big = 64 * 64;
    float *A = malloc(big * 4), *B = malloc(big * 4), *C = malloc(big * 4), *C0 = malloc(big * 4);
    for (size_t i = 0; i < big; i++) {
        A[i] = (float)nn_rng_normal(&r);
        B[i] = (float)nn_rng_normal(&r);
        C0[i] = (float)nn_rng_normal(&r);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
            memcpy(C, C0, big * 4);
            EXPECT(nn_gemm(NN_HOST, ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C, ldc) == 0);
            double worst = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++)
                    worst = fmax(worst, fabs(C[i * ldc + j] - (0.5 * ref(ta, tb, A, lda, B, ldb, i, j, K) +
                                                                2.0 * C0[i * ldc + j])));
            EXPECT(worst < 1e-4);
            EXPECT(C[N] == C0[N]); /* the padding is untouched */
        }

    /* the split (nn_gemm_set_split): GEMMs above the split's 2^24
     * multiply-adds, split by columns (N > M) and by rows (M > N), K past
     * two of OpenBLAS's K blocks (900), every transpose, padded, beta !=
     * 0: over 3 OpenMP threads the same bits as on one (one single-
     * threaded OpenBLAS call), right against the double product, and
     * OpenBLAS's thread count back afterwards */
    {
        int shapes[3][3] = {{150, 430, 300}, {430, 150, 300}, {130, 160, 900}}, nt = omp_get_max_threads();
        int nb = openblas_get_num_threads();
        size_t n = 700 * 700;
        float *X = malloc(n * 4), *Y = malloc(n * 4), *Z0 = malloc(n * 4), *Z1 = malloc(n * 4), *Z2 = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            X[i] = (float)nn_rng_normal(&r);
            Y[i] = (float)nn_rng_normal(&r);
            Z0[i] = (float)nn_rng_normal(&r);
        }
        omp_set_num_threads(3);
        int same = 1;
        for (int sh = 0; sh < 3; sh++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    int m = shapes[sh][0], nn = shapes[sh][1], k = shapes[sh][2];
                    int lda = (ta ? m : k) + 5, ldb = (tb ? k : nn) + 5, ldc = nn + 5;
                    memcpy(Z1, Z0, n * 4);
                    memcpy(Z2, Z0, n * 4);
                    int was = nn_gemm_set_split(1);
                    omp_set_num_threads(1);
                    EXPECT(nn_gemm(NN_HOST, ta, tb, m, nn, k, 0.5f, X, lda, Y, ldb, 2.0f, Z1, ldc) == 0);
                    omp_set_num_threads(3);
                    EXPECT(nn_gemm(NN_HOST, ta, tb, m, nn, k, 0.5f, X, lda, Y, ldb, 2.0f, Z2, ldc) == 0);
                    EXPECT(openblas_get_num_threads() == nb);
                    EXPECT(nn_gemm_set_split(was) == 1);
                    same &= memcmp(Z1, Z2, n * 4) == 0; /* padding included */
                    double worst = 0;
                    for (int i = 0; i < m; i += 7)
                        for (int j = 0; j < nn; j += 5)
                            worst = fmax(worst, fabs(Z2[i * ldc + j] - (0.5 * ref(ta, tb, X, lda, Y, ldb, i, j, k) +
                                                                        2.0 * Z0[i * ldc + j])));
                    EXPECT(worst < 1e-3);
                }
        omp_set_num_threads(nt);
        printf("gemm split over 3 threads vs 1: %s\n", same ? "bit-identical" : "DIFFER  FAIL");
        EXPECT(same);
        EXPECT(openblas_get_num_threads() == nb);
        free(X); free(Y); free(Z0); free(Z1); free(Z2);
    }

    /* tensors */
    char err[256];
    struct nn_tensor t, u;
    size_t shape[2] = {3, 5};
    EXPECT(nn_tensor_alloc(&t, NN_F32, NN_HOST, 2, shape, err, sizeof(err)) == 0);
    EXPECT(t.numel == 15 && nn_tensor_bytes(&t) == 60 && t.owner);
    EXPECT(nn_tensor_alloc(&u, NN_BF16, NN_HOST, 2, shape, err, sizeof(err)) == 0);
    EXPECT(nn_tensor_bytes(&u) == 30);
    for (int i = 0; i < 15; i++)
        ((float *)t.data)[i] = (float)i - 7.25f;
    EXPECT(nn_tensor_copy(&u, &t) == 0);
    struct nn_tensor s = nn_tensor_slice(&u, 5, 5);
    EXPECT(!s.owner && s.numel == 5 && s.data == (char *)u.data + 10);
    EXPECT(nn_bf16_to_f32(((uint16_t *)s.data)[0]) == -2.25f);
    nn_tensor_free(&u);
    EXPECT(nn_tensor_alloc(&u, NN_F32, NN_CUDA, 2, shape, err, sizeof(err)) == (mb_cuda_probe(NULL, 0) == 0 ? 0 : -1));
    nn_tensor_free(&u);

    /* cuBLAS against the CPU path */
    const char *req = getenv("NN_REQUIRE_CUDA");
    if (!nn_gemm_cuda_available()) {
        if (req && *req == '1') {
            fprintf(stderr, "NN_REQUIRE_CUDA=1 but cuBLAS is unavailable: %s\n",
                    mb_cuda_built() ? "no usable device" : "a CPU build");
            return 1;
        }
        fprintf(stderr, "cuBLAS comparison not run: no CUDA device\n");
        return TEST_EXIT();
    }
    int sz[3] = {64, 48, 80};
    size_t na = (size_t)sz[0] * sz[2], nb = (size_t)sz[2] * sz[1], nc = (size_t)sz[0] * sz[1];
    struct nn_tensor dA, dB, dC, hA = nn_tensor_view(A, NN_F32, NN_HOST, 1, &na);
    float *Ah = malloc(na * 4), *Bh = malloc(nb * 4), *Ch = malloc(nc * 4), *Cd = malloc(nc * 4);
    for (size_t i = 0; i < na; i++) Ah[i] = (float)nn_rng_normal(&r);
    for (size_t i = 0; i < nb; i++) Bh[i] = (float)nn_rng_normal(&r);
    (void)hA;
    EXPECT(nn_tensor_alloc(&dA, NN_F32, NN_CUDA, 1, &na, err, sizeof(err)) == 0);
    EXPECT(nn_tensor_alloc(&dB, NN_F32, NN_CUDA, 1, &nb, err, sizeof(err)) == 0);
    EXPECT(nn_tensor_alloc(&dC, NN_F32, NN_CUDA, 1, &nc, err, sizeof(err)) == 0);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int m = sz[0], n = sz[1], k = sz[2];
            int lda = ta ? m : k, ldb = tb ? k : n;
            mb_buf_copy(dA.data, MB_MEM_DEVICE, Ah, MB_MEM_HOST, na * 4);
            mb_buf_copy(dB.data, MB_MEM_DEVICE, Bh, MB_MEM_HOST, nb * 4);
            EXPECT(nn_gemm(NN_HOST, ta, tb, m, n, k, 1.0f, Ah, lda, Bh, ldb, 0.0f, Ch, n) == 0);
            EXPECT(nn_gemm(NN_CUDA, ta, tb, m, n, k, 1.0f, dA.data, lda, dB.data, ldb, 0.0f, dC.data, n) == 0);
            mb_buf_copy(Cd, MB_MEM_HOST, dC.data, MB_MEM_DEVICE, nc * 4);
            double worst = 0;
            for (size_t i = 0; i < nc; i++)
                worst = fmax(worst, fabs(Cd[i] - Ch[i]));
            fprintf(stderr, "cuBLAS vs CPU ta=%d tb=%d: max |diff| %.3g\n", ta, tb, worst);
            EXPECT(worst < 1e-3);
        }
    nn_tensor_free(&dA); nn_tensor_free(&dB); nn_tensor_free(&dC);
    return TEST_EXIT();
}
