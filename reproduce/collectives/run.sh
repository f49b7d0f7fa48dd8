#!/bin/bash
# The collectives study, end to end: measure with mb-coll, draw the figure,
# write compare.md.
#   reproduce/collectives/run.sh [--scale small|full|reference|tiny] [--slurm] [--np N] [--nodes LIST] [--out DIR]
#     --scale small   allreduce, reduce_scatter_block, allgather, bcast, every algorithm; 8 B..4 MiB, x2; 50 iterations
#                     (about 25 s of measurement at 2 ranks)
#     --scale full    every sized collective, every algorithm; 8 B..64 MiB, x2; 100 iterations
#     --scale reference  allreduce, every algorithm and auto, 8 B..64 MiB, x2; 30 iterations in 5
#                     rounds over all cases (--rounds: a slow phase of the VM falls on every
#                     algorithm alike): the run behind results/reference/collectives/ (about 4 min);
#                     refused (exit 2) unless the git tree is clean and build/ was built from HEAD
#     --scale tiny    allreduce and bcast, every algorithm, 8 B..64 KiB, x4, 5 iterations: seconds (the tests, make reproduce)
#     --slurm         submit job_scripts/mb-coll.sbatch through job_scripts/sweep.sh (node counts
#                     --nodes, default 1 at small scale and 1,2,4,8 at full), wait, collect
#     --np N          local ranks (default 2); with --slurm, ranks per node are the job
#                     script's (--ntasks-per-node=2) unless MB_TPN=N is set
#     --out DIR       figures, compare.md and results (default $BUILD/reproduce/collectives, BUILD=build)
# Local runs use the same job script, which falls back to mpirun outside Slurm.
set -euo pipefail
source "$(dirname "$0")/../opts.sh"
study_opts run.sh "scale=small slurm=0 np=2 nodes= out=" "$0" "$@"
case $scale in
small) export MB_ALGOS=all MB_COLLS=allreduce,reduce_scatter_block,allgather,bcast MB_MINBYTES=8 MB_MAXBYTES=4M \
         MB_STEPFACTOR=2 MB_ITERS=50 MB_WARMUP=5; nodes=${nodes:-1} ;;
reference) export MB_ALGOS=all,auto MB_COLLS=allreduce MB_MINBYTES=8 MB_MAXBYTES=64M MB_STEPFACTOR=2 MB_ITERS=30 \
         MB_WARMUP=2 MB_ROUNDS=5; nodes=${nodes:-1} ;;
tiny) export MB_ALGOS=all MB_COLLS=allreduce,bcast MB_MINBYTES=8 MB_MAXBYTES=64K MB_STEPFACTOR=4 MB_ITERS=5 \
         MB_WARMUP=1; nodes=${nodes:-1} ;;
full) export MB_ALGOS=all MB_COLLS=allreduce,reduce_scatter_block,allgather,bcast,reduce,alltoall MB_MINBYTES=8 \
         MB_MAXBYTES=64M MB_STEPFACTOR=2 MB_ITERS=100 MB_WARMUP=10; nodes=${nodes:-1,2,4,8} ;;
*) echo "run.sh: --scale must be small, full, reference or tiny, not '$scale'" >&2; exit 2 ;;
esac
[[ $np =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --np must be a positive integer, not '$np'" >&2; exit 2; }
# the reference run's results are committed: from a clean tree and a binary built from it
[ "$scale" != reference ] || reproduce/clean-tree.sh "--scale reference" || exit 2
out=${out:-$root/${BUILD:-build}/reproduce/collectives}
py=$(reproduce/python.sh)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
export MB_RESULTS=$out/results
mkdir -p "$MB_RESULTS"
t0=$SECONDS
if [ $slurm = 1 ]; then
  data=$out/results/collected-$stamp.h5
  job_scripts/sweep.sh --script job_scripts/mb-coll.sbatch --nodes "$nodes" ${MB_TPN:+--ntasks-per-node "$MB_TPN"} \
    --wait --collect "$data" >/dev/null
else
  export MB_NP=$np MB_LAUNCHER=mpirun
  bash job_scripts/mb-coll.sbatch >"$out/mb-coll-$stamp.log" 2>&1 ||
    { echo "run.sh: mb-coll failed; see $out/mb-coll-$stamp.log" >&2; tail -5 "$out/mb-coll-$stamp.log" >&2; exit 1; }
  data=$(sed -n 's/^# result file: //p' "$out/mb-coll-$stamp.log" | tail -1)
  [ -f "$data" ] || { echo "run.sh: no result file named in $out/mb-coll-$stamp.log" >&2; exit 1; }
fi
echo "run.sh: measured in $((SECONDS - t0)) s: $data" >&2
"$py" -m reproduce.collectives.plot -o "$out/collectives" "$data"
"$py" -m reproduce.collectives.compare -o "$out/compare.md" "$data"
