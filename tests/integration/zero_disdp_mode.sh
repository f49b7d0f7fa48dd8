# mb-zero --mode disdp (zero/disdp_mode.c) beyond zero_train.sh (which
# runs it at W = 2..3, PS 1..2 against the single-rank run): gpt-tiny, 3
# steps, one micro-batch per worker, K = 1 and 2 switch ranks, final
# parameters bit-identical to zero3-serial's (--dump-params, cmp); a
# paced run with 2 micro-batches per worker. Bytes per worker per step, exact: gpt-tiny has P = 27008
# parameters (embedding 16·32 + 16·32, two blocks of 12·32² + 13·32, head
# 2·32 + 32·16), S = 4P = 108032 fp32 bytes: sent S, received 2S per
# micro-batch. Faults exit 1 and say what failed; a PS killed with
# SIGKILL ends the job non-zero within 30 s and leaves none of its
# mb_ostore files in --dir (the survivors' clean-up removes them: both of
# its store's files under --files 2, not only the first); a
# stopped PS (SIGSTOP) trips --timeout, whose line names the silent rank
# and the layer it was last at (its mb_watchdog_detail). Every run is
# bounded.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disdp.inc"
Z=$BIN/mb-zero
export OMP_WAIT_POLICY=passive # as job_scripts/mb-zero.sbatch: GOMP reads it at load; ranks share cores here
tiny=(--model gpt-tiny -n 3 -w 0 --dir "$T")
zrun() { # NP DESCRIPTION ARGS...: mb-zero under mpirun, bounded
  local np=$1 what=$2; shift 2
  expect 0 "$what" -- timeout 180 mpirun -np "$np" --oversubscribe --bind-to none "$Z" "${tiny[@]}" "$@" &&
    has " pass$" "$what: the check passed"
}

n=0
for cfg in "4 2 1 1" "5 2 2 1"; do
  set -- $cfg
  n=$((n + 1))
  zrun "$1" "disdp fixed W=$2 K=$3 N=$4" --mode disdp --workers "$2" --switch "$3" --ps "$4" --agg fixed \
    -o "$T/d$n.h5" --dump-params "$T/d$n.bin"
done
# the same training in ZeRO-3, its final parameters to compare with
zrun 2 "zero3-serial fixed W=2" --mode zero3-serial --agg fixed -o "$T/z2.h5" --dump-params "$T/z2.bin"
for k in 1 2; do cmp -s "$T/d$k.bin" "$T/z2.bin" || fail "disdp run $k (W=2): final parameters differ from zero3-serial's"; done
# --compute-threads 1: each worker's OpenBLAS and OpenMP at one thread
# (recorded in /config, printed in the header line), the bits of the
# default's (OpenBLAS's pool over every PU: the OpenBLAS_NUM_THREADS
# and OMP_NUM_THREADS of this test are unset)
zrun 4 "disdp fixed W=2 K=1 N=1 --compute-threads 1" --mode disdp --workers 2 --switch 1 --ps 1 --agg fixed \
  --compute-threads 1 -o "$T/c1.h5" --dump-params "$T/c1.bin" && {
  has "compute-threads=1 \\(blas 1, omp 1\\)" "--compute-threads 1 in the header line"
  for k in compute-threads compute_threads_blas compute_threads_omp; do
    v=$(attr "$T/c1.h5" $k); [ "$v" = 1 ] || fail "--compute-threads 1: /config $k is '$v', expected 1"
  done
  cmp -s "$T/c1.bin" "$T/d1.bin" || fail "--compute-threads 1: final parameters differ from the default's"; }

zrun 5 "disdp fixed, 2 micro-batches per worker, paced" --mode disdp --switch 1 --ps 1 --agg fixed --batch 6 \
  --link-gbps 0.5 -o "$T/m.h5"

# bytes per worker per step: S out, 2S in per micro-batch
c=disdp/fixed/-
for w in 0 1; do
  [ "$(metric "$T/d1.h5" "$c" worker_sent_bytes_per_step $w)" = 108032 ] ||
    fail "worker $w sent $(metric "$T/d1.h5" "$c" worker_sent_bytes_per_step $w) bytes per step, not S = 108032"
  [ "$(metric "$T/d1.h5" "$c" worker_recv_bytes_per_step $w)" = 216064 ] ||
    fail "worker $w received $(metric "$T/d1.h5" "$c" worker_recv_bytes_per_step $w) bytes per step, not 2S = 216064"
done
# the sharing timed in calibration (zero/loaded.c): recorded and > 0
for k in model_compute_load_x ps_loaded_params_per_s; do
  v=$(metric "$T/d1.h5" "$c" $k 0)
  awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || fail "disdp: $k is '$v', expected a number > 0"
done
for w in 0 1 2; do
  [ "$(metric "$T/m.h5" "$c" worker_sent_bytes_per_step $w)" = 108032 ] || fail "2 micro-batches: worker $w's sent bytes"
  [ "$(metric "$T/m.h5" "$c" worker_recv_bytes_per_step $w)" = 432128 ] || fail "2 micro-batches: worker $w's 4S received"
done

# a local run's emulation: every role on this host's cores (zero_emulation;
# a multi-host run names each role's hosts instead, test_zero)
e=$(h5dump -a /emulation "$T/d1.h5" 2>/dev/null | awk '/\(0\):/ {sub(/.*\(0\): */, ""); print; exit}')
case $e in *"parameter servers: MPI ranks on this host's cores; SmartNIC"*) ;; *) fail "emulation of a local disdp run: $e" ;; esac

for f in corrupt-grad corrupt-state write-error; do
  MB_FAULT_INJECT=$f expect 1 "disdp $f" -- timeout 180 mpirun -np 4 --oversubscribe --bind-to none -x MB_FAULT_INJECT \
    "$Z" "${tiny[@]}" --mode disdp --switch 1 --ps 1 --agg fixed -o "$T/fault-$f.h5" || continue
  fault_named "$f" 'rank 2 \(switch\): .*' 'rank 3 \(ps\): .*'
done

# rank_pid MPIRUN_PID RANK: the process id of one rank of a local mpirun
rank_pid() {
  local p
  for p in $(pgrep -P "$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
# start_long OUT ARGS...: a long disdp run in the background; sets job, ps
start_long() {
  local out=$1; shift
  timeout 180 mpirun -np 4 --oversubscribe --bind-to none "$Z" --model gpt-tiny -n 100000 -w 0 --no-check --dir "$T" \
    --mode disdp --switch 1 --ps 1 "$@" >"$out" 2>&1 &
  job=$! ps=
  local mr=
  for _ in $(seq 150); do
    mr=$(pgrep -P "$job" -x mpirun | head -n1)
    [ -n "$mr" ] && ps=$(rank_pid "$mr" 3)
    [ -n "$ps" ] && grep -q "size(B)" "$out" && return 0
    sleep 0.2
  done
  return 1
}

if start_long "$T/kill.out" --files 2 -o "$T/kill.h5"; then
  sleep 1
  # the PS's two mb_ostore files exist while it runs (the check below can fail)
  nf=$(ls "$T"/ostore-"$ps"-*.dat 2>/dev/null | wc -l)
  [ "$nf" = 2 ] || fail "SIGKILL: $nf ostore-$ps-*.dat files of the running PS in --dir, expected 2 (--files 2)"
  signal_wait KILL "$ps" "$job"
  [ "$rc" != 0 ] || fail "SIGKILL of the PS: the job exited 0"
  [ "$took" -le 30 ] || fail "SIGKILL of the PS: the job took $took s to end"
  # the survivors' clean-up removed the killed PS's files
  left=$(ls "$T"/ostore-"$ps"-*.dat 2>/dev/null)
  [ -z "$left" ] || fail "SIGKILL of the PS: its files are left in --dir: $left"
else
  fail "SIGKILL test: the run or its PS rank was not found"; kill "$job" 2>/dev/null; wait "$job"
fi

if start_long "$T/stop.out" --timeout 3 -o "$T/stop.h5"; then
  stop_ends_run "$ps" "$job" "SIGSTOP of the PS" KILL
  grep -q -- "--timeout 3 s: no progress.*rank 3 " "$T/stop.out" ||
    { fail "SIGSTOP: the watchdog's line does not name rank 3"; tail -n 5 "$T/stop.out" >&2; }
  # gpt-tiny has layers 0..3: the PS was waiting for or updating one
  grep -Eq -- "--timeout 3 s: no progress.*; rank 3 was last at layer [0-3]([^0-9]|$)" "$T/stop.out" ||
    { fail "SIGSTOP: the watchdog's line does not name the layer rank 3 was at"; tail -n 5 "$T/stop.out" >&2; }
else
  fail "SIGSTOP test: the run or its PS rank was not found"; kill "$job" 2>/dev/null; wait "$job"
fi
finish
