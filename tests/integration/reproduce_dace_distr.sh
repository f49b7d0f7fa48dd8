# reproduce/dace/distr: DaCe's distributed gemm, k2mm and k3mm
# (dace.distr.MatMult on ScaLAPACK), atax (a matrix-vector kernel on
# dace.distr.MatMult's pdgemv), jacobi_2d and heat_3d (stencils, halos on
# dace.comm.Isend/Irecv; heat_3d's step a nested program) at P = 1 and 2, DaCe's validation sizes: each call
# checked on every rank, 10 rows per kernel in DaCe's CSV schema at the
# sizes mb-polybench runs at that P, the program compiled at P = 1 reused at
# P = 2, and a corrupted element fails naming kernel, rank and index (gemm,
# atax, jacobi_2d). Needs DaCe's venv with mpi4py (reproduce/dace/venv.sh, made by
# reproduce/dace/run.sh --with-dace); skips without it.
. "$(dirname "$0")/../lib.sh"
dpy=${MB_DACE_PYTHON:-$PWD/${BUILD:-build}/venv-dace/bin/python}
if ! [ -x "$dpy" ] || ! "$dpy" -c 'import dace, mpi4py' >/dev/null 2>&1; then
  echo "SKIP: no DaCe venv with mpi4py at $dpy (reproduce/dace/run.sh --with-dace makes it)"
  exit 77
fi
R=reproduce/dace/distr/runner.py
c=$T/cache o=$T/o
ks="gemm k2mm k3mm atax jacobi_2d heat_3d"
for p in 1 2; do
  expect 0 "runner at P=$p" -- timeout 900 mpirun -np $p --oversubscribe --bind-to none \
    -x DACE_default_build_folder="$c" "$dpy" $R --scale-down 100 --out "$o" --cache "$c" --kernels "${ks// /,}" || continue
  for k in $ks; do has "^runner.py: $k: P=$p: median .* over 10 samples, checked$" "$k checked at P=$p"; done
  [ $p = 2 ] && has "gemm: P=2 grid 1x2 sizes .*: loaded \(compiled by an earlier P\)" "P=2 reuses P=1's program"
  # the sizes mb-polybench runs at this P, as DaCe's tuple: (TSTEPS,) then the dims, the first three
  expect 0 "mb-polybench sizes at P=$p" -- mpi $p "$BIN/mb-polybench" --kernel "${ks// /,}" --variant summa,allreduce,halo \
    --scale-down 100 -n 1 -w 0 -o "$T/s$p.h5" || continue
  for k in $ks; do
    tup=$(attr "$T/s$p.h5" "sizes_$k" | tr -d '"' | awk -F, '{s = ""; n = 0; t = ""
      for (i = 1; i <= NF; i++) {v = $i; sub(/.*=/, "", v); if ($i ~ /^TSTEPS=/) t = v ", "; else if (n++ < 3) s = s (n > 1 ? ", " : "") v}
      if (n == 1 && t == "") s = s ","; print "(" t s ")"}')
    n=$(grep -cF "$k,dace_cpu,$p,\"$tup\"," "$o/dace_cpu_${p}_processes.csv")
    [ "$n" = 10 ] || { fail "$k at P=$p: $n rows with sizes $tup, expected 10"; cat "$o/dace_cpu_${p}_processes.csv" >&2; }
  done
done
expect 1 "a corrupted element at P=2" -- env MB_FAULT_INJECT=corrupt timeout 900 mpirun -np 2 --oversubscribe \
  --bind-to none -x DACE_default_build_folder="$c" -x MB_FAULT_INJECT "$dpy" $R --scale-down 100 --out "$T/f" \
  --cache "$c" --kernels gemm,atax,jacobi_2d &&
  has "^check failed: gemm/dace_cpu: rank 1: gemm C\[[0-9]+\]\[[0-9]+\] = " "the check names kernel, rank and index" &&
  has "^check failed: atax/dace_cpu: rank 1: atax y\[[0-9]+\] = " "atax: rank and index named" &&
  has "^check failed: jacobi_2d/dace_cpu: rank 1: jacobi_2d A\[[0-9]+\]\[[0-9]+\] = " "jacobi_2d: rank and index named"
[ ! -s "$T/f/dace_cpu_2_processes.csv" ] || fail "a failed check still wrote samples"
expect 2 "P=3, outside DaCe's table" -- mpirun -np 3 --oversubscribe --bind-to none "$dpy" $R --scale-down 100 \
  --out "$T/x" --cache "$c" && has "P=3 is not in DaCe's grid table" "P=3 named"
finish
