# The --timeout watchdog: a rank that stops (MB_FAULT_INJECT=hang, at a
# rank, case and iteration drawn from --seed) or freezes (SIGSTOP) ends the
# run with exit 1 and one line naming the case, the iteration and the
# silent rank; the finished cases, and only those, stay in the result file
# (complete=0); a healthy run with a timeout is untouched; bad values of
# --timeout and MB_TIMEOUT are refused before any work.
. "$(dirname "$0")/../lib.sh"
C=$BIN/mb-coll
args=(--coll allreduce --sizes 8,64,1024 -n 40 -w 2)

# rows RESULT: the number of cases in a result file
rows() { "$BIN/mb-report" --csv "$1" 2>/dev/null | tail -n +2 | wc -l; }

# a healthy run: the watchdog never fires, the file is complete
expect 0 "--timeout 5 on a healthy run" -- mpi 3 "$C" "${args[@]}" --timeout 5 -o "$T/ok.h5" &&
  [ "$(rows "$T/ok.h5")" = 3 ] || fail "a healthy run with --timeout lost cases"
[ "$(h5dump -a /complete "$T/ok.h5" 2>/dev/null | awk '/\(0\):/ {print $2}')" = 1 ] || fail "healthy run not complete=1"
[ "$(attr "$T/ok.h5" timeout)" = 5 ] || fail "/config timeout is not 5: $(attr "$T/ok.h5" timeout)"
MB_TIMEOUT=7 expect 0 "MB_TIMEOUT=7" -- mpi 2 "$C" --coll allreduce --sizes 8 -n 3 -w 1 -o "$T/env.h5" &&
  [ "$(attr "$T/env.h5" timeout)" = 7 ] || fail "MB_TIMEOUT does not set the timeout: $(attr "$T/env.h5" timeout)"
MB_TIMEOUT=7 expect 0 "--timeout over MB_TIMEOUT" -- mpi 2 "$C" --coll allreduce --sizes 8 -n 3 -w 1 --timeout 9 -o "$T/env2.h5" &&
  [ "$(attr "$T/env2.h5" timeout)" = 9 ] || fail "--timeout does not override MB_TIMEOUT"

# a stopped rank, three draws: the line names what the injection chose
for seed in 1 2 4; do
  f=$T/hang$seed.h5
  t0=$SECONDS
  MB_FAULT_INJECT=hang expect 1 "hang, seed $seed" -- timeout 120 mpirun -np 3 "$C" "${args[@]}" --seed "$seed" --timeout 2 -o "$f" ||
    continue
  [ $((SECONDS - t0)) -le 60 ] || fail "hang, seed $seed: the run took $((SECONDS - t0)) s to end"
  plan=$(grep -o 'hang: rank [0-9]* stops before case [^ ]*, iteration [0-9]*' "$T/out")
  [ -n "$plan" ] || { fail "seed $seed: no injection line"; continue; }
  r=$(sed 's/hang: rank \([0-9]*\) .*/\1/' <<<"$plan")
  c=$(sed 's/.*before case \([^,]*\),.*/\1/' <<<"$plan")
  i=$(sed 's/.*iteration //' <<<"$plan")
  line=$(grep -- '--timeout 2 s: no progress' "$T/out")
  [ "$(grep -c -- '--timeout 2 s:' "$T/out")" = 1 ] || fail "seed $seed: not one watchdog line"
  grep -q "in case $c, iteration $i; rank $r (.*) is silent: it is still at case $c, iteration $i, not yet in it" <<<"$line" ||
    fail "seed $seed: the line does not name rank $r, case $c, iteration $i: $line"
  # kept: the cases before the stopped one, complete=0
  k=0
  for cs in allreduce/float/sum/oop/mpi/8 allreduce/float/sum/oop/mpi/64 allreduce/float/sum/oop/mpi/1024; do
    [ "$cs" = "$c" ] && break
    k=$((k + 1))
  done
  grep -q ": $k of 3 cases kept in $f (complete=0)" <<<"$line" || fail "seed $seed: line does not say $k of 3 kept: $line"
  [ "$(rows "$f")" = "$k" ] || fail "seed $seed: the file holds $(rows "$f") cases, expected the $k finished"
  "$BIN/mb-report" "$f" | grep -q "INCOMPLETE" || fail "seed $seed: mb-report does not call the file incomplete"
done

# rank_pid R: the PID of rank R of this test's mb-coll
rank_pid() {
  local p
  for p in $(pgrep -x mb-coll); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "MB_TEST_TAG=$T" && { echo "$p"; return 0; }
  done
  return 1
}

# a frozen rank (SIGSTOP): not heard from, named as such
export MB_TEST_TAG=$T
timeout 120 mpirun -np 3 "$C" --coll allreduce --sizes 8 -n 5000000 -w 1 --agg-iters 1 --timeout 2 -o "$T/stop.h5" \
  >"$T/stop.out" 2>&1 &
job=$!
pid=
for _ in $(seq 100); do
  [ -e "$T/stop.h5" ] || ls "$T"/stop.h5.tmp.* >/dev/null 2>&1 && pid=$(rank_pid 2) && break
  sleep 0.2
done
if [ -z "$pid" ]; then
  fail "SIGSTOP: rank 2 of the run not found"
  kill "$job" 2>/dev/null
else
  stop_ends_run "$pid" "$job" "SIGSTOP of rank 2" CONT
  grep -q -- "--timeout 2 s: no progress for [0-9]* s in case allreduce/float/sum/oop/mpi/8, iteration [0-9]*; rank 2 (.*) is silent (not heard from for" "$T/stop.out" ||
    { fail "SIGSTOP: no line naming rank 2 as not heard from"; sed 's/^/  > /' "$T/stop.out" | tail -n 8 >&2; }
  grep -q ": 0 of 1 cases kept in $T/stop.h5 (complete=0)" "$T/stop.out" || fail "SIGSTOP: the (empty) result is not kept"
fi
wait 2>/dev/null
for _ in $(seq 50); do rank_pid 0 >/dev/null || rank_pid 1 >/dev/null || rank_pid 2 >/dev/null || break; sleep 0.2; done
p=$(rank_pid 2) && { kill -KILL "$p"; fail "a rank outlived the run"; }
unset MB_TEST_TAG

# bad values: one line, exit 2, nothing written
expect 2 "--timeout -1" -- mpi 2 "$C" --timeout -1 -o "$T/bad.h5" && has "^mb-coll: --timeout: '-1'" "names the flag"
MB_TIMEOUT=soon expect 2 "MB_TIMEOUT=soon" -- mpi 2 "$C" -o "$T/bad.h5" && has "^mb-coll: MB_TIMEOUT: 'soon' is not a number" "names the variable"
[ -e "$T/bad.h5" ] && fail "a refused run wrote a file"
finish
