#!/usr/bin/env python3
"""The collectives figure: latency and bus bandwidth against message size,
one panel column per collective, one line per algorithm (the `algo` label
of each /summary row) and, when the inputs hold several, per rank count,
dtype, op or in-place form.

    python -m reproduce.collectives.plot [-o PREFIX] INPUT [INPUT ...]

INPUT: mb-coll result files, collections (reproduce/collect.py) or folders.
Writes PREFIX.png and PREFIX.pdf (default build/reproduce/collectives/collectives).
Medians with their 95% confidence interval as a band; a case whose check
failed is marked with a red x. Needs no display (Agg backend).
"""
import textwrap
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

from reproduce import mbresults  # noqa: E402

ORDER = ["allreduce", "reduce_scatter_block", "allgather", "bcast", "reduce", "alltoall"]



def series_key(row, varying):
    parts = [row["algo"]]
    if "ranks" in varying:
        parts.append(f"{row['nranks']} ranks/{row['nnodes']} node{'s' if row['nnodes'] != 1 else ''}")
    for k in ("dtype", "op", "inplace"):
        if k in varying:
            parts.append(str(row[k]))
    return ", ".join(parts)


def main():
    a = mbresults.parse_args(__doc__, "build/reproduce/collectives/collectives",
                             "output prefix; PREFIX.png and PREFIX.pdf are written")
    runs, rows = mbresults.load(a.inputs)
    rows = [r for r in rows if r.get("coll") in ORDER and r["bytes"] > 0]
    if not rows:
        sys.exit("plot.py: no sized collective cases in " + " ".join(a.inputs))
    colls = [c for c in ORDER if any(r["coll"] == c for r in rows)]
    varying = set()
    if len({(r["nranks"], r["nnodes"]) for r in rows}) > 1:
        varying.add("ranks")
    for k in ("dtype", "op", "inplace"):
        if len({r[k] for r in rows if r[k] != "-"}) > 1:
            varying.add(k)
    keys = sorted({series_key(r, varying) for r in rows})
    # tab10 repeats after ten lines; tab20 keeps up to twenty apart
    cmap, ncolor = (plt.cm.tab10, 10) if len(keys) <= 10 else (plt.cm.tab20, 20)
    colors = {k: cmap(i % ncolor) for i, k in enumerate(keys)}

    # Up to four collectives side by side; more wrap into rows of three.
    ncols = len(colls) if len(colls) <= 4 else 3
    nblocks = (len(colls) + ncols - 1) // ncols
    fig, axes = plt.subplots(2 * nblocks, ncols, figsize=(4.2 * ncols + 0.6, 3.6 * 2 * nblocks),
                             squeeze=False)
    for j in range(len(colls), nblocks * ncols):  # empty slots of the last row
        axes[2 * (j // ncols)][j % ncols].set_visible(False)
        axes[2 * (j // ncols) + 1][j % ncols].set_visible(False)
    for j, coll in enumerate(colls):
        lat, bw = axes[2 * (j // ncols)][j % ncols], axes[2 * (j // ncols) + 1][j % ncols]
        lat.sharex(bw)
        for key in keys:
            pts = sorted((r for r in rows if r["coll"] == coll and series_key(r, varying) == key),
                         key=lambda r: r["bytes"])
            if not pts:
                continue
            x = [r["bytes"] for r in pts]
            med = [r["t_median"] * 1e6 for r in pts]
            lo = [r["ci_lo"] * 1e6 for r in pts]
            hi = [r["ci_hi"] * 1e6 for r in pts]
            c = colors[key]
            lat.plot(x, med, "o-", ms=3, color=c, label=key)
            lat.fill_between(x, lo, hi, color=c, alpha=0.2, lw=0)
            bw.plot(x, [r["busbw"] for r in pts], "o-", ms=3, color=c, label=key)
            bad = [r for r in pts if r["check"] == "fail"]
            if bad:
                lat.plot([r["bytes"] for r in bad], [r["t_median"] * 1e6 for r in bad], "x", color="red",
                         ms=9, mew=2, label="check failed" if j == 0 else None)
        lat.set_title(coll)
        for ax in (lat, bw):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=4))
            ax.xaxis.set_major_formatter(FuncFormatter(mbresults.size_label))
            ax.grid(True, which="major", alpha=0.4)
            ax.grid(True, which="minor", alpha=0.1)
        lat.set_ylabel("median latency (µs)")
        bw.set_ylabel("bus bandwidth (GB/s)")
        bw.set_xlabel("message size (bytes, K = 1024)")
        lat.legend(fontsize=8, title="algorithm", title_fontsize=8)
    hw = sorted({mbresults.hardware(r) for r in runs})
    title = "mb-coll: " + (hw[0] if len(hw) == 1 else f"{len(runs)} runs ({len(hw)} configurations)")
    # a one-column figure is narrower than the hardware line: wrap it
    fig.suptitle(textwrap.fill(title, width=int(60 * ncols)), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    mbresults.save_figure(fig, a.out, dpi=120)


if __name__ == "__main__":
    main()
