# reproduce/collectives on the committed reference result: plot.py draws the
# figure (PNG and PDF), compare.py writes compare.md; with a second
# algorithm in the file (the reference relabelled, 2x faster) the figure
# gets one line per algorithm and compare.md a measured speedup; the
# collector merges two files and refuses to overwrite.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/reproduce.inc"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
ref=reproduce/collectives/reference/mb-coll-small-2ranks.h5
[ -f "$ref" ] || { fail "no committed reference $ref"; finish; }

figure_and_compare collectives "$ref"
grep -q '| CCCL | Broadcast, average speedup over RDMA | 1.84× |' "$T/compare.md" || fail "compare.md lacks CCCL's broadcast number"
grep -q 'not measured: only mpi' "$T/compare.md" || fail "compare.md does not say only mpi was measured"
grep -q '^| allreduce | mpi | 2 | 1 |' "$T/compare.md" || fail "compare.md lacks our allreduce row"
# our own numbers, read from the result file here, in compare.md: one row
# per (collective, algorithm) with its median at the smallest size and at
# 1 KiB and its check verdict, and our hardware column naming this file's
# CPU (its /topology) and rank count
ours() { # RESULT COMPARE.MD: exit 1 naming the first of our values compare.md lacks
  "$py" - "$1" "$2" <<'PY'
import re, sys, h5py
h5, md = sys.argv[1:]
text = open(md).read()
with h5py.File(h5) as f:
    s = f["summary"][()]
    topo = f["topology"][()]
    topo = topo.decode() if isinstance(topo, bytes) else str(topo)
    nranks = int(f.attrs["nranks"])
    commit = f.attrs["git_commit"]
    commit = (commit.decode() if isinstance(commit, bytes) else str(commit))[:12]
cpu = re.search(r'name="CPUModel" value="([^"]*)"', topo).group(1)
groups = sorted({(r["coll"].decode(), r["algo"].decode()) for r in s})
bad = []
for coll, algo in groups:
    g = sorted((r for r in s if r["coll"].decode() == coll and r["algo"].decode() == algo), key=lambda r: r["bytes"])
    small = max((r for r in g if r["bytes"] == g[0]["bytes"]), key=lambda r: r["t_median"])
    kib = [r for r in g if r["bytes"] == 1024]
    checks = "pass" if all(r["check"] == b"pass" for r in g) else "fail"
    row = f"| {coll} | {algo} | {nranks} | "
    want = [f"{small['t_median'] * 1e6:.2f} µs at {int(small['bytes'])} B"]
    if kib:
        want.append(f"{kib[0]['t_median'] * 1e6:.2f} µs")
    line = next((l for l in text.splitlines() if l.startswith(row)), None)
    if line is None:
        bad.append(f"no row {row}")
        continue
    for w in want + [f"| {checks} |"]:
        if w not in line:
            bad.append(f"{coll}/{algo}: row lacks '{w}': {line}")
rows = [l for l in text.splitlines() if re.match(r"^\| [a-z_]+ \| [a-z0-9_]+ \| [0-9]+ \| [0-9]+ \| ", l)]
if len(rows) != len(groups):
    bad.append(f"{len(rows)} measurement rows, the file has {len(groups)} (collective, algorithm) pairs")
if f"{cpu} (" not in text or f"{nranks} ranks" not in text:
    bad.append(f"our hardware is not named: '{cpu}', {nranks} ranks")
if f"git {commit}" not in text:
    bad.append(f"the run's commit {commit} is not named")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
ours "$ref" "$T/compare.md" >"$T/ours" || { fail "compare.md lacks our own values"; cat "$T/ours" >&2; }
# ...and the same check sees a wrong value: one median changed in compare.md
sed -E '0,/^\| allreduce \| mpi \| 2 \| 1 \| [0-9.]+ µs/s//| allreduce | mpi | 2 | 1 | 999.99 µs/' "$T/compare.md" >"$T/wrong.md"
ours "$ref" "$T/wrong.md" >/dev/null && fail "the check of our values missed a wrong median"

# A second algorithm: the reference with algo relabelled "fake2x" and times halved.
"$py" - "$ref" "$T/two.h5" <<'PY' || fail "could not build the two-algorithm file"
import sys, h5py, numpy as np
sys.path.insert(0, "reproduce")
from collect import copy_members
src, dst = sys.argv[1:]
with h5py.File(src) as f, h5py.File(dst, "w") as g:
    for k, v in f.attrs.items():
        g.attrs[k] = v
    copy_members(f, g)
    del g["summary"]
    s = f["summary"][()]
    t = s.copy()
    t["algo"] = [b"fake2x"] * len(t)
    t["case"] = [c.replace(b"/mpi/", b"/fake2x/") for c in t["case"]]
    for k in ("t_min", "t_median", "t_p95", "t_max", "t_mean", "ci_lo", "ci_hi"):
        t[k] = t[k] / 2
    for k in ("algbw", "busbw"):
        t[k] = t[k] * 2
    g.create_dataset("summary", data=np.concatenate([s, t]), dtype=f["summary"].dtype)
PY
expect 0 "compare.py with two algorithms" -- "$py" -m reproduce.collectives.compare -o "$T/compare2.md" "$T/two.h5"
grep -q 'fake2x: 2.00× (geomean of [0-9]* sizes)' "$T/compare2.md" || { fail "no 2.00× speedup for fake2x"; grep CCCL "$T/compare2.md" | head -2 >&2; }
ours "$T/two.h5" "$T/compare2.md" >"$T/ours" || { fail "compare.md (two algorithms) lacks our own values"; cat "$T/ours" >&2; }
expect 0 "plot.py with two algorithms" -- "$py" -m reproduce.collectives.plot -o "$T/fig2" "$T/two.h5"
[ -s "$T/fig2.png" ] || fail "no two-algorithm figure"

# The collector: two files in, one collection out, then readable by plot.py.
expect 0 "collect.py merges two files" -- "$py" -m reproduce.collect -o "$T/both.h5" "$ref" "$T/two.h5"
has '2 run\(s\)' "two runs"
"$py" - "$ref" "$T/two.h5" "$T/both.h5" <<'PY' || fail "the collection does not hold both files"
import sys, h5py
a, b, c = (h5py.File(p) for p in sys.argv[1:])
s = c["summary"][()]
assert len(s) == len(a["summary"]) + len(b["summary"]), (len(s),)
assert sorted(set(s["run"].tolist())) == [0, 1]
assert {x.decode() for x in s["algo"]} == {"mpi", "fake2x"}
assert c["runs/0"].attrs["benchmark"] == a.attrs["benchmark"]
assert c["runs/0"].attrs["source_file"].endswith("mb-coll-small-2ranks.h5")
n = len(a["samples"])
assert len(c["runs/0/samples"]) == n and n > 0
k = sorted(a["samples"])[0]
assert (c["runs/0/samples"][k][()] == a["samples"][k][()]).all(), "samples copied"
print("collection ok:", len(s), "rows")
PY
expect 0 "plot.py reads a collection" -- "$py" -m reproduce.collectives.plot -o "$T/fig3" "$T/both.h5"
expect 1 "collect.py never overwrites" -- "$py" -m reproduce.collect -o "$T/both.h5" "$ref"
has 'exists' "says the output exists"
expect 1 "collect.py on a non-result file" -- "$py" -m reproduce.collect -o "$T/x.h5" "$T/fig.png"
# --scale reference (collectives, cam, hyperion: their results are
# committed) refuses a dirty tree or a binary built from one, in one line
# naming the dirty state, exit 2, before any work (no results folder); on a
# clone of HEAD, so this checkout is never touched
if git rev-parse --verify -q HEAD >/dev/null && git clone -q "$PWD" "$T/clone" 2>/dev/null; then
  c=$T/clone
  # this checkout's own scripts, committed in the clone so that it is clean
  cp reproduce/clean-tree.sh reproduce/opts.sh "$c/reproduce/"
  for s in collectives cam hyperion; do cp "reproduce/$s/run.sh" "$c/reproduce/$s/run.sh"; done
  git -C "$c" add -A && git -C "$c" -c user.name=test -c user.email=test@localhost commit -qm "the checkout's scripts" --allow-empty
  expect 0 "clean-tree.sh on a clean clone" -- env BUILD=build "$c/reproduce/clean-tree.sh" "--scale reference"
  echo "# changed" >>"$c/Makefile"
  for s in collectives cam hyperion; do
    expect 2 "$s --scale reference on a dirty tree" -- env BUILD=build "$c/reproduce/$s/run.sh" --scale reference &&
      has "^run.sh: --scale reference needs a clean git tree: uncommitted changes to tracked files \(Makefile;" "$s: names the dirty file"
    [ "$(wc -l <"$T/out")" = 1 ] || fail "$s, dirty tree: $(wc -l <"$T/out") lines, not one"
  done
  [ -e "$c/build/reproduce" ] && fail "dirty tree: run.sh made its results folder"
  git -C "$c" checkout -q Makefile
  mkdir -p "$c/build/gen"
  printf 'const char *mb_build_git_commit(void) { return "%s"; }\nint mb_build_git_dirty(void) { return 1; }\n' \
    "$(git -C "$c" rev-parse HEAD)" >"$c/build/gen/buildinfo.c"
  for s in collectives cam hyperion; do
    expect 2 "$s --scale reference with a binary built dirty" -- env BUILD=build "$c/reproduce/$s/run.sh" --scale reference &&
      has "built from a dirty tree \(git_dirty=1\)" "$s: names the dirty build"
  done
  printf 'const char *mb_build_git_commit(void) { return "%s"; }\nint mb_build_git_dirty(void) { return 0; }\n' \
    0123456789012345678901234567890123456789 >"$c/build/gen/buildinfo.c"
  for s in collectives cam hyperion; do
    expect 2 "$s --scale reference with a binary of another commit" -- env BUILD=build "$c/reproduce/$s/run.sh" --scale reference &&
      has "built from another commit than HEAD" "$s: names the stale build"
  done
  [ -e "$c/build/reproduce" ] && fail "stale build: run.sh made its results folder"
else
  echo "not a git checkout: the clean-tree refusal of --scale reference not exercised"
fi
finish
