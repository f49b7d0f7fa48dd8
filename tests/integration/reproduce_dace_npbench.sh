#!/bin/bash
# reproduce/dace's shared-memory side: heatmap.py's labels (↑/↓ against
# NumPy), CI superscripts, Total geometric-mean row and target line on a
# made-up CSV (with and without DaCe, met and not met, a bad row refused);
# runner.py's NPBench protocol on two small kernels (10 rows each in DaCe's
# schema) and its validation (a wrong or NaN output fails); ours_csv.py
# writes mb-polybench --mode shared's fused samples whose median equals the
# result file's; run.sh's bad input exits 2.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
H=reproduce/dace/heatmap.py
N=reproduce/dace/npbench

# heatmap: NumPy 1 s, DaCe 0.5-1.4 s, ours 0.25 s (and 3 s for one kernel)
"$py" - "$T/a.csv" "$T/b.csv" <<'PY'
import csv, sys
rows = []
for k, ours in (("gemm", 0.25), ("atax", 0.25), ("mvt", 3.0)):
    for i in range(10):
        rows.append([k, "numpy", 1, "(10,)", 1.0 + 0.001 * i])
        rows.append([k, "dace_cpu", 1, "(10,)", 0.5 + 0.1 * i])   # a wide CI: > 1%
        rows.append([k, "ours", 1, "(10,)", ours])
with open(sys.argv[1], "w", newline="") as f:
    csv.writer(f).writerows(rows)
with open(sys.argv[2], "w", newline="") as f:
    csv.writer(f).writerows([r for r in rows if r[1] != "dace_cpu"])
PY
if expect 0 "heatmap with DaCe" -- "$py" "$H" "$T/a.csv" --out "$T/h.png"; then
  has '^gemm +1\.00.* +↑[0-9.]+[⁰¹²³⁴⁵⁶⁷⁸⁹]+ +↑4\.0[0-9]$' "gemm row: NumPy 1.00, DaCe faster with a CI superscript, ours ↑4.0x"
  has '^mvt .* ↓2\.99$' "mvt row: ours ↓2.99"
  has '^Total ' "Total row"
  # ours: geomean of 1/4, 1/4, 3 = 0.57 -> 1.75x; DaCe's medians 0.95 -> 1.06x: 1.65 of DaCe's
  has '^target: geomean speedup over NumPy ours 1\.7[0-9]x vs DaCe 1\.0[0-9]x: .*needs >= 0\.9: met$' "target with DaCe"
  file "$T/h.png" | grep -q 'PNG image' || fail "heatmap.png is not a PNG"
fi
expect 0 "heatmap without DaCe" -- "$py" "$H" "$T/b.csv" &&
  has '^target: geomean speedup over NumPy ours 1\.7[0-9]x \(DaCe absent\), needs >= 2x: NOT met$' "target without DaCe"
echo 'gemm,numpy,1,10' >"$T/bad.csv"
expect 1 "heatmap on a 4-field row" -- "$py" "$H" "$T/bad.csv" && has "a row of 4 fields" "bad row named"

# runner: NPBench's protocol on two kernels, 10 samples each
if expect 0 "runner numpy" -- "$py" "$N/runner.py" --framework numpy --preset S --kernels lstsqr,specialconvolve --csv "$T/r.csv"; then
  [ "$(grep -c '^lstsqr,numpy,1,"(100000,)",[0-9.e-]*.$' "$T/r.csv")" = 10 ] || { fail "runner: not 10 lstsqr rows"; cat "$T/r.csv" >&2; }
  [ "$(grep -c '^specialconvolve,numpy,1,"(100, 100)",' "$T/r.csv")" = 10 ] || fail "runner: not 10 specialconvolve rows"
fi
expect 2 "runner unknown kernel" -- "$py" "$N/runner.py" --kernels k9mm --csv "$T/never.csv" && has "unknown kernel 'k9mm'" "runner names it"
expect 0 "runner validation" -- "$py" - "$N" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from runner import validate
ok = np.linspace(1, 2, 100)
assert validate("k", [ok], [ok * (1 + 1e-7)]) is None          # inside allclose
near = ok.copy(); near[3] += 1e-4                               # outside allclose, norm error < 1e-5
assert validate("k", [ok], [near]) is None
far = ok.copy(); far[3] += 1.0
assert "norm error" in validate("k", [ok], [far])
nan = ok.copy(); nan[0] = np.nan
assert validate("k", [ok], [nan]) is not None
assert validate("k", [ok], [ok[:50]]) is not None
PY

# ours_csv: the fused samples of a result file; their median is the file's
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if expect 0 "mb-polybench shared lstsqr" -- env OMP_NUM_THREADS=2 "$BIN/mb-polybench" --mode shared --kernel lstsqr,wdist \
    -n 5 -w 1 -o "$T/o.h5"; then
  expect 0 "ours_csv" -- "$py" "$N/ours_csv.py" "$T/o.h5" --csv "$T/o.csv"
  [ "$(grep -c '^lstsqr,ours,1,"(100000,)",' "$T/o.csv")" = 5 ] || fail "ours_csv: not 5 lstsqr rows"
  [ "$(grep -c '^wdist,ours,1,"(100, 100, 100)",' "$T/o.csv")" = 5 ] || fail "ours_csv: not 5 wdist rows"
  expect 0 "medians read back" -- "$py" - "$T/o.h5" "$T/o.csv" <<'PY'
import csv, sys
import h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    med = {r["kernel"].decode(): r["t_median"] for r in f["summary"][()] if r["variant"] == b"fused"}
rows = list(csv.reader(open(sys.argv[2])))
for k, m in med.items():
    got = np.median([float(r[4]) for r in rows if r[0] == k])
    assert abs(got - m) <= 1e-12 * m, (k, got, m)
PY
fi

# run.sh: bad input, before any work
expect 2 "run.sh no preset" -- "$N/run.sh" --out "$T/x" && has "^run.sh: --preset: required" "run.sh no preset"
expect 2 "run.sh bad preset" -- "$N/run.sh" --preset XL --out "$T/x" && has "^run.sh: --preset XL: not one of" "run.sh bad preset"
expect 2 "run.sh no out" -- "$N/run.sh" --preset S && has "^run.sh: --out: required" "run.sh no out"
expect 2 "run.sh unknown flag" -- "$N/run.sh" --scale tiny && has "unknown option '--scale'" "run.sh unknown flag"
mkdir -p "$T/y" && : >"$T/y/npbench.csv"
expect 2 "run.sh existing csv" -- "$N/run.sh" --preset S --out "$T/y" && has "npbench.csv exists" "run.sh existing csv"
[ ! -e "$T/x" ] || fail "run.sh made its folder on bad input"
finish
