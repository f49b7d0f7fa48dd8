# The pool of --algo pool, safe as root: its file is created exclusively
# (a planted symlink or an existing file is never opened, the target stays
# unchanged), it is gone after every exit (SIGTERM and SIGINT mid-run
# included), a stale-object sweep removes only files of dead owners, and
# the result file's `emulation` names what stands for CXL memory.
. "$(dirname "$0")/../lib.sh"
C=$BIN/mb-coll
P=(--algo pool --coll allreduce --sizes 64 -n 2 -w 1)
emulation() { h5dump -a /emulation "$1" 2>/dev/null | awk '/\(0\):/ {sub(/.*\(0\): */, ""); print; exit}'; }

# a symlink, and a regular file that movebench did not create: refused
# (exit 2, one line naming the flag), the targets unchanged
head -c 100000 /dev/urandom >"$T/victim" && cp "$T/victim" "$T/victim.orig"
ln -s "$T/victim" "$T/link"
expect 2 "--pool-path to a planted symlink" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/link" -o "$T/l.h5" &&
  has "^mb-coll: --pool-path $T/link: is a symbolic link" "the symlink is named" &&
  { [ "$(grep -c 'mb-coll:' "$T/out")" = 1 ] || fail "one line for a refused symlink"; }
cmp -s "$T/victim" "$T/victim.orig" || fail "the symlink's target was changed"
cp "$T/victim" "$T/regular"
expect 2 "--pool-path to an existing regular file" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/regular" -o "$T/r.h5" &&
  has "^mb-coll: --pool-path $T/regular: exists and was not created by movebench" "the file is named" &&
  { [ "$(grep -c 'mb-coll:' "$T/out")" = 1 ] || fail "one line for a refused file"; }
cmp -s "$T/regular" "$T/victim.orig" || fail "the existing file was changed"
[ -e "$T/l.h5" ] || [ -e "$T/r.h5" ] && fail "a refused run wrote a result file"

# symlinks planted under every name a predictable scheme would pick next
# (pid-rank, the pids to come): the pool never opens one
mkdir "$T/planted"
for p in $(seq $$ $(($$ + 3000))); do ln -s "$T/victim" "$T/planted/movebench-pool-$p-0"; done
expect 0 "a pool directory full of planted symlinks" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/planted" -o "$T/p.h5"
cmp -s "$T/victim" "$T/victim.orig" || fail "a planted symlink's target was changed"
[ "$(find "$T/planted" -type f | wc -l)" = 0 ] || fail "the pool file stays in the directory after the run"

# a new file named by --pool-path: created, used, gone afterwards
expect 0 "--pool-path to a new file" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/newpool" -o "$T/n.h5" &&
  has "algo=pool " "pool runs from a new file"
[ -e "$T/newpool" ] && fail "the new pool file stays after the run"

# killed mid-run (after the first table row): no pool file left. mpirun
# itself is started in the background (not the mpi function, whose
# subshell would take the signal and leave mpirun running on), so the
# signal ends the run, as Ctrl-C or kill on mpirun does.
for sig in TERM INT; do
  mkdir "$T/kill$sig"
  mpirun -np 2 --oversubscribe --bind-to none "$C" --algo pool --coll allreduce --sizes 64,128,256,512 -n 200000 -w 1 \
    --pool-path "$T/kill$sig" -o "$T/k$sig.h5" >"$T/k$sig.out" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -Eqs '^ +64 ' "$T/k$sig.out" && break; sleep 0.1; done
  grep -Eq '^ +64 ' "$T/k$sig.out" || fail "SIG$sig: no first row to wait for"
  kill -$sig $pid
  wait $pid && fail "SIG$sig: the run was not cut short (exit 0)"
  [ -z "$(ls -A "$T/kill$sig")" ] || fail "SIG$sig during a run left a pool file: $(ls "$T/kill$sig")"
done

# the stale sweep: only pool files whose owner is dead go
mkdir "$T/stale"
header() { printf 'movebench-pool 1\npid=%s\nhost=%s\n' "$1" "$(hostname)"; head -c 4000 /dev/zero; }
sleep 0 & dead=$!; wait $dead
header $dead >"$T/stale/movebench-pool-$dead-0-dead"
header $$ >"$T/stale/movebench-pool-$$-0-alive"
echo "not ours" >"$T/stale/movebench-pool-$dead-0-foreign"
expect 0 "a run in a directory with stale pool files" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/stale" -o "$T/s.h5"
[ -e "$T/stale/movebench-pool-$dead-0-dead" ] && fail "a dead owner's pool file was not swept"
[ -e "$T/stale/movebench-pool-$$-0-alive" ] || fail "a live owner's pool file was removed"
[ -e "$T/stale/movebench-pool-$dead-0-foreign" ] || fail "a file without our header was removed"
# a stale pool file named directly is replaced; a live owner's is refused
expect 0 "--pool-path to a dead owner's pool file" -- mpi 2 "$C" "${P[@]}" \
  --pool-path "$T/stale/movebench-pool-$$-0-alive.x" -o "$T/s2.h5"
header $dead >"$T/stalefile"
expect 0 "--pool-path to a dead owner's pool file" -- mpi 2 "$C" "${P[@]}" --pool-path "$T/stalefile" -o "$T/s3.h5"
[ -e "$T/stalefile" ] && fail "the replaced stale pool file stays after the run"
expect 2 "--pool-path to a live owner's pool file" -- mpi 2 "$C" "${P[@]}" \
  --pool-path "$T/stale/movebench-pool-$$-0-alive" -o "$T/s4.h5" &&
  has "is the pool of movebench process $$, still running" "the owner is named"

# the emulation, read back: the pool's backing standing for CXL memory,
# fake nodes, or none
e=$(emulation "$T/n.h5")
case $e in *"pool=$T/newpool ("*"stands for CXL memory"*) ;; *) fail "emulation of a pool run: $e" ;; esac
expect 0 "the default pool in /dev/shm" -- mpi 2 "$C" "${P[@]}" -o "$T/d.h5"
e=$(emulation "$T/d.h5")
case $e in *"pool=/dev/shm/movebench-pool-"*"(tmpfs; created by this run"*"stands for CXL memory"*) ;;
  *) fail "emulation of the default pool: $e" ;; esac
expect 0 "fake nodes" -- mpi 4 "$C" --algo hier --ranks-per-node 2 --coll allreduce --sizes 64 -n 2 -w 1 -o "$T/f.h5"
e=$(emulation "$T/f.h5")
case $e in '"fake_nodes=2: --ranks-per-node 2 splits 4 ranks on 1 host into'*) ;; *) fail "emulation of fake nodes: $e" ;; esac
case $e in *pool=*) fail "a run without the pool names it: $e" ;; esac
expect 0 "no emulation" -- mpi 2 "$C" --coll allreduce --sizes 64 -n 2 -w 1 -o "$T/m.h5"
[ "$(emulation "$T/m.h5")" = '"none"' ] || fail "emulation of an mpi run: $(emulation "$T/m.h5")"
finish
