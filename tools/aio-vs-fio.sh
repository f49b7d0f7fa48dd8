#!/bin/bash
# The issue's headline check: mb-aio's engine (async, ONE I/O thread) against
# fio's io_uring engine on the same file, block size, queue depth, submit
# batch and O_DIRECT. Each repetition is one mb-aio run holding both cases
# back to back (engine, then fio), repeated REPS times, so the two alternate
# under the same machine load; prints each run's medians and
# engine/fio throughput ratio, then the median ratio and its spread.
#   tools/aio-vs-fio.sh [DIR [REPS [BUILD]]]     (DIR: where the 1 GiB file lives)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/aio-data} reps=${2:-5} build=${3:-build}
command -v fio >/dev/null || { echo "aio-vs-fio: fio is not installed" >&2; exit 2; }
[ -x "$build/bin/mb-aio" ] || { echo "aio-vs-fio: $build/bin/mb-aio: not built" >&2; exit 2; }
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=(
  "4K random read, QD64, batch 16|--sizes 4K --pattern random --qd 64 --batch 16 --ios 50000"
  "1M sequential read, QD64, batch 16|--sizes 1M --pattern seq --qd 64 --batch 16 --ios 2048"
)
ci=0
for c in "${cases[@]}"; do
  ci=$((ci + 1))
  name=${c%%|*} args=${c#*|}
  echo "== $name: $build/bin/mb-aio --dir $dir --file-size 1G --io-threads 1 $args --mode async --vs-fio -n 3 -w 1"
  : >"$tmp/ratios"
  for k in $(seq "$reps"); do
    # shellcheck disable=SC2086
    "$build/bin/mb-aio" --dir "$dir" --file-size 1G --io-threads 1 $args --mode async --vs-fio -n 3 -w 1 \
      -o "$tmp/c$ci.r$k.h5" >"$tmp/out$k" 2>&1 || { cat "$tmp/out$k"; exit 1; }
    # table rows end in "pass": the engine's row comes first, fio's second
    awk '$NF=="pass"{t[n++]=$3} END{if (n!=2) exit 1; printf "run %d: engine %.0f us, fio %.0f us, engine/fio %.3f\n", '"$k"', t[0], t[1], t[1]/t[0]}' \
      "$tmp/out$k" | tee -a "$tmp/ratios"
  done
  awk '{print $NF}' "$tmp/ratios" | sort -g | awk '{r[NR]=$1} END{m=(NR%2)?r[(NR+1)/2]:(r[NR/2]+r[NR/2+1])/2;
    printf "median engine/fio %.3f (min %.3f, max %.3f, %d runs)\n", m, r[1], r[NR], NR}'
done
