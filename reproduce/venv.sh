#!/bin/bash
# reproduce/venv.sh VENV REQUIREMENTS: the virtual environment of reproduce/.
# 1. $PYTHON (default python3) -m venv VENV, then pip installs the pinned
#    requirements from PyPI.
# 2. If that fails (offline, no ensurepip), a venv of Debian's /usr/bin/python3
#    that sees its system packages (python3-h5py, python3-matplotlib), when
#    they import; the versions it then uses are printed.
# On success VENV/.ok names the route taken.
set -u
venv=$1 req=$2
py=${PYTHON:-python3}
rm -rf "$venv"
if "$py" -m venv "$venv" >/dev/null 2>&1 &&
   "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req"; then
  echo "pip: $("$venv/bin/python" --version 2>&1), $req" >"$venv/.ok"
  echo "reproduce: Python packages from $req installed in $venv"
  exit 0
fi
echo "reproduce: pip install into $venv failed; trying Debian's packages" >&2
rm -rf "$venv"
sys=/usr/bin/python3
if [ -x $sys ] && $sys -c 'import h5py, matplotlib, numpy' 2>/dev/null &&
   $sys -m venv --system-site-packages --without-pip "$venv"; then
  v=$("$venv/bin/python" -c 'import h5py, matplotlib, numpy; print("h5py", h5py.__version__, "matplotlib", matplotlib.__version__, "numpy", numpy.__version__)')
  echo "system: $v" >"$venv/.ok"
  echo "reproduce: using Debian's packages in $venv ($v; the pins in $req differ)"
  exit 0
fi
rm -rf "$venv"
echo "reproduce: no Python environment: PyPI unreachable and Debian's python3-h5py/python3-matplotlib missing (make deps)" >&2
exit 1
