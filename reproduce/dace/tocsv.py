"""mb-polybench result files -> DaCe's weak-scaling CSV schema.

No header; one row per timed call: benchmark, framework, processes, sizes,
time (seconds). DaCe's script writes 10 rows per kernel and run
(`-n 10` gives the same); `sizes` is the Python tuple string DaCe writes
(atax (M, N), doitgen (K, M, N), gemm/k2mm/k3mm (M, N, K), the stencils
(TSTEPS, N), the rest their dimensions in order). A row's time is the
slowest rank's time of that call, as DaCe's "call; Barrier" sample is.
The framework is "movebench_<variant>" (summa, pblas, allreduce, halo,
local) beside DaCe's "dace_cpu".

    python -m reproduce.dace.tocsv -o OUT.csv RESULT.h5|DIR...
"""
import argparse
import csv
import sys

import h5py
import numpy as np

from reproduce import mbresults

# DaCe's sizes tuples keep only these leading dims (k2mm's R, k3mm's R and S are not recorded)
KEEP_DIMS = {"k2mm": 3, "k3mm": 3}


def sizes_tuple(kernel, sizes):
    """'M=80,N=92,K=52' (',TSTEPS=10') -> DaCe's tuple string."""
    pairs = [p.split("=", 1) for p in sizes.split(",") if p]
    dims = [int(v) for k, v in pairs if k != "TSTEPS"]
    steps = [int(v) for k, v in pairs if k == "TSTEPS"]
    dims = dims[:KEEP_DIMS.get(kernel, len(dims))]
    return str(tuple(steps + dims))


def rows_of(path):
    """The CSV rows of one mb-polybench result file (a collection too)."""
    out = []
    with h5py.File(path, "r") as f:
        groups = [f["runs"][k] for k in sorted(f["runs"], key=int)] if mbresults.is_collection(f) else [f]
        for g in groups:
            if mbresults._py(g.attrs.get("benchmark", "")) != "mb-polybench":
                continue
            for rec in g["summary"][()]:
                r = {n: mbresults._py(rec[n]) for n in rec.dtype.names}
                key = r["case"].replace("%", "%25").replace("/", "%2F")
                if key not in g["samples"]:
                    continue
                per_call = np.asarray(g["samples"][key][()], dtype=float).max(axis=1)
                for t in per_call:
                    out.append([r["kernel"], f"movebench_{r['variant']}", int(r["P"]),
                                sizes_tuple(r["kernel"], r["sizes"]), repr(float(t))])
    return out


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def read_csv(path):
    """DaCe-schema rows: [(benchmark, framework, processes, sizes, time)]."""
    with open(path, newline="") as f:
        return [(b, fw, int(p), s, float(t)) for b, fw, p, s, t in csv.reader(f)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    rows = []
    for p in mbresults.expand(a.inputs):
        rows.extend(rows_of(p))
    if not rows:
        sys.exit("tocsv: no mb-polybench cases in " + " ".join(a.inputs))
    write_csv(a.out, rows)
    print(a.out)


if __name__ == "__main__":
    main()
