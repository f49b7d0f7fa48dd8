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
TARGETS = {"tpc": (0.10, 0.20)}  # held-out mean, worst (issue 16)
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
        if m in TARGETS and held:
            tm, tw = TARGETS[m]
            tgt = f"≤ {100 * tm:.0f}% / ≤ {100 * tw:.0f}%"
            ok = statistics.fmean(held) <= tm and max(held) <= tw
            verdict = "met" if ok else "missed"
        L.append(f"| {m} | {c[3]} | {c[0]} | {c[1]} | {c[2]} | {h[3]} | {h[0]} | {h[1]} | {h[2]} | {tgt} | {verdict} |")
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


def plot(rows, prefix):
    fig, ax = plt.subplots(figsize=(5.5, 5))
    lo = min(min(r["predicted_s"], r["measured_s"]) for r in rows) / 1.5
    hi = max(max(r["predicted_s"], r["measured_s"]) for r in rows) * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=1, label="y = x")
    for i, m in enumerate(sorted({r["model"] for r in rows})):
        for s, fill in (("heldout", True), ("calibration", False)):
            pts = [r for r in rows if r["model"] == m and r["set"] == s]
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
