"""mb-ratel's result files as one row per run: the run's flags (system,
act, optimizer, batch, files) and its case's measurements."""
from reproduce import mbresults

METRICS = ("tokens_per_s", "t_f_predicted_s", "t_b_predicted_s", "t_f_measured_s", "t_b_measured_s",
           "flop_rate_of_sgemm", "policy_swap_bytes")


def rows(paths):
    runs, summary = mbresults.load(paths)
    out = []
    for r in summary:
        run = runs[r["run"]]
        if run.get("benchmark", "mb-ratel") != "mb-ratel" and "system" not in r:
            continue
        cfg = run["config"]
        row = {"system": r.get("system"), "act": r.get("act"), "optimizer": r.get("optimizer"),
               "batch": int(cfg.get("batch", 0)), "files": int(cfg.get("files", 1)),
               "model": cfg.get("model"), "check": r.get("check")}
        for m in METRICS:
            row[m] = mbresults.case_metric(run, r["case"], m)
        out.append(row)
    return out
