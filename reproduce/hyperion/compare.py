#!/usr/bin/env python3
"""compare.md for the Hyperion study: the paper's numbers next to ours,
with the hardware of each, and issue 7's targets with pass/miss.

    python -m reproduce.hyperion.compare [-o compare.md] [--csv sweep.csv] INPUT [INPUT ...]

"Ours" are ratios of median epoch times measured side by side in one
mb-gnn run (the run with the most systems); the TPC model error is taken
per point of the sweep over files and cache sizes (hyperion, and nopipe's
serial model where the sweep ran it): predicted epoch time (profiled in
the same run, before its first epoch) against the median measured epoch,
on wall times and steal-free (each side multiplied by 1 - the host steal
it was measured under: see steal_free_median).
"""
import argparse
import csv
import datetime
import os
import sys

from reproduce import mbresults  # noqa: E402
from reproduce.hyperion.plot import epoch_values, load, median, pair_ratio, steal_free_median, system_value  # noqa: E402

PAPER_HW = ("machine A: 1x A100 80 GB, 12x Intel P5510 NVMe (PCIe 4.0), 2x Xeon; "
            "datasets PA/IG/UK/CL/LD (56 GB to 23 TB of features)")

# (claim, paper number, our ratio (numerator system, denominator system), what the ratio is)
CLAIMS = [
    ("Pipeline vs Hyperion-NoPipe (SAGE), up to", "1.74×", ("nopipe", "hyperion"), "nopipe / hyperion epoch time"),
    ("vs Ginex (CPU-managed, page-cache/pread) on PA", "68×", ("mmap", "hyperion"), "mmap / hyperion epoch time"),
    ("vs the page cache with MADV_RANDOM (one page per fault)", "—", ("mmap-random", "hyperion"),
     "mmap-random / hyperion epoch time"),
    ("vs in-memory Legion: share of its throughput", "88–97%", ("inmem", "hyperion"), "inmem / hyperion epoch time"),
    ("CPU cache effect, up to", "1.73×", ("nocache", "hyperion"), "nocache / hyperion epoch time"),
    ("Worst cache placement: TPC cut to", "52%", ("hyperion", "topo-first"), "hyperion / topo-first epoch time"),
    ("Worst cache placement (features first)", "52% (worst of five)", ("hyperion", "feat-first"),
     "hyperion / feat-first epoch time"),
]


def ratio(rows, a, b):
    return pair_ratio(rows, a, b)[0]


def sweep_rows(rows, systems=("hyperion", "nopipe")):
    """Cases of the TPC sweep: the runs of at most hyperion and nopipe.
    Without such runs (older results), every hyperion case but the short
    mmap pair's (one batch: no steady state to predict)."""
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run"], set()).add(r["system"])
    sweep = {k for k, v in by_run.items() if v <= {"hyperion", "nopipe"}}
    if sweep:
        return [r for r in rows if r["run"] in sweep and r["system"] in systems]
    with_mmap = {r["run"] for r in rows if r["system"] == "mmap"}
    only_pairs = len(by_run) > len(with_mmap)
    return [r for r in rows if r["system"] == "hyperion" and not (only_pairs and r["run"] in with_mmap)]


def steal_free_error(run, r):
    """The model's error with both sides steal-free: the prediction x (1 -
    the profile's steal) against steal_free_median."""
    sf = steal_free_median(run, r["system"])
    sp = float(system_value(run, r["system"], "profile_host_steal"))
    return (r["model"] * (1 - sp) - sf) / sf if sf == sf and sf > 0 and r["model"] == r["model"] else float("nan")


def model_error(r):
    return (r["model"] - r["t_median"]) / r["t_median"] if r["model"] == r["model"] and r["t_median"] > 0 \
        else float("nan")


def signed_pct(x):
    return f"{100 * x:+.0f}%" if x == x else "–"


def pct_or_dash(x):
    """A share as a percentage, or "–" where the run did not record it."""
    return f"{100 * x:.1f}%" if x == x else "–"


def fmt(x, pct=False):
    if x != x:
        return "not measured"
    return f"{100 * x:.0f}%" if pct else f"{x:.2f}×"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="build/reproduce/hyperion/compare.md")
    ap.add_argument("--csv", help="also write the sweep's points (predicted vs measured) here")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    runs, rows = load(a.inputs)
    if not rows:
        sys.exit("compare.py: no mb-gnn training cases in " + " ".join(a.inputs))
    best = max(rows, key=lambda r: r["nsys"])["run"]
    run = runs[best]
    cfg = run["config"]
    sysrows = {r["system"]: r for r in rows if r["run"] == best}
    L = []
    L.append("# Hyperion (ICDE'25): paper vs mb-gnn\n")
    L.append(f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC} from "
             f"{len({r['run'] for r in rows})} result file(s).\n")
    L.append(f"- **Paper hardware:** {PAPER_HW}.")
    L.append(f"- **Ours:** {mbresults.hardware(run)}; {run.get('emulation', '')}.")
    L.append(f"- **Our dataset:** R-MAT, {cfg.get('n')} nodes, {cfg.get('m')} stored edges, dim {cfg.get('dim')}, "
             f"{mbresults.fmt_bytes(cfg.get('feature_bytes', 0))} of features on {cfg.get('ndev')} file(s); "
             f"batch {cfg.get('batch')}, fan-out {cfg.get('fanout')} (PyG order), hidden {cfg.get('hidden')}.")
    L.append(f"- **Memory budget:** {mbresults.fmt_bytes(cfg.get('budget_bytes', 0) or 0)} "
             f"({cfg.get('budget_method')}: {cfg.get('budget_detail')}); {cfg.get('budget_scope')}.")
    L.append("- Timings were taken on a 2-core VM whose host other tenants share: ratios, not absolute times, are the result.\n")

    L.append("## Epoch time per system (Fig. 8/9/11)\n")
    L.append("| system | run | median epoch (s) | min–max | per batch (ms) | TPC model (s) | floor estimate (s) | epoch / floor | check |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    shown = [(s, sysrows[s], "main") for s in ("inmem", "hyperion", "topo-first", "feat-first", "nopipe", "nocache", "mmap")
             if s in sysrows]
    for m in ("mmap", "mmap-random"):
        if m not in sysrows:
            _, pair = pair_ratio(rows, m, "hyperion")
            if pair:
                shown += [("hyperion", pair["hyperion"], f"{m} pair"), (m, pair[m], f"{m} pair")]
    for s, r, which in shown:
        eb = r["epoch_bound"]
        L.append(f"| {s} | {which} | {r['t_median']:.3f} | {r['t_min']:.3f}–{r['t_max']:.3f} | {1e3 * r['per_batch']:.1f} | "
                 f"{r['model']:.3f} | {r['bound']:.3f} | {eb:.2f} | {r['check']} |")
    L.append("")
    L.append("`main`: every system but mmap side by side; `mmap pair`: hyperion and mmap side by side in their own "
             "run with fewer batches (mmap under the budget takes minutes per batch here: the disk's read-ahead is "
             f"{cfg.get('read_ahead_kb', '?')} KiB, read around every page fault); `mmap-random pair`: the same with "
             "madvise(MADV_RANDOM), one page per fault, a whole epoch.\n")

    L.append("## Published claims next to ours\n")
    L.append("| claim (paper) | paper | ours | our ratio |")
    L.append("|---|---|---|---|")
    for claim, paper, (x, y), what in CLAIMS:
        v = ratio(rows, x, y)
        L.append(f"| {claim} | {paper} | {fmt(v, pct=paper.endswith('%') or '%' in paper)} | {what} |")
    L.append("")

    L.append("## Issue 7's targets\n")
    L.append("| target | measured | verdict |")
    L.append("|---|---|---|")
    hy = sysrows.get("hyperion")
    if hy:
        eb = hy["epoch_bound"]
        L.append(f"| epoch time within 1.25× of the floor estimate (median over epochs of epoch / its floor; an estimate: systems can run below it, docs/models.md) | {fmt(eb)} | "
                 f"{'met' if eb <= 1.25 else 'missed'} |")
        # the same with steal-free epochs (hyperion's and inmem's); the
        # reads' term, disk time, takes no steal correction
        inmem_sf = steal_free_median(run, "inmem")
        t, st = epoch_values(run, "hyperion", "time_s"), epoch_values(run, "hyperion", "host_steal")
        bounds = [max((x for x in (inmem_sf, m) if x == x), default=float("nan"))
                  for m in epoch_values(run, "hyperion", "miss_read_s")]
        # (NaN steal or bound: the comparison is NaN, which median leaves out)
        eb_sf = median([a * (1 - b) / c for a, b, c in zip(t, st, bounds) if c > 0])
        if eb_sf == eb_sf:
            L.append(f"| epoch time within 1.25× of the floor estimate, steal-free | {fmt(eb_sf)} | "
                     f"{'met' if eb_sf <= 1.25 else 'missed'} |")
    v = ratio(rows, "mmap", "hyperion")
    L.append(f"| ≥ 3× faster than mmap under the same budget | {fmt(v)} | {'met' if v >= 3 else 'missed'} |")
    v = ratio(rows, "mmap-random", "hyperion")
    if v == v:
        L.append(f"| ≥ 3× faster than mmap with MADV_RANDOM | {fmt(v)} | {'met' if v >= 3 else 'missed'} |")
    v = ratio(rows, "nopipe", "hyperion")
    L.append(f"| pipeline ≥ 1.3× faster than nopipe | {fmt(v)} | {'met' if v >= 1.3 else 'missed'} |")
    sweep = sorted(sweep_rows(rows), key=lambda r: (r["ndev"], r["cache"], r["system"]))
    for sysname in ("hyperion", "nopipe"):
        what = "TPC model" if sysname == "hyperion" else "nopipe's model"
        for how, err in (("wall times", model_error),
                         ("steal-free", lambda r: steal_free_error(runs[r["run"]], r))):
            errs = [abs(err(r)) for r in sweep if r["system"] == sysname]
            if not errs:
                continue
            errs = [e for e in errs if e == e]
            if not errs:
                # e.g. epochs too short for /proc/stat's ticks to resolve steal
                L.append(f"| {what} in-sample error < 15% across the sweep (0 points), {how} | – | – |")
                continue
            worst = max(errs)
            mean = sum(errs) / len(errs)
            L.append(f"| {what} in-sample error < 15% across the sweep ({len(errs)} points), {how} | mean {100 * mean:.0f}%, "
                     f"worst {100 * worst:.0f}% | {'met' if worst < 0.15 else 'missed'} |")
    L.append("")
    L.append("## TPC model sweep (Fig. 12/13/14)\n")
    L.append("Each point is one mb-gnn run: a profiling run before the first epoch (serial, then through the "
             "pipeline) gives the model its inputs (stage times and CPU, storage traffic, the engine's rate at the "
             "pipeline's depth); the prediction is then compared with the median of the measured epochs. Host "
             "steal is the share of the VM's CPU time the hypervisor gave other guests, during the profile and "
             "(median) during the epochs: what the neighbours took from either side of the comparison.\n")
    L.append("| files | cache | system | measured epoch (s), median | min–max | predicted (s) | error | bottleneck "
             "| host steal: profile / epochs | error, steal-free |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    points = []
    for r in sweep:
        run_r = runs[r["run"]]
        bounds_named = [b for b in epoch_values(run_r, r["system"], "model_bound") if isinstance(b, str) and b]
        bnd = bounds_named[-1] if bounds_named else "?"
        steal_e = median(epoch_values(run_r, r["system"], "host_steal"))
        steal_p = float(system_value(run_r, r["system"], "profile_host_steal"))
        err_sf = steal_free_error(run_r, r)
        err = model_error(r)
        pct = 100.0 * r["cache"] / max(1, r["feature_bytes"])
        points.append((r["ndev"], r["cache"], pct, r["system"], r["t_median"], r["t_min"], r["t_max"], r["model"], err,
                       bnd, steal_p, steal_e, err_sf))
        L.append(f"| {r['ndev']} | {mbresults.fmt_bytes(r['cache'])} ({pct:.0f}%) | {r['system']} | {r['t_median']:.3f} | "
                 f"{r['t_min']:.3f}–{r['t_max']:.3f} | {r['model']:.3f} | {100 * err:+.0f}% | {bnd} | "
                 f"{pct_or_dash(steal_p)} / {pct_or_dash(steal_e)} | {signed_pct(err_sf)} |")
    if points:
        worst = max(points, key=lambda p: abs(p[8]) if p[8] == p[8] else -1)
        L.append("")
        L.append(f"Largest error: {100 * worst[8]:+.0f}% ({worst[3]}, {worst[0]} file(s), cache {worst[2]:.0f}%).")
        worst = max(points, key=lambda p: abs(p[12]) if p[12] == p[12] else -1)
        if worst[12] == worst[12]:
            L.append(f"Largest steal-free error: {100 * worst[12]:+.0f}% ({worst[3]}, {worst[0]} file(s), "
                     f"cache {worst[2]:.0f}%).")
    L.append("")
    L.append("All data files live on one virtual disk of this machine, so more files cannot add device "
             "bandwidth the way more SSDs do in the paper; the model does not assume they do: it takes the "
             "engine's rate measured over the run's own files.")
    if a.csv:
        os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["files", "cache_bytes", "cache_pct", "system", "measured_median_s", "measured_min_s",
                        "measured_max_s", "predicted_s", "error", "bottleneck", "profile_host_steal",
                        "epoch_host_steal_median", "error_steal_free"])
            for p in points:
                w.writerow([p[0], p[1], f"{p[2]:.1f}", p[3], f"{p[4]:.4f}", f"{p[5]:.4f}", f"{p[6]:.4f}",
                            f"{p[7]:.4f}", f"{p[8]:.4f}", p[9], f"{p[10]:.4f}", f"{p[11]:.4f}", f"{p[12]:.4f}"])
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(a.out)


if __name__ == "__main__":
    main()
