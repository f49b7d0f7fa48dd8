"""compare.md of the DaCe study: the papers' weak-scaling claims beside our
sweep (medians per kernel, framework and P from DaCe-schema CSVs, the
efficiency T(1)/T(P), summa against pblas), with what ran and the load.

    python -m reproduce.dace.compare -o compare.md [--status status.txt] CSV...
"""
import argparse
import datetime
import os

from reproduce import mbresults
from reproduce.dace import plot

PAPER_HW = "Piz Daint (Cray XC50, one rank per socket)"
RERUN_HW = "Azure CycleCloud (SCC'22 student rerun)"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def measured_vs_model(paths):
    """Per case of the result files: median, the model's prediction and its
    terms, GFLOP/s and GB/s from the closed forms, and the slowest rank's
    communication seconds per call beside the model's."""
    if not paths:
        return []
    runs, rows = mbresults.load(paths)
    out = ["", "## Measured beside the model (per case)", "",
           "GFLOP/s and GB/s: closed-form FLOPs and compulsory bytes / median. Model: max(FLOPs at the dgemm "
           "rate of the case's own local products (gemm, k2mm, k3mm, doitgen; column 'dgemm'), else the run's, read bytes at the read-stream rate + written bytes at its memcpy rate; stencils: cells at their own "
           "sweep's calibrated rate, bytes at their working "
           "set's copy rate) + communication; the matrix-vector kernels (atax, bicg, gemver, gesummv, mvt): their own "
           "call's local compute on their own block, without the communication (pblas: the dgemv pdgemv makes on the "
           "block), timed in the case's set-up right before its samples (column 'local (s)', and the bytes per rank it "
           "streamed per second, 'local GB/s'), + communication: a timing of the local loop, so the model checks the "
           "communication and the composition, not a roofline (mb_coll_model and a p2p alpha-beta; NaN without a "
           "profile). Communication measured: seconds per call in the grid's broadcasts, reductions and halo "
           "exchanges, the slowest rank's (pblas: inside ScaLAPACK, not measured).", "",
           "The run's calibrated rates, per rank with every rank at once (dgemm: 384^3 products, the model's for the kernels without products; memcpy: 32 MiB, "
           "read + write; read stream: dgemv over 64 MiB panels of a 256 MiB matrix, at start-up; the products' memory term reads at it):", "",
           "| run | P | dgemm (GFLOP/s) | memcpy (GB/s) | read stream (GB/s) |", "|---|---|---|---|---|"]
    seen = set()
    for r in rows:
        if r["run"] in seen:
            continue
        seen.add(r["run"])
        run = runs[r["run"]]
        out.append(f"| {os.path.basename(str(run.get('source_file', r['run'])))} | {r['case'].rsplit('/P', 1)[-1]} | "
                   f"{fmt(mbresults.metric(run, 'dgemm_GFlops_per_rank'), '.3g')} | "
                   f"{fmt(mbresults.metric(run, 'memcpy_GBps_per_rank'), '.3g')} | "
                   f"{fmt(mbresults.metric(run, 'read_GBps_per_rank'), '.3g')} |")
    out += ["", "| case | median (s) | model (s) | model / median | GFLOP/s | GB/s | comm, slowest rank (s) | comm, model (s) | dgemm (GFLOP/s) | local (s) | local GB/s |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        run = runs[r["run"]]
        c = r["case"]
        med, model = r.get("t_median"), r.get("model")
        comm = [v for v in mbresults.series(run, c, "comm_s_per_rank") if v == v]
        ratio = model / med if med and model == model else None
        out.append(f"| {c} | {med:.3g} | {fmt(model if model == model else None, '.3g')} | {fmt(ratio, '.2f')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'gflops'), '.3g')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'gbps'), '.3g')} | {fmt(max(comm) if comm else None, '.3g')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'model_comm_s'), '.3g')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'dgemm_GFlops_per_rank'), '.3g')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'local_s'), '.3g')} | "
                   f"{fmt(mbresults.case_metric(run, c, 'local_GBps_per_rank'), '.3g')} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--status", help="run.sh's status.txt (DaCe, NPBench, uptime lines)")
    ap.add_argument("--results", nargs="*", default=[],
                    help="the mb-polybench result files: model, GFLOP/s, GB/s and per-rank communication")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    med = plot.medians(a.inputs)
    procs = sorted({p for s in med.values() for p in s})
    ours_hw = f"{cpu_model()}, {os.cpu_count()} CPUs, one host; P > CPUs oversubscribed"
    status = []
    if a.status and os.path.exists(a.status):
        with open(a.status) as f:
            status = [line.rstrip("\n") for line in f if line.strip()]
    have_dace = any(fw == "dace_cpu" for _, fw in med)

    effs = [(e, b, fw, p) for (b, fw), s in med.items() for p, e in plot.efficiency(s).items() if p > 1]
    best = max(effs) if effs else None
    pmax = max(procs) if procs else 0
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# DaCe weak scaling (SC'21, SCC'22 rerun): theirs and ours", "",
             f"Generated by `reproduce/dace/compare.py` on {now} from "
             + ", ".join(f"`{os.path.relpath(p)}`" for p in a.inputs) + "; do not edit by hand.", "",
             "## Claims", "", *mbresults.CLAIMS_HEAD,
             f"| SC'21 | weak-scaling efficiency of DaCe's distributed polybench | up to 93.16% at 512 nodes "
             f"(23,328 cores) | {PAPER_HW} | "
             + (f"best T(1)/T(P) at P > 1: {100 * best[0]:.1f}% ({best[1]}, {best[2]}, P={best[3]}) "
                if best else "no P > 1 measured ")
             + f"| {ours_hw} |",
             f"| SCC'22 rerun | scaling consistent with the paper | up to 32 nodes, 64 processes | {RERUN_HW} | "
             f"P = {', '.join(map(str, procs))} (up to {pmax}) on one host | {ours_hw} |",
             "| SC'21 | DaCe's speedups 2.47x and 3.75x over the previous best solutions | which of the two is the CPU figure is "
             "**unverified** (dace-repro.md, section 8) | 2x Xeon Gold 6130 (CPU), V100 (GPU), as recalled | "
             + ("see reproduce/dace/npbench's heatmap" if any("npbench: preset" in s for s in status)
                else "not measured (no NPBench run)") + " | - |",
             "", "Ours is one small host, not a cluster: past its cores the ranks share CPUs, so T(1)/T(P) there",
             "measures oversubscription, not the network; the weak-scaling shape needs the Slurm job",
             "(`job_scripts/mb-polybench.sbatch`) on real nodes.", ""]
    lines += ["## Median time per kernel and framework (s), efficiency T(1)/T(P)", "",
              "| kernel | framework | " + " | ".join(f"P={p}" for p in procs) + " | "
              + " | ".join(f"T(1)/T({p})" for p in procs if p > 1) + " |",
              "|---|---|" + "---|" * (len(procs) + len([p for p in procs if p > 1]))]
    for k in plot.KERNELS + sorted({b for b, _ in med} - set(plot.KERNELS)):
        for (b, fw), s in sorted(med.items()):
            if b != k:
                continue
            e = plot.efficiency(s)
            lines.append(f"| {b} | {fw} | " + " | ".join(fmt(s.get(p), ".3g") for p in procs) + " | "
                         + " | ".join(fmt(e.get(p), ".2f") for p in procs if p > 1) + " |")
    lines += ["", "## summa against pblas (ScaLAPACK pdgemm): time ratio (issue 20's target at P=2: <= 1.1)", "",
              "| kernel | " + " | ".join(f"P={p}" for p in procs) + " |", "|---|" + "---|" * len(procs)]
    for k in ("gemm", "k2mm", "k3mm"):
        su, pb = med.get((k, "movebench_summa")), med.get((k, "movebench_pblas"))
        if su and pb:
            lines.append(f"| {k} | " + " | ".join(fmt(su[p] / pb[p] if p in su and p in pb else None, ".2f")
                                                   for p in procs) + " |")
    if not any(med.get((k, "movebench_pblas")) for k in ("gemm", "k2mm", "k3mm")):
        lines.append("| (no pblas rows: this build has no ScaLAPACK) |" + " |" * len(procs))
    if have_dace:
        lines += ["", "## DaCe's distributed kernels against ours: time ratio ours / DaCe (below 1: ours faster)", "",
                  "DaCe's side (reproduce/dace/distr): the products and the matrix-vector kernels on "
                  "dace.distr.MatMult (ScaLAPACK pdgemm, pdgemv), doitgen without communication, the stencils' "
                  "halos on dace.comm.Isend/Irecv.", "",
                  "| kernel | ours | " + " | ".join(f"P={p}" for p in procs) + " |", "|---|---|" + "---|" * len(procs)]
        for k in plot.KERNELS + sorted({b for b, _ in med} - set(plot.KERNELS)):
            dc = med.get((k, "dace_cpu"))
            for v in sorted(fw[len("movebench_"):] for b, fw in med if b == k and fw.startswith("movebench_")):
                ou = med.get((k, f"movebench_{v}"))
                if dc and ou:
                    lines.append(f"| {k} | {v} | " + " | ".join(
                        fmt(ou[p] / dc[p] if p in ou and p in dc else None, ".2f") for p in procs) + " |")
    lines += measured_vs_model(a.results)
    lines += ["", "## What ran", ""]
    lines += [f"- {s}" for s in status] or ["- (no status file)"]
    if not have_dace:
        lines.append("- DaCe's distributed kernels did not run: no dace_cpu rows; the comparison above is C/MPI "
                     "only (summa and pblas)" + ("." if any(s.startswith("dace: dace") for s in status) else
                                                ", and the NPBench comparison is NumPy and ours only (no DaCe)."))
    lines.append("")
    mbresults.write_lines(a.out, lines)


if __name__ == "__main__":
    main()
