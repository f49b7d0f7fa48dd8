#!/usr/bin/env python3
"""The CAM figure: storage throughput against block size (Fig. 8b) and
against the number of striped files (Fig. 8a) per I/O path, and the time of
the out-of-core GEMM, sort and gather per mode with the phases alone and the
overlap bound (Fig. 10a/b, 11b), plus async / bound per app.

    python -m reproduce.cam.plot [-o PREFIX] INPUT [INPUT ...]

INPUT: mb-aio and mb-ooc result files, collections (reproduce/collect.py) or folders.
Writes PREFIX.png and PREFIX.pdf (default build/reproduce/cam/cam). Medians
with their 95% confidence interval; a case whose check failed is marked with
a red x. Needs no display (Agg backend).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from reproduce import mbresults  # noqa: E402

IO_MODES = ["posix", "bounce", "inline", "mmap", "sync", "async", "fio"]
APP_MODES = ["compute", "io", "posix", "sync", "async"]
APPS = ["gemm", "sort", "gather"]
# the apps are mb-ooc's; result files from before it split off say mb-aio (--app)
BENCHMARKS = ("mb-aio", "mb-ooc")
COLORS = {"posix": "tab:gray", "bounce": "tab:brown", "inline": "tab:purple", "mmap": "tab:pink",
          "sync": "tab:blue", "async": "tab:orange", "fio": "tab:green", "compute": "tab:olive", "io": "tab:cyan"}
TARGET = 1.15  # the target: async within 15% of the overlap bound



def block(r):
    return r["bytes"] // max(r["count"], 1)


def split(runs, rows):
    """(I/O rows of runs sweeping block sizes, I/O rows of the other runs, app rows)."""
    io = [r for r in rows if r.get("app", "io") == "io" and r.get("rw") == "read" and r["count"] > 0]
    apps = [r for r in rows if r.get("app", "io") in APPS]
    sizes = {}
    for r in io:
        sizes.setdefault(r["run"], set()).add(block(r))
    sweep = [r for r in io if len(sizes[r["run"]]) > 1]
    single = [r for r in io if len(sizes[r["run"]]) == 1]
    return sweep, single or sweep, apps


def files_of(runs, r):
    return int(runs[r["run"]]["config"].get("files", 1))


def line_panel(ax, rows, xkey, xlabel, title, logx):
    for mode in IO_MODES:
        pts = sorted((r for r in rows if r["mode"] == mode), key=xkey)
        if not pts:
            continue
        x = [xkey(r) for r in pts]
        gbs = [r["algbw"] for r in pts]
        lo = [r["bytes"] / r["ci_hi"] / 1e9 if r["ci_hi"] > 0 else g for r, g in zip(pts, gbs)]
        hi = [r["bytes"] / r["ci_lo"] / 1e9 if r["ci_lo"] > 0 else g for r, g in zip(pts, gbs)]
        ax.plot(x, gbs, "o-", ms=3, color=COLORS[mode], label=mode if mode not in ("sync", "async") else f"engine {mode}")
        ax.fill_between(x, lo, hi, color=COLORS[mode], alpha=0.2, lw=0)
        bad = [r for r in pts if r["check"] == "fail"]
        if bad:
            ax.plot([xkey(r) for r in bad], [r["algbw"] for r in bad], "x", color="red", ms=9, mew=2)
    if logx:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({xkey(r) for r in rows}))
        ax.xaxis.set_major_formatter(FuncFormatter(mbresults.size_label))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("read throughput (GB/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def app_panel(ax, rows, runs, app):
    pts = {r["mode"]: r for r in rows if r["app"] == app}
    modes = [m for m in APP_MODES if m in pts]
    if not modes:
        ax.set_visible(False)
        return None
    x = range(len(modes))
    med = [pts[m]["t_median"] for m in modes]
    err = [[med[i] - pts[m]["ci_lo"] for i, m in enumerate(modes)], [pts[m]["ci_hi"] - med[i] for i, m in enumerate(modes)]]
    ax.bar(x, med, yerr=err, color=[COLORS[m] for m in modes], capsize=3)
    for i, m in enumerate(modes):
        if pts[m]["check"] == "fail":
            ax.plot(i, med[i], "x", color="red", ms=10, mew=2)
    ratio = None
    if "compute" in pts and "io" in pts:
        bound = max(pts["compute"]["t_median"], pts["io"]["t_median"])
        ax.axhline(bound, ls="--", color="k", lw=1, label="overlap bound max(compute, io)")
        if "async" in pts:
            ratio = pts["async"]["t_median"] / bound
            ax.annotate(f"{ratio:.2f}× bound", (modes.index("async"), pts["async"]["t_median"]),
                        textcoords="offset points", xytext=(0, 4), ha="center", fontsize=8)
        ax.legend(fontsize=7, loc="upper left")
    ax.set_xticks(list(x))
    ax.set_xticklabels(modes)
    cfg = runs[next(iter(pts.values()))["run"]]["config"]
    detail = {"gemm": f"n={cfg.get('gemm-n')} tile={cfg.get('gemm-tile')}",
              "sort": f"{cfg.get('sort-keys')} keys, budget {mbresults.size_label(cfg.get('mem-budget', 0))}B",
              "gather": f"{cfg.get('gather-batches')}×{cfg.get('gather-batch')} of {cfg.get('gather-rows')} rows, "
                        f"zipf {cfg.get('zipf')}"}[app]
    ax.set_title(f"{app}: {detail}", fontsize=10)
    ax.set_ylabel("median time per run (s)")
    ax.grid(True, axis="y", alpha=0.3)
    return ratio


def main():
    a = mbresults.parse_args(__doc__, "build/reproduce/cam/cam", "output prefix; PREFIX.png and PREFIX.pdf")
    runs, rows = mbresults.load_cases(a.inputs, BENCHMARKS, "plot.py", "mb-aio or mb-ooc cases")
    sweep, single, apps = split(runs, rows)
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    if sweep:
        line_panel(axes[0][0], sweep, block, "block size (bytes, K = 1024)",
                   "random read vs block size (Fig. 8b)", True)
    else:
        axes[0][0].set_visible(False)
    four_k = [r for r in single if block(r) == 4096] or single
    if four_k:
        line_panel(axes[0][1], four_k, lambda r: files_of(runs, r), "files striped (stand-in SSDs)",
                   f"{mbresults.size_label(block(four_k[0]))}B random read vs files (Fig. 8a)", False)
        axes[0][1].set_xticks(sorted({files_of(runs, r) for r in four_k}))
    else:
        axes[0][1].set_visible(False)
    ratios = {}
    for i, app in enumerate(APPS):
        ax = axes[0][2] if i == 0 else axes[1][i - 1]
        ratios[app] = app_panel(ax, apps, runs, app)
    ax = axes[1][2]
    got = [(k, v) for k, v in ratios.items() if v is not None]
    if got:
        ax.bar([k for k, _ in got], [v for _, v in got], color="tab:orange")
        ax.axhline(1.0, color="k", lw=1)
        ax.axhline(TARGET, ls="--", color="red", lw=1, label=f"target {TARGET}")
        ax.set_ylabel("async time / max(compute, io)")
        ax.set_title("overlap: async against its bound", fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    else:
        ax.set_visible(False)
    hw = sorted({mbresults.hardware(r).split(";")[0] for r in runs})
    emu = sorted({str(r.get("emulation", "none")) for r in runs} - {"none"})
    fig.suptitle("mb-aio (CAM): " + (hw[0] if len(hw) == 1 else f"{len(hw)} machines")
                 + (f"; emulation: {emu[0]}" if emu else ""), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    mbresults.save_figure(fig, a.out, dpi=110)


if __name__ == "__main__":
    main()
