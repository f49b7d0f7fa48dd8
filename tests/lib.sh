# Helpers sourced by the shell tests. tests/run.sh exports BIN, TESTS_TMP
# and the MPI environment; a test run by hand gets defaults.
set -u
: "${BIN:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bin}"
: "${TESTS_TMP:=$(mktemp -d)}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
T=$(mktemp -d "$TESTS_TMP/t.XXXXXX")
failures=0

# mpi NP PROGRAM ARGS...: runs under mpirun (1 rank runs directly as a singleton).
mpi() {
  local np=$1; shift
  mpirun -np "$np" --oversubscribe --bind-to none "$@"
}

# fast_abort: for a test whose failing runs all end by themselves on every
# rank (bad input, a failed check: each rank returns through MPI_Finalize),
# call it once after sourcing lib.sh. When a rank exits non-zero, Open MPI 4's
# mpirun sends the ranks still listed SIGCONT, sleeps, SIGTERM, sleeps, SIGKILL
# (odls_base_sigkill_timeout, default 1 s per sleep): 2 s on every failing
# run, though the ranks have all exited. Tests that kill a rank, or whose
# survivors must see that grace (--timeout, a crash mid-run), keep it.
fast_abort() { export OMPI_MCA_odls_base_sigkill_timeout=0; }

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect STATUS DESCRIPTION -- COMMAND...: runs it, output in $T/out, checks the status.
expect() {
  local want=$1 what=$2; shift 3
  "$@" >"$T/out" 2>&1
  local rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$what: exit $rc, expected $want"; sed 's/^/  > /' "$T/out" | tail -n 15 >&2
    return 1
  fi
  return 0
}

# has PATTERN DESCRIPTION: the last command's output matches (grep -E).
has() {
  grep -Eq -- "$1" "$T/out" || { fail "$2: output lacks /$1/"; sed 's/^/  > /' "$T/out" | tail -n 15 >&2; }
}

# attr FILE NAME: the value of the result file's /config attribute NAME
# (names may hold slashes; strings keep their quotes)
attr() { h5dump -A -g /config "$1" 2>/dev/null | awk -v n="ATTRIBUTE \"$2\"" 'index($0, n) {f=1} f && /\(0\):/ {sub(/.*\(0\): */, ""); print; exit}'; }

# runmetric FILE NAME: the run-level measurement NAME (an attribute of /metrics)
runmetric() { h5dump -A -g /metrics "$1" 2>/dev/null | awk -v n="ATTRIBUTE \"$2\"" 'index($0, n) {f=1} f && /\(0\):/ {sub(/.*\(0\): */, ""); print; exit}'; }

# h5key CASE: the case name as the result file names its datasets
h5key() { local k=${1//%/%25}; k=${k//\//%2F}; [[ $k == .* ]] && k=%2E${k:1}; printf '%s' "$k"; }

# metric FILE CASE NAME [INDEX]: element INDEX (default 0) of the case's
# measurement /metrics/<case>/NAME (strings keep their quotes; empty when absent)
metric() {
  h5dump -w 0 -d "/metrics/$(h5key "$2")/$3" "$1" 2>/dev/null |
    awk -v i="${4:-0}" '/^ *\(0\): / {sub(/^ *\(0\): */, ""); n = split($0, v, /, /); if (i < n) print v[i + 1]; exit}'
}

# casename FILE PREFIX: the first case named PREFIX/... that has measurements
# in a result file (also one that failed before its /summary row)
casename() { "$BIN/mb-report" --metrics --csv "$1" 2>/dev/null | awk -F, -v p="$2/" 'NR > 1 && index($2, p) == 1 {print $2; exit}'; }

# sysmetric FILE SYSTEM NAME [INDEX]: mb-gnn's measurement NAME of SYSTEM's case
sysmetric() { metric "$1" "$(casename "$1" "$2")" "$3" "${4:-0}"; }

# signal_wait SIGNAL PID JOB: sends SIGNAL to PID, then waits for the
# background JOB; sets rc (JOB's exit status) and took (seconds from the
# signal to JOB's end)
signal_wait() {
  kill -"$1" "$2"
  local t0=$SECONDS
  wait "$3"
  rc=$?
  took=$((SECONDS - t0))
}

# stop_ends_run PID JOB LABEL SIGNAL: a second after the run started
# working, SIGSTOPs PID and waits for JOB (signal_wait), then sends PID
# SIGNAL (CONT or KILL: the stopped process must not outlive the test);
# the run must end with exit 1 (the --timeout watchdog) within 60 s
stop_ends_run() {
  sleep 1
  signal_wait STOP "$1" "$2"
  kill -"$4" "$1" 2>/dev/null
  [ "$rc" = 1 ] || fail "$3: exit $rc, expected 1 (the --timeout watchdog)"
  [ "$took" -le 60 ] || fail "$3: the run took $took s to end"
}

finish() {
  if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
  exit 0
}
