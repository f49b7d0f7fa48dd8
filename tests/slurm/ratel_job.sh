# job_scripts/mb-ratel.sbatch on a real Slurm (the private single-node
# cluster of cluster.inc) at tiny scale (issue 18): once passing, its
# result file carrying the job's provenance and the state files removed;
# once with a host budget below one layer's working set, which must fail
# the job (exit 2, one line naming --host-mem; JobState FAILED and
# ExitCode 2:0 by scontrol, and by sacct where accounting runs).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.inc"
cluster_start   # returns only with the node idle; else exits 77 (no Slurm, not root) or 1
export MB_RESULTS=$T/results MB_ITERS=2 MB_WARMUP=1 MB_RATEL_DIR=$T/ratel-data
unset MB_FAULT_INJECT

# job_end JOB: "STATE EXITCODE" by scontrol
job_end() {
  scontrol show job -o "$1" | sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p'
}

# 1. tiny scale passes
submit "mb-ratel.sbatch at tiny scale" 0 job_scripts/mb-ratel.sbatch --model gpt-tiny --batch 2 --files 2
f=$MB_RESULTS/$job/mb-ratel.h5
has ' pass$' "the job's case validated"
if [ -f "$f" ]; then
  [ "$(root_attr "$f" slurm_job_id)" = "$job" ] || fail "slurm_job_id is '$(root_attr "$f" slurm_job_id)', not $job"
  [ "$(root_attr "$f" job_script)" = job_scripts/mb-ratel.sbatch ] || fail "job_script is '$(root_attr "$f" job_script)'"
  v=$(metric "$f" ratel/ratel/optimized tokens_per_s)
  awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "tokens_per_s recorded and positive (got '$v')"
else
  fail "no result file $f"
fi
[ "$(job_end "$job")" = "COMPLETED 0:0" ] || fail "the passing job ended '$(job_end "$job")'"
[ -z "$(ls -A "$MB_RATEL_DIR" 2>/dev/null)" ] || fail "state files left in MB_RATEL_DIR: $(ls "$MB_RATEL_DIR")"

# 2. a host budget below one layer's working set fails the job
submit "mb-ratel.sbatch with --host-mem 64K" 2 job_scripts/mb-ratel.sbatch --model gpt-tiny --batch 2 --host-mem 64K
has '--host-mem: 65536 bytes is below one layer.s working set; the smallest that fits is [0-9]+' \
  "the job says which budget and the smallest that fits"
[ "$(job_end "$job")" = "FAILED 2:0" ] || fail "the over-budget job ended '$(job_end "$job")', not 'FAILED 2:0'"
acct=$(sacct -n -X -P -j "$job" -o State,ExitCode 2>/dev/null | head -1)
case $acct in
  "") echo "note: no accounting here (sacct): the job's end checked by scontrol only" ;;
  FAILED\|2:0) ;;
  *) fail "sacct says '$acct', not 'FAILED|2:0'" ;;
esac
finish
