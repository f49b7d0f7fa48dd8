#!/bin/bash
# mb-polybench --mode shared: every NPBench kernel x variant (naive, fused)
# validates at preset S on one rank with OpenMP threads; the bootstrap CI
# and the best variant reach /metrics; MB_FAULT_INJECT=corrupt (one element
# drawn from --seed) exits 1 naming kernel and index for every kernel; bad
# input (preset, kernel, ranks) exits 2 with one line.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/polybench.inc"
fast_abort   # every failing run here ends by itself on every rank
cd "$T"
PB="$BIN/mb-polybench"
KS=(atax bicg doitgen gemm gemver gesummv mvt jacobi_1d jacobi_2d heat_3d lstsqr specialconvolve wdist)
export OMP_NUM_THREADS=2

if expect 0 "preset S" -- timeout 900 mpirun --oversubscribe --bind-to none -np 1 "$PB" --mode shared --preset S -n 2 -w 1 -o "$T/s.h5"; then
  [ "$(grep -c ' pass$' "$T/out")" = $((2 * ${#KS[@]})) ] || fail "preset S: not $((2 * ${#KS[@]})) passing cases"
  for k in "${KS[@]}"; do
    has "^# best $k: (naive|fused), median" "best $k"
    [ -n "$(attr "$T/s.h5" "sizes_$k")" ] || fail "preset S: /config lacks sizes_$k"
    b=$(runmetric "$T/s.h5" "best_$k")
    [[ $b == *naive* || $b == *fused* ]] || fail "preset S: /metrics best_$k is '$b'"
  done
  lo=$(metric "$T/s.h5" gemm/fused/S npbench_ci_lo_s) hi=$(metric "$T/s.h5" gemm/fused/S npbench_ci_hi_s)
  awk -v l="$lo" -v h="$hi" 'BEGIN {exit !(l > 0 && h >= l)}' || fail "gemm/fused/S: bootstrap CI [$lo, $hi]"
  # the sizes are NPBench's S
  [[ $(attr "$T/s.h5" sizes_gemm) == *NI=1000,NJ=1100,NK=1200* ]] || fail "gemm's S sizes: $(attr "$T/s.h5" sizes_gemm)"
fi

# corrupt: every kernel, both variants caught, the line names kernel, array and index
for k in "${KS[@]}"; do
  MB_FAULT_INJECT=corrupt expect 1 "corrupt $k" -- timeout 300 mpirun --oversubscribe --bind-to none -np 1 "$PB" --mode shared --kernel "$k" -n 1 -w 1 --seed 7 \
    -o "$T/c.$k.h5" && has "check failed: $k/naive/S: rank 0, iteration 0: $k: [A-Za-z_0-9]+\[[0-9]+\] = " "corrupt $k" &&
    has "check failed: $k/fused/S" "corrupt $k fused"
done

bad 1 "--preset: 'XL' is not one of S\|M\|L\|paper" --mode shared --preset XL
bad 1 "--kernel k2mm: not a --mode shared kernel" --mode shared --kernel k2mm
bad 1 "--kernel lstsqr: only with --mode shared" --kernel lstsqr
bad 2 "--mode shared: runs on one rank" --mode shared
bad 1 "--dims 5,5: gemm takes 3 integers" --mode shared --kernel gemm --dims 5,5
finish
