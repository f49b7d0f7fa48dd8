#!/bin/bash
# reproduce/nn at tiny scale: run.sh measures with mb-nn and the PyTorch
# peer, plot.py draws the figure (PNG and PDF), compare.py writes
# compare.md with every rate of both, the roofline and the load; each shape
# in two A/B pairs (mb-nn, peer, mb-nn, peer), medians with the pairs'
# spread; the peer counts the same FLOPs as mb-nn; a failed check in a
# result file shows;
# run.sh rejects a bad scale. Skips (77) without PyTorch or a Python with
# h5py and matplotlib.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
tpy=$py
"$tpy" -c 'import torch' 2>/dev/null || tpy=/usr/bin/python3
"$tpy" -c 'import torch' 2>/dev/null || { echo "SKIP: no PyTorch for the peer (install python3-torch: make deps)"; exit 77; }
out=$T/study
MB_BIN=$BIN OMP_NUM_THREADS=2 expect 0 "run.sh --scale tiny" -- reproduce/nn/run.sh --scale tiny --out "$out"
for x in png pdf; do [ -s "$out/nn.$x" ] || fail "no nn.$x"; done
file "$out/nn.png" | grep -q 'PNG image' || fail "nn.png is not a PNG"
head -c 5 "$out/nn.pdf" | grep -q '%PDF' || fail "nn.pdf is not a PDF"
md=$out/compare.md
[ -s "$md" ] || { fail "no compare.md"; finish; }
for s in gpt-tiny-b2.p1 gpt-tiny-b2.p2 gpt-small-b1.p1 gpt-small-b1.p2; do
  grep -Eq '^# roofline block: .*measured/roofline [0-9.]+\)$' "$out/logs/block-$s.log" || fail "$s: no roofline line"
  # the peer's FLOPs are mb-nn's (the same work), its thread count the one asked
  "$py" - "$out/results/block-$s.h5" "$out/torch/block-$s.json" <<'PY' || fail "$s: peer and mb-nn disagree"
import json, sys
from reproduce import mbresults
runs, rows = mbresults.load([sys.argv[1]])
t = json.load(open(sys.argv[2]))
count = next(r["count"] for r in rows if r["kind"] == "block")
sys.exit(0 if count == t["flops"] and t["threads"] == 2 and t["block_gflops"] > 0 else 1)
PY
done
# a row per shape with every column a number: pairs, sgemm, block (spread), ratio, PyTorch (spread),
# block/PyTorch (spread; a target only at gpt-bench b4), roofline, ratio
n='[0-9.]+' sp="\\($n–$n\\)"
for shape in "gpt-tiny b2 s16 h32 a2" "gpt-small b1 s64 h128 a4"; do
  grep -Eq "^\| $shape \| $n \| 2 \| $n \| $n $sp \| $n( [✓✗])? \(≥ 0\.8\) \| $n $sp \| $n× $sp, not a target \| $n \| $n( [✓✗])? \| pass \|$" "$md" ||
    fail "compare.md lacks a full row for $shape"
  # and a row per A/B pair, with the load before each run
  [ "$(grep -Ec "^\| ${shape%% s*} \| [12] \| $n \| $n \| $n \| $n \| $n× \| $n \| $n \|$" "$md")" = 2 ] ||
    fail "compare.md lacks the two A/B pairs of $shape"
done
# the shape's block / PyTorch is the median of its pairs' own ratios (two: their mean)
"$py" - "$out" <<'PY' || fail "block / PyTorch is not the median of the pairs' ratios"
import sys
from reproduce.nn import data
for b in data.load(sys.argv[1])["blocks"]:
    r = [p["block_gflops"] / p["torch"]["block_gflops"] for p in b["pairs"]]
    assert len(r) == 2 and abs(b["torch_ratio"] - sum(r) / 2) <= 1e-12 * b["torch_ratio"], (b["shape"], r)
    assert b["spread"]["torch_ratio"] == (min(r), max(r))
PY
grep -Eq "^\| 0\.0625M \| $n \| $n \| $n( [✓✗])? \(≥ 0\.9\) \| $n \| $n×( [✓✗])? \(≥ 1\.5\) \| pass \|$" "$md" ||
  fail "compare.md lacks the Adam row"
[ "$(grep -c '^    .*(mb-nn): [0-9.]* [0-9.]* [0-9.]*' "$md")" = 5 ] || fail "compare.md lacks the load of each mb-nn step"
grep -q 'Indicative only' "$md" || fail "compare.md does not say the numbers are indicative"
# a failed check shows, in the table and the figure
"$py" - "$out/results/block-gpt-small-b1.p2.h5" <<'PY' || fail "could not mark a case failed"
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    dt, s = f["summary"].dtype, f["summary"][()]
    s["check"][:] = b"fail"
    del f["summary"]
    f.create_dataset("summary", data=s, dtype=dt)
PY
expect 0 "compare.py with a failed case" -- "$py" -m reproduce.nn.compare -o "$T/bad.md" "$out"
grep -Eq '^\| gpt-small b1 .*\| fail \|$' "$T/bad.md" || fail "compare.md hides the failed check"
expect 0 "plot.py with a failed case" -- "$py" -m reproduce.nn.plot -o "$T/bad" "$out"
expect 2 "run.sh: bad scale" -- reproduce/nn/run.sh --scale huge
has "scale must be" "names --scale"
expect 2 "run.sh: no program" -- env MB_BIN="$T/nowhere" reproduce/nn/run.sh --scale tiny --out "$T/x"
has "mb-nn not found" "says what is missing"
finish
