"""DaCe's distributed polybench kernels (kernels_distr.py: dace.distr.MatMult on
ScaLAPACK's pdgemm/pdgemv, DaCe's ReferenceOpenMPI; doitgen; the stencils'
halos on dace.comm) under mpirun, at mb-polybench's sizes, into DaCe's CSV
(OUT/dace_cpu_<P>_processes.csv: no header; benchmark, framework dace_cpu,
processes, sizes (DaCe's tuple: TSTEPS first for the stencils, then at most
three dims), time; 10 rows per kernel).

    mpirun -np P VENV/bin/python reproduce/dace/distr/runner.py --scale-down F --out DIR
        [--kernels gemm,atax,...] [--repeat 10] [--cache DIR] [--no-check]

Per kernel, as DaCe's samples/distributed/polybench.py and mb-polybench do:
sizes by DaCe's adjust_size (the base and TSTEPS divided by F, rounded up;
the scaled dims x sqrt(P), cbrt(P) or P, rounded up to a multiple of
max(Px, Py) or of P, as the kernel's row in polybench/); grid from DaCe's
table (doitgen, jacobi_1d: a P x 1 line), MPI's Cartesian ranks; each rank
initialises its own blocks from the global formulas; rank 0 compiles
(auto_optimize for the CPU; with --cache, a program another P compiled in
the same folder is loaded instead, the SDFG being symbolic in P), the others
load it; one warm-up call, checked on every rank against a NumPy reference
of its outputs (|ours - ref| <= 1e-9 max(1, |ref|), NaN fails: exit 1 naming
kernel, rank and global index); then 10 samples of barrier, call, barrier,
what the call changes restored before each (untimed); a sample's time is
the slowest rank's. MB_FAULT_INJECT=corrupt adds 1 to one element of the
last rank's first output before the check (the check must fail)."""
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


SCALE = {"sqrt": math.sqrt, "cbrt": math.cbrt, "p": float}


def adjust(size, f, div):
    """DaCe's adjust_size (mb_pb_adjust): size x f, rounded up to a multiple of div."""
    return int(math.ceil(size * f / div) * div)


def sizes_at(k, p, px, py, scale_down):
    """A kernel's global sizes at P (mb_pb_sizes_at) and its TSTEPS (0: none)."""
    div = 1 if p == 1 else (p if k["div"] == "p" else max(px, py))
    f = SCALE[k["scale"]](p) if p > 1 else 1.0
    sz = []
    for n, b in enumerate(k["base"]):
        b = max(1, math.ceil(b / scale_down))
        sz.append(adjust(b, f, div) if (k["scaled"] >> n) & 1 else b)
    steps = max(2, math.ceil(k["tsteps"] / scale_down)) if k["tsteps"] else 0
    return tuple(sz), steps


def grid_of(k, p):
    return (p, 1) if k["grid"] == "line" else GRID[p]


def neighbours(cart, px, py, i, j, line):
    """The stencils' neighbour ranks (MPI_PROC_NULL beyond an edge) and boundary offsets: north and
    south along the grid's first dimension, west and east along its second (a P x 1 line: west and
    east along the first)."""
    nn_, ns_ = cart.Shift(0, 1)
    if line:
        return dict(nw=nn_, ne=ns_, woff=int(i == 0), eoff=int(i == px - 1))
    nw_, ne_ = cart.Shift(1, 1)
    return dict(nn=nn_, ns=ns_, nw=nw_, ne=ne_, noff=int(i == 0), soff=int(i == px - 1), woff=int(j == 0),
                eoff=int(j == py - 1))


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


def check(name, oname, rank, val, ref, off):
    """None, or the first wrong element as a line."""
    ok = np.abs(val - ref) <= 1e-9 * np.maximum(1.0, np.abs(ref))  # NaN: False
    if ok.all():
        return None
    idx = tuple(np.argwhere(~ok)[0])
    where = "".join(f"[{e + o}]" for e, o in zip(idx, off))
    return f"check failed: {name}/dace_cpu: rank {rank}: {name} {oname}{where} = {val[idx]:.6g}, expected {ref[idx]:.6g}"


def run_kernel(name, k, comm, a, writer, log):
    from mpi4py import MPI
    rank, p = comm.Get_rank(), comm.Get_size()
    px, py = grid_of(k, p)
    cart = comm.Create_cart((px, py))
    i, j = cart.Get_coords(rank)
    sz, steps = sizes_at(k, p, px, py, a.scale_down.get(name, a.scale_down[""]))
    c = k["make"](sz, px, py, i, j, steps) if steps else k["make"](sz, px, py, i, j)
    syms = dict(c["syms"], Px=px, Py=py)
    if steps:
        syms.update(neighbours(cart, px, py, i, j, k["grid"] == "line"))
    saved = {n: c["args"][n].copy() for n in c["written"]}
    t = time.time()
    func, how = compile_or_load(name, k["prog"], comm, a.cache)
    wanted = set(func.sdfg.arglist())
    call_args = {n: v for n, v in {**c["args"], **syms}.items() if n in wanted}
    if rank == 0:
        log(f"{name}: P={p} grid {px}x{py} sizes {c['sizes']}: {how} in {time.time() - t:.1f} s")
    comm.Barrier()
    func(**call_args)  # warm-up, checked
    why = None
    if not a.no_check:
        if os.environ.get("MB_FAULT_INJECT") == "corrupt" and rank == p - 1:
            arr = c["outs"][0][1]
            arr[np.unravel_index(arr.size // 2, arr.shape)] += 1.0
        for (oname, val, off), ref in zip(c["outs"], c["refs"]()):
            why = why or check(name, oname, rank, val, ref, off)
    whys = comm.gather(why, root=0)
    bad = [w for w in (whys or []) if w]
    if comm.bcast(bool(bad), root=0):
        if rank == 0:
            for w in bad:
                print(w, file=sys.stderr, flush=True)
        cart.Free()
        return False
    times = []
    for _ in range(a.repeat):
        for n, v in saved.items():  # what the call changes starts fresh, untimed
            c["args"][n][...] = v
        comm.Barrier()
        t0 = time.perf_counter()
        func(**call_args)
        comm.Barrier()
        times.append(time.perf_counter() - t0)
    slowest = np.empty(len(times))
    comm.Allreduce(np.array(times), slowest, op=MPI.MAX)
    if rank == 0:
        for s in slowest:
            writer.writerow([name, "dace_cpu", p, str(tuple(c["sizes"])), repr(float(s))])
        log(f"{name}: P={p}: median {np.median(slowest) * 1e3:.3f} ms over {len(slowest)} samples"
            + ("" if a.no_check else ", checked"))
    cart.Free()
    return True


def bad(why):
    """Bad input: one line, exit 2, before any work (every rank gets the same arguments)."""
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        print(f"runner.py: {why}", file=sys.stderr)
    sys.exit(2)


def scale_down_spec(spec, known):
    """mb-polybench's --scale-down SPEC: {"": default F, kernel: F}, each F in [0.01, 1e9] (below 1: larger
    than DaCe's sizes)."""
    out = {}
    for i, item in enumerate(spec.split(",")):
        name, _, val = item.rpartition("=") if i else ("", "", item)
        if i and not name:
            bad(f"--scale-down {spec}: '{item}' is not KERNEL=F")
        if name and name not in known:
            bad(f"--scale-down {spec}: unknown kernel {name!r}")
        try:
            f = float(val)
        except ValueError:
            f = float("nan")
        if not (0.01 <= f <= 1e9):
            bad(f"--scale-down {spec}: '{val}' must be a number in [0.01, 1e9]")
        out[name] = f
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale-down", required=True,
                    help="F, or F,KERNEL=F,... as mb-polybench's --scale-down (the kernels named get their own F)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", help="comma list (default: every kernel of kernels_distr.KERNELS)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cache", help="DaCe build folder shared by the runs at each P")
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import kernels_distr
    names = a.kernels.split(",") if a.kernels else list(kernels_distr.KERNELS)
    for n in names:
        if n not in kernels_distr.KERNELS:
            bad(f"--kernels: unknown kernel {n!r} (known: {', '.join(kernels_distr.KERNELS)})")
    a.scale_down = scale_down_spec(a.scale_down, kernels_distr.KERNELS)
    if a.repeat < 1:
        bad(f"--repeat {a.repeat}: must be >= 1")
    a.out = os.path.abspath(a.out)
    a.cache = os.path.abspath(a.cache) if a.cache else None
    # DaCe writes _dacegraphs/ (an SDFG a transformation left invalid) into the working folder: not the tree's
    work = a.cache or a.out
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
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
    ok = True
    f = None
    writer = None
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
        f = open(os.path.join(a.out, f"dace_cpu_{p}_processes.csv"), "a", newline="")
        writer = csv.writer(f)
    for n in names:
        ok = run_kernel(n, kernels_distr.KERNELS[n], comm, a, writer, log) and ok
        if f:
            f.flush()
    if f:
        f.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
