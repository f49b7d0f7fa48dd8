"""NPBench's kernels in NumPy, transcribed from the math of NPBench's
published kernels (spcl/npbench: polybench and the SCC'22 kernels), with
their bench_info presets and initialize() formulas. Each entry of KERNELS
names the parameters, the arguments of the call, and what is validated:
arrays updated in place (`inplace`) and/or the returned values."""
import numpy as np

PRESETS = {
    "atax": {"S": (4000, 5000), "M": (10000, 12500), "L": (20000, 25000), "paper": (18000, 22000)},
    "bicg": {"S": (4000, 5000), "M": (10000, 12500), "L": (20000, 25000), "paper": (18000, 22000)},
    "doitgen": {"S": (60, 60, 128), "M": (110, 125, 256), "L": (220, 250, 512), "paper": (220, 250, 270)},
    "gemm": {"S": (1000, 1100, 1200), "M": (2500, 2750, 3000), "L": (7000, 7500, 8000), "paper": (2000, 2300, 2600)},
    "gemver": {"S": (1000,), "M": (3000,), "L": (10000,), "paper": (8000,)},
    "gesummv": {"S": (2000,), "M": (4000,), "L": (14000,), "paper": (11200,)},
    "mvt": {"S": (5500,), "M": (11000,), "L": (22000,), "paper": (16000,)},
    "jacobi_1d": {"S": (800, 3200), "M": (3000, 12000), "L": (8500, 34000), "paper": (4000, 32000)},
    "jacobi_2d": {"S": (50, 150), "M": (80, 350), "L": (200, 700), "paper": (1000, 2800)},
    "heat_3d": {"S": (25, 25), "M": (50, 40), "L": (100, 70), "paper": (500, 120)},
    "lstsqr": {"S": (100000,), "M": (1000000,), "L": (10000000,), "paper": (10000000,)},
    "specialconvolve": {"S": (100, 100), "M": (500, 500), "L": (2000, 2000), "paper": (10000, 10000)},
    "wdist": {"S": (100, 100, 100), "M": (200, 200, 200), "L": (500, 500, 500), "paper": (1000, 1000, 1000)},
}
PARAMS = {"atax": ("M", "N"), "bicg": ("M", "N"), "doitgen": ("NR", "NQ", "NP"), "gemm": ("NI", "NJ", "NK"),
          "gemver": ("N",), "gesummv": ("N",), "mvt": ("N",), "jacobi_1d": ("TSTEPS", "N"),
          "jacobi_2d": ("TSTEPS", "N"), "heat_3d": ("TSTEPS", "N"), "lstsqr": ("N",),
          "specialconvolve": ("M", "N"), "wdist": ("K", "M", "N")}
F = np.float64


# ---- initialize(): NPBench's formulas --------------------------------------
def init_gemm(NI, NJ, NK):
    C = np.fromfunction(lambda i, j: ((i * j + 1) % NI) / NI, (NI, NJ), dtype=F)
    A = np.fromfunction(lambda i, k: (i * (k + 1) % NK) / NK, (NI, NK), dtype=F)
    B = np.fromfunction(lambda k, j: (k * (j + 2) % NJ) / NJ, (NK, NJ), dtype=F)
    return dict(alpha=F(1.5), beta=F(1.2), C=C, A=A, B=B)


def init_atax(M, N):
    return dict(A=np.fromfunction(lambda i, j: ((i + j) % N) / (5 * M), (M, N), dtype=F),
                x=np.fromfunction(lambda i: 1 + i / F(N), (N,), dtype=F))


def init_bicg(M, N):
    return dict(A=np.fromfunction(lambda i, j: (i * (j + 1) % N) / N, (N, M), dtype=F),
                p=np.fromfunction(lambda i: (i % M) / M, (M,), dtype=F),
                r=np.fromfunction(lambda i: (i % N) / N, (N,), dtype=F))


def init_mvt(N):
    vec = lambda off: np.fromfunction(lambda i: ((i + off) % N) / N, (N,), dtype=F)
    return dict(x1=vec(0), x2=vec(1), y_1=vec(3), y_2=vec(4),
                A=np.fromfunction(lambda i, j: (i * j % N) / N, (N, N), dtype=F))


def init_gemver(N):
    fn = F(N)
    vec = lambda div: np.fromfunction(lambda i: ((i + 1) / fn) / div, (N,), dtype=F)
    return dict(alpha=F(1.5), beta=F(1.2), A=np.fromfunction(lambda i, j: (i * j % N) / N, (N, N), dtype=F),
                u1=np.fromfunction(lambda i: i, (N,), dtype=F), v1=vec(4.0), u2=vec(2.0), v2=vec(6.0),
                w=np.zeros(N, dtype=F), x=np.zeros(N, dtype=F), y=vec(8.0), z=vec(9.0))


def init_gesummv(N):
    return dict(alpha=F(1.5), beta=F(1.2),
                A=np.fromfunction(lambda i, j: ((i * j + 1) % N) / N, (N, N), dtype=F),
                B=np.fromfunction(lambda i, j: ((i * j + 2) % N) / N, (N, N), dtype=F),
                x=np.fromfunction(lambda i: (i % N) / N, (N,), dtype=F))


def init_doitgen(NR, NQ, NP):
    return dict(NR=NR, NQ=NQ, NP=NP,
                A=np.fromfunction(lambda i, j, k: ((i * j + k) % NP) / NP, (NR, NQ, NP), dtype=F),
                C4=np.fromfunction(lambda i, j: (i * j % NP) / NP, (NP, NP), dtype=F))


def init_jacobi_1d(TSTEPS, N):
    return dict(TSTEPS=TSTEPS, A=np.fromfunction(lambda i: (i + 2) / N, (N,), dtype=F),
                B=np.fromfunction(lambda i: (i + 3) / N, (N,), dtype=F))


def init_jacobi_2d(TSTEPS, N):
    return dict(TSTEPS=TSTEPS, A=np.fromfunction(lambda i, j: i * (j + 2) / N, (N, N), dtype=F),
                B=np.fromfunction(lambda i, j: i * (j + 3) / N, (N, N), dtype=F))


def init_heat_3d(TSTEPS, N):
    A = np.fromfunction(lambda i, j, k: (i + j + (N - k)) * 10 / N, (N, N, N), dtype=F)
    return dict(TSTEPS=TSTEPS, A=A, B=np.copy(A))


def init_lstsqr(N):
    rng = np.random.default_rng(42)
    return dict(x=rng.random((N,)), y=rng.random((N,)))


def init_specialconvolve(M, N):
    return dict(a=np.random.default_rng(42).random((M, N)))


def init_wdist(K, M, N):
    rng = np.random.default_rng(42)
    return dict(A=rng.random((K, M)), B=rng.random((K, N)), W=rng.random((K, M)))


# ---- the kernels --------------------------------------------------------------
def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def atax(A, x):
    return (A @ x) @ A


def bicg(A, p, r):
    return r @ A, A @ p


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


def doitgen(NR, NQ, NP, A, C4):
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))


def jacobi_1d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _heat_sweep(S):
    c = S[1:-1, 1:-1, 1:-1]
    return (0.125 * (S[2:, 1:-1, 1:-1] - 2.0 * c + S[:-2, 1:-1, 1:-1]) +
            0.125 * (S[1:-1, 2:, 1:-1] - 2.0 * c + S[1:-1, :-2, 1:-1]) +
            0.125 * (S[1:-1, 1:-1, 2:] - 2.0 * c + S[1:-1, 1:-1, :-2]) + c)


def heat_3d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = _heat_sweep(A)
        A[1:-1, 1:-1, 1:-1] = _heat_sweep(B)


def lstsqr(x, y):
    x_avg, y_avg = np.average(x), np.average(y)
    dx, dy = x - x_avg, y - y_avg
    slope = np.sum(dx * dy) / np.sum(dx ** 2)
    return slope, y_avg - slope * x_avg


def specialconvolve(a):
    rows = a[1:-1, :] + a[:-2, :] + a[2:, :]
    return rows[:, 1:-1] + rows[:, :-2] + rows[:, 2:] - 9 * a[1:-1, 1:-1]


def wdist(A, B, W):
    """NPBench's NumPy version: a Python double loop over the (i, j) pairs."""
    _, m = A.shape
    _, n = B.shape
    D = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            diff = (A[:, i] - B[:, j]) / W[:, i]
            D[i, j] = np.sqrt((diff ** 2).sum())
    return D


# name -> (initialize, kernel, arrays validated in place)
KERNELS = {
    "atax": (init_atax, atax, ()), "bicg": (init_bicg, bicg, ()), "doitgen": (init_doitgen, doitgen, ("A",)),
    "gemm": (init_gemm, gemm, ("C",)), "gemver": (init_gemver, gemver, ("A", "w", "x")),
    "gesummv": (init_gesummv, gesummv, ()), "mvt": (init_mvt, mvt, ("x1", "x2")),
    "jacobi_1d": (init_jacobi_1d, jacobi_1d, ("A", "B")), "jacobi_2d": (init_jacobi_2d, jacobi_2d, ("A", "B")),
    "heat_3d": (init_heat_3d, heat_3d, ("A", "B")), "lstsqr": (init_lstsqr, lstsqr, ()),
    "specialconvolve": (init_specialconvolve, specialconvolve, ()), "wdist": (init_wdist, wdist, ()),
}
