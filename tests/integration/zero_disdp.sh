# DisDP's protocol (zero/disdp_*.c, tests/unit/test_disdp.c) under mpirun:
# W workers with agent threads, K switch ranks, N parameter servers on a
# fake 5-layer stack, 3 steps: the PS's parameters bit-identical to a
# serial Adam over the same pushes, fixed point and fp32 (summed in worker
# order on both sides), paced and not, fp32 or 16-bit parameters on the
# wire, one or more micro-batches per worker; payload bytes exact (S sent,
# 2S received per micro-batch, S = the model's fp32 bytes). Faults end the job
# with exit 1 and name what failed: a
# corrupted gradient chunk (step, layer, chunk, rank), corrupted optimizer
# state and a failed write (the tensor). Every run is bounded by timeout
# (a killed or stopped PS: zero_disdp_mode.sh, with the real program).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disdp.inc"
TD=$BIN/../tests/test_disdp
export MB_DISDP_DIR=$T
run() { # NP W K N AGG [GBPS [WIRE [MICRO]]]
  local np=$1; shift
  expect 0 "test_disdp $*" -- timeout 120 mpirun -np "$np" --oversubscribe --bind-to none -x MB_DISDP_DIR "$TD" "$@" &&
    has "disdp W=$1 K=$2 N=$3 $4: 0 failure" "test_disdp $*: no failure"
  has "bit-identical to the serial Adam" "test_disdp $*: the PS matches the serial Adam"
}
run 4 2 1 1 fixed
run 5 2 1 2 fixed
run 5 3 1 1 fixed
run 5 3 1 1 fp32
run 5 2 2 1 fixed 0.5
run 5 2 1 2 fp32 0.5
run 5 2 1 2 fixed 0 bf16
run 6 2 1 3 fixed 0 f16 2
run 5 3 1 1 fp32 0 f32 2
# bytes: 5 layers of 12600 parameters, 3 steps: fp32 gradients out once, fp32 parameters in twice
expect 0 "bytes" -- timeout 120 mpirun -np 4 --oversubscribe --bind-to none -x MB_DISDP_DIR "$TD" 2 1 1 fixed &&
  has "worker 0: sent 151200 bytes \(S = 151200\), received 302400 \(2S = 302400\), 30 pulls, 15 pushes" "worker 0's bytes"
expect 0 "bytes, 2 micro-batches" -- timeout 120 mpirun -np 4 --oversubscribe --bind-to none -x MB_DISDP_DIR "$TD" 2 1 1 fixed 0 f32 2 &&
  has "worker 1: sent 151200 bytes \(S = 151200\), received 604800 \(4S = 604800\), 60 pulls, 15 pushes" "worker 1's bytes"

for f in corrupt-grad corrupt-state write-error; do
  MB_FAULT_INJECT=$f expect 1 "$f" -- timeout 120 mpirun -np 4 --oversubscribe --bind-to none -x MB_FAULT_INJECT \
    -x MB_DISDP_DIR "$TD" 2 1 1 fixed || continue
  fault_named "$f" '\(switch\): ' '\(PS\): '
done
MB_FAULT_INJECT=corrupt-grad expect 1 "corrupt-grad, fp32" -- timeout 120 mpirun -np 5 --oversubscribe --bind-to none \
  -x MB_FAULT_INJECT -x MB_DISDP_DIR "$TD" 3 1 1 fp32 && has "fails the linear checksum" "corrupt-grad caught in fp32"

finish
