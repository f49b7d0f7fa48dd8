#!/usr/bin/env python3
"""The Ratel figure: one traced step's timeline per lane (Fig. 1), tokens/s
against batch per system (Fig. 5), the largest layer count per host budget
(Fig. 6, --plan), optimized against naive Adam ordering against batch
(Fig. 7, AGO), T_f + T_b against swapped bytes: the model's curve over
the grouped walk (mb-ratel's sweep_* series) and each activation policy's
run predicted and measured, Algorithm 1's pick starred (Fig. 9b), tokens/s
with 1, 2, 4 rate-capped files (Fig. 10, emulated).

    python -m reproduce.ratel.plot [-o PREFIX] [--largest FILE] INPUT [INPUT ...]

--largest: run.sh's largest.txt (a host budget and mb-ratel --plan's
largest layer count per line).

INPUT: mb-ratel result files or folders. Writes PREFIX.png and PREFIX.pdf.
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reproduce import mbresults  # noqa: E402
from reproduce.ratel import data  # noqa: E402

SYSTEMS = ["ratel", "zero-infinity", "zero-offload"]
ACTS = ["ratel", "swap-all", "inter-block", "recompute-all"]


def timeline(ax, rows):
    """Fig. 1: the last traced step of a Ratel run, a row per lane."""
    spans = []
    for r in rows:
        # Ratel's own run (the serial-order and zero-infinity runs are traced too)
        if r["system"] == "ratel" and r["optimizer"] == "optimized" and r["act"] == "ratel" and r["path"]:
            spans = mbresults.trace(r["path"])
            if spans:
                break
    steps = [s for s in spans if s["lane_name"] == "step"]
    if not steps:
        ax.set_title("Fig. 1: no traced run")
        return
    last = steps[-1]
    inside = [s for s in spans if s["end"] > last["start"] and s["start"] < last["end"] and s["lane_name"] != "step"]
    lanes = sorted({s["lane_name"] for s in inside})
    for i, ln in enumerate(lanes):
        segs = [(s["start"] - last["start"], s["end"] - s["start"]) for s in inside if s["lane_name"] == ln]
        ax.broken_barh(segs, (i - 0.4, 0.8))
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set(xlabel=f"s since the start of {last['name']}", title="Fig. 1: one step's timeline (trace)")


def largest(ax, path):
    """Fig. 6: the largest layer count --plan fits per host budget."""
    pts = []
    if path:
        for line in open(path):
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                pts.append((parts[0], int(parts[1])))
    if pts:
        ax.bar(range(len(pts)), [n for _, n in pts])
        ax.set_xticks(range(len(pts)), [h for h, _ in pts])
    ax.set(xlabel="host memory", ylabel="largest layer count (--plan)",
           title="Fig. 6: largest model per host budget")


def ago(ax, rows):
    """Fig. 7: tokens/s of the optimized and naive orders against batch."""
    for order, style in (("optimized", "o-"), ("naive", "s--"), ("serial", "^:")):
        pts = sorted({r["batch"]: r for r in rows if r["system"] == "ratel" and r["act"] == "ratel"
                      and r["optimizer"] == order and r["files"] == 2 and r["tokens_per_s"]}.values(),
                     key=lambda r: r["batch"])
        if pts:
            ax.plot([r["batch"] for r in pts], [r["tokens_per_s"] for r in pts], style, label=order)
    ax.set(xlabel="batch", ylabel="tokens/s", title="Fig. 7: active gradient offloading (AGO)")
    ax.legend()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="build/reproduce/ratel/ratel")
    ap.add_argument("--largest", help="run.sh's largest.txt (Fig. 6)")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    rows = data.rows(a.inputs)
    fig, grid = plt.subplots(2, 3, figsize=(16, 8.4))
    timeline(grid[0][0], rows)
    largest(grid[0][2], a.largest)
    ago(grid[1][0], rows)
    ax = [grid[0][1], grid[1][1], grid[1][2]]
    opt = [r for r in rows if r["optimizer"] == "optimized" or r["system"] != "ratel"]
    for s in SYSTEMS:
        # the baselines' own activation handling; Ratel's Algorithm 1
        pts = sorted({r["batch"]: r for r in opt if r["system"] == s and (s != "ratel" or r["act"] == "ratel")
                      and r["files"] == 2}.values(), key=lambda r: r["batch"])
        if pts:
            ax[0].plot([r["batch"] for r in pts], [r["tokens_per_s"] for r in pts], "o-", label=s)
    ax[0].set(xlabel="batch", ylabel="tokens/s", title="Fig. 5: throughput per system")
    ax[0].legend()
    # the sweep's batch: that of the runs of the other policies
    sweep_b = next((r["batch"] for r in rows if r["system"] == "ratel" and r["act"] in ACTS[1:]), None)
    acts = [next((r for r in rows if r["system"] == "ratel" and r["act"] == x and r["optimizer"] == "optimized"
                  and r["files"] == 2 and r["batch"] == sweep_b and r["t_b_measured_s"] is not None), None)
            for x in ACTS]
    have = [(x, r) for x, r in zip(ACTS, acts) if r]
    # the model's curve over the grouped walk (the ratel run's profiling
    # rates), each policy's run a measured point at the bytes it swapped
    ratel_run = next((r for x, r in have if x == "ratel"), None)
    if ratel_run and ratel_run["sweep"]:
        sw = ratel_run["sweep"]
        ax[1].plot([b / 1e6 for b, _, _ in sw], [f + t for _, f, t in sw], "-", color="C0",
                   label="predicted, grouped walk (Eqs. 1-5)")
    for i, (x, r) in enumerate(have):
        mb = (r["policy_swap_bytes"] or 0) / 1e6
        ax[1].plot([mb], [r["t_f_predicted_s"] + r["t_b_predicted_s"]], "o", mfc="none", color=f"C{i + 1}")
        ax[1].plot([mb], [r["t_f_measured_s"] + r["t_b_measured_s"]], "o", color=f"C{i + 1}",
                   label=f"{x} (open: predicted, filled: measured)")
        if x == "ratel":
            ax[1].plot([mb], [(r["t_f_measured_s"] + r["t_b_measured_s"]) * 1.05], "k*", markersize=14,
                       label="Algorithm 1's pick")
    ax[1].set(xlabel="swapped activations (MB)", ylabel="T_f + T_b (s)",
              title="Fig. 9b: T_f + T_b vs swapped bytes")
    ax[1].legend(fontsize=7)
    fl = sorted({r["files"]: r for r in rows if r["system"] == "ratel" and r["act"] == "ratel"
                 and r["optimizer"] == "optimized"}.values(), key=lambda r: r["files"])
    ax[2].plot([r["files"] for r in fl], [r["tokens_per_s"] for r in fl], "o-")
    ax[2].set(xlabel="files (1 GB/s each, emulated SSDs)", ylabel="tokens/s", title="Fig. 10: SSDs (emulated)")
    mbresults.finish_figure(fig, rows, a.out)


if __name__ == "__main__":
    main()
