# A corrupted result must be caught: MB_FAULT_INJECT=corrupt perturbs one
# output element; each collective's check must fail the run (exit 1) and
# name the first wrong element.
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
for coll in allreduce reduce_scatter_block allgather bcast reduce alltoall; do
  for np in 1 3; do
    MB_FAULT_INJECT=corrupt expect 1 "$coll at $np ranks with a corrupted element" -- \
      mpi $np "$BIN/mb-coll" --coll $coll --dtype int32,double --sizes 96 -n 2 -w 1 -o "$T/$coll.$np.h5" &&
      has "check failed: $coll/.*first wrong element at index [0-9]+: got .*, expected" "$coll at $np ranks"
    has " fail$" "$coll at $np ranks: the table marks the case"
  done
done
# NaN and Inf in a floating-point output fail the check as a wrong value does
for mode in nan inf; do
  for coll in allreduce reduce_scatter_block allgather bcast reduce alltoall; do
    for np in 1 3; do
      MB_FAULT_INJECT=$mode expect 1 "$coll at $np ranks with a $mode element" -- \
        mpi $np "$BIN/mb-coll" --coll $coll --dtype float,double --sizes 96 -n 2 -w 1 -o "$T/$mode.$coll.$np.h5" &&
        has "check failed: $coll/.*first wrong element at index [0-9]+: got -?$mode, expected" "$coll at $np ranks: $mode named"
    done
  done
done
# in place, and reduce with a non-zero root
MB_FAULT_INJECT=corrupt expect 1 "in-place allreduce" -- mpi 2 "$BIN/mb-coll" --inplace yes --sizes 64 -n 1 -w 0 -o "$T/ip.h5"
MB_FAULT_INJECT=corrupt expect 1 "reduce at root 2" -- mpi 3 "$BIN/mb-coll" --coll reduce --root 2 --sizes 64 -n 1 -w 0 -o "$T/root.h5"
# a fault in the first round is still the case's failure after the last one
MB_FAULT_INJECT=corrupt expect 1 "allreduce in 2 rounds" -- mpi 2 "$BIN/mb-coll" --sizes 64 -n 2 -w 0 --rounds 2 -o "$T/rounds.h5" &&
  has " fail$" "rounds: the table marks the case"
# the failure is recorded in the result file
expect 0 "mb-report on a failed run" -- "$BIN/mb-report" "$T/ip.h5" && has "fail" "report shows the failed check"
# without the fault the same runs pass
expect 0 "clean allreduce" -- mpi 3 "$BIN/mb-coll" --coll all --sizes 96 -n 2 -w 1 -o "$T/clean.h5"
finish
