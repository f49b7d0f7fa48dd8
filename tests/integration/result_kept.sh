# Nothing measured is lost (issue 14): a run killed by SIGTERM or SIGINT
# after its first case leaves a result file under its final name holding
# the finished cases with complete=0, readable by mb-report, and no
# temporary; a PATH.tmp planted beforehand (the old fixed temporary name)
# survives untouched; a failed write (injected, and a real full tmpfs
# where a private mount namespace can be made) prints the summary as CSV,
# names the path and the error in one line and exits 1; an allocation
# failure is one line and exit 1, no crash.
. "$(dirname "$0")/../lib.sh"

ncases=17 # -b 1K -e 64M: 1K, 2K, ..., 64M

# kill_after_first NP SIG NAME: runs mb-coll, waits for its first table
# row, sends SIG (to the rank at 1 rank, to mpirun at 2), checks the file.
kill_after_first() {
  local np=$1 sig=$2 g=$T/$3.h5 out=$T/$3.out
  if [ "$np" = 1 ]; then
    timeout 120 "$BIN/mb-coll" -b 1K -e 64M -n 200 -o "$g" >"$out" 2>&1 &
  else
    timeout 120 mpirun -np "$np" --oversubscribe --bind-to none "$BIN/mb-coll" -b 1K -e 64M -n 200 -o "$g" >"$out" 2>&1 &
  fi
  local pid=$! waited=0
  # the first row, not a fixed time (bounded, so a hang still ends)
  until grep -q ' pass$' "$out" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || break
    waited=$((waited + 1))
    [ "$waited" -gt 1200 ] && break
    sleep 0.05
  done
  grep -q ' pass$' "$out" || { fail "np $np SIG$sig: no first row"; kill -KILL "$pid"; wait "$pid"; return; }
  kill -"$sig" "$pid"
  wait "$pid"
  local rc=$?
  [ "$rc" = 0 ] && fail "np $np SIG$sig: exit 0 after a signal"
  [ "$rc" = 124 ] && fail "np $np SIG$sig: still running 120 s later"
  # the ranks end with mpirun (they may take a moment after it)
  local gone=0
  for _ in $(seq 100); do
    pgrep -f -- "$g" >/dev/null || { gone=1; break; }
    sleep 0.1
  done
  if [ "$gone" = 0 ]; then
    fail "np $np SIG$sig: ranks still running"
    for p in $(pgrep -f -- "$g"); do kill -KILL "$p"; done
  fi
  local left
  left=$(ls "$T" | grep -c "^$3\.h5\.tmp\.")
  [ "$left" = 0 ] || fail "np $np SIG$sig: $left temporary file(s) left: $(ls "$T" | grep "^$3\.h5\.tmp\.")"
  [ -e "$g" ] || { fail "np $np SIG$sig: no result file $g"; sed 's/^/  > /' "$out" | tail -n 5 >&2; return; }
  expect 0 "np $np SIG$sig: mb-report reads the interrupted file" -- "$BIN/mb-report" "$g" || return
  local rows
  rows=$(grep -c '^allreduce/float/sum/oop/mpi/' "$T/out")
  [ "$rows" -ge 1 ] && [ "$rows" -lt "$ncases" ] || fail "np $np SIG$sig: $rows cases kept, expected 1 to $((ncases - 1))"
  has "^INCOMPLETE +the run was cut short: $rows of $ncases cases" "np $np SIG$sig: mb-report says the run was cut short"
  h5dump -a /complete "$g" 2>/dev/null | grep -q '(0): 0$' || fail "np $np SIG$sig: complete is not 0"
  # every row the table printed before the signal is in the file
  local printed
  printed=$(grep -c ' pass$' "$out")
  [ "$rows" -ge "$printed" ] || fail "np $np SIG$sig: the table printed $printed rows, the file holds $rows"
}

kill_after_first 1 TERM np1term
kill_after_first 1 INT np1int
kill_after_first 2 TERM np2term
kill_after_first 2 INT np2int

# A PATH.tmp left by someone else is neither an obstacle nor touched.
f=$T/planted.h5
printf 'not ours\n' >"$f.tmp"
expect 0 "a run beside a planted $f.tmp" -- mpi 2 "$BIN/mb-coll" --sizes 8,64 -n 5 -w 1 -o "$f"
[ -e "$f" ] || fail "no result file beside a planted PATH.tmp"
[ "$(cat "$f.tmp" 2>/dev/null)" = "not ours" ] || fail "the planted $f.tmp was changed or removed"
[ "$(ls "$T" | grep -c '^planted\.h5\.tmp\.')" = 0 ] || fail "a temporary was left beside planted.h5"

# checks on a failed write: exit 1, one line naming the path and the error,
# the summary as CSV on stdout (header + one row per case), no file left
csv_checks() {
  local what=$1 path=$2 n=$3 err=$4
  grep -c "writing the result file failed: .*$path.*$err" "$T/err" | grep -qx 1 ||
    { fail "$what: no one line naming $path and '$err'"; sed 's/^/  > /' "$T/err" | tail -n 5 >&2; }
  grep -Eqx 'case,([a-z_]+,)*bytes,count,t_min,t_median,t_p95,t_max,algbw,busbw,model,check' "$T/std" ||
    fail "$what: no CSV header on stdout"
  [ "$(grep -Ec '^allreduce/float/sum/oop/mpi/[0-9]+,.*,pass$' "$T/std")" = "$n" ] ||
    fail "$what: not $n CSV rows on stdout"
}

f=$T/enospc.h5
MB_FAULT_INJECT=result-enospc "$BIN/mb-coll" --sizes 8,64,1024 -n 5 -w 1 -o "$f" >"$T/std" 2>"$T/err"
rc=$?
[ "$rc" = 1 ] || fail "injected ENOSPC: exit $rc, expected 1"
csv_checks "injected ENOSPC" "$f" 3 "No space left on device"
[ -e "$f" ] && fail "injected ENOSPC: a result file was kept"
[ "$(ls "$T" | grep -c '^enospc\.h5\.tmp\.')" = 0 ] || fail "injected ENOSPC: a temporary was left"

# A real full file system: a small tmpfs in a private mount namespace.
if unshare -m true 2>/dev/null; then
  m=$T/tiny
  mkdir -p "$m"
  # room for the file's start (attributes, topology) but not for 8 cases
  # of 20000 x 1 samples (160 KB each)
  unshare -m sh -c 'mount -t tmpfs -o size=384k tmpfs "$1" || exit 77
    "$2" --sizes 8,16,32,64,128,256,512,1024 -n 20000 -w 1 -o "$1/r.h5" >"$3/std" 2>"$3/err"
    echo $? >"$3/rc"; ls -A "$1" >"$3/left"' sh "$m" "$BIN/mb-coll" "$T"
  if [ -s "$T/rc" ]; then
    [ "$(cat "$T/rc")" = 1 ] || fail "full tmpfs: exit $(cat "$T/rc"), expected 1"
    csv_checks "full tmpfs" "$m/r.h5" 8 "No space left on device"
    [ -s "$T/left" ] && fail "full tmpfs: left behind: $(cat "$T/left")"
  else
    echo "note: no tmpfs could be mounted; the full-disk case ran with the injected fault only"
  fi
else
  echo "note: no private mount namespace (unshare -m); the full-disk case ran with the injected fault only"
fi

# Out of memory: one line, exit 1, no crash; the file (no case) is kept.
f=$T/oom.h5
expect 1 "an allocation failure" -- env MB_FAULT_INJECT=oom-samples "$BIN/mb-coll" --sizes 8 -n 5 -o "$f"
has "out of memory: .* bytes for samples" "names the allocation"
[ "$(ls "$T" | grep -c '^oom\.h5\.tmp\.')" = 0 ] || fail "out of memory: a temporary was left"
finish
