# reproduce/ratel at tiny scale (< 1 min): run.sh measures every figure's
# runs through the job script, plot.py writes the PNG and PDF, compare.md
# has the paper's numbers beside ours with a predicted and measured T_f/T_b
# row per policy and the Performance section's ratios (each with met/NOT met;
# tiny numbers, not a verdict on speed); Figs. 1 and 6 have their inputs;
# deepspeed_peer.sh refuses bad input; a bad scale is refused with exit 2.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/reproduce.inc"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
tiny_study ratel MB_RATEL_DIR '| 2.32× |' '| 3.46× |' '| 8.02× |' '| 1.22× |' '| 175B |' '| 90-95% |'
grep -Eq '^\| Ratel vs ZeRO-Infinity, tokens/s \| 3.46× \| [0-9.]+× \|$' "$md" || fail "no ratio of ours to ZeRO-Infinity"
grep -Eq 'gpt-[0-9]+b \(--plan' "$md" || fail "no --plan largest model"
for act in ratel swap-all inter-block recompute-all; do
  grep -Eq "^\| $act \| 2 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| pass \|$" "$md" ||
    fail "no predicted/measured T_f/T_b row for $act"
done
grep -q 'load average' "$md" || fail "compare.md lacks uptime"
# the Performance section: each ratio of issue 18 from this run, with a verdict
grep -Eq '^Balanced batch [0-9]+: forward [0-9.]+ s, backward [0-9.]+ s, storage \(and Adam\) [0-9.]+ s' "$md" ||
  fail "compare.md lacks the stages timed alone"
for what in 'optimized\+ratel vs zero-infinity, tokens/s' 'optimized step vs forward \+ max\(backward, storage\)' \
  'optimized vs naive, batch 1: ' 'optimized vs naive, batch 2: ' 'model T_f\+T_b vs measured, act inter-block' \
  "Algorithm 1's pick vs the measured minimum" 'zero-infinity step vs the sum of its stages alone'; do
  grep -Eq "^\| $what.*\| (met|NOT met) \|$" "$md" || fail "compare.md lacks the line '$what'"
done
# Figs. 1 and 6 from their inputs: a traced run, --plan's largest layer counts
[ "$(ls "$out"/sys-ratel-b2.log 2>/dev/null)" ] && grep -q -- '--trace' "$out/sys-ratel-b2.log" ||
  fail "the middle batch's Ratel run is not traced (Fig. 1)"
[ "$(grep -cE '^[0-9]+[MG] [0-9]+$' "$out/largest.txt")" = 5 ] || fail "largest.txt lacks 5 host budgets (Fig. 6)"
# the DeepSpeed peer: never run here; bad input refused before any install
expect 2 "deepspeed_peer.sh with a bad batch" -- reproduce/ratel/deepspeed_peer.sh --model gpt-tiny --batch 0 --out "$T/ds.txt"
has "--batch: '0'" "names the flag"
[ -e "${BUILD:-build}/venv-deepspeed" ] && [ ! -f "${BUILD:-build}/venv-deepspeed/.ok" ] &&
  fail "a venv was started by a refused call"
expect 2 "a bad scale" -- reproduce/ratel/run.sh --scale huge --out "$T/bad"
finish
