#!/bin/bash
# The Hyperion study, end to end: generate R-MAT datasets with mb-gnn
# --generate, train every system side by side under a memory budget, sweep
# the number of data files (stand-in SSDs) and the cache size for the TPC
# model, draw the figures, write compare.md.
#   reproduce/hyperion/run.sh [--scale tiny|small|reference|full] [--out DIR] [--data DIR]
#     --scale tiny    scale 11, dim 128, 2 files, no budget, 2 epochs: seconds (the tests, make reproduce)
#     --scale small   scale 20, dim 1024 (4 GiB of features), budget 1 GiB (features 4x the
#                     budget), host cache 819 MiB (20% of the features); batch 64, fan-out 25,10,
#                     hidden 16, 40 batches per epoch, 5 epochs, 8 batches in flight, TPC profile of 40 batches
#                     a phase; TPC sweep (5 epochs a point) over 1, 2, 4 files x
#                     cache 5, 10, 20, 40% of the features (hyperion and nopipe side by side; where
#                     the cache needs it the budget grows to cache + 512 MiB: 2.1 GiB at 40%)
#     --scale reference  small's configuration with 10 epochs (10 a sweep point) and a 120-batch
#                     profile, about 18 minutes: the run behind reproduce/hyperion/reference/ (committed);
#                     refused (exit 2) unless the git tree is clean and build/ was built from HEAD
#     --scale full    scale 22, dim 1024 (16 GiB of features), budget 4 GiB, cache 20%, batch 256,
#                     100 batches per epoch, 3 epochs; sweep (5 epochs a point) over 1, 2, 4, 8 files x cache 5-40%
#     --out DIR       figures, compare.md and results (default $BUILD/reproduce/hyperion, BUILD=build)
#     --data DIR      where datasets are generated (default $BUILD/gnn-data); kept between runs
#     --no-mmap       skip the mmap pairs (minutes per batch at small scale), e.g. to keep earlier ones
# Every run uses job_scripts/mb-gnn.sbatch, which falls back to mpirun outside Slurm.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small out="" data="" no_mmap=0
while [ $# -gt 0 ]; do
  case $1 in
  --scale) scale=${2:-}; shift 2 ;;
  --out) out=${2:-}; shift 2 ;;
  --data) data=${2:-}; shift 2 ;;
  --no-mmap) no_mmap=1; shift ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
MiB=$((1 << 20))
case $scale in
tiny) gscale=11 dim=128 files="2" sweep_files="1 2" cache_pcts="20" budget=0 batch=64 fanout=5,5 hidden=32 epochs=2 sweep_epochs=2
      extra=(--eval-nodes 200) mmap_batches=0 ;;
small) gscale=20 dim=1024 files="4" sweep_files="1 2 4" cache_pcts="5 10 20 40" budget=$((1024 * MiB)) batch=64
       fanout=25,10 hidden=16 epochs=5 sweep_epochs=5 extra=(--epoch-batches 40 --slots 8 --profile-batches 40)
       mmap_batches=1 random_batches=40 ;;
# small's configuration measured longer: 10 epochs (10 a sweep point) and a 120-batch profile, whose
# prediction varied half as much from run to run as a 40-batch one's here (about 18 minutes)
reference) gscale=20 dim=1024 files="4" sweep_files="1 2 4" cache_pcts="5 10 20 40" budget=$((1024 * MiB)) batch=64
       fanout=25,10 hidden=16 epochs=10 sweep_epochs=10 extra=(--epoch-batches 40 --slots 8 --profile-batches 120)
       mmap_batches=1 random_batches=40 ;;
full) gscale=22 dim=1024 files="4" sweep_files="1 2 4 8" cache_pcts="5 10 20 40" budget=$((4096 * MiB)) batch=256
      fanout=25,10 hidden=16 epochs=3 sweep_epochs=5 extra=(--epoch-batches 100 --slots 8) mmap_batches=1 random_batches=20 ;;
*) echo "run.sh: --scale must be tiny, small, reference or full, not '$scale'" >&2; exit 2 ;;
esac
# the reference run's results are committed: from a clean tree and a binary built from it
[ "$scale" != reference ] || reproduce/clean-tree.sh "--scale reference" || exit 2
[ "$scale" != reference ] || [ $no_mmap = 0 ] || { echo "run.sh: --scale reference runs every pair; drop --no-mmap" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/hyperion}
data=${data:-$root/${BUILD:-build}/gnn-data}
py=$(reproduce/python.sh)
export MB_RESULTS=$out/results MB_NP=${MB_NP:-1} MB_LAUNCHER=mpirun
# one rank runs the whole pipeline (stage threads, engine, training): mpirun
# must not bind it to one core, or the stages cannot overlap
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
mkdir -p "$MB_RESULTS" "$data"
feat_bytes=$(((1 << gscale) * dim * 4))
# datasets are named by format version: an older one is not reused
format=$(sed -n 's/^#define GNN_FORMAT_VERSION \([0-9]*\).*/\1/p' gnn/gnn.h)
t0=$SECONDS

# A VM's disk is often a file on its host: blocks read before come from the
# host's page cache, the others from its disk, several times slower (seen
# here: 7k random 4 KiB reads/s cold, 55k warm). So that the sweep sees one
# storage rate, not one that climbs as the host caches more, each existing
# dataset is read once, sequentially through O_DIRECT, before its first job.
declare -A warmed
warm() {
  [ -d "$1" ] && [ -z "${warmed[$1]:-}" ] || return 0
  local f
  for f in "$1"/data.*; do dd if="$f" of=/dev/null bs=4M iflag=direct status=none 2>/dev/null || true; done
  warmed[$1]=1
}

# run NAME FILES CACHE_PCT SYSTEMS [EPOCHS [MB-GNN FLAGS]]: one mb-gnn job; prints its result file
run() {
  local name=$1 nf=$2 pct=$3 systems=$4 epochs=${5:-$epochs} log cache bud
  shift 4; shift || true
  warm "$data/rmat$gscale-d$dim-f$nf-v$format"
  log=$out/$name.log
  cache=$((feat_bytes * pct / 100)) bud=$budget
  # the caches must fit in the budget with room for the rest (buffers, offsets)
  if [ "$bud" != 0 ] && [ $((cache + 192 * MiB)) -gt "$bud" ]; then bud=$((cache + 512 * MiB)); fi
  MB_GNN_DATA=$data/rmat$gscale-d$dim-f$nf-v$format MB_GNN_SCALE=$gscale MB_GNN_DIM=$dim MB_GNN_FILES=$nf \
  MB_GNN_SYSTEMS=$systems MB_GNN_BATCH=$batch MB_GNN_FANOUT=$fanout MB_GNN_BUDGET=$bud \
  MB_GNN_CACHE_HOST=$cache MB_GNN_CACHE_DEV=0 MB_ITERS=$epochs MB_WARMUP=0 \
    bash job_scripts/mb-gnn.sbatch --hidden "$hidden" "${extra[@]}" "$@" >"$log" 2>&1 ||
    { echo "run.sh: mb-gnn ($name) failed; see $log" >&2; tail -5 "$log" >&2; return 1; }
  sed -n 's/^# result file: //p' "$log" | tail -1
}

# Fig 8/9/11: every system side by side, cache 20% of the features. mmap
# thrashes the page cache under the budget (minutes per batch where the
# disk's read-ahead is large), so at small/full scale it runs beside
# hyperion in its own pair with a few batches, one epoch.
if [ "$mmap_batches" = 0 ]; then
  run systems "$files" 20 inmem,hyperion,topo-first,feat-first,nopipe,nocache,mmap >/dev/null
else
  run systems "$files" 20 inmem,hyperion,topo-first,feat-first,nopipe,nocache >/dev/null
  # (held-out scoring off: it would read through mmap for many more batches)
  [ $no_mmap = 1 ] || run mmap-pair "$files" 20 hyperion,mmap 1 --epoch-batches "$mmap_batches" --eval-nodes 0 >/dev/null
  # the stronger page-cache baseline (MADV_RANDOM: one page per fault) is fast enough for a real epoch
  [ $no_mmap = 1 ] || run mmap-random-pair "$files" 20 hyperion,mmap-random 1 --epoch-batches "$random_batches" \
    --eval-nodes 0 >/dev/null
fi
# Fig 12/13/14: the TPC model's sweep, hyperion and nopipe (its serial
# model) over the number of files and the cache size; every point profiles
# itself (a short serial run before its first epoch) and records the
# prediction beside the measured epochs
for nf in $sweep_files; do
  for pct in $cache_pcts; do
    run "sweep-f$nf-c$pct" "$nf" "$pct" hyperion,nopipe "$sweep_epochs" >/dev/null
  done
done
echo "run.sh: measured in $((SECONDS - t0)) s: $MB_RESULTS" >&2
"$py" -m reproduce.hyperion.plot -o "$out/hyperion" "$MB_RESULTS"
"$py" -m reproduce.hyperion.compare -o "$out/compare.md" --csv "$out/sweep.csv" "$MB_RESULTS"
