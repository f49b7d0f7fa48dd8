"""mb-zero's result files as one row per case: the case's mode, aggregation
and progress (its name, mode/agg/progress), the run's shape and link, the
per-step measurements of worker 0 and the model's prediction.

The metric names of the model, closed form and --interference (zero/'s
model.c, closed_form.c, interference.c, recorded by benchmarks/mb-zero.c)
are listed once, in MODEL_METRICS and INTERFERENCE_METRICS."""
import re

from reproduce import mbresults

# What mb-zero records per worker (h-zero's benchmarks/mb-zero.c): index = worker.
WORKER_METRICS = ("worker_sent_bytes_per_step", "worker_recv_bytes_per_step", "worker_compute_s_per_step",
                  "worker_exposed_comm_s_per_step", "worker_optimizer_s_per_step", "worker_step_s_per_step",
                  "worker_cpu_s_per_step", "worker_comm_cpu_s_per_step", "worker_progress_thread_cpu_s_per_step",
                  # the medians over the timed steps and the step's quartiles (zero/step_record.c)
                  "worker_median_step_s_per_step", "worker_median_compute_s_per_step",
                  "worker_median_exposed_comm_s_per_step", "worker_median_optimizer_s_per_step",
                  "worker_step_p25_s_per_step", "worker_step_p75_s_per_step", "worker_timed_steps_per_step")
CASE_METRICS = ("wire_param_bytes", "steps", "link_Bps", "link", "check_worst_rel_error")
# zero/model.c and closed_form.c, per case (mb-zero's record_model).
MODEL_METRICS = ("model_step_s", "model_compute_s", "model_wire_s", "model_optimizer_s", "model_storage_s",
                 "model_exposed_wire_s",
                 "model_exposed_optimizer_s", "closed_form_send_bytes", "closed_form_recv_bytes",
                 "gemm_flops", "model_compute_flops", "adam_params_per_s", "storage_Bps", "ps_params_per_s",
                 "ps_calib_adam_params_per_s",
                 "model_ps_workers_fed", "model_cpu_floor_s", "model_cpu_worker_s", "model_cpu_switch_s",
                 "model_cpu_ps_s", "model_cpu_cores",
                 # tc (run.sh --vcluster): each role's own link as the model priced it, Gb/s
                 "model_worker_link_gbps", "model_switch_link_gbps", "model_ps_link_gbps",
                 # bytes a role moves per CPU second: min(memcpy, the transport)
                 "model_cpu_copy_Bps",
                 # the roles' sharing, timed (zero/loaded.c): a worker's block pass beside the
                 # mode's other roles / alone; the PS's update while the workers compute
                 "model_compute_load_x", "ps_loaded_params_per_s")
# The PS rate panel (mb-zero's record_ps, disdp only): the first PS's own
# counters in the run. ps_workers_fed: at a fixed global batch, how many
# workers one PS holding the whole model keeps up with (docs/mb-zero.md).
PS_METRICS = ("ps_adam_params_per_s", "ps_storage_Bps", "ps_update_params_per_s", "ps_workers_fed")
# zero/interference.c, per run (mb-zero --interference).
INTERFERENCE_METRICS = ("interference_coll_alone_s", "interference_coll_with_gemm_s",
                        "interference_gemm_alone_s", "interference_gemm_with_copy_s",
                        "interference_copy_GBps", "interference_coll_slowdown", "interference_gemm_slowdown")
# zero/paper_table.c, per case of a --paper-table run: one value per row.
PAPER_METRICS = ("paper_model_mode", "paper_model_link_gbps", "paper_model_step_s", "paper_model_over_disdp")
MODES = ("zero3-serial", "zero3-overlap", "zero-offload", "disdp")


def case_row(run, r):
    """One summary row r of run as a flat dict."""
    parts = str(r.get("case", "")).split("/")
    cfg = run.get("config", {})
    row = {"mode": parts[0], "agg": parts[1] if len(parts) > 1 else None,
           "progress": parts[2] if len(parts) > 2 else None, "case": r.get("case"),
           "W": int(cfg.get("W", 0)), "K": int(cfg.get("K", 0)), "N": int(cfg.get("N", 0)),
           "model_shape": cfg.get("model_shape"), "t_median": r.get("t_median"), "check": r.get("check"),
           "run": r.get("run")}
    for m in WORKER_METRICS:
        row[m] = mbresults.case_metric(run, r["case"], m)  # worker 0
    for m in CASE_METRICS + MODEL_METRICS + PS_METRICS:
        row[m] = mbresults.case_metric(run, r["case"], m)
    link = row.get("link_Bps")
    tc = TC_RATE.search(str(run.get("emulation", "")))
    if not link and txt_of(row.get("link")) == "off" and tc:
        # run.sh --vcluster: no pacing in the process; tools/vcluster's tc
        # tbf shapes every node's link at this rate (the result file's
        # emulation says so), and the wire alone is timed against it.
        row["link"] = f"tc {tc.group(1)}"
        link = row["link_Bps"] = float(tc.group(1)) * 1e9 / 8
    row["link_gbps"] = link * 8 / 1e9 if link else 0.0
    return row


TC_RATE = re.compile(r"tc tbf ([0-9.]+) Gbit/s")


def txt_of(v):
    return v.decode() if isinstance(v, bytes) else v


def rows(paths):
    runs, summary = mbresults.load_cases(paths, {"mb-zero"}, "reproduce.disdp", "mb-zero results")
    out = [case_row(runs[r["run"]], r) for r in summary]
    # run.sh (one host): the first mode runs --link-gbps auto and the
    # others at the rate it chose (so the auto rows compare one link); a
    # paced row at an auto row's rate is that auto link.
    auto = [r["link_Bps"] for r in out if txt_of(r.get("link")) == "auto" and r.get("link_Bps")]
    for r in out:
        b = r.get("link_Bps")
        if txt_of(r.get("link")) == "paced" and b and any(abs(b / a - 1) <= 1e-3 for a in auto):
            r["link"] = "auto"
    return runs, out


def interference(runs):
    """The --interference numbers of each run that has them."""
    out = []
    for run in runs:
        v = {m: mbresults.metric(run, m) for m in INTERFERENCE_METRICS}
        if all(v[m] is not None for m in INTERFERENCE_METRICS[:4]):
            out.append(v)
    return out


def paper_table(runs):
    """The "model, paper's inputs" rows (dicts of PAPER_METRICS) of the
    first run that recorded them, else []."""
    for run in runs:
        for case in run.get("case_metrics", {}):
            cols = [mbresults.series(run, case, m) for m in PAPER_METRICS]
            if cols[0]:
                return [dict(zip(PAPER_METRICS, vals)) for vals in zip(*cols)]
    return []
