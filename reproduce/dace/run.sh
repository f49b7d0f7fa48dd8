#!/bin/bash
# The DaCe study (SC'21 "Productivity, Portability, Performance: Data-Centric Python"
# and its SCC'22 rerun), end to end: mb-polybench's weak-scaling sweep over
# P = 1, 2, 4 (summa and pblas beside the matrix-vector and stencil
# kernels), our results in DaCe's CSV schema, NPBench's shared-memory
# comparison when reproduce/dace/npbench/run.sh exists, the figures and
# compare.md.
#   reproduce/dace/run.sh [--scale tiny|small|medium|full] [--with-dace] [--slurm | --vcluster] [--out DIR]
#     --scale tiny    DaCe's validation sizes (base / 100), 10 samples: seconds (the tests, make reproduce)
#     --scale small   base / 10 (gemm at P=1: 0.8 GFLOP a call, about 0.02 s), 10 samples: a few minutes
#     --scale medium  samples of about 0.1-0.3 s at P=1 (issue 20's 0.1-2 s): a factor per kernel group
#                     (products base / 5, matrix-vector / 2, doitgen / 2, heat_3d / 4, jacobi_1d 4 times DaCe's
#                     N and TSTEPS (0.25: 30 ms samples at DaCe's own), the rest DaCe's sizes), P = 1, 2 only
#                     (4 oversubscribes this host)
#     --scale full    DaCe's sizes (jacobi_1d 4 times, as medium), 10 samples, no per-call check (the serial references of DaCe's sizes
#                     take hours; tiny and small validate every call)
#     --with-dace     (or MB_WITH_DACE=1, which make reproduce passes on) a virtual environment $BUILD/venv-dace (reproduce/dace/venv.sh: dace==1.0.2,
#                     numpy 1.26.4, networkx<3.6 and mpi4py compiled against the system Open MPI with
#                     pip --no-binary mpi4py; made when absent, reused when present): DaCe's distributed
#                     kernels (reproduce/dace/distr: gemm, k2mm, k3mm, atax, bicg, gemver, gesummv, mvt,
#                     doitgen, jacobi_1d, jacobi_2d, heat_3d on dace.distr / dace.comm) at P = 1, 2 beside ours,
#                     and DaCe in the NPBench runner. If the install fails, the
#                     study goes on with C and NumPy only and compare.md says so.
#     --slurm         the sweep as one job array (job_scripts/mb-polybench.sbatch, P = 1, 2, 4 on
#                     2 nodes at 2 ranks per node), waited for
#     --vcluster      the sweep across 1, 2 and 4 emulated nodes (tools/vcluster up 4; root): P = 1, 2, 4
#                     at one rank per node, each P one job of the job script (--nodes=P) through the
#                     vcluster's Slurm; the cluster is taken down at the end
#     --out DIR       CSVs, figures, compare.md and results (default $BUILD/reproduce/dace, BUILD=build)
# Local runs use the same job script (mpirun, oversubscribed beyond this machine's cores; one rank per
# core, OMP_NUM_THREADS=1, single-threaded OpenBLAS).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
scale=tiny slurm=0 vcluster=0 out="" with_dace=${MB_WITH_DACE:-0}   # MB_WITH_DACE=1: as --with-dace (make reproduce)
case $with_dace in 0 | 1) ;; *) echo "run.sh: MB_WITH_DACE must be 0 or 1, not '$with_dace'" >&2; exit 2 ;; esac
rest=()
for a in "$@"; do
  if [ "$a" = --with-dace ]; then with_dace=1; else rest+=("$a"); fi
done
source reproduce/opts.sh
study_opts run.sh "scale slurm vcluster out" "$0" ${rest[@]+"${rest[@]}"}
check=() ps="1 2 4"
case $scale in
tiny) sd=100 preset=S ;;
small) sd=10 preset=S ;;
# sd stays the products' factor: DaCe's distributed products run at the same sizes
medium) sd=5 preset=S ps="1 2" spec=5,atax=2,bicg=2,gesummv=2,mvt=2,gemver=1,doitgen=2,jacobi_1d=0.25,jacobi_2d=1,heat_3d=4 ;;
full) sd=1 preset=L check=(--no-check) spec=1,jacobi_1d=0.25 ;;
*) echo "run.sh: --scale must be tiny, small, medium or full, not '$scale'" >&2; exit 2 ;;
esac
spec=${spec:-$sd}
if [ $vcluster = 1 ]; then
  [ $slurm = 0 ] || { echo "run.sh: --vcluster runs through the vcluster's own Slurm; leave out --slurm" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { echo "run.sh: --vcluster: tools/vcluster needs root" >&2; exit 2; }
  [ -e /run/movebench-vcluster ] && { echo "run.sh: --vcluster: a vcluster is up already; not touching it" >&2; exit 2; }
  command -v sbatch >/dev/null 2>&1 || { echo "run.sh: --vcluster: sbatch not found (make deps installs slurm-wlm)" >&2; exit 2; }
fi
out=${out:-$root/${BUILD:-build}/reproduce/dace}
py=$(reproduce/python.sh)
export MB_BIN=${MB_BIN:-$root/${BUILD:-build}/bin}   # this build's programs, also for the job script
export MB_RESULTS=$out/results MB_SCALE_DOWN=$spec MB_ITERS=10 MB_WARMUP=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# the grid's collectives through modelled registry algorithms (Open MPI's own, --algo mpi, are not
# modelled): the binomial broadcast and the recursive-doubling allreduce
export MB_ALGO=${MB_ALGO:-binomial,rd}
mkdir -p "$MB_RESULTS"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
: >"$out/status.txt"

# DaCe's side: a venv of its own (dace 1.0.2 wants Python < 3.13 and numpy < 2), made by venv.sh
# when absent and reused when present; the NPBench runner gets its interpreter (MB_DACE_PYTHON), and
# DaCe's distributed kernels (distr/, dace.distr.MatMult on ScaLAPACK) run when mpi4py imports too.
dace_py="" dace_mpi=0
if [ $with_dace = 1 ]; then
  venv=$root/${BUILD:-build}/venv-dace
  log=$out/dace-venv-$stamp.log
  if line=$(reproduce/dace/venv.sh "$venv" "$log" 2>"$out/dace-venv-$stamp.err"); then
    dace_py=$venv/bin/python
    export MB_DACE_PYTHON=$dace_py
    echo "dace: $line ($venv)" >>"$out/status.txt"
    [ "${line##* }" != absent ] && dace_mpi=1
  else
    echo "dace: the install failed ($(tail -1 "$out/dace-venv-$stamp.err" | cut -c1-200)); C and NumPy only" >>"$out/status.txt"
    echo "run.sh: DaCe's venv failed; going on without DaCe (see $log)" >&2
  fi
else
  echo "dace: not requested (--with-dace)" >>"$out/status.txt"
fi

t0=$SECONDS
data=()
if [ $slurm = 1 ]; then
  np=$(wc -w <<<"$ps")
  # DaCe's distributed kernels in the same allocation, after mb-polybench (the job script's MB_DACE_DISTR_PYTHON)
  sub=$(MB_PS="$ps" MB_DACE_DISTR_PYTHON=$([ $dace_mpi = 1 ] && echo "$dace_py") sbatch --parsable --wait --array=0-$((np - 1)) --nodes=2 -o "$MB_RESULTS/mb-polybench-%A_%a.out" \
    job_scripts/mb-polybench.sbatch ${check[@]+"${check[@]}"}) || { echo "run.sh: the job array failed; see $MB_RESULTS" >&2; exit 1; }
  arr=${sub%%;*}
  for ((t = 0; t < np; t++)); do data+=("$MB_RESULTS/${arr}_$t/mb-polybench-P$((1 << t)).h5"); done
  dace_jobs=("$MB_RESULTS/${arr}"_*/dace)
elif [ $vcluster = 1 ]; then
  # One job per P on P nodes, one rank per node; the job's output and result
  # go to the cluster's shared folder (each node's /tmp is its own), then here.
  S=/run/movebench-vcluster/shared
  trap 'tools/vcluster down >/dev/null 2>&1' EXIT
  trap 'exit 143' TERM INT
  tools/vcluster up 4 >"$out/vcluster-up-$stamp.log" 2>&1 || { cat "$out/vcluster-up-$stamp.log" >&2; exit 1; }
  mkdir -p "$S/results"
  echo "run.sh: $(cat /run/movebench-vcluster/emulation); $(uptime | sed 's/.*load/load/')" >&2
  for p in $ps; do
    log=$out/mb-polybench-P$p-$stamp.log
    # an array of one task (the script's #SBATCH --array would make seven)
    # in a subshell with the cluster's environment: its SLURM_CONF, TCP on
    # the bridge, yielding ranks, MB_VCLUSTER_EMULATION (not for what follows)
    job=$(eval "$(tools/vcluster env)" && MB_PS=$p MB_RESULTS=$S/results \
      timeout 900 sbatch --parsable --wait --array=0 --nodes=$p --ntasks-per-node=1 -o "$S/results/mb-polybench-P$p.out" \
      job_scripts/mb-polybench.sbatch ${check[@]+"${check[@]}"}) ||
      { cp "$S/results/mb-polybench-P$p.out" "$log" 2>/dev/null; echo "run.sh: mb-polybench at P=$p on $p nodes failed; see $log" >&2; exit 1; }
    job=${job%%;*}_0
    cp "$S/results/mb-polybench-P$p.out" "$log"
    mkdir -p "$MB_RESULTS/$job" && cp "$S/results/$job/mb-polybench-P$p.h5" "$MB_RESULTS/$job/" ||
      { echo "run.sh: no result of job $job (P=$p) in $S/results" >&2; exit 1; }
    data+=("$MB_RESULTS/$job/mb-polybench-P$p.h5")
  done
  tools/vcluster down >/dev/null
else
  for p in $ps; do
    log=$out/mb-polybench-P$p-$stamp.log
    MB_P=$p bash job_scripts/mb-polybench.sbatch ${check[@]+"${check[@]}"} >"$log" 2>&1 ||
      { echo "run.sh: mb-polybench at P=$p failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
    data+=("$(sed -n 's/^# result file: //p' "$log" | tail -1)")
  done
fi
for f in "${data[@]}"; do [ -f "$f" ] || { echo "run.sh: no result file $f" >&2; exit 1; }; done
echo "run.sh: measured in $((SECONDS - t0)) s ($(uptime | sed 's/.*load/load/'))" >&2
echo "uptime: $(uptime)" >>"$out/status.txt"
"$py" -m reproduce.dace.tocsv -o "$out/movebench.csv" "${data[@]}" >/dev/null
csvs=("$out/movebench.csv")

# DaCe's distributed kernels (reproduce/dace/distr: the products and matrix-vector kernels on
# dace.distr.MatMult -> ScaLAPACK pdgemm/pdgemv, doitgen, the stencils' halos on dace.comm) at the
# same sizes, P = 1, 2 (MB_DACE_PS), into $out/dace/dace_cpu_<P>_processes.csv; compiled once, at the first P
if [ $dace_mpi = 1 ] && [ $slurm = 1 ]; then
  n=0
  for d in "${dace_jobs[@]}"; do
    for f in "$d"/dace_cpu_*_processes.csv; do [ -f "$f" ] && csvs+=("$f") && n=$((n + 1)); done
  done
  echo "dace distributed: in the job array's allocations (job_scripts/mb-polybench.sbatch, MB_DACE_DISTR_PYTHON), $n CSV file(s) under $MB_RESULTS" >>"$out/status.txt"
elif [ $dace_mpi = 1 ]; then
  dd=$out/dace
  rm -rf "$dd"
  mkdir -p "$dd"
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  export OMPI_MCA_pml_ucx_tls=${OMPI_MCA_pml_ucx_tls:-any} OMPI_MCA_pml_ucx_devices=${OMPI_MCA_pml_ucx_devices:-any}
  dps=${MB_DACE_PS:-1 2} t1=$SECONDS ran=()
  for p in $dps; do
    mpi=(mpirun -np "$p" --bind-to none)
    # the PUs we may run on: GNU nproc answers OMP_NUM_THREADS when it is set
    [ "$p" -gt "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" ] && mpi+=(--oversubscribe)
    if "${mpi[@]}" -x DACE_default_build_folder="$dd/cache" "$dace_py" reproduce/dace/distr/runner.py \
         --scale-down "$spec" --out "$dd" --cache "$dd/cache" ${check[@]+"${check[@]}"} >"$dd/P$p-$stamp.log" 2>&1; then
      ran+=("$p")
    else
      echo "run.sh: DaCe's distributed kernels at P=$p failed; see $dd/P$p-$stamp.log" >&2
      tail -3 "$dd/P$p-$stamp.log" >&2
      echo "dace distributed: P=$p failed ($(grep -m1 -E 'check failed|Error' "$dd/P$p-$stamp.log" | cut -c1-160))" >>"$out/status.txt"
    fi
  done
  echo "dace distributed: $(cut -d, -f1 "$dd"/dace_cpu_*_processes.csv 2>/dev/null | sort -u | paste -sd' ' -) (reproduce/dace/distr; dace.distr.MatMult on ScaLAPACK ReferenceOpenMPI, dace.comm halos) at P = ${ran[*]:-none} in $((SECONDS - t1)) s, $dd" >>"$out/status.txt"
  for f in "$dd"/dace_cpu_*_processes.csv; do [ -f "$f" ] && csvs+=("$f"); done
elif [ $with_dace = 1 ]; then
  echo "dace distributed: not run (no mpi4py in the venv)" >>"$out/status.txt"
fi

# NPBench's shared-memory comparison (reproduce/dace/npbench/, when present)
if [ -f reproduce/dace/npbench/run.sh ]; then
  if bash reproduce/dace/npbench/run.sh --preset "$preset" --out "$out/npbench" ${dace_py:+--with-dace} \
       >"$out/npbench-$stamp.log" 2>&1; then
    echo "npbench: preset $preset, $out/npbench/npbench.csv" >>"$out/status.txt"
  else
    echo "npbench: failed (see $out/npbench-$stamp.log)" >>"$out/status.txt"
  fi
else
  echo "npbench: reproduce/dace/npbench/run.sh is not in this tree" >>"$out/status.txt"
fi
# DaCe's own weak-scaling CSVs (dace_cpu_<P>_processes.csv), when a run left them here
for f in "$out"/dace_cpu_*_processes.csv; do [ -f "$f" ] && csvs+=("$f"); done
"$py" -m reproduce.dace.plot -o "$out/weak-scaling" "${csvs[@]}"
"$py" -m reproduce.dace.compare -o "$out/compare.md" --status "$out/status.txt" --results "${data[@]}" -- "${csvs[@]}"
