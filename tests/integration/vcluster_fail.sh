# A node failing mid-run on tools/vcluster: mb-coll at 4 ranks on 2 nodes
# with --timeout 10; once its first case has passed, (1) rank 2 on node2 is
# killed (SIGKILL), (2) node2's link is taken down (ip link set down on
# its veth). Each run must end non-zero within 60 s with one line naming
# what happened, and the result file holds only the finished cases,
# complete=0. A killed rank is seen by mpirun, which aborts the job at
# once (its line names rank 2 on node2; rank 0's, the signal and the
# cases kept, when mpirun forwards it before it ends); a dead link is seen only by the watchdog, whose line names the
# case, the iteration and a silent rank on node2, and mpirun's abort ends
# when its connection to node2's daemon fails (tcp_retries2=6 on the nodes). Skips (77) when not root or when
# namespaces, a bridge or sshd are unavailable.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vcluster.inc"
vc_prereqs
vc_up 2
S=$VCSTATE/shared
sizes=(8 4194304 8388608)

# rows RESULT: the number of cases in a result file
rows() { "$BIN/mb-report" --csv "$1" 2>/dev/null | tail -n +2 | wc -l; }

# rank_pid R: the PID of rank R of this test's mb-coll (the nodes share
# the PID namespace, so the host sees node2's processes)
rank_pid() {
  local p
  for p in $(pgrep -x mb-coll); do
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
      tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "MB_TEST_TAG=$T" && { echo "$p"; return 0; }
  done
  return 1
}

# kept_before FILE CASE: the file holds exactly the cases before CASE
# (sizes in order), complete=0, and mb-report calls it incomplete
kept_before() {
  local f=$1 c=$2 k=0 s
  for s in "${sizes[@]}"; do
    [ "allreduce/float/sum/oop/mpi/$s" = "$c" ] && break
    k=$((k + 1))
  done
  [ "$k" -ge 1 ] || fail "$what: the case that stopped, '$c', is not after the first (which passed)"
  [ "$(rows "$f")" = "$k" ] || fail "$what: the file holds $(rows "$f") cases, expected the $k finished before $c"
  [ "$(h5dump -a /complete "$f" 2>/dev/null | awk '/\(0\):/ {print $2}')" = 0 ] || fail "$what: the file is not complete=0"
  "$BIN/mb-report" "$f" | grep -q INCOMPLETE || fail "$what: mb-report does not call the file incomplete"
}

export MB_TEST_TAG=$T
# fail_node MODE: run, wait for the first case, break node2 (MODE kill or
# link), wait for the end; the output in $T/$MODE.out, the exit in rc, the
# seconds from the break to the end in took
fail_node() {
  local mode=$1 f=$S/$1.h5 job pid i t0
  timeout 300 "$VC" mpirun -np 4 --map-by ppr:2:node --bind-to none -x MB_TEST_TAG "$BIN/mb-coll" \
    --coll allreduce --sizes "$(IFS=,; echo "${sizes[*]}")" -n 100 -w 1 --agg-iters 1 --timeout 10 -o "$f" \
    >"$T/$mode.out" 2>&1 &
  job=$!
  for i in $(seq 600); do grep -qs ' pass$' "$T/$mode.out" && break; sleep 0.2; done
  pid=$(rank_pid 2)
  if ! grep -q ' pass$' "$T/$mode.out" || [ -z "$pid" ]; then
    fail "$mode: the first case did not pass in 120 s, or rank 2 not found"
    sed 's/^/  > /' "$T/$mode.out" | tail -n 8 >&2
    kill "$job" 2>/dev/null
    wait "$job"
    rc=0
    return 1
  fi
  sleep 1
  t0=$SECONDS
  case $mode in
  kill) kill -KILL "$pid" ;;
  link) ip link set mbvc0-n2 down ;;
  esac
  wait "$job"
  rc=$?
  took=$((SECONDS - t0))
  [ "$mode" = link ] && ip link set mbvc0-n2 up
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || { fail "$mode: exit $rc, expected a failure within 60 s"; sed 's/^/  > /' "$T/$mode.out" | tail -n 12 >&2; }
  [ "$took" -le 60 ] || fail "$mode: the run took $took s to end"
  [ -f "$f" ] || { fail "$mode: no result file $f"; return 1; }
  echo "$mode: exit $rc, $took s after the break: $(grep -E 'cases kept in' "$T/$mode.out" | head -n1)"
  return 0
}

# (1) rank 2 killed: mpirun aborts the job, naming the rank and its node;
# rank 0 keeps the finished cases (SIGTERM from mpirun)
what=kill
if fail_node kill; then
  grep -q 'process rank 2 with PID [0-9]* on node node2 exited on signal 9' "$T/kill.out" ||
    fail "kill: no line naming rank 2 on node2 and its signal"
  # rank 0's line (when mpirun still forwarded it before ending: it may not)
  # must say what the file holds; the file must hold a prefix of the cases
  k=$(rows "$S/kill.h5")
  line=$(grep 'cases kept in' "$T/kill.out")
  if [ -n "$line" ]; then
    grep -q "^mb-coll: interrupted by signal 15: $k of 3 cases kept in $S/kill.h5 (complete=0)\$" <<<"$line" ||
      fail "kill: rank 0's line does not say the $k cases in the file were kept: $line"
  fi
  if [ "$k" -lt 3 ]; then
    kept_before "$S/kill.h5" "allreduce/float/sum/oop/mpi/${sizes[$k]}"
  else
    fail "kill: the file holds all 3 cases: the kill came too late"
  fi
  "$BIN/mb-report" --csv "$S/kill.h5" | awk -F, 'NR > 1 {print $2}' >"$T/kept"
  [ "$(cat "$T/kept")" = "$(for ((i = 0; i < k; i++)); do echo "allreduce/float/sum/oop/mpi/${sizes[$i]}"; done)" ] ||
    fail "kill: the file's cases are not the first $k: $(tr '\n' ' ' <"$T/kept")"
fi

# (2) node2's link down: only the watchdog can tell; its line names the
# case, the iteration and a rank of node2 not heard from
what=link
if fail_node link; then
  line=$(grep -- '--timeout 10 s: no progress' "$T/link.out")
  [ "$(grep -c -- '--timeout 10 s:' "$T/link.out")" = 1 ] || fail "link: not one watchdog line"
  re='no progress for [0-9]+ s in case (allreduce/float/sum/oop/mpi/[0-9]+), iteration [0-9]+; rank [23] \(node2\) is silent \(not heard from for [0-9]+ s: its process or its link is gone\): [0-9]+ of 3 cases kept in .*link\.h5 \(complete=0\)$'
  if [[ $line =~ $re ]]; then
    kept_before "$S/link.h5" "${BASH_REMATCH[1]}"
  else
    fail "link: the watchdog line does not name the case, iteration and a silent rank of node2: $line"
    sed 's/^/  > /' "$T/link.out" | tail -n 12 >&2
  fi
fi

# node2's ranks, cut off, end themselves (twice the timeout); none outlives
# the cluster's down either way
for _ in $(seq 150); do rank_pid 2 >/dev/null || rank_pid 3 >/dev/null || break; sleep 0.2; done
p=$(rank_pid 3) && fail "rank 3 outlived the run by 30 s (pid $p)"
vc_down_clean
finish
