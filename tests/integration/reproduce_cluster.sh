# reproduce/cluster on its committed reference (2 and 4 emulated nodes x 2
# ranks, 10 Gbit/s tbf links): compare.py writes the link floor
# 2(N-1)/N * S / rate of each size (64 MiB: 53.687 ms at 2 nodes, 80.531 ms
# at 4) and, for every algorithm at 64 MiB, the median read here from the
# result file with its multiple of that floor; plot.py draws the figure;
# the model table gives each algorithm's prediction from the result file; a
# bad --gbps is refused. Needs no root: the measurement is the reference.
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
ref=reproduce/cluster/reference
files=("$ref"/cluster-2nodes-*.h5 "$ref"/cluster-4nodes-*.h5)
for f in "${files[@]}"; do [ -f "$f" ] || { fail "no committed reference $f"; finish; }; done
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

expect 0 "compare.py on the reference" -- "$py" -m reproduce.cluster.compare --gbps 10 -o "$T/compare.md" "${files[@]}"
grep -q '^| 64 MiB | 53\.687 |' "$T/compare.md" || fail "compare.md: 64 MiB at 2 nodes lacks the floor 53.687 ms"
grep -q '^| 64 MiB | 80\.531 |' "$T/compare.md" || fail "compare.md: 64 MiB at 4 nodes lacks the floor 80.531 ms"
for f in "${files[@]}"; do
  n=$(h5dump -a /nnodes "$f" 2>/dev/null | sed -n 's/^ *(0): //p')
  for a in hier ring rabenseifner ucx mpi; do
    t=$("$BIN/mb-report" --csv "$f" | awk -F, -v a="$a" '$4 == a && $8 == 67108864 {print $13}')
    [ -n "$t" ] || { fail "$f: no $a case at 64 MiB"; continue; }
    cell=$(awk -v t="$t" -v n="$n" 'BEGIN { fl = 2 * (n - 1) / n * 67108864 / 1.25e9; printf "%.3f (%.1fx)", t * 1e3, t / fl }')
    awk -v n="$n" '/^### / {on = ($2 == n)} on && /^\| 64 MiB \|/' "$T/compare.md" | grep -qF "| $cell |" ||
      fail "compare.md at $n nodes: no cell '$cell' for $a at 64 MiB"
  done
done
grep -q '^hier wins at 2 nodes: ' "$T/compare.md" || fail "compare.md does not say where hier wins at 2 nodes"
# the model beside each measurement: the reference ran with a calibrated
# profile (node and link terms), so ring's 64 MiB prediction is the result
# file's own model value, in ms, with its error against the median
grep -q '^Model beside measurement at 2 nodes (profile [^;]*; link terms alpha_net ' "$T/compare.md" ||
  fail "compare.md lacks the model table with the profile's link terms"
f2=("$ref"/cluster-2nodes-*.h5)
read -r tm tmed < <("$BIN/mb-report" --csv "${f2[0]}" | awk -F, '$4 == "ring" && $8 == 67108864 {print $21, $13}')
cell=$(awk -v m="$tm" -v t="$tmed" 'BEGIN { printf "| 64 MiB | ring | %.3f | %.3f | %.0f%% |", t * 1e3, m * 1e3, (m > t ? m - t : t - m) / t * 100 }')
awk '/^### 2 nodes/ {on = 1} /^### 4 nodes/ {on = 0} on' "$T/compare.md" | grep -qF "$cell" ||
  fail "compare.md at 2 nodes: no row '$cell' (ring at 64 MiB, the result file's model beside its median)"
expect 0 "plot.py on the reference" -- "$py" -m reproduce.cluster.plot --gbps 10 -o "$T/fig" "${files[@]}"
for x in png pdf; do [ -s "$T/fig.$x" ] || fail "plot.py wrote no $x"; done
expect 2 "--gbps 0" -- "$py" -m reproduce.cluster.compare --gbps 0 -o "$T/bad.md" "${files[@]}" && has -- '--gbps' "names the flag"
[ -e "$T/bad.md" ] && fail "a refused compare wrote a file"
finish
