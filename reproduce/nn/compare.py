#!/usr/bin/env python3
"""compare.md of the nn study: per shape, nn/'s block against plain sgemm
over the same GEMMs, against PyTorch's block, and against its roofline;
Adam against memcpy and torch.optim.Adam; each ratio beside issue 21's
target, the load beside the numbers, and the issue's own quiet-machine
measurement for reference.

    python -m reproduce.nn.compare [-o compare.md] DIR
"""
import argparse
import os

from reproduce import mbresults
from reproduce.nn import data

TARGETS = {"block/sgemm": 0.85, "block/sgemm other": 0.8, "block/torch": 1.3, "adam/memcpy": 0.9,
           "adam/torch": 1.5, "roofline": 0.15}


def f(v, fmt="{:.2f}"):
    return fmt.format(v) if isinstance(v, (int, float)) else "—"


def verdict(ok):
    return "" if ok is None else (" ✓" if ok else " ✗")


def spread(b, key, fmt="{:.2f}"):
    """' (lo–hi)' over the shape's A/B pairs, or nothing for one pair."""
    sp = b.get("spread", {}).get(key)
    if not sp or len(b.get("pairs", ())) < 2:
        return ""
    return f" ({fmt.format(sp[0])}–{fmt.format(sp[1])})"


def issue_shape(b):
    """gpt-bench b4: the issue's shape, where its 0.85x sgemm and 1.3x PyTorch
    targets apply (its "today 1.06x" PyTorch ratio was measured there)."""
    return b["model"] == "gpt-bench" and b["batch"] == 4


def block_rows(blocks):
    out = ["| shape | GFLOP | A/B pairs | sgemm GFLOP/s | nn block GFLOP/s | block / sgemm | PyTorch GFLOP/s | "
           "block / PyTorch | roofline GFLOP/s | measured / roofline | check |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in blocks:
        shape = f"{b['model']} b{b['batch']} s{b['seq']} h{b['hidden']} a{b['heads']}"
        tr, ratio, bt = b.get("torch_gflops"), b.get("ratio"), b.get("torch_ratio")
        want = TARGETS["block/sgemm"] if issue_shape(b) else TARGETS["block/sgemm other"]
        if issue_shape(b):
            torch_cell = (f"{f(bt, '{:.2f}×')}{verdict(None if bt is None else bt >= TARGETS['block/torch'])}"
                          f"{spread(b, 'torch_ratio', '{:.2f}')}, ≥ {TARGETS['block/torch']}")
        else:
            torch_cell = f"{f(bt, '{:.2f}×')}{spread(b, 'torch_ratio', '{:.2f}')}, not a target"
        rr = b.get("roof_ratio")
        out.append(
            f"| {shape} | {b['flops'] / 1e9:.3g} | {len(b.get('pairs', ())) or 1} | {f(b.get('sgemm_gflops'))} | "
            f"{f(b.get('block_gflops'))}{spread(b, 'block_gflops')} | "
            f"{f(ratio, '{:.3f}')}{verdict(None if ratio is None else ratio >= want)} (≥ {want}) | "
            f"{f(tr)}{spread(b, 'torch_gflops')} | "
            f"{torch_cell} | "
            f"{f(b.get('roof_gflops'))} | {f(rr, '{:.3f}')}"
            f"{verdict(None if rr is None else abs(rr - 1) <= TARGETS['roofline'])} | {b['check']} |")
    return out


def pair_rows(blocks, loads):
    """Every A/B pair: mb-nn's block and sgemm, then the peer's block, and
    the load before each."""
    out = ["| shape | pair | nn block GFLOP/s | sgemm GFLOP/s | block / sgemm | PyTorch GFLOP/s | block / PyTorch | "
           "load before mb-nn | load before PyTorch |", "|---|---|---|---|---|---|---|---|---|"]
    for b in blocks:
        for p in b.get("pairs", ()):
            la = next((l.split(": ", 1)[1].split()[0] for l in loads if l.startswith(p["stem"] + " (mb-nn)")), "—")
            lb = next((l.split(": ", 1)[1].split()[0] for l in loads if l.startswith(p["stem"] + " (PyTorch)")), "—")
            out.append(f"| {b['model']} b{b['batch']} | {p.get('pair', 1)} | {f(p.get('block_gflops'))} | "
                       f"{f(p.get('sgemm_gflops'))} | {f(p.get('ratio'), '{:.3f}')} | {f(p.get('torch_gflops'))} | "
                       f"{f(p.get('torch_ratio'), '{:.2f}×')} | {la} | {lb} |")
    return out


def breakdown_rows(blocks):
    """Where each block's time went (mb-nn --breakdown): the share of the
    staged time per category, medians over the timed iterations."""
    have = [b for b in blocks if b.get("categories", {}).get("staged")]
    if not have:
        return ["(no stage breakdown in these result files)"]
    out = ["| shape | staged s | " + " | ".join(data.CATEGORIES) + " |",
           "|---|---|" + "---|" * len(data.CATEGORIES)]
    for b in have:
        c = b["categories"]
        out.append(f"| {b['model']} b{b['batch']} | {c['staged']:.4f} | " +
                   " | ".join(f"{100 * c.get(k, 0) / c['staged']:.1f}%" for k in data.CATEGORIES) + " |")
    return out


def adam_rows(adam):
    if not adam:
        return ["(no Adam case measured)"]
    tg = data.torch_rate(adam, "adam_gbs")
    r, rt = adam.get("adam_ratio"), (adam["adam_gbs"] / tg if tg and adam.get("adam_gbs") else None)
    return ["| parameters | memcpy GB/s | nn Adam GB/s | Adam / memcpy | torch.optim.Adam (foreach) GB/s | "
            "nn / torch | check |", "|---|---|---|---|---|---|---|",
            f"| {adam.get('elems', 0) / 2**20:g}M | {f(adam.get('memcpy_gbs'))} | {f(adam.get('adam_gbs'))} | "
            f"{f(r, '{:.3f}')}{verdict(None if r is None else r >= TARGETS['adam/memcpy'])} (≥ 0.9) | {f(tg)} | "
            f"{f(rt, '{:.2f}×')}{verdict(None if rt is None else rt >= TARGETS['adam/torch'])} (≥ 1.5) | "
            f"{adam['check']} |"]


def render(d):
    run = d["run"]
    tv = next((b["torch"]["torch_version"] for b in d["blocks"] + [d["adam"] or {}] if b and b.get("torch")), None)
    threads = d["blocks"][0].get("threads") if d["blocks"] else (d["adam"] or {}).get("threads")
    lines = [
        "# nn/ at the speed of the machine — measured side by side", "",
        f"Our machine: {mbresults.hardware(run)}. Threads: {threads} (OpenMP and OpenBLAS for mb-nn, "
        f"torch.set_num_threads for PyTorch {tv or '(not installed: its columns are empty)'}).", "",
        "Rates are GEMM and attention FLOPs (multiply-add = 2; forward 24·B·s·h² + 4·B·s²·h, backward twice "
        "that) over the median time of forward + backward. sgemm, the nn block and the roofline come from one "
        "mb-nn run (sgemm and block interleaved iteration by iteration, the roofline's memcpy just before); "
        "PyTorch runs right after it with the same shape, threads, causal mask and iterations. Each shape is "
        "measured in A/B pairs (mb-nn, PyTorch, mb-nn, PyTorch, ...): each value is the median over the "
        "pairs, block / PyTorch the median of the pairs' own ratios, (min–max) over the pairs beside it. "
        "✓/✗: issue 21's target, meant for a quiet machine.", "",
        "**Indicative only** unless the load below is near zero: the machine was shared while measuring.", "",
        "Load (/proc/loadavg) before each step:", "",
        *[f"    {l}" for l in d["loads"]], "",
        "## Block forward + backward", "", *block_rows(d["blocks"]), "",
        "Targets: block / sgemm ≥ 0.85 at gpt-bench b4 (the issue's shape), ≥ 0.8 at the others; block / "
        "PyTorch ≥ 1.3× at gpt-bench b4 only: the issue sets it \"at the same shape and thread count (today "
        "1.06×)\", and 1.06× was its gpt-bench b4 measurement; at the other shapes the ratio is reported, not a "
        "target. check: every shape's block is checked each iteration against the double-precision reference "
        "(pass/fail over all its pairs; \"unchecked\" only for results run with --no-check).", "",
        "Roofline: the block's GEMM FLOPs at the interleaved sgemm rate plus the bytes its fused elementwise "
        "sweeps read and write (nn_block_elementwise_bytes) at the rate of a memcpy measured in the block case's "
        "set-up; target within 15%.", "",
        "## The A/B pairs", "", *pair_rows(d["blocks"], d["loads"]), "",
        "## Where the block's time goes", "", *breakdown_rows(d["blocks"]), "",
        "Shares of the summed stage times, medians over the pairs (mb-nn --breakdown; each stage beside its own "
        "roofline term is in logs/<shape>.p<N>.log). gemm: the four linear layers and their gradients; attn_gemm: the per-head score "
        "and value GEMMs; the rest are the fused sweeps.", "",
        "## Adam", "", *adam_rows(d["adam"]), "",
        "Adam and its memcpy peer count bytes the same way and move what they count: Adam 28 B a parameter "
        "(read p, m, v, g; write p, m, v; its stores go to lines it has just read), the memcpy half as many "
        "bytes counted read + write, stored non-temporally (no read for ownership) in the widest vectors the "
        "CPU has; the same OpenMP threads on the same page-aligned contiguous shares, first-touched by their "
        "threads; buffers far beyond the last-level cache, each iteration of either started cold (an untimed "
        "read of twice the LLC); the memcpy interleaved before each Adam iteration, medians of both "
        "(docs/mb-nn.md).", "",
        "## For reference: issue 21's quiet-machine measurement", "",
        "gpt-bench b4 s128 h1024, 39.5 GFLOP, 2 threads, before the fused path: sgemm 146 GFLOP/s, block 97 "
        "(0.66×; 0.75× in another run), PyTorch 1.13 92 GFLOP/s (block / PyTorch 1.06×).", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("dir")
    a = ap.parse_args(argv)
    out = a.out or os.path.join(a.dir, "compare.md")
    text = render(data.load(a.dir))
    with open(out, "w") as fh:
        fh.write(text)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
