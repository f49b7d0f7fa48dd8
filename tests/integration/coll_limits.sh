# mb-coll refuses what MPI cannot count, and its calibration fails loudly:
# a size whose element count passes INT_MAX (exit 2 naming the flag,
# before any work), and a calibration whose process_vm_readv or
# allocation fails (exit 1 naming the call, no profile written).
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
C=$BIN/mb-coll

expect 2 "-e 16G of int8" -- mpi 2 "$C" -e 16G --dtype int8 -n 1 -w 0 -o "$T/never.h5" &&
  has "^mb-coll: -e/--maxbytes: 2G of int8 is 2147483648 elements, more than MPI's count limit 2147483647" \
    "the count limit names -e" && { [ "$(grep -c 'mb-coll:' "$T/out")" = 1 ] || fail "one line for -e 16G"; }
expect 2 "--sizes 3G of int8" -- mpi 1 "$C" --sizes 8,3G --dtype float,int8 -n 1 -w 0 -o "$T/never.h5" &&
  has "^mb-coll: --sizes: 3G of int8 is 3221225472 elements" "the count limit names --sizes"
expect 2 "--sizes 3G of float through ring" -- mpi 1 "$C" --sizes 3G --algo ring -n 1 -w 0 -o "$T/never.h5" &&
  has "^mb-coll: --sizes: 3G is more than the 2147483647 bytes" "the byte limit of the library's algorithms"
[ -e "$T/never.h5" ] && fail "a refused size wrote a result file"

# calibration with a failing process_vm_readv (injected on the last node
# rank, mid-calibration): exit 1, the call named, no profile
expect 0 "CMA probe" -- mpi 2 "$C" --algo cma --sizes 64 -n 1 -w 0 -o "$T/cma.h5"
if grep -q "cma: unavailable" "$T/out"; then
  echo "skip: CMA is refused here, the process_vm_readv failure cannot be injected mid-calibration"
else
  MB_FAULT_INJECT=calibrate-cma-fail expect 1 "calibration with a failing process_vm_readv" -- \
    mpi 2 "$C" --calibrate --profile "$T/cma.txt" &&
    has "^mb-coll: --calibrate: process_vm_readv of [0-9]+ bytes from node rank 0 \(pid [0-9]+\) on rank 1: Bad address; no profile written" \
      "the failed call is named"
  [ -e "$T/cma.txt" ] && fail "a failed calibration wrote a profile"
fi
MB_FAULT_INJECT=calibrate-nomem expect 1 "calibration out of memory" -- mpi 2 "$C" --calibrate --profile "$T/mem.txt" &&
  has "^mb-coll: --calibrate: out of memory for two buffers of 67108864 bytes on rank 1; no profile written" \
    "the failed allocation is named"
[ -e "$T/mem.txt" ] && fail "a calibration out of memory wrote a profile"
finish
