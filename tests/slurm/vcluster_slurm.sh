# The real Slurm of tools/vcluster: slurmctld on the host side of the
# bridge, a slurmd in each of 2 namespaced nodes, munged shared. sbatch -N 2
# runs hostname on both nodes; srun --mpi=pmix places mb-coll's 4 ranks
# 2 per node, validated, with both hosts and the node list in the result
# file; job_scripts/mb-coll.sbatch -N 2 runs through it. Skips (77) when
# not root, without namespaces, a bridge, sshd or Slurm.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/vcluster.inc"
vc_prereqs
vc_need_slurm sinfo
vc_up 2
eval "$("$VC" env)"   # SLURM_CONF, TCP on the bridge, yielding ranks (issue 17), the emulation, for the jobs
S=$VCSTATE/shared   # job output must be where every node sees it: their /tmp are their own
expect 0 "sinfo" -- sinfo -h -N -o '%N %t' && has '^node1 idle' "node1 idle" && has '^node2 idle' "node2 idle"

# submit DESCRIPTION [sbatch args...]: sbatch --wait; the job's output in $T/out
submit() {
  local what=$1 job
  shift
  expect 0 "$what" -- timeout 300 sbatch --wait -o "$S/job-%j.out" "$@" || return 1
  job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$T/out")
  [ -n "$job" ] || { fail "$what: no job id in sbatch's output"; return 1; }
  cp "$S/job-$job.out" "$T/out"
}

# sbatch -N 2: one task per node, two different hosts.
submit "sbatch -N 2 hostname" -N 2 --ntasks-per-node=1 --wrap 'srun hostname'
[ "$(sort -u "$T/out" | grep -cE '^node[12]$')" = 2 ] || fail "hostname ran on $(sort -u "$T/out" | tr '\n' ' ') rather than node1 and node2"

# srun --mpi=pmix: 4 ranks, 2 per node, mb-coll validated.
f=$S/srun.h5
submit "srun --mpi=pmix mb-coll on 2 nodes" -N 2 --ntasks-per-node=2 \
  --wrap "srun --mpi=pmix $BIN/mb-coll --algo mpi,ring,hier --sizes 8,64K -n 3 -w 1 -o $f"
for a in mpi ring hier; do has "algo=$a " "algorithm $a ran under srun"; done
grep -E '^ +[0-9]+ .* (fail|FAIL)' "$T/out" && fail "a case failed its check under srun"
if [ -f "$f" ]; then
  [ "$(h5dump -a /nnodes "$f" 2>/dev/null | sed -n 's/^ *(0): //p')" = 2 ] || fail "srun: nnodes is not 2"
  hosts=$(h5dump -a /hostnames "$f" 2>/dev/null | sed -n 's/^ *(0): //p')
  [ "$hosts" = '"node1,node1,node2,node2"' ] || fail "srun: hostnames $hosts, not 2 ranks on each node"
  nl=$(h5dump -a /slurm_nodelist "$f" 2>/dev/null | sed -n 's/^ *(0): //p')
  [ "$nl" = '"node[1-2]"' ] || fail "srun: slurm_nodelist $nl"
else
  fail "no result file $f"
fi

# The project's job script with -N 2.
export MB_RESULTS=$S/results MB_ITERS=3 MB_WARMUP=1 MB_SIZES=8,1024 MB_COLLS=allreduce
unset MB_FAULT_INJECT
submit "job_scripts/mb-coll.sbatch -N 2" -N 2 "$(cd "$(dirname "$0")/../.." && pwd)/job_scripts/mb-coll.sbatch"
has 'srun --mpi=pmix' "the job script launched with srun --mpi=pmix"
grep -E '^ +[0-9]+ .* (fail|FAIL)' "$T/out" && fail "a case of mb-coll.sbatch failed its check"
r=$(ls "$S"/results/*/mb-coll.h5 2>/dev/null | head -n1)
if [ -n "$r" ]; then
  [ "$(h5dump -a /nnodes "$r" 2>/dev/null | sed -n 's/^ *(0): //p')" = 2 ] || fail "mb-coll.sbatch: nnodes is not 2"
else
  fail "mb-coll.sbatch wrote no result under $S/results"
fi
vc_down_clean
finish
