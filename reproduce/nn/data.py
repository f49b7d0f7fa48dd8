"""Reads one reproduce/nn output folder (what run.sh writes) into plain
dicts, for plot.py and compare.py:

    DIR/results/block-<model>-b<B>.h5, adam.h5   mb-nn result files
    DIR/logs/<same stem>.log                     mb-nn's stdout: the interleaved
                                                 ratio and the roofline lines
    DIR/torch/<same stem>.json                   the PyTorch peer (peer.py)
    DIR/load.txt                                 /proc/loadavg before each step

The side-by-side rates are mb-nn's interleaved ones (each block iteration
next to one sgemm pass, see docs/mb-nn.md) and its roofline, read from its
log; the check status of every case from the result file.
"""
import glob
import json
import os
import re

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


def load(folder):
    """{'blocks': [one dict per block shape, by FLOPs], 'adam': dict or None,
    'run': the first result file's run (hardware), 'loads': [lines]}."""
    files = sorted(glob.glob(os.path.join(folder, "results", "*.h5")))
    if not files:
        raise SystemExit(f"{folder}: no results/*.h5 (run reproduce/nn/run.sh first)")
    blocks, adam, first = [], None, None
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
        else:
            entry.update(model=cfg.get("model"), batch=cfg.get("batch"), seq=cfg.get("seq"),
                         hidden=cfg.get("hidden"), heads=cfg.get("heads"), ffn=cfg.get("ffn"),
                         flops=next((r["count"] for r in rows if r["kind"] == "block"), 0),
                         categories=_categories(run))
            blocks.append(entry)
    blocks.sort(key=lambda b: b["flops"])
    loads = []
    if os.path.exists(os.path.join(folder, "load.txt")):
        loads = [l.rstrip("\n") for l in open(os.path.join(folder, "load.txt")) if l.strip()]
    return {"blocks": blocks, "adam": adam, "run": first, "loads": loads}


def torch_rate(entry, key):
    t = entry.get("torch") if entry else None
    return t.get(key) if t else None
