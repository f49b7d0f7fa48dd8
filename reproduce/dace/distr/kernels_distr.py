"""DaCe's distributed matrix products as @dace.program on dace.distr.MatMult
(a PBLAS library node: pdgemm from ScaLAPACK on a Py x Px BLACS grid), on
the same blocks as mb-polybench's summa and pblas variants (docs/mb-polybench.md):
rank (i, j) of the Px x Py grid holds A[i-th M/Px rows, j-th K/Py columns],
B[i-th K/Px rows, j-th N/Py columns] and C[i-th M/Px rows, j-th N/Py columns].
Written from the polybench definitions; imported only where dace imports.

Each entry of KERNELS: the polybench init at global indices (the same formulas
as polybench/<kernel>.c), DaCe's base sizes, the program, and how its local
arguments, output and symbols are laid out."""
import dace as dc
import numpy as np

Px, Py = (dc.symbol(s, dtype=dc.int32, positive=True) for s in ("Px", "Py"))
# global sizes, and the local block extents (L<dim>x: split over Px, L<dim>y: over Py)
GM, GN, GK, GR, GS = (dc.symbol(s, dtype=dc.int64, positive=True) for s in ("GM", "GN", "GK", "GR", "GS"))
LMx, LNx, LNy, LKx, LKy, LRx, LRy, LSy = (dc.symbol(s, dtype=dc.int64, positive=True)
                                          for s in ("LMx", "LNx", "LNy", "LKx", "LKy", "LRx", "LRy", "LSy"))
f64 = dc.float64
ALPHA, BETA = 1.5, 1.2


@dc.program
def gemm(alpha: f64, beta: f64, C: f64[LMx, LNy], A: f64[LMx, LKy], B: f64[LKx, LNy]):
    C[:] = alpha * dc.distr.MatMult(A, B, (Px * LMx, Py * LNy, GK)) + beta * C


@dc.program
def k2mm(alpha: f64, beta: f64, A: f64[LMx, LKy], B: f64[LKx, LNy], C: f64[LNx, LRy], D: f64[LMx, LRy]):
    tmp = dc.distr.MatMult(A, B, (Px * LMx, Py * LNy, GK))
    D[:] = alpha * dc.distr.MatMult(tmp, C, (GM, GR, GN)) + beta * D


@dc.program
def k3mm(A: f64[LMx, LKy], B: f64[LKx, LNy], C: f64[LNx, LRy], D: f64[LRx, LSy], E: f64[LMx, LSy]):
    t1 = dc.distr.MatMult(A, B, (Px * LMx, Py * LNy, GK))
    t2 = dc.distr.MatMult(t1, C, (GM, GR, GN))
    E[:] = dc.distr.MatMult(t2, D, (GM, GS, GR))


def _mat(f, rows, cols, r0, c0):
    """f at the global indices of a rows x cols block starting at (r0, c0)."""
    return np.fromfunction(lambda i, j: f(i + r0, j + c0), (rows, cols), dtype=np.int64).astype(np.float64)


# polybench's init formulas (as polybench/gemm.c, k2mm.c, k3mm.c), at global indices
def gemm_init(M, N, K):
    return {"A": ((M, K), lambda i, k: (i * (k + 1) % K) / K),
            "B": ((K, N), lambda k, j: (k * (j + 2) % N) / N),
            "C": ((M, N), lambda i, j: ((i * j + 1) % M) / M)}


def k2mm_init(M, N, K, R):
    return {"A": ((M, K), lambda i, k: ((i * k + 1) % M) / M),
            "B": ((K, N), lambda k, j: (k * (j + 1) % N) / N),
            "C": ((N, R), lambda j, l: ((j * (l + 3) + 1) % R) / R),
            "D": ((M, R), lambda i, l: (i * (l + 2) % K) / K)}


def k3mm_init(M, N, K, R, S):
    return {"A": ((M, K), lambda i, k: ((i * k + 1) % M) / (5 * M)),
            "B": ((K, N), lambda k, j: ((k * (j + 1) + 2) % N) / (5 * N)),
            "C": ((N, R), lambda j, m: (j * (m + 3) % S) / (5 * S)),
            "D": ((R, S), lambda m, l: ((m * (l + 2) + 2) % K) / (5 * K))}


def gemm_ref(g):
    return ALPHA * (g["A"] @ g["B"]) + BETA * g["C"]


def k2mm_ref(g):
    return ALPHA * (g["A"] @ g["B"]) @ g["C"] + BETA * g["D"]


def k3mm_ref(g):
    return ((g["A"] @ g["B"]) @ g["C"]) @ g["D"]


# name -> program, dims (DaCe's sizes tuple keeps the first three), DaCe's base sizes (as mb-polybench's),
# init, reference, the output (updated in place when init has it too); every matrix is split as above:
# rows over Px, columns over Py, one block per rank
KERNELS = {
    "gemm": dict(prog=gemm, dims=("M", "N", "K"), base=(8000, 9200, 5200), init=gemm_init, ref=gemm_ref,
                 out=("C", "M", "N"), scalars=True),
    "k2mm": dict(prog=k2mm, dims=("M", "N", "K", "R"), base=(6400, 7200, 4400, 4800), init=k2mm_init,
                 ref=k2mm_ref, out=("D", "M", "R"), scalars=True),
    "k3mm": dict(prog=k3mm, dims=("M", "N", "K", "R", "S"), base=(6400, 7200, 4000, 4400, 4800), init=k3mm_init,
                 ref=k3mm_ref, out=("E", "M", "S"), scalars=False),
}
