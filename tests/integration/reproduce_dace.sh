# reproduce/dace at tiny scale: run.sh measures P = 1, 2, 4 through the job
# script, writes movebench.csv in DaCe's schema (every kernel at every P),
# the two figures and compare.md with the papers' numbers beside ours; a
# bad scale is exit 2.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
out=$T/rep
expect 0 "run.sh --scale tiny" -- timeout 600 reproduce/dace/run.sh --scale tiny --out "$out"
for f in weak-scaling weak-scaling-efficiency; do
  for x in png pdf; do [ -s "$out/$f.$x" ] || fail "plot.py wrote no $f.$x"; done
done
file "$out/weak-scaling.png" | grep -q 'PNG image' || fail "weak-scaling.png is not a PNG"
csv=$out/movebench.csv
for k in atax bicg doitgen gemm gemver gesummv jacobi_1d jacobi_2d k2mm k3mm mvt heat_3d; do
  for p in 1 2 4; do
    n=$(grep -c "^$k,movebench_[a-z]*,$p," "$csv")
    [ "$n" -ge 10 ] || fail "movebench.csv: $n rows of $k at P=$p, expected 10 per variant"
  done
done
md=$out/compare.md
for claim in '93.16%' '23,328 cores' '32 nodes, 64 processes' '**unverified**'; do
  grep -qF -- "$claim" "$md" || fail "compare.md lacks $claim"
done
grep -Eq '^\| gemm \| movebench_summa \| [0-9.e-]+ \| [0-9.e-]+ \| [0-9.e-]+ \| [0-9.]+ \| [0-9.]+ \|$' "$md" ||
  fail "compare.md has no gemm summa row with three medians and two efficiencies"
grep -q 'load average' "$md" || fail "compare.md lacks uptime"
expect 2 "a bad scale" -- reproduce/dace/run.sh --scale huge --out "$T/bad"
expect 2 "an unknown flag" -- reproduce/dace/run.sh --nodes 3 --out "$T/bad"
finish
