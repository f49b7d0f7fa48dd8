#!/bin/bash
# mb-zero's bad input: exit 2 and one line naming the flag (printed once at
# 2 ranks), before any work: no result file, no --dump-params file.
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
cd "$T"
touch afile

# bad NP PATTERN ARGS...
bad() {
  local np=$1 pat=$2; shift 2
  local what="mb-zero $* (np $np)"
  expect 2 "$what" -- timeout 60 mpirun -np "$np" --oversubscribe --bind-to none "$BIN/mb-zero" -o "$T/never.h5" \
    --dump-params "$T/never.bin" "$@" && has "^mb-zero: $pat" "$what"
  local lines
  lines=$(awk '/^--------------------+$/ {m = !m; next} !m' "$T/out" | wc -l)
  [ "$lines" = 1 ] || fail "$what: $lines lines, expected exactly one"
  [ ! -e "$T/never.h5" ] && [ ! -e "$T/never.bin" ] || { fail "$what: a file was written"; rm -f never.*; }
}

for np in 1 2; do
  bad $np "--mode: unknown mode 'nosuch' \(zero3-serial\|" --mode nosuch
  bad $np "--workers 3 \+ --switch 0 \+ --ps 0 = 3 ranks, but the run has $np" --workers 3
  bad $np "--workers 1 \+ --switch 1 \+ --ps 1 = 3 ranks, but the run has $np" --workers 1 --switch 1 --ps 1
  bad $np "--link-gbps: '-1' is not a rate" --link-gbps -1
  bad $np "--link-gbps: 'fast' is not a rate" --link-gbps fast
  bad $np "--mem-budget 4096: a worker of --model gpt-tiny needs [0-9]+ bytes" --mem-budget 4096
  bad $np "--dir: $T/nosuch: No such file or directory" --dir "$T/nosuch"
  bad $np "--dir: $T/afile: not a folder" --dir "$T/afile"
  bad $np "--batch 3: not a multiple of --micro 2 x $np workers" --batch 3 --micro 2
  bad $np "--model: " --model gpt-nosuch
  bad $np "--compute-threads: '-1' is out of range" --compute-threads -1
  bad $np "--compute-threads: 'two' is not an integer" --compute-threads two
  bad $np "--compute-threads 100000: give 0 \(the defaults\) or 1 to [0-9]+ \(4 x the [0-9]+ PUs" --compute-threads 100000
  bad $np "--dump-params: .*afile exists" --dump-params "$T/afile"
  bad $np "--ps 0: this mode needs a parameter server" --mode disdp --workers 1 --switch $((np - 1))
  [ $np = 2 ] && bad $np "--switch 0: --mode disdp needs a switch rank" --mode disdp --workers 1 --ps 1
  MB_FAULT_INJECT=thread-single bad $np "MPI thread level: the MPI library provides MPI_THREAD_SINGLE, mb-zero needs MPI_THREAD_MULTIPLE" \
    --mode zero3-overlap --progress thread
done
exit $((failures > 0))
