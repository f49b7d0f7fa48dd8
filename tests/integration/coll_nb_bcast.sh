# The nonblocking broadcast (collectives/nb_bcast.c, tests/unit/test_coll_nb_bcast.c):
# mpi, binomial and scatter-allgather, every root, counts not divisible by P,
# at 2, 3 and 4 ranks (1: the unit test), one at a time and two in flight;
# a corrupted result is caught.
. "$(dirname "$0")/../lib.sh"
TC=$BIN/../tests/test_coll_nb_bcast
for np in 2 3 4; do
  expect 0 "test_coll_nb_bcast at $np ranks" -- mpi $np "$TC" &&
    has "$((42 * np)) cases x 2 ways at $np ranks, 0 failure" "test_coll_nb_bcast ran every case at $np ranks"
done
MB_FAULT_INJECT=corrupt expect 1 "test_coll_nb_bcast catches a corrupted result" -- mpi 2 -x MB_FAULT_INJECT "$TC" &&
  has "first difference at byte" "test_coll_nb_bcast names the wrong byte"
finish
