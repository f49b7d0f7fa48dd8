#!/bin/bash
# mb-ratel --trace killed mid-run keeps its finished steps (issue 18): the
# spans of every step finished before the signal reach the result file
# (flushed before each next step, mb_run_flush), with steps_done saying
# how many; SIGTERM leaves the file under its final name with complete=0
# and its one case not written (0 of 1 cases: the harness's mark of a
# cut-short case); SIGKILL leaves the temporary, which after h5clear holds
# the same. mb-report --chrome-trace reads both.
. "$(dirname "$0")/../lib.sh"
R=$BIN/mb-ratel
D=$T/data
mkdir -p "$D"
# slow enough to be signalled mid-way (a capped link), long enough never to end first
run=(--model layers=3,hidden=64,heads=4,seq=32,vocab=64 --batch 2 --dir "$D" -n 100000 -w 1 --link-gbps 0.05
  --file-gbps 0.05 --trace --no-check)

# killed SIG NAME: runs mb-ratel, waits until the temporary has grown past
# its first flushes (steps finished), sends SIG; leaves the file to check in $file.
killed() {
  local sig=$1 g=$T/$2.h5
  timeout 300 "$R" "${run[@]}" -o "$g" >"$T/$2.out" 2>&1 &
  local pid=$! waited=0 tmp="" size0=""
  # not a fixed time: the temporary's size after 3 growths (flushes), bounded
  local grown=0 last=""
  while [ "$grown" -lt 3 ] && [ "$waited" -lt 2400 ]; do
    kill -0 "$pid" 2>/dev/null || break
    tmp=$(ls "$T" | grep "^$2\.h5\.tmp\." | head -1)
    if [ -n "$tmp" ]; then
      local s
      s=$(stat -c %s "$T/$tmp" 2>/dev/null || echo 0)
      [ -z "$size0" ] && size0=$s
      [ -n "$last" ] && [ "$s" != "$last" ] && grown=$((grown + 1))
      last=$s
    fi
    waited=$((waited + 1))
    sleep 0.05
  done
  # signals go to mb-ratel itself ($pid is timeout's): timeout forwards TERM
  # but cannot forward KILL, and a KILLed timeout left mb-ratel running its
  # 100000 steps after the test had passed
  local child
  child=$(pgrep -P "$pid" | head -n 1)
  [ "$grown" -ge 3 ] || { fail "SIG$sig: the result file never grew mid-run"; kill -KILL ${child:+"$child"} "$pid" 2>/dev/null; wait "$pid"; tail -5 "$T/$2.out" >&2; file=""; return; }
  [ -n "$child" ] || fail "SIG$sig: no mb-ratel under timeout"
  kill -"$sig" "${child:-$pid}"
  wait "$pid"
  local rc=$?
  [ "$rc" = 0 ] && fail "SIG$sig: exit 0 after a signal"
  [ "$rc" = 124 ] && fail "SIG$sig: still running 300 s later"
  file=$g
  if [ "$sig" = KILL ]; then
    [ -e "$g" ] && fail "SIGKILL: a final file appeared (no handler runs)"
    file=$T/$tmp
    [ -e "$file" ] || { fail "SIGKILL: the temporary $tmp is gone"; file=""; return; }
    h5clear -s "$file" 2>/dev/null # the writer never closed it
  fi
  [ -z "$(ls -A "$D")" ] || [ "$sig" = KILL ] || fail "SIG$sig: state files left in $D"
}

# spans_kept SIG: the file's steps_done, its step spans, and each step's layers
spans_kept() {
  local sig=$1 c=ratel/ratel/optimized
  [ -n "$file" ] || return
  h5dump -a /complete "$file" 2>/dev/null | grep -q '(0): 0$' || fail "SIG$sig: complete is not 0"
  local done
  done=$(metric "$file" "$c" steps_done)
  [ -n "$done" ] && [ "$done" -ge 1 ] || { fail "SIG$sig: steps_done '$done', expected >= 1"; return; }
  expect 0 "SIG$sig: mb-report --chrome-trace reads the cut-short file" -- \
    "$BIN/mb-report" --chrome-trace "$T/$sig.json" "$file" || return
  local k
  for k in $(seq 1 "$done"); do
    grep -q "\"step $k\"" "$T/$sig.json" || fail "SIG$sig: no span of finished step $k of $done"
  done
  for k in fwd bwd h2d d2h update; do
    grep -q "\"$k\"" "$T/$sig.json" || fail "SIG$sig: the trace lacks the $k lane"
  done
  expect 0 "SIG$sig: mb-report reads the cut-short file" -- "$BIN/mb-report" "$file" &&
    has "^INCOMPLETE +the run was cut short: 0 of 1 cases" "SIG$sig: mb-report says the case was cut short"
  h5dump -H -d /summary "$file" 2>/dev/null | grep -q 'DATASPACE *SIMPLE { ( 0 )' ||
    fail "SIG$sig: the unfinished case has a /summary row"
  echo "SIG$sig: $done finished steps' spans kept"
}

killed TERM term
spans_kept TERM
killed KILL kill
spans_kept KILL
# nothing of ours outlives the test (the state folder is in every run's command line)
sleep 0.2
pgrep -f -- "--dir $D" >/dev/null && { fail "an mb-ratel is still running after its signal"; pkill -KILL -f -- "--dir $D"; }
finish
