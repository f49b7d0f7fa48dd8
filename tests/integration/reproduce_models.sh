# reproduce/models at tiny scale (docs/models.md): run.sh runs the TPC
# model's calibration and held-out points, compare.md gives in-sample and
# held-out errors apart and every held-out point, the figure is drawn; the
# held-out draw never overlaps the calibration set (every scale, many
# seeds); each result file records its point's set and tpc_rows refuses a
# file whose set differs; compare.py refuses a row with a missing number;
# a bad --scale or --seed is exit 2.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
expect 2 "bad scale" -- reproduce/models/run.sh --scale huge && has "scale" "names --scale"
expect 2 "bad seed" -- reproduce/models/run.sh --seed x && has "seed" "names --seed"
# the draw: disjoint from the calibration set and the smoke run, seeded (same seed, same points)
expect 0 "draws disjoint from calibration" -- "$py" - <<'PY'
from reproduce.models import grid
for scale in grid.DEVELOPMENT:
    for seed in range(1, 41):
        cal, held, n = grid.points(scale, seed)
        taken = {grid.key(p) for p in cal} | {grid.key(p) for p in grid.SEEN}
        assert held and not taken & {grid.key(p) for p in held}, (scale, seed)
        assert len({grid.key(p) for p in held}) == len(held), (scale, seed)
        assert [grid.key(p) for p in held] == [grid.key(p) for p in grid.points(scale, seed)[1]], (scale, seed)
    assert grid.points(scale, 1)[1] != grid.points(scale, 2)[1] or grid.points(scale, 1)[2] <= 2, scale
PY
expect 0 "run.sh --scale tiny" -- env BUILD="${BUILD:-build}" reproduce/models/run.sh --scale tiny --out "$T/rep" --data "$T/data" && {
  md=$T/rep/compare.md csv=$T/rep/models.csv
  for x in png pdf; do [ -s "$T/rep/models.$x" ] || fail "no models.$x"; done
  file "$T/rep/models.png" | grep -q 'PNG image' || fail "models.png is not a PNG"
  [ "$(head -1 "$csv")" = "model,point,set,predicted_s,measured_s" ] || fail "models.csv's header"
  [ "$(grep -c '^tpc,.*,calibration,' "$csv")" = 2 ] || fail "two calibration rows (hyperion, nopipe)"
  [ "$(grep -c '^tpc,.*,heldout,' "$csv")" = 2 ] || fail "two held-out rows"
  grep -Eq '^\| tpc \| 2 \| [0-9.]+% \| [0-9.]+% \| [0-9.]+% \| 2 \| [0-9.]+% \| [0-9.]+% \| [0-9.]+% \| ≤ 10% / ≤ 20% \| (met|missed) \|$' "$md" ||
    fail "compare.md lacks the in-sample and held-out errors side by side"
  # every held-out row of the CSV is in compare.md with its own numbers and error
  "$py" - "$csv" "$md" <<'PY' || fail "compare.md's held-out points differ from models.csv"
import csv, sys
md = open(sys.argv[2]).read().splitlines()
for r in csv.DictReader(open(sys.argv[1])):
    if r["set"] == "heldout":
        p, m = float(r["predicted_s"]), float(r["measured_s"])
        want = f"| {r['model']} | {r['point']} | {p:.4g} | {m:.4g} | {100 * abs(p - m) / m:.1f}% |"
        assert want in md, want
PY
  # the held-out names (configurations) are none of the calibration ones
  awk '$2 == "calibration" {c[$1] = 1} $2 == "heldout" && ($1 in c) {bad = 1} END {exit bad}' "$T/rep/tpc/points.txt" ||
    fail "a held-out point is a calibration configuration"
  # the result files record the point's set; tpc_rows refuses a file whose set differs
  held=$(ls "$T/rep/tpc"/heldout-*.log | head -1)
  res=$(sed -n 's/^# result file: //p' "$held" | tail -1)
  [ "$(attr "$res" model_point_set)" = '"heldout"' ] || fail "the held-out run's model_point_set: $(attr "$res" model_point_set)"
  attr "$res" model_profile | grep -q 'this-machine' || fail "the run's model_profile: $(attr "$res" model_profile)"
  expect 1 "tpc_rows refuses a set mismatch" -- "$py" -m reproduce.models.tpc_rows --point x --set calibration "$res" &&
    has "model_point_set is 'heldout', not 'calibration'" "names the mismatch"
}
printf 'model,point,set,predicted_s,measured_s\ntpc,a,heldout,,1\n' >"$T/bad.csv"
expect 1 "compare.py refuses a row without a prediction" -- "$py" -m reproduce.models.compare -o "$T/b.md" --plot "$T/b" \
  --csv "$T/b.csv" "$T/bad.csv" && has "bad.csv:2" "names the row"
finish
