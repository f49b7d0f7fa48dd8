#!/bin/bash
# The models study (docs/models.md, issue 16): calibration, then held-out
# validation, for the TPC model (tpc.sh) and, where reproduce/models/coll.sh
# exists, the collectives model; merges their CSV rows into models.csv,
# writes compare.md (per held-out point model vs measured; in-sample and
# held-out errors side by side) and a log-log predicted-vs-measured plot.
#   reproduce/models/run.sh [--scale tiny|small|full] [--seed N] [--slurm] [--out DIR] [--data DIR]
#     --scale tiny    a test: one calibration run and two held-out points (under a minute)
#     --scale small   the TPC model's 4 development runs (8 points) and 8 held-out points; under 15 minutes here
#     --scale full    the development sweep at scale 20 (12 runs) and 20 held-out points at scales 18-21
#     --seed N        the held-out draw's seed (default 1). After any model change, draw again
#                     with the next seed and say so (README: the count of draws)
#     --slurm         each measurement is a Slurm job (job_scripts/*.sbatch, sbatch --wait)
#     --out DIR       models.csv, compare.md, models.png/.pdf, logs (default $BUILD/reproduce/models)
#     --data DIR      the TPC model's datasets (default $BUILD/gnn-data); kept between runs
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small seed=1 slurm=() out="" data=""
while [ $# -gt 0 ]; do
  case $1 in
  --scale) scale=${2:-}; shift 2 ;;
  --seed) seed=${2:-}; shift 2 ;;
  --slurm) slurm=(--slurm); shift ;;
  --out) out=${2:-}; shift 2 ;;
  --data) data=${2:-}; shift 2 ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $scale in tiny|small|full) ;; *) echo "run.sh: --scale must be tiny, small or full, not '$scale'" >&2; exit 2 ;; esac
[[ $seed =~ ^[0-9]+$ ]] || { echo "run.sh: --seed must be a non-negative integer, not '$seed'" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/models}
data=${data:-$root/${BUILD:-build}/gnn-data}
py=$(reproduce/python.sh)
mkdir -p "$out"
t0=$SECONDS
csvs=()
reproduce/models/tpc.sh --scale "$scale" --seed "$seed" "${slurm[@]}" --out "$out/tpc" --data "$data" >"$out/tpc.csv"
csvs+=("$out/tpc.csv")
if [ -x reproduce/models/coll.sh ]; then
  reproduce/models/coll.sh --scale "$scale" --seed "$seed" "${slurm[@]}" --out "$out/coll" >"$out/coll.csv"
  csvs+=("$out/coll.csv")
else
  echo "run.sh: reproduce/models/coll.sh absent: the collectives model is not in this run" >&2
fi
echo "run.sh: measured in $((SECONDS - t0)) s (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$py" -m reproduce.models.compare -o "$out/compare.md" --plot "$out/models" --csv "$out/models.csv" \
  --note "scale $scale, held-out draw seed $seed, $((SECONDS - t0)) s, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
  "${csvs[@]}"
