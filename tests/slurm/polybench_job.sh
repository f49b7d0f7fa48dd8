# job_scripts/mb-polybench.sbatch on a real Slurm (the private single-node
# cluster of cluster.inc): an array over P = 1, 2 at DaCe's validation sizes
# (one node, --ntasks-per-node=2), launched with an explicit srun -n -N -c
# and OMP_NUM_THREADS = cpus-per-task, each task's result with its P ranks;
# an injected fault (one wrong element) must fail the job; a P the
# allocation cannot hold is exit 2 naming --nodes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.inc"
cluster_start
export MB_RESULTS=$T/results MB_SCALE_DOWN=100 MB_ITERS=2 MB_WARMUP=1 MB_KERNELS=gemm,jacobi_2d,heat_3d
unset MB_FAULT_INJECT

# array DESCRIPTION EXPECTED-STATUS [sbatch args...]: sbatch --wait; sets $arr, task outputs in $T/out
array() {
  local what=$1 want=$2; shift 2
  expect "$want" "$what" -- timeout 300 sbatch --wait -o "$T/job-%A_%a.out" "$@"
  arr=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$T/out")
  [ -n "$arr" ] || { fail "$what: no job id in sbatch's output"; return 1; }
  cat "$T"/job-"$arr"_*.out >"$T/jobout"
  cp "$T/jobout" "$T/out"
}
jobhas() { grep -Eq -- "$1" "$T/jobout" || { fail "$2: the job's output lacks /$1/"; tail -n 15 "$T/jobout" | sed 's/^/  > /' >&2; }; }

array "mb-polybench.sbatch P=1,2" 0 --array=0-1 --nodes=1 job_scripts/mb-polybench.sbatch
for t in 0 1; do
  p=$((1 << t))
  f=$MB_RESULTS/${arr}_$t/mb-polybench-P$p.h5
  jobhas "\\+ srun --mpi=pmix -n $p -N 1 -c 1 " "task $t launched with srun -n $p -N 1 -c 1"
  if [ -f "$f" ]; then
    expect 0 "mb-report P=$p" -- "$BIN/mb-report" "$f" && has "nranks +$p" "task $t: $p ranks" &&
      has "heat_3d/halo/P$p" "task $t: heat_3d's case"
    [ "$(attr "$f" blas-threads)" = 1 ] || fail "task $t: --blas-threads is '$(attr "$f" blas-threads)', not cpus-per-task"
  else
    fail "no result file $f"
  fi
done
jobhas "OMP_NUM_THREADS=1 " "OMP_NUM_THREADS is cpus-per-task"

# a wrong element fails the job: sbatch --wait exits non-zero, the task FAILED
MB_FAULT_INJECT=corrupt array "mb-polybench.sbatch with an injected fault" 1 --array=1 --nodes=1 job_scripts/mb-polybench.sbatch
has "check failed: (gemm|jacobi_2d|heat_3d)/[a-z]+/P2: rank [01]" "the fault is named"
state=$(scontrol show job -o "${arr}_1" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$state" = FAILED ] || fail "faulty task ended '$state', not FAILED"

# MB_DACE_DISTR_PYTHON that is not an executable: exit 2 naming it, before any work
MB_DACE_DISTR_PYTHON=$T/no-python array "mb-polybench.sbatch with a bad MB_DACE_DISTR_PYTHON" 2 --array=0 --nodes=1 job_scripts/mb-polybench.sbatch
has "MB_DACE_DISTR_PYTHON=$T/no-python is not an executable" "names MB_DACE_DISTR_PYTHON"

# DaCe's distributed kernels in the same allocation, after mb-polybench
# (only where reproduce/dace/venv.sh's venv with mpi4py is built: not in CI)
dpy=$(dirname "$BIN")/venv-dace/bin/python
if [ -x "$dpy" ] && "$dpy" -c 'import dace, mpi4py' 2>/dev/null; then
  MB_KERNELS=gemm,jacobi_2d MB_DACE_DISTR_PYTHON=$dpy array "mb-polybench.sbatch with DaCe in the allocation" 0 \
    --array=1 --nodes=1 job_scripts/mb-polybench.sbatch
  jobhas "\\+ srun --mpi=pmix -n 2 -N 1 -c 1 $dpy .*runner.py" "DaCe launched with the job's srun"
  csv=$MB_RESULTS/${arr}_1/dace/dace_cpu_2_processes.csv
  for k in gemm jacobi_2d; do
    n=$(grep -c "^$k," "$csv" 2>/dev/null)
    [ "$n" = 2 ] || fail "DaCe's $k at P=2 in the allocation: ${n:-no} rows in $csv, not MB_ITERS=2"
  done
else
  echo "note: no DaCe venv with mpi4py at $dpy: DaCe in the allocation not checked (reproduce/dace/venv.sh)"
fi

# P = 4 on one node of 2 ranks: exit 2 naming --nodes
MB_PS="4" array "mb-polybench.sbatch P=4 on one node" 2 --array=0 --nodes=1 job_scripts/mb-polybench.sbatch
has "P=4 needs 2 nodes .*sbatch --nodes=2" "names --nodes"
finish
