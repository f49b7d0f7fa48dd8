# The nonblocking ring (collectives/nb.c, tests/unit/test_coll_nb.c): bit
# for bit the blocking ring at 2, 3 and 4 ranks, paced, two requests in
# flight, progressed from a second thread; a corrupted result is caught.
. "$(dirname "$0")/../lib.sh"
TC=$BIN/../tests/test_coll_nb
for np in 2 3 4; do
  expect 0 "test_coll_nb at $np ranks" -- mpi $np "$TC" && has "168 cases x 3 ways at $np ranks, 0 failure" \
    "test_coll_nb ran every case at $np ranks"
done
MB_FAULT_INJECT=corrupt expect 1 "test_coll_nb catches a corrupted result" -- mpi 2 -x MB_FAULT_INJECT "$TC" &&
  has "first difference at byte" "test_coll_nb names the wrong byte"
finish
