#!/usr/bin/env python3
"""CSV rows of the TPC model for one mb-gnn result file: per system, the
prediction (the run's model_s, from its own profiling run) and the
measured median epoch.

    python -m reproduce.models.tpc_rows --point NAME --set SET RESULT

Refuses (exit 1) a file whose recorded model_point_set differs from SET,
or a system without a prediction: a missing number is never a row.
"""
import argparse
import sys

from reproduce import mbresults


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", required=True)
    ap.add_argument("--set", required=True, choices=["calibration", "heldout"])
    ap.add_argument("result")
    a = ap.parse_args()
    runs, rows = mbresults.load([a.result])
    for r in rows:
        cfg = runs[r["run"]]["config"]
        if cfg.get("model_point_set") != a.set:
            print(f"tpc_rows: {a.result}: model_point_set is {cfg.get('model_point_set')!r}, not {a.set!r}",
                  file=sys.stderr)
            return 1
        pred, meas = float(r.get("model", "nan")), float(r["t_median"])
        if not (pred > 0 and meas > 0) or r.get("check") != "pass":
            print(f"tpc_rows: {a.result}: {r['system']}: no prediction or measurement "
                  f"(model {pred}, median {meas}, check {r.get('check')})", file=sys.stderr)
            return 1
        print(f"tpc,{a.point}/{r['system']},{a.set},{pred:.6g},{meas:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
