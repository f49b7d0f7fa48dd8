/* Causal multi-head self-attention, forward and backward, on a packed
 * qkv [B*S, 3H] (H = A*D). Scores and probabilities are S x S per head;
 * the masked upper triangle is computed by the GEMM and then zeroed, so
 * the FLOPs are the full 4*B*S^2*H of the accounting. */
#include "nn.h"
#include "row_math.h"

#include <math.h>
#include <string.h>

static void softmax_causal(float *P, size_t S)
{
#pragma omp parallel for schedule(static) if (S * S >= (1u << 22))
    for (size_t i = 0; i < S; i++) {
        nn_softmax_causal_row(P + i * S, i, S);
    }
}

int nn_attn_fwd(enum nn_device dev, const float *qkv, float *probs, float *out, size_t B,
                size_t S, size_t A, size_t D)
{
    size_t H = A * D, ld = 3 * H;
    float scale = 1.0f / sqrtf((float)D);
    for (size_t b = 0; b < B; b++)
        for (size_t a = 0; a < A; a++) {
            const float *q = qkv + b * S * ld + a * D, *k = q + H, *v = q + 2 * H;
            float *P = probs + (b * A + a) * S * S;
            if (nn_gemm(dev, 0, 1, (int)S, (int)S, (int)D, scale, q, (int)ld, k, (int)ld, 0.0f, P,
                        (int)S) != 0)
                return -1;
            softmax_causal(P, S);
            if (nn_gemm(dev, 0, 0, (int)S, (int)D, (int)S, 1.0f, P, (int)S, v, (int)ld, 0.0f,
                        out + b * S * H + a * D, (int)H) != 0)
                return -1;
        }
    return 0;
}

int nn_attn_bwd(enum nn_device dev, const float *qkv, const float *probs, const float *dout,
                float *dqkv, float *scratch, size_t B, size_t S, size_t A, size_t D)
{
    size_t H = A * D, ld = 3 * H;
    float scale = 1.0f / sqrtf((float)D);
    for (size_t b = 0; b < B; b++)
        for (size_t a = 0; a < A; a++) {
            const float *q = qkv + b * S * ld + a * D, *k = q + H, *v = q + 2 * H;
            float *dq = dqkv + b * S * ld + a * D, *dk = dq + H, *dv = dq + 2 * H;
            const float *P = probs + (b * A + a) * S * S;
            const float *dO = dout + b * S * H + a * D;
            float *dP = scratch;
            /* dP = dO V^T, dV = P^T dO */
            if (nn_gemm(dev, 0, 1, (int)S, (int)S, (int)D, 1.0f, dO, (int)H, v, (int)ld, 0.0f, dP,
                        (int)S) != 0 ||
                nn_gemm(dev, 1, 0, (int)S, (int)D, (int)S, 1.0f, P, (int)S, dO, (int)H, 0.0f, dv,
                        (int)ld) != 0)
                return -1;
            /* dS = P * (dP - rowsum(dP * P)), times the score scale */
#pragma omp parallel for schedule(static) if (S * S >= (1u << 22))
            for (size_t i = 0; i < S; i++)
                nn_softmax_causal_bwd_row(dP + i * S, P + i * S, i, S, scale);
            /* dQ = dS K, dK = dS^T Q */
            if (nn_gemm(dev, 0, 0, (int)S, (int)D, (int)S, 1.0f, dP, (int)S, k, (int)ld, 0.0f, dq,
                        (int)ld) != 0 ||
                nn_gemm(dev, 1, 0, (int)S, (int)D, (int)S, 1.0f, dP, (int)S, q, (int)ld, 0.0f, dk,
                        (int)ld) != 0)
                return -1;
        }
    return 0;
}
