"""Reads one reproduce/nn output folder (what run.sh writes) into plain
dicts, for plot.py and compare.py:

    DIR/results/block-<model>-b<B>.p<N>.h5, adam.h5   mb-nn result files (pair N)
    DIR/logs/<same stem>.log                     mb-nn's stdout: the interleaved
                                                 ratio and the roofline lines
    DIR/torch/<same stem>.json                   the PyTorch peer (peer.py)
    DIR/load.txt                                 /proc/loadavg before each step

Each block shape is measured in A/B pairs, mb-nn then the peer, N = 1, 2,
...: per pair, its rates and the ratio block / PyTorch of the two runs side
by side; per shape, the median over the pairs of each rate and of each
pair's ratio, with the pairs' min and max (a stem without .p<N>, as older
runs wrote, is one pair). The side-by-side rates within mb-nn are its
interleaved ones (each block iteration next to one sgemm pass, see
docs/mb-nn.md) and its roofline, read from its log; the check status of
every case from the result file.
"""
import glob
import json
import os
import re
import statistics

from reproduce import mbresults

RATIO = re.compile(r"^# ratio block/sgemm FLOP rate: ([0-9.]+) \(block ([0-9.]+) GFLOP/s, sgemm ([0-9.]+) interleaved")
ROOF = re.compile(r"^# roofline block: .* = ([0-9.]+) s, ([0-9.]+) GFLOP/s; measured ([0-9.]+) s, "
                  r"([0-9.]+) GFLOP/s \(measured/roofline ([0-9.]+)\)")
ADAM = re.compile(r"^# ratio adam/memcpy bytes/s: ([0-9.]+) \(adam ([0-9.]+) GB/s touched, memcpy ([0-9.]+) interleaved")


def _log(path):
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = RATIO.match(line)
        if m:
            out.update(ratio=float(m[1]), block_gflops=float(m[2]), sgemm_gflops=float(m[3]))
        m = ROOF.match(line)
        if m:
            out.update(roof_s=float(m[1]), roof_gflops=float(m[2]), measured_s=float(m[3]), roof_ratio=float(m[5]))
        m = ADAM.match(line)
        if m:
            out.update(adam_ratio=float(m[1]), adam_gbs=float(m[2]), memcpy_gbs=float(m[3]))
    return out


CATEGORIES = ("gemm", "attn_gemm", "softmax", "layernorm", "gelu", "bias_residual", "copies")


def _categories(run):
    """The block case's median seconds per stage category (mb-nn --breakdown's
    /metrics/<case>/category_<cat>_s, one value per timed iteration), or {}."""
    for case, m in run.get("case_metrics", {}).items():
        if str(case).startswith("block/"):
            out = {}
            for cat in CATEGORIES + ("staged",):
                v = m.get(f"category_{cat}_s")
                v = sorted(v) if isinstance(v, (list, tuple)) else ([v] if v is not None else [])
                if v:
                    n = len(v)
                    out[cat] = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
            return out
    return {}


def _json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


PAIR = re.compile(r"^(.*)\.p([0-9]+)$")


def _median(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def _spread(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return (min(vals), max(vals)) if vals else None


# per-pair values whose median (and min/max) stand for the shape
PAIRED = ("ratio", "block_gflops", "sgemm_gflops", "roof_s", "roof_gflops", "measured_s", "roof_ratio",
          "torch_gflops", "torch_ratio")


def _combine(pairs):
    """One block shape's entry from its A/B pairs (each an entry of one
    mb-nn run and the peer's run after it): medians over the pairs, the
    pairs' (min, max) under "spread", the pairs themselves under "pairs"."""
    out = dict(pairs[0])
    out["pairs"] = pairs
    out["spread"] = {}
    for k in PAIRED:
        vals = [p.get(k) for p in pairs]
        m = _median(vals)
        if m is None:
            out.pop(k, None)
            continue
        out[k], out["spread"][k] = m, _spread(vals)
    checks = [p["check"] for p in pairs]
    out["check"] = "fail" if "fail" in checks else ("pass" if all(c == "pass" for c in checks) else "unchecked")
    cats = {}
    for c in {k for p in pairs for k in p.get("categories", {})}:
        cats[c] = _median([p.get("categories", {}).get(c) for p in pairs])
    out["categories"] = cats
    torch = next((p["torch"] for p in pairs if p.get("torch")), None)
    if torch is not None:  # the peer's median rate over the pairs, where compare and plot read it
        out["torch"] = dict(torch, block_gflops=out.get("torch_gflops"))
    return out


def load(folder):
    """{'blocks': [one dict per block shape, by FLOPs], 'adam': dict or None,
    'run': the first result file's run (hardware), 'loads': [lines]}."""
    files = sorted(glob.glob(os.path.join(folder, "results", "*.h5")))
    if not files:
        raise SystemExit(f"{folder}: no results/*.h5 (run reproduce/nn/run.sh first)")
    shapes, adam, first = {}, None, None
    for path in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        runs, rows = mbresults.load([path])
        run = runs[0]
        first = first or run
        cfg = run["config"]
        entry = {"stem": stem, "run": run, "rows": rows,
                 "check": "fail" if any(r["check"] == "fail" for r in rows) else
                          ("pass" if all(r["check"] == "pass" for r in rows) else "unchecked"),
                 "threads": cfg.get("omp_threads")}
        entry.update(_log(os.path.join(folder, "logs", stem + ".log")))
        entry["torch"] = _json(os.path.join(folder, "torch", stem + ".json"))
        if stem == "adam":
            entry["elems"] = cfg.get("adam-elems")
            adam = entry
            continue
        m = PAIR.match(stem)
        shape, pair = (m[1], int(m[2])) if m else (stem, 1)
        entry.update(model=cfg.get("model"), batch=cfg.get("batch"), seq=cfg.get("seq"),
                     hidden=cfg.get("hidden"), heads=cfg.get("heads"), ffn=cfg.get("ffn"),
                     flops=next((r["count"] for r in rows if r["kind"] == "block"), 0),
                     categories=_categories(run), pair=pair, shape=shape)
        tr = torch_rate(entry, "block_gflops")
        if tr:
            entry["torch_gflops"] = tr
            if entry.get("block_gflops"):
                entry["torch_ratio"] = entry["block_gflops"] / tr
        shapes.setdefault(shape, []).append(entry)
    blocks = [_combine(sorted(p, key=lambda e: e["pair"])) for p in shapes.values()]
    blocks.sort(key=lambda b: b["flops"])
    loads = []
    if os.path.exists(os.path.join(folder, "load.txt")):
        loads = [l.rstrip("\n") for l in open(os.path.join(folder, "load.txt")) if l.strip()]
    return {"blocks": blocks, "adam": adam, "run": first, "loads": loads}


def torch_rate(entry, key):
    t = entry.get("torch") if entry else None
    return t.get(key) if t else None
