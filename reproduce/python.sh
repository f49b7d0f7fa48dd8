#!/bin/bash
# Prints the Python interpreter reproduce/ scripts run with: the first of
# $MB_PYTHON, the virtual environment $MB_HOME/$BUILD/venv (make reproduce
# makes it), python3 and /usr/bin/python3 that imports h5py, matplotlib and
# numpy. Exit 1 with the reason when none does.
here=$(cd "$(dirname "$0")/.." && pwd)
cands=()
[ -n "${MB_PYTHON:-}" ] && cands+=("$MB_PYTHON")
cands+=("$here/${BUILD:-build}/venv/bin/python" "$(command -v python3 2>/dev/null)" /usr/bin/python3)
for py in "${cands[@]}"; do
  [ -n "$py" ] && [ -x "$py" ] || continue
  if "$py" -c 'import h5py, matplotlib, numpy' >/dev/null 2>&1; then
    echo "$py"
    exit 0
  fi
done
echo "no Python with h5py, matplotlib and numpy: run 'make reproduce' (virtual environment from reproduce/requirements.txt) or install python3-h5py python3-matplotlib (make deps)" >&2
exit 1
