"""Reading movebench result files (one run each) and collections of them
(written by collect.py) into plain Python rows, for plots and tables.

A run is a dict of its provenance attributes ("/" of a result file) plus
"source_file", "config" (the /config attributes), "metrics" (the /metrics
attributes: the run's own measurements), "case_metrics" ({case: {name:
[values]}} from /metrics/<case>/<name>) and "cpu_model"/"cores" from its
hwloc topology. A row is a dict of one /summary row (strings decoded) plus
"run" (index into the runs) and "nnodes".

Schema 1 files (before /metrics) kept measurements in /config under names
such as "lat_p50_us/<case>"; metric(), case_metric() and series() read both
schemas, given the schema-1 name.
"""
import argparse
import datetime
import glob
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

COLLECTION_SCHEMA = "movebench-collection"


def _py(v):
    """An HDF5 attribute or field value as a plain Python value."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [_py(x) for x in v.tolist()] if v.dtype.kind in "OSU" else v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def attrs(obj):
    return {k: _py(v) for k, v in obj.attrs.items()}


def topology_summary(xml_text):
    """(cpu model, number of cores, number of PUs) from hwloc's XML."""
    if not xml_text:
        return "unknown CPU", 0, 0
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return "unknown CPU", 0, 0
    model = "unknown CPU"
    for info in root.iter("info"):
        if info.get("name") == "CPUModel":
            model = info.get("value")
            break
    cores = sum(1 for o in root.iter("object") if o.get("type") == "Core")
    pus = sum(1 for o in root.iter("object") if o.get("type") == "PU")
    return model, cores, pus


def _run_from_group(g, source):
    run = attrs(g)
    run.setdefault("source_file", source)
    run["config"] = attrs(g["config"]) if "config" in g else {}
    run["metrics"], run["case_metrics"] = {}, {}
    if "metrics" in g:
        m = g["metrics"]
        run["metrics"] = attrs(m)
        for key in m:
            if isinstance(m[key], h5py.Group):
                name = _py(m[key].attrs.get("case", key))
                run["case_metrics"][name] = {k: _py(d[()]) for k, d in m[key].items()
                                             if isinstance(d, h5py.Dataset)}
    xml = None
    if "topology" in g:
        t = g["topology"][()]
        xml = t.decode() if isinstance(t, bytes) else str(t)
    run["cpu_model"], run["cores"], run["pus"] = topology_summary(xml)
    return run


def _rows_from_summary(ds, run_index, run):
    rows = []
    table = ds[()]
    for rec in table:
        row = {name: _py(rec[name]) for name in table.dtype.names}
        row["run"] = run_index
        row["nnodes"] = run.get("nnodes", 1)
        rows.append(row)
    return rows


def expand(paths):
    """Files as given, and every *.h5 under the folders given, sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(sorted(glob.glob(os.path.join(p, "**", "*.h5"), recursive=True)))
        else:
            out.append(p)
    return out


def is_collection(f):
    return _py(f.attrs.get("schema", "")) == COLLECTION_SCHEMA


def load(paths):
    """(runs, rows) over every result file and collection in paths."""
    runs, rows = [], []
    for path in expand(paths):
        with h5py.File(path, "r") as f:
            groups = [f["runs"][k] for k in sorted(f["runs"], key=int)] if is_collection(f) else [f]
            for g in groups:
                if "summary" not in g or "schema_version" not in g.attrs:
                    raise ValueError(f"{path}: not a movebench result file (no /summary or schema_version)")
                run = _run_from_group(g, path)
                if g is not f:
                    run["source_file"] = _py(g.attrs.get("source_file", path))
                rows.extend(_rows_from_summary(g["summary"], len(runs), run))
                runs.append(run)
    return runs, rows


def metric(run, name, legacy=None, default=None):
    """A run-level measurement: /metrics' NAME, else (schema 1) /config's LEGACY (or NAME)."""
    if name in run.get("metrics", {}):
        return run["metrics"][name]
    return run.get("config", {}).get(legacy or name, default)


def series(run, case, name, legacy=None):
    """A case's measurement /metrics/<case>/NAME as a list (one value per
    case, or per epoch); schema 1: [config[legacy]], or with legacy a
    callable index -> key, [config[legacy(0)], config[legacy(1)], ...]
    while present. [] when absent."""
    values = run.get("case_metrics", {}).get(case, {}).get(name)
    if values is not None:
        return list(values)
    cfg = run.get("config", {})
    if callable(legacy):
        out, i = [], 0
        while legacy(i) in cfg:
            out.append(cfg[legacy(i)])
            i += 1
        return out
    return [cfg[legacy]] if legacy in cfg else []


def case_metric(run, case, name, legacy=None, default=None, index=0):
    """Element INDEX of a case's measurement (see series), else default."""
    v = series(run, case, name, legacy)
    return v[index] if -len(v) <= index < len(v) else default


def trace(path):
    """The trace spans of a result file (/trace, see docs/result-format.md)
    as dicts rank, lane (index), lane_name, name, start, end (seconds since
    the earliest rank began tracing), in each rank's recording order; []
    when the run recorded none."""
    out = []
    with h5py.File(path, "r") as f:
        if "trace" not in f:
            return out
        for key in f["trace"]:
            g = f["trace"][key]
            lanes = _py(g.attrs.get("lanes", []))
            lanes = [lanes] if isinstance(lanes, str) else lanes
            rank = int(_py(g.attrs["rank"]))
            names, start, end, lane = (g[k][:] for k in ("name", "start", "end", "lane"))
            for n, s0, s1, ln in zip(names, start, end, lane):
                ln = int(ln)
                out.append({"rank": rank, "lane": ln, "lane_name": lanes[ln] if 0 <= ln < len(lanes) else "",
                            "name": _py(n), "start": float(s0), "end": float(s1)})
    return out


def hardware(run):
    """One line naming the machine a run used."""
    mpi = str(run.get("mpi_library_version", "")).splitlines()[0] if run.get("mpi_library_version") else "?"
    mpi = mpi.split(",")[0]
    where = f"{run.get('nnodes', '?')} node(s), {run.get('nranks', '?')} ranks"
    job = f", Slurm job {run['slurm_job_id']}" if run.get("slurm_job_id") else ""
    return (f"{run.get('cpu_model', 'unknown CPU')} ({run.get('cores', '?')} cores/node); {where}; "
            f"{mpi}, UCX {run.get('ucx_version', '?')}{job}")


def fmt_bytes(n):
    n = int(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def size_label(x, _pos=None):
    """Axis label of a byte count: 4K, 1M, 2G (a matplotlib tick formatter)."""
    x = int(round(x))
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x}"


def save_figure(fig, out, dpi=120):
    """Writes OUT.png and OUT.pdf (making OUT's folder) and prints their names."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    for ext in ("png", "pdf"):
        fig.savefig(f"{out}.{ext}", dpi=dpi)
        print(f"{out}.{ext}")


def finish_figure(fig, rows, out, dpi=120):
    """Lays FIG out and saves it (save_figure), with a red title counting the
    ROWS whose check did not pass, so a figure of failed cases says so."""
    bad = [r for r in rows if r["check"] not in ("pass", b"pass")]
    if bad:
        fig.suptitle(f"{len(bad)} case(s) failed their check", color="red")
    fig.tight_layout()
    save_figure(fig, out, dpi=dpi)


def parse_args(doc, default_out, out_help=None):
    """A reproduce script's command line: -o/--out (default DEFAULT_OUT) and
    the result files or collections; the first line of DOC describes it."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("-o", "--out", default=default_out, help=out_help)
    ap.add_argument("inputs", nargs="+")
    return ap.parse_args()


def load_cases(paths, benchmarks, prog, what):
    """(runs, rows) of PATHS, the rows kept to runs of BENCHMARKS; exits with
    "PROG: no WHAT in PATHS" when none is left."""
    runs, rows = load(paths)
    rows = [r for r in rows if runs[r["run"]].get("benchmark") in benchmarks]
    if not rows:
        sys.exit(f"{prog}: no {what} in " + " ".join(paths))
    return runs, rows


def run_lines(runs, hw=hardware):
    """One Markdown list line per run: hardware (HW(run)), commit, start, command."""
    return [f"- run {i}: {hw(r)}; git {str(r.get('git_commit', '?'))[:12]}"
            f"{' (dirty)' if r.get('git_dirty') else ''}; started {r.get('start_time_utc', '?')}; "
            f"`{r.get('command_line', '')}`" for i, r in enumerate(runs)]


def generated_line(script, runs):
    """A report's "Generated by SCRIPT on DATE from FILES; do not edit by hand." line."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    files = ", ".join(f"`{os.path.relpath(r['source_file'])}`" for r in runs)
    return f"Generated by `{script}` on {now} from {files}; do not edit by hand."


def report_head(title, script, runs):
    """A compare.md's first lines: "# TITLE" and the generated_line."""
    return [f"# {title}", "", generated_line(script, runs), ""]


# The head of a compare.md's table of claims: the paper's numbers beside ours.
CLAIMS_HEAD = ["| source | claim | paper | paper's hardware | ours | our hardware |", "|---|---|---|---|---|---|"]


def write_lines(path, lines):
    """Writes LINES joined by newlines to PATH (making its folder) and prints PATH."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(path)
