# reproduce/disdp at tiny scale (< 1 min): run.sh measures --interference and
# every mode mb-zero has at two link rates through the job script, plot.py
# writes the PNG and PDF, compare.md has the paper's numbers beside ours,
# the issue's ratios, a model-against-measurement row per mode and rate with
# the counted bytes equal to the closed form, and the model on the paper's
# inputs; the ratios rest on the median step; a bad scale, a --beside
# without results and a --micro of 0 are refused with exit 2.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/reproduce.inc"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
tiny_study disdp MB_ZERO_DIR '| +41% |' '| 65% |' '| −30% |' '| 3.98× |'
grep -Eq '^\| \[abs\] \| collective time beside a GEMM \| \+41% \| [-+][0-9]+% \|' "$md" ||
  fail "no measured allgather slowdown beside a GEMM"
modes="zero3-serial zero3-overlap zero-offload"
known=$("$BIN"/mb-zero --mode '?' 2>&1 || true)
[[ $known == *"|disdp"* ]] && modes+=" disdp"
for m in $modes; do
  for link in auto paced; do
    # the counted bytes per step equal the closed form exactly: "N / N"
    grep -Eq "^\| $m \| $link \| [0-9.e+]+ \| [0-9.]+ \| [0-9.]+ \| [-+][0-9]+% \((met|missed)\) \|.* \| ([0-9]+) / \2 \| pass \|$" "$md" ||
      fail "no model-vs-measured row with bytes = closed form for $m at the $link link"
  done
done
grep -Eq '^\| auto \| zero3-serial step / \(compute \+ wire \+ optimizer, each alone\) \| ≤ 1.1 \| [0-9.]+ \|' "$md" ||
  fail "no zero3-serial ratio"
grep -Eq '^\| 100 \| disdp \| [0-9.]+ \| 1.00× \|' "$md" || fail "no model on the paper's inputs"
grep -q 'load average' "$md" || fail "compare.md lacks uptime"
# the ratios rest on worker 0's median step over the timed steps,
# its quartiles beside it
grep -Eq '^\| auto \| zero3-serial step / .* \| [0-9.]+ \[[0-9.]+–[0-9.]+, n=[0-9]+\] / \(' "$md" ||
  fail "the zero3-serial ratio does not give the median step, its quartiles and the timed steps"
expect 2 "a bad scale" -- reproduce/disdp/run.sh --scale huge --out "$T/bad"
expect 2 "--beside without results" -- reproduce/disdp/run.sh --beside "$T/none" --out "$T/bad"
expect 2 "a micro-batch of 0 sequences" -- reproduce/disdp/run.sh --micro 0 --out "$T/bad"
finish
