# Every class of bad input: exit status 2 and one line naming the flag or
# file, before any work (no result file appears).
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
C=$BIN/mb-coll
cd "$T"

bad() { # pattern, args...
  local pat=$1; shift
  for np in 1 2; do
    expect 2 "mb-coll $* (np $np)" -- mpi $np "$C" -o "$T/never.h5" "$@" && has "$pat" "mb-coll $*"
    # one line, printed once, not once per rank
    [ "$(grep -c 'mb-coll:' "$T/out")" = 1 ] || fail "mb-coll $* (np $np): expected exactly one error line"
  done
  [ ! -e "$T/never.h5" ] || fail "mb-coll $*: a result file was written"
}

bad "unknown option '--frobnicate'" --frobnicate
bad "unknown option '-Z'" -Z
bad "-b/--minbytes: '12Q' is not a size" -b 12Q
bad "-e/--maxbytes: 'lots' is not a size" -e lots
bad "-b/--minbytes 1M is larger than -e/--maxbytes 1K" -b 1M -e 1K
bad "--dtype: 'float16' is not a comma-separated list of int8\|int32\|int64\|float\|double" --dtype float16
bad "--op: 'avg' is not a comma-separated list of sum\|prod\|min\|max" --op avg
bad "--coll: 'allred' is not a comma-separated list" --coll allred
bad "--algo: 'nosuch' is not a comma-separated list of mpi" --algo nosuch
bad "-n/--iters: '0' is out of range" -n 0
bad "-d/--device: 'tpu' is not one of host\|cuda" -d tpu
bad "--rounds: '0' is out of range" --rounds 0
bad "--rounds 5 is more than -n/--iters 4" --rounds 5 -n 4
bad "--root: 7 is not a rank" --root 7 --coll bcast
bad "--inplace: 'sometimes' is not one of no\|yes\|both" --inplace sometimes

# -d cuda without a GPU (or in a CPU build): a clear line, status 2.
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect 2 "mb-coll -d cuda without a GPU" -- "$C" -d cuda -o "$T/never.h5" && has "-d/--device cuda: " "-d cuda"
fi

# unwritable output paths
expect 2 "output in a missing directory" -- "$C" -o "$T/no/such/dir/x.h5" && has "-o/--out: cannot create .*No such file or directory" "missing dir"
mkdir "$T/ro" && chmod 555 "$T/ro"
if ! touch "$T/ro/probe" 2>/dev/null; then # root writes anywhere; skip the mode test then
  expect 2 "output in a read-only directory" -- "$C" -o "$T/ro/x.h5" && has "Permission denied" "read-only dir"
fi
expect 2 "output under /proc" -- "$C" -o /proc/movebench.h5 && has "-o/--out: cannot create" "/proc"

# an existing output is never overwritten
echo precious > "$T/exists.h5"
expect 2 "existing output" -- mpi 2 "$C" -o "$T/exists.h5" -e 64 && has "-o/--out: .*exists.h5 exists" "existing output"
[ "$(cat "$T/exists.h5")" = precious ] || fail "existing output was modified"

# stray argument, missing value
expect 2 "stray argument" -- "$C" -o "$T/never.h5" extra && has "unexpected argument 'extra'" "stray"
expect 2 "missing value" -- "$C" -o "$T/never.h5" --coll && has "--coll needs a value" "missing value"

# --help: status 0, defaults shown, nothing written
expect 0 "--help" -- "$C" --help && has "\[default: 64M\]" "--help defaults" && has "--coll LIST" "--help program flags"
finish
