#!/bin/bash
# mb-nn on a small preset: every case validates and passes, prints both
# ratios, writes a result file; each case's check catches an injected
# fault; bad input gets exit 2 and one line naming the flag.
. "$(dirname "$0")/../lib.sh"
NN=$BIN/mb-nn
small=(--model gpt-small --batch 1 --adam-elems 256K -n 2 -w 1)

expect 0 "mb-nn passes" -- "$NN" "${small[@]}" -o "$T/ok.h5" && {
  has "ratio block/sgemm FLOP rate: [0-9.]+" "block ratio printed"
  has "ratio adam/memcpy bytes/s: [0-9.]+" "adam ratio printed"
  [ "$(grep -c ' pass$' "$T/out")" = 4 ] || fail "four cases pass"
}
[ -f "$T/ok.h5" ] || fail "result file written"
expect 0 "recompute mode passes" -- "$NN" "${small[@]}" --cases block --recompute -o "$T/rc.h5"
"$BIN/mb-report" "$T/rc.h5" >"$T/out" 2>&1
has "^block/gpt-small:b1:s64:h128:a4:recompute +0 +109051904 " "recompute counts 4x forward FLOPs"

# fault injection: every case's check fails the run
expect 1 "injected faults are caught" -- env MB_FAULT_INJECT=corrupt "$NN" "${small[@]}" -o "$T/f.h5" && {
  for k in sgemm block memcpy adam; do
    has "check failed: $k/" "fault in $k caught"
  done
  [ "$(grep -c ' fail$' "$T/out")" = 4 ] || fail "four cases marked fail"
}

# bad input
expect 2 "unknown preset" -- "$NN" --model gpt-7b -o "$T/b1.h5"
has "^mb-nn: --model" "names --model"
expect 2 "too big" -- "$NN" --model gpt-175b --batch 64 -o "$T/b2.h5"
has "^mb-nn: --model/--batch" "names --model/--batch"
expect 2 "bad case" -- "$NN" --cases gemm -o "$T/b3.h5"
has "--cases" "names --cases"
expect 2 "device" -- "$NN" -d cuda -o "$T/b4.h5"
has "device" "names the device flag"
[ ! -e "$T/b1.h5" ] && [ ! -e "$T/b2.h5" ] || fail "bad input writes nothing"
finish
