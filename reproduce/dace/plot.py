"""Weak scaling per kernel from DaCe-schema CSVs: median time vs P and the
efficiency T(1)/T(P), one line per framework (movebench_summa,
movebench_pblas, the other movebench variants, DaCe's dace_cpu).
NPBench's heatmap is reproduce/dace/npbench's.

    python -m reproduce.dace.plot -o OUT CSV...   (OUT.png/.pdf, OUT-efficiency.png/.pdf)
"""
import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from reproduce import mbresults  # noqa: E402
from reproduce.dace import tocsv  # noqa: E402

# DaCe's order (samples/distributed/polybench.py), then the SC'21 script's heat_3d
KERNELS = ["atax", "bicg", "doitgen", "gemm", "gemver", "gesummv", "jacobi_1d", "jacobi_2d", "k2mm", "k3mm", "mvt",
           "heat_3d"]
LABEL = {"dace_cpu": "DaCe (distributed)"}
STYLE = {"movebench_summa": ("C0", "o"), "movebench_pblas": ("C1", "s"), "dace_cpu": ("C3", "^")}


def medians(paths):
    """{(benchmark, framework): {P: median seconds}} over every CSV row."""
    samples = {}
    for p in paths:
        for b, fw, procs, _sizes, t in tocsv.read_csv(p):
            samples.setdefault((b, fw), {}).setdefault(procs, []).append(t)
    return {k: {p: float(np.median(v)) for p, v in sorted(d.items())} for k, d in samples.items()}


def efficiency(series):
    """{P: T(1)/T(P)} when P = 1 was measured."""
    t1 = series.get(1)
    return {p: t1 / t for p, t in series.items()} if t1 else {}


def draw(med, value, ylabel, out, log_y):
    kernels = [k for k in KERNELS if any(b == k for b, _ in med)] + sorted({b for b, _ in med} - set(KERNELS))
    cols = 4
    rows = max(1, math.ceil(len(kernels) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, k in zip(axes.flat, kernels):
        for (b, fw), series in sorted(med.items()):
            if b != k:
                continue
            pts = value(series)
            if not pts:
                continue
            colour, marker = STYLE.get(fw, ("C2", "D"))
            label = LABEL.get(fw, fw.replace("movebench_", "ours: "))
            ax.plot(list(pts), list(pts.values()), marker=marker, color=colour, label=label)
        ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        ax.set_title(k)
        ax.set_xlabel("processes P")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(kernels):]:
        ax.axis("off")
    fig.tight_layout()
    mbresults.save_figure(fig, out)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    med = medians(a.inputs)
    draw(med, lambda s: s, "median time (s)", a.out, True)
    draw(med, efficiency, "T(1) / T(P)", a.out + "-efficiency", False)


if __name__ == "__main__":
    main()
