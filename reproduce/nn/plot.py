#!/usr/bin/env python3
"""The nn study's figure: GFLOP/s of one decoder block forward + backward
per shape, four bars each (plain sgemm over the block's own GEMMs, nn/'s
block, PyTorch's block at the same threads, and the roofline prediction;
each the median over the A/B pairs, a whisker from the pairs' min to max);
beside it Adam's bytes/s against memcpy and torch.optim.Adam.

    python -m reproduce.nn.plot [-o PREFIX] DIR

DIR: what reproduce/nn/run.sh wrote (results/, logs/, torch/). Writes
PREFIX.png and PREFIX.pdf (default DIR/nn). A shape whose check failed is
marked with a red x; a missing bar (no PyTorch) is left out.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reproduce import mbresults  # noqa: E402
from reproduce.nn import data  # noqa: E402

BARS = [("sgemm", "sgemm_gflops", "tab:gray"), ("nn block", "block_gflops", "tab:blue"),
        ("PyTorch", None, "tab:orange"), ("roofline", "roof_gflops", "tab:green")]


def label(b):
    return f"{b['model']}\nb{b['batch']} s{b['seq']} h{b['hidden']}"


def block_panel(ax, blocks):
    w = 0.2
    for i, (name, key, color) in enumerate(BARS):
        xs, ys, lo, hi = [], [], [], []
        for j, b in enumerate(blocks):
            v = data.torch_rate(b, "block_gflops") if key is None else b.get(key)
            if v:
                xs.append(j + (i - 1.5) * w)
                ys.append(v)
                sp = b.get("spread", {}).get("torch_gflops" if key is None else key) or (v, v)
                lo.append(v - sp[0]), hi.append(sp[1] - v)
        ax.bar(xs, ys, w, color=color, label=name, yerr=[lo, hi], capsize=2, error_kw={"lw": 0.8})
    for j, b in enumerate(blocks):
        if b["check"] == "fail":
            ax.plot(j, b.get("block_gflops", 0), "x", color="red", ms=10, mew=2)
    ax.set_xticks(range(len(blocks)))
    ax.set_xticklabels([label(b) for b in blocks], fontsize=8)
    ax.set_ylabel("GFLOP/s (GEMM and attention FLOPs)")
    ax.set_title("decoder block forward + backward", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)


def adam_panel(ax, adam):
    names, vals, colors = [], [], []
    for name, v, c in (("memcpy", adam.get("memcpy_gbs"), "tab:gray"), ("nn adam", adam.get("adam_gbs"), "tab:blue"),
                       ("torch Adam\n(foreach)", data.torch_rate(adam, "adam_gbs"), "tab:orange")):
        if v:
            names.append(name), vals.append(v), colors.append(c)
    ax.bar(range(len(vals)), vals, color=colors)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("GB/s touched (28 B per parameter)")
    ax.set_title(f"Adam, {adam.get('elems', 0) / 2**20:g}M fp32 parameters", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("dir")
    a = ap.parse_args(argv)
    d = data.load(a.dir)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 1.2]})
    block_panel(axes[0], d["blocks"])
    if d["adam"]:
        adam_panel(axes[1], d["adam"])
    else:
        axes[1].set_axis_off()
    fig.suptitle(f"nn/ vs sgemm, PyTorch and the roofline — {mbresults.hardware(d['run']).split(';')[0]}, "
                 f"{d['blocks'][0].get('threads') if d['blocks'] else '?'} threads (indicative: machine shared)",
                 fontsize=9)
    fig.tight_layout()
    mbresults.save_figure(fig, a.out or os.path.join(a.dir, "nn"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
