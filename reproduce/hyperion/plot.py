#!/usr/bin/env python3
"""The Hyperion figures from mb-gnn results: (a) epoch time per system with
the bound and the TPC model's prediction (Fig. 8/9/11), (b) training
throughput against the number of data files standing for SSDs, measured and
predicted, per cache size (Fig. 12/13), (c) predicted against measured epoch
time over the sweep (Fig. 14).

    python -m reproduce.hyperion.plot [-o PREFIX] INPUT [INPUT ...]

INPUT: mb-gnn result files or folders. Writes PREFIX.png and PREFIX.pdf.
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reproduce import mbresults  # noqa: E402

ORDER = ["inmem", "hyperion", "topo-first", "feat-first", "nopipe", "nocache", "mmap", "mmap-random"]


def load(inputs):
    runs, rows = mbresults.load(inputs)
    rows = [r for r in rows if r.get("system") in ORDER]
    for r in rows:
        run = runs[r["run"]]
        cfg = run["config"]
        r["ndev"] = int(cfg.get("ndev", 1))
        r["cache"] = int(cfg.get("cache-host", 0)) + int(cfg.get("cache-dev", 0))
        r["feature_bytes"] = int(cfg.get("feature_bytes", 1))
        # each epoch against its own floor estimate (docs/models.md; the
        # disk's rate is measured right after it): the median of the ratios,
        # and of the floors (files before issue 16 named it bound_s)
        t = epoch_values(run, r["system"], "time_s")
        b = epoch_values(run, r["system"], "floor_estimate_s")
        if all(x != x for x in b):
            b = epoch_values(run, r["system"], "bound_s")
        r["bound"] = median(b)
        r["epoch_bound"] = median([x / y for x, y in zip(t, b) if y > 0])
        r["nsys"] = len({x["system"] for x in rows if x["run"] == r["run"]})
        batches = max(1.0, r["count"] / (float(cfg.get("batch", 1)) * max(1, r["nranks"])))
        r["per_batch"] = r["t_median"] / batches
    return runs, rows


def pair_ratio(rows, a, b):
    """t(a) / t(b) from the run with the most systems holding both."""
    runs = {}
    for r in rows:
        runs.setdefault(r["run"], {})[r["system"]] = r
    best = None
    for sysrows in runs.values():
        if a in sysrows and b in sysrows and (best is None or len(sysrows) > len(best)):
            best = sysrows
    if not best or best[b]["t_median"] <= 0:
        return float("nan"), None
    return best[a]["t_median"] / best[b]["t_median"], best


def system_metrics(run, system):
    """{name: [values]} of system's case in a schema-2 run (its case is
    SYSTEM/DATASET), None for a schema-1 run (measurements in /config)."""
    if not run.get("case_metrics") and int(run.get("schema_version", 1)) < 2:
        return None
    for case, m in run.get("case_metrics", {}).items():
        if case.split("/", 1)[0] == system:
            return m
    return {}


def epoch_values(run, system, key):
    """The per-epoch values of a system's measurement KEY, NaN where absent:
    /metrics/<case>/KEY, or (schema 1) /config/<system>/epoch<E>/<key>."""
    m = system_metrics(run, system)
    if m is not None:
        n = len(m.get("time_s", []))
        v = [x if isinstance(x, str) else float(x) for x in m.get(key, [])]
        return v + [float("nan")] * (n - len(v))
    cfg, out, e = run["config"], [], 0
    while f"{system}/epoch{e}/time_s" in cfg:
        v = cfg.get(f"{system}/epoch{e}/{key}", "nan")
        out.append(v if isinstance(v, str) and key == "model_bound" else float(v))
        e += 1
    return out


def system_value(run, system, name):
    """A system's per-case measurement: /metrics/<case>/NAME (NAME as
    "profile_host_steal"), or (schema 1) /config/<system>/<NAME with the
    first '_' a '/'> as "profile/host_steal"; NaN when absent."""
    m = system_metrics(run, system)
    if m is not None:
        v = m.get(name)
        return v[0] if v else float("nan")
    legacy = name.replace("profile_", "profile/", 1)
    return run["config"].get(f"{system}/{legacy}", float("nan"))


def median(v):
    """The median of the values that are not NaN; NaN when there are none."""
    v = sorted(x for x in v if x == x)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else float("nan")


def steal_free_median(run, system):
    """Median over the epochs of time x (1 - host steal): the epoch on the
    whole machine. A VM given (1 - s) of its CPU time stretches a run by
    1 / (1 - s); on the development VM, steal of 2-25% per epoch explained
    most of the epoch-to-epoch spread (one point's epochs: 1.04-1.40 s
    wall, 0.96-1.09 s steal-free). NaN for results without host_steal."""
    t, st = epoch_values(run, system, "time_s"), epoch_values(run, system, "host_steal")
    return median([a * (1 - b) for a, b in zip(t, st)]) if st and all(x == x for x in st) else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="build/reproduce/hyperion/hyperion")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    runs, rows = load(a.inputs)
    if not rows:
        sys.exit("plot.py: no mb-gnn training cases in " + " ".join(a.inputs))
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))

    # (a) the run with the most systems; mmap from its pair run with hyperion
    # when it ran apart (per-batch times, so runs of other lengths compare)
    best = max(rows, key=lambda r: r["nsys"])["run"]
    sysrows = sorted([r for r in rows if r["run"] == best], key=lambda r: ORDER.index(r["system"]))
    for m in ("mmap", "mmap-random"):
        if not any(r["system"] == m for r in sysrows):
            _, pair = pair_ratio(rows, m, "hyperion")
            if pair:
                sysrows.append(pair[m])
    x = range(len(sysrows))
    pb = [r["per_batch"] / r["t_median"] if r["t_median"] > 0 else 0 for r in sysrows]
    med = [1e3 * r["per_batch"] for r in sysrows]
    err = [[1e3 * (r["t_median"] - r["t_min"]) * k for r, k in zip(sysrows, pb)],
           [1e3 * (r["t_max"] - r["t_median"]) * k for r, k in zip(sysrows, pb)]]
    colors = ["tab:red" if r["check"] == "fail" else "tab:blue" for r in sysrows]
    ax[0].bar(x, med, yerr=err, color=colors, capsize=3, label="measured (median, min-max)")
    ax[0].plot(x, [1e3 * r["model"] * k for r, k in zip(sysrows, pb)], "k^", label="TPC model")
    ax[0].plot(x, [1e3 * r["bound"] * k for r, k in zip(sysrows, pb)], "g_", markersize=18, mew=2, label="floor estimate")
    ax[0].set_xticks(list(x))
    ax[0].set_xticklabels([r["system"] for r in sysrows], rotation=30)
    ax[0].set_yscale("log")
    ax[0].set_ylabel("time per batch (ms, log)")
    run = runs[best]
    ax[0].set_title(f"(a) epoch time, {run['config'].get('n', '?')} nodes, "
                    f"budget {mbresults.fmt_bytes(run['config'].get('budget_bytes', 0) or 0)}", fontsize=9)
    ax[0].legend(fontsize=7)

    # (b) throughput vs files, hyperion, per cache size
    with_mmap = {r["run"] for r in rows if r["system"].startswith("mmap")} if len({r["run"] for r in rows}) > 1 else set()
    hy = [r for r in rows if r["system"] == "hyperion" and r["run"] not in with_mmap]
    for ci, cache in enumerate(sorted({r["cache"] for r in hy})):
        # per file count, the sweep's point (the run with the fewest
        # systems) rather than the systems run at the same cache and files,
        # whichever order the inputs came in
        pts = sorted([r for r in hy if r["cache"] == cache], key=lambda r: (r["ndev"], -r["nsys"]))
        pts = {r["ndev"]: r for r in pts}
        xs = sorted(pts)
        pct = 100.0 * cache / max(1, pts[xs[0]]["feature_bytes"])
        ax[1].plot(xs, [pts[n]["count"] / pts[n]["t_median"] for n in xs], "o-", color=f"C{ci}",
                   label=f"measured, cache {pct:.0f}%")
        ax[1].plot(xs, [pts[n]["count"] / pts[n]["model"] if pts[n]["model"] > 0 else float("nan") for n in xs], "x--",
                   color=f"C{ci}", label=f"TPC model, cache {pct:.0f}%")
    ax[1].set_xlabel("data files (stand-in SSDs)")
    ax[1].set_ylabel("training seeds / s")
    ax[1].set_title("(b) hyperion throughput vs devices", fontsize=9)
    ax[1].legend(fontsize=7)

    # (c) predicted vs measured: on wall times (filled) and steal-free
    # (hollow: the prediction x (1 - the profile's steal) against the median
    # of epoch x (1 - its steal), where the run recorded steal)
    pr = [(r["t_median"], r["model"], r["system"], r) for r in rows
          if r["model"] == r["model"] and r["model"] > 0 and r["run"] not in with_mmap]
    if pr:
        sf = []
        for sysname in sorted({p[2] for p in pr}, key=ORDER.index):
            pts = [p for p in pr if p[2] == sysname]
            dots = ax[2].scatter([p[0] for p in pts], [p[1] for p in pts], s=14, label=sysname)
            for p in pts:
                run = runs[p[3]["run"]]
                sp = float(system_value(run, sysname, "profile_host_steal"))
                m = steal_free_median(run, sysname)
                if m == m and sp == sp:
                    sf.append((m, p[1] * (1 - sp)))
                    ax[2].scatter([m], [p[1] * (1 - sp)], s=22, facecolors="none",
                                  edgecolors=dots.get_facecolor()[0], linewidths=0.8)
        if sf:
            ax[2].scatter([], [], s=22, facecolors="none", edgecolors="k", linewidths=0.8, label="steal-free")
        lim = max(max(p[0] for p in pr), max(p[1] for p in pr), *(max(q) for q in sf)) * 1.1
        ax[2].plot([0, lim], [0, lim], "k-", lw=0.8)
        ax[2].fill_between([0, lim], [0, 0.85 * lim], [0, 1.15 * lim], color="g", alpha=0.15, label="±15%")
        ax[2].set_xlim(0, lim)
        ax[2].set_ylim(0, lim)
        ax[2].legend(fontsize=7)
    ax[2].set_xlabel("measured epoch time (s)")
    ax[2].set_ylabel("predicted epoch time (s)")
    ax[2].set_title("(c) TPC model: predicted vs measured", fontsize=9)
    fig.suptitle(mbresults.hardware(run) + " — 2-core VM, shared host", fontsize=8)
    fig.tight_layout()
    mbresults.save_figure(fig, a.out, dpi=120)


if __name__ == "__main__":
    main()
