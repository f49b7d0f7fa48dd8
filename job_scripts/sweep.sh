#!/bin/bash
# Submit a parameter sweep of one job script: one job array per node count
# (one array task per size group), the arrays chained one after another by
# dependencies (afterany) and their tasks run one at a time (--array=...%1),
# so two measurements never share the machine.
#   job_scripts/sweep.sh [options] [-- extra arguments for the job script]
# Options:
#   --script FILE         job script (default job_scripts/mb-coll.sbatch)
#   --nodes LIST          node counts: 1,2,4,8 or a range 1-4 (default 1)
#   --ntasks-per-node N   ranks per node (default: the script's #SBATCH line)
#   --sizes "G1 G2 ..."   size groups, one array task each: MIN:MAX or a comma list
#                         (default: one task with the script's own sizes)
#   --parallel            no chain: node counts and array tasks may run at once
#   --sbatch ARG          one more sbatch option for every job (repeatable)
#   --wait                wait until every job has ended; exit 1 unless all COMPLETED
#   --collect OUT.h5      with --wait: merge every result file into OUT.h5
#   --dry-run             print the sbatch commands, submit nothing
# Writes $MB_RESULTS/sweep-<first job id>.txt: "job_id nodes tasks result_dirs";
# each task's output goes to $MB_RESULTS/<job name>-<array id>_<task>.out.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
script=$here/job_scripts/mb-coll.sbatch nodes=1 tpn="" groups="" chain=1 wait=0 collect="" dry=0
extra_sbatch=()
usage() { sed -n "2,19p" "$0" | sed "s/^# \{0,1\}//" >&2; exit "${1:-2}"; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "sweep.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case $1 in
  --script) need "$@"; script=$2; shift 2 ;;
  --nodes) need "$@"; nodes=$2; shift 2 ;;
  --ntasks-per-node) need "$@"; tpn=$2; shift 2 ;;
  --sizes) need "$@"; groups=$2; shift 2 ;;
  --parallel) chain=0; shift ;;
  --sbatch) need "$@"; extra_sbatch+=("$2"); shift 2 ;;
  --wait) wait=1; shift ;;
  --collect) need "$@"; collect=$2; shift 2 ;;
  --dry-run) dry=1; shift ;;
  -h|--help) usage 0 ;;
  --) shift; break ;;
  *) echo "sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -f "$script" ] || { echo "sweep.sh: --script: no such file '$script'" >&2; exit 2; }
[ -z "$collect" ] || [ $wait = 1 ] || { echo "sweep.sh: --collect needs --wait" >&2; exit 2; }
[ -z "$tpn" ] || [[ $tpn =~ ^[1-9][0-9]*$ ]] || { echo "sweep.sh: --ntasks-per-node: '$tpn' is not a positive integer" >&2; exit 2; }

# Node counts: a comma list of positive integers, or A-B.
counts=()
if [[ $nodes =~ ^([1-9][0-9]*)-([1-9][0-9]*)$ ]]; then
  for ((n = BASH_REMATCH[1]; n <= BASH_REMATCH[2]; n++)); do counts+=("$n"); done
else
  IFS=, read -r -a counts <<<"$nodes"
fi
[ ${#counts[@]} -gt 0 ] || { echo "sweep.sh: --nodes: empty list" >&2; exit 2; }
for n in "${counts[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "sweep.sh: --nodes: '$n' is not a positive integer (use 1,2,4 or 1-4)" >&2; exit 2; }
done
ngroups=1
if [ -n "$groups" ]; then
  read -r -a g <<<"$groups"
  ngroups=${#g[@]}
  for x in "${g[@]}"; do
    [[ $x =~ ^[0-9]+[KMG]?(:[0-9]+[KMG]?)?$ || $x =~ ^[0-9]+[KMG]?(,[0-9]+[KMG]?)*$ ]] ||
      { echo "sweep.sh: --sizes: group '$x' is neither MIN:MAX nor a comma list of sizes" >&2; exit 2; }
  done
  export MB_SIZE_GROUPS=$groups
fi
if [ $dry = 0 ]; then
  command -v sbatch >/dev/null || { echo "sweep.sh: sbatch not found (Slurm client not installed)" >&2; exit 2; }
fi

export MB_HOME=$here
results=${MB_RESULTS:-$here/results}
[ $dry = 1 ] || mkdir -p "$results"
ids=() prev="" lines=()
for n in "${counts[@]}"; do
  # Chained: the tasks of an array also run one at a time (%1).
  cmd=(sbatch --parsable --nodes="$n" --array=0-$((ngroups - 1))$([ $chain = 1 ] && echo %1)
       --job-name="$(basename "$script" .sbatch)-n$n")
  [ -n "$tpn" ] && cmd+=(--ntasks-per-node="$tpn")
  cmd+=(--output="$results/%x-%A_%a.out")   # the job's stdout/stderr beside its results
  [ $chain = 1 ] && [ -n "$prev" ] && cmd+=(--dependency=afterany:"$prev")
  cmd+=("${extra_sbatch[@]}" "$script" "$@")
  if [ $dry = 1 ]; then
    echo "${cmd[*]}"
    prev=DRYRUN
    continue
  fi
  id=$("${cmd[@]}")
  id=${id%%;*}
  echo "sweep.sh: nodes=$n: job array $id ($ngroups task(s)), results in $results/${id}_*/" >&2
  ids+=("$id") prev=$id
  lines+=("$id $n $ngroups $results/${id}_*")
done
[ $dry = 1 ] && exit 0
manifest=$results/sweep-${ids[0]}.txt
printf '%s\n' "# job_id nodes tasks result_dirs (script $script)" "${lines[@]}" >"$manifest"
echo "sweep.sh: manifest $manifest" >&2
printf '%s\n' "${ids[@]}"
[ $wait = 1 ] || exit 0

# Wait: one small job that starts when every array has ended.
dep=$(IFS=:; echo "${ids[*]}")
sbatch --wait --quiet --dependency=afterany:"$dep" --job-name=sweep-wait --ntasks=1 --time=00:05:00 \
  --output=/dev/null "${extra_sbatch[@]}" --wrap=true >/dev/null || true
bad=0
for id in "${ids[@]}"; do
  while read -r jid state; do
    [ "$state" = COMPLETED ] || { echo "sweep.sh: job $jid ended $state" >&2; bad=1; }
  done < <(scontrol show job -o "$id" 2>/dev/null |
           sed -nE 's/^JobId=[0-9]+ ArrayJobId=([0-9]+) ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+).*/\1_\2 \3/p')
  for ((t = 0; t < ngroups; t++)); do
    compgen -G "$results/${id}_$t/*.h5" >/dev/null || { echo "sweep.sh: no result file in $results/${id}_$t/" >&2; bad=1; }
  done
done
[ $bad = 0 ] || exit 1
echo "sweep.sh: all ${#ids[@]} job array(s) completed" >&2
if [ -n "$collect" ]; then
  py=$("$here/reproduce/python.sh") || exit 1
  dirs=()
  for id in "${ids[@]}"; do for ((t = 0; t < ngroups; t++)); do dirs+=("$results/${id}_$t"); done; done
  PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" "$py" -m reproduce.collect -o "$collect" "${dirs[@]}"
fi
