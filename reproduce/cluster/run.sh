#!/bin/bash
# Allreduce across emulated hosts: tools/vcluster with every node's link
# shaped to --gbps by tc tbf and --lat-us one way by tc netem, mb-coll's
# hier, ring, rabenseifner, ucx and the MPI library's own at each node
# count x --ppn ranks, each with the cost model's prediction, then
# compare.md (each algorithm's median beside the link's bandwidth floor
# 2(N-1)/N * S / rate and beside the model, and where hier wins) and the
# figure. The model is calibrated first, from microbenchmarks only: the
# node's terms (mb-coll --calibrate, --ppn ranks on node1) and the link's
# (mb-coll --calibrate-net, one rank on each of 2 nodes, over the shaped
# link), into one profile used at every node count; never from timing an
# allreduce. Needs root (namespaces, a bridge) and no vcluster already up.
#   reproduce/cluster/run.sh [--nodes "2 4"] [--ppn 2] [--gbps 10] [--lat-us 20] [--iters 5]
#                            [--sizes 1K,16K,256K,4M,64M] [--out DIR]
#     --lat-us L  added one-way latency between two nodes (0: none; needs netem in the kernel)
#     --out DIR   results, profile, compare.md and the figure (default $BUILD/reproduce/cluster, BUILD=build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
nodes="2 4" ppn=2 gbps=10 lat=20 iters=5 sizes=1K,16K,256K,4M,64M out=""
algos=hier,ring,rabenseifner,ucx,mpi
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case $1 in
  --nodes) need "$@"; nodes=$2; shift 2 ;;
  --ppn) need "$@"; ppn=$2; shift 2 ;;
  --gbps) need "$@"; gbps=$2; shift 2 ;;
  --lat-us) need "$@"; lat=$2; shift 2 ;;
  --iters) need "$@"; iters=$2; shift 2 ;;
  --sizes) need "$@"; sizes=$2; shift 2 ;;
  --out) need "$@"; out=$2; shift 2 ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in $nodes; do
  [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -ge 2 ] || { echo "run.sh: --nodes: '$n' is not a node count of 2 or more" >&2; exit 2; }
done
[[ $ppn =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --ppn: '$ppn' is not a positive integer" >&2; exit 2; }
[[ $iters =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --iters: '$iters' is not a positive integer" >&2; exit 2; }
[[ $gbps =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: --gbps: '$gbps' is not a rate in Gbit/s" >&2; exit 2; }
[[ $lat =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: --lat-us: '$lat' is not microseconds" >&2; exit 2; }
[[ $sizes =~ ^[0-9]+[KMG]?(,[0-9]+[KMG]?)*$ ]] || { echo "run.sh: --sizes: '$sizes' is not a comma list of sizes" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run.sh: tools/vcluster needs root" >&2; exit 2; }
[ -e /run/movebench-vcluster ] && { echo "run.sh: a vcluster is up already; not touching it" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/cluster}
py=$(reproduce/python.sh)
mkdir -p "$out/results"
trap 'tools/vcluster down >/dev/null 2>&1' EXIT
stamp=$(date -u +%Y%m%dT%H%M%SZ)
shape=(--link-gbps "$gbps")
awk -v l="$lat" 'BEGIN { exit !(l > 0) }' && shape+=(--link-lat-us "$lat")
S=/run/movebench-vcluster/shared
prof=$out/results/profile-$stamp.txt
up() { # node count
  tools/vcluster up "$1" "${shape[@]}" >"$out/vcluster-up-$1.log" 2>&1 ||
    { cat "$out/vcluster-up-$1.log" >&2; exit 1; }
}

# The model's calibration: the node (--ppn ranks on node1), then the link
# (one rank on each of 2 nodes); microbenchmarks only.
up 2
echo "run.sh: calibrating the model: the node ($ppn ranks on node1), then the link; load: $(uptime)" >&2
tools/vcluster mpirun -np "$ppn" --host "node1:$ppn" --bind-to none "${BUILD:-build}/bin/mb-coll" \
  --calibrate --profile "$S/profile.txt" | tee "$out/calibrate-$stamp.log"
tools/vcluster mpirun -np 2 --map-by ppr:1:node --bind-to none "${BUILD:-build}/bin/mb-coll" \
  --calibrate-net --profile "$S/profile.txt" | tee -a "$out/calibrate-$stamp.log"
cp "$S/profile.txt" "$prof"
tools/vcluster down >/dev/null

for n in $nodes; do
  up "$n"
  cp "$prof" "$S/profile.txt"
  echo "run.sh: $n nodes x $ppn ranks, links $(cat /run/movebench-vcluster/emulation); load: $(uptime)" >&2
  uptime >"$out/results/load-${n}nodes-$stamp.txt"   # beside the result: compare.md quotes it
  tools/vcluster mpirun -np $((n * ppn)) --map-by "ppr:$ppn:node" --bind-to none "${BUILD:-build}/bin/mb-coll" \
    --algo "$algos" --coll allreduce --sizes "$sizes" -n "$iters" -w 1 --agg-iters 1 -o "$S/cluster-$n.h5" \
    --profile "$S/profile.txt" \
    | tee "$out/mb-coll-$n-$stamp.log"
  cp "$S/cluster-$n.h5" "$out/results/cluster-${n}nodes-$stamp.h5"
  uptime >>"$out/results/load-${n}nodes-$stamp.txt"
  tools/vcluster down >/dev/null
done
files=()
for n in $nodes; do files+=("$out/results/cluster-${n}nodes-$stamp.h5"); done
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$py" -m reproduce.cluster.compare --gbps "$gbps" -o "$out/compare.md" "${files[@]}"
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$py" -m reproduce.cluster.plot --gbps "$gbps" -o "$out/cluster" "${files[@]}"
