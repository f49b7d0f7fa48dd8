#!/bin/bash
# mb-ratel on gpt-tiny: every system, optimizer order and activation
# policy (unit/test_ratel_trainer: every combination) trains 3 steps that validate bit for bit against nn's reference;
# the result file holds tokens/s, the FLOP rate beside cblas_sgemm's, the
# link's bytes per direction and T_f/T_b predicted and measured; --trace
# spans reach mb-report --chrome-trace; --plan's 14P equals
# nn_gpt_account's at 13B; a corrupt state, a write error and a device
# arena overrun exit 1 naming what failed; bad input exits 2 in one line.
. "$(dirname "$0")/../lib.sh"
R=$BIN/mb-ratel
D=$T/data
mkdir -p "$D"
tiny=(--model gpt-tiny --batch 2 --dir "$D" -n 2 -w 1)

for sys in ratel zero-offload zero-infinity no-offload; do
  expect 0 "system $sys passes" -- "$R" "${tiny[@]}" --system $sys -o "$T/$sys.h5" && has " pass$" "$sys checked"
done
# every order with Ratel's policy, every policy with the optimized order
# (all 15 pairs: tests/unit/test_ratel_trainer)
for run in serial:ratel naive:ratel optimized:swap-all optimized:inter-block optimized:recompute-all \
  optimized:host-only; do
  ord=${run%:*} act=${run#*:}
  expect 0 "$ord $act passes" -- "$R" "${tiny[@]}" --optimizer $ord --act $act -o "$T/$ord.$act.h5" &&
    has " pass$" "$ord $act checked"
done
expect 0 "a parsed shape with capped link and files passes" -- "$R" --model layers=3,hidden=32,heads=4,seq=16,vocab=24 \
  --batch 2 --dir "$D" -n 2 -w 1 --link-gbps 0.5 --file-gbps 0.5 -o "$T/capped.h5" && has " pass$" "capped checked"
[ -z "$(ls -A "$D")" ] || fail "state files removed at the end"

c=ratel/ratel/optimized
for k in tokens_per_s flop_rate cblas_sgemm_rate link_h2d_bytes link_d2h_bytes link_h2d_busy_s t_f_predicted_s t_f_measured_s t_b_predicted_s storage_read_bytes; do
  v=$(metric "$T/ratel.h5" "$c" "$k")
  awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "$k recorded and positive (got '$v')"
done

# Fig. 9b's curve in the result file: the model at every prefix of the
# grouped walk (gpt-tiny: 2 blocks x 4 groups + the head's, after the
# forced inputs); the run's own swap set (Algorithm 1's pick) is a point
pol=$(metric "$T/ratel.h5" "$c" policy_swap_bytes)
pts=$(h5dump -w 0 -d "/metrics/$(h5key "$c")/sweep_swap_bytes" "$T/ratel.h5" 2>/dev/null |
  awk '/^ *\(0\): / {sub(/^ *\(0\): */, ""); print; exit}')
tbs=$(metric "$T/ratel.h5" "$c" sweep_t_b_predicted_s 9)
awk -v p="$pol" -v l="$pts" -v t="$tbs" 'BEGIN {n = split(l, v, /, /); f = 0;
  for (i = 1; i <= n; i++) if (v[i] + 0 == p + 0) f = 1; exit !(n == 10 && f && t + 0 > 0)}' ||
  fail "sweep: 10 grouped points holding the policy's $pol bytes (got '$pts', last T_b '$tbs')"

# backward copies the host-held swapped tensors in a layer ahead: swap-all
# on gpt-tiny keeps them all in host memory, so all of them
sw=$(metric "$T/optimized.swap-all.h5" ratel/swap-all/optimized act_swapped_bytes_last)
pf=$(metric "$T/optimized.swap-all.h5" ratel/swap-all/optimized act_prefetched_bytes_last)
st=$(metric "$T/optimized.swap-all.h5" ratel/swap-all/optimized act_storage_bytes_last)
awk -v w="$sw" -v p="$pf" -v s="$st" 'BEGIN {exit !(p + 0 > 0 && p + s == w + 0)}' ||
  fail "swap-all: prefetched '$pf' + stored '$st' = swapped '$sw'"

# the serial order runs every update in the trainer's thread: its time there
# (the optimizer's storage traffic alone) is part of T_b, not all of it
ts=$(metric "$T/serial.ratel.h5" ratel/ratel/serial t_store_caller_s)
tb=$(metric "$T/serial.ratel.h5" ratel/ratel/serial t_b_measured_s)
awk -v s="$ts" -v b="$tb" 'BEGIN {exit !(s + 0 > 0 && s + 0 < b + 0)}' ||
  fail "serial: t_store_caller_s '$ts' is not in (0, t_b '$tb')"
# of which Adam alone (the store's update callback) is a part, not all
ta=$(metric "$T/serial.ratel.h5" ratel/ratel/serial optimizer_update_s)
awk -v a="$ta" -v s="$ts" 'BEGIN {exit !(a + 0 > 0 && a + 0 < s + 0)}' ||
  fail "serial: optimizer_update_s '$ta' is not in (0, t_store_caller_s '$ts')"

# the process under a cgroup budget (where the machine gives one)
"$R" "${tiny[@]}" --budget-method cgroup -o "$T/bud.h5" >"$T/out" 2>&1
case $? in
  0) [ -n "$(metric "$T/bud.h5" "$c" budget_peak_bytes)" ] || fail "budget peak recorded" ;;
  *) grep -q "cannot enforce" "$T/out" && echo "note: no cgroup here: $(head -1 "$T/out")" ||
       { fail "budgeted run"; tail -5 "$T/out" >&2; } ;;
esac

expect 0 "traced run passes" -- "$R" "${tiny[@]}" --trace -o "$T/tr.h5" &&
  expect 0 "chrome trace written" -- "$BIN/mb-report" --chrome-trace "$T/tr.json" "$T/tr.h5" &&
  for span in fwd bwd h2d d2h read write update; do
    grep -q "\"$span\"" "$T/tr.json" || fail "trace has the $span lane"
  done

expect 0 "--plan at 13B" -- "$R" --plan --model gpt-13b --batch 16 --dev-mem 48G --host-mem 256G && {
  has "14P = 183476428800 bytes \(nn_gpt_account: 183476428800\)" "14P equals nn_gpt_account (182 GB)"
  has "largest Table IV preset for these budgets: gpt-" "largest preset printed"
}

expect 0 "--plan with a small device" -- "$R" --plan --model gpt-13b --batch 16 --dev-mem 8G --host-mem 256G &&
  has "does not fit: device: needs [0-9.]+ GB" "the tier that does not fit named"

expect 1 "corrupt state caught" -- env MB_FAULT_INJECT=corrupt-state "$R" "${tiny[@]}" -o "$T/c.h5" &&
  has "L[0-9]+\.(P32|m|v): CRC32C mismatch .*at offset [0-9]+" "corruption named by tensor and offset"
expect 1 "write error caught" -- env MB_FAULT_INJECT=write-error "$R" "${tiny[@]}" -o "$T/w.h5" &&
  has "writing L[0-9]+\..* Input/output error" "write error named"
expect 0 "exactly the plan's device bytes" -- "$R" "${tiny[@]}" --batch 1 --dev-mem 331648 -o "$T/x.h5" &&
  has " pass$" "trained at the planned device bytes"
expect 2 "one byte under the plan" -- "$R" "${tiny[@]}" --batch 1 --dev-mem 331647 -o "$T/x1.h5" &&
  has "the smallest that fits is 331648" "refusal names the planned bytes"
# the plan's device bytes (331648 at batch 1) count the inputs swapped;
# recompute-all keeps them on the device, so 324K (331776) overruns mid-step
expect 1 "device arena overrun" -- "$R" "${tiny[@]}" --batch 1 --act recompute-all --dev-mem 324K -o "$T/o.h5" &&
  has "dev-mem: arena overrun: asked [0-9]+ bytes, [0-9]+ free" "overrun names tier, asked and free"

bad() {
  expect 2 "$1" -- "$R" "${@:3}" -o "$T/bad.h5" && {
    has "$2" "$1 named"
    [ "$(wc -l <"$T/out")" = 1 ] || fail "$1: one line"
  }
}
bad "device below a layer" "--dev-mem: .* below one layer's working set; the smallest that fits is [0-9]+" --dev-mem 64K --dir "$D"
bad "host below a layer" "--host-mem: .* below one layer's working set; the smallest that fits is [0-9]+" --host-mem 8K --dir "$D"
bad "missing folder" "--dir: $T/nope" --dir "$T/nope"
bad "unknown act" "--act" --act foo --dir "$D"
bad "unknown optimizer" "--optimizer" --optimizer bar --dir "$D"
bad "batch over the limit" "--batch: 100000 is over the plan's limit" --model gpt-small --batch 100000 --dir "$D"
bad "bad model" "--model" --model layers=x --dir "$D"
# --swap-set (gpt-tiny at batch 2: 24 units, 6 hex digits)
bad "swap set too short" "--swap-set: 1 hex digits, the table of 24 units needs 6" --swap-set 7 --dir "$D"
bad "swap set not hex" "--swap-set: 'z' .* not a hex digit" --swap-set zz0000 --dir "$D"
bad "swap set splits a group" "--swap-set: layer 1: recompute group 3 split" --swap-set 020000 --dir "$D"
bad "swap set on zero-infinity" "--swap-set: only with --system ratel" --system zero-infinity --swap-set 000000 --dir "$D"
bad "whole recompute under Algorithm 1" "--recompute whole: --act ratel keeps single tensors" --recompute whole --dir "$D"
bad "whole recompute under swap-all" "--recompute whole: --act swap-all keeps single tensors" --act swap-all --recompute whole --dir "$D"
bad "read-ahead past the store's sets" "--read-ahead: '4' is out of range" --read-ahead 4 --dir "$D"
[ ! -e "$T/bad.h5" ] || fail "bad input writes nothing"
finish
