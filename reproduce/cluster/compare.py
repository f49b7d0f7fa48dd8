"""compare.md of the cluster study: per node count, each algorithm's median
allreduce time beside the link's bandwidth floor 2(N-1)/N * S / rate (N
nodes, S bytes, rate the tbf rate of each node's link), the ratio, and
where hier wins against the best of the others; then every measurement
beside the cost model's prediction (the result file's model column, from
the profile whose link terms --calibrate-net measured) and its error.
    python -m reproduce.cluster.compare --gbps R -o compare.md RESULT.h5..."""
import argparse
import math
import os

from reproduce import mbresults as mb

ALGOS = ("hier", "ring", "rabenseifner", "ucx", "mpi")


def floor_s(nnodes, nbytes, gbps):
    """Seconds the link needs at least: each node sends 2(N-1)/N * S."""
    return 2.0 * (nnodes - 1) / nnodes * nbytes / (gbps * 1e9 / 8.0)


def load_note(run):
    """uptime before and after the run, from run.sh's load-*.txt beside the result file."""
    src = str(run.get("source_file", ""))
    path = os.path.join(os.path.dirname(src), os.path.basename(src).replace("cluster-", "load-", 1)[:-3] + ".txt")
    try:
        with open(path) as f:
            loads = [ln.split("load average:")[-1].strip() for ln in f if "load average" in ln]
    except OSError:
        return "Load when measured: not recorded."
    when = "before; after" if len(loads) == 2 else "before"
    return f"Load average (1, 5, 15 min) {when}: " + "; ".join(loads) + "."


def table(run, rows, gbps):
    n = int(run.get("nnodes", 1))
    if n < 2:
        return [f"(skipped {run.get('source_file')}: {n} node, no link between nodes)", ""]
    by = {(r["algo"], int(r["bytes"])): r for r in rows}
    sizes = sorted({s for _, s in by})
    algos = [a for a in ALGOS if any((a, s) in by for s in sizes)]
    out = [f"### {n} nodes x {int(run.get('nranks', 0)) // max(n, 1)} ranks ({run.get('nranks', '?')} ranks)", "",
           f"Links: {run.get('emulation', '?')}. {load_note(run)}", "",
           "| size | floor (ms) | " + " | ".join(f"{a} ms (x floor)" for a in algos) + " | hier vs best other |",
           "|---|---|" + "---|" * len(algos) + "---|"]
    wins = []
    for s in sizes:
        f = floor_s(n, s, gbps)
        cells, t = [], {}
        for a in algos:
            r = by.get((a, s))
            if r is None or r.get("check") != "pass":
                cells.append("—" if r is None else f"{r.get('check')}")
                continue
            t[a] = float(r["t_median"])
            cells.append(f"{t[a] * 1e3:.3f} ({t[a] / f:.1f}x)")
        others = {a: v for a, v in t.items() if a != "hier"}
        if "hier" in t and others:
            best = min(others, key=others.get)
            ratio = others[best] / t["hier"]
            verdict = f"{'wins' if ratio > 1 else 'loses'}: {ratio:.2f}x vs {best}"
            if ratio > 1:
                wins.append(f"{mb.fmt_bytes(s)} ({ratio:.2f}x over {best})")
        else:
            verdict = "—"
        out.append(f"| {mb.fmt_bytes(s)} | {f * 1e3:.3f} | " + " | ".join(cells) + f" | {verdict} |")
    out += ["", f"hier wins at {n} nodes: " + (", ".join(wins) if wins else "nowhere") + ".", ""]
    out += model_table(run, by, sizes, algos, n, gbps)
    return out


def fnum(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return math.nan
    return v


def model_table(run, by, sizes, algos, n, gbps):
    """Each measurement beside the model's prediction: |model - measured| / measured."""
    cfg = run.get("config", {})
    na, nb = fnum(cfg.get("model_net_alpha_s")), fnum(cfg.get("model_net_s_per_B"))
    link = (f"link terms alpha_net {na * 1e6:.1f} us, {1e-9 / nb:.3f} GB/s per direction"
            if math.isfinite(na) and math.isfinite(nb) and nb > 0 else "no link terms (predictions across nodes: nan)")
    out = [f"Model beside measurement at {n} nodes (profile {cfg.get('model_profile', 'none')}; {link}; "
           "mpi is not modelled):", "",
           "| size | algorithm | measured ms | model ms | model error | measured x floor | model x floor |",
           "|---|---|---|---|---|---|---|"]
    errs = {}
    for s in sizes:
        f = floor_s(n, s, gbps)
        for a in algos:
            r = by.get((a, s))
            if r is None or r.get("check") != "pass":
                continue
            t, m = float(r["t_median"]), fnum(r.get("model"))
            if math.isfinite(m) and t > 0:
                e = abs(m - t) / t
                errs.setdefault(a, []).append(e)
                mcell, ecell, fcell = f"{m * 1e3:.3f}", f"{e * 100:.0f}%", f"{m / f:.1f}x"
            else:
                mcell, ecell, fcell = "nan", "—", "—"
            out.append(f"| {mb.fmt_bytes(s)} | {a} | {t * 1e3:.3f} | {mcell} | {ecell} | {t / f:.1f}x | {fcell} |")
    med = []
    for a, v in errs.items():
        v = sorted(v)
        k = len(v)
        med.append(f"{a} {100 * (v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2):.0f}%")
    out += ["", "Median model error: " + (", ".join(med) if med else "none modelled") + ".", ""]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gbps", type=float, required=True, help="the links' tbf rate, Gbit/s")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if not (a.gbps > 0) or math.isinf(a.gbps):
        ap.error("--gbps must be a positive rate")
    runs, rows = mb.load(a.files)
    lines = ["# Allreduce across emulated hosts (tools/vcluster)", "",
             f"Median time per allreduce (float sum, out of place) against the link floor "
             f"2(N-1)/N * S / {a.gbps:g} Gbit/s: the least time the N nodes' shaped links allow "
             "(each node must send and receive that much; ranks within a node share its link). "
             "x floor = median / floor. The links are tc rate limiters on veths (the emulation "
             "line of each table says which, and the added latency if any); all nodes share this "
             "machine's cores, so CPU time (copies, reductions, TCP) adds to every algorithm.", ""]
    for i, run in enumerate(runs):
        lines += table(run, [r for r in rows if r["run"] == i], a.gbps)
    lines += ["Commands: `sudo reproduce/cluster/run.sh` (see its --help); each run's provenance "
              "(hosts, nnodes, emulation, git commit) is in its result file.", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print(a.out)


if __name__ == "__main__":
    main()
