"""DaCe's distributed gemm, k2mm and k3mm (dace.distr.MatMult: ScaLAPACK's
pdgemm, DaCe's ReferenceOpenMPI) under mpirun, at mb-polybench's sizes, into
DaCe's CSV (OUT/dace_cpu_<P>_processes.csv: no header; benchmark, framework
dace_cpu, processes, sizes (M, N, K), time; 10 rows per kernel).

    mpirun -np P VENV/bin/python reproduce/dace/distr/runner.py --scale-down F --out DIR
        [--kernels gemm,k2mm,k3mm] [--repeat 10] [--cache DIR] [--no-check]

Per kernel, as DaCe's samples/distributed/polybench.py and mb-polybench do:
sizes by DaCe's adjust_size (the base divided by F, rounded up; x cbrt(P),
rounded up to a multiple of max(Px, Py)); grid from DaCe's table, MPI's
Cartesian ranks; each rank initialises its own blocks from the global
formulas; rank 0 compiles (auto_optimize for the CPU; with --cache, a program
another P compiled in the same folder is loaded instead, the SDFG being
symbolic in P), the others load it; one warm-up call, checked on every rank
against a NumPy reference of its block (|ours - ref| <= 1e-9 max(1, |ref|),
NaN fails: exit 1 naming kernel, rank and global index); then 10 samples of
barrier, call, barrier, the output reset before each (untimed); a sample's
time is the slowest rank's. MB_FAULT_INJECT=corrupt adds 1 to one element
of the last rank's output before the check (the check must fail)."""
import argparse
import csv
import glob
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = {1: (1, 1), 2: (1, 2), 4: (2, 2), 8: (2, 4), 16: (4, 4), 32: (4, 8), 64: (8, 8), 128: (8, 16), 256: (16, 16)}


def adjust(size, p, div):
    """DaCe's adjust_size with the cube root (mb_pb_adjust)."""
    c = size * math.cbrt(p) if p > 1 else float(size)
    return int(math.ceil(c / div) * div)


def sizes_at(base, p, px, py, scale_down):
    div = max(px, py) if p > 1 else 1
    return tuple(adjust(max(1, math.ceil(b / scale_down)), p, div) for b in base)


def block(shape_f, px, py, i, j):
    """Rank (i, j)'s block of a global matrix (rows over Px, columns over Py)."""
    from kernels_distr import _mat
    (rows, cols), f = shape_f
    lr, lc = rows // px, cols // py
    return _mat(f, lr, lc, i * lr, j * lc)


def symbols(dims, sz, px, py):
    g = dict(zip(dims, sz))
    s = {"Px": px, "Py": py}
    for d, v in g.items():
        s["G" + d] = v
        s["L" + d + "x"] = v // px
        s["L" + d + "y"] = v // py
    return s


def compile_or_load(name, prog, comm, cache):
    import dace
    from dace.sdfg import utils
    from dace.transformation.auto.auto_optimize import auto_optimize
    rank = comm.Get_rank()
    folder = os.path.join(cache, name) if cache else None
    # DaCe names the library after the SDFG (kernels_distr_<name>); load_precompiled_sdfg reads it
    libs = [f for f in glob.glob(os.path.join(folder, "build", "lib*.so")) if "dacestub" not in f] if folder else []
    have = bool(libs) and os.path.exists(os.path.join(folder, "program.sdfg"))
    have = comm.bcast(bool(have), root=0)
    if have:
        how = "loaded (compiled by an earlier P)"
        func = utils.load_precompiled_sdfg(folder)
    else:
        how = "compiled"
        sdfg = None
        if rank == 0:
            sdfg = prog.to_sdfg(simplify=True)
            sdfg = auto_optimize(sdfg, dace.DeviceType.CPU)
            if folder:
                sdfg.build_folder = folder
        func = utils.distributed_compile(sdfg, comm)
    comm.Barrier()
    return func, how


def check(name, oname, rank, val, ref, r0, c0):
    """None, or the first wrong element as a line."""
    ok = np.abs(val - ref) <= 1e-9 * np.maximum(1.0, np.abs(ref))  # NaN: False
    if ok.all():
        return None
    i, j = np.argwhere(~ok)[0]
    return (f"check failed: {name}/dace_cpu: rank {rank}: {name} {oname}[{i + r0}][{j + c0}] = {val[i, j]:.6g}, "
            f"expected {ref[i, j]:.6g}")


def run_kernel(name, k, comm, cart, a, writer, log):
    from mpi4py import MPI
    rank, p = comm.Get_rank(), comm.Get_size()
    px, py = GRID[p]
    i, j = cart.Get_coords(rank)
    sz = sizes_at(k["base"], p, px, py, a.scale_down)
    g = k["init"](*sz)
    loc = {n: block(sf, px, py, i, j) for n, sf in g.items()}
    oname, orow, ocol = k["out"]
    dims = dict(zip(k["dims"], sz))
    lr, lc = dims[orow] // px, dims[ocol] // py
    if oname not in loc:
        loc[oname] = np.zeros((lr, lc))
    out0 = loc[oname].copy()
    args = dict(loc)
    if k["scalars"]:
        from kernels_distr import ALPHA, BETA
        args.update(alpha=ALPHA, beta=BETA)
    t = time.time()
    func, how = compile_or_load(name, k["prog"], comm, a.cache)
    wanted = set(func.sdfg.arglist())
    call_args = {n: v for n, v in {**args, **symbols(k["dims"], sz, px, py)}.items() if n in wanted}
    if rank == 0:
        log(f"{name}: P={p} grid {px}x{py} sizes {sz}: {how} in {time.time() - t:.1f} s")
    comm.Barrier()
    func(**call_args)  # warm-up, checked
    why = None
    if not a.no_check:
        if os.environ.get("MB_FAULT_INJECT") == "corrupt" and rank == p - 1:
            loc[oname][lr // 2, lc // 2] += 1.0
        full = {n: np.fromfunction(lambda r, c, f=f: f(r, c), shp, dtype=np.int64).astype(np.float64)
                for n, (shp, f) in g.items()}
        ref = k["ref"](full)[i * lr:(i + 1) * lr, j * lc:(j + 1) * lc]
        why = check(name, oname, rank, loc[oname], ref, i * lr, j * lc)
    whys = comm.gather(why, root=0)
    bad = [w for w in (whys or []) if w]
    if comm.bcast(bool(bad), root=0):
        if rank == 0:
            for w in bad:
                print(w, file=sys.stderr, flush=True)
        return False
    times = []
    for _ in range(a.repeat):
        loc[oname][:] = out0  # the in-place output starts fresh, untimed
        comm.Barrier()
        t0 = time.perf_counter()
        func(**call_args)
        comm.Barrier()
        times.append(time.perf_counter() - t0)
    slowest = np.empty(len(times))
    comm.Allreduce(np.array(times), slowest, op=MPI.MAX)
    if rank == 0:
        for s in slowest:
            writer.writerow([name, "dace_cpu", p, str(tuple(sz[:3])), repr(float(s))])
        log(f"{name}: P={p}: median {np.median(slowest) * 1e3:.3f} ms over {len(slowest)} samples"
            + ("" if a.no_check else ", checked"))
    return True


def bad(why):
    """Bad input: one line, exit 2, before any work (every rank gets the same arguments)."""
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        print(f"runner.py: {why}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale-down", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", default="gemm,k2mm,k3mm")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cache", help="DaCe build folder shared by the runs at each P")
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import kernels_distr
    names = a.kernels.split(",")
    for n in names:
        if n not in kernels_distr.KERNELS:
            bad(f"--kernels: unknown kernel {n!r} (known: {', '.join(kernels_distr.KERNELS)})")
    if not a.scale_down >= 1:
        bad(f"--scale-down {a.scale_down:g}: must be >= 1")
    if a.repeat < 1:
        bad(f"--repeat {a.repeat}: must be >= 1")
    from mpi4py import MPI
    import dace_openblas
    comm = MPI.COMM_WORLD
    rank, p = comm.Get_rank(), comm.Get_size()
    if p not in GRID:
        bad(f"P={p} is not in DaCe's grid table (1, 2, 4 ... 256)")
    line = dace_openblas.setup()

    def log(s):
        print(f"runner.py: {s}", flush=True)
    if rank == 0:
        log(line)
    cart = comm.Create_cart(GRID[p])
    ok = True
    f = None
    writer = None
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
        f = open(os.path.join(a.out, f"dace_cpu_{p}_processes.csv"), "a", newline="")
        writer = csv.writer(f)
    for n in names:
        ok = run_kernel(n, kernels_distr.KERNELS[n], comm, cart, a, writer, log) and ok
        if f:
            f.flush()
    if f:
        f.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
