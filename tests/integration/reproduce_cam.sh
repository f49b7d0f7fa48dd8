# reproduce/cam on the committed reference results: plot.py draws the figure
# (PNG and PDF), compare.py writes compare.md with CAM's numbers next to
# ours; a case whose check failed is shown as such; run.sh rejects a bad
# scale; the job script refuses without the program.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/reproduce.inc"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
ref=reproduce/cam/reference/results
[ -d "$ref" ] && ls "$ref"/*.h5 >/dev/null 2>&1 || { fail "no committed reference in $ref"; finish; }

figure_and_compare cam "$ref"
grep -q '| CAM (abstract, Fig. 10b) | GEMM: 1.84×' "$T/compare.md" || fail "compare.md lacks CAM's GEMM number"
grep -q '≈ 20 GB/s' "$T/compare.md" || fail "compare.md lacks CAM's raw throughput"
grep -Eq '^\| gemm \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+× ' "$T/compare.md" ||
  fail "compare.md lacks our gemm row with every mode and the ratio to the bound"
grep -Eq '^\| sort \| .* \| pass \|$' "$T/compare.md" || fail "compare.md lacks our sort row"
grep -Eq 'async / max\(compute, io\) [0-9.]+ \((within|not within) 1.15\)' "$T/compare.md" || fail "no overlap verdict"
# our own numbers, read from the result files here, in compare.md: each
# app's medians per phase and mode with async / max(compute, io), one I/O
# row per I/O case measured, and the CPU of the files' /topology
ours() { # COMPARE.MD RESULT...: exit 1 naming the first of our values compare.md lacks
  "$py" - "$@" <<'PY'
import re, sys, h5py
md, files = sys.argv[1], sys.argv[2:]
text = open(md).read()
bad, io_cases, cpus = [], 0, set()
for path in files:
    with h5py.File(path) as f:
        s = f["summary"][()]
        t = f["topology"][()]
        cpus.add(re.search(r'name="CPUModel" value="([^"]*)"', t.decode() if isinstance(t, bytes) else str(t)).group(1))
    med = {r["case"].decode(): r["t_median"] for r in s}
    apps = {c.split("/")[0] for c in med if c.split("/")[0] in ("gemm", "sort", "gather")}
    io_cases += sum(1 for r in s if r["app"] in (b"io", b""))
    for app in sorted(apps):
        line = next((l for l in text.splitlines() if l.startswith(f"| {app} | ")), "")
        m = {k: med[f"{app}/{k}"] for k in ("compute", "io", "posix", "sync", "async")}
        want = [f"| {m['compute']:.4f} | {m['io']:.4f} | {max(m['compute'], m['io']):.4f} | {m['posix']:.4f} | "
                f"{m['sync']:.4f} | {m['async']:.4f} | {m['async'] / max(m['compute'], m['io']):.2f}× |"]
        bad += [f"{app}: row lacks '{w}': {line}" for w in want if w not in line]
rows = [l for l in text.splitlines() if re.match(r"^\| [0-9]+ \| [0-9]+ [KMG]?i?B \| [a-z]+ \| ", l)]
if len(rows) != io_cases:
    bad.append(f"{len(rows)} I/O rows, the files hold {io_cases} I/O cases")
bad += [f"our CPU '{c}' is not named" for c in cpus if f"Our machine: {c} (" not in text]
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
ours "$T/compare.md" "$ref"/*.h5 >"$T/ours" || { fail "compare.md lacks our own values"; cat "$T/ours" >&2; }
# ...and the same check sees a wrong value: gemm's async median changed
sed -E 's/^(\| gemm( \| [0-9.]+){5}) \| [0-9.]+ \|/\1 | 9.9999 |/' "$T/compare.md" >"$T/wrong.md"
ours "$T/wrong.md" "$ref"/*.h5 >/dev/null && fail "the check of our values missed a wrong gemm median"

# A failed check in the input shows: the reference's gemm/async marked fail.
one=$(grep -l '"gemm/async"' "$ref"/*.h5 2>/dev/null | head -1)
[ -n "$one" ] || one=$(for f in "$ref"/*.h5; do h5dump -d /summary "$f" 2>/dev/null | grep -q '"gemm/async"' && echo "$f"; done | head -1)
"$py" - "$one" "$T/bad.h5" <<'PY' || fail "could not build a file with a failed check"
import shutil, sys, h5py
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    dt = f["summary"].dtype
    s = f["summary"][()]
    for i, c in enumerate(s["case"]):
        if c == b"gemm/async":
            s["check"][i] = b"fail"
    del f["summary"]
    f.create_dataset("summary", data=s, dtype=dt)
PY
expect 0 "compare.py with a failed case" -- "$py" -m reproduce.cam.compare -o "$T/bad.md" "$T/bad.h5"
grep -Eq '^\| gemm \| .*fail' "$T/bad.md" || fail "compare.md hides the failed check"
expect 0 "plot.py with a failed case" -- "$py" -m reproduce.cam.plot -o "$T/bad" "$T/bad.h5"

# The apps' files from mb-ooc (benchmark=mb-ooc) read as the committed
# ones from before it split off mb-aio (benchmark=mb-aio).
"$py" - "$one" "$T/ooc.h5" <<'PY' || fail "could not build an mb-ooc file"
import shutil, sys, h5py
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    f.attrs["benchmark"] = "mb-ooc"
PY
expect 0 "compare.py on an mb-ooc file" -- "$py" -m reproduce.cam.compare -o "$T/ooc.md" "$T/ooc.h5"
grep -Eq '^\| gemm \| [0-9.]+ \|' "$T/ooc.md" || fail "compare.md lacks the gemm row of an mb-ooc file"
expect 0 "plot.py on an mb-ooc file" -- "$py" -m reproduce.cam.plot -o "$T/ooc" "$T/ooc.h5"

expect 2 "run.sh: bad scale" -- reproduce/cam/run.sh --scale huge
has "scale must be" "names --scale"
MB_BIN="$T/nowhere" expect 2 "job script without the program" -- bash job_scripts/mb-aio.sbatch --sizes 4K
has "mb-aio not found" "says what is missing"
MB_BIN="$T/nowhere" expect 2 "mb-ooc's job script without the program" -- bash job_scripts/mb-ooc.sbatch --app gemm
has "mb-ooc not found" "says what is missing"
# schema 1 (measurements in /config) is read beside schema 2 (/metrics)
old=tests/data/schema1-gemm.h5
expect 0 "mb-report on a schema-1 file" -- "$BIN/mb-report" "$old" && has "^gemm/async " "its gemm/async row"
expect 0 "mb-report --metrics on a schema-1 file" -- "$BIN/mb-report" --metrics "$old" &&
  has "schema 1 file keeps them in /config" "says where a schema-1 file keeps its measurements"
expect 0 "compare.py on a schema-1 file" -- "$py" -m reproduce.cam.compare -o "$T/c1.md" "$old"
grep -Eq '^\| gemm \|( [0-9.]+ \|){6} 1\.01× \| 0\.99× \|' "$T/c1.md" ||
  fail "schema 1: overlap_ratio_min/gemm (0.99) is not read from /config"
grep -Eq '^\| gemm \|( [0-9.]+ \|){6} [0-9.]+× \| [0-9.]+× \|' "$T/compare.md" ||
  fail "schema 2: the gemm/async case's overlap_ratio_min is not read from /metrics"
finish
