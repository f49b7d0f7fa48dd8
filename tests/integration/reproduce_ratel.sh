# reproduce/ratel at tiny scale (< 1 min): run.sh measures every figure's
# runs through the job script, plot.py writes the PNG and PDF, compare.md
# has the paper's numbers beside ours with a predicted and measured T_f/T_b
# row per policy; a bad scale is refused with exit 2.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
out=$T/rep
expect 0 "run.sh --scale tiny" -- env MB_RATEL_DIR="$T/data" reproduce/ratel/run.sh --scale tiny --out "$out"
for x in png pdf; do [ -s "$out/ratel.$x" ] || fail "plot.py wrote no $x"; done
file "$out/ratel.png" | grep -q 'PNG image' || fail "ratel.png is not a PNG"
md=$out/compare.md
[ -s "$md" ] || fail "no compare.md"
for paper in '| 2.32× |' '| 3.46× |' '| 8.02× |' '| 1.22× |' '| 175B |' '| 90-95% |'; do
  grep -qF -- "$paper" "$md" || fail "compare.md lacks the paper's $paper"
done
grep -Eq '^\| Ratel vs ZeRO-Infinity, tokens/s \| 3.46× \| [0-9.]+× \|$' "$md" || fail "no ratio of ours to ZeRO-Infinity"
grep -Eq 'gpt-[0-9]+b \(--plan' "$md" || fail "no --plan largest model"
for act in ratel swap-all inter-block recompute-all; do
  grep -Eq "^\| $act \| 2 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| pass \|$" "$md" ||
    fail "no predicted/measured T_f/T_b row for $act"
done
grep -q 'load average' "$md" || fail "compare.md lacks uptime"
expect 2 "a bad scale" -- reproduce/ratel/run.sh --scale huge --out "$T/bad"
finish
