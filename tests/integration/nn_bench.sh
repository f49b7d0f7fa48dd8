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
  has "roofline block: .*measured/roofline [0-9.]+\)" "roofline line printed"
  [ "$(grep -c ' pass$' "$T/out")" = 4 ] || fail "four cases pass"
}
[ -f "$T/ok.h5" ] || fail "result file written"
expect 0 "recompute mode passes" -- "$NN" "${small[@]}" --cases block --recompute -o "$T/rc.h5"
"$BIN/mb-report" "$T/rc.h5" >"$T/out" 2>&1
# fwd + bwd (3 x 27262976) + the recompute, which skips the W2 GEMM (2*64*512*128)
has "^block/gpt-small:b1:s64:h128:a4:recompute +0 +100663296 " "recompute counts 3x forward + forward less W2"

# fault injection: every case's check fails the run
expect 1 "injected faults are caught" -- env MB_FAULT_INJECT=corrupt "$NN" "${small[@]}" -o "$T/f.h5" && {
  for k in sgemm block memcpy adam; do
    has "check failed: $k/" "fault in $k caught"
  done
  [ "$(grep -c ' fail$' "$T/out")" = 4 ] || fail "four cases marked fail"
}

# Faults at seeded positions: each seed puts one fault (a wrong value, NaN
# or Inf) at a seeded iteration into a seeded element of one checked
# output of each case (any GEMM row and column, the block's output, input
# gradient or any weight gradient of any batch element, any Adam p/m/v
# element). Every one must be caught, by the check naming that iteration
# and element.
tiny=(--model gpt-tiny --batch 3 --adam-elems 64K -n 3 -w 1)
declare -A where=()
seeds="1 2 3 4 5 6 7 8"
for mode in corrupt nan inf; do
  for seed in $seeds; do
    expect 1 "$mode fault, seed $seed" -- env MB_FAULT_INJECT=$mode "$NN" "${tiny[@]}" --seed $seed -o "$T/s.$mode.$seed.h5" || continue
    [ "$(grep -c 'fault injected' "$T/out")" = 4 ] || fail "$mode, seed $seed: one fault per case"
    while IFS='|' read -r kind it key; do
      where["$(sed -E 's/\[[0-9]+\]//; s/ [0-9]+//g' <<<"$key")"]=1
      grep -Fq "check failed: $kind/" "$T/out" &&
        grep -F "check failed: $kind/" "$T/out" | grep -Fq ": rank 0, iteration $it: $key" ||
        fail "$mode, seed $seed: the fault in $kind at iteration $it ($key) is not the check's failure"
    done < <(sed -nE 's/.*fault injected \([a-z]+\): ([a-z]+) iteration ([0-9]+) at (.*)$/\1|\2|\3/p' "$T/out")
    grep -Eq "check failed: block/.*\(batch [1-9]" "$T/out" && where[batch_gt0]=1
    [ "$(grep -c ' fail$' "$T/out")" = 4 ] || fail "$mode, seed $seed: four cases marked fail"
  done
done
# the seeds reach every checked output, and batch elements other than 0
for w in "gemm row" "block y" "block dx" "block grads" "memcpy byte" "adam p" "adam m" "adam v"; do
  [ -n "${where[$w]:-}" ] || fail "no seed put a fault into $w"
done
[ -n "${where[batch_gt0]:-}" ] || fail "no seed put a fault into a batch element other than 0"

# bad input
expect 2 "unknown preset" -- "$NN" --model gpt-7b -o "$T/b1.h5"
has "^mb-nn: --model" "names --model"
[ "$(wc -l <"$T/out")" = 1 ] || fail "one line: names --model"
expect 2 "too big" -- "$NN" --model gpt-175b --batch 64 -o "$T/b2.h5"
has "^mb-nn: --model/--batch" "names --model/--batch"
[ "$(wc -l <"$T/out")" = 1 ] || fail "one line: names --model/--batch"
expect 2 "bad case" -- "$NN" --cases gemm -o "$T/b3.h5"
has "--cases" "names --cases"
[ "$(wc -l <"$T/out")" = 1 ] || fail "one line: names --cases"
expect 2 "device" -- "$NN" -d cuda -o "$T/b4.h5"
has "device" "names the device flag"
[ "$(wc -l <"$T/out")" = 1 ] || fail "one line: names the device flag"
for a in "--batch 0" "--batch x" "--adam-elems 5" "--cases none" "--bogus"; do
  expect 2 "bad input $a" -- "$NN" $a -o "$T/b5.h5"
  [ "$(wc -l <"$T/out")" = 1 ] || fail "$a: one line"
  has "^mb-nn: .*${a%% *}" "$a: the line names the flag"
done
[ ! -e "$T/b1.h5" ] && [ ! -e "$T/b2.h5" ] && [ ! -e "$T/b5.h5" ] || fail "bad input writes nothing"
finish
