#!/bin/bash
# Allreduce across emulated hosts: tools/vcluster with every node's link
# shaped to --gbps by tc tbf (no netem on this kernel: no added latency),
# mb-coll's hier, ring, rabenseifner, ucx and the MPI library's own at each
# node count x --ppn ranks, then compare.md (each algorithm's median beside
# the link's bandwidth floor 2(N-1)/N * S / rate, and where hier wins) and
# the figure. Needs root (namespaces, a bridge) and no vcluster already up.
#   reproduce/cluster/run.sh [--nodes "2 4"] [--ppn 2] [--gbps 10] [--iters 5]
#                            [--sizes 1K,16K,256K,4M,64M] [--out DIR]
#     --out DIR   results, compare.md and the figure (default $BUILD/reproduce/cluster, BUILD=build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
nodes="2 4" ppn=2 gbps=10 iters=5 sizes=1K,16K,256K,4M,64M out=""
algos=hier,ring,rabenseifner,ucx,mpi
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case $1 in
  --nodes) need "$@"; nodes=$2; shift 2 ;;
  --ppn) need "$@"; ppn=$2; shift 2 ;;
  --gbps) need "$@"; gbps=$2; shift 2 ;;
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
[[ $sizes =~ ^[0-9]+[KMG]?(,[0-9]+[KMG]?)*$ ]] || { echo "run.sh: --sizes: '$sizes' is not a comma list of sizes" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run.sh: tools/vcluster needs root" >&2; exit 2; }
[ -e /run/movebench-vcluster ] && { echo "run.sh: a vcluster is up already; not touching it" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/cluster}
py=$(reproduce/python.sh)
mkdir -p "$out/results"
trap 'tools/vcluster down >/dev/null 2>&1' EXIT
stamp=$(date -u +%Y%m%dT%H%M%SZ)
for n in $nodes; do
  tools/vcluster up "$n" --link-gbps "$gbps" >"$out/vcluster-up-$n.log" 2>&1 ||
    { cat "$out/vcluster-up-$n.log" >&2; exit 1; }
  S=/run/movebench-vcluster/shared
  echo "run.sh: $n nodes x $ppn ranks, links $(cat /run/movebench-vcluster/emulation); load: $(uptime)" >&2
  uptime >"$out/results/load-${n}nodes-$stamp.txt"   # beside the result: compare.md quotes it
  tools/vcluster mpirun -np $((n * ppn)) --map-by "ppr:$ppn:node" --bind-to none "${BUILD:-build}/bin/mb-coll" \
    --algo "$algos" --coll allreduce --sizes "$sizes" -n "$iters" -w 1 --agg-iters 1 -o "$S/cluster-$n.h5" \
    | tee "$out/mb-coll-$n-$stamp.log"
  cp "$S/cluster-$n.h5" "$out/results/cluster-${n}nodes-$stamp.h5"
  uptime >>"$out/results/load-${n}nodes-$stamp.txt"
  tools/vcluster down >/dev/null
done
files=()
for n in $nodes; do files+=("$out/results/cluster-${n}nodes-$stamp.h5"); done
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$py" -m reproduce.cluster.compare --gbps "$gbps" -o "$out/compare.md" "${files[@]}"
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$py" -m reproduce.cluster.plot --gbps "$gbps" -o "$out/cluster" "${files[@]}"
