#!/bin/bash
# Side-by-side check of mb-coll against OSU Micro-Benchmarks' osu_allreduce
# (built by you, outside movebench): both run alternately REPS times on the
# same ranks and sizes; prints OSU's average latency (its metric), mb-coll's
# median, and the ratio of mb-coll's median to the mean of OSU's averages.
#   tools/vs-osu.sh /path/to/osu_allreduce [NP [MAXBYTES [REPS]]]
set -euo pipefail
cd "$(dirname "$0")/.."
osu=${1:?usage: tools/vs-osu.sh /path/to/osu_allreduce [NP [MAXBYTES [REPS]]]}
np=${2:-2} max=${3:-1048576} reps=${4:-3}
[ -x "$osu" ] || { echo "vs-osu: $osu: not an executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml_ucx_tls=${OMPI_MCA_pml_ucx_tls:-any} OMPI_MCA_pml_ucx_devices=${OMPI_MCA_pml_ucx_devices:-any}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in $(seq "$reps"); do
  mpirun -np "$np" "$osu" -m "8:$max" -i 1000 -x 100 | awk '/^[0-9]/{print $1, $2}' >"$tmp/osu.$k"
  mpirun -np "$np" build/bin/mb-coll --coll allreduce --dtype float -b 8 -e "$max" -n 1000 -w 100 \
    -o "$tmp/h5.$k.h5" | awk '$NF=="pass"{print $1, $3}' >"$tmp/mb.$k"
done
# one row per size: OSU averages, mb-coll medians, ratio of the means
paste -d' ' "$tmp"/osu.* "$tmp"/mb.* | awk -v r="$reps" '
  BEGIN { printf "%10s  %-26s  %-26s  %s\n", "size(B)", "osu avg (us), each run", "mb-coll median (us)", "mb/osu" }
  { o = ""; m = ""; so = 0; sm = 0
    for (i = 0; i < r; i++) { o = o sprintf("%7.2f ", $(2*i+2)); so += $(2*i+2) }
    for (i = r; i < 2*r; i++) { m = m sprintf("%7.2f ", $(2*i+2)); sm += $(2*i+2) }
    printf "%10s  %-26s  %-26s  %.2f\n", $1, o, m, sm / so }'
