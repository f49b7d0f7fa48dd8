"""NPBench's run protocol for one framework (numpy or dace_cpu) over the
kernels of kernels_numpy.py at a preset, appending DaCe's CSV schema (no
header; benchmark, framework, processes, sizes, time) to --csv.

Per kernel: initialize; for dace_cpu, the NumPy reference once; the first
call (compilation included) validated against it: np.allclose(rtol 1e-5,
atol 1e-8), else ||ref - val|| / ||ref|| < 1e-5; then timeit.repeat(10,
number=1) with a setup that copies the inputs, every sample written. A
kernel that fails validation or raises is reported and skipped (exit 1 at
the end), as NPBench's --ignore-errors does."""
import argparse
import copy
import csv
import inspect
import os
import sys
import timeit

import numpy as np

import kernels_numpy as knp


_said = set()


def validate(name, ref, val, rtol=1e-5, atol=1e-8, norm_tol=1e-5):
    """None when every output passes, else what failed."""
    for i, (r, v) in enumerate(zip(ref, val)):
        r, v = np.asarray(r, dtype=np.float64), np.asarray(v, dtype=np.float64)
        if r.size != v.size:
            return f"{name}: output {i} has shape {v.shape}, expected {r.shape}"
        r, v = r.ravel(), v.ravel()  # DaCe returns a scalar as a 1-element array
        if np.allclose(r, v, rtol=rtol, atol=atol):
            continue
        nrm = np.linalg.norm(r)
        err = np.linalg.norm(r - v) / nrm if nrm > 0 else np.linalg.norm(r - v)
        if not err < norm_tol:  # NaN fails
            return f"{name}: output {i} off (relative norm error {err:.3g})"
    return None


def outputs(inplace, data, ret):
    out = [data[a] for a in inplace]
    if ret is not None:
        out += list(ret) if isinstance(ret, tuple) else [ret]
    return out


def dace_callable(name, sizes):
    import dace
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import dace_openblas  # reproduce/dace/: DaCe's OpenBLAS nodes on this machine (no LAPACKE here)
    line = dace_openblas.setup()
    if line not in _said:
        print(f"runner.py: {line}", flush=True)
        _said.add(line)
    from dace.transformation.auto.auto_optimize import auto_optimize
    import kernels_dace
    prog = kernels_dace.PROGRAMS[name]
    sdfg = auto_optimize(prog.to_sdfg(simplify=True), dace.DeviceType.CPU)
    compiled = sdfg.compile()
    argnames = set(inspect.signature(prog.f).parameters)
    # the compiled program takes its size symbols explicitly
    symbols = {p: v for p, v in zip(knp.PARAMS[name], sizes) if p not in argnames}

    def call(**data):
        return compiled(**{k: v for k, v in data.items() if k in argnames}, **symbols)
    return call


def run_one(name, framework, preset, repeat, writer):
    init, kernel, inplace = knp.KERNELS[name]
    sizes = knp.PRESETS[name][preset]
    data = init(*sizes)
    ref = None
    if framework != "numpy":
        d = copy.deepcopy(data)
        ref = outputs(inplace, d, kernel(**d))
        call = dace_callable(name, sizes)
    else:
        call = kernel
    d = copy.deepcopy(data)
    val = outputs(inplace, d, call(**d))  # the first call: compilation included, validated
    if ref is not None:
        why = validate(name, ref, val)
        if why:
            raise RuntimeError(f"validation failed: {why}")
    state = {}

    def setup():
        state["d"] = copy.deepcopy(data)

    times = timeit.repeat(lambda: call(**state["d"]), setup=setup, repeat=repeat, number=1)
    for t in times:
        writer.writerow([name, framework, 1, str(tuple(sizes)), t])
    print(f"{name} {framework} {preset}: median {np.median(times) * 1e3:.3f} ms", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", choices=("numpy", "dace_cpu"), default="numpy")
    ap.add_argument("--preset", choices=("S", "M", "L", "paper"), default="S")
    ap.add_argument("--kernels", default=",".join(knp.KERNELS), help="comma-separated (default: all)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--csv", required=True, help="appended to (DaCe's schema, no header)")
    a = ap.parse_args()
    names = a.kernels.split(",")
    for n in names:
        if n not in knp.KERNELS:
            print(f"runner.py: --kernels: unknown kernel {n!r} (known: {', '.join(knp.KERNELS)})", file=sys.stderr)
            sys.exit(2)
    failed = []
    with open(a.csv, "a", newline="") as f:
        w = csv.writer(f)
        for n in names:
            try:
                run_one(n, a.framework, a.preset, a.repeat, w)
                f.flush()
            except Exception as e:  # NPBench's --ignore-errors: report, go on
                print(f"runner.py: {n} {a.framework}: {type(e).__name__}: {e}", file=sys.stderr)
                failed.append(n)
    if failed:
        print(f"Failed: {len(failed)} out of {len(names)}: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
