#!/bin/bash
# mb-zero's checks fail when they should: MB_FAULT_INJECT=corrupt-grad
# flips one element of a reduced gradient shard as it lands (worker, layer
# and element from --seed) and the linear checksum names the step, layer,
# chunk and rank (exit 1), with fixed-point and fp32 sums, in a blocking
# and an overlapped mode; the one-rank reference sees the update differ.
# The harness's --timeout watchdog ends a run with a stopped rank
# (MB_FAULT_INJECT=hang), naming it (`timeout 120` guards it: on a quiet
# machine it ends in about 6 s, under load 40 it took 105 s).
. "$(dirname "$0")/../lib.sh"
Z=$BIN/mb-zero
export OMP_WAIT_POLICY=passive # as job_scripts/mb-zero.sbatch: GOMP reads it at load; ranks share cores here
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

for seed in 1 2 5; do
  for run in fixed:zero3-serial fp32:zero3-overlap fixed:zero-offload; do
    agg=${run%%:*} mode=${run#*:}
    what="corrupt-grad, seed $seed, $agg $mode"
    MB_FAULT_INJECT=corrupt-grad expect 1 "$what" -- timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$Z" \
      --batch 3 -n 2 -w 0 --agg $agg --mode $mode --seed $seed --timeout 60 -o "$T/c.h5" &&
      has "check failed: .*step 1: layer [0-9]+ chunk [0-9]+ of rank [0-2]'s gradient shard: reduced sum .* the senders' sums add to .* \(linear checksum\)" \
        "$what: the checksum names step, layer, chunk and rank"
    rm -f "$T"/c*.h5
  done
done
# the same runs without the fault pass (the checks are not simply failing)
expect 0 "no fault" -- timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$Z" --batch 3 -n 2 -w 0 --agg fp32 \
  --mode zero3-overlap --timeout 60 -o "$T/ok.h5" && has " pass$" "no fault: checked"

MB_FAULT_INJECT=hang expect 1 "a stopped rank" -- timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$Z" \
  --batch 3 -n 3 -w 0 --seed 3 --timeout 3 -o "$T/h.h5" &&
  has "--timeout 3 s: no progress .* rank 2 .* is silent" "the watchdog names the silent rank"
exit $((failures > 0))
