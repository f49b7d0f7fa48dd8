# A test cluster that does not start fails the Slurm tests (exit 1, one
# line naming what broke), never passes: tests/slurm/jobs.sh is run with
# one start step broken at a time by a stand-in first on PATH (mungekey
# failing, munged and slurmd (but for slurmd -C) exiting 0 without running, slurmctld given a
# slurm.conf that does not exist); no daemon of that attempt is left running.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.inc"
cluster_prereqs
slurmctld_real=$(command -v slurmctld) slurmd_real=$(command -v slurmd)

# broken NAME DESCRIPTION PATTERN SCRIPT: jobs.sh with NAME replaced by SCRIPT
broken() {
  local name=$1 what=$2 pat=$3 shim=$T/shim-$1
  mkdir -p "$shim"
  printf '#!/bin/bash\n%s\n' "$4" >"$shim/$name" && chmod +x "$shim/$name"
  PATH=$shim:$PATH expect 1 "jobs.sh with $what" -- timeout 120 bash "$(dirname "$0")/jobs.sh" &&
    has "^FAIL: test cluster did not start: $pat" "$what: the reason"
  grep -q '^PASS\|^cluster: node .* idle' "$T/out" && fail "$what: the cluster was reported up"
  # the attempt's folder is gone and none of its daemons runs
  local sl
  sl=$(sed -n 's|^--- \(/tmp/movebench-slurm\.[^/]*\)/log/.*|\1|p' "$T/out" | head -n1)
  if [ -n "$sl" ]; then
    [ -e "$sl" ] && fail "$what: $sl left behind"
    pgrep -f -- "$sl" >/dev/null && fail "$what: a daemon of $sl still runs: $(pgrep -af -- "$sl")"
  fi
}

broken mungekey "mungekey failing" "mungekey --create failed" 'echo "mungekey: broken for the test" >&2; exit 1'
broken munged "munged exiting 0 without a daemon" "munged is not running" 'exit 0'
broken slurmctld "slurmctld on a missing slurm.conf" "slurmctld" \
  "exec $slurmctld_real -i -f $T/no/such/slurm.conf"
broken slurmd "slurmd exiting 0 without a daemon" "slurmd is not running" \
  "[ \"\$1\" = -C ] && exec $slurmd_real -C; exit 0"
finish
