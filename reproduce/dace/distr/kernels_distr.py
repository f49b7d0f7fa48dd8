"""DaCe's distributed polybench kernels as @dace.program on DaCe's own
distributed library, at mb-polybench's blocks and sizes (docs/mb-polybench.md).
Written from the polybench definitions; imported only where dace imports.

- gemm, k2mm, k3mm: dace.distr.MatMult (a PBLAS node: pdgemm from ScaLAPACK on
  a Py x Px BLACS grid); rank (i, j) of the Px x Py grid holds A[i-th M/Px
  rows, j-th K/Py columns], B[i-th K/Px rows, j-th N/Py columns] and
  C[i-th M/Px rows, j-th N/Py columns].
- atax, bicg, gemver, gesummv, mvt: dace.distr.MatMult of a matrix and a
  vector (pdgemv): A in M/Px x N/Py blocks as ours, the vectors whole on
  every rank (DaCe's layout); pdgemv leaves a product on rank 0, which
  broadcasts it (dace.comm.Bcast) so every rank's output is checked.
- doitgen: A's K split over a P x 1 line, C4 replicated, no communication.
- jacobi_1d, jacobi_2d, heat_3d: dace.comm.Isend/Irecv/Waitall halos of one
  ghost cell, row, column or plane per side, MPI_PROC_NULL beyond the edges
  (symbols nn, ns, nw, ne), the global boundary kept by offsets (noff, soff,
  woff, eoff); heat_3d splits i over Px and j over Py, k whole, as ours, its
  planes packed into 1-D buffers (DaCe 1.0.2's Irecv takes no 2-D slice);
  each stencil's step (exchange, then the sweep) a nested program called
  A -> B, B -> A.

Each entry of KERNELS: the program, DaCe's base sizes and size rule (as
polybench/<kernel>.c's row), and make(): one rank's arguments from the global
init formulas (polybench's, as polybench/<kernel>.c), its outputs and their
NumPy references."""
import dace as dc
import numpy as np

Px, Py = (dc.symbol(s, dtype=dc.int32, positive=True) for s in ("Px", "Py"))
# global sizes, and the local block extents (L<dim>x: split over Px, L<dim>y: over Py)
GM, GN, GK, GR, GS = (dc.symbol(s, dtype=dc.int64, positive=True) for s in ("GM", "GN", "GK", "GR", "GS"))
LMx, LNx, LNy, LKx, LKy, LRx, LRy, LSy = (dc.symbol(s, dtype=dc.int64, positive=True)
                                          for s in ("LMx", "LNx", "LNy", "LKx", "LKy", "LRx", "LRy", "LSy"))
# stencils: the global boundary's offsets and the neighbours (MPI_PROC_NULL beyond an edge)
noff, soff, woff, eoff = (dc.symbol(s, dtype=dc.int32, nonnegative=True) for s in ("noff", "soff", "woff", "eoff"))
nn, ns, nw, ne = (dc.symbol(s, dtype=dc.int32) for s in ("nn", "ns", "nw", "ne"))
MPI_Request = dc.opaque("MPI_Request")
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


# ---- the matrix-vector kernels: A in LMx x LNy blocks, the vectors whole on every rank ----
# MatMult(A, v, (M, N)) is pdgemv with A's blocks and the vector in one block (c_block_sizes whole);
# MatMult(v, A, ...) the product with A's transpose. pdgemv leaves the product on rank 0 only (the
# process holding that block; DaCe's sample validates rank 0 alone), so each output is broadcast from
# rank 0 at the end (dace.comm.Bcast, timed) and every rank holds it, as every rank of ours holds its
# grid row's or column's sum


@dc.program
def atax(A: f64[LMx, LNy], x: f64[GN], y: f64[GN]):
    ax = dc.distr.MatMult(A, x, (Px * LMx, Py * LNy), c_block_sizes=(GM, 1))
    y[:] = dc.distr.MatMult(ax, A, (GM, GN), c_block_sizes=(GN, 1))
    dc.comm.Bcast(y)


@dc.program
def bicg(A: f64[LMx, LNy], p: f64[GN], r: f64[GM], s: f64[GN], q: f64[GM]):
    s[:] = dc.distr.MatMult(r, A, (Px * LMx, Py * LNy), c_block_sizes=(GN, 1))
    q[:] = dc.distr.MatMult(A, p, (GM, GN), c_block_sizes=(GM, 1))
    dc.comm.Bcast(s)
    dc.comm.Bcast(q)


@dc.program
def gemver(alpha: f64, beta: f64, A: f64[LMx, LNy], u1: f64[LMx], v1: f64[LNy], u2: f64[LMx], v2: f64[LNy],
           w: f64[GM], x: f64[GN], y: f64[GM], z: f64[GN]):
    A += np.multiply.outer(u1, v1) + np.multiply.outer(u2, v2)
    aty = dc.distr.MatMult(y, A, (Px * LMx, Py * LNy), c_block_sizes=(GN, 1))
    x += beta * aty + z
    ax = dc.distr.MatMult(A, x, (GM, GN), c_block_sizes=(GM, 1))
    w += alpha * ax
    dc.comm.Bcast(x)
    dc.comm.Bcast(w)


@dc.program
def gesummv(alpha: f64, beta: f64, A: f64[LMx, LNy], B: f64[LMx, LNy], x: f64[GN], y: f64[GM]):
    ax = dc.distr.MatMult(A, x, (Px * LMx, Py * LNy), c_block_sizes=(GM, 1))
    bx = dc.distr.MatMult(B, x, (GM, GN), c_block_sizes=(GM, 1))
    y[:] = alpha * ax + beta * bx
    dc.comm.Bcast(y)


@dc.program
def mvt(A: f64[LMx, LNy], x1: f64[GM], x2: f64[GN], y1: f64[GN], y2: f64[GM]):
    ay = dc.distr.MatMult(A, y1, (Px * LMx, Py * LNy), c_block_sizes=(GM, 1))
    aty = dc.distr.MatMult(y2, A, (GM, GN), c_block_sizes=(GN, 1))
    x1 += ay
    x2 += aty
    dc.comm.Bcast(x1)
    dc.comm.Bcast(x2)


# ---- doitgen: A's K over the P x 1 line, C4 whole ----
@dc.program
def doitgen(A: f64[LKx, GM, GN], C4: f64[GN, GN]):
    for r in range(LKx):
        A[r, :, :] = A[r] @ C4


# ---- the stencils: one ghost per side; TSTEPS - 1 steps of A -> B -> A, each sweep after its exchange ----
# Each stencil's step (exchange, then the sweep) is a nested program called A -> B, then B -> A: the
# exchange and sweep written once; the neighbours and offsets, symbols its arrays' shapes do not carry,
# are passed by name.
@dc.program
def _jacobi_1d_step(X: f64[LNx + 2], Y: f64[LNx + 2], req: MPI_Request[4]):
    dc.comm.Irecv(X[0], nw, 0, req[0])
    dc.comm.Irecv(X[-1], ne, 1, req[1])
    dc.comm.Isend(X[1], nw, 1, req[2])
    dc.comm.Isend(X[-2], ne, 0, req[3])
    dc.comm.Waitall(req)
    Y[1 + woff:-1 - eoff] = 0.33333 * (X[woff:-2 - eoff] + X[1 + woff:-1 - eoff] + X[2 + woff:-eoff])


@dc.program
def jacobi_1d(TSTEPS: dc.int32, A: f64[LNx + 2], B: f64[LNx + 2]):
    req = np.empty((4,), dtype=MPI_Request)
    for _ in range(1, TSTEPS):
        _jacobi_1d_step(A, B, req, nw=nw, ne=ne, woff=woff, eoff=eoff)
        _jacobi_1d_step(B, A, req, nw=nw, ne=ne, woff=woff, eoff=eoff)


@dc.program
def _jacobi_2d_step(X: f64[LMx + 2, LNy + 2], Y: f64[LMx + 2, LNy + 2], req: MPI_Request[8]):
    dc.comm.Irecv(X[0, 1:-1], nn, 0, req[0])
    dc.comm.Irecv(X[-1, 1:-1], ns, 1, req[1])
    dc.comm.Irecv(X[1:-1, 0], nw, 2, req[2])
    dc.comm.Irecv(X[1:-1, -1], ne, 3, req[3])
    dc.comm.Isend(X[1, 1:-1], nn, 1, req[4])
    dc.comm.Isend(X[-2, 1:-1], ns, 0, req[5])
    dc.comm.Isend(X[1:-1, 1], nw, 3, req[6])
    dc.comm.Isend(X[1:-1, -2], ne, 2, req[7])
    dc.comm.Waitall(req)
    Y[1 + noff:-1 - soff, 1 + woff:-1 - eoff] = 0.2 * (
        X[1 + noff:-1 - soff, 1 + woff:-1 - eoff] + X[1 + noff:-1 - soff, woff:-2 - eoff]
        + X[1 + noff:-1 - soff, 2 + woff:-eoff] + X[2 + noff:-soff, 1 + woff:-1 - eoff]
        + X[noff:-2 - soff, 1 + woff:-1 - eoff])


@dc.program
def jacobi_2d(TSTEPS: dc.int32, A: f64[LMx + 2, LNy + 2], B: f64[LMx + 2, LNy + 2]):
    req = np.empty((8,), dtype=MPI_Request)
    for _ in range(1, TSTEPS):
        _jacobi_2d_step(A, B, req, nn=nn, ns=ns, nw=nw, ne=ne, noff=noff, soff=soff, woff=woff, eoff=eoff)
        _jacobi_2d_step(B, A, req, nn=nn, ns=ns, nw=nw, ne=ne, noff=noff, soff=soff, woff=woff, eoff=eoff)


# heat_3d: i over Px, j over Py, k whole (as ours). DaCe 1.0.2's Isend/Irecv take 1-D buffers only
# ("Dimensionality of access not supported"), so each halo plane is packed into a 1-D buffer by a map,
# exchanged, and unpacked into the ghost plane; the sweep is a map over the interior. One step, X's
# exchange then Y from X, is a nested program as the other stencils'.
@dc.program
def _heat_3d_step(X: f64[LMx + 2, LNy + 2, GN], Y: f64[LMx + 2, LNy + 2, GN], sn: f64[LNy * GN],
                  ss: f64[LNy * GN], rn: f64[LNy * GN], rs: f64[LNy * GN], sw: f64[LMx * GN], se: f64[LMx * GN],
                  rw: f64[LMx * GN], re: f64[LMx * GN], req: MPI_Request[8]):
    for jj, kk in dc.map[0:LNy, 0:GN]:
        sn[jj * GN + kk] = X[1, jj + 1, kk]
        ss[jj * GN + kk] = X[LMx, jj + 1, kk]
    for ii, kk in dc.map[0:LMx, 0:GN]:
        sw[ii * GN + kk] = X[ii + 1, 1, kk]
        se[ii * GN + kk] = X[ii + 1, LNy, kk]
    dc.comm.Irecv(rn, nn, 0, req[0])
    dc.comm.Irecv(rs, ns, 1, req[1])
    dc.comm.Irecv(rw, nw, 2, req[2])
    dc.comm.Irecv(re, ne, 3, req[3])
    dc.comm.Isend(sn, nn, 1, req[4])
    dc.comm.Isend(ss, ns, 0, req[5])
    dc.comm.Isend(sw, nw, 3, req[6])
    dc.comm.Isend(se, ne, 2, req[7])
    dc.comm.Waitall(req)
    for jj, kk in dc.map[0:LNy, 0:GN]:
        X[0, jj + 1, kk] = rn[jj * GN + kk]
        X[LMx + 1, jj + 1, kk] = rs[jj * GN + kk]
    for ii, kk in dc.map[0:LMx, 0:GN]:
        X[ii + 1, 0, kk] = rw[ii * GN + kk]
        X[ii + 1, LNy + 1, kk] = re[ii * GN + kk]
    for i, j, k in dc.map[1 + noff:LMx + 1 - soff, 1 + woff:LNy + 1 - eoff, 1:GN - 1]:
        Y[i, j, k] = (0.125 * (X[i + 1, j, k] - 2.0 * X[i, j, k] + X[i - 1, j, k])
                      + 0.125 * (X[i, j + 1, k] - 2.0 * X[i, j, k] + X[i, j - 1, k])
                      + 0.125 * (X[i, j, k + 1] - 2.0 * X[i, j, k] + X[i, j, k - 1]) + X[i, j, k])


@dc.program
def heat_3d(TSTEPS: dc.int32, A: f64[LMx + 2, LNy + 2, GN], B: f64[LMx + 2, LNy + 2, GN]):
    req = np.empty((8,), dtype=MPI_Request)
    sn = np.zeros((LNy * GN,), dtype=np.float64)
    ss = np.zeros((LNy * GN,), dtype=np.float64)
    rn = np.zeros((LNy * GN,), dtype=np.float64)
    rs = np.zeros((LNy * GN,), dtype=np.float64)
    sw = np.zeros((LMx * GN,), dtype=np.float64)
    se = np.zeros((LMx * GN,), dtype=np.float64)
    rw = np.zeros((LMx * GN,), dtype=np.float64)
    re = np.zeros((LMx * GN,), dtype=np.float64)
    for _ in range(1, TSTEPS):
        _heat_3d_step(A, B, sn, ss, rn, rs, sw, se, rw, re, req, nn=nn, ns=ns, nw=nw, ne=ne, noff=noff, soff=soff,
                      woff=woff, eoff=eoff)
        _heat_3d_step(B, A, sn, ss, rn, rs, sw, se, rw, re, req, nn=nn, ns=ns, nw=nw, ne=ne, noff=noff, soff=soff,
                      woff=woff, eoff=eoff)


# ---- helpers: one rank's case (arguments, outputs, references) ----
def _vec(f, n, r0=0):
    return np.fromfunction(lambda i: f(i + r0), (n,), dtype=np.int64).astype(np.float64)


def _case(args, syms, outs, refs, written, sizes):
    """args: the call's arrays and scalars; syms: its size symbols; outs: [(name, array, global offset
    per dim)]; refs(): the expected arrays, as outs; written: the arrays the program changes (restored
    before each call); sizes: DaCe's CSV tuple."""
    return dict(args=args, syms=syms, outs=outs, refs=refs, written=written, sizes=sizes)


def _mv_syms(m, n, px, py):
    return dict(GM=m, GN=n, LMx=m // px, LNy=n // py)


def _mm_make(init, ref, out, dims, scalars):
    def make(sz, px, py, i, j):
        g = init(*sz)
        loc = {n: _mat(f, shp[0] // px, shp[1] // py, i * (shp[0] // px), j * (shp[1] // py))
               for n, (shp, f) in g.items()}
        oname, orow, ocol = out
        d = dict(zip(dims, sz))
        lr, lc = d[orow] // px, d[ocol] // py
        if oname not in loc:
            loc[oname] = np.zeros((lr, lc))
        args = dict(loc)
        if scalars:
            args.update(alpha=ALPHA, beta=BETA)

        def refs():
            full = {n: _mat(f, shp[0], shp[1], 0, 0) for n, (shp, f) in g.items()}
            return [ref(full)[i * lr:(i + 1) * lr, j * lc:(j + 1) * lc]]
        syms = {}
        for dn, v in d.items():
            syms.update({"G" + dn: v, "L" + dn + "x": v // px, "L" + dn + "y": v // py})
        return _case(args, syms, [(oname, loc[oname], (i * lr, j * lc))], refs, [oname], tuple(sz[:3]))
    return make


def _row_blocks(f, m, n, budget=1 << 25):
    """(r0, block) over f's m x n matrix, a few rows at a time: every rank checks its part against
    the whole product, and the whole matrix on every rank (float64 plus fromfunction's int64 index
    arrays) ran a 2-rank medium run out of memory."""
    step = max(1, budget // (8 * n))
    for r0 in range(0, m, step):
        yield r0, _mat(f, min(step, m - r0), n, r0, 0)


def _mv_blocks(f, m, n, px, py, i, j):
    return _mat(f, m // px, n // py, i * (m // px), j * (n // py))


def atax_make(sz, px, py, i, j):
    m, n = sz
    af = lambda r, c: ((r + c) % n) / (5.0 * m)  # noqa: E731
    xf = lambda c: 1.0 + c / n  # noqa: E731
    args = dict(A=_mv_blocks(af, m, n, px, py, i, j), x=_vec(xf, n), y=np.zeros(n))

    def refs():
        x, y = _vec(xf, n), np.zeros(n)
        for _, a in _row_blocks(af, m, n):
            y += a.T @ (a @ x)
        return [y]
    return _case(args, _mv_syms(m, n, px, py), [("y", args["y"], (0,))], refs, ["y"], (m, n))


def bicg_make(sz, px, py, i, j):
    m, n = sz
    af = lambda r, c: (r * (c + 1) % m) / m  # noqa: E731
    pf = lambda c: (c % n) / n  # noqa: E731
    rf = lambda r: (r % m) / m  # noqa: E731
    args = dict(A=_mv_blocks(af, m, n, px, py, i, j), p=_vec(pf, n), r=_vec(rf, m), s=np.zeros(n), q=np.zeros(m))

    def refs():
        r, p, s, q = _vec(rf, m), _vec(pf, n), np.zeros(n), np.empty(m)
        for r0, a in _row_blocks(af, m, n):
            s += a.T @ r[r0:r0 + len(a)]
            q[r0:r0 + len(a)] = a @ p
        return [s, q]
    return _case(args, _mv_syms(m, n, px, py), [("s", args["s"], (0,)), ("q", args["q"], (0,))], refs, ["s", "q"],
                 (m, n))


def gemver_make(sz, px, py, i, j):
    (n,) = sz
    lr, lc = n // px, n // py
    af = lambda r, c: (r * c % n) / n  # noqa: E731

    def vf(div):
        return (lambda r: r * 1.0) if div == 0 else (lambda r: ((r + 1) / n) / div)
    args = dict(alpha=ALPHA, beta=BETA, A=_mv_blocks(af, n, n, px, py, i, j),
                u1=_vec(vf(0), lr, i * lr), u2=_vec(vf(2), lr, i * lr), v1=_vec(vf(4), lc, j * lc),
                v2=_vec(vf(6), lc, j * lc), w=np.zeros(n), x=np.zeros(n), y=_vec(vf(8), n), z=_vec(vf(9), n))

    def refs():
        u1, u2, v1, v2, y = (_vec(vf(d), n) for d in (0, 2, 4, 6, 8))

        def updated():  # A + u1 v1^T + u2 v2^T, by rows
            for r0, a in _row_blocks(af, n, n):
                rs = slice(r0, r0 + len(a))
                yield rs, a + np.multiply.outer(u1[rs], v1) + np.multiply.outer(u2[rs], v2)
        x = np.zeros(n)
        for rs, a in updated():
            x += a.T @ y[rs]
        x = BETA * x + _vec(vf(9), n)
        w = np.empty(n)
        for rs, a in updated():
            w[rs] = ALPHA * (a @ x)
        return [x, w]
    return _case(args, _mv_syms(n, n, px, py), [("x", args["x"], (0,)), ("w", args["w"], (0,))], refs,
                 ["A", "x", "w"], (n,))


def gesummv_make(sz, px, py, i, j):
    (n,) = sz
    af = lambda r, c: ((r * c + 1) % n) / n  # noqa: E731
    bf = lambda r, c: ((r * c + 2) % n) / n  # noqa: E731
    xf = lambda c: (c % n) / n  # noqa: E731
    args = dict(alpha=ALPHA, beta=BETA, A=_mv_blocks(af, n, n, px, py, i, j), B=_mv_blocks(bf, n, n, px, py, i, j),
                x=_vec(xf, n), y=np.zeros(n))

    def refs():
        x, y = _vec(xf, n), np.empty(n)
        for (r0, a), (_, b) in zip(_row_blocks(af, n, n), _row_blocks(bf, n, n)):
            y[r0:r0 + len(a)] = ALPHA * (a @ x) + BETA * (b @ x)
        return [y]
    return _case(args, _mv_syms(n, n, px, py), [("y", args["y"], (0,))], refs, ["y"], (n,))


def mvt_make(sz, px, py, i, j):
    (n,) = sz
    af = lambda r, c: (r * c % n) / n  # noqa: E731

    def vf(shift):
        return lambda r: ((r + shift) % n) / n
    args = dict(A=_mv_blocks(af, n, n, px, py, i, j), x1=_vec(vf(0), n), x2=_vec(vf(1), n), y1=_vec(vf(3), n),
                y2=_vec(vf(4), n))

    def refs():
        x1, x2, y1, y2 = (_vec(vf(d), n) for d in (0, 1, 3, 4))
        for r0, a in _row_blocks(af, n, n):
            x1[r0:r0 + len(a)] += a @ y1
            x2 += a.T @ y2[r0:r0 + len(a)]
        return [x1, x2]
    return _case(args, _mv_syms(n, n, px, py), [("x1", args["x1"], (0,)), ("x2", args["x2"], (0,))], refs,
                 ["x1", "x2"], (n,))


def doitgen_make(sz, px, py, i, j):
    k, m, n = sz
    kl = k // (px * py)
    af = lambda r, q, s: ((r * q + s) % n) / n  # noqa: E731
    cf = lambda s, t: (s * t % n) / n  # noqa: E731
    a = np.fromfunction(lambda r, q, s: af(r + i * kl, q, s), (kl, m, n), dtype=np.int64).astype(np.float64)
    args = dict(A=a, C4=_mat(cf, n, n, 0, 0))

    def refs():
        return [a_init @ args["C4"]]
    a_init = a.copy()
    return _case(args, dict(LKx=kl, GM=m, GN=n), [("A", a, (i * kl, 0, 0))], refs, ["A"], (k, m, n))


def _jacobi_1d_run(a, b, steps):
    for _ in range(1, steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])


def jacobi_1d_make(sz, px, py, i, j, steps):
    (n,) = sz
    nl = n // (px * py)
    af = lambda c: (c + 2.0) / n  # noqa: E731
    bf = lambda c: (c + 3.0) / n  # noqa: E731
    a, b = np.zeros(nl + 2), np.zeros(nl + 2)
    a[1:-1], b[1:-1] = _vec(af, nl, i * nl), _vec(bf, nl, i * nl)
    args = dict(TSTEPS=steps, A=a, B=b)

    def refs():
        ga, gb = _vec(af, n), _vec(bf, n)
        _jacobi_1d_run(ga, gb, steps)
        return [ga[i * nl:(i + 1) * nl], gb[i * nl:(i + 1) * nl]]
    return _case(args, dict(LNx=nl), [("A", a[1:-1], (i * nl,)), ("B", b[1:-1], (i * nl,))], refs, ["A", "B"],
                 (steps, n))


def jacobi_2d_make(sz, px, py, i, j, steps):
    (n,) = sz
    lr, lc = n // px, n // py
    af = lambda r, c: (r * (c + 2.0) + 2.0) / n  # noqa: E731
    bf = lambda r, c: (r * (c + 3.0) + 3.0) / n  # noqa: E731
    a, b = np.zeros((lr + 2, lc + 2)), np.zeros((lr + 2, lc + 2))
    a[1:-1, 1:-1], b[1:-1, 1:-1] = _mat(af, lr, lc, i * lr, j * lc), _mat(bf, lr, lc, i * lr, j * lc)
    args = dict(TSTEPS=steps, A=a, B=b)

    def refs():
        ga, gb = _mat(af, n, n, 0, 0), _mat(bf, n, n, 0, 0)
        for _ in range(1, steps):
            for x, y in ((ga, gb), (gb, ga)):
                y[1:-1, 1:-1] = 0.2 * (x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[2:, 1:-1] + x[:-2, 1:-1])
        blk = (slice(i * lr, (i + 1) * lr), slice(j * lc, (j + 1) * lc))
        return [ga[blk], gb[blk]]
    return _case(args, dict(LMx=lr, LNy=lc), [("A", a[1:-1, 1:-1], (i * lr, j * lc)),
                                              ("B", b[1:-1, 1:-1], (i * lr, j * lc))], refs, ["A", "B"], (steps, n))



def _heat_3d_sweep(x, y):
    c = x[1:-1, 1:-1, 1:-1]
    y[1:-1, 1:-1, 1:-1] = (0.125 * (x[2:, 1:-1, 1:-1] - 2.0 * c + x[:-2, 1:-1, 1:-1])
                           + 0.125 * (x[1:-1, 2:, 1:-1] - 2.0 * c + x[1:-1, :-2, 1:-1])
                           + 0.125 * (x[1:-1, 1:-1, 2:] - 2.0 * c + x[1:-1, 1:-1, :-2]) + c)


def heat_3d_make(sz, px, py, i, j, steps):
    (n,) = sz
    lr, lc = n // px, n // py

    def init(r0, c0, rows, cols):
        return np.fromfunction(lambda a, b, k: (a + r0 + b + c0 + (n - k)) * 10.0 / n, (rows, cols, n),
                               dtype=np.int64).astype(np.float64)
    a, b = np.zeros((lr + 2, lc + 2, n)), np.zeros((lr + 2, lc + 2, n))
    a[1:-1, 1:-1] = b[1:-1, 1:-1] = init(i * lr, j * lc, lr, lc)
    args = dict(TSTEPS=steps, A=a, B=b)

    def refs():
        ga = init(0, 0, n, n)
        gb = ga.copy()
        for _ in range(1, steps):
            _heat_3d_sweep(ga, gb)
            _heat_3d_sweep(gb, ga)
        blk = (slice(i * lr, (i + 1) * lr), slice(j * lc, (j + 1) * lc))
        return [ga[blk], gb[blk]]
    return _case(args, dict(LMx=lr, LNy=lc, GN=n), [("A", a[1:-1, 1:-1], (i * lr, j * lc, 0)),
                                                    ("B", b[1:-1, 1:-1], (i * lr, j * lc, 0))], refs, ["A", "B"],
                 (steps, n))


# name -> program, make(sizes, px, py, i, j[, tsteps]), the size rule as polybench/<kernel>.c's row: DaCe's base
# sizes, which dims scale (bit mask), by what (sqrt, cbrt, P), rounded up to a multiple of max(Px, Py) ("grid")
# or of P ("p"), TSTEPS's base (stencils), and the grid ("line": P x 1, as mb-polybench's doitgen and jacobi_1d)
_MM = dict(scale="cbrt", scaled=0b11111, div="grid", tsteps=0, grid="table")
_MV = dict(scale="sqrt", scaled=0b11, div="grid", tsteps=0, grid="table")
KERNELS = {
    "gemm": dict(_MM, prog=gemm, base=(8000, 9200, 5200),
                 make=_mm_make(gemm_init, gemm_ref, ("C", "M", "N"), ("M", "N", "K"), True)),
    "k2mm": dict(_MM, prog=k2mm, base=(6400, 7200, 4400, 4800),
                 make=_mm_make(k2mm_init, k2mm_ref, ("D", "M", "R"), ("M", "N", "K", "R"), True)),
    "k3mm": dict(_MM, prog=k3mm, base=(6400, 7200, 4000, 4400, 4800),
                 make=_mm_make(k3mm_init, k3mm_ref, ("E", "M", "S"), ("M", "N", "K", "R", "S"), False)),
    "atax": dict(_MV, prog=atax, base=(20000, 25000), make=atax_make),
    "bicg": dict(_MV, prog=bicg, base=(25000, 20000), make=bicg_make),
    "gemver": dict(_MV, prog=gemver, base=(10000,), make=gemver_make),
    "gesummv": dict(_MV, prog=gesummv, base=(22400,), make=gesummv_make),
    "mvt": dict(_MV, prog=mvt, base=(22000,), make=mvt_make),
    "doitgen": dict(prog=doitgen, base=(128, 512, 512), scale="p", scaled=0b1, div="p", tsteps=0, grid="line",
                    make=doitgen_make),
    "jacobi_1d": dict(prog=jacobi_1d, base=(24000,), scale="p", scaled=0b1, div="p", tsteps=1000, grid="line",
                      make=jacobi_1d_make),
    "jacobi_2d": dict(prog=jacobi_2d, base=(500,), scale="sqrt", scaled=0b1, div="p", tsteps=1000, grid="table",
                      make=jacobi_2d_make),
    "heat_3d": dict(prog=heat_3d, base=(500,), scale="cbrt", scaled=0b1, div="grid", tsteps=100, grid="table",
                    make=heat_3d_make),
}
