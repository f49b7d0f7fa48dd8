#!/bin/bash
# DaCe's virtual environment for the study: makes it when absent, reuses it when present.
#   reproduce/dace/venv.sh VENV LOG
# Installs dace==1.0.2 (wants Python 3.8-3.12 and numpy < 2), numpy 1.26.4, networkx < 3.6
# (DaCe 1.0.2's code generation fails with networkx 3.6: KeyError SDFGState in block_parent_tree)
# and mpi4py compiled against the system Open MPI (pip --no-binary mpi4py, MPICC=mpicc: a
# wheel would carry its own MPI). pip's output goes to LOG (appended). Concurrent callers wait
# for each other (flock on VENV.lock), so a run started while the venv is being built reuses it.
# A failed mpi4py build is not retried while VENV/.mpi4py-failed exists (it takes ~30 minutes).
# On success prints one line "dace D numpy N mpi4py M" (M is "absent" when only mpi4py failed:
# the shared-memory comparison can still use DaCe, the distributed kernels cannot) and exits 0;
# exit 1 with the reason on stderr when dace itself cannot be imported.
set -uo pipefail
[ $# -eq 2 ] || { echo "venv.sh: usage: venv.sh VENV LOG" >&2; exit 2; }
venv=$1 log=$2
mkdir -p "$(dirname "$venv")" "$(dirname "$log")"
exec 9>>"$venv.lock"
flock 9
probe() { "$venv/bin/python" - <<'EOF' 2>/dev/null
import dace, numpy
try:
    import mpi4py
    from mpi4py import MPI
    m = mpi4py.__version__
except Exception:
    m = "absent"
print("dace", dace.__version__, "numpy", numpy.__version__, "mpi4py", m)
EOF
}
# reuse: everything imports, or only mpi4py failed before (VENV/.mpi4py-failed; remove it to retry)
if [ -x "$venv/bin/python" ] && line=$(probe) && { [ "${line##* }" != absent ] || [ -e "$venv/.mpi4py-failed" ]; }; then
  echo "$line"
  exit 0
fi
{
  echo "== $(date -u +%FT%TZ) venv.sh $venv"
  if [ ! -x "$venv/bin/python" ]; then
    base=""
    for c in python3.12 python3.11 python3.10 python3.9 python3.8 python3 /usr/bin/python3; do
      p=$(command -v "$c" 2>/dev/null) || continue
      "$p" -c 'import sys; sys.exit(not (3, 8) <= sys.version_info[:2] < (3, 13))' 2>/dev/null && { base=$p; break; }
    done
    [ -n "$base" ] || { echo "no Python 3.8-3.12 for DaCe 1.0.2"; exit 1; }
    "$base" -m venv "$venv" || exit 1
  fi
  "$venv/bin/pip" install -q --timeout 60 --retries 2 "dace==1.0.2" "numpy==1.26.4" "networkx<3.6" || exit 1
  MPICC=${MPICC:-mpicc} "$venv/bin/pip" install -q --timeout 60 --retries 2 --no-binary mpi4py mpi4py ||
    { echo "mpi4py: the install failed (DaCe's distributed kernels will not run)"; : >"$venv/.mpi4py-failed"; }
} >>"$log" 2>&1 || { echo "venv.sh: $(tail -1 "$log" | cut -c1-200) (see $log)" >&2; exit 1; }
line=$(probe) || { echo "venv.sh: $venv cannot import dace (see $log)" >&2; exit 1; }
echo "$line" | tee -a "$log"
