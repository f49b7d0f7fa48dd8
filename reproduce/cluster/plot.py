"""The cluster study's figure: per node count, each algorithm's median
allreduce time divided by the link floor 2(N-1)/N * S / rate, against S.
    python -m reproduce.cluster.plot --gbps R -o OUT RESULT.h5... (writes OUT.png, OUT.pdf)"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from reproduce import mbresults as mb  # noqa: E402
from reproduce.cluster.compare import ALGOS, floor_s  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gbps", type=float, required=True)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    runs, rows = mb.load(a.files)
    keep = [i for i, run in enumerate(runs) if int(run.get("nnodes", 1)) >= 2]  # a link between nodes
    if not keep:
        ap.error("no result file spans 2 or more nodes")
    rows = [dict(r, run=keep.index(r["run"])) for r in rows if r["run"] in keep]
    runs = [runs[i] for i in keep]
    fig, axes = plt.subplots(1, len(runs), figsize=(5 * len(runs), 4), squeeze=False)
    for i, run in enumerate(runs):
        ax, n = axes[0][i], int(run.get("nnodes", 1))
        for algo in ALGOS:
            pts = sorted((int(r["bytes"]), float(r["t_median"]) / floor_s(n, int(r["bytes"]), a.gbps))
                         for r in rows if r["run"] == i and r["algo"] == algo and r.get("check") == "pass")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=algo)
        ax.axhline(1.0, color="k", lw=0.8, ls="--", label="link floor")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(mb.size_label))
        ax.set_xlabel("allreduce size (bytes)")
        ax.set_ylabel("median / link floor")
        ax.set_title(f"{n} nodes x {int(run.get('nranks', 0)) // max(n, 1)} ranks, {a.gbps:g} Gbit/s tbf")
        ax.legend(fontsize=8)
    fig.tight_layout()
    mb.save_figure(fig, a.out)


if __name__ == "__main__":
    main()
