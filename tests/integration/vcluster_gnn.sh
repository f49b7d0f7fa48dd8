# mb-gnn data-parallel on tools/vcluster, one rank on each of 2 nodes: it
# trains and validates (every feature row verified, exit 0); the result
# file names both hosts, nnodes=2 and time in the gradient allreduce every
# epoch; node2's link carried at least the gradients node2 must send
# (each epoch allreduces the packed gradients at least once; of 2 ranks
# each sends at least half); each node's --mem-budget is its own: both
# ranks created one (/config/budget_ranks, two different cgroups), where 2
# ranks on one node share the first one's. Skips (77) when not root or when
# namespaces, a bridge or sshd are unavailable.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vcluster.inc"
vc_prereqs
vc_up 2
S=$VCSTATE/shared
G=$BIN/mb-gnn
D=$S/gnn-data
hidden=256 epochs=3
expect 0 "generate" -- "$G" --generate --data "$D" --scale 11 --feat-dim 128 --classes 4 --train-frac 0.1 \
  --files 2 --stripe 16K -o "$S/gen.h5" || finish
run=(--data "$D" --batch 64 --fanout 5,5 --hidden $hidden --lr 0.01 -n $epochs -w 0 --eval-nodes 200
     --system hyperion --profile-batches 2 --mem-budget 384M)

# bytes node2 sent (the host side of its veth receives them)
sent() { cat /sys/class/net/mbvc0-n2/statistics/rx_bytes; }

before=$(sent)
f=$S/gnn2.h5
expect 0 "mb-gnn, 1 rank on each of 2 nodes" -- timeout 300 "$VC" mpirun -np 2 --map-by ppr:1:node --bind-to none \
  "$G" "${run[@]}" -o "$f"
after=$(sent)
has ' pass$' "the case validates"
[ "$(grep -c '^# epoch [0-9]* hyperion: .*verified [0-9]* rows (0 bad)' "$T/out")" = $epochs ] ||
  fail "not $epochs epochs with every row verified"
if [ -f "$f" ]; then
  [ "$(h5dump -a /nnodes "$f" 2>/dev/null | sed -n 's/^ *(0): //p')" = 2 ] || fail "nnodes is not 2"
  [ "$(h5dump -a /hostnames "$f" 2>/dev/null | sed -n 's/^ *(0): //p')" = '"node1,node2"' ] || fail "hostnames are not node1,node2"
  c=$(casename "$f" hyperion)
  for ((e = 0; e < epochs; e++)); do
    a=$(metric "$f" "$c" allreduce_s $e)
    awk -v a="$a" 'BEGIN { exit !(a > 0) }' || fail "epoch $e: allreduce_s '$a' is not > 0"
  done
  # 2 GraphSAGE layers of 2*in*out + out parameters: 128 -> hidden -> 4 classes
  grad=$(((2 * 128 * hidden + hidden + 2 * hidden * 4 + 4) * 4))
  floor=$((epochs * grad / 2))
  echo "node2 sent $((after - before)) B over its link; the gradients alone need at least $floor B ($grad B per allreduce)"
  [ $((after - before)) -ge $floor ] || fail "node2's link carried $((after - before)) B, less than the gradients' $floor B"
  br=$(attr "$f" budget_ranks)
  re='^"rank 0 on node1 created ([^;]*); rank 1 on node2 created (.*)"$'
  if [[ $br =~ $re ]]; then
    b0=${BASH_REMATCH[1]} b1=${BASH_REMATCH[2]}
    [[ $b0 == /* ]] && [ "$b0" = "$b1" ] && fail "both nodes' budgets are one cgroup: $b0"
  else
    fail "budget_ranks does not say each node created its own budget: $br"
  fi
  peak=$(metric "$f" "$c" budget_peak_bytes)
  [ -z "$peak" ] || awk -v p="$peak" 'BEGIN { exit !(p > 0 && p <= 384 * 1048576) }' || fail "budget peak '$peak' not within 384M"
else
  fail "no result file $f"
fi

# the contrast: 2 ranks on node1 share one budget
f=$S/gnn1.h5
expect 0 "mb-gnn, 2 ranks on node1" -- timeout 300 "$VC" mpirun -np 2 --map-by ppr:2:node --bind-to none \
  "$G" "${run[@]}" -n 1 -o "$f"
br=$(attr "$f" budget_ranks)
[[ $br =~ ^\"rank\ 0\ on\ node1\ created\ ([^\;]*)\;\ rank\ 1\ on\ node1\ joined\ (.*)\"$ ]] &&
  [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || fail "2 ranks on node1 do not share one budget: $br"
vc_down_clean
finish
