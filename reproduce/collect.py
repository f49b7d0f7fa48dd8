#!/usr/bin/env python3
"""Merge movebench result files (a sweep's, say) into one collection file.

    python -m reproduce.collect -o OUT.h5 INPUT [INPUT ...]

INPUT is a result file, a collection, or a folder searched for *.h5. OUT
holds every input run, whole, under /runs/<i> (its provenance attributes,
/config, /metrics, /environment, /topology, /samples, /summary, plus source_file),
and one /summary table of all rows with three more columns: run (the
index under /runs), nnodes and slurm_job_id. A field that only some inputs
have is filled with "" or NaN in the others. OUT is written to OUT.tmp and
renamed; an existing OUT is an error.
"""
import argparse
import datetime
import os
import sys

import h5py
import numpy as np

from reproduce import mbresults  # noqa: E402

STR = h5py.string_dtype("utf-8")


def sources(paths):
    """(source path, h5py object of one run) for every run of every input."""
    for path in mbresults.expand(paths):
        f = h5py.File(path, "r")
        if mbresults.is_collection(f):
            for k in sorted(f["runs"], key=int):
                yield mbresults._py(f["runs"][k].attrs.get("source_file", path)), f["runs"][k]
        else:
            if "summary" not in f or "schema_version" not in f.attrs:
                raise SystemExit(f"collect.py: {path}: not a movebench result file")
            yield path, f


def copy_members(src, dst):
    """Copies groups, datasets and attributes by value. (H5Ocopy, behind
    h5py's Group.copy, crashes on these files' variable-length strings
    inside compound types, in HDF5 1.10 and 1.14 alike.)"""
    for name, obj in src.items():
        if isinstance(obj, h5py.Group):
            sub = dst.create_group(name)
            for k, v in obj.attrs.items():
                sub.attrs[k] = v
            copy_members(obj, sub)
        else:
            d = dst.create_dataset(name, data=obj[()], dtype=obj.dtype)
            for k, v in obj.attrs.items():
                d.attrs[k] = v


def merged_dtype(tables):
    fields, kinds = [], {}
    for t in tables:
        for name in t.dtype.names:
            if name not in kinds:
                fields.append(name)
                kinds[name] = t.dtype[name]
    out = []
    for name in fields:
        dt = kinds[name]
        out.append((name, STR if dt.kind in "OSU" else dt))
    out += [("run", np.int32), ("nnodes", np.int64), ("slurm_job_id", STR)]
    return np.dtype(out)


def fill(dt):
    if dt.kind == "f":
        return np.nan
    if dt.kind in "iu":
        return 0
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, help="collection file to write")
    ap.add_argument("inputs", nargs="+", help="result files, collections or folders")
    a = ap.parse_args()
    if os.path.exists(a.out):
        sys.exit(f"collect.py: -o {a.out}: exists; never overwritten")
    items = list(sources(a.inputs))
    if not items:
        sys.exit("collect.py: no result files in " + " ".join(a.inputs))
    tables = [g["summary"][()] for _, g in items]
    dt = merged_dtype(tables)
    tmp = a.out + ".tmp"
    try:
        with h5py.File(tmp, "w") as out:
            out.attrs["schema"] = COLLECTION
            out.attrs["collection_version"] = 1
            out.attrs["created_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.attrs["nruns"] = len(items)
            out.attrs["sources"] = "\n".join(src for src, _ in items)
            benches = sorted({mbresults._py(g.attrs.get("benchmark", "")) for _, g in items})
            out.attrs["benchmark"] = ",".join(benches)
            runs = out.create_group("runs")
            rows = []
            for i, ((src, g), t) in enumerate(zip(items, tables)):
                dst = runs.create_group(str(i))
                for k, v in g.attrs.items():
                    dst.attrs[k] = v
                dst.attrs["source_file"] = src
                copy_members(g, dst)
                nnodes = int(mbresults._py(g.attrs.get("nnodes", 1)))
                job = str(mbresults._py(g.attrs.get("slurm_job_id", "")))
                for rec in t:
                    row = []
                    for name in dt.names:
                        if name == "run":
                            row.append(i)
                        elif name == "nnodes":
                            row.append(nnodes)
                        elif name == "slurm_job_id":
                            row.append(job)
                        elif name in t.dtype.names:
                            v = rec[name]
                            row.append(mbresults._py(v) if dt[name] == STR else v)
                        else:
                            row.append(fill(dt[name]))
                    rows.append(tuple(row))
            out.create_dataset("summary", data=np.array(rows, dtype=dt))
        os.link(tmp, a.out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"collect.py: {len(items)} run(s), {len(rows)} row(s) -> {a.out}")


COLLECTION = mbresults.COLLECTION_SCHEMA

if __name__ == "__main__":
    main()
