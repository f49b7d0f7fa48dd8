#!/usr/bin/env python3
"""compare.md for the collectives study: each published number next to
ours, with the hardware of each, and our baseline's own numbers.

    python -m reproduce.collectives.compare [-o compare.md] INPUT [INPUT ...]

"Ours" for a speedup claim is measured the way the paper states it: the
MPI library's own collective (algo mpi) is the baseline, and each other
algorithm found in the results is compared with it at the same size, rank
count, dtype, op and form: the geometric mean over sizes for an "average"
claim, the maximum over a size range for an "up to" claim. Claims whose
collective mb-coll does not run, or whose algorithm is not in the results,
say so instead of a number.
"""
import math

from reproduce import mbresults  # noqa: E402

SMALL = 4096          # "small messages": up to 4 KiB
LARGE = 1 << 20       # "large messages": 1 MiB and up

CCCL_HW = "3 H100 hosts, TITAN-II CXL switch, 6 Micron CZ120 memory cards; baseline 200 Gb/s InfiniBand RDMA"
XHC_HW = "Intel Xeon Scalable node; Open MPI 5.0.0rc6, smsc/xpmem, btl sm,self, bind-to-core"
LI_HW = "16-node Xeon cluster and 8-node Opteron cluster; baseline MVAPICH2"

# (source, claim, collective, how, size range, paper number, paper hardware)
CLAIMS = [
    ("CCCL, arXiv 2602.22457 (abstract)", "AllGather, average speedup over RDMA", "allgather", "mean", None, "1.34×", CCCL_HW),
    ("CCCL", "Broadcast, average speedup over RDMA", "bcast", "mean", None, "1.84×", CCCL_HW),
    ("CCCL", "Gather, average speedup over RDMA", "gather", "mean", None, "1.94×", CCCL_HW),
    ("CCCL", "Scatter, average speedup over RDMA", "scatter", "mean", None, "1.04×", CCCL_HW),
    ("XHC, ICPP'23", "Broadcast latency, up to (small messages)", "bcast", "max", (1, SMALL), "1.5×", XHC_HW),
    ("XHC, ICPP'23", "Broadcast latency, up to (large messages)", "bcast", "max", (LARGE, None), "1.25×", XHC_HW),
    ("Li, Hoefler, Snir, HPDC'13", "Allreduce, average speedup over MVAPICH2", "allreduce", "mean", None,
     "2.5× (Xeon), 2.3× (Opteron)", LI_HW),
]


def speedups(rows, coll, size_range):
    """{algo: [mpi median / algo median, ...]} over matching cases."""
    def key(r):
        return (r["run_key"], r["bytes"], r["dtype"], r["op"], r["inplace"])

    base = {key(r): r["t_median"] for r in rows if r["coll"] == coll and r["algo"] == "mpi"}
    out = {}
    for r in rows:
        if r["coll"] != coll or r["algo"] == "mpi" or r["bytes"] <= 0 or r["check"] == "fail":
            continue
        if size_range and (r["bytes"] < size_range[0] or (size_range[1] and r["bytes"] > size_range[1])):
            continue
        b = base.get(key(r))
        if b and r["t_median"] > 0:
            out.setdefault(r["algo"], []).append(b / r["t_median"])
    return out


def ours(rows, colls_run, claim):
    _, _, coll, how, rng, _, _ = claim
    if coll not in colls_run:
        known = "gather" in coll or "scatter" == coll
        return f"not measured: mb-coll has no {coll}" if known else f"not measured: no {coll} in these results"
    sp = speedups(rows, coll, rng)
    if not sp:
        algos = sorted({r["algo"] for r in rows if r["coll"] == coll})
        return f"not measured: only {', '.join(algos)} in these results, no algorithm to compare with mpi"
    parts = []
    for algo in sorted(sp):
        v = sp[algo]
        x = math.exp(sum(math.log(s) for s in v) / len(v)) if how == "mean" else max(v)
        parts.append(f"{algo}: {x:.2f}× ({'geomean' if how == 'mean' else 'max'} of {len(v)} sizes)")
    return "; ".join(parts)


def baseline_table(rows, runs):
    lines = ["| collective | algo | ranks | nodes | latency, smallest size | latency at 1 KiB | peak busbw (at size) | checks |",
             "|---|---|---|---|---|---|---|---|"]
    groups = {}
    for r in rows:
        if r["bytes"] > 0:
            groups.setdefault((r["coll"], r["algo"], r["nranks"], r["nnodes"]), []).append(r)
    for (coll, algo, nranks, nnodes), g in sorted(groups.items()):
        g.sort(key=lambda r: r["bytes"])
        first = g[0]
        k1 = [r for r in g if r["bytes"] == 1024]
        peak = max(g, key=lambda r: r["busbw"])
        checks = sorted({r["check"] for r in g})
        at_1k = f"{k1[0]['t_median'] * 1e6:.2f} µs" if k1 else "—"
        lines.append(f"| {coll} | {algo} | {nranks} | {nnodes} | {first['t_median'] * 1e6:.2f} µs at "
                     f"{mbresults.fmt_bytes(first['bytes'])} | "
                     f"{at_1k} | "
                     f"{peak['busbw']:.2f} GB/s ({mbresults.fmt_bytes(peak['bytes'])}) | {', '.join(checks)} |")
    return lines


def main():
    a = mbresults.parse_args(__doc__, "build/reproduce/collectives/compare.md")
    runs, rows = mbresults.load(a.inputs)
    for r in rows:
        r["run_key"] = (r["nranks"], r["nnodes"])
    colls_run = {r["coll"] for r in rows}
    hw = sorted({mbresults.hardware(r) for r in runs})
    our_hw = "<br>".join(hw)
    out = mbresults.report_head("Collectives: published numbers and ours", "reproduce/collectives/compare.py",
                                runs) + [
        "Speedups are relative to the MPI library's own collective (`--algo mpi`), as the papers' are to",
        "their baselines; medians of the slowest rank's time per iteration, at equal size, ranks, dtype and op.",
        "",
    ] + mbresults.CLAIMS_HEAD
    for c in CLAIMS:
        out.append(f"| {c[0]} | {c[1]} | {c[5]} | {c[6]} | {ours(rows, colls_run, c)} | {our_hw} |")
    out += ["", "## Our measurements", "", "Runs:", ""] + mbresults.run_lines(runs)
    out += [""] + baseline_table(rows, runs) + [""]
    mbresults.write_lines(a.out, out)


if __name__ == "__main__":
    main()
