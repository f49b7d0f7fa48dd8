#!/usr/bin/env python3
"""The DisDP figure from mb-zero result files: interference bars (a
collective alone and beside a GEMM; a GEMM alone and beside a copy),
stacked step time per mode and link rate (compute, exposed
communication, optimizer), bytes per worker against the closed form,
the PS's Adam and storage rates, and the model against the measurement.

    python -m reproduce.disdp.plot [-o PREFIX] INPUT [INPUT ...]

INPUT: mb-zero result files or folders. Writes PREFIX.png and PREFIX.pdf.
A panel whose measurements the inputs lack says so instead of plotting.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reproduce import mbresults  # noqa: E402
from reproduce.disdp import data  # noqa: E402


def empty(ax, title, why):
    ax.set_title(title)
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, fontsize=9)
    ax.set_axis_off()


def interference_panel(ax, runs):
    got = data.interference(runs)
    title = "interference (paper: +41% collective)"
    if not got:
        return empty(ax, title, "no --interference run in the inputs")
    v = got[-1]
    ca, cg = v["interference_coll_alone_s"], v["interference_coll_with_gemm_s"]
    ga, gc = v["interference_gemm_alone_s"], v["interference_gemm_with_copy_s"]
    ax.bar([0, 1], [1, cg / ca], color=["C0", "C1"])
    ax.bar([3, 4], [1, gc / ga], color=["C0", "C2"])
    ax.set_xticks([0, 1, 3, 4], ["allgather\nalone", "beside\nGEMM", "GEMM\nalone", "beside\ncopy"])
    ax.axhline(1.41, ls="--", color="gray", lw=1)
    ax.set(ylabel="time / alone", title=title)


def stacked_panel(ax, rows):
    title = "step time per mode (worker 0)"
    pts = [r for r in rows if r["worker_step_s_per_step"] is not None]
    if not pts:
        return empty(ax, title, "no per-worker step split in the inputs")
    pts.sort(key=lambda r: (r["link_gbps"], data.MODES.index(r["mode"]) if r["mode"] in data.MODES else 9))
    xs = range(len(pts))
    comp = [r["worker_compute_s_per_step"] or 0 for r in pts]
    comm = [r["worker_exposed_comm_s_per_step"] or 0 for r in pts]
    opt = [r["worker_optimizer_s_per_step"] or 0 for r in pts]
    ax.bar(xs, comp, label="compute")
    ax.bar(xs, comm, bottom=comp, label="exposed comm")
    ax.bar(xs, opt, bottom=[a + b for a, b in zip(comp, comm)], label="optimizer")
    ax.set_xticks(list(xs), [f"{r['mode']}\n{r['link_gbps']:.3g} Gb/s" for r in pts], fontsize=7, rotation=30)
    ax.set(ylabel="s per step", title=title)
    ax.legend(fontsize=8)


def bytes_panel(ax, rows):
    title = "bytes per worker vs closed form"
    pts = [r for r in rows if r["worker_sent_bytes_per_step"] is not None]
    if not pts:
        return empty(ax, title, "no byte counts in the inputs")
    xs = range(len(pts))
    ax.bar([x - 0.2 for x in xs], [r["worker_sent_bytes_per_step"] for r in pts], 0.2, label="sent")
    ax.bar([x + 0.0 for x in xs], [r["worker_recv_bytes_per_step"] for r in pts], 0.2, label="received")
    cf = [(x, r) for x, r in zip(xs, pts) if r["closed_form_recv_bytes"] is not None]
    if cf:
        ax.plot([x + 0.2 for x, _ in cf], [r["closed_form_recv_bytes"] for _, r in cf], "k_", markersize=14,
                label="closed form (recv)")
        ax.plot([x - 0.2 for x, _ in cf], [r["closed_form_send_bytes"] for _, r in cf], "r_", markersize=14,
                label="closed form (send)")
    ax.set_xticks(list(xs), [f"{r['mode']} W={r['W']}" for r in pts], fontsize=7, rotation=30)
    ax.yaxis.set_major_formatter(mbresults.size_label)
    ax.set(ylabel="bytes per step", title=title)
    ax.legend(fontsize=7)


def ps_panel(ax, rows):
    title = "PS: Adam, storage, workers one PS can feed"
    pts = [r for r in rows if r["mode"] == "disdp" and r["ps_adam_params_per_s"] is not None]
    if not pts:
        return empty(ax, title, "no disdp PS rates in the inputs")
    xs = range(len(pts))
    # in the run (the PS's counters) beside the calibration alone (hatched)
    bars = [("ps_adam_params_per_s", 1e6, "Adam, run (Mparam/s)", ""),
            ("ps_calib_adam_params_per_s", 1e6, "Adam, alone", "//"),
            ("ps_storage_Bps", 1e6, "storage, run (MB/s)", ""),
            ("storage_Bps", 1e6, "storage, alone", "//")]
    w = 0.8 / len(bars)
    for k, (key, scale, label, hatch) in enumerate(bars):
        ax.bar([x - 0.4 + (k + 0.5) * w for x in xs], [(r[key] or 0) / scale for r in pts], w, label=label,
               hatch=hatch)
    ax.set_yscale("log")
    ax.set_xticks(list(xs), [f"N={r['N']} {txt(r['link'])} {r['link_gbps']:.3g} Gb/s\n"
                             f"feeds {fmt_fed(r['ps_workers_fed'])} (model {fmt_fed(r['model_ps_workers_fed'])})"
                             for r in pts], fontsize=7)
    ax.set(title=title, ylabel="rate (log)")
    ax.legend(fontsize=7)


def fmt_fed(v):
    return "n/a" if v is None else f"{v:.3g} workers"


def txt(v):
    return "n/a" if v is None else v.decode() if isinstance(v, bytes) else str(v)


def model_panel(ax, rows):
    title = "model vs measured (issue 19: within 15%)"
    # the measured step as compare.md takes it: worker 0's mean step
    pts = [r for r in rows if r["model_step_s"] is not None and r["worker_step_s_per_step"] is not None]
    if not pts:
        return empty(ax, title, "no model prediction in the inputs")
    for m in data.MODES:
        sel = [r for r in pts if r["mode"] == m]
        if sel:
            ax.plot([r["model_step_s"] for r in sel], [r["worker_step_s_per_step"] for r in sel], "o", label=m)
    hi = max(max(r["model_step_s"], r["worker_step_s_per_step"]) for r in pts)
    ax.plot([0, hi], [0, hi], "k-", lw=0.8)
    ax.plot([0, hi], [0, 1.15 * hi], "k:", lw=0.8)
    ax.plot([0, hi], [0, hi / 1.15], "k:", lw=0.8)
    ax.set(xlabel="predicted step (s)", ylabel="measured step (s)", title=title)
    ax.legend(fontsize=8)


def main():
    a = mbresults.parse_args(__doc__, "build/reproduce/disdp/disdp")
    runs, rows = data.rows(a.inputs)
    fig, ax = plt.subplots(1, 5, figsize=(24, 4.6))
    interference_panel(ax[0], runs)
    stacked_panel(ax[1], rows)
    bytes_panel(ax[2], rows)
    ps_panel(ax[3], rows)
    model_panel(ax[4], rows)
    mbresults.finish_figure(fig, rows, a.out)


if __name__ == "__main__":
    main()
