"""Appends mb-polybench --mode shared's samples of one variant (default
fused) to a CSV in DaCe's schema (benchmark, framework, processes, sizes,
time; no header), framework "ours", sizes as the tuple of NPBench's
parameters. Cases whose check did not pass are left out (NPBench drops
unvalidated rows)."""
import argparse
import csv
import sys

import h5py


def _s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result", help="mb-polybench --mode shared result file (.h5)")
    ap.add_argument("--csv", required=True, help="appended to")
    ap.add_argument("--variant", default="fused", choices=("fused", "naive"))
    ap.add_argument("--framework", default="ours")
    a = ap.parse_args()
    n = 0
    with h5py.File(a.result, "r") as f, open(a.csv, "a", newline="") as out:
        w = csv.writer(out)
        for row in f["summary"][()]:
            if _s(row["variant"]) != a.variant:
                continue
            case, kernel = _s(row["case"]), _s(row["kernel"])
            if _s(row["check"]) != "pass":
                print(f"ours_csv.py: {case}: check {_s(row['check'])}, left out", file=sys.stderr)
                continue
            sizes = tuple(int(kv.split("=")[1]) for kv in _s(row["sizes"]).split(","))
            key = case.replace("%", "%25").replace("/", "%2F")
            for t in f["samples"][key][()].max(axis=1):  # the slowest rank's (one rank)
                w.writerow([kernel, a.framework, 1, str(sizes), float(t)])
            n += 1
    if n == 0:
        print(f"ours_csv.py: {a.result}: no passing {a.variant} case", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
