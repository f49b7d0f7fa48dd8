# job_scripts/mb-zero.sbatch on the private single-node Slurm
# (tests/slurm/cluster.inc), tiny scale: the roles from MB_ZERO_W, the
# run checked and its result file written; a role count that does not
# match the job's tasks refused (exit 2); an injected fault
# (MB_FAULT_INJECT=corrupt-grad) fails the job.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.inc"
cluster_start
export MB_RESULTS=$T/results MB_ITERS=2 MB_WARMUP=0 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
unset MB_FAULT_INJECT

submit() { # DESCRIPTION EXPECTED-STATUS [sbatch args...]: sbatch --wait; sets $job
  local what=$1 want=$2; shift 2
  expect "$want" "$what" -- timeout 180 sbatch --wait -o "$T/job-%j.out" "$@"
  job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$T/out")
  [ -n "$job" ] || { fail "$what: no job id in sbatch's output"; return 1; }
  cp "$T/job-$job.out" "$T/out"
}

MB_ZERO_W=2 submit "mb-zero.sbatch, W=2" 0 --ntasks=2 --cpus-per-task=1 job_scripts/mb-zero.sbatch --agg fixed &&
  has "W=2 K=0 N=0" "the roles from MB_ZERO_W" && has " pass$" "the run checked"
[ -f "$MB_RESULTS/$job/mb-zero.h5" ] || fail "no result file for job $job"
MB_ZERO_W=3 submit "W=3 in a 2-task job" 2 --ntasks=2 --cpus-per-task=1 job_scripts/mb-zero.sbatch &&
  has "--workers 3 \+ --switch 0 \+ --ps 0 = 3 ranks, but the run has 2" "the mismatch named"
MB_FAULT_INJECT=corrupt-grad MB_ZERO_W=2 submit "an injected fault" 1 --ntasks=2 --cpus-per-task=1 \
  job_scripts/mb-zero.sbatch --batch 2 && has "linear checksum" "the fault caught"
exit $((failures > 0))
