# Issue 20's weak-scaling sweep across 1, 2 and 4 emulated nodes: on
# tools/vcluster's real Slurm (4 namespaced nodes), job_scripts/mb-polybench.sbatch
# runs P = 1, 2, 4 at one rank per node (--nodes=P --ntasks-per-node=1), as
# reproduce/dace/run.sh --vcluster does, at DaCe's validation sizes: each job
# launches srun -n P -N P, every case validates, and each result file names
# P hosts, nnodes=P, the node list Slurm gave it and the cluster's emulation;
# a P the allocation cannot hold is exit 2 naming --nodes. Skips (77) when
# not root, without namespaces, a bridge, sshd or Slurm.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/vcluster.inc"
vc_prereqs
vc_need_slurm
vc_up 4
eval "$("$VC" env)"   # SLURM_CONF, TCP on the bridge, yielding ranks, MB_VCLUSTER_EMULATION for the jobs
S=$VCSTATE/shared   # every node sees it; their /tmp are their own
export MB_RESULTS=$S/results MB_SCALE_DOWN=100 MB_ITERS=2 MB_WARMUP=1 MB_KERNELS=gemm,atax,jacobi_2d
export MB_BIN=$BIN
unset MB_FAULT_INJECT
js=$(cd "$(dirname "$0")/../.." && pwd)/job_scripts/mb-polybench.sbatch
declare -A nodelist=([1]='"node1"' [2]='"node[1-2]"' [4]='"node[1-4]"')
declare -A hosts=([1]='"node1"' [2]='"node1,node2"' [4]='"node1,node2,node3,node4"')
a() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): //p'; }
for p in 1 2 4; do
  # an array of one task: the script's #SBATCH --array would make seven
  expect 0 "mb-polybench.sbatch P=$p on $p nodes" -- env MB_PS=$p timeout 300 sbatch --parsable --wait --array=0 \
    --nodes=$p --ntasks-per-node=1 -o "$S/P$p.out" "$js" || { cat "$S/P$p.out" >&2 2>/dev/null; continue; }
  job=$(head -n1 "$T/out")
  job=${job%%;*}_0
  f=$MB_RESULTS/$job/mb-polybench-P$p.h5
  grep -q "+ srun --mpi=pmix -n $p -N $p -c 1 " "$S/P$p.out" || fail "P=$p: not launched with srun -n $p -N $p -c 1"
  grep -Eq ' (fail|FAIL)$' "$S/P$p.out" && fail "P=$p: a case failed its check"
  # atax, gemm summa (and pblas with ScaLAPACK), jacobi_2d: one row each, checked
  for k in "atax allreduce" "gemm summa" "jacobi_2d halo"; do
    grep -q "^# $k  P=$p " "$S/P$p.out" || fail "P=$p: no $k case in the job's output"
  done
  [ "$(grep -cE '^ +[0-9]+ .* pass$' "$S/P$p.out")" -ge 3 ] || fail "P=$p: fewer than 3 validated cases in the job's output"
  [ -f "$f" ] || { fail "P=$p: no result file $f"; continue; }
  [ "$(a "$f" nnodes)" = "$p" ] || fail "P=$p: nnodes $(a "$f" nnodes)"
  [ "$(a "$f" hostnames)" = "${hosts[$p]}" ] || fail "P=$p: hostnames $(a "$f" hostnames), expected ${hosts[$p]}"
  [ "$(a "$f" slurm_nodelist)" = "${nodelist[$p]}" ] || fail "P=$p: slurm_nodelist $(a "$f" slurm_nodelist)"
  a "$f" emulation | grep -q 'vcluster: 4 nodes' || fail "P=$p: the emulation does not name the vcluster: $(a "$f" emulation)"
  echo "P=$p: job $job, hostnames $(a "$f" hostnames)"
done
# P = 4 at one rank per node on 2 nodes: exit 2 naming --nodes
expect 2 "P=4 on 2 nodes" -- env MB_PS=4 timeout 120 sbatch --wait --array=0 --nodes=2 --ntasks-per-node=1 \
  -o "$S/P4-2.out" "$js"
grep -q "P=4 needs 4 nodes .*sbatch --nodes=4" "$S/P4-2.out" || fail "P=4 on 2 nodes: --nodes not named"
vc_down_clean
finish
