#!/bin/bash
# mb-zero's ZeRO-3 memory: a worker holds its shards and a few full-size
# layers (zero/worker.c's pools), not the gathered model. On an 8-block
# GPT, one micro-batch per worker:
# - every ZeRO-3 mode and disdp at W = 4 ends bit-identical (--agg fixed,
#   --dump-params) to a single-rank run of the same global batch: the
#   buffers rebound per use change no bit;
# - each worker's recorded peak (worker_peak_bytes: what it allocated)
#   equals the --mem-budget formula (worker_bytes_formula);
# - 8 more blocks add less than 2 bytes per added wire byte to the peak
#   (their shards' working copy, reduced gradient, master and moments,
#   5/W, and activations): a worker that kept every layer's full-size
#   parameters and gradients (and fixed sums) would add more than 3;
# - with 2 micro-batches per worker the gradients accumulate per layer
#   (FSDP's no_sync): the peak still equals the formula, and is larger;
# - --progress poll advances the collectives between a layer's GEMMs
#   (worker_mid_layer_polls_per_step > 0), the other modes never there;
# - --mem-budget one byte below the formula: exit 2, one line naming the
#   bytes needed; at the formula: runs.
. "$(dirname "$0")/../lib.sh"
Z=$BIN/mb-zero
export OMP_WAIT_POLICY=passive # as job_scripts/mb-zero.sbatch: GOMP reads it at load; ranks share cores here
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 # the same GEMM bits in every process
model=layers=8,hidden=64,heads=2,seq=4,vocab=16
base=(--model "$model" --micro 1 -n 2 -w 0 --timeout 60 --agg fixed --dir "$T")

zrun() { # NP NAME ARGS...: one run, result $T/NAME.h5, parameters $T/NAME.bin
  local np=$1 name=$2; shift 2
  expect 0 "$name" -- timeout 180 mpirun -np "$np" --oversubscribe --bind-to none "$Z" "${base[@]}" "$@" \
    -o "$T/$name.h5" --dump-params "$T/$name.bin" && has " pass$" "$name: checked against its one-rank reference"
}

# peak_ok NAME CASE W: every worker's peak equals the formula; echoes it
peak_ok() {
  local name=$1 case=$2 W=$3 f w p
  f=$(metric "$T/$name.h5" "$case" worker_bytes_formula)
  [ -n "$f" ] && [ "$f" -gt 0 ] || { fail "$name: no worker_bytes_formula ('$f')"; return 1; }
  for ((w = 0; w < W; w++)); do
    p=$(metric "$T/$name.h5" "$case" worker_peak_bytes $w)
    [ "$p" = "$f" ] || fail "$name: worker $w peak $p bytes, formula $f"
  done
  echo "$f"
}

zrun 1 one --batch 4
modes=("zero3-serial" "zero3-overlap --progress poll" "zero3-overlap --progress thread"
       "zero-offload --progress thread --adam-threads 2")
for m in "${modes[@]}"; do
  read -r mode _ prog _ <<<"$m"
  name="$mode-${prog:-none}"
  zrun 4 "$name" --batch 4 --mode $m || continue
  cmp -s "$T/$name.bin" "$T/one.bin" || fail "$name: final parameters differ from the single-rank run's"
  case=$mode/fixed/${prog:--}
  peak_ok "$name" "$case" 4 >/dev/null
  # --progress poll: nn's hook advanced the collectives between GEMMs
  polls=$(metric "$T/$name.h5" "$case" worker_mid_layer_polls_per_step 0)
  case $prog in
  poll) awk -v p="$polls" 'BEGIN {exit !(p > 0)}' || fail "$name: no poll between GEMMs ('$polls')" ;;
  *) [ "$polls" = 0 ] || fail "$name: $polls polls between GEMMs without --progress poll" ;;
  esac
done
# the same at 16 blocks: what 8 more blocks cost a worker
expect 0 "16 blocks" -- timeout 180 mpirun -np 4 --oversubscribe --bind-to none "$Z" "${base[@]}" --batch 4 \
  --model layers=16,hidden=64,heads=2,seq=4,vocab=16 --mode zero3-serial -o "$T/deep.h5"
c=zero3-serial/fixed/-
p8=$(peak_ok zero3-serial-none $c 4) && p16=$(peak_ok deep $c 4) && {
  w8=$(metric "$T/zero3-serial-none.h5" $c wire_param_bytes) w16=$(metric "$T/deep.h5" $c wire_param_bytes)
  dp=$((p16 - p8)) dw=$((w16 - w8))
  [ "$dw" -gt 0 ] && [ "$dp" -gt 0 ] && [ "$dp" -lt $((2 * dw)) ] ||
    fail "8 more blocks: peak +$dp bytes for +$dw wire bytes (want > 0 and below 2x: shards, not full layers)"
}
zrun 6 disdp --batch 4 --mode disdp --workers 4 --switch 1 --ps 1
cmp -s "$T/disdp.bin" "$T/one.bin" || fail "disdp: final parameters differ from the single-rank run's"
peak_ok disdp disdp/fixed/- 4 >/dev/null

# two micro-batches per worker: per-layer gradient accumulators
zrun 2 acc --batch 4 --mode zero3-overlap --progress poll
cmp -s "$T/acc.bin" "$T/one.bin" || fail "2 micro-batches per worker: final parameters differ from the single-rank run's"
fa=$(peak_ok acc zero3-overlap/fixed/poll 2)
f2=$(metric "$T/zero3-serial-none.h5" zero3-serial/fixed/- worker_bytes_formula)

# --mem-budget: the formula is what it checks
if [ -n "$f2" ] && [ -n "$fa" ]; then
  expect 2 "budget one byte short" -- timeout 60 mpirun -np 4 --oversubscribe --bind-to none "$Z" "${base[@]}" \
    --batch 4 --mode zero3-serial --mem-budget $((f2 - 1)) -o "$T/b1.h5" &&
    has "^mb-zero: --mem-budget $((f2 - 1)): a worker of --model $model needs $f2 bytes" "names the bytes needed"
  [ "$(grep -c "^mb-zero: --mem-budget" "$T/out")" -ge 1 ] && ! grep -q "^#" "$T/out" || fail "budget one byte short: did work or said no line"
  zrun 4 budget-exact --batch 4 --mode zero3-serial --mem-budget "$f2"
fi
finish
