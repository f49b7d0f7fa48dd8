#!/bin/bash
# mb-ratel's host arena (--host-mem) holds the staging slots and the
# swapped activations up to MEM_avail; the rest go to storage (Eq. 3's
# alpha, mb_ostore extents, read back CRC-checked). The regression (issue
# 18, batch 8 at full scale): Algorithm 1 walked uncapped with no storage
# path, and a timed step failed with "host-mem: arena overrun: asked
# 3145728 bytes, 2017280 free". Here, at a small parsed shape whose 8 MiB
# score tensor needs far more than the block inputs: a budget below the
# block inputs is refused in one line (exit 2, the smallest that fits)
# before any work; swap-all at that least passes, everything beyond
# MEM_avail on storage; Algorithm 1 at host budgets between the block
# inputs and everything always passes with the bytes it kept in host
# memory within MEM_avail; host-only never sends any to storage.
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

# below the block inputs: refused before any work, naming the flag
expect 2 "ratel below the block inputs" -- "$R" "${run[@]}" --host-mem "$lo" &&
  has "^mb-ratel: --host-mem: .*block-input.*smallest that fits is [0-9]+$" "one line naming --host-mem"
[ "$(wc -l <"$T/out")" = 1 ] || fail "the refusal is one line"
grep -q overrun "$T/out" && fail "refused before any work, not an overrun"
least=$(smallest)
[ -n "$least" ] || fail "the block inputs' least named"
expect 2 "swap-all below the block inputs too" -- "$R" "${run[@]}" --act swap-all --host-mem $((least - 64))

# swap-all at the least: MEM_avail far below its activations, the rest on storage
expect 0 "swap-all at the least passes" -- "$R" "${run[@]}" --act swap-all --host-mem "$least" \
  -o "$T/all.h5" && has " pass$" "swap-all checked"
sw=$(metric "$T/all.h5" ratel/swap-all/optimized act_swapped_bytes_last)
st=$(metric "$T/all.h5" ratel/swap-all/optimized act_storage_bytes_last)
av=$(metric "$T/all.h5" ratel/swap-all/optimized hw_mem_avail_bytes)
pk=$(metric "$T/all.h5" ratel/swap-all/optimized host_peak_bytes)
wr=$(metric "$T/all.h5" ratel/swap-all/optimized storage_write_bytes)
awk -v s="$sw" -v st="$st" -v a="$av" -v p="$pk" -v h="$least" -v w="$wr" \
  'BEGIN {exit !(st + 0 > 0 && s - st <= a + 0 && p + 0 <= h + 0 && w + 0 >= st + 0)}' ||
  fail "swap-all: $st of $sw swapped on storage, the rest within MEM_avail $av; host peak $pk within $least; storage writes $wr"

# Algorithm 1: budgets from the least up to 1 MiB above it
for k in 0 262144 524288 786432 1048576; do
  h=$((least + k))
  expect 0 "ratel at --host-mem $h passes" -- "$R" "${run[@]}" --host-mem $h -o "$T/r$k.h5" &&
    has " pass$" "ratel at $h checked" || continue
  sw=$(metric "$T/r$k.h5" $c act_swapped_bytes_last)
  st=$(metric "$T/r$k.h5" $c act_storage_bytes_last)
  av=$(metric "$T/r$k.h5" $c hw_mem_avail_bytes)
  tr=$(metric "$T/r$k.h5" $c host_transient_bytes)
  # the arena's peak and what sits beside it (the store's buffers, the
  # staging slots) within the one budget
  pk=$(metric "$T/r$k.h5" $c host_peak_bytes)
  bs=$(metric "$T/r$k.h5" $c host_beside_bytes)
  awk -v p="$pk" -v b="$bs" -v h="$h" 'BEGIN {exit !(p + 0 > 0 && b + 0 > 0 && p + b <= h + 0)}' ||
    fail "ratel at $h: host arena peak $pk + $bs beside it over the budget"
  awk -v s="$sw" -v st="$st" -v a="$av" -v h="$h" -v t="$tr" 'BEGIN {exit !(s + 0 > 0 && s - st <= a + 0 && a + 0 < h + 0 && t == 0)}' ||
    fail "ratel at $h: swapped $sw ($st on storage), the rest within MEM_avail $av (< $h), transient $tr (the step allocates only activations)"
done
# host-only (Ratel+CpuAct; its --plan check wants more host memory): nothing to storage
expect 0 "host-only passes" -- "$R" "${run[@]}" --act host-only --host-mem 12000000 -o "$T/h.h5" &&
  has " pass$" "host-only checked"
[ "$(metric "$T/h.h5" ratel/host-only/optimized act_storage_bytes_last)" = 0 ] || fail "host-only sent activations to storage"
[ -z "$(ls -A "$D")" ] || fail "state files removed at the end"
finish
