# mb-coll's batched timing (--agg-iters): k calls per sample with every call
# still checked, k recorded per case in the result file
# (/metrics/<case>/agg_iters), a fault in a seeded random call of a block caught and
# named, every algorithm's outputs kept apart across a block.
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
C=$BIN/mb-coll
case8=allreduce/float/sum/oop/mpi/8

expect 0 "--agg-iters 16" -- mpi 2 "$C" --agg-iters 16 --sizes 8,4M -n 3 -w 1 -o "$T/b16.h5" &&
  ! grep -q ' fail$' "$T/out" || fail "--agg-iters 16 passes its checks"
[ "$(attr "$T/b16.h5" agg-iters)" = '"16"' ] || fail "/config agg-iters holds the flag: $(attr "$T/b16.h5" agg-iters)"
[ "$(metric "$T/b16.h5" $case8 agg_iters)" = 16 ] || fail "8 B runs 16 calls per sample: $(metric "$T/b16.h5" $case8 agg_iters)"
# 4 MiB: the program holds one set of buffers that size, so each call alone
[ "$(metric "$T/b16.h5" allreduce/float/sum/oop/mpi/4194304 agg_iters)" = 1 ] || fail "4 MiB is timed call by call"
expect 0 "--agg-iters 1" -- mpi 2 "$C" --agg-iters 1 --sizes 8 -n 3 -w 1 -o "$T/b1.h5"
[ "$(metric "$T/b1.h5" $case8 agg_iters)" = 1 ] || fail "--agg-iters 1 times each call alone"
expect 0 "--agg-iters auto (the default)" -- mpi 2 "$C" --sizes 8 -n 3 -w 2 -o "$T/ba.h5"
k=$(metric "$T/ba.h5" $case8 agg_iters)
[ "$(attr "$T/ba.h5" agg-iters)" = '"auto"' ] && [ "$k" -ge 1 ] && [ "$k" -le 256 ] || fail "auto records k in 1..256: $k"
expect 0 "--agg-iters auto without a warm-up" -- mpi 2 "$C" --sizes 8 -n 3 -w 0 -o "$T/bw0.h5"
[ "$(metric "$T/bw0.h5" $case8 agg_iters)" = 1 ] || fail "auto without a warm-up times each call alone"

# a fault in call j of the first block (j from the seed): caught, and the
# failed check names the iteration the fault hit; over these seeds j is
# not always the first call
later=0
for seed in 1 2 3 4 5 6; do
  MB_FAULT_INJECT=corrupt expect 1 "a fault in a block of 16 (seed $seed)" -- mpi 2 "$C" --agg-iters 16 --seed $seed \
    --sizes 8 -n 2 -w 1 -o "$T/f$seed.h5" || continue
  it=$(sed -n 's/.*fault injection: rank 1 corrupts iteration \([0-9]*\) (call \([0-9]*\) of 16.*/\1 \2/p' "$T/out")
  [ -n "$it" ] || { fail "seed $seed: no fault injected"; continue; }
  set -- $it
  has "check failed: $case8: rank 1, iteration $1: first wrong element" "seed $seed: the check names iteration $1"
  [ "$2" -gt 1 ] && later=1
done
[ $later = 1 ] || fail "the fault always hit the first call of the block"

# every algorithm, every collective, k = 4: outputs rotate through 4 sets
for np in 2 3; do
  expect 0 "--algo all with --agg-iters 4 at $np ranks" -- mpi $np "$C" --agg-iters 4 --coll all --algo all --dtype int32 \
    --inplace both --sizes 13,4104 -n 2 -w 1 -o "$T/all$np.h5" && ! grep -q ' fail$' "$T/out" ||
    fail "--algo all with --agg-iters 4 at $np ranks"
done
MB_FAULT_INJECT=corrupt expect 1 "shm with a fault in a block of 4" -- mpi 3 "$C" --agg-iters 4 --algo shm,pool,cma \
  --coll allreduce,allgather --sizes 104 -n 2 -w 1 -o "$T/fz.h5"

bad() { expect 2 "--agg-iters $1" -- mpi 1 "$C" --agg-iters "$1" -o "$T/never.h5" &&
        has "^mb-coll: --agg-iters: '$1' is not a call count or auto" "--agg-iters $1 names the flag"; }
bad 0; bad x; bad 65537
finish
