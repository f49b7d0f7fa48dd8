# zero/interference.c (tests/unit/test_zero_interference.c) at 2 ranks:
# the measurements run and validate across ranks, and a corrupted
# allgather or GEMM result on either rank fails both with the same line.
. "$(dirname "$0")/../lib.sh"
TZ=$BIN/../tests/test_zero_interference
expect 0 "test_zero_interference at 2 ranks" -- mpi 2 "$TZ" &&
  has "test_zero_interference at 2 ranks: 0 failure" "test_zero_interference ran at 2 ranks"
finish
