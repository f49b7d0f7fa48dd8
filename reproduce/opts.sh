# Sourced by the studies' scripts (source "$(dirname "$0")/../opts.sh"):
# sets root to the repository and goes there; their shared flags, parsed in
# one place.
#   study_opts PROG "FLAGS" SCRIPT "$@"
# FLAGS names the flags the script takes, each NAME or NAME=DEFAULT (a
# default without spaces; NAME alone: the caller set the default), from:
# scale slurm vcluster out dir seed data np nodes. Each --NAME VALUE sets the
# shell variable NAME (a dash in NAME an underscore: --compute-threads sets
# compute_threads); --slurm sets slurm=1, --vcluster vcluster=1; -h/--help prints SCRIPT's
# header comment. Anything else: one line naming it, exit 2.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
study_opts() {
  local prog=$1 flags=" " script=$3 name f
  for f in $2; do
    name=${f%%=*}
    [[ $f != *=* ]] || printf -v "${name//-/_}" '%s' "${f#*=}"
    flags+="$name "
  done
  shift 3
  while [ $# -gt 0 ]; do
    name=${1#--}
    case $1 in
    -h | --help)
      awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$script"
      exit 0 ;;
    --slurm | --vcluster)
      [[ $flags == *" $name "* ]] || { echo "$prog: unknown option '$1' (see --help)" >&2; exit 2; }
      printf -v "$name" 1
      shift ;;
    --*)
      [[ $flags == *" $name "* && $name != slurm && $name != vcluster ]] || { echo "$prog: unknown option '$1' (see --help)" >&2; exit 2; }
      [ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; }
      printf -v "${name//-/_}" '%s' "$2"
      shift 2 ;;
    *) echo "$prog: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
  done
}
