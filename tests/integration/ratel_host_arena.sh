#!/bin/bash
# mb-ratel's host arena (--host-mem) holds the staging slots and every
# swapped activation; nothing overflows to storage in the trainer. The
# regression (issue 18, batch 8 at full scale): Algorithm 1 walked
# uncapped, the model sending the excess to storage, and a timed step
# failed with "host-mem: arena overrun: asked 3145728 bytes, 2017280 free";
# swap-all overran the same way whenever the arena could not hold every
# activation. Here, at a small parsed shape whose 8 MiB score tensor needs
# far more than the block inputs: swap-all below its need is refused in one
# line (exit 2, the smallest that fits) before any work, and runs at that
# size; Algorithm 1 at host budgets between the block inputs and everything
# (before the fix one of these overran: asked 1048576 bytes, 788608 free,
# at 3285632) always passes with the bytes it swapped within MEM_avail.
. "$(dirname "$0")/../lib.sh"
R=$BIN/mb-ratel
D=$T/data
mkdir -p "$D"
run=(--model layers=1,hidden=64,heads=1,seq=512,vocab=64 --batch 8 --dir "$D" -n 2 -w 1)
c=ratel/ratel/optimized
smallest() { sed -n 's/.*the smallest that fits is \([0-9]*\).*/\1/p' "$T/out" | head -1; }

# the least the buffers need (the older check: no activations counted)
expect 2 "a host budget below the buffers" -- "$R" "${run[@]}" --host-mem 4096
lo=$(smallest)
[ -n "$lo" ] || fail "the buffers' smallest host budget named"

# swap-all at the buffers' least: refused before any work, naming the flag
expect 2 "swap-all beyond the host arena is bad input" -- "$R" "${run[@]}" --act swap-all --host-mem "$lo" &&
  has "^mb-ratel: --host-mem: .*swap-all.*smallest that fits is [0-9]+$" "one line naming --host-mem"
[ "$(wc -l <"$T/out")" = 1 ] || fail "swap-all's refusal is one line"
grep -q overrun "$T/out" && fail "refused before any work, not an overrun"
all=$(smallest)
expect 0 "swap-all at its smallest host budget passes" -- "$R" "${run[@]}" --act swap-all --host-mem "$all" \
  -o "$T/all.h5" && has " pass$" "swap-all checked"
sw=$(metric "$T/all.h5" ratel/swap-all/optimized act_swapped_bytes_last)
av=$(metric "$T/all.h5" ratel/swap-all/optimized hw_mem_avail_bytes)
pk=$(metric "$T/all.h5" ratel/swap-all/optimized host_peak_bytes)
awk -v s="$sw" -v a="$av" -v p="$pk" -v h="$all" 'BEGIN {exit !(s + 0 > 0 && s + 0 <= a + 0 && p + 0 <= h + 0)}' ||
  fail "swap-all: swapped $sw within MEM_avail $av, host peak $pk within $all"
expect 2 "swap-all 64 bytes below it" -- "$R" "${run[@]}" --act swap-all --host-mem $((all - 64))

# Algorithm 1: the block inputs' least, then budgets up to 1 MiB above it
expect 2 "ratel below the block inputs" -- "$R" "${run[@]}" --host-mem "$lo" && has "block-input" "names the block inputs"
least=$(smallest)
[ -n "$least" ] && [ "$least" -lt "$all" ] || fail "the block inputs' least ($least) below swap-all's ($all)"
for k in 0 262144 524288 786432 1048576; do
  h=$((least + k))
  expect 0 "ratel at --host-mem $h passes" -- "$R" "${run[@]}" --host-mem $h -o "$T/r$k.h5" &&
    has " pass$" "ratel at $h checked" || continue
  sw=$(metric "$T/r$k.h5" $c act_swapped_bytes_last)
  av=$(metric "$T/r$k.h5" $c hw_mem_avail_bytes)
  tr=$(metric "$T/r$k.h5" $c host_transient_bytes)
  awk -v s="$sw" -v a="$av" -v h="$h" -v t="$tr" 'BEGIN {exit !(s + 0 > 0 && s + 0 <= a + 0 && a + 0 < h + 0 && t == 0)}' ||
    fail "ratel at $h: swapped $sw within MEM_avail $av (< $h), transient $tr (the step allocates only activations)"
done
[ -z "$(ls -A "$D")" ] || fail "state files removed at the end"
finish
