"""NPBench's heatmap from a CSV in DaCe's schema (benchmark, framework,
processes, sizes, time; no header; several runs may be appended).

Per (benchmark, framework): the median of its samples, the ratio r =
median / NumPy's median, the label "↑x" (x = 1/r, faster than NumPy) or
"↓r" (slower; > 100 as an integer, > 1000 as "k"), the colour r clipped to
[0, 2] on reversed red-yellow-green, and as a superscript the width of the
bootstrap CI of the median (300 resamples, alpha 0.05, NPBench's order
statistics, here a fixed seed) in percent of the median when >= 1%. A
"Total" row holds each framework's geometric mean of r over the benchmarks
it has. Prints the table and the shared-mode target: the geometric-mean
speedup of ours over NumPy >= 0.9x DaCe's, or >= 2x when DaCe is absent."""
import argparse
import csv
import math
import sys
from collections import defaultdict

import numpy as np

ORDER = ("numpy", "dace_cpu", "ours")


def bootstrap_ci(x, resamples=300, alpha=0.05, seed=42):
    """NPBench's bootstrap of the median: order statistics round((R-1)a/2), round((R-1)(1-a/2))."""
    x = np.asarray(x)
    rng = np.random.default_rng(seed)
    stats = np.sort([np.median(x[rng.integers(0, len(x), len(x))]) for _ in range(resamples)])
    lo, hi = np.round((resamples - 1) * np.array([alpha / 2, 1 - alpha / 2])).astype(int)
    return stats[lo], stats[hi]


def label(r):
    if r == 1:  # NumPy's own column
        return "1.00"
    if r < 1:
        x = 1 / r
        return "↑" + ("k" if x > 1000 else f"{int(x)}" if x > 100 else f"{x:.2f}")
    return "↓" + ("k" if r > 1000 else f"{int(r)}" if r > 100 else f"{r:.2f}")


def superscript(n):
    return "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(n))


def read(path):
    samples = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) != 5:
                raise SystemExit(f"heatmap.py: {path}: a row of {len(row)} fields, expected 5 "
                                 "(benchmark, framework, processes, sizes, time)")
            t = float(row[4])
            if not t > 0:
                raise SystemExit(f"heatmap.py: {path}: time {row[4]!r} of {row[0]}/{row[1]} is not positive")
            samples[(row[0], row[1])].append(t)
    return samples


def table(samples):
    """{framework: {benchmark: (r, ci_pct)}} and the Total row {framework: geomean r}."""
    benches = sorted({b for b, _ in samples})
    fws = [f for f in ORDER if any((b, f) in samples for b in benches)]
    fws += sorted({f for _, f in samples} - set(fws))
    cells = {f: {} for f in fws}
    for b in benches:
        if (b, "numpy") not in samples:
            continue
        base = np.median(samples[(b, "numpy")])
        for f in fws:
            if (b, f) in samples:
                med = np.median(samples[(b, f)])
                lo, hi = bootstrap_ci(samples[(b, f)])
                cells[f][b] = (med / base, 100 * (hi - lo) / med)
    total = {f: math.exp(np.mean([math.log(r) for r, _ in cells[f].values()])) if cells[f] else float("nan")
             for f in fws}
    return benches, fws, cells, total


def text(r, ci):
    return label(r) + (superscript(int(ci)) if ci >= 1 else "")


def plot(benches, fws, cells, total, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = benches + ["Total"]
    grid = np.full((len(rows), len(fws)), np.nan)
    fig, ax = plt.subplots(figsize=(1.6 * len(fws) + 2, 0.42 * len(rows) + 1.2))
    for j, f in enumerate(fws):
        for i, b in enumerate(rows):
            if b == "Total":
                r, ci = total[f], 0
            elif b in cells[f]:
                r, ci = cells[f][b]
            else:
                continue
            grid[i, j] = min(max(r, 0), 2)
            ax.text(j, i, text(r, ci), ha="center", va="center", fontsize=9)
    ax.imshow(grid, cmap="RdYlGn_r", vmin=0, vmax=2, aspect="auto")
    ax.set_xticks(range(len(fws)), fws)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_title("vs NumPy: ↑ faster, ↓ slower; superscript: CI width %", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def target(total):
    """The shared-mode target line and whether it is met (None: not measurable)."""
    if "ours" not in total or not total["ours"] > 0:
        return "target: no 'ours' rows (mb-polybench --mode shared) in the CSV", None
    ours = 1 / total["ours"]
    if "dace_cpu" in total and total["dace_cpu"] > 0:
        dace = 1 / total["dace_cpu"]
        ok = ours >= 0.9 * dace
        return (f"target: geomean speedup over NumPy ours {ours:.2f}x vs DaCe {dace:.2f}x: "
                f"{ours / dace:.2f} of DaCe's, needs >= 0.9: {'met' if ok else 'NOT met'}"), ok
    ok = ours >= 2
    return (f"target: geomean speedup over NumPy ours {ours:.2f}x (DaCe absent), needs >= 2x: "
            f"{'met' if ok else 'NOT met'}"), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--out", help="heatmap image (PNG); default: none")
    a = ap.parse_args()
    samples = read(a.csv)
    if not samples:
        sys.exit(f"heatmap.py: {a.csv}: no rows")
    benches, fws, cells, total = table(samples)
    print("benchmark".ljust(18) + "".join(f.rjust(14) for f in fws))
    for b in benches + ["Total"]:
        line = b.ljust(18)
        for f in fws:
            if b == "Total":
                line += text(total[f], 0).rjust(14)
            else:
                line += (text(*cells[f][b]) if b in cells[f] else "-").rjust(14)
        print(line)
    print(target(total)[0])
    if a.out:
        plot(benches, fws, cells, total, a.out)
        print(f"heatmap: {a.out}")


if __name__ == "__main__":
    main()
