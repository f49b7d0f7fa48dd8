#!/bin/bash
# The collectives cost model: calibration, then held-out validation.
#   reproduce/models/coll.sh [--scale tiny|small|full] [--seed N] [--slurm] [--out DIR]
# Prints CSV on stdout, one row per (algorithm, point), header first:
#   model,point,set,predicted_s,measured_s
#     model      coll:<algorithm> (coll:auto: the model's pick, run under that label)
#     point      allreduce/np<P>[/rpn<L> or /nodes<K>]/<bytes>B
#     set        calibration: the calibration's sizes at its rank count, unsplit, measured after
#                  calibrating (the model was fitted to microbenchmarks, not to these runs);
#                heldout: sizes drawn with the seed from mb-coll's held-out grid (never a
#                  calibration size) on configurations drawn with the seed from the declared
#                  configuration grid (below)
#     predicted_s, measured_s  the model column and the median of the slowest rank, seconds
# The declared configuration grid (issue 16: no oversubscription): rank counts P from 2 to the
# cores available here (nproc), each unsplit and split by --ranks-per-node L for every proper
# divisor L of P; --cores N declares another count (never above nproc). --configs K of them are
# drawn with random.Random(seed).sample; points.txt and every result file record the draw
# (model_heldout_seed, model_heldout_sizes, nranks, model_point_ranks_per_node). A held-out
# point equal to a calibration point (same P, same split, same size) fails the run (exit 1).
# Progress and a summary (held-out median error per algorithm, auto's hit rate and worst
# slowdown over the held-out points) go to stderr. The profile, result files and CSV stay
# in --out (default $BUILD/reproduce/models/coll, BUILD=build). Nothing here tunes the model:
# a new seed is a new draw; say how many draws were made when quoting numbers.
# --slurm launches each run with srun --mpi=pmix on the cluster's Slurm instead of mpirun.
# --vcluster (root, with `tools/vcluster up N` already up): the grid also declares ranks spread
# over the emulated nodes, "vK:L" = K of the N nodes x L ranks each with K*L <= the cores; the
# link's terms are calibrated first (mb-coll --calibrate-net, one rank on each of 2 nodes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small seed=1 out="" slurm=0 cores=$(nproc) vc=0
while [ $# -gt 0 ]; do
  case $1 in
  --scale) scale=${2:-}; shift 2 ;;
  --seed) seed=${2:-}; shift 2 ;;
  --out) out=${2:-}; shift 2 ;;
  --slurm) slurm=1; shift ;;
  --cores) cores=${2:-}; shift 2 ;;
  --vcluster) vc=1; shift ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "coll.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $scale in
tiny) cal_np=2 configs=1 points=2 iters=3 ;;
small) cal_np=2 configs=2 points=4 iters=5 ;;
full) cal_np=2 configs=4 points=8 iters=20 ;;
*) echo "coll.sh: --scale: '$scale' is not tiny, small or full" >&2; exit 2 ;;
esac
[[ $cores =~ ^[0-9]+$ ]] && [ "$cores" -ge 2 ] && [ "$cores" -le "$(nproc)" ] ||
  { echo "coll.sh: --cores: '$cores' is not a core count from 2 to $(nproc) (nproc)" >&2; exit 2; }
[ "$cal_np" -le "$cores" ] || { echo "coll.sh: the calibration's $cal_np ranks exceed --cores $cores" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "coll.sh: --seed: '$seed' is not a non-negative integer" >&2; exit 2; }
VC=/run/movebench-vcluster vc_nodes=0
if [ $vc = 1 ]; then
  [ "$(id -u)" = 0 ] && [ -s "$VC/hostfile" ] ||
    { echo "coll.sh: --vcluster: no vcluster is up (root: tools/vcluster up N first)" >&2; exit 2; }
  vc_nodes=$(grep -c . "$VC/hostfile")
fi
BUILD=${BUILD:-build}
C=$root/$BUILD/bin/mb-coll R=$root/$BUILD/bin/mb-report
[ -x "$C" ] && [ -x "$R" ] || { echo "coll.sh: $C or $R missing (run make)" >&2; exit 2; }
out=${out:-$root/$BUILD/reproduce/models/coll}
mkdir -p "$out"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# --slurm: each run is a job step of its own allocation on the cluster's
# Slurm (srun --mpi=pmix), as the job scripts launch; else a local mpirun.
if [ $slurm = 1 ]; then
  command -v srun >/dev/null || { echo "coll.sh: --slurm: srun not found" >&2; exit 2; }
  mpi() { local np=$1; shift; srun --mpi=pmix --ntasks="$np" --overcommit --cpu-bind=none "$@"; }
else
  mpi() { local np=$1; shift; mpirun -np "$np" --oversubscribe --bind-to none "$@"; }
fi
prof=$out/profile.txt
rm -f "$prof" "$out"/*.h5

echo "coll.sh: calibrating at $cal_np ranks (microbenchmarks only)" >&2
mpi "$cal_np" "$C" --calibrate --profile "$prof" >&2
common=(--profile "$prof" --coll allreduce --algo all,auto -n "$iters" -w 1)

# rows of one result file: model,point,set,predicted_s,measured_s
rows() { # file, set, point prefix
  # a not-modelled algorithm (mpi: its prediction is nan) has no row to compare
  "$R" --csv "$1" | awk -F, -v set="$2" -v pre="$3" 'NR > 1 && $21 != "nan" && $21 != "" {
    printf "coll:%s,%s/%sB,%s,%s,%s\n", $4, $3 "/" pre, $8, set, $21, $13 }'
}

echo "model,point,set,predicted_s,measured_s" >"$out/coll.csv"
echo "coll.sh: calibration set: the calibration sizes at $cal_np ranks" >&2
mpi "$cal_np" "$C" "${common[@]}" --sizes 65536,1048576,16777216 -o "$out/cal.h5" >/dev/null
rows "$out/cal.h5" calibration "np$cal_np" >>"$out/coll.csv"
# the declared configurations "P:L" (L 0: unsplit) and "vK:L" (K vcluster nodes x L ranks),
# and the seeded draw of them
grid=()
for ((P = 2; P <= cores; P++)); do
  grid+=("$P:0")
  for ((L = 1; L < P; L++)); do (( P % L == 0 )) && grid+=("$P:$L"); done
done
for ((K = 2; K <= vc_nodes; K++)); do
  for ((L = 1; K * L <= cores; L++)); do grid+=("v$K:$L"); done
done
if [ $vc_nodes -ge 2 ]; then # the link's terms, across two nodes, into a copy every node sees
  echo "coll.sh: calibrating the link: one rank on each of 2 vcluster nodes" >&2
  cp "$prof" "$VC/shared/coll-profile.txt"
  tools/vcluster mpirun -np 2 --map-by ppr:1:node --bind-to none "$C" --calibrate-net \
    --profile "$VC/shared/coll-profile.txt" >&2
  cp "$VC/shared/coll-profile.txt" "$prof"
fi
drawn=$(python3 -c 'import random, sys
g = sys.argv[3:]
print(" ".join(random.Random(int(sys.argv[1])).sample(g, min(int(sys.argv[2]), len(g)))))' "$seed" "$configs" "${grid[@]}")
{ echo "seed $seed"; echo "grid ${grid[*]}"; echo "configurations $drawn"; } >"$out/points.txt"
for cfg in $drawn; do
  if [[ $cfg == v* ]]; then # across vcluster nodes: the files go through the folder every node sees
    K=${cfg%%:*} K=${K#v} L=${cfg##*:}
    echo "coll.sh: held-out: $points sizes drawn with seed $seed on $K vcluster nodes x $L ranks" >&2
    tools/vcluster mpirun -np $((K * L)) --map-by "ppr:$L:node" --bind-to none "$C" \
      "${common[@]/#$prof/$VC/shared/coll-profile.txt}" --heldout "$seed" --heldout-points "$points" \
      -o "$VC/shared/held-v$K-$L.h5" >"$out/held-v$K-$L.log"
    cp "$VC/shared/held-v$K-$L.h5" "$out/held-v$K-$L.h5"
    rows "$out/held-v$K-$L.h5" heldout "np$((K * L))/nodes$K" >>"$out/coll.csv"
    continue
  fi
  np=${cfg%%:*} rpn=${cfg##*:}
  split=() label=np$np
  [ "$rpn" != 0 ] && split=(--ranks-per-node "$rpn") label=np$np/rpn$rpn
  echo "coll.sh: held-out: $points sizes drawn with seed $seed at $np ranks${split:+, $rpn per node}" >&2
  mpi "$np" "$C" "${common[@]}" --heldout "$seed" --heldout-points "$points" "${split[@]}" \
    -o "$out/held-$np-$rpn.h5" >"$out/held-$np-$rpn.log"
  rows "$out/held-$np-$rpn.h5" heldout "$label" >>"$out/coll.csv"
done
"$R" --csv "$out"/held-*.h5 | awk -F, 'NR > 1 { print $8 }' | sort -nu | tr '\n' ' ' |
  sed 's/^/sizes /; s/ $/\n/' >>"$out/points.txt"
# no held-out point is a calibration point: the same configuration and size
awk -F, 'NR > 1 { split($2, p, "/"); key = p[2] "/" p[3]; if (p[4] != "") key = key "/" p[4]
    if ($3 == "calibration") cal[key] = 1; else if (key in cal) { print "coll.sh: held-out point " $2 " is a calibration point" > "/dev/stderr"; bad = 1 } }
  END { exit bad }' "$out/coll.csv"

# summary: held-out median |predicted - measured| / measured per algorithm, and auto
# against the measured-fastest algorithm at each held-out point
awk -F, 'NR > 1 && $3 == "heldout" {
    if ($1 != "coll:auto" && $4 != "nan" && $4 != "" && $5 > 0) { n[$1]++; e[$1, n[$1]] = ($4 > $5 ? $4 - $5 : $5 - $4) / $5 }
  }
  END {
    for (a in n) {
      m = n[a]; for (i = 1; i <= m; i++) v[i] = e[a, i]
      for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
      med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
      printf "coll.sh: held-out median error %-18s %6.0f%% over %d points\n", a, 100 * med, m > "/dev/stderr"
    }
  }' "$out/coll.csv"
# auto: mb-coll's own comparison of each pick's case with the measured-fastest of the same run
cat "$out"/held-*.log | awk '/^# auto picked the measured-fastest/ {
    h += $7; c += $9; m = $NF + 0; if (m > worst) worst = m }
  END { if (c) printf "coll.sh: auto over %d held-out points: the measured-fastest at %d (hit rate %.2f), worst pick %.2fx the fastest\n",
    c, h, h / c, worst > "/dev/stderr" }'
cat "$out/coll.csv"
