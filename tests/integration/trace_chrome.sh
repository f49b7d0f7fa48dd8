# Trace spans through a result file into Chrome's trace-event JSON:
# test_trace records known spans (1 and 2 ranks) into /trace, mb-report
# --chrome-trace converts them, and python3's json module checks every
# value (names with quotes, a process per rank, a thread per lane, times in
# microseconds). Bad input: an existing OUT, a link at OUT, a file without
# /trace, other options beside it (exit 2, one line, OUT untouched).
. "$(dirname "$0")/../lib.sh"
TEST_BIN=$(dirname "$BIN")/tests
expect 0 "test_trace at 1 rank" -- "$TEST_BIN/test_trace" "$T/one.h5" || finish
expect 0 "mb-report --chrome-trace" -- "$BIN/mb-report" --chrome-trace "$T/one.json" "$T/one.h5" || finish
python3 - "$T/one.json" 1 <<'PY' || fail "1 rank: JSON values"
import json, sys
doc = json.load(open(sys.argv[1]))
nranks = int(sys.argv[2])
ev = doc["traceEvents"]
assert doc["displayTimeUnit"] == "ms" and doc["otherData"]["benchmark"] == "test_trace", doc["otherData"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert procs == {r: "rank %d" % r for r in range(nranks)}, procs
for r in range(nranks):
    lanes = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == r}
    assert lanes == {0: "compute", 1: "link h2d", 2: "ssd"}, lanes
    spans = [e for e in ev if e["ph"] == "X" and e["pid"] == r]
    assert len(spans) == 2 + 100, len(spans)
    fwd = [e for e in spans if e["name"] == "forward L0"]
    h2d = [e for e in spans if e["name"] == 'h2d "P16" L0']
    assert len(fwd) == 1 and len(h2d) == 1
    fwd, h2d = fwd[0], h2d[0]
    assert fwd["tid"] == 0 and h2d["tid"] == 1 and fwd["cat"] == "movebench"
    assert abs(fwd["dur"] - 2000.0) < 1e-6 and abs(h2d["dur"] - 1000.0) < 1e-6, (fwd, h2d)
    # a rank's spans keep their distances whatever its shift
    assert abs((h2d["ts"] - fwd["ts"]) - (500.0 - 1000.0 * r)) < 1e-3, (fwd, h2d)
    if nranks == 1:
        assert abs(fwd["ts"] - 1000.0) < 1e-6 and abs(h2d["ts"] - 1500.0) < 1e-6, (fwd, h2d)
    copies = [e for e in spans if e["name"] == "copy"]
    assert len(copies) == 100 and all(e["tid"] == 2 and e["dur"] >= 0 and e["ts"] >= 0 for e in copies)
PY
# the plot scripts' reader (reproduce/mbresults.trace) sees the same spans as the JSON
if py=$(reproduce/python.sh 2>/dev/null); then
  "$py" - "$T/one.h5" "$T/one.json" <<'PY' || fail "reproduce/mbresults.trace disagrees with the JSON"
import json, os, sys
sys.path.insert(0, os.getcwd())
from reproduce import mbresults
spans = mbresults.trace(sys.argv[1])
ev = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "X"]
assert len(spans) == len(ev) == 102, (len(spans), len(ev))
for s, e in zip(spans, ev):
    assert s["name"] == e["name"] and s["rank"] == e["pid"] and s["lane"] == e["tid"], (s, e)
    assert abs(s["start"] * 1e6 - e["ts"]) < 1e-6 and abs((s["end"] - s["start"]) * 1e6 - e["dur"]) < 1e-6
assert {s["lane_name"] for s in spans} == {"compute", "link h2d", "ssd"}
PY
else
  echo "note: no Python with h5py: reproduce/mbresults.trace not checked"
fi
if command -v mpirun >/dev/null; then
  expect 0 "test_trace at 2 ranks" -- mpi 2 "$TEST_BIN/test_trace" "$T/two.h5" &&
    expect 0 "mb-report --chrome-trace, 2 ranks" -- "$BIN/mb-report" --chrome-trace "$T/two.json" "$T/two.h5" &&
    { python3 - "$T/two.json" 2 <<'PY' || fail "2 ranks: JSON values"
import json, sys
doc = json.load(open(sys.argv[1]))
nranks = int(sys.argv[2])
ev = doc["traceEvents"]
assert sorted({e["pid"] for e in ev}) == list(range(nranks))
for r in range(nranks):
    fwd = [e for e in ev if e["ph"] == "X" and e["pid"] == r and e["name"] == "forward L0"][0]
    h2d = [e for e in ev if e["ph"] == "X" and e["pid"] == r and e["name"] == 'h2d "P16" L0'][0]
    assert abs(fwd["dur"] - 2000.0) < 1e-6 and abs((h2d["ts"] - fwd["ts"]) - (500.0 - 1000.0 * r)) < 1e-3
PY
    }
fi

# bad input: one line, exit 2, nothing written or overwritten
echo keep >"$T/exists.json"
expect 2 "existing OUT" -- "$BIN/mb-report" --chrome-trace "$T/exists.json" "$T/one.h5"
has "exists" "existing OUT is named"
[ "$(cat "$T/exists.json")" = keep ] || fail "an existing OUT was overwritten"
ln -s "$T/exists.json" "$T/link.json"
expect 2 "a link at OUT" -- "$BIN/mb-report" --chrome-trace "$T/link.json" "$T/one.h5"
[ "$(cat "$T/exists.json")" = keep ] || fail "written through a link"
schema1=$(dirname "$0")/../data/schema1-gemm.h5
expect 2 "a file without /trace" -- "$BIN/mb-report" --chrome-trace "$T/none.json" "$schema1"
has "no trace spans" "the missing /trace is named"
[ -e "$T/none.json" ] && fail "OUT written for a file without a trace"
expect 2 "--chrome-trace with --csv" -- "$BIN/mb-report" --csv --chrome-trace "$T/csv.json" "$T/one.h5"
expect 2 "--chrome-trace with two files" -- "$BIN/mb-report" --chrome-trace "$T/x.json" "$T/one.h5" "$T/one.h5"
[ "$(wc -l <"$T/out")" = 1 ] || fail "bad input printed more than one line"
finish
