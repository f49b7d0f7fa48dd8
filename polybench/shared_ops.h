/* Private to polybench/'s shared mode: strided views of arrays (NumPy's
 * slices) and the element-wise operations the naive variants materialise
 * one temporary at a time, each an OpenMP loop. */
#ifndef MB_PBS_OPS_H
#define MB_PBS_OPS_H

#include "polybench.h"

/* Up to three dimensions, any strides (elements); unused outer dims are 1. */
struct pbs_view {
    double *p;
    long n[3], s[3];
};

static inline struct pbs_view pbs_v1(double *p, long n, long stride)
{
    return (struct pbs_view){p, {1, 1, n}, {0, 0, stride}};
}
static inline struct pbs_view pbs_v2(double *p, long rows, long cols, long ld)
{
    return (struct pbs_view){p, {1, rows, cols}, {0, ld, 1}};
}
static inline struct pbs_view pbs_v3(double *p, long n0, long n1, long n2, long s0, long s1)
{
    return (struct pbs_view){p, {n0, n1, n2}, {s0, s1, 1}};
}
/* A fresh contiguous temporary in buf shaped like v. */
static inline struct pbs_view pbs_like(double *buf, struct pbs_view v)
{
    return (struct pbs_view){buf, {v.n[0], v.n[1], v.n[2]}, {v.n[1] * v.n[2], v.n[2], 1}};
}

enum pbs_op { PBS_ADD, PBS_SUB, PBS_MUL, PBS_DIV, PBS_SCALE, PBS_COPY, PBS_SQUARE, PBS_SUBS };

/* out = a OP b (PBS_SCALE: s * a; PBS_SUBS: a - s; COPY, SQUARE: of a). */
void pbs_ew(enum pbs_op op, struct pbs_view out, struct pbs_view a, struct pbs_view b, double s);
/* NumPy's np.sum of a view (one pass, OpenMP reduction). */
double pbs_sum(struct pbs_view a);

/* shared_rowpass.c: one pass over A (rows x cols, row-major) for the two
 * products that read it: per row i, d = A[i,:] . dx, then dy[i] = d +
 * dbeta * dy[i] (dy may be NULL), then ay[:] += c * A[i,:] with c = ax[i],
 * or c = d when ax is NULL (atax's (A x) A). ay accumulates: zero it for
 * "=". OpenMP threads over contiguous row blocks, each with its own ay
 * partial, added in thread order (the same result at a given thread count). */
void pbs_rowpass(const double *A, long rows, long cols, const double *dx, double *dy, double dbeta,
                 const double *ax, double *ay);

/* npy_rng.c: NumPy's default_rng(seed) (SeedSequence, PCG64) and its
 * random(): the same doubles as NPBench's initialize functions draw. */
struct pbs_rng {
    unsigned __int128 state, inc;
};
void pbs_rng_seed(struct pbs_rng *r, uint32_t seed);
/* the next n doubles of rng.random() in [0, 1), in C order */
void pbs_rng_random(struct pbs_rng *r, double *x, size_t n);

#endif
