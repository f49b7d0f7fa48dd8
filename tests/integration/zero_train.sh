#!/bin/bash
# mb-zero on gpt-tiny, 3 steps of a 12-sequence global batch (one sequence
# per micro-batch, so W = 1..4 all split it evenly):
# - --agg fixed: every mode at W = 2..4 ends with parameters bit-identical
#   (every layer's CRC32C, and the --dump-params bytes) to a single-rank
#   run of the same global batch quantized alike (W = 1);
# - --agg fp32: within a relative error of 1e-5 of the single-rank fp32
#   run (argued below);
# - each worker's counted bytes per step equal ZeRO-3's closed form
#   3S(W-1)/W in both directions, S the padded parameter bytes on the wire;
# - --link-gbps R and auto are recorded and keep the bits.
# Each run also checks itself every step against its own one-rank
# reference (the program's default check).
. "$(dirname "$0")/../lib.sh"
Z=$BIN/mb-zero
export OMP_WAIT_POLICY=passive # as job_scripts/mb-zero.sbatch: GOMP reads it at load; ranks share cores here
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 # the same GEMM bits in every process
base=(--model gpt-tiny --batch 12 --micro 1 -n 3 -w 0 --timeout 60)

# crcs FILE CASE: the layers' CRC32C, space-separated
crcs() { local i v out=""; for i in 0 1 2 3; do v=$(metric "$1" "$2" layer_crc32c "$i"); out+="$v "; done; echo "$out"; }

# run NP NAME ARGS...: one run, result in $T/NAME.h5, parameters in $T/NAME.bin
run() {
  local np=$1 name=$2; shift 2
  expect 0 "$name" -- timeout 120 mpirun -np "$np" --oversubscribe --bind-to none "$Z" "${base[@]}" "$@" -o "$T/$name.h5" --dump-params "$T/$name.bin" &&
    has " pass$" "$name checked against its one-rank reference"
}

for agg in fixed fp32; do
  run 1 "one-$agg" --agg $agg
done
ref_crc=$(crcs "$T/one-fixed.h5" "zero3-serial/fixed/-")
[ "$(echo $ref_crc | wc -w)" = 4 ] && [[ $ref_crc != *"0 0 0"* ]] || fail "the single-rank run's CRCs recorded: '$ref_crc'"

# bytes_are NAME CASE W K: every worker's counted bytes per step, each
# direction, equal K S (W-1)/W exactly (S: the padded parameter bytes on
# the wire; K = 3 for ZeRO-3 with one micro-batch per worker)
bytes_are() {
  local name=$1 case=$2 W=$3 k=$4 S want w d v
  S=$(metric "$T/$name.h5" "$case" wire_param_bytes)
  want=$((k * S * (W - 1) / W))
  [ $((k * S * (W - 1) % W)) = 0 ] && [ "$S" -gt 0 ] || fail "$name: ${k}S(W-1)/W is not whole (S '$S')"
  for ((w = 0; w < W; w++)); do
    for d in sent recv; do
      v=$(metric "$T/$name.h5" "$case" "worker_${d}_bytes_per_step" $w)
      [ "$v" = "$want" ] || fail "$name: worker $w $d $v bytes per step, closed form ${k}S(W-1)/W = $want (S $S)"
    done
  done
}

modes=("zero3-serial" "zero3-overlap --progress poll" "zero3-overlap --progress thread"
       "zero-offload --progress poll" "zero-offload --progress thread --adam-threads 2")
for W in 2 3 4; do
  for m in "${modes[@]}"; do
    read -r mode _ prog _ <<<"$m"
    name="w$W-$mode-${prog:-none}"
    run $W "$name" --agg fixed --mode $m || continue
    case=$mode/fixed/${prog:--}
    got=$(crcs "$T/$name.h5" "$case")
    [ "$got" = "$ref_crc" ] || fail "$name: layer CRCs '$got', single rank '$ref_crc'"
    cmp -s "$T/$name.bin" "$T/one-fixed.bin" || fail "$name: dumped parameters differ from the single-rank run's"
    # 12/W micro-batches per worker, each gathering every layer twice, one
    # reduce-scatter per step: (2 * 12/W + 1) S (W-1)/W
    bytes_are "$name" "$case" $W $((2 * 12 / W + 1))
    for k in compute_s exposed_comm_s step_s cpu_s; do
      v=$(metric "$T/$name.h5" "$case" "worker_${k}_per_step" 0)
      awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "$name: worker_${k}_per_step recorded and positive (got '$v')"
    done
  done
done

# ZeRO-3's closed form, 3S(W-1)/W per worker and direction: one
# micro-batch per worker (--batch W), every mode
for W in 2 3 4; do
  for m in "zero3-serial" "zero3-overlap --progress thread" "zero-offload --progress poll"; do
    read -r mode _ prog _ <<<"$m"
    name="bytes-w$W-$mode-${prog:-none}"
    expect 0 "$name" -- timeout 120 mpirun -np $W --oversubscribe --bind-to none "$Z" --model gpt-tiny --batch $W -n 2 -w 0 \
      --agg fixed --mode $m --timeout 60 -o "$T/$name.h5" && bytes_are "$name" "$mode/fixed/${prog:--}" $W 3
  done
done

# fp32 sums: the ring adds the W workers' gradients in ring order, the
# single rank in micro-batch order. Each reduced element then differs by
# at most (W-1) ulps of the sum of magnitudes, relative ~ 3 x 6e-8 = 2e-7
# of the gradient where nothing cancels. Adam normalises the step
# (lr * m / (sqrt(v) + eps), |step| <= lr = 1e-3 in its first steps), so a
# gradient's relative error e moves a parameter by about lr * e, far
# below 1e-5 of the layer's norm (GPT-2's initialisation: LN gains of 1,
# weights of 0.02). The test takes the norm over the whole model,
# ||p - p1|| / ||p1|| <= 1e-5 (the program checks each layer the same way).
relerr() {
  python3 - "$1" "$2" <<'EOF'
import array, math, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read()); b.frombytes(open(sys.argv[2], 'rb').read())
if len(a) != len(b) or not a:
    print("nan"); sys.exit(0)
d = sum((x - y) ** 2 for x, y in zip(a, b)); r = sum(y * y for y in b)
print(math.sqrt(d) / math.sqrt(r))
EOF
}
for W in 2 3 4; do
  for m in "zero3-serial" "zero3-overlap --progress thread" "zero-offload --progress poll"; do
    read -r mode _ prog _ <<<"$m"
    name="fp32-w$W-$mode-${prog:-none}"
    run $W "$name" --agg fp32 --mode $m || continue
    e=$(relerr "$T/$name.bin" "$T/one-fp32.bin")
    awk -v e="$e" 'BEGIN {exit !(e <= 1e-5)}' || fail "$name: relative error $e over 1e-5 against the single-rank fp32 run"
  done
done

# disdp: W workers, one switch rank and N = 1..2 parameter servers (W+1+N
# ranks): the same bits as the single-rank run with fixed sums, the same
# 1e-5 with fp32 (the switch adds in worker order instead of ring order:
# the argument above holds). Bytes per worker and step, exactly: the
# gradients once (S = 4P, unpadded: 108032 for gpt-tiny's P = 27008) and
# the parameters twice per micro-batch (2 x 12/W x S).
for W in 2 3; do
  for N in 1 2; do
    name="disdp-w$W-n$N"
    run $((W + 1 + N)) "$name" --agg fixed --mode disdp --workers $W --switch 1 --ps $N --dir "$T" || continue
    got=$(crcs "$T/$name.h5" disdp/fixed/-)
    [ "$got" = "$ref_crc" ] || fail "$name: layer CRCs '$got', single rank '$ref_crc'"
    cmp -s "$T/$name.bin" "$T/one-fixed.bin" || fail "$name: dumped parameters differ from the single-rank run's"
    for ((w = 0; w < W; w++)); do
      v=$(metric "$T/$name.h5" disdp/fixed/- worker_sent_bytes_per_step $w)
      [ "$v" = 108032 ] || fail "$name: worker $w sent $v bytes per step, S = 108032"
      v=$(metric "$T/$name.h5" disdp/fixed/- worker_recv_bytes_per_step $w)
      [ "$v" = $((2 * 12 / W * 108032)) ] || fail "$name: worker $w received $v bytes per step, 2 x $((12 / W)) x S"
    done
  done
  name="fp32-disdp-w$W"
  run $((W + 2)) "$name" --agg fp32 --mode disdp --workers $W --switch 1 --ps 1 --dir "$T" || continue
  e=$(relerr "$T/$name.bin" "$T/one-fp32.bin")
  awk -v e="$e" 'BEGIN {exit !(e <= 1e-5)}' || fail "$name: relative error $e over 1e-5 against the single-rank fp32 run"
done

# a paced link: the rate recorded, the bits kept
run 2 paced --agg fixed --mode zero3-overlap --progress thread --link-gbps 0.05 &&
  { [ "$(metric "$T/paced.h5" zero3-overlap/fixed/thread link_Bps)" = 5e+07 ] ||
      fail "--link-gbps 0.05 recorded as $(metric "$T/paced.h5" zero3-overlap/fixed/thread link_Bps)"
    cmp -s "$T/paced.bin" "$T/one-fixed.bin" || fail "paced: parameters differ from the single-rank run's"; }
run 2 auto --agg fixed --mode zero3-serial --link-gbps auto && {
  [ "$(metric "$T/auto.h5" zero3-serial/fixed/- link)" = '"auto"' ] || fail "--link-gbps auto recorded"
  v=$(metric "$T/auto.h5" zero3-serial/fixed/- link_Bps)
  awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "--link-gbps auto measured a rate (got '$v')"
  cmp -s "$T/auto.bin" "$T/one-fixed.bin" || fail "auto: parameters differ from the single-rank run's"; }

# the OpenMP wait policy the ranks started under: recorded; ranks sharing
# a host without passive waiting are warned (GOMP's default spins)
v=$(attr "$T/paced.h5" omp_wait_policy)
[ "$v" = '"passive"' ] || fail "omp_wait_policy recorded as passive (got '$v')"
expect 0 "spinning OpenMP warned" -- env -u OMP_WAIT_POLICY timeout 120 mpirun -np 2 --oversubscribe --bind-to none \
  "$Z" "${base[@]}" --agg fixed -o "$T/spin.h5" &&
  has "^mb-zero: OMP_WAIT_POLICY unset .*: 2 ranks share this host" "the warning names the policy and the ranks" &&
  { v=$(attr "$T/spin.h5" omp_wait_policy); [[ $v == '"unset '* ]] || fail "omp_wait_policy recorded as unset (got '$v')"; }

# the step split from trace spans: every lane reaches mb-report's chrome
# trace; the progress thread's CPU time recorded under --progress thread
run 2 traced --agg fixed --mode zero3-overlap --progress thread --trace &&
  expect 0 "chrome trace written" -- "$BIN/mb-report" --chrome-trace "$T/traced.json" "$T/traced.h5" && {
    for lane in compute comm-wait optimizer step wire; do
      grep -q "\"$lane\"" "$T/traced.json" || fail "the trace has the $lane lane"
    done
    v=$(metric "$T/traced.h5" zero3-overlap/fixed/thread worker_progress_thread_cpu_s_per_step 0)
    awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "progress thread CPU seconds recorded (got '$v')"; }

exit $((failures > 0))
