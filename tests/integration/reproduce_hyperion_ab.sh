#!/bin/bash
# reproduce/hyperion/ab.sh (issue 15's old/new A/B): every bad input is
# exit 2 with one line naming the flag, before any work (no old worktree
# is made); ab.py's table on the committed reference, given as both sides
# (each side: the systems run and the two mmap pairs), has each ratio as
# the result files' own t_median quotient, the mmap ratios from the pairs,
# and new / old 1.000. The A/B itself (an old tree built, both binaries
# run) is left to the lead's quiet run: minutes, most of them the build.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
AB=reproduce/hyperion/ab.sh
wt_before=$(git worktree list 2>/dev/null | wc -l)
expect 2 "bad scale" -- "$AB" --scale huge --out "$T/x" && has "^ab.sh: --scale must be tiny or small, not 'huge'" "names --scale"
expect 2 "reps 0" -- "$AB" --reps 0 --out "$T/x" && has "^ab.sh: --reps must be 1 to 99" "names --reps"
expect 2 "reps x" -- "$AB" --reps x --out "$T/x" && has "^ab.sh: --reps must be 1 to 99" "names --reps"
expect 2 "not a commit" -- "$AB" --old no-such-commit-here --out "$T/x" && has "^ab.sh: --old: 'no-such-commit-here' is not a commit" "names --old"
expect 2 "mmap at tiny" -- "$AB" --scale tiny --mmap --out "$T/x" && has "^ab.sh: --mmap runs at --scale small only" "names --mmap"
expect 2 "no value" -- "$AB" --reps && has "^ab.sh: --reps needs a value" "names the flag without a value"
expect 2 "unknown option" -- "$AB" --frob && has "^ab.sh: unknown option '--frob'" "names the option"
mkdir -p "$T/y/old"
expect 2 "results there" -- "$AB" --scale tiny --out "$T/y" && has "^ab.sh: --out: .*/old exists" "refuses to overwrite"
[ "$(git worktree list 2>/dev/null | wc -l)" = "$wt_before" ] || fail "a refused run left a git worktree"
[ "$(grep -c . "$T/out")" = 1 ] || fail "a refusal printed more than one line"

ref=reproduce/hyperion/reference
for s in a b; do
  mkdir -p "$T/$s"
  cp "$ref/systems.h5" "$ref/mmap-pair.h5" "$ref/mmap-random-pair.h5" "$T/$s/"
done
expect 0 "ab.py on the reference as both sides" -- "$py" -m reproduce.hyperion.ab -o "$T/ab.md" --note "a note" \
  --label old "$T/a" --label new "$T/b"
md=$T/ab.md
grep -q '^- a note$' "$md" || fail "ab.md lacks the note"
# the expected cells, from the files' own /summary
"$py" - "$ref" >"$T/want" <<'PY' || fail "could not read the reference's summaries"
import sys, h5py
def tm(path):
    with h5py.File(path) as f:
        return {r["system"].decode(): float(r["t_median"]) for r in f["summary"][()]}
ref = sys.argv[1]
s, p, q = tm(f"{ref}/systems.h5"), tm(f"{ref}/mmap-pair.h5"), tm(f"{ref}/mmap-random-pair.h5")
rows = [("nopipe / hyperion", s["nopipe"] / s["hyperion"]), ("inmem / hyperion", s["inmem"] / s["hyperion"]),
        ("hyperion / topo-first", s["hyperion"] / s["topo-first"]), ("mmap / hyperion", p["mmap"] / p["hyperion"]),
        ("mmap-random / hyperion", q["mmap-random"] / q["hyperion"])]
for name, v in rows:
    print(f"| {name} | {v:.3f} | {v:.3f} | {v:.3f} | {v:.3f} | 1.000 |")
PY
while IFS= read -r row; do
  grep -qF "$row" "$md" || fail "ab.md lacks the row '$row'"
done <"$T/want"
grep -q '^| hyperion / floor | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | 1.000 |$' "$md" || fail "ab.md lacks hyperion / floor"
expect 1 "ab.py on an empty side" -- "$py" -m reproduce.hyperion.ab -o "$T/ab2.md" --label old "$T/a" --label new "$T/y/old"
finish
