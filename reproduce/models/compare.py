#!/usr/bin/env python3
"""The models study's table and figure (docs/models.md): merges the CSV
rows of each model (model,point,set,predicted_s,measured_s), writes
models.csv, compare.md (errors in-sample and held-out side by side per
model, then every held-out point's prediction against its measurement)
and a log-log plot of predicted against measured (y = x line, one marker
per model; hollow: calibration points).

    python -m reproduce.models.compare -o compare.md --plot PREFIX --csv models.csv [--note TEXT] CSV [CSV ...]

A row with a missing or non-positive number is an error (exit 1): it is
never left out quietly.
"""
import argparse
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FIELDS = ["model", "point", "set", "predicted_s", "measured_s"]
# issue 16's held-out targets, per model family (the name before ':'):
# tpc: mean and worst; coll:<algorithm>: the median per algorithm
TARGETS = {"tpc": ("mean/worst", 0.10, 0.20), "coll": ("median", 0.20, None)}
AUTO_TARGET = 1.25  # coll:auto's measured time over the fastest algorithm's, every held-out point
MARKERS = ["o", "s", "^", "D", "v"]


def read(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for i, r in enumerate(csv.DictReader(f)):
                if any(r.get(k) in (None, "") for k in FIELDS) or r["set"] not in ("calibration", "heldout"):
                    raise ValueError(f"{p}:{i + 2}: a row needs {','.join(FIELDS)} (set calibration|heldout): {r}")
                pr, me = float(r["predicted_s"]), float(r["measured_s"])
                if not (pr > 0 and me > 0):
                    raise ValueError(f"{p}:{i + 2}: predicted and measured must be positive: {r}")
                rows.append(dict(r, predicted_s=pr, measured_s=me, error=abs(pr - me) / me))
    return rows


def stats(errs):
    if not errs:
        return "–", "–", "–", 0
    return (f"{100 * statistics.fmean(errs):.1f}%", f"{100 * statistics.median(errs):.1f}%",
            f"{100 * max(errs):.1f}%", len(errs))


def write_md(rows, path, note):
    models = sorted({r["model"] for r in rows})
    L = ["# Models: predicted vs measured (reproduce/models)", ""]
    if note:
        L += [note, ""]
    L += ["Protocol: docs/models.md. Calibration (in-sample) points are the configurations the model was "
          "developed and calibrated on; held-out points were drawn by a seeded random choice from a grid "
          "without them and never tuned on.", ""]
    L += ["## Errors, in-sample and held-out", "",
          "| model | in-sample n | in-sample mean | median | worst | held-out n | held-out mean | median | worst "
          "| target (held-out mean / worst) | verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        cal = [r["error"] for r in rows if r["model"] == m and r["set"] == "calibration"]
        held = [r["error"] for r in rows if r["model"] == m and r["set"] == "heldout"]
        c, h = stats(cal), stats(held)
        tgt, verdict = "–", "–"
        fam = TARGETS.get(m.split(":")[0])
        if fam and held and m != "coll:auto":
            kind, t1, t2 = fam
            if kind == "median":
                tgt = f"median ≤ {100 * t1:.0f}%"
                ok = statistics.median(held) <= t1
            else:
                tgt = f"≤ {100 * t1:.0f}% / ≤ {100 * t2:.0f}%"
                ok = statistics.fmean(held) <= t1 and max(held) <= t2
            verdict = "met" if ok else "missed"
        L.append(f"| {m} | {c[3]} | {c[0]} | {c[1]} | {c[2]} | {h[3]} | {h[0]} | {h[1]} | {h[2]} | {tgt} | {verdict} |")
    L += auto_lines(rows)
    L += ["", "## Held-out points", "", "| model | point | predicted (s) | measured (s) | error |", "|---|---|---|---|---|"]
    for r in rows:
        if r["set"] == "heldout":
            L.append(f"| {r['model']} | {r['point']} | {r['predicted_s']:.4g} | {r['measured_s']:.4g} | "
                     f"{100 * r['error']:.1f}% |")
    L += ["", "## Calibration (in-sample) points", "", "| model | point | predicted (s) | measured (s) | error |",
          "|---|---|---|---|---|"]
    for r in rows:
        if r["set"] == "calibration":
            L.append(f"| {r['model']} | {r['point']} | {r['predicted_s']:.4g} | {r['measured_s']:.4g} | "
                     f"{100 * r['error']:.1f}% |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def auto_lines(rows):
    """coll:auto against the fastest measured algorithm at each held-out point."""
    held = [r for r in rows if r["set"] == "heldout" and r["model"].startswith("coll:")]
    points = sorted({r["point"] for r in held if r["model"] == "coll:auto"})
    if not points:
        return []
    L = ["", "## coll:auto against the fastest measured algorithm (held-out)", "",
         "| point | auto (s) | fastest | fastest (s) | auto / fastest |", "|---|---|---|---|---|"]
    ratios = []
    for p in points:
        auto = next(r for r in held if r["point"] == p and r["model"] == "coll:auto")
        best = min((r for r in held if r["point"] == p and r["model"] != "coll:auto"),
                   key=lambda r: r["measured_s"], default=None)
        if best is None:
            continue
        ratio = auto["measured_s"] / best["measured_s"]
        ratios.append(ratio)
        L.append(f"| {p} | {auto['measured_s']:.4g} | {best['model']} | {best['measured_s']:.4g} | {ratio:.2f} |")
    if ratios:
        worst = max(ratios)
        L += ["", f"auto within {AUTO_TARGET}x of the fastest at {sum(r <= AUTO_TARGET for r in ratios)} of "
              f"{len(ratios)} held-out points; worst {worst:.2f}x: target {'met' if worst <= AUTO_TARGET else 'missed'}."]
    return L


def plot(rows, prefix):
    fig, ax = plt.subplots(figsize=(5.5, 5))
    lo = min(min(r["predicted_s"], r["measured_s"]) for r in rows) / 1.5
    hi = max(max(r["predicted_s"], r["measured_s"]) for r in rows) * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=1, label="y = x")
    # one marker per model family (tpc; coll: every algorithm of the collectives model)
    for i, m in enumerate(sorted({r["model"].split(":")[0] for r in rows})):
        for s, fill in (("heldout", True), ("calibration", False)):
            pts = [r for r in rows if r["model"].split(":")[0] == m and r["set"] == s]
            if pts:
                ax.plot([r["measured_s"] for r in pts], [r["predicted_s"] for r in pts], MARKERS[i % len(MARKERS)],
                        color=f"C{i}", mfc=f"C{i}" if fill else "none", ls="none",
                        label=f"{m} ({'held-out' if fill else 'calibration'})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured (s)")
    ax.set_ylabel("predicted (s)")
    ax.set_title("Models: predicted vs measured")
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(f"{prefix}.{ext}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, help="compare.md")
    ap.add_argument("--plot", required=True, help="figure prefix (PREFIX.png, PREFIX.pdf)")
    ap.add_argument("--csv", required=True, help="merged rows")
    ap.add_argument("--note", default="")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    try:
        rows = read(a.inputs)
    except (OSError, ValueError) as e:
        print(f"compare: {e}", file=sys.stderr)
        return 1
    if not rows:
        print("compare: no rows", file=sys.stderr)
        return 1
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    write_md(rows, a.out, a.note)
    plot(rows, a.plot)
    print(a.out)
    print(f"{a.plot}.png")
    print(f"{a.plot}.pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
