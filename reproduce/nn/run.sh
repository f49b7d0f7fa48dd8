#!/bin/bash
# The nn study, end to end: mb-nn measures nn/'s decoder block forward +
# backward beside plain sgemm over the same GEMMs (interleaved) and its
# roofline, at three shapes, and Adam beside memcpy; the PyTorch peer
# (peer.py) then runs the same block and torch.optim.Adam at the same
# shapes and threads; plot.py draws the figure, compare.py writes compare.md.
#   reproduce/nn/run.sh [--scale tiny|small|reference|full] [--out DIR]
#     --scale small   gpt-small b8, gpt-bench b4 (the issue's shape, 39.5 GFLOP) and gpt-bench b16
#                     (~400 MB of activations and 50 MB of weights: far beyond a 32 MiB L3);
#                     every shape's block checked each iteration against the double-precision
#                     reference; Adam on 16M parameters; 5 timed iterations (3 at b16) after 1
#                     warm-up; 3 A/B pairs per shape (about 2.5 minutes quiet)
#     --scale full    small's shapes, 10 timed iterations, 5 A/B pairs
#     --scale reference  small's measurements for a committed reference/: refused (exit 2) unless
#                     the git tree is clean and build/ was built from HEAD
#     --scale tiny    gpt-tiny b2 and gpt-small b1, Adam on 64K, 2 A/B pairs; seconds; for the tests
#     --out DIR       figure, compare.md, results/, logs/, torch/ (default $BUILD/reproduce/nn)
# A/B pairs: each block shape runs mb-nn, then the peer, then mb-nn, then the peer, ... (pair N:
# results/<stem>.pN.h5, torch/<stem>.pN.json), the same iterations each, so each pair's ratio
# compares neighbours in time; compare.md gives the median over the pairs and their spread.
# Threads: $OMP_NUM_THREADS, else every core; OpenBLAS and PyTorch get the same.
# Without PyTorch (python3-torch, make deps) its columns stay empty, with a note.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small out=""
while [ $# -gt 0 ]; do
  case $1 in
  --scale) scale=${2:-}; shift 2 ;;
  --out) out=${2:-}; shift 2 ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# Per scale: the block shapes (preset, batch, timed iterations, extra mb-nn flags), Adam's size.
case $scale in
tiny) warmup=1 adam=65536 adam_iters=2 pairs=2
  shapes=("gpt-tiny 2 2" "gpt-small 1 2") ;;
small|reference) warmup=1 adam=16777216 adam_iters=5 pairs=3
  shapes=("gpt-small 8 5" "gpt-bench 4 5" "gpt-bench 16 3") ;;
full) warmup=1 adam=16777216 adam_iters=10 pairs=5
  shapes=("gpt-small 8 10" "gpt-bench 4 10" "gpt-bench 16 10") ;;
*) echo "run.sh: --scale must be tiny, small, reference or full, not '$scale'" >&2; exit 2 ;;
esac
# the reference run's results are committed: from a clean tree and a binary built from it
[ "$scale" != reference ] || reproduce/clean-tree.sh "--scale reference" || exit 2
out=${out:-$root/${BUILD:-build}/reproduce/nn}
nn=${MB_BIN:-$root/${BUILD:-build}/bin}/mb-nn
[ -x "$nn" ] || { echo "run.sh: $nn not found; run make first" >&2; exit 2; }
py=$(reproduce/python.sh)
# the peer needs torch: this interpreter if it has it, else Debian's python3
tpy=$py
"$tpy" -c 'import torch' 2>/dev/null || tpy=/usr/bin/python3
threads=${OMP_NUM_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
rm -rf "$out/results" "$out/logs" "$out/torch" "$out/load.txt"
mkdir -p "$out/results" "$out/logs" "$out/torch"
load() { echo "$1: $(cat /proc/loadavg)" >>"$out/load.txt"; }
peer() { # STEM, peer.py flags...: the PyTorch run; a missing torch is a note, not a failure
  local stem=$1 rc=0; shift
  load "$stem (PyTorch)"
  "$tpy" -m reproduce.nn.peer --threads "$threads" "$@" -o "$out/torch/$stem.json" \
    >"$out/logs/$stem.torch.log" 2>&1 || rc=$?
  case $rc in
  0) ;;
  77) echo "run.sh: $(tail -1 "$out/logs/$stem.torch.log"): PyTorch's columns stay empty" >&2 ;;
  *) echo "run.sh: the PyTorch peer failed for $stem; see $out/logs/$stem.torch.log" >&2; exit 1 ;;
  esac
}
cfg() { # RESULT KEY: a /config attribute of an mb-nn result file
  "$py" -c 'import sys; from reproduce import mbresults as m; print(m.load([sys.argv[1]])[0][0]["config"][sys.argv[2]])' "$1" "$2"
}
t0=$SECONDS
for s in "${shapes[@]}"; do
  read -r model batch iters extra <<<"$s"
  shape=() # the peer's shape flags, from the first pair's result file
  for ((p = 1; p <= pairs; p++)); do
    stem=block-$model-b$batch.p$p
    load "$stem (mb-nn)"
    # shellcheck disable=SC2086 # extra is words
    "$nn" --model "$model" --batch "$batch" --cases block -n "$iters" -w "$warmup" --breakdown $extra \
      -o "$out/results/$stem.h5" >"$out/logs/$stem.log" 2>&1 ||
      { echo "run.sh: mb-nn failed for $stem; see $out/logs/$stem.log" >&2; tail -5 "$out/logs/$stem.log" >&2; exit 1; }
    r=$out/results/$stem.h5
    [ ${#shape[@]} -gt 0 ] || shape=(--seq "$(cfg "$r" seq)" --hidden "$(cfg "$r" hidden)"
      --heads "$(cfg "$r" heads)" --ffn "$(cfg "$r" ffn)")
    peer "$stem" --batch "$batch" "${shape[@]}" -n "$iters" -w "$warmup"
  done
done
load "adam (mb-nn)"
"$nn" --cases adam --adam-elems "$adam" -n "$adam_iters" -w "$warmup" -o "$out/results/adam.h5" \
  >"$out/logs/adam.log" 2>&1 || { echo "run.sh: mb-nn's Adam case failed; see $out/logs/adam.log" >&2; exit 1; }
# the peer's block part is skipped (--batch 0): only torch.optim.Adam
peer adam --batch 0 --adam-elems "$adam" -n "$adam_iters" -w "$warmup"
echo "run.sh: measured in $((SECONDS - t0)) s with $threads threads" >&2
"$py" -m reproduce.nn.plot -o "$out/nn" "$out"
"$py" -m reproduce.nn.compare -o "$out/compare.md" "$out"
