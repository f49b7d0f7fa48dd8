# Issue 19's primary setup at tiny scale: reproduce/disdp/run.sh --vcluster
# runs gpt-tiny's zero3-serial and disdp with every role on its own node of
# tools/vcluster (2 workers, 1 switch, 1 PS on 4 namespaced nodes), each run
# a job of mb-zero.sbatch through the vcluster's Slurm, with no pacing in the
# process and each node's link shaped by tc tbf at mb-zero's auto rate (the
# study adds twice it; --rates 1 keeps the test short), the switch's and the
# PS's nodes at 2x it (run.sh's default --ports 2: a port per worker).
# Every run validates against the one-rank reference; each result file
# names the 4 hosts, nnodes=4 and the tc rates in its emulation, and the
# model priced each role's link at its own node's rate;
# the bytes each worker sent equal the closed form; compare.md has a row per
# mode and rate (link "tc R"); the cluster is down afterwards with nothing left.
# Skips (77) when not root, without namespaces, a bridge, sshd, Slurm or
# the study's python.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../integration/vcluster.inc"
vc_prereqs
vc_need_slurm
command -v tc >/dev/null 2>&1 || vc_skip "tc not installed (make deps installs iproute2)"
py=$(reproduce/python.sh 2>&1) || vc_skip "$py"
# run.sh takes the cluster down itself; this is for a test killed midway
trap '"$VC" down >/dev/null 2>&1' EXIT
trap 'exit 143' TERM INT
unset MB_FAULT_INJECT MB_ZERO_DIR
out=$T/rep
expect 0 "run.sh --vcluster --scale tiny" -- timeout 300 reproduce/disdp/run.sh --vcluster --scale tiny \
  --modes "zero3-serial disdp" --rates 1 --out "$out"
has 'vcluster up: vcluster: 4 nodes, veth\+bridge, tc tbf [0-9.]+ Gbit/s' "the links were shaped by tc"
rate=$(sed -n 's/^# --link-gbps auto: \([0-9.e+-]*\) GB\/s.*/\1/p' "$out/rate-probe.log" | awk '{printf "%.4f", 8 * $1}')
[ -n "$rate" ] || fail "no auto rate in the probe's log"
a() { h5dump -a "/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): //p'; }
for g in "$rate"; do
  for m in zero3-serial disdp; do
    f=$out/results/$m-tc$g.h5 log=$out/$m-tc$g.log
    [ -f "$f" ] || { fail "$m at $g Gbit/s: no result file $f"; continue; }
    grep -Eq '^.* pass$' "$log" || fail "$m at $g Gbit/s: no validated case in $log"
    grep -Eq ' (fail|FAIL)$' "$log" && fail "$m at $g Gbit/s: a case failed its check"
    [ "$(a "$f" nnodes)" = 4 ] || fail "$m at $g Gbit/s: nnodes $(a "$f" nnodes), not 4"
    [ "$(a "$f" hostnames)" = '"node1,node2,node3,node4"' ] ||
      fail "$m at $g Gbit/s: hostnames $(a "$f" hostnames), not one role per node"
    a "$f" emulation | grep -q "tc tbf $g Gbit/s" || fail "$m at $g Gbit/s: the emulation does not name the tc rate: $(a "$f" emulation)"
    g2=$(awk -v g="$g" 'BEGIN {printf "%.4f", 2 * g}')
    a "$f" emulation | grep -q "tc tbf $g Gbit/s, node3 tbf $g2 Gbit/s, node4 tbf $g2 Gbit/s" ||
      fail "$m at $g Gbit/s: the emulation does not name the switch's and PS's nodes at $g2: $(a "$f" emulation)"
    # the model's links, as mb-zero read them from its ranks' own nodes
    for k in worker:$g switch:$g2 ps:$g2; do
      d=$(h5ls -r "$f" 2>/dev/null | awk -v n="/model_${k%%:*}_link_gbps" '$1 ~ n"$" {print $1; exit}')
      v=$([ -n "$d" ] && h5dump -d "$d" "$f" 2>/dev/null | sed -n 's/^ *(0): //p')
      awk -v v="$v" -v w="${k#*:}" 'BEGIN {exit !(v > 0 && v / w - 1 < 1e-4 && w / v - 1 < 1e-4)}' ||
        fail "$m at $g Gbit/s: model_${k%%:*}_link_gbps '$v', its node's rate is ${k#*:}"
    done
    a "$f" emulation | grep -q "paced per direction" && fail "$m at $g Gbit/s: paced in the process as well as by tc"
    # bytes each worker sent per step against the closed form, W = 2:
    # ZeRO-3 3S(W-1)/W, DisDP S (S: the parameters' wire bytes)
    sent=$(sed -n 's/^#   per step (worker 0):.* sent \([0-9]*\) bytes (wire S = \([0-9]*\)).*/\1 \2/p' "$log")
    read -r n s <<<"$sent"
    want=$s
    [ $m = zero3-serial ] && want=$((3 * ${s:-0} / 2))
    [ -n "$n" ] && [ "$n" = "$want" ] || fail "$m at $g Gbit/s: sent '$n' bytes per step, the closed form gives $want (S = $s)"
    grep -Eq "^\| $m \| tc $g \| [0-9.e+]+ \(switch [0-9.e+]+, PS [0-9.e+]+\) \|.* \| pass \|$" "$out/compare.md" || fail "compare.md has no row for $m at tc $g"
  done
done
[ -s "$out/disdp.png" ] || fail "plot.py wrote no figure"
[ -e "$VCSTATE" ] && fail "run.sh left the vcluster up ($VCSTATE)"
ip -o link show 2>/dev/null | grep -q mbvc0 && fail "run.sh left the bridge mbvc0"
expect 2 "--vcluster with --slurm" -- reproduce/disdp/run.sh --vcluster --slurm --out "$T/bad"
expect 2 "a node-private --dir" -- reproduce/disdp/run.sh --vcluster --dir /tmp/x --out "$T/bad"
expect 2 "an unknown mode" -- reproduce/disdp/run.sh --modes "zero3-serial nope" --out "$T/bad"
expect 2 "a rate of 0" -- reproduce/disdp/run.sh --vcluster --rates "1 0" --out "$T/bad"
expect 2 "--ports 0.5" -- reproduce/disdp/run.sh --vcluster --ports 0.5 --out "$T/bad" && has -- '--ports' "names the flag"
finish
