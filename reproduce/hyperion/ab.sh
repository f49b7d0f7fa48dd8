#!/bin/bash
# Issue 15's A/B of the Hyperion study across the architecture move: the
# `systems` run of run.sh (every system side by side in one mb-gnn job,
# cache 20% of the features) by an OLD mb-gnn (built from a commit before
# the move, in a temporary git worktree outside this tree) and by this
# tree's NEW one, interleaved old, new, old, new, ... on one machine, and a
# table of the study's ratios (nopipe/hyperion, hyperion/floor, ...) of
# each, so that they can be read side by side.
#   reproduce/hyperion/ab.sh [--scale tiny|small] [--reps N] [--old COMMIT] [--out DIR] [--data DIR] [--mmap]
#     --scale small   run.sh's small configuration (default): scale 20, dim 1024, 4 files,
#                     budget 1 GiB, 5 epochs, 40 batches an epoch. About 10 minutes on a quiet
#                     2-vCPU VM with --reps 2 (old build ~3 min, two 4 GiB datasets ~1 min,
#                     four systems runs of ~70 s); --mmap adds ~30 s a run
#     --scale tiny    scale 11, dim 128, 2 epochs (the configuration of the tests; seconds a run)
#     --reps N        old/new pairs (default 2: old, new, old, new)
#     --old COMMIT    the old tree (default 6a0e37dc17c1, the last commit before the move)
#     --out DIR       results (old/, new/), logs, ab.md (default $BUILD/reproduce/hyperion-ab)
#     --data DIR      where datasets are generated and kept (default $BUILD/gnn-data, run.sh's)
#     --mmap          also run the mmap and mmap-random pairs beside hyperion (small only)
# The dataset: each binary generates its own with its own --generate (an
# old dataset is named by the old tree's format version); when the two are
# byte for byte the same (so far they are: format 2 in both, the same
# generator), the old copy is removed and both binaries read one dataset.
# ab.md says which. The new binary is $BUILD/bin/mb-gnn, made first; the old
# tree is built with the same make defaults (CFLAGS, CUDA) and removed on
# exit. Exit 0 when every run validated and the table was written.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small reps=2 old=6a0e37dc17c1 out="" data="" mmap=0
need() { [ $# -ge 2 ] || { echo "ab.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case $1 in
  --scale) need "$@"; scale=$2; shift 2 ;;
  --reps) need "$@"; reps=$2; shift 2 ;;
  --old) need "$@"; old=$2; shift 2 ;;
  --out) need "$@"; out=$2; shift 2 ;;
  --data) need "$@"; data=$2; shift 2 ;;
  --mmap) mmap=1; shift ;;
  -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "ab.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
MiB=$((1 << 20))
case $scale in
tiny) gscale=11 dim=128 files=2 budget=0 batch=64 fanout=5,5 hidden=32 epochs=2 extra=(--eval-nodes 200) ;;
small) gscale=20 dim=1024 files=4 budget=$((1024 * MiB)) batch=64 fanout=25,10 hidden=16 epochs=5
       extra=(--epoch-batches 40 --slots 8 --profile-batches 40) ;;
*) echo "ab.sh: --scale must be tiny or small, not '$scale'" >&2; exit 2 ;;
esac
[[ $reps =~ ^[1-9][0-9]?$ ]] || { echo "ab.sh: --reps must be 1 to 99, not '$reps'" >&2; exit 2; }
[ $mmap = 0 ] || [ "$scale" = small ] || { echo "ab.sh: --mmap runs at --scale small only (tiny's systems run has mmap)" >&2; exit 2; }
oldc=$(git rev-parse --verify -q "$old^{commit}") || { echo "ab.sh: --old: '$old' is not a commit of this repository" >&2; exit 2; }
newc=$(git rev-parse --short=12 HEAD)   # the new binary is built from this tree (git_commit in its results)
build=${BUILD:-build}
out=${out:-$root/$build/reproduce/hyperion-ab}
data=${data:-$root/$build/gnn-data}
for w in old new; do
  [ ! -e "$out/$w" ] || { echo "ab.sh: --out: $out/$w exists; results are never overwritten (choose another --out)" >&2; exit 2; }
done
py=$(reproduce/python.sh)
mkdir -p "$out" "$data"
out=$(cd "$out" && pwd) data=$(cd "$data" && pwd)
t0=$SECONDS

# The old tree: a detached worktree in a temporary folder outside this one,
# removed (and unregistered) on exit, whatever happens.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mb-ab-hyperion.XXXXXX")
cleanup() {
  git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  git -C "$root" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT
echo "ab.sh: old tree ${oldc:0:12} in $tmp/old; building mb-gnn (old and new)" >&2
git -C "$root" worktree add -q --detach "$tmp/old" "$oldc"
make -C "$tmp/old" -s -j2 BUILD=build build/bin/mb-gnn >"$out/build-old.log" 2>&1 ||
  { echo "ab.sh: the old tree did not build; see $out/build-old.log" >&2; tail -5 "$out/build-old.log" >&2; exit 1; }
make -C "$root" -s -j2 BUILD="$build" "$build/bin/mb-gnn" >"$out/build-new.log" 2>&1 ||
  { echo "ab.sh: this tree did not build; see $out/build-new.log" >&2; tail -5 "$out/build-new.log" >&2; exit 1; }
declare -A tree=([old]=$tmp/old [new]=$root) bin=([old]=$tmp/old/build/bin/mb-gnn [new]=$root/$build/bin/mb-gnn)

# datasets: named as run.sh names them, by each tree's format version
fmt() { sed -n 's/^#define GNN_FORMAT_VERSION \([0-9]*\).*/\1/p' "$1/gnn/gnn.h"; }
declare -A ds
ds[new]=$data/rmat$gscale-d$dim-f$files-v$(fmt "$root")
ds[old]=$data/old-${oldc:0:12}-rmat$gscale-d$dim-f$files-v$(fmt "$tmp/old")
for w in new old; do
  [ -f "${ds[$w]}/graph.meta" ] && continue
  echo "ab.sh: generating ${ds[$w]} with the $w mb-gnn" >&2
  "${bin[$w]}" --generate --data "${ds[$w]}" --scale "$gscale" --feat-dim "$dim" --files "$files" \
    --edge-factor 16 -q -o "$tmp/generate-$w.h5" >"$out/generate-$w.log" 2>&1 ||
    { echo "ab.sh: the $w mb-gnn could not generate its dataset; see $out/generate-$w.log" >&2; exit 1; }
done
same=1
for f in "${ds[new]}"/*; do
  cmp -s "$f" "${ds[old]}/$(basename "$f")" || { same=0; break; }
done
[ "$(ls "${ds[old]}" | wc -l)" = "$(ls "${ds[new]}" | wc -l)" ] || same=0
if [ $same = 1 ]; then
  echo "ab.sh: the two datasets are byte for byte the same; both binaries read ${ds[new]}" >&2
  rm -rf "${ds[old]}"
  ds[old]=${ds[new]}
  dataset_note="one dataset for both: the old and new generators wrote the same bytes (${ds[new]})"
else
  echo "ab.sh: the datasets differ; each binary reads its own" >&2
  dataset_note="two datasets: the old and new generators' outputs differ (old ${ds[old]}, new ${ds[new]})"
fi
# read each dataset once through O_DIRECT (run.sh's warm: one storage rate from the first run on)
for w in new old; do
  [ $w = old ] && [ "${ds[old]}" = "${ds[new]}" ] && continue
  for f in "${ds[$w]}"/data.*; do dd if="$f" of=/dev/null bs=4M iflag=direct status=none 2>/dev/null || true; done
done

# run WHICH NAME SYSTEMS EPOCHS [MB-GNN FLAGS]: one job of WHICH's own
# job_scripts/mb-gnn.sbatch (mpirun, one rank, unbound), as run.sh runs it
export MB_NP=1 MB_LAUNCHER=mpirun
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
unset MB_FAULT_INJECT
feat_bytes=$(((1 << gscale) * dim * 4))
cache=$((feat_bytes * 20 / 100)) bud=$budget
if [ "$bud" != 0 ] && [ $((cache + 192 * MiB)) -gt "$bud" ]; then bud=$((cache + 512 * MiB)); fi
run() {
  local w=$1 name=$2 systems=$3 ep=$4 log
  shift 4
  log=$out/$w-$name.log
  echo "ab.sh: $w $name" >&2
  MB_HOME=${tree[$w]} MB_BIN=$(dirname "${bin[$w]}") MB_RESULTS=$out/$w/$name \
  MB_GNN_DATA=${ds[$w]} MB_GNN_SCALE=$gscale MB_GNN_DIM=$dim MB_GNN_FILES=$files \
  MB_GNN_SYSTEMS=$systems MB_GNN_BATCH=$batch MB_GNN_FANOUT=$fanout MB_GNN_BUDGET=$bud \
  MB_GNN_CACHE_HOST=$cache MB_GNN_CACHE_DEV=0 MB_ITERS=$ep MB_WARMUP=0 \
    bash "${tree[$w]}/job_scripts/mb-gnn.sbatch" --hidden "$hidden" "${extra[@]}" "$@" >"$log" 2>&1 ||
    { echo "ab.sh: the $w mb-gnn ($name) failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
}
if [ "$scale" = tiny ]; then sys=inmem,hyperion,topo-first,feat-first,nopipe,nocache,mmap
else sys=inmem,hyperion,topo-first,feat-first,nopipe,nocache; fi
for r in $(seq "$reps"); do
  for w in old new; do
    run "$w" "systems-$r" "$sys" "$epochs"
    if [ $mmap = 1 ]; then
      run "$w" "mmap-pair-$r" hyperion,mmap 1 --epoch-batches 1 --eval-nodes 0
      run "$w" "mmap-random-pair-$r" hyperion,mmap-random 1 --epoch-batches 40 --eval-nodes 0
    fi
  done
done
echo "ab.sh: measured in $((SECONDS - t0)) s (builds and datasets included)" >&2
"$py" -m reproduce.hyperion.ab -o "$out/ab.md" --note "$dataset_note" \
  --label "old ${oldc:0:12}" "$out/old" --label "new $newc" "$out/new"
echo "ab.sh: $out/ab.md" >&2
