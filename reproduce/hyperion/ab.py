#!/usr/bin/env python3
"""ab.md for reproduce/hyperion/ab.sh: the Hyperion study's ratios from an
old and a new mb-gnn run side by side (issue 15).

    python -m reproduce.hyperion.ab [-o ab.md] [--note TEXT] --label NAME DIR --label NAME DIR

Each DIR holds one side's result files (any depth). Every ratio is taken
within one mb-gnn run (systems measured side by side), one column per run
in start-time order, then the median of the side's runs; the last column
is new median / old median. hyperion/floor is the median over hyperion's
epochs of the epoch time over that epoch's floor estimate (the bound, in
files before issue 16).
"""
import argparse
import os
import sys

from reproduce import mbresults  # noqa: E402
from reproduce.hyperion.plot import epoch_values, load, median  # noqa: E402

# (label, numerator system, denominator system); None: hyperion's epoch / floor
RATIOS = [
    ("nopipe / hyperion", "nopipe", "hyperion"),
    ("inmem / hyperion", "inmem", "hyperion"),
    ("nocache / hyperion", "nocache", "hyperion"),
    ("hyperion / topo-first", "hyperion", "topo-first"),
    ("hyperion / feat-first", "hyperion", "feat-first"),
    ("mmap / hyperion", "mmap", "hyperion"),
    ("mmap-random / hyperion", "mmap-random", "hyperion"),
    ("hyperion / floor", "hyperion", None),
]


def side(folder):
    """[(start time, git commit, {system: row})] of the runs under folder, by start time."""
    if not os.path.isdir(folder):
        sys.exit(f"ab: {folder} is not a folder")
    runs, rows = load([folder])
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run"], {})[r["system"]] = r
    out = [(runs[i].get("start_time_utc", ""), runs[i].get("git_commit", "?"), s) for i, s in by_run.items()]
    # files before issue 16 have no floor estimate: plot.load took their bound_s
    old_bound = any(all(x != x for x in epoch_values(runs[i], "hyperion", "floor_estimate_s"))
                    for i, s in by_run.items() if "hyperion" in s)
    return sorted(out, key=lambda x: x[0]), old_bound


def ratio(sysrows, a, b):
    """a / b within one run; hyperion's median epoch/floor when b is None; NaN when absent."""
    if a not in sysrows:
        return float("nan")
    if b is None:
        return sysrows[a].get("epoch_bound", float("nan"))
    if b not in sysrows or not sysrows[b]["t_median"] > 0:
        return float("nan")
    return sysrows[a]["t_median"] / sysrows[b]["t_median"]


def cell(x):
    return f"{x:.3f}" if x == x else "–"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="ab.md")
    ap.add_argument("--note", default="", help="a line on the datasets, printed under the table")
    ap.add_argument("--label", nargs=2, action="append", metavar=("NAME", "DIR"), required=True)
    a = ap.parse_args()
    if len(a.label) != 2:
        ap.error("--label NAME DIR: exactly two sides (old, new)")
    sides, bounds = [], []
    for name, folder in a.label:
        runs, old_bound = side(folder)
        sides.append((name, runs))
        if old_bound:
            bounds.append(name)
    for name, runs in sides:
        if not runs:
            sys.exit(f"ab: no mb-gnn results for {name}")
    head = ["ratio"]
    for name, runs in sides:
        main_runs = [r for r in runs if len(r[2]) > 2]
        head += [f"{name} #{k + 1}" for k in range(len(main_runs))] + [f"{name} median"]
    head.append("new / old")
    lines = ["# Hyperion A/B: old and new mb-gnn side by side (issue 15)", ""]
    for name, runs in sides:
        commits = sorted({c for _, c, _ in runs})
        lines.append(f"- {name}: {len(runs)} result file(s), git_commit {', '.join(c[:12] for c in commits)}, "
                     f"first start {runs[0][0]}")
    if a.note:
        lines.append(f"- {a.note}")
    for name in bounds:
        lines.append(f"- {name}: hyperion / floor divides by bound_s, the estimate before issue 16 "
                     "(floor_estimate_s, over every rank's bytes, replaced it): not the same quantity")
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, num, den in RATIOS:
        row, meds = [label], []
        for _, runs in sides:
            main_runs = [s for _, _, s in runs if len(s) > 2]
            vals = [ratio(s, num, den) for s in main_runs]
            if not any(v == v for v in vals):
                # the mmap pairs ran beside hyperion in runs of their own, one a rep
                pairs = [ratio(s, num, den) for _, _, s in runs if len(s) <= 2]
                vals = ([v for v in pairs if v == v] + [float("nan")] * len(main_runs))[:len(main_runs)]
            meds.append(median(vals))
            row += [cell(v) for v in vals] + [cell(meds[-1])]
        if not any(m == m for m in meds):
            continue
        row.append(cell(meds[1] / meds[0]) if meds[0] > 0 and meds[1] == meds[1] else "–")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Every ratio is of median epoch times measured side by side in one run (hyperion / floor: "
              "the median of hyperion's epoch / floor estimate). A side's median is over its runs; "
              "new / old compares the medians: 1.000 is unchanged."]
    mbresults.write_lines(a.out, lines)


if __name__ == "__main__":
    main()
