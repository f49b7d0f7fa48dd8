#!/bin/bash
# --plan's largest model, trained at small scale to check it (issue 18,
# Fig. 6): per host budget, --plan names the largest layer count of a
# shape with its activations in host memory only (Ratel+CpuAct, the
# variant whose size the host budget bounds). That many layers train under
# --act host-only at that budget (bit-identical to the reference, the
# host arena's peak and the store's buffers and staging beside it within
# the budget, no activation on storage); one layer more is refused before
# any work; and the plan's line is tight: one layer more, run with room to
# spare, really needs more host memory than the budget.
. "$(dirname "$0")/../lib.sh"
R=$BIN/mb-ratel
D=$T/data
mkdir -p "$D"
shape=hidden=64,heads=2,seq=64,vocab=128
common=(--batch 4 --dev-mem 64M --dir "$D" -n 2 -w 1)
c=ratel/host-only/optimized
for h in 11000000 12000000; do
  "$R" --plan --model layers=1,$shape "${common[@]}" --host-mem $h >"$T/plan" 2>&1
  L=$(sed -n 's/^# largest layer count of this shape, activations in host memory only: //p' "$T/plan")
  [ -n "$L" ] && [ "$L" -ge 2 ] || { fail "host $h: --plan's largest layer count '$L' (want >= 2)"; continue; }
  expect 0 "host $h: --plan's largest, $L layers, trains host-only" -- \
    "$R" --model layers=$L,$shape "${common[@]}" --host-mem $h --act host-only -o "$T/l$h.h5" &&
    has " pass$" "host $h: $L layers checked against the reference"
  pk=$(metric "$T/l$h.h5" $c host_peak_bytes)
  bs=$(metric "$T/l$h.h5" $c host_beside_bytes)
  st=$(metric "$T/l$h.h5" $c act_storage_bytes_last)
  awk -v p="$pk" -v b="$bs" -v h="$h" -v s="$st" 'BEGIN {exit !(p + 0 > 0 && b + 0 > 0 && p + b <= h + 0 && s == 0)}' ||
    fail "host $h, $L layers: arena peak $pk + $bs beside it within $h, none on storage ($st)"
  expect 2 "host $h: $((L + 1)) layers refused" -- \
    "$R" --model layers=$((L + 1)),$shape "${common[@]}" --host-mem $h --act host-only -o "$T/m$h.h5" &&
    has "^mb-ratel: --(batch|host-mem): " "host $h: the refusal names the flag"
  [ ! -e "$T/m$h.h5" ] || fail "host $h: the refused run wrote a result file"
  # tight: one layer more keeps its block inputs in host memory (inter-block)
  # with room to spare; its arena's peak and the host-only run's buffers
  # beside it (no staging slots) exceed the budget, but for the head's int32
  # targets (4 x batch x seq = 1024 bytes), which nn's account and so the
  # plan count with the head's input and the trainer leaves with the batch
  # (a layer here is 65536 bytes of block input)
  expect 0 "host $h: $((L + 1)) layers with room" -- \
    "$R" --model layers=$((L + 1)),$shape "${common[@]}" --host-mem 256M --act inter-block --no-check \
    -o "$T/n$h.h5" || continue
  pk1=$(metric "$T/n$h.h5" ratel/inter-block/optimized host_peak_bytes)
  awk -v p="$pk1" -v b="$bs" -v h="$h" 'BEGIN {exit !(p + 0 > 0 && p + b + 1024 > h + 0)}' ||
    fail "host $h: $((L + 1)) layers need $pk1 + $bs bytes, within $h: --plan's largest is not the largest"
  echo "host $h: $L layers train (arena peak $pk + $bs beside); $((L + 1)) need $pk1 + $bs"
done
[ -z "$(ls -A "$D")" ] || fail "state files removed at the end"
finish
