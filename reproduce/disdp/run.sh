#!/bin/bash
# The DisDP study, end to end: mb-zero --interference (an allgather beside a
# GEMM, a GEMM beside a copy) with the model on the paper's inputs
# (--paper-table); then every mode (zero3-serial, zero3-overlap and
# zero-offload with --progress thread, disdp when mb-zero has it) at W=2, --switch 1,
# --ps 1 (the ZeRO-3 modes leave those ranks idle) and two link rates:
# the auto rate (the first mode's --link-gbps auto: ZeRO-3's wire time per
# layer = its compute; the other modes run at the rate it picked) and twice
# it; each run records the calibrated step model beside
# its measured step. Then plot.py draws the figure and compare.py writes
# compare.md with the issue's ratios from these runs.
#   reproduce/disdp/run.sh [--scale tiny|small|full] [--slurm | --vcluster] [--modes "M..."]
#                          [--rates "F..."] [--ports F] [--dir DIR] [--out DIR] [--compute-threads N]
#     --scale tiny    gpt-tiny, micro-batch 1 (seconds; the tests)
#     --scale small   gpt-small with 12 blocks (nn_gpt_config_parse: gpt-small,layers=12),
#                     micro-batches of 16 (a few minutes here): each step's first
#                     gather and last reduction (or pull and push) cannot overlap
#                     compute, and with gpt-small's 4 blocks they were a third
#                     of the step; 12 blocks make them a ninth, nearer a real
#                     model's share (the paper's 175B has 96 blocks)
#     --scale full    gpt-bench, micro-batches of 8 (longer: steps of ~11 s loaded; a quiet machine)
# The micro-batch sets the operating point (issue 19's Setup fixes only
# "wire ~ compute"; --link-gbps auto then scales the link with the batch):
# compute grows with it, the wire bytes and the PS's storage per step do
# not. Chosen from calibration alone (README.md): at micro 4 a step was
# 30-120 ms, where per-step fixed costs (the PS's storage, wake-ups) rival
# compute; at 16 the calibrated model puts one PS's feed at 12-29 workers
# (W = 2), against 3.8-4.3 at micro 4.
#     --slurm         each run is one job of job_scripts/mb-zero.sbatch (sbatch --wait)
#     --vcluster      issue 19's primary setup: every role on its own node of
#                     tools/vcluster (4 nodes: worker, worker, switch, PS; root), each
#                     run a job of mb-zero.sbatch through the vcluster's Slurm; no
#                     pacing in the process: tc tbf shapes every node's link, at the
#                     rate mb-zero's --link-gbps auto picks (one zero3-serial probe
#                     run) and at twice it, so the real network stack carries every byte
#     --modes "M..."  the modes to run (default: every one mb-zero has)
#     --rates "F..."  with --vcluster, the tc rates as multiples of the auto rate (default "1 2")
#     --ports F       with --vcluster, the switch's and the PS's nodes shaped at F x the
#                     workers' rate (tools/vcluster --node-gbps): one link at W x standing
#                     for a Tofino's port per worker at line rate (default 2 = W; 1: every
#                     node at the workers' rate, the setup before)
#     --model SPEC    mb-zero's --model instead of the scale's (a preset, or a preset with
#                     overrides: gpt-small,layers=12)
#     --micro N       sequences per micro-batch instead of the scale's
#     --dir DIR       the parameter servers' and the storage calibration's files
#                     (default $MB_ZERO_DIR, else $BUILD/disdp-data; node-local disk;
#                     with --vcluster a folder every node sees, not under /tmp,
#                     /dev/shm or /run: default a folder in the vcluster's shared/)
#     --out DIR       figure, compare.md, results (default $BUILD/reproduce/disdp)
#     --beside DIR    an earlier run.sh's --out: its result files join this run's in the
#                     figure and compare.md (e.g. the one-host rows beside --vcluster's tc rows)
#     --compute-threads N
#                     every run's mb-zero --compute-threads N: each worker's OpenBLAS and
#                     OpenMP threads, recorded in each result's /config (default: the host's
#                     PUs / 2 workers, at least 1, wherever the roles share this host's
#                     cores (one host, --vcluster); with --slurm not passed: mb-zero's
#                     default, every PU of the worker's node)
# Emulation (README.md): roles are MPI ranks on this host, each worker's link
# a token bucket in the collectives' pacing hook (--vcluster: separate
# namespaced nodes, tc-shaped links). Local runs use the job script, which
# runs mpirun directly outside Slurm.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=small slurm=0 vcluster=0 out="" dir="" modes="" rates="1 2" beside="" ports=2
source reproduce/opts.sh
model="" micro=""
study_opts run.sh "scale slurm vcluster dir out modes rates beside ports compute-threads= model micro" "$0" "$@"
ct=$compute_threads
[ -z "$ct" ] || [[ $ct =~ ^[0-9]+$ ]] || { echo "run.sh: --compute-threads: '$ct' is not a count (N >= 0)" >&2; exit 2; }
earlier=()
if [ -n "$beside" ]; then
  [ -d "$beside/results" ] || { echo "run.sh: --beside: '$beside' has no results/ (give an earlier run.sh's --out)" >&2; exit 2; }
  mapfile -t earlier < <(find "$beside/results" -name '*.h5' -type f | sort)
  [ ${#earlier[@]} -gt 0 ] || { echo "run.sh: --beside: no result files under '$beside/results'" >&2; exit 2; }
fi
for f in $rates; do
  [[ $f =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v f="$f" 'BEGIN {exit !(f > 0)}' ||
    { echo "run.sh: --rates: '$f' is not a positive multiple of the auto rate" >&2; exit 2; }
done
[ -n "${rates// /}" ] || { echo "run.sh: --rates: no rate given" >&2; exit 2; }
[[ $ports =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v f="$ports" 'BEGIN {exit !(f >= 1 && f <= 64)}' ||
  { echo "run.sh: --ports: '$ports' is not a multiple of the workers' rate in 1..64" >&2; exit 2; }
case $scale in
tiny) smodel=gpt-tiny smicro=1 iters=2 ;;
small) smodel=gpt-small,layers=12 smicro=16 iters=30 ;;
full) smodel=gpt-bench smicro=8 iters=10 ;;
*) echo "run.sh: --scale must be tiny, small or full, not '$scale'" >&2; exit 2 ;;
esac
# --model and --micro replace the scale's (mb-zero checks the shape before any work)
model=${model:-$smodel} micro=${micro:-$smicro}
[[ $micro =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --micro: '$micro' is not a count of sequences (N >= 1)" >&2; exit 2; }
out=${out:-$root/${BUILD:-build}/reproduce/disdp}
VC=$root/tools/vcluster S=/run/movebench-vcluster/shared
if [ $vcluster = 1 ]; then
  [ $slurm = 0 ] || { echo "run.sh: --vcluster runs through the vcluster's own Slurm; leave out --slurm" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { echo "run.sh: --vcluster: tools/vcluster needs root" >&2; exit 2; }
  [ -e /run/movebench-vcluster ] && { echo "run.sh: --vcluster: a vcluster is up already; not touching it" >&2; exit 2; }
  command -v sbatch >/dev/null 2>&1 || { echo "run.sh: --vcluster: sbatch not found (make deps installs slurm-wlm)" >&2; exit 2; }
  dir=${dir:-${MB_ZERO_DIR:-$S/disdp-data}}
  case $(realpath -m -- "$dir") in
  /tmp | /tmp/* | /dev/shm | /dev/shm/* | /run | /run/*)
    [[ $dir == "$S/disdp-data" ]] ||
      { echo "run.sh: --dir: '$dir' is private to each vcluster node; give a folder every node sees" >&2; exit 2; } ;;
  esac
else
  dir=${dir:-${MB_ZERO_DIR:-$root/${BUILD:-build}/disdp-data}}
fi
# small: 30 timed steps (steps of 20-100 ms meet 4 ms scheduler slices on 2
# shared cores; 5 steps moved issue 19's ratios by 0.2-0.4 between runs):
# compare.md's ratios use each run's median step and split
export MB_RESULTS=$out/results MB_ITERS=$iters MB_WARMUP=2
py=$(reproduce/python.sh)
bin=${BUILD:-build}/bin/mb-zero
[ -x "$bin" ] || { echo "run.sh: $bin is not built (make)" >&2; exit 1; }
# the modes this mb-zero has (its refusal of an unknown mode lists them)
known=$("$bin" --mode '?' 2>&1 || true)
if [ -z "$modes" ]; then
  modes="zero3-serial zero3-overlap zero-offload"
  [[ $known == *"|disdp"* ]] && modes+=" disdp"
fi
for m in $modes; do
  [[ "|${known##*(}" == *"|$m|"* || "|${known##*(}" == *"|$m)"* ]] || { echo "run.sh: --modes: mb-zero has no mode '$m'" >&2; exit 2; }
done
mkdir -p "$MB_RESULTS"
[ $vcluster = 1 ] || mkdir -p "$dir"
data=()
# run NAME W K N FLAGS...: one mb-zero run through the job script; its
# result file joins data, its log is $out/NAME.log
run() {
  local name=$1 w=$2 k=$3 n=$4 log=$out/$1.log
  shift 4
  if [ $slurm = 1 ]; then
    MB_ZERO_W=$w MB_ZERO_SWITCH=$k MB_ZERO_PS=$n sbatch --wait --quiet --job-name="mb-zero-$name" --output="$log" \
      --ntasks=$((w + k + n)) --cpus-per-task=1 --export=ALL job_scripts/mb-zero.sbatch "$@" ||
      { echo "run.sh: job $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  else
    MB_ZERO_W=$w MB_ZERO_SWITCH=$k MB_ZERO_PS=$n bash job_scripts/mb-zero.sbatch "$@" >"$log" 2>&1 ||
      { echo "run.sh: $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  fi
  local f
  f=$(sed -n 's/^# result file: //p' "$log" | tail -1)
  [ -f "$f" ] || { echo "run.sh: no result file named in $log" >&2; exit 1; }
  data+=("$f")
}
t0=$SECONDS
common=(--model "$model" --micro "$micro" --dir "$dir")
# zero-offload is zero3-overlap plus the CPU Adam pool: the same overlap,
# a progress thread (issue 19's zero3-overlap --progress thread); with
# mb-zero's default (poll: MPI_Test between GEMM tiles) its collectives
# advanced only at tile boundaries, which the model does not price
#   progress MODE: appends that flag to the caller's flags for the modes that overlap
progress() { case $1 in zero3-overlap | zero-offload) flags+=(--progress thread) ;; esac; }
# Roles sharing this host's cores: each of the 2 workers computes on its
# share of the PUs. With every PU each (OpenBLAS's pool), 4 GEMM threads on
# 2 cores yield-spun while idle and starved the agents and the PS: in a quiet
# A/B (stop 32, one host, small scale, twice each) one thread a worker ran
# zero3-serial's step 0.158/0.178 s against 0.200/0.211 and disdp's
# 0.129/0.142 against 0.171/0.174.
if [ -z "$ct" ] && [ $slurm = 0 ]; then
  ct=$(( $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) / 2 ))
  [ "$ct" -ge 1 ] || ct=1
fi
[ -z "$ct" ] || common+=(--compute-threads "$ct")
if [ $vcluster = 1 ]; then
  # vc_up ARGS...: a fresh vcluster with 4 nodes (one per role)
  vc_up() {
    "$VC" down >/dev/null 2>&1 || true
    "$VC" up 4 "$@" >"$out/vcluster-up.log" 2>&1 || { cat "$out/vcluster-up.log" >&2; exit 1; }
    mkdir -p "$S/results" "$S/logs" "$S/cwd/profiles" && mkdir -p "$dir" || { echo "run.sh: cannot make $S/results or $dir" >&2; exit 1; }
    # The jobs run in $S/cwd, where each node finds this machine's
    # collectives profile as profiles/nodeK.txt (the nodes are this
    # machine's cores): unpaced, mb-zero models its collectives from it
    # (one host's memory, no term for the tc link) and records the closed
    # form beside the model. Without one, no model (mb-zero says why).
    local k
    if [ -f "profiles/$(hostname -s).txt" ]; then
      for k in 1 2 3 4; do cp "profiles/$(hostname -s).txt" "$S/cwd/profiles/node$k.txt"; done
    fi
    # the cluster's environment for the jobs (sbatch --export=ALL): its
    # SLURM_CONF, TCP on the bridge, yielding ranks, MB_VCLUSTER_EMULATION
    eval "$("$VC" env)"
    echo "run.sh: vcluster up: $(cat /run/movebench-vcluster/emulation); $(uptime | sed 's/.*load/load/')" >&2
  }
  # vc_run NAME W K N FLAGS...: one job of mb-zero.sbatch through the
  # vcluster's Slurm, one rank per node (workers, then switches, then PS);
  # its log and result file are copied out of the cluster's shared folder
  # (the nodes' /tmp are their own) to $out, the result joins data
  vc_run() {
    local name=$1 w=$2 k=$3 n=$4 log
    shift 4
    log=$S/logs/$name.log
    # A rank lost to SIGSEGV inside MPI_Init (Open MPI's, under srun
    # across the nodes under load: docs/slurm.md, 2 of 10 launches at load
    # 6-8) is retried, twice at most, when the job died before mb-zero
    # printed its first line; any other failure ends the study.
    local try
    for try in 1 2 3; do
      MB_RESULTS=$S/results MB_ZERO_W=$w MB_ZERO_SWITCH=$k MB_ZERO_PS=$n \
        timeout 600 sbatch --wait --quiet --job-name="mb-zero-$name" --output="$log" --chdir="$S/cwd" -N $((w + k + n)) \
        --ntasks-per-node=1 --ntasks=$((w + k + n)) --cpus-per-task=2 --export=ALL "$root/job_scripts/mb-zero.sbatch" "$@" && break
      if [ $try -lt 3 ] && grep -q 'Caught signal 11' "$log" && ! grep -q '^# mb-zero: ' "$log"; then
        cp "$log" "$out/$name.try$try.log"
        echo "run.sh: job $name lost a rank to SIGSEGV in MPI_Init (Open MPI's; docs/slurm.md); again ($out/$name.try$try.log)" >&2
        continue
      fi
      echo "run.sh: job $name failed; see $out/$name.log" >&2; cp "$log" "$out/$name.log" 2>/dev/null; tail -5 "$log" >&2; exit 1
    done
    cp "$log" "$out/$name.log"
    local f
    f=$(sed -n 's/^# result file: //p' "$log" | tail -1)
    [ -f "$f" ] || { echo "run.sh: no result file named in $out/$name.log" >&2; exit 1; }
    cp "$f" "$MB_RESULTS/$name.h5"
    data+=("$MB_RESULTS/$name.h5")
  }
  trap '"$VC" down >/dev/null 2>&1' EXIT
  trap 'exit 143' TERM INT
  vc_up
  vc_run interference 2 0 0 "${common[@]}" --interference --paper-table
  # the probe: mb-zero's auto rate (wire time per layer = compute) on these
  # nodes, paced in the process; not a result of the study
  vc_run rate-probe 2 1 1 "${common[@]}" --mode zero3-serial --link-gbps auto
  unset 'data[${#data[@]}-1]'
  gb=$(sed -n 's/^# --link-gbps auto: \([0-9.e+-]*\) GB\/s.*/\1/p' "$out/rate-probe.log" | awk '{printf "%.4f", 8 * $1}')
  awk -v g="${gb:-0}" 'BEGIN {exit !(g >= 0.001)}' || { echo "run.sh: no auto link rate in $out/rate-probe.log" >&2; exit 1; }
  for f in $rates; do
    g=$(awk -v g="$gb" -v f="$f" 'BEGIN {printf "%.4f", f * g}')
    # node3 (the switch) and node4 (the PS) at --ports x the workers' rate
    gp=$(awk -v g="$g" -v f="$ports" 'BEGIN {printf "%.4f", f * g}')
    if [ "$gp" = "$g" ]; then vc_up --link-gbps "$g"; else vc_up --link-gbps "$g" --node-gbps 3="$gp" --node-gbps 4="$gp"; fi
    for m in $modes; do
      flags=("${common[@]}" --mode "$m" --link-gbps 0)
      progress "$m"
      vc_run "$m-tc$g" 2 1 1 "${flags[@]}"
    done
  done
  "$VC" down >/dev/null
  load=$(uptime | sed 's/.*load/load/')
  echo "run.sh: measured in $((SECONDS - t0)) s ($load)" >&2
  "$py" -m reproduce.disdp.plot -o "$out/disdp" "${earlier[@]}" "${data[@]}"
  "$py" -m reproduce.disdp.compare -o "$out/compare.md" --seconds $((SECONDS - t0)) "${earlier[@]}" "${data[@]}"
  exit 0
fi
run interference 2 0 0 "${common[@]}" --interference --paper-table
rate="" auto=""
for m in $modes; do
  # the first mode picks the auto rate (--link-gbps auto: ZeRO-3's wire
  # time per layer = its compute); the others run at that rate, so the
  # auto rows compare one link (each picking its own under load, one run's
  # rates spread 0.16-0.83 Gb/s); data.py reads them as the auto link
  flags=("${common[@]}" --mode "$m" --link-gbps "${auto:-auto}")
  progress "$m"
  run "$m-auto" 2 1 1 "${flags[@]}"
  if [ -z "$auto" ]; then
    auto=$(sed -n 's/^# --link-gbps auto: \([0-9.e+-]*\) GB\/s.*/\1/p' "$out/$m-auto.log" | awk '{printf "%.6g", $1}')
    [ -n "$auto" ] && awk -v r="$auto" 'BEGIN {exit !(r > 0)}' || { echo "run.sh: no auto link rate in $out/$m-auto.log" >&2; exit 1; }
    # the second rate: twice the auto rate (wire time about half the compute)
    rate=$(awk -v r="$auto" 'BEGIN {printf "%.6g", 2 * r}')
  fi
done
[ -n "$rate" ] && awk -v r="$rate" 'BEGIN {exit !(r > 0)}' || { echo "run.sh: no auto link rate in $out/zero3-serial-auto.log" >&2; exit 1; }
for m in $modes; do
  flags=("${common[@]}" --mode "$m" --link-gbps "$rate")
  progress "$m"
  run "$m-fixed" 2 1 1 "${flags[@]}"
done
load=$(uptime | sed 's/.*load/load/')
echo "run.sh: measured in $((SECONDS - t0)) s ($load)" >&2
"$py" -m reproduce.disdp.plot -o "$out/disdp" "${earlier[@]}" "${data[@]}"
"$py" -m reproduce.disdp.compare -o "$out/compare.md" --seconds $((SECONDS - t0)) "${earlier[@]}" "${data[@]}"
