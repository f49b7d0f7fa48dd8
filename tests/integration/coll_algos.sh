# The collectives registry: every algorithm against the MPI library on
# random cases (tests/unit/test_coll.c) at 2 to 5 ranks and two
# ranks-per-node splits; mb-coll --algo all over every collective, dtype,
# op and form; fault injection caught for every algorithm; bad --algo.
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
TC=$BIN/../tests/test_coll
for np in 2 3 4 5; do
  expect 0 "test_coll at $np ranks" -- mpi $np "$TC" 120 0 $((np * 11))
done
for split in "4 2" "5 2" "3 1"; do
  set -- $split
  expect 0 "test_coll at $1 ranks, $2 ranks per node" -- mpi $1 "$TC" 120 $2 $(($1 * 13)) &&
    has "$((($1 + $2 - 1) / $2)) nodes" "test_coll at $1 ranks splits into nodes"
done
# the device algorithms without a GPU: unavailable with the reason (the
# CUDA runtime's error, or a CPU build); tests/gpu/run.sh runs them
expect 0 "test_coll reports the device algorithms" -- mpi 2 "$TC" 4 0 5 &&
  has "nccl +(usable on device buffers|unavailable: NCCL unusable: .+)" "nccl says why" &&
  has "cuda-ipc +(usable on device buffers|unavailable: CUDA IPC unusable: .+)" "cuda-ipc says why"
MB_FAULT_INJECT=corrupt expect 1 "test_coll catches a corrupted result" -- mpi 2 "$TC" 40 0 3 &&
  has "first difference at element" "test_coll names the wrong element"

for np in 2 3; do
  expect 0 "mb-coll --algo all at $np ranks" -- mpi $np "$BIN/mb-coll" --coll all --dtype all --op all \
    --inplace both --algo all --sizes 0,1,13,104,4104,100003 -n 2 -w 1 -o "$T/all$np.h5" || continue
  grep -q ' fail$' "$T/out" && fail "a case failed at $np ranks"
  for a in ring rd rabenseifner binomial scatter-allgather shm shm-copyin hier pool cma ucx; do
    has "algo=$a " "mb-coll --algo all runs $a at $np ranks"
  done
done
# shm's streaming stores (MB_COLL_STREAM_MIN, 4 MiB per rank and up: shm
# pushes into every output, shm-copyin copies out): counts whose slices
# start and end off a 16-byte boundary, in place and out
expect 0 "shm's streamed copy-out at 3 ranks" -- mpi 3 "$BIN/mb-coll" --coll allreduce --algo shm,shm-copyin --dtype int8,float \
  --op sum,max --inplace both --sizes 4194307,8388608 -n 2 -w 1 -o "$T/stream.h5" && ! grep -q ' fail$' "$T/out" ||
  fail "shm's streamed copy-out"
MB_FAULT_INJECT=corrupt expect 1 "shm's streamed copy-out with a corrupted element" -- mpi 2 "$BIN/mb-coll" \
  --coll allreduce --algo shm --sizes 8M -n 2 -w 1 -o "$T/streamf.h5"
# hier and ucx over fake nodes: 1 and 2 ranks per node, every collective
for split in "1 1" "2 1" "2 2"; do
  set -- $split
  expect 0 "test_coll at $1 ranks, $2 per node" -- mpi $1 "$TC" 60 $2 $(($1 * 17)) && has "hier +120 runs" "hier ran" &&
    has "ucx +120 runs" "ucx ran"
done
expect 0 "mb-coll hier over 2 fake nodes" -- mpi 4 "$BIN/mb-coll" --coll all --algo hier,ring,rabenseifner,shm,ucx \
  --ranks-per-node 2 --dtype int32,float --op all --inplace both --sizes 0,1,13,4104,100003 -n 2 -w 1 -o "$T/rpn.h5" &&
  has "algo=hier " "hier runs over 2 nodes" && has "shm: unavailable for allreduce: the communicator spans 2 nodes" \
  "shm says why it is unavailable"
# hier's pipeline stages: one stage, an uneven split, and the across-machines default (256 KiB)
for ch in 0 4100 262144; do
  MB_COLL_HIER_CHUNK=$ch expect 0 "hier allreduce with MB_COLL_HIER_CHUNK=$ch" -- mpi 4 "$BIN/mb-coll" --coll allreduce \
    --algo hier --ranks-per-node 2 --dtype int8,double --inplace both --sizes 13,100003 -n 2 -w 1 -o "$T/hc$ch.h5" &&
    ! grep -q ' fail$' "$T/out" || fail "hier with stage size $ch"
done

# --coll all: mb-coll runs each algorithm on the collectives its registry row lists
for a in ring rd rabenseifner binomial scatter-allgather shm shm-copyin hier pool cma ucx; do
  MB_FAULT_INJECT=corrupt expect 1 "$a with a corrupted element" -- mpi 3 "$BIN/mb-coll" --algo $a --coll all \
    --sizes 96,100000 -n 2 -w 1 -o "$T/f$a.h5" && has "check failed: .*/$a/.*first wrong element" "$a: check names the element"
done
# the pool: in a directory of our choosing, recorded in the result file
mkdir -p "$T/pooldir"
expect 0 "pool in a directory" -- mpi 2 "$BIN/mb-coll" --algo pool --pool-path "$T/pooldir" --coll allreduce,bcast \
  --sizes 13,100003 -n 2 -w 1 -o "$T/pool.h5" && has "algo=pool " "pool runs from --pool-path"
runmetric "$T/pool.h5" pool_backing | grep -q "$T/pooldir/movebench-pool-.*(" ||
  fail "the result file records what backs the pool"
[ -z "$(ls "$T/pooldir")" ] || fail "the pool file is removed at the end"
# a --pool-path that cannot be created is bad input: one line, exit 2,
# before any work; the default pool failing only makes `pool` unavailable
expect 2 "unwritable pool path" -- mpi 2 "$BIN/mb-coll" --algo pool,shm --pool-path /proc/no/such \
  --sizes 13,100003 -n 2 -w 1 -o "$T/nopool.h5" &&
  has "^mb-coll: --pool-path /proc/no/such: .*No such file" "the pool path is named"
grep -q "algo=pool " "$T/out" && fail "an unavailable pool must not run"
# CMA refused by the kernel (the answer under ptrace_scope 3, injected):
# unavailable with the reason, the other algorithms still run
MB_FAULT_INJECT=cma-refused expect 0 "CMA refused falls back" -- mpi 2 "$BIN/mb-coll" --algo cma,shm \
  --sizes 13,100003 -n 2 -w 1 -o "$T/nocma.h5" &&
  has "cma: unavailable for allreduce: CMA refused: process_vm_readv .*Operation not permitted" "cma says why" &&
  has "algo=shm " "the other algorithms still run without CMA"
grep -q "algo=cma " "$T/out" && fail "a refused CMA must not run"
# UCX with no transport between the ranks (this worker limited to `self`
# through MB_UCX_TLS; the MPI library's own UCX is untouched): unavailable
# with UCX's reason, the rest still runs
MB_UCX_TLS=self expect 0 "UCX without a transport falls back" -- mpi 2 -x MB_UCX_TLS "$BIN/mb-coll" --algo ucx,shm \
  --sizes 13,100003 -n 2 -w 1 -o "$T/noucx.h5" &&
  has "ucx: unavailable for allreduce: UCX RMA unusable: no UCX transport reaches rank 1" "ucx says why" &&
  has "algo=shm " "the other algorithms still run without UCX"
grep -q "algo=ucx " "$T/out" && fail "an unusable UCX must not run"
# without CMA, UCX moves the data over its shared-memory transports (or its
# software RMA, served by the flag waits' progress): still correct
MB_UCX_TLS=posix,sysv,self expect 0 "test_coll: ucx without CMA" -- mpi 3 -x MB_UCX_TLS "$TC" 40 0 17 &&
  has "ucx +80 runs" "ucx ran without CMA"
expect 2 "unknown --algo" -- mpi 1 "$BIN/mb-coll" --algo nosuch -o "$T/bad.h5" && has "algo" "the message names --algo"
finish
