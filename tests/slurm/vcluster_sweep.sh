# job_scripts/sweep.sh over node counts 1, 2 and 4 through the real Slurm
# of tools/vcluster (4 namespaced nodes, one rank per node): the three job
# arrays run chained and complete (--wait), the manifest names each job id
# with its node count, and each result file's provenance records the node
# list Slurm gave it (slurm_nodelist node1, node[1-2], node[1-4]), that
# many hosts (nnodes, hostnames) and its own job id; every case validates.
# Skips (77) when not root, without namespaces, a bridge, sshd or Slurm.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/vcluster.inc"
vc_prereqs
vc_need_slurm
vc_up 4
eval "$("$VC" env)"   # SLURM_CONF, TCP on the bridge, yielding ranks (issue 17), the emulation, for the jobs
S=$VCSTATE/shared   # every node sees it; their /tmp are their own
export MB_RESULTS=$S/results MB_ITERS=3 MB_WARMUP=1 MB_SIZES=8,1024 MB_COLLS=allreduce
unset MB_FAULT_INJECT
sweep=$(cd "$(dirname "$0")/../.." && pwd)/job_scripts/sweep.sh
expect 0 "sweep.sh --nodes 1,2,4 --wait" -- timeout 600 "$sweep" --nodes 1,2,4 --ntasks-per-node 1 --wait &&
  has 'all 3 job array\(s\) completed' "sweep.sh says every array completed"
manifest=$(ls "$S"/results/sweep-*.txt 2>/dev/null | head -n1)
[ -n "$manifest" ] || fail "no sweep manifest in $S/results"
declare -A want=([1]='"node1"' [2]='"node[1-2]"' [4]='"node[1-4]"')
declare -A hosts=([1]='"node1"' [2]='"node1,node2"' [4]='"node1,node2,node3,node4"')
seen=0
while read -r id n tasks _; do
  [[ $id =~ ^[0-9]+$ ]] || continue
  seen=$((seen + 1))
  f=$S/results/${id}_0/mb-coll.h5
  [ -f "$f" ] || { fail "nodes=$n: no result $f"; continue; }
  a() { h5dump -a "/$1" "$f" 2>/dev/null | sed -n 's/^ *(0): //p'; }
  [ "$(a slurm_nodelist)" = "${want[$n]:-?}" ] || fail "nodes=$n: slurm_nodelist $(a slurm_nodelist), expected ${want[$n]:-?}"
  [ "$(a nnodes)" = "$n" ] || fail "nodes=$n: nnodes $(a nnodes)"
  [ "$(a hostnames)" = "${hosts[$n]:-?}" ] || fail "nodes=$n: hostnames $(a hostnames)"
  [ "$(a slurm_job_id)" = "\"$id\"" ] || fail "nodes=$n: slurm_job_id $(a slurm_job_id), the manifest says $id"
  out=$(ls "$S"/results/mb-coll-n"$n"-"$id"_0.out 2>/dev/null)
  if [ -n "$out" ]; then
    [ "$(grep -cE '^ +[0-9]+ .* pass$' "$out")" = 2 ] || fail "nodes=$n: not 2 cases passed in $out"
  else
    fail "nodes=$n: no job output"
  fi
  echo "nodes=$n: job $id, slurm_nodelist $(a slurm_nodelist), hostnames $(a hostnames)"
done <"${manifest:-/dev/null}"
[ "$seen" = 3 ] || fail "the manifest lists $seen jobs, not 3"
vc_down_clean
finish
