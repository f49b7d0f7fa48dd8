#!/usr/bin/env python3
"""The TPC model's points (docs/models.md): the development set (the
configuration family the model's structure was developed on, scaled down
per --scale) and the held-out grid, from which a seeded random draw takes
the validation points after every development point is removed.

    python -m reproduce.models.grid --scale small --seed 1 [--count N]

Prints one point a line: NAME SET SYSTEMS SCALE DIM FANOUT BATCH HIDDEN
RANKS FILES CACHE_PCT (SET = calibration | heldout; SYSTEMS a comma list:
a calibration run measures hyperion and nopipe together). Exit 2 on a bad
argument.
"""
import argparse
import itertools
import random
import sys

AXES = ("system", "scale", "dim", "fanout", "batch", "hidden", "ranks", "files", "cache")

# The Hyperion sweep the structure was developed on (scale 20, dim 1024,
# batch 64, fan-out 25,10, hidden 16, one rank, files x cache), each scale's
# graph size and file/cache subset; plus the one smoke run seen while the
# model was changed (scale 15, dim 256, fan-out 10,5, batch 64, 2 files,
# hidden 256: mb-gnn's default), which the draw must never pick.
DEVELOPMENT = {
    "tiny": dict(scale=[11], dim=[1024], fanout=["25,10"], batch=[64], hidden=[16], ranks=[1], files=[2],
                 cache=[20]),
    "small": dict(scale=[16], dim=[1024], fanout=["25,10"], batch=[64], hidden=[16], ranks=[1], files=[1, 4],
                  cache=[5, 20]),
    "full": dict(scale=[20], dim=[1024], fanout=["25,10"], batch=[64], hidden=[16], ranks=[1], files=[1, 2, 4],
                 cache=[5, 10, 20, 40]),
}
SEEN = [dict(system=s, scale=15, dim=256, fanout="10,5", batch=64, hidden=256, ranks=1, files=2, cache=c)
        for s in ("hyperion", "nopipe") for c in (1, 5, 10, 20, 30)]
SYSTEMS = ["hyperion", "nopipe"]

# Held-out grid: every axis off the development values where it can be.
HELDOUT = {
    "tiny": dict(scale=[10], dim=[128, 256], fanout=["10,5", "5,5,5"], batch=[32], hidden=[8, 32], ranks=[1],
                 files=[1, 3], cache=[10, 30]),
    "small": dict(scale=[15, 16, 17], dim=[128, 256, 512], fanout=["10,5", "15,10", "5,5,5", "20"],
                  batch=[32, 96, 128], hidden=[8, 32, 64], ranks=[1, 2], files=[1, 2, 3], cache=[10, 30]),
    "full": dict(scale=[18, 19, 21], dim=[128, 256, 512], fanout=["10,5", "15,10", "5,5,5", "20"],
                 batch=[32, 96, 128], hidden=[8, 32, 64], ranks=[1, 2], files=[1, 2, 3], cache=[10, 30]),
}
COUNT = {"tiny": 2, "small": 8, "full": 20}


def key(p):
    return tuple(p[a] for a in AXES)


def expand(axes):
    names = [a for a in AXES if a != "system"]
    for sysname in SYSTEMS:
        for vals in itertools.product(*(axes[a] for a in names)):
            yield dict(zip(names, vals), system=sysname)


def name(p):
    return (f"s{p['scale']}-d{p['dim']}-f{p['fanout'].replace(',', 'x')}-b{p['batch']}-h{p['hidden']}"
            f"-r{p['ranks']}-n{p['files']}-c{p['cache']}")


def points(scale, seed, count=None):
    """(calibration points, held-out points, grid size after removals)."""
    cal = list(expand(DEVELOPMENT[scale]))
    taken = {key(p) for p in cal} | {key(p) for p in SEEN}
    grid = [p for p in expand(HELDOUT[scale]) if key(p) not in taken]
    grid.sort(key=key)  # the draw depends on the seed only, not on dict order
    n = min(count or COUNT[scale], len(grid))
    return cal, random.Random(seed).sample(grid, n), len(grid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", required=True, choices=sorted(DEVELOPMENT))
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=None)
    a = ap.parse_args()
    if a.count is not None and a.count < 1:
        ap.error("--count must be at least 1")
    cal, held, _ = points(a.scale, a.seed, a.count)
    # a calibration configuration runs both systems at once
    seen = set()
    for p in cal:
        n = name(p)
        if n not in seen:
            seen.add(n)
            print(n, "calibration", ",".join(SYSTEMS), *(p[x] for x in AXES[1:]))
    for p in held:
        print(name(p), "heldout", p["system"], *(p[x] for x in AXES[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
