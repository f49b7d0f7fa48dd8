#!/bin/bash
# mb-gnn never dies silently of its own --mem-budget:
# - a configuration that cannot fit (features four times the budget, width
#   1024, two files, more slots than the default; or too many --slots) is
#   refused before any work: exit 2, one line naming the flags and the
#   bytes needed against the budget, no result file; one that fits
#   (reproduce/hyperion's small scale, scaled down) is not;
# - a limit hit mid-run (the check before the work skipped) ends the run
#   with one line naming the budget and the peak, exit 1, the finished case
#   (inmem) kept, the cgroup removed;
# - SIGTERM mid-run removes the budget's cgroup;
# - a --generate interrupted by SIGTERM leaves no partial data files, and a
#   generate sweeps only the temporary files of processes that are gone.
# The parts that need a memory cgroup skip (exit 77) where none can be made.
. "$(dirname "$0")/../lib.sh"
G=$BIN/mb-gnn
W=$T/wide
expect 0 "generate 128 MiB of 4 KiB rows over two files" -- "$G" --generate --data "$W" --scale 15 --feat-dim 1024 \
  --classes 4 --train-frac 0.2 --files 2 -o "$T/gen.h5" || finish

# refused before any work, whatever can be enforced here
expect 2 "features 4x the budget, 5 slots" -- "$G" --data "$W" --mem-budget 32M --system hyperion --slots 5 -n 1 -w 0 \
  -o "$T/r1.h5" &&
  has "^mb-gnn: --mem-budget 32\.0 MiB \(33554432 B\): hyperion needs [0-9.]+ MiB: --slots 5 x [0-9]+ rows .*\([0-9]+ B\)" \
    "names the flags and the bytes needed against the budget"
[ "$(wc -l <"$T/out")" = 1 ] || fail "one line"
[ ! -e "$T/r1.h5" ] || fail "a refused run wrote a result"
small=(--data "$W" --batch 64 --fanout 5,5 --hidden 16 -n 1 -w 0 --eval-nodes 100 --profile-batches 2 --epoch-batches 2)
# (16 slots of the largest presampled batch at fan-out 10,10 and a quarter,
# about 2900 rows of 4 KiB, are 182 MiB: 245 MiB with the rest)
expect 2 "too many --slots" -- "$G" "${small[@]}" --fanout 10,10 --mem-budget 200M --system hyperion --slots 16 \
  -o "$T/r2.h5" &&
  has "^mb-gnn: --mem-budget 200\.0 MiB .*hyperion needs .*--slots 16 x " "names --slots and --mem-budget"
[ ! -e "$T/r2.h5" ] || fail "refused slots wrote a result"
# (nopipe has one slot whatever --slots says: the same flags fit for it)
expect 2 "one system of several" -- "$G" "${small[@]}" --fanout 10,10 --mem-budget 200M --system nopipe,hyperion --slots 16 \
  -o "$T/r3.h5" && has "hyperion needs" "names the system that does not fit"

# the rest needs a memory cgroup
"$G" "${small[@]}" --mem-budget 200M --budget-method cgroup --system hyperion -o "$T/probe.h5" >"$T/out" 2>&1
probe=$?
if grep -q "cannot enforce" "$T/out"; then
  [ "$failures" = 0 ] || finish
  echo "skip: no memory cgroup can be made here ($(grep -o 'cannot enforce.*' "$T/out" | head -n 1))"
  exit 77
fi
[ "$probe" = 0 ] || { fail "3 slots fit in 200M: exit $probe"; tail -n 5 "$T/out" >&2; }
[ "$(attr "$T/probe.h5" budget_method)" = '"cgroup-v1"' ] || [ "$(attr "$T/probe.h5" budget_method)" = '"cgroup-v2"' ] ||
  fail "the result records the method ($(attr "$T/probe.h5" budget_method))"
attr "$T/probe.h5" budget_inmem | grep -q "exempt" || fail "the result records inmem's exemption"

# reproduce/hyperion's small scale, scaled down: its 8 slots, 20% cache,
# batch 64, fan-out 25,10 and 4 KiB rows fit (the slots' worst case, 8 x
# 17664 rows = 552 MiB, does not: the check sizes slots from the largest
# presampled batch, about 3300 rows here); the budget stays above the
# features here, as the slots' rows do not shrink with the graph
expect 0 "reproduce's small configuration fits" -- "$G" --data "$W" --mem-budget 256M --budget-method cgroup \
  --system hyperion --slots 8 --cache-host $((128 * 1048576 / 5)) --cache-dev 0 --batch 64 --fanout 25,10 --hidden 16 \
  -n 1 -w 0 --epoch-batches 4 --profile-batches 4 --eval-nodes 100 -o "$T/repro.h5"
[ "$(sysmetric "$T/repro.h5" hyperion budget_limit_hits)" = 0 ] || fail "reproduce's configuration hit the limit"

own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
if [ -n "$own" ]; then
  home=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)${own%/}
else
  home=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
  home=${home%/}
fi

# a limit hit mid-run: one line, exit 1, inmem's case kept, the cgroup gone
MB_GNN_BUDGET_PRECHECK=0 expect 1 "the limit hit mid-run" -- timeout 300 "$G" --data "$W" --mem-budget 32M \
  --budget-method cgroup --system inmem,hyperion --slots 5 -n 1 -w 0 --epoch-batches 2 --profile-batches 2 \
  --eval-nodes 100 -o "$T/hit.h5" &&
  has "^mb-gnn: hyperion/.*--mem-budget 33554432 B \(32\.0 MiB\) exceeded: [0-9]+ B \([0-9.]+ MiB\) charged at the limit" \
    "names the budget and the peak"
h5ls "$T/hit.h5/summary" 2>&1 | grep -Eq 'Dataset \{1(\}|/)' || fail "the finished inmem case is kept"
ls -d "$home"/mb-gnn-* 2>/dev/null && fail "a budget cgroup was left behind"

# SIGTERM mid-run: the cgroup goes with the run
"$G" "${small[@]}" --mem-budget 200M --budget-method cgroup --system hyperion -n 100000 --epoch-batches 1 \
  -o "$T/term.h5" >"$T/run.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q "^# epoch 0 hyperion" "$T/run.out" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
[ -d "$home/mb-gnn-$pid" ] || fail "the run's cgroup $home/mb-gnn-$pid exists while it runs"
kill -TERM $pid
wait $pid
[ ! -d "$home/mb-gnn-$pid" ] || { fail "SIGTERM left the cgroup $home/mb-gnn-$pid"; rmdir "$home/mb-gnn-$pid"; }

# a --generate interrupted by SIGTERM leaves no partial files
P=$T/partial
"$G" --generate --data "$P" --scale 17 --feat-dim 1024 --files 2 --gen-threads 1 -o "$T/pg.h5" >"$T/gen.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
  compgen -G "$P/data.1.tmp-*" >/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
compgen -G "$P/*.tmp-*" >/dev/null || fail "the generate's temporary files exist while it runs"
kill -TERM $pid
wait $pid
left=$(ls -A "$P" 2>/dev/null)
[ -z "$left" ] || fail "an interrupted generate left: $left"
# a generate sweeps only the temporary files of processes that are gone
true & dead=$!; wait $dead
mkdir -p "$P"; : >"$P/data.0.tmp-$dead"; : >"$P/graph.meta.tmp-$$"
expect 0 "generate beside stale files" -- "$G" --generate --data "$P" --scale 8 --feat-dim 128 -o "$T/pg2.h5"
[ ! -e "$P/data.0.tmp-$dead" ] || fail "a dead process's temporary file stayed"
[ -e "$P/graph.meta.tmp-$$" ] || fail "a live process's temporary file was removed"
finish
