#!/usr/bin/env python3
"""The Ratel figure: tokens/s against batch per system (Fig. 5), T_f + T_b
predicted and measured per activation policy with Algorithm 1's pick
starred (Fig. 9b), tokens/s with 1, 2, 4 rate-capped files (Fig. 10,
emulated).

    python -m reproduce.ratel.plot [-o PREFIX] INPUT [INPUT ...]

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="build/reproduce/ratel/ratel")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    rows = data.rows(a.inputs)
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    opt = [r for r in rows if r["optimizer"] == "optimized" or r["system"] != "ratel"]
    for s in SYSTEMS:
        # the baselines' own activation handling; Ratel's Algorithm 1
        pts = sorted({r["batch"]: r for r in opt if r["system"] == s and (s != "ratel" or r["act"] == "ratel")
                      and r["files"] == 2}.values(), key=lambda r: r["batch"])
        if pts:
            ax[0].plot([r["batch"] for r in pts], [r["tokens_per_s"] for r in pts], "o-", label=s)
    ax[0].set(xlabel="batch", ylabel="tokens/s", title="Fig. 5: throughput per system")
    ax[0].legend()
    acts = [next((r for r in rows if r["system"] == "ratel" and r["act"] == x and r["optimizer"] == "optimized"
                  and r["files"] == 2 and r["t_b_measured_s"] is not None), None) for x in ACTS]
    have = [(x, r) for x, r in zip(ACTS, acts) if r]
    xs = range(len(have))
    pred = [r["t_f_predicted_s"] + r["t_b_predicted_s"] for _, r in have]
    meas = [r["t_f_measured_s"] + r["t_b_measured_s"] for _, r in have]
    ax[1].bar([x - 0.2 for x in xs], pred, 0.4, label="predicted (Eqs. 1-5)")
    ax[1].bar([x + 0.2 for x in xs], meas, 0.4, label="measured")
    if have:
        pick = next((i for i, (x, _) in enumerate(have) if x == "ratel"), None)
        if pick is not None:
            ax[1].plot([pick - 0.2], [pred[pick] * 1.05], "k*", markersize=14, label="Algorithm 1's pick")
        best = min(range(len(meas)), key=lambda i: meas[i])
        ax[1].plot([best + 0.2], [meas[best] * 1.05], "r*", markersize=14, label="measured minimum")
    ax[1].set_xticks(list(xs), [x for x, _ in have])
    ax[1].set(ylabel="T_f + T_b (s)", title="Fig. 9b: policy model vs measured")
    ax[1].legend(fontsize=8)
    fl = sorted({r["files"]: r for r in rows if r["system"] == "ratel" and r["act"] == "ratel"
                 and r["optimizer"] == "optimized"}.values(), key=lambda r: r["files"])
    ax[2].plot([r["files"] for r in fl], [r["tokens_per_s"] for r in fl], "o-")
    ax[2].set(xlabel="files (1 GB/s each, emulated SSDs)", ylabel="tokens/s", title="Fig. 10: SSDs (emulated)")
    bad = [r for r in rows if r["check"] != "pass"]
    if bad:
        fig.suptitle(f"{len(bad)} case(s) failed their check", color="red")
    fig.tight_layout()
    mbresults.save_figure(fig, a.out)


if __name__ == "__main__":
    main()
