#!/bin/bash
# movebench test runner (make check): unit tests (build/tests/test_*), then
# every tests/<kind>/*.sh script. Each test's exit status is its verdict:
# 0 pass, 77 skip, anything else fail. Last line: N passed, N failed, N skipped.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export BIN=$PWD/$BUILD/bin
export TESTS_TMP=$(mktemp -d /tmp/movebench-tests.XXXXXX)
trap 'rm -rf "$TESTS_TMP"' EXIT

# MPI as root on a shared-memory-only host with more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
export OMPI_MCA_rmaps_base_oversubscribe=1
# Oversubscribed ranks must yield, or a polling rank starves the others.
export OMPI_MCA_mpi_yield_when_idle=1
if [ -n "${SAN:-}" ]; then
  # Open MPI's own allocations are reported as leaks; the tests look for
  # our errors, which ASan and UBSan still abort on.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export TSAN_OPTIONS=halt_on_error=1:exitcode=66
fi

filters=("$@")   # optional: run only tests whose names contain one of these
pass=0 fail=0 skip=0 failed=()
log_dir=$TESTS_TMP/logs
mkdir -p "$log_dir"

run_one() { # name, command...
  local name=$1; shift
  if [ ${#filters[@]} -gt 0 ]; then
    local f keep=0
    for f in "${filters[@]}"; do [[ $name == *"$f"* ]] && keep=1; done
    [ $keep = 1 ] || return 0
  fi
  local log=$log_dir/${name//\//_}.log t0=$SECONDS rc
  timeout 900 "$@" >"$log" 2>&1
  rc=$?
  local dt=$((SECONDS - t0))
  case $rc in
    0) pass=$((pass + 1)); printf 'PASS %-45s %4ss\n' "$name" "$dt" ;;
    77) skip=$((skip + 1)); printf 'SKIP %-45s %s\n' "$name" "$(tail -n1 "$log")" ;;
    *) fail=$((fail + 1)); failed+=("$name")
       printf 'FAIL %-45s (exit %d)\n' "$name" "$rc"
       sed 's/^/    | /' "$log" | tail -n 40 ;;
  esac
}

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done
for kind in cli integration slurm; do
  for t in tests/$kind/*.sh; do
    [ -f "$t" ] && run_one "$kind/$(basename "$t" .sh)" bash "$t"
  done
done

[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
