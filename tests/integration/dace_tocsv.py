"""reproduce/dace/tocsv.py: the CSV read back gives each case's /summary
median (the harness's, from the slowest rank per call), with as many rows
per case as calls and DaCe's sizes tuples. Run by dace_tocsv.sh:
    python tests/integration/dace_tocsv.py RESULT.h5 OUT.csv NCALLS"""
import sys

import h5py
import numpy as np

from reproduce.dace import tocsv

h5, out, ncalls = sys.argv[1], sys.argv[2], int(sys.argv[3])
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


tocsv.write_csv(out, tocsv.rows_of(h5))
back = tocsv.read_csv(out)
with h5py.File(h5, "r") as f:
    summary = f["summary"][()]
    for rec in summary:
        kernel, variant, p = rec["kernel"].decode(), rec["variant"].decode(), int(rec["P"])
        times = [t for b, fw, pp, s, t in back if b == kernel and fw == f"movebench_{variant}" and pp == p]
        if len(times) != ncalls:
            fail(f"{kernel}/{variant}: {len(times)} rows, expected {ncalls}")
            continue
        want = float(rec["t_median"])
        got = float(np.median(times))
        if not abs(got - want) <= 1e-12 * abs(want):
            fail(f"{kernel}/{variant}: median {got!r} from the CSV, {want!r} in /summary")
    if len(back) != ncalls * len(summary):
        fail(f"{len(back)} rows for {len(summary)} cases of {ncalls} calls")
sizes = {b: s for b, fw, p, s, t in back}
for b, want in (("gemm", r"\(\d+, \d+, \d+\)"), ("k2mm", r"\(\d+, \d+, \d+\)"), ("jacobi_1d", r"\(\d+, \d+\)"),
                ("gemver", r"\(\d+,\)")):
    import re
    if b in sizes and not re.fullmatch(want, sizes[b]):
        fail(f"{b}: sizes {sizes[b]!r}, expected DaCe's tuple {want}")
for b in ("gemm", "k2mm", "jacobi_1d", "gemver"):
    if b not in sizes:
        fail(f"no {b} rows")
with open(out) as f:
    first = f.readline()
if first.startswith("benchmark"):
    fail("the CSV has a header; DaCe's has none")
print(f"{len(back)} rows checked")
sys.exit(1 if failures else 0)
