#!/bin/bash
# The DisDP study, end to end: mb-zero --interference (an allgather beside a
# GEMM, a GEMM beside a copy) with the model on the paper's inputs
# (--paper-table); then every mode (zero3-serial, zero3-overlap --progress
# thread, zero-offload, disdp when mb-zero has it) at W=2, --switch 1,
# --ps 1 (the ZeRO-3 modes leave those ranks idle) and two link rates:
# --link-gbps auto (ZeRO-3's wire time per layer = its compute) and twice the
# first auto run's rate; each run records the calibrated step model beside
# its measured step. Then plot.py draws the figure and compare.py writes
# compare.md with the issue's ratios from these runs.
#   reproduce/disdp/run.sh [--scale tiny|small|full] [--slurm] [--dir DIR] [--out DIR]
#     --scale tiny    gpt-tiny, micro-batch 1 (seconds; the tests)
#     --scale small   gpt-small, micro-batches of 4 (a few minutes here)
#     --scale full    gpt-bench, micro-batches of 2 (longer; a quiet machine)
#     --slurm         each run is one job of job_scripts/mb-zero.sbatch (sbatch --wait)
#     --dir DIR       the parameter servers' and the storage calibration's files
#                     (default $MB_ZERO_DIR, else $BUILD/disdp-data; node-local disk)
#     --out DIR       figure, compare.md, results (default $BUILD/reproduce/disdp)
# Emulation (README.md): roles are MPI ranks on this host, each worker's link
# a token bucket in the collectives' pacing hook. Local runs use the job
# script, which runs mpirun directly outside Slurm.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small slurm=0 out="" dir=""
source reproduce/opts.sh
study_opts run.sh "scale slurm dir out" "$0" "$@"
case $scale in
tiny) model=gpt-tiny micro=1 iters=2 ;;
small) model=gpt-small micro=4 iters=5 ;;
full) model=gpt-bench micro=2 iters=5 ;;
*) echo "run.sh: --scale must be tiny, small or full, not '$scale'" >&2; exit 2 ;;
esac
out=${out:-$root/${BUILD:-build}/reproduce/disdp}
dir=${dir:-${MB_ZERO_DIR:-$root/${BUILD:-build}/disdp-data}}
export MB_RESULTS=$out/results MB_ITERS=$iters MB_WARMUP=1
py=$(reproduce/python.sh)
bin=${BUILD:-build}/bin/mb-zero
[ -x "$bin" ] || { echo "run.sh: $bin is not built (make)" >&2; exit 1; }
mkdir -p "$MB_RESULTS" "$dir"
modes="zero3-serial zero3-overlap zero-offload"
# disdp when this mb-zero has it (its refusal of an unknown mode lists the modes)
known=$("$bin" --mode '?' 2>&1 || true)
[[ $known == *"|disdp"* ]] && modes+=" disdp"
data=()
# run NAME W K N FLAGS...: one mb-zero run through the job script; its
# result file joins data, its log is $out/NAME.log
run() {
  local name=$1 w=$2 k=$3 n=$4 log=$out/$1.log
  shift 4
  if [ $slurm = 1 ]; then
    MB_ZERO_W=$w MB_ZERO_SWITCH=$k MB_ZERO_PS=$n sbatch --wait --quiet --job-name="mb-zero-$name" --output="$log" \
      --ntasks=$((w + k + n)) --cpus-per-task=1 --export=ALL job_scripts/mb-zero.sbatch "$@" ||
      { echo "run.sh: job $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  else
    MB_ZERO_W=$w MB_ZERO_SWITCH=$k MB_ZERO_PS=$n bash job_scripts/mb-zero.sbatch "$@" >"$log" 2>&1 ||
      { echo "run.sh: $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  fi
  local f
  f=$(sed -n 's/^# result file: //p' "$log" | tail -1)
  [ -f "$f" ] || { echo "run.sh: no result file named in $log" >&2; exit 1; }
  data+=("$f")
}
t0=$SECONDS
common=(--model "$model" --micro "$micro" --dir "$dir")
run interference 2 0 0 "${common[@]}" --interference --paper-table
rate=""
for m in $modes; do
  flags=("${common[@]}" --mode "$m" --link-gbps auto)
  [ "$m" = zero3-overlap ] && flags+=(--progress thread)
  run "$m-auto" 2 1 1 "${flags[@]}"
  # the second rate: twice the first auto run's (wire time about half the compute)
  [ -n "$rate" ] || rate=$(sed -n 's/^# --link-gbps auto: \([0-9.e+-]*\) GB\/s.*/\1/p' "$out/$m-auto.log" | awk '{printf "%.6g", 2 * $1}')
done
[ -n "$rate" ] && awk -v r="$rate" 'BEGIN {exit !(r > 0)}' || { echo "run.sh: no auto link rate in $out/zero3-serial-auto.log" >&2; exit 1; }
for m in $modes; do
  flags=("${common[@]}" --mode "$m" --link-gbps "$rate")
  [ "$m" = zero3-overlap ] && flags+=(--progress thread)
  run "$m-fixed" 2 1 1 "${flags[@]}"
done
load=$(uptime | sed 's/.*load/load/')
echo "run.sh: measured in $((SECONDS - t0)) s ($load)" >&2
"$py" -m reproduce.disdp.plot -o "$out/disdp" "${data[@]}"
"$py" -m reproduce.disdp.compare -o "$out/compare.md" --seconds $((SECONDS - t0)) "${data[@]}"
