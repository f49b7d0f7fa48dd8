#!/bin/bash
# reproduce/hyperion at tiny scale: run.sh generates, trains every system
# and the sweep through job_scripts/mb-gnn.sbatch, plot.py draws the
# figure (PNG and PDF), compare.py writes compare.md with the paper's
# numbers beside ours; a bad --scale is exit 2; both scripts read the
# committed reference.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
# ours COMPARE.MD LABEL RESULT: one "| system | LABEL | median | min–max |" row per
# system of the result file, with its numbers (s per epoch), read here from the file
ours() {
  "$py" - "$@" <<'PY'
import sys, h5py
md, label, path = sys.argv[1:]
lines = open(md).read().splitlines()
with h5py.File(path) as f:
    s = f["summary"][()]
bad = []
for r in s:
    sysname = r["system"].decode()
    want = f"| {sysname} | {label} | {r['t_median']:.3f} | {r['t_min']:.3f}–{r['t_max']:.3f} |"
    if not any(l.startswith(want) for l in lines):
        bad.append(f"no row '{want}'")
n = sum(1 for l in lines if l.startswith("| ") and l.split(" | ")[1:2] == [label])
if n != len(s):
    bad.append(f"{n} '{label}' rows, the file has {len(s)} systems")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
expect 2 "bad scale" -- reproduce/hyperion/run.sh --scale huge && has "scale" "names --scale"
expect 0 "run.sh --scale tiny" -- env BUILD="${BUILD:-build}" reproduce/hyperion/run.sh --scale tiny --out "$T/rep" --data "$T/data" && {
  for x in png pdf; do [ -s "$T/rep/hyperion.$x" ] || fail "no hyperion.$x"; done
  file "$T/rep/hyperion.png" | grep -q 'PNG image' || fail "hyperion.png is not a PNG"
  head -c 5 "$T/rep/hyperion.pdf" | grep -q '%PDF' || fail "hyperion.pdf is not a PDF"
  md=$T/rep/compare.md
  grep -q '| Pipeline vs Hyperion-NoPipe (SAGE), up to | 1.74× |' "$md" || fail "compare.md lacks the pipeline claim"
  grep -q '^| hyperion | main | [0-9.]* |' "$md" || fail "compare.md lacks our hyperion row"
  grep -q '^| mmap | main | [0-9.]* |' "$md" || fail "compare.md lacks our mmap row"
  grep -q 'TPC model in-sample error < 15%' "$md" || fail "compare.md lacks the TPC model target"
  # each sweep point's host steal (profile / epochs) and its steal-free
  # error; tiny epochs are too short to resolve steal (–)
  grep -Eq '^\| 2 \| .* \| hyperion \| .* \| (–|[0-9.]+%) / (–|[0-9.]+%) \| (–|[+-][0-9]+%) \|$' "$md" ||
    fail "compare.md lacks a sweep point's host steal and steal-free error"
  grep -Eq '^\| TPC model in-sample error < 15% .*, steal-free \| (mean [0-9]+%|– \| –)' "$md" || fail "compare.md lacks the steal-free verdict"
  [ "$(ls "$T/rep/results"/*/mb-gnn.h5 | wc -l)" = 3 ] || fail "three training runs (systems + 2 sweep points)"
  sysfile=$(for f in "$T/rep/results"/*/mb-gnn.h5; do h5dump -d /summary "$f" 2>/dev/null | grep -q '"inmem' && echo "$f"; done | head -n1)
  [ -n "$sysfile" ] && { ours "$md" main "$sysfile" >"$T/ours" || { fail "compare.md lacks our own values"; cat "$T/ours" >&2; }; } ||
    fail "no result file of the systems run"
}
# the committed reference (small scale, mmap in its own pair run)
ref=reproduce/hyperion/reference
expect 0 "compare.py on the reference" -- "$py" -m reproduce.hyperion.compare -o "$T/ref.md" "$ref"/*.h5 &&
{
  ours "$T/ref.md" main "$ref/systems.h5" >"$T/ours" || { fail "reference compare.md lacks our own values"; cat "$T/ours" >&2; }
  ours "$T/ref.md" "mmap pair" "$ref/mmap-pair.h5" >"$T/ours" || { fail "reference compare.md lacks the mmap pair's values"; cat "$T/ours" >&2; }
  # ...and the same check sees a wrong value: hyperion's median changed
  sed -E 's/^\| hyperion \| main \| [0-9.]+ \|/| hyperion | main | 9.999 |/' "$T/ref.md" >"$T/wrong.md"
  ours "$T/wrong.md" main "$ref/systems.h5" >/dev/null && fail "the check of our values missed a wrong hyperion median"
  # the reference's epochs are long enough to resolve steal: numbers throughout
  [ "$(grep -Ec '^\| [0-9] \| .* \| [0-9.]+% / [0-9.]+% \| [+-][0-9]+% \|$' "$T/ref.md")" = 24 ] ||
    fail "reference compare.md lacks a sweep point's host steal or steal-free error"
  grep -Eq '^\| TPC model in-sample error < 15% across the sweep \(12 points\), steal-free \| mean [0-9]+%' "$T/ref.md" ||
    fail "reference compare.md lacks the steal-free verdict"
}
expect 0 "plot.py on the reference" -- "$py" -m reproduce.hyperion.plot -o "$T/ref" "$ref"/*.h5
finish
