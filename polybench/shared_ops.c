/* The naive variants' element-wise operations: one OpenMP loop and one
 * materialised output per NumPy operator. */
#include "shared_ops.h"

#include <stddef.h>

static inline double apply(enum pbs_op op, double x, double y, double s)
{
    switch (op) {
    case PBS_ADD: return x + y;
    case PBS_SUB: return x - y;
    case PBS_MUL: return x * y;
    case PBS_DIV: return x / y;
    case PBS_SCALE: return s * x;
    case PBS_COPY: return x;
    case PBS_SQUARE: return x * x;
    case PBS_SUBS: return x - s;
    }
    return x;
}

void pbs_ew(enum pbs_op op, struct pbs_view out, struct pbs_view a, struct pbs_view b, double s)
{
    int binary = op == PBS_ADD || op == PBS_SUB || op == PBS_MUL || op == PBS_DIV;
    long n0 = out.n[0], n1 = out.n[1], n2 = out.n[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (long i = 0; i < n0; i++)
        for (long j = 0; j < n1; j++) {
            double *o = out.p + i * out.s[0] + j * out.s[1];
            const double *x = a.p + i * a.s[0] + j * a.s[1];
            const double *y = binary ? b.p + i * b.s[0] + j * b.s[1] : x;
            long so = out.s[2], sx = a.s[2], sy = binary ? b.s[2] : sx;
            if (so == 1 && sx == 1 && sy == 1)
                for (long k = 0; k < n2; k++)
                    o[k] = apply(op, x[k], y[k], s);
            else
                for (long k = 0; k < n2; k++)
                    o[k * so] = apply(op, x[k * sx], y[k * sy], s);
        }
}

double pbs_sum(struct pbs_view a)
{
    double sum = 0;
    long n0 = a.n[0], n1 = a.n[1], n2 = a.n[2];
#pragma omp parallel for collapse(2) reduction(+ : sum) schedule(static)
    for (long i = 0; i < n0; i++)
        for (long j = 0; j < n1; j++) {
            const double *x = a.p + i * a.s[0] + j * a.s[1];
            for (long k = 0; k < n2; k++)
                sum += x[k * a.s[2]];
        }
    return sum;
}
