#!/bin/bash
# NPBench's shared-memory comparison: NumPy, DaCe (when installed) and our
# mb-polybench --mode shared on the same kernels and preset, into one CSV in
# DaCe's schema and NPBench's heatmap.
#   reproduce/dace/npbench/run.sh --preset S|M|L|paper --out DIR [--with-dace]
#     --preset P    NPBench's bench_info sizes (S: seconds per kernel here; paper: the NPBench paper's)
#     --out DIR     DIR/npbench.csv (no header; benchmark, framework, processes, sizes, time; 10 rows per
#                   kernel and framework: numpy, dace_cpu, ours), DIR/ours.h5 (mb-polybench's result
#                   file, both variants), DIR/heatmap.png and DIR/heatmap.txt (with the target line)
#     --with-dace   also DaCe's CPU backend: the Python of $MB_DACE_PYTHON, else $BUILD/venv-dace (made
#                   by ../venv.sh when absent: dace==1.0.2, numpy 1.26.4, networkx<3.6, mpi4py); if it cannot
#                   be had, the run goes on without it and says why
# Threads: OMP_NUM_THREADS (default: every core) for ours; NumPy's BLAS uses its own default.
# "ours" in the CSV is the fused variant (the shared-mode target is about it); the naive
# variant's samples and the best variant per kernel are in DIR/ours.h5.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
here="$root/reproduce/dace/npbench"
preset="" out="" with_dace=0
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  --with-dace) with_dace=1; shift ;;
  --preset | --out)
    [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
    printf -v "${1#--}" '%s' "$2"; shift 2 ;;
  *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $preset in
S | M | L | paper) ;;
"") echo "run.sh: --preset: required (S, M, L or paper)" >&2; exit 2 ;;
*) echo "run.sh: --preset $preset: not one of S, M, L, paper" >&2; exit 2 ;;
esac
[ -n "$out" ] || { echo "run.sh: --out: required (a folder for npbench.csv)" >&2; exit 2; }
[ ! -e "$out/npbench.csv" ] || { echo "run.sh: --out $out: $out/npbench.csv exists (a new folder for a new run)" >&2; exit 2; }
[ ! -L "$out" ] || { echo "run.sh: --out $out: a symbolic link" >&2; exit 2; }
BUILD=${BUILD:-build}
pb="$root/$BUILD/bin/mb-polybench"
[ -x "$pb" ] || { echo "run.sh: $pb: not built (make)" >&2; exit 2; }
py=$("$root/reproduce/python.sh")
mkdir -p "$out"
out=$(cd "$out" && pwd)  # absolute: the runners run in $here
csv="$out/npbench.csv"
(set -o noclobber; : >"$csv")  # created here, never an existing file

echo "== NumPy ($("$py" -c 'import numpy; print(numpy.__version__)')), preset $preset"
rc=0
(cd "$here" && "$py" runner.py --framework numpy --preset "$preset" --csv "$csv") || rc=1

if [ "$with_dace" = 1 ]; then
  dpy=${MB_DACE_PYTHON:-}
  if [ -z "$dpy" ]; then
    venv="$root/$BUILD/venv-dace"
    if "$root/reproduce/dace/venv.sh" "$venv" "$out/dace-install.log"; then
      dpy="$venv/bin/python"
    else
      echo "DaCe absent: its install failed (see $out/dace-install.log)" >&2
    fi
  fi
  if [ -n "$dpy" ]; then
    echo "== DaCe ($("$dpy" -c 'import dace; print(dace.__version__)')), CPU, auto_optimize"
    # DaCe's generated code goes under --out, not into the source tree
    (cd "$here" && DACE_default_build_folder="$out/dacecache" "$dpy" runner.py --framework dace_cpu \
       --preset "$preset" --csv "$csv") || rc=1
  fi
fi

echo "== ours: mb-polybench --mode shared --preset $preset (OMP_NUM_THREADS=${OMP_NUM_THREADS:-all cores})"
"$pb" --mode shared --preset "$preset" -n 10 -w 1 -o "$out/ours.h5" || rc=1
[ -e "$out/ours.h5" ] && { "$py" "$here/ours_csv.py" "$out/ours.h5" --csv "$csv" || rc=1; }

echo "== heatmap"
"$py" "$root/reproduce/dace/heatmap.py" "$csv" --out "$out/heatmap.png" | tee "$out/heatmap.txt"
echo "uptime: $(uptime)" | tee -a "$out/heatmap.txt"
exit $rc
