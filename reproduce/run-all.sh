#!/bin/bash
# make reproduce: runs every study (reproduce/<study>/run.sh) at SCALE, or
# only STUDY, and lists the figures and tables written.
#   reproduce/run-all.sh [tiny|small|full] [STUDY]   (default tiny: every study in a few minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
scale=${1:-tiny} only=${2:-}
studies=()
for r in reproduce/*/run.sh; do
  s=$(basename "$(dirname "$r")")
  [ -z "$only" ] || [ "$s" = "$only" ] && studies+=("$s")
done
if [ ${#studies[@]} = 0 ]; then
  echo "make reproduce: no study '$only'; there are: $(ls -d reproduce/*/ | xargs -n1 basename | tr '\n' ' ')" >&2
  exit 2
fi
written=() failed=()
for s in "${studies[@]}"; do
  echo "=== reproduce/$s (scale $scale)"
  t0=$SECONDS
  if out=$(reproduce/"$s"/run.sh --scale "$scale"); then
    echo "$out"
    written+=($(grep -E '\.(png|pdf|md)$' <<<"$out"))
    echo "=== reproduce/$s done in $((SECONDS - t0)) s"
  else
    failed+=("$s")
    echo "=== reproduce/$s FAILED" >&2
  fi
done
echo
echo "figures and tables written:"
printf '  %s\n' "${written[@]}"
[ ${#failed[@]} = 0 ] || { echo "failed studies: ${failed[*]}" >&2; exit 1; }
