#!/bin/bash
# The TPC model's calibration and held-out validation (docs/models.md):
# the development configurations (calibration set: hyperion and nopipe in
# one run each) and a seeded draw of held-out configurations from the grid
# of reproduce/models/grid.py (other graph scales, feature dims, fan-outs,
# batch and hidden sizes, rank counts, file counts, cache sizes). Each
# point's run calibrates the model in its own profiling run (untimed, on
# profiling batches, before the timed epochs) and records the prediction
# (model_s) beside the measured epochs; the point's set goes into the
# result file (--model-set). Prints CSV rows on stdout:
#   model,point,set,predicted_s,measured_s
#   reproduce/models/tpc.sh [--scale tiny|small|full] [--seed N] [--slurm] [--out DIR] [--data DIR]
#     --scale tiny   scale 11/10, 2 epochs of 4 batches: a test (seconds a point)
#     --scale small  development scale 16 (dim 1024, 1/4 files x 5/20% cache); held-out draw of 8
#                    from scales 15-17; 3 epochs of 20 batches, 20-batch profile (default)
#     --scale full   development scale 20 (the Hyperion sweep's 12 points); draw of 20, scales 18-21
#     --seed N       the held-out draw's seed (default 1; a new draw after any model change)
#     --slurm        each run is one job of job_scripts/mb-gnn.sbatch (sbatch --wait)
#     --out DIR      logs and result files (default $BUILD/reproduce/models/tpc)
#     --data DIR     datasets (default $BUILD/gnn-data); kept between runs
set -euo pipefail
source "$(dirname "$0")/../opts.sh"
study_opts tpc.sh "scale=small seed=1 slurm=0 out= data=" "$0" "$@"
case $scale in
tiny) epochs=2 batches=4 profile=4 ;;
small) epochs=3 batches=20 profile=20 ;;
full) epochs=3 batches=40 profile=40 ;;
*) echo "tpc.sh: --scale must be tiny, small or full, not '$scale'" >&2; exit 2 ;;
esac
[[ $seed =~ ^[0-9]+$ ]] || { echo "tpc.sh: --seed must be a non-negative integer, not '$seed'" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/models/tpc}
data=${data:-$root/${BUILD:-build}/gnn-data}
bin=$root/${BUILD:-build}/bin
py=$(reproduce/python.sh)
export MB_RESULTS=$out/results MB_LAUNCHER=${MB_LAUNCHER:-mpirun}
# a rank runs the whole pipeline (stage threads, engine, training): not bound to one core
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
mkdir -p "$MB_RESULTS" "$data"
format=$(sed -n 's/^#define GNN_FORMAT_VERSION \([0-9]*\).*/\1/p' gnn/gnn.h)
# (5% training nodes, not the paper's 1%: the study's small graphs then still have 20 batches an epoch)
train_frac=0.05
points=$("$py" -m reproduce.models.grid --scale "$scale" --seed "$seed")
printf '%s\n' "$points" >"$out/points.txt"
echo "model,point,set,predicted_s,measured_s"
while read -r name set systems gscale dim fanout batch hidden ranks files pct; do
  ds=$data/rmat$gscale-d$dim-f$files-t$train_frac-v$format
  if [ ! -f "$ds/graph.meta" ]; then
    "$bin/mb-gnn" --generate --data "$ds" --scale "$gscale" --feat-dim "$dim" --files "$files" \
      --train-frac "$train_frac" -q -o "$out/generate-$name.h5" </dev/null >"$out/generate-$name.log" 2>&1 ||
      { echo "tpc.sh: generating $ds failed; see $out/generate-$name.log" >&2; exit 1; }
  fi
  cache=$(((1 << gscale) * dim * 4 * pct / 100))
  log=$out/$set-$name-${systems//,/+}.log
  env=(MB_GNN_DATA="$ds" MB_GNN_SYSTEMS="$systems" MB_GNN_BATCH="$batch" MB_GNN_FANOUT="$fanout" MB_GNN_BUDGET=0
       MB_GNN_CACHE_HOST="$cache" MB_GNN_CACHE_DEV=0 MB_ITERS="$epochs" MB_WARMUP=0 MB_NP="$ranks")
  flags=(--hidden "$hidden" --epoch-batches "$batches" --profile-batches "$profile" --eval-nodes 0 --model-set "$set")
  if [ $slurm = 1 ]; then
    env "${env[@]}" sbatch --wait --quiet --job-name="mb-gnn-$name" --ntasks="$ranks" --output="$log" --export=ALL \
      job_scripts/mb-gnn.sbatch "${flags[@]}" </dev/null ||
      { echo "tpc.sh: job $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  else
    env "${env[@]}" bash job_scripts/mb-gnn.sbatch "${flags[@]}" </dev/null >"$log" 2>&1 ||
      { echo "tpc.sh: $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  fi
  result=$(sed -n 's/^# result file: //p' "$log" | tail -1)
  [ -f "$result" ] || { echo "tpc.sh: no result file named in $log" >&2; exit 1; }
  "$py" -m reproduce.models.tpc_rows --point "$name" --set "$set" "$result"
done <<<"$points"
