"""The same kernels as kernels_numpy.py as @dace.program, for DaCe's CPU
backend (auto_optimize at compile time, in runner.py). Imported only when
`import dace` works (run.sh --with-dace)."""
import dace as dc
import numpy as np

NI, NJ, NK, M, N, K, NR, NQ, NP = (dc.symbol(s, dtype=dc.int64) for s in
                                   ("NI", "NJ", "NK", "M", "N", "K", "NR", "NQ", "NP"))
f64 = dc.float64


@dc.program
def gemm(alpha: f64, beta: f64, C: f64[NI, NJ], A: f64[NI, NK], B: f64[NK, NJ]):
    C[:] = alpha * A @ B + beta * C


@dc.program
def atax(A: f64[M, N], x: f64[N]):
    return (A @ x) @ A


@dc.program
def bicg(A: f64[N, M], p: f64[M], r: f64[N]):
    return r @ A, A @ p


@dc.program
def mvt(x1: f64[N], x2: f64[N], y_1: f64[N], y_2: f64[N], A: f64[N, N]):
    x1 += A @ y_1
    x2 += y_2 @ A


@dc.program
def gemver(alpha: f64, beta: f64, A: f64[N, N], u1: f64[N], v1: f64[N], u2: f64[N], v2: f64[N], w: f64[N],
           x: f64[N], y: f64[N], z: f64[N]):
    A += np.multiply.outer(u1, v1) + np.multiply.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


@dc.program
def gesummv(alpha: f64, beta: f64, A: f64[N, N], B: f64[N, N], x: f64[N]):
    return alpha * A @ x + beta * B @ x


@dc.program
def doitgen(A: f64[NR, NQ, NP], C4: f64[NP, NP]):
    for r in range(NR):
        A[r, :, :] = A[r, :, :] @ C4


@dc.program
def jacobi_1d(TSTEPS: dc.int64, A: f64[N], B: f64[N]):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


@dc.program
def jacobi_2d(TSTEPS: dc.int64, A: f64[N, N], B: f64[N, N]):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@dc.program
def heat_3d(TSTEPS: dc.int64, A: f64[N, N, N], B: f64[N, N, N]):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]) +
                               0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1]) +
                               0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2]) +
                               A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]) +
                               0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1]) +
                               0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2]) +
                               B[1:-1, 1:-1, 1:-1])


@dc.program
def lstsqr(x: f64[N], y: f64[N]):
    x_avg = np.sum(x) / N  # np.average: the frontend has no return type for it
    y_avg = np.sum(y) / N
    dx = x - x_avg
    dy = y - y_avg
    slope = np.sum(dx * dy) / np.sum(dx ** 2)
    return slope, y_avg - slope * x_avg


@dc.program
def specialconvolve(a: f64[M, N]):
    rows = a[1:-1, :] + a[:-2, :] + a[2:, :]
    return rows[:, 1:-1] + rows[:, :-2] + rows[:, 2:] - 9 * a[1:-1, 1:-1]


@dc.program
def wdist(A: f64[K, M], B: f64[K, N], W: f64[K, M]):
    D = np.zeros((M, N))
    for i, j in dc.map[0:M, 0:N]:
        diff = (A[:, i] - B[:, j]) / W[:, i]
        D[i, j] = np.sqrt(np.sum(diff ** 2))
    return D


PROGRAMS = {p.f.__name__: p for p in (gemm, atax, bicg, mvt, gemver, gesummv, doitgen, jacobi_1d, jacobi_2d, heat_3d,
                                lstsqr, specialconvolve, wdist)}
