#!/usr/bin/env python3
"""compare.md: the Ratel paper's headline numbers beside ours from the
result files (and --plan's output), each with what was compared.

    python -m reproduce.ratel.compare [-o FILE] [--plan PLAN.txt] INPUT [INPUT ...]
"""
import argparse
import math
import re
import subprocess

from reproduce.ratel import data


def host_budgets(rows):
    """Each system's --host-mem in these runs (zero-infinity may need more:
    its G16 of every layer waits in host memory for the Adam after backward)."""
    seen = {}
    for x in rows:
        seen.setdefault(x["system"], set()).add(x.get("host_mem") or 0)
    return "; ".join(f"{s} " + ", ".join(f"{m / 2**20:.0f} MiB" for m in sorted(v)) for s, v in sorted(seen.items()))


def ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "n/a"


def best(rows, **kw):
    pts = [r for r in rows if all(r[k] == v for k, v in kw.items()) and r["tokens_per_s"]]
    return max(pts, key=lambda r: r["batch"]) if pts else None


def one(rows, **kw):
    return next((r for r in rows if all(r[k] == v for k, v in kw.items()) and r["step_s"]), None)


def stages(r):
    """Forward, backward and the optimizer's storage traffic with Adam, each
    alone: a serial-order run's t_f, t_b less the time in the store, and
    that time (every update runs in the trainer's thread)."""
    if not r or r["t_store_caller_s"] is None or r["t_f_measured_s"] is None or r["t_b_measured_s"] is None:
        return None
    return r["t_f_measured_s"], r["t_b_measured_s"] - r["t_store_caller_s"], r["t_store_caller_s"]


def naive_gain(f, b, s, a, ra=0.0):
    """The model's gain of the optimized order over the naive one, from the
    stages alone: forward f, backward b, the optimizer's storage traffic
    with Adam s (read, Adam, write per tensor in turn, as naive runs them),
    of which a is Adam. Both orders run in the store's thread beside
    backward, so naive's step is f + max(b, s); the optimized order writes
    tensor i while Adam runs on i-1, so its storage path is the longer of
    the traffic (s - a) and Adam (a): f + max(b, s - a, a). With a short
    Adam the gain is near 1 (the paper's 1.22x needs a long CPU Adam). ra:
    the seconds of the optimized order's reads that forward's read-ahead
    takes off its storage path (--read-ahead; forward's storage idles)."""
    return (f + max(b, s)) / (f + max(b, s - a - ra, a))


def cpu_drift(a, b, name_a, name_b, tol=0.05):
    """The two runs' host speed beside a ratio of them: each run's own
    cblas_sgemm rate on the blocks' GEMM shapes (mb-ratel measures it in
    the run), said when they are more than tol apart, since the VM's cores
    ran 10-20% faster or slower from one run to the next. "" otherwise."""
    ra, rb = (a or {}).get("cblas_sgemm_rate"), (b or {}).get("cblas_sgemm_rate")
    if not ra or not rb or abs(ra - rb) / max(ra, rb) <= tol:
        return ""
    return (f"; the host's cblas_sgemm {ra / 1e9:.0f} GFLOP/s in the {name_a} run, {rb / 1e9:.0f} in the "
            f"{name_b} run: {abs(ra - rb) / max(ra, rb) * 100:.0f}% apart")


def within(x, ref, tol):
    """|x - ref| / ref <= tol, and False for NaN or a zero reference."""
    return bool(ref) and abs(x - ref) / ref <= tol


def serial_runs(rows):
    """The serial-order runs with Ratel's policy by batch: the stages alone."""
    return {r["batch"]: r for r in rows if r["system"] == "ratel" and r["act"] == "ratel"
            and r["optimizer"] == "serial" and r["files"] == 2 and r["step_s"] and stages(r)}


def read_ahead_s(r):
    """Seconds of optimizer reads forward's read-ahead moved out of the
    optimized run's backward: its bytes at the profiling step's storage rate."""
    b, rate = (r or {}).get("read_ahead_bytes"), (r or {}).get("hw_stor_read")
    return b / rate if b and rate else 0.0


def overlap_ideal(f, b_ratel, s, b_zi, ra=0.0):
    """What overlap alone can give over zero-infinity: it runs forward,
    its backward (inter-block: the whole forward again, as DeepSpeed reruns a
    checkpointed block; more recompute than Ratel's policy) and the
    optimizer's storage traffic in turn; the optimized order runs the
    storage beside Ratel's backward: (F + B_zi + S) / (F + max(B_ratel, S)),
    less ra in S (forward's read-ahead, read_ahead_s)."""
    return (f + b_zi + s) / (f + max(b_ratel, s - ra))


def balanced_batch(serial):
    """The batch whose storage alone (with Adam) is nearest backward alone (log ratio)."""
    def dist(b):
        _, bw, st = stages(serial[b])
        return abs(math.log(max(st, 1e-9) / max(bw, 1e-9)))
    return min(serial, key=dist)


def storage_line(r):
    """The storage rate the profiling step measured (both directions over
    the time either was in flight, at most the caps: the model's input)
    against the emulated SSDs' caps: where
    the host's disk is slower than files x --file-gbps, it binds, not the
    caps (and more files cannot go faster)."""
    got, caps = r.get("hw_stor_read"), r.get("files", 0) * r.get("file_gbps", 0) * 1e9
    if not got or not caps:
        return []
    line = (f"Storage in the profiling step: {got / 1e9:.2f} GB/s (reads and writes together, at most the caps': "
            "ratel_stor_rate) against the caps' "
            f"{caps / 1e9:.2f} GB/s ({r['files']} files at {r['file_gbps']:g} GB/s)")
    if got < 0.9 * caps:
        return ["", line + ": the host's disk, not the emulated SSDs' caps, bounds storage here, so the files "
                "(Fig. 10) cannot scale past it."]
    return ["", line + "."]


def cpu_line(r):
    """The CPU-sharing term's inputs (the profiling step) and the last
    step's CPU by whom, for one run: where the model's cpu term binds."""
    if not r or not r.get("hw_cores") or r.get("cpu_s_last") is None:
        return []
    gemm, link = r.get("cpu_gemm_s_last") or 0, r.get("cpu_link_s_last") or 0
    return ["", f"CPU (optimized+ratel, batch {r['batch']}): the last step used {r['cpu_s_last']:.2f} CPU-s on "
            f"{r['hw_cores']:g} cores (GEMMs {gemm:.2f}, link copies {link:.2f}, the store and the rest "
            f"{r['cpu_s_last'] - gemm - link:.2f}); the profiling step priced the store at "
            f"{r.get('hw_cpu_store_f_s') or 0:.2f} + {r.get('hw_cpu_store_b_s') or 0:.2f} CPU-s (forward + backward), "
            f"and the model's T_f/T_b are bound by {r.get('t_f_bound')}/{r.get('t_b_bound')}."]


def spill_line(r):
    """The activations of one run (optimized+ratel at the picked batch):
    swapped, of them beyond MEM_avail on storage (measured, and Eq. 3's
    alpha A_G2M the model priced)."""
    if not r or r.get("act_swapped_bytes_last") is None or r.get("act_storage_bytes_last") is None:
        return []
    sw, st = r["act_swapped_bytes_last"], r["act_storage_bytes_last"]
    avail, model = r.get("hw_mem_avail_bytes"), r.get("policy_act_storage_bytes")
    return ["", f"Activations at batch {r['batch']} (optimized+ratel, the last step): {sw / 1e6:.1f} MB swapped out "
            f"of the device, {st / 1e6:.1f} MB of them beyond MEM_avail"
            + (f" ({avail / 1e6:.1f} MB)" if avail is not None else "")
            + " on storage, written in forward and read back in backward"
            + (f" (the model's alpha A_G2M, Eq. 3: {model / 1e6:.1f} MB)" if model is not None else "") + "."]


def backward_lines(named):
    """Each run's backward by what the trainer's thread did (its last step;
    runs older than these metrics give none): the compute calls, of them
    the recompute (seconds, and FLOPs), the waits for swapped activations
    and for P16/G16, the time in the store; then the bound the ideal has
    at the balance, where Ratel's backward counts only through max(B, S):
    1 + B_zi / (F + S) once B_ratel <= S."""
    out = []
    for what, r in named:
        if not r or r.get("t_b_compute_s") is None or r.get("t_b_measured_s") is None:
            continue
        rest = r["t_b_measured_s"] - r["t_b_compute_s"] - (r.get("t_b_swapin_wait_s") or 0) - \
            (r.get("t_b_stage_wait_s") or 0) - (r.get("t_store_caller_s") or 0)
        out.append(f"| {what} | {(r.get('policy_swap_bytes') or 0) / 1e6:.0f} | {r['t_b_measured_s']:.3f} | "
                   f"{r['t_b_compute_s']:.3f} | {r.get('t_b_recompute_s') or 0:.3f} | "
                   f"{(r.get('recompute_flops_last') or 0) / 1e9:.1f} | {r.get('t_b_swapin_wait_s') or 0:.3f} | "
                   f"{r.get('t_b_stage_wait_s') or 0:.3f} | {r.get('t_store_caller_s') or 0:.3f} | {rest:.3f} |")
    if out:
        out = ["", "Backward decomposed (the last step, the trainer's thread): compute calls (recompute included), "
               "the blocks' recompute, the waits for swapped activations (link, storage) and for P16/G16, the "
               "time in the store, the rest.", "",
               "| run | swapped (MB) | t_b (s) | compute (s) | recompute (s) | recompute (GFLOP) | swap-in waits (s) | "
               "P16/G16 waits (s) | in the store (s) | rest (s) |", "|---|---|---|---|---|---|---|---|---|---|"] + out
    return out


def same_policy(a, b):
    """Whether two runs swapped the same set: their policy_swap_set (the
    units, hex) when both recorded it, else their swapped bytes (within 0.1%:
    older result files). None when either says nothing."""
    if not a or not b:
        return None
    x, y = a.get("policy_swap_set"), b.get("policy_swap_set")
    if x and y:
        return x == y
    p, q = a.get("policy_swap_bytes"), b.get("policy_swap_bytes")
    if p is None or q is None:
        return None
    return abs(p - q) <= 1e-3 * max(p, q, 1)


def policy_line(serial, opt):
    """Whether the stages' serial run ran the optimized run's swap set: each
    run's profiling step picks its own, so B_ratel alone may be another
    policy's backward (the quiet reference's batch 8: 631 MB against 280)."""
    a, b = (serial or {}).get("policy_swap_bytes"), (opt or {}).get("policy_swap_bytes")
    if a is None or b is None:
        return []
    same = same_policy(serial, opt)
    src = (serial or {}).get("policy_source")
    return ["", f"Swap sets: the serial run (B_ratel alone) swapped {a / 1e6:.0f} MB, the optimized run "
            f"{b / 1e6:.0f} MB" + (f" (the serial run's set: {src})" if src else "")
            + (": the same policy." if same else
                                   ": not the same policy (each run's profiling step picks its own), so B_ratel "
                                   "alone is another swap set's backward than the optimized run's.")]


def verdict(ok):
    return "met" if ok else "NOT met"


def performance(rows):
    """The issue's Performance section, every ratio from this one study run."""
    out = ["", "## Performance (issue 18): ratios from this run", ""]
    serial = serial_runs(rows)
    if not serial:
        return out + ["No serial-order runs: the stages alone were not measured."]
    bal = balanced_batch(serial)
    f, bw, st = stages(serial[bal])
    adam = serial[bal].get("optimizer_update_s")
    out.append(f"Balanced batch {bal}: forward {f:.3f} s, backward {bw:.3f} s, storage (and Adam) {st:.3f} s"
               + (f" of which Adam {adam:.3f} s" if adam is not None else "")
               + ", each timed alone (--optimizer serial runs every update in the trainer's thread).")
    out += storage_line(serial[bal])
    opt = one(rows, system="ratel", act="ratel", optimizer="optimized", files=2, batch=bal)
    out += cpu_line(opt)
    zi = one(rows, system="zero-infinity", act="inter-block", files=2, batch=bal)
    zst = stages(zi)  # its backward alone: t_b less its store time (its optimizer runs after backward)
    ra = read_ahead_s(opt)
    ideal = overlap_ideal(f, bw, st, zst[1], ra) if zst else None
    if ideal:
        out += ["", f"Overlap's ideal at batch {bal}: zero-infinity runs F + B_zi + S = {f:.3f} + {zst[1]:.3f} + "
                f"{st:.3f} s in turn (B_zi: its backward alone in its own run, t_b less the store's time), the "
                f"optimized order F + max(B_ratel, S) = {f:.3f} + max({bw:.3f}, {st - ra:.3f}) s"
                + (f" (S less the {ra:.3f} s of reads forward read ahead, --read-ahead)" if ra else "") + ": "
                f"(F + B_zi + S) / (F + max(B_ratel, S)) = {ideal:.2f}×, the most overlap and Ratel's "
                "policy can give with these stages."]
    if zst:
        bound = 1 + zst[1] / (f + st)
        out += ["", f"At the balance Ratel's backward counts only through max(B_ratel, S): with B_ratel <= S the "
                f"ideal is 1 + B_zi / (F + S) = {bound:.2f}×, and 1.8× needs B_zi >= 0.8 (F + S) = "
                f"{0.8 * (f + st):.3f} s (B_zi here {zst[1]:.3f} s)."]
    out += policy_line(serial[bal], opt)
    out += backward_lines([(f"optimized+ratel, batch {bal}", opt), (f"serial+ratel (stages), batch {bal}", serial[bal]),
                           (f"zero-infinity, batch {bal}", zi)])
    out += spill_line(opt)
    out += ["", "| what | target | ours | |", "|---|---|---|---|"]
    if opt and zi:
        x = opt["tokens_per_s"] / zi["tokens_per_s"]
        beside = f"overlap's ideal {ideal:.2f}×" if ideal else ""
        if opt.get("act_storage_bytes_last") is not None:
            beside += ("; " if beside else "") + f"{opt['act_storage_bytes_last'] / 1e6:.1f} MB of activations on storage"
        beside += cpu_drift(opt, zi, "ratel", "zero-infinity")
        beside = f" ({beside})" if beside else ""
        out.append(f"| optimized+ratel vs zero-infinity, tokens/s (batch {bal}) | ≥ 1.8× | {x:.2f}×{beside} | "
                   f"{verdict(x >= 1.8)} |")
    zp = one(rows, system="zero-infinity", act="inter-block-partial", files=2, batch=bal)
    if opt and zp:
        x = opt["tokens_per_s"] / zp["tokens_per_s"]
        out.append(f"| the same against a leaner zero-infinity that reruns only the steps its tensors need (nn's "
                   f"partial recompute, not DeepSpeed's rule; batch {bal}) | (≥ 1.8×) | {x:.2f}× | "
                   f"{verdict(x >= 1.8)} |")
    if opt:
        x = opt["step_s"] / (f + max(bw, st))
        out.append(f"| optimized step vs forward + max(backward, storage) (batch {bal}) | ≤ 1.2× | {x:.2f}× | "
                   f"{verdict(x <= 1.2)} |")
    for b in sorted(serial):
        o = one(rows, system="ratel", act="ratel", optimizer="optimized", files=2, batch=b)
        n = one(rows, system="ratel", act="ratel", optimizer="naive", files=2, batch=b)
        a = serial[b].get("optimizer_update_s")
        if not (o and n) or a is None:
            continue
        model = naive_gain(*stages(serial[b]), a, read_ahead_s(o))
        meas = n["step_s"] / o["step_s"]
        err = abs(meas - model) / model
        # the orders compared on one policy only: the naive run swaps the
        # optimized run's set (run.sh gives it with --swap-set)
        same = same_policy(o, n)
        how = ("same swap set" + (f", naive's {n['policy_source']}" if n.get("policy_source") else "")
               if same else "NOT the same swap set: two policies compared, not two orders")
        out.append(f"| optimized vs naive, batch {b}: measured gain vs the model's (F+max(B,S))/(F+max(B,S-A,A)) | "
                   f"≥ 1×, within 10%, one swap set | {meas:.2f}× vs {model:.2f}× ({err * 100:.0f}%; {how}"
                   f"{cpu_drift(o, n, 'optimized', 'naive')}) | "
                   f"{verdict(bool(same) and meas >= 1 and within(meas, model, 0.1))} |")
    # T_b outside the swept points, per batch (the optimized Ratel runs):
    # its compute term carries the cores' sharing the profiling step priced
    for b in sorted(serial):
        o = one(rows, system="ratel", act="ratel", optimizer="optimized", files=2, batch=b)
        if not o or o.get("t_b_predicted_s") is None or not o.get("t_b_measured_s"):
            continue
        err = (o["t_b_predicted_s"] - o["t_b_measured_s"]) / o["t_b_measured_s"]
        share = o.get("hw_bwd_share_s")
        out.append(f"| model T_b vs measured, optimized+ratel (batch {b}; bound {o.get('t_b_bound')}"
                   + (f", sharing {share:.3f} s priced" if share is not None else "") + ") | within 10% | "
                   f"{o['t_b_predicted_s']:.3f} vs {o['t_b_measured_s']:.3f} s ({err * 100:+.0f}%) | "
                   f"{verdict(within(o['t_b_predicted_s'], o['t_b_measured_s'], 0.1))} |")
    mid = mid_batch(rows)
    sweep = [r for r in rows if r["system"] == "ratel" and r["optimizer"] == "optimized" and r["files"] == 2
             and r["batch"] == mid and r["t_f_predicted_s"] is not None and r["step_s"]]
    for r in sweep:
        pred = r["t_f_predicted_s"] + r["t_b_predicted_s"]
        meas = r["t_f_measured_s"] + r["t_b_measured_s"]
        err = abs(pred - meas) / meas
        out.append(f"| model T_f+T_b vs measured, act {r['act']} (batch {r['batch']}) | within 10% | "
                   f"{pred:.3f} vs {meas:.3f} s ({err * 100:.0f}%) | {verdict(within(pred, meas, 0.1))} |")
    pick = next((r for r in sweep if r["act"] == "ratel"), None)
    if pick:
        low = min(sweep, key=lambda r: r["step_s"])
        x = pick["step_s"] / low["step_s"]
        out.append(f"| Algorithm 1's pick vs the measured minimum ({low['act']}), step time | within 10% | "
                   f"{x:.2f}× | {verdict(x <= 1.1)} |")
    # at the balanced batch, else the batch the serial inter-block run has (full scale: the middle one)
    sib = [r for r in rows if r["system"] == "ratel" and r["act"] == "inter-block-whole" and r["optimizer"] == "serial"
           and r["files"] == 2 and r["step_s"] and stages(r)]
    sib = next((r for r in sib if r["batch"] == bal), sib[0] if sib else None)
    zib = one(rows, system="zero-infinity", act="inter-block", files=2, batch=sib["batch"]) if sib else None
    if zib:
        x = zib["step_s"] / sum(stages(sib))
        out.append(f"| zero-infinity step vs the sum of its stages alone (inter-block, whole recompute, serial; batch {sib['batch']}) | "
                   f"≤ 1.1× | {x:.2f}× | {verdict(x <= 1.1)} |")
    return out


def deepspeed_line(path, rows):
    """The optional peer: DeepSpeed 0.19.8 ZeRO-Infinity on the CPU at the same shape."""
    out = ["", "## Peer: DeepSpeed ZeRO-Infinity (optional, run.sh --with-deepspeed)", ""]
    m = re.search(r"tokens_per_s=([0-9.]+) .*batch=([0-9]+)", open(path).read()) if path else None
    if not m:
        return out + ["Not run (or it failed: see run.sh's output)."]
    tps, b = float(m.group(1)), int(m.group(2))
    zi = one(rows, system="zero-infinity", act="inter-block", files=2, batch=b)
    r = one(rows, system="ratel", act="ratel", optimizer="optimized", files=2, batch=b)
    out.append(f"DeepSpeed on the CPU, NVMe offload to a folder (no rate cap, no emulated link), batch {b}: "
               f"{tps:.1f} tokens/s; mb-ratel zero-infinity {ratio(tps and zi and zi['tokens_per_s'], tps)} of it, "
               f"Ratel {ratio(tps and r and r['tokens_per_s'], tps)} of it.")
    return out


def mid_batch(rows):
    """The batch of the activation sweep (the act runs')."""
    acts = [r["batch"] for r in rows if r["act"] in ("swap-all", "recompute-all") and r["system"] == "ratel"]
    return acts[0] if acts else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="build/reproduce/ratel/compare.md")
    ap.add_argument("--plan", help="mb-ratel --plan output (24 GB device, 256 GB host)")
    ap.add_argument("--deepspeed", help="deepspeed_peer.sh's output (optional peer)")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    rows = data.rows(a.inputs)
    # the headline at the balanced batch (the serial runs' stages: storage
    # alone nearest backward alone), else the largest batch
    serial = serial_runs(rows)
    r = one(rows, system="ratel", act="ratel", optimizer="optimized", files=2, batch=balanced_batch(serial)) \
        if serial else None
    r = r or best(rows, system="ratel", act="ratel", optimizer="optimized", files=2)
    zi = zo = nv = None
    if r:
        zi = best(rows, system="zero-infinity", act="inter-block", batch=r["batch"])
        zo = best(rows, system="zero-offload", batch=r["batch"])
        nv = best(rows, system="ratel", optimizer="naive", batch=r["batch"])
    largest = "n/a"
    if a.plan:
        m = re.search(r"largest Table IV preset for these budgets: (\S+)", open(a.plan).read())
        largest = m.group(1) if m else "none fits"
    peak = f"{r['flop_rate_of_sgemm'] * 100:.0f}% of cblas_sgemm" if r and r["flop_rate_of_sgemm"] else "n/a"
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    b = r["batch"] if r else "?"
    lines = [
        "# Ratel: the paper's numbers beside ours",
        "",
        f"Ours: {r['model'] if r else '?'} at batch {b}, mb-ratel with the emulated tiers of README.md "
        f"(link 4 GB/s token bucket, 2 files capped at {r['file_gbps'] if r else 0:g} GB/s each, below the "
        f"host's disk: run.sh's caps.txt), on a shared 2-core host ({load}); "
        "ratios are of tokens/s in these runs, not the paper's hardware. "
        f"Host budgets (--host-mem, the store's buffers and staging slots included): {host_budgets(rows)}.",
        "",
        "| what | paper | ours |",
        "|---|---|---|",
        f"| Ratel vs ZeRO-Offload, tokens/s | 2.32× | {ratio(r and r['tokens_per_s'], zo and zo['tokens_per_s'])} |",
        f"| Ratel vs ZeRO-Infinity, tokens/s | 3.46× | {ratio(r and r['tokens_per_s'], zi and zi['tokens_per_s'])} |",
        "| Ratel vs the slowest baseline, tokens/s | 8.02× | "
        f"{ratio(r and r['tokens_per_s'], min([x['tokens_per_s'] for x in (zi, zo) if x], default=None))} |",
        f"| AGO optimized vs naive ordering | 1.22× | {ratio(r and r['tokens_per_s'], nv and nv['tokens_per_s'])} |",
        f"| largest model, 24 GB GPU + 256 GB host | 175B | {largest} (--plan, Table IV presets) |",
        f"| FLOP rate vs peak | 90-95% | {peak} (blocks' GEMMs) |",
        "",
        "## T_f and T_b, predicted (Algorithm 1's model at the profiling step's rates) and measured",
        "",
        "| act | batch | T_f pred (s) | T_f meas (s) | T_b pred (s) | T_b meas (s) | tokens/s | check |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for x in rows:
        if x["system"] == "ratel" and x["optimizer"] == "optimized" and x["t_f_predicted_s"] is not None:
            lines.append(f"| {x['act']} | {x['batch']} | {x['t_f_predicted_s']:.4f} | {x['t_f_measured_s']:.4f} | "
                         f"{x['t_b_predicted_s']:.4f} | {x['t_b_measured_s']:.4f} | {x['tokens_per_s']:.1f} | "
                         f"{x['check']} |")
    lines += performance(rows)
    lines += deepspeed_line(a.deepspeed, rows)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(a.out)


if __name__ == "__main__":
    main()
