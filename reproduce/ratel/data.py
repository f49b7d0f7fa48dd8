"""mb-ratel's result files as one row per run: the run's flags (system,
act, optimizer, batch, files) and its case's measurements."""
from reproduce import mbresults

METRICS = ("tokens_per_s", "t_f_predicted_s", "t_b_predicted_s", "t_f_measured_s", "t_b_measured_s",
           "flop_rate_of_sgemm", "policy_swap_bytes", "policy_case", "t_store_caller_s", "storage_read_bytes",
           "storage_write_bytes", "optimizer_update_s", "hw_stor_read", "t_f_bound", "t_b_bound", "hw_cores",
           "hw_cpu_per_flop", "hw_cpu_store_f_s", "hw_cpu_store_b_s", "cpu_s_last", "cpu_gemm_s_last",
           "cpu_link_s_last", "act_swapped_bytes_last", "act_storage_bytes_last", "policy_act_storage_bytes",
           "hw_mem_avail_bytes", "recompute_flops_last", "t_b_compute_s", "t_b_recompute_s", "t_b_swapin_wait_s",
           "t_b_stage_wait_s", "policy_swap_set", "policy_source", "hw_bwd_share_s", "hw_gemm_flops",
           "t_b_predicted_unshared_s", "cblas_sgemm_rate")


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
               "file_gbps": float(cfg.get("file-gbps", 0) or 0),
               "host_mem": int(cfg.get("host-mem", 0) or 0),
               "model": cfg.get("model"), "check": r.get("check"), "seq": int(cfg.get("seq", 0)),
               "run": r["run"], "case": r["case"], "path": run.get("source_file")}
        for m in METRICS:
            row[m] = mbresults.case_metric(run, r["case"], m)
        # Fig. 9b's model curve (mb-ratel's grouped sweep at the run's
        # profiling rates): one (swapped bytes, T_f, T_b) per point
        row["sweep"] = list(zip(*(mbresults.series(run, r["case"], "sweep_" + k)
                                  for k in ("swap_bytes", "t_f_predicted_s", "t_b_predicted_s"))))
        tps = row["tokens_per_s"]
        # one timed step's time (the mean over the timed steps)
        row["step_s"] = row["batch"] * row["seq"] / tps if tps else None
        out.append(row)
    return out
