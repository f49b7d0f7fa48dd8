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

# P = 4 on one node of 2 ranks: exit 2 naming --nodes
MB_PS="4" array "mb-polybench.sbatch P=4 on one node" 2 --array=0 --nodes=1 job_scripts/mb-polybench.sbatch
has "P=4 needs 2 nodes .*sbatch --nodes=2" "names --nodes"
finish
