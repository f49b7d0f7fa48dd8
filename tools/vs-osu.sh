#!/bin/bash
# Side-by-side check of mb-coll against OSU Micro-Benchmarks' osu_allreduce
# (built by you, outside movebench): both run alternately REPS times on the
# same ranks and sizes; prints OSU's average latency (its metric) beside
# mb-coll's median, then beside mb-coll's mean, each with the ratio of the
# means over the runs and the median of the alternating pairs' ratios.
#   tools/vs-osu.sh /path/to/osu_allreduce [NP [MAXBYTES [REPS]]]
set -euo pipefail
cd "$(dirname "$0")/.."
osu=${1:?usage: tools/vs-osu.sh /path/to/osu_allreduce [NP [MAXBYTES [REPS]]]}
np=${2:-2} max=${3:-1048576} reps=${4:-3}
[ -x "$osu" ] || { echo "vs-osu: $osu: not an executable" >&2; exit 2; }
# OSU takes bytes only (5.x refuses 1M and prints no row)
maxb=$(numfmt --from=iec "${max%B}" 2>/dev/null) || { echo "vs-osu: MAXBYTES '$max' is not a size" >&2; exit 2; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml_ucx_tls=${OMPI_MCA_pml_ucx_tls:-any} OMPI_MCA_pml_ucx_devices=${OMPI_MCA_pml_ucx_devices:-any}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in $(seq "$reps"); do
  mpirun -np "$np" "$osu" -m "8:$maxb" -i 1000 -x 100 | awk '/^[0-9]/{print $1, $2}' >"$tmp/osu.$k"
  mpirun -np "$np" build/bin/mb-coll --coll allreduce --dtype float -b 8 -e "$maxb" -n 1000 -w 100 \
    -o "$tmp/h5.$k.h5" | awk '$NF=="pass"{print $1, $3}' >"$tmp/mb.$k"
  # mb-coll's mean too: OSU's metric is a mean (of each rank's per-call times)
  build/bin/mb-report --csv "$tmp/h5.$k.h5" | awk -F, 'NR > 1 && $NF == "pass" {printf "%s %.4f\n", $8, $16 * 1e6}' >"$tmp/mean.$k"
  # the same sizes on both sides, or the table would pair the wrong numbers
  if [ ! -s "$tmp/osu.$k" ] || ! cmp -s <(cut -d' ' -f1 "$tmp/osu.$k") <(cut -d' ' -f1 "$tmp/mb.$k"); then
    echo "vs-osu: run $k: OSU and mb-coll did not report the same sizes (OSU: $(wc -l <"$tmp/osu.$k") rows, mb-coll: $(wc -l <"$tmp/mb.$k") passing rows)" >&2
    exit 1
  fi
done
# one row per size: OSU averages, mb-coll's medians (then means), the ratio
# of the means over the runs and the median over the runs of each run's
# ratio (run k of mb-coll ran right after run k of OSU, so each pair shares
# the machine's phase)
table() {
  paste -d' ' "$tmp"/osu.* "$tmp"/"$1".* | awk -v r="$reps" -v what="$2" '
    BEGIN { printf "%10s  %-26s  %-26s  %7s  %s\n", "size(B)", "osu avg (us), each run", what, "mb/osu", "median of run pairs" }
    { o = ""; m = ""; so = 0; sm = 0
      for (i = 0; i < r; i++) { o = o sprintf("%7.2f ", $(2*i+2)); so += $(2*i+2) }
      for (i = r; i < 2*r; i++) { m = m sprintf("%7.2f ", $(2*i+2)); sm += $(2*i+2) }
      for (i = 0; i < r; i++) q[i] = $(2*(i+r)+2) / $(2*i+2)
      for (i = 1; i < r; i++) for (j = i; j > 0 && q[j-1] > q[j]; j--) { t = q[j]; q[j] = q[j-1]; q[j-1] = t }
      med = r % 2 ? q[(r-1)/2] : (q[r/2-1] + q[r/2]) / 2
      printf "%10s  %-26s  %-26s  %7.2f  %.2f\n", $1, o, m, sm / so, med }'
}
table mb "mb-coll median (us)"
echo
table mean "mb-coll mean (us)"
