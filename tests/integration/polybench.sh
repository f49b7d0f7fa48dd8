#!/bin/bash
# mb-polybench: every kernel matches its serial double reference at DaCe's
# validation sizes (--scale-down 100) at P = 1, 2, 4, 8 (oversubscribed) and
# on --grid 1x3, 1x5 and 3x1 (P = 3 is not in DaCe's table), and with --algo shm
# and binomial,rd (whose P=2 model is a number, mpi's NaN); SUMMA with its
# overlapped panels (the registry's nonblocking broadcast, the default) and --summa-bcast registry; the sizes reach
# /config; MB_FAULT_INJECT=corrupt (one element of one rank's block, drawn
# from --seed) exits 1 naming kernel, rank and global index for every
# kernel; skip-halo fails jacobi_2d and heat_3d (and jacobi_1d); bad input exits 2 with
# one line. Every case records each rank's communication seconds per call;
# the products their own dgemm rate, the stencils their copy rate (set-up);
# a stencils-only run measures no start-up rates.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/polybench.inc"
fast_abort   # every failing run here ends by itself on every rank
cd "$T"
PB="$BIN/mb-polybench"
V=(--scale-down 100 -n 2 -w 1)
# the pblas variant (gemm, k2mm, k3mm on pdgemm; atax, bicg, gemver, gesummv,
# mvt on pdgemv) is built where the Makefile finds ScaLAPACK
if pkg-config --exists scalapack-openmpi; then PBLAS=1; NCASES=20; else PBLAS=0; NCASES=12; fi

run_np() { # NP ARGS...: a run that must pass every check
  local np=$1; shift
  local out="$T/ok.$np.$RANDOM.h5"
  if expect 0 "np $np $*" -- timeout 300 mpirun --oversubscribe --bind-to none -np "$np" "$PB" "${V[@]}" -o "$out" "$@"; then
    for k in atax bicg doitgen gemm gemver gesummv k2mm k3mm mvt jacobi_1d jacobi_2d heat_3d; do
      [ -n "$(attr "$out" "sizes_$k")" ] || fail "np $np $*: /config lacks sizes_$k"
    done
    [ "$(grep -c  ' pass$' "$T/out")" = "$NCASES" ] || fail "np $np $*: not $NCASES passing cases"
  fi
}
run_np 1
run_np 2
# the stencils' halo in flight while the interior is swept: bit for bit the
# serial reference at 2, 4 ranks and 1x3 (tests/unit/test_polybench_halo.c)
TH=$BIN/../tests/test_polybench_halo
for g in 2: 4: 3:1x3; do
  np=${g%%:*} grid=${g#*:}
  expect 0 "test_polybench_halo at $np ranks ${grid}" -- mpirun --oversubscribe --bind-to none -np "$np" \
    -x "MB_TEST_GRID=$grid" "$TH" && has "at $np ranks .*: 0 block\(s\) not bit for bit" "halo bit for bit at $np"
done
MB_FAULT_INJECT=skip-halo expect 1 "test_polybench_halo skip-halo" -- mpirun --oversubscribe --bind-to none -np 2 \
  -x MB_FAULT_INJECT "$TH" && has "differs from the serial reference" "skip-halo caught by test_polybench_halo"
# per-rank communication seconds per call: one per rank, a number where the
# grid communicates (pblas: NaN, its communication is inside ScaLAPACK)
f=$(ls -t "$T"/ok.2.*.h5 | head -1)
for r in 0 1; do
  for c in gemm/summa/P2 atax/allreduce/P2 heat_3d/halo/P2; do
    v=$(metric "$f" "$c" comm_s_per_rank "$r")
    [[ $v =~ ^[0-9.e+-]+$ ]] || fail "$c: comm_s_per_rank[$r] is '$v', not a number"
  done
  [ "$PBLAS" = 0 ] || [ "$(metric "$f" gemm/pblas/P2 comm_s_per_rank "$r")" = nan ] ||
    fail "gemm/pblas/P2: comm_s_per_rank[$r] is not NaN"
done
# the model's terms calibrated per case in set-up: every matrix-vector case's
# timed local compute (local_s, and the GB/s it streamed), a stencil's cell
# rate (each a positive number); a product or a stencil has no local time
mv="atax bicg gemver gesummv mvt"
cms="jacobi_1d/halo/P2:cells_per_s_per_rank"
for k in $mv; do
  for v in allreduce $([ "$PBLAS" = 1 ] && echo pblas); do
    cms+=" $k/$v/P2:local_s $k/$v/P2:local_GBps_per_rank"
  done
done
for cm in $cms; do
  v=$(metric "$f" "${cm%%:*}" "${cm#*:}")
  awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "${cm%%:*}: ${cm#*:} is '$v', not a positive number"
done
# the products' dgemm rate, calibrated in each product case's set-up on its own local shapes: a positive
# number per case; the working set's copy rate only where the model prices bytes at it (the stencils)
for c in gemm/summa/P2 doitgen/local/P2 k3mm/summa/P2; do
  v=$(metric "$f" "$c" dgemm_GFlops_per_rank)
  awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "$c: dgemm_GFlops_per_rank is '$v', not a positive number"
done
v=$(metric "$f" jacobi_2d/halo/P2 copy_GBps_per_rank)
awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "jacobi_2d/halo/P2: copy_GBps_per_rank is '$v', not a positive number"
for c in gemm/summa/P2 atax/allreduce/P2; do
  [ -z "$(metric "$f" "$c" copy_GBps_per_rank)" ] || fail "$c records a copy rate its model does not use"
done
# the run's start-up rates only when a chosen case uses them: none for the stencils alone, whose model
# (their own set-up's rates) is still a number at P = 1
out=$T/stencils.h5
if expect 0 "np 1 stencils only" -- timeout 300 mpirun --bind-to none -np 1 "$PB" "${V[@]}" \
  --kernel jacobi_1d,jacobi_2d,heat_3d -o "$out"; then
  has "no run-level rates" "stencils only: no start-up rates"
  [ -z "$(runmetric "$out" dgemm_GFlops_per_rank)" ] || fail "stencils only: a run-level dgemm rate was measured"
  for c in jacobi_1d/halo/P1 heat_3d/halo/P1; do
    v=$(metric "$out" "$c" model_memory_s)
    awk -v v="$v" 'BEGIN {exit !(v + 0 > 0)}' || fail "stencils only, $c: model_memory_s is '$v', not a positive number"
  done
fi
for c in gemm/summa/P2 k3mm/summa/P2 doitgen/local/P2 jacobi_2d/halo/P2; do
  [ -z "$(metric "$f" $c local_s)" ] || fail "$c records a local compute time"
done
run_np 4
run_np 8
run_np 3 --grid 1x3
run_np 5 --grid 1x5
run_np 3 --grid 3x1
run_np 4 --algo shm --summa-bcast registry  # registered (node-shared) buffers on the row and column contexts; SUMMA's blocking registry broadcasts
run_np 3 --grid 1x3 --summa-bcast registry  # three panels, each broadcast through the registry
# --algo NAME,NAME: the binomial broadcast and the recursive-doubling allreduce
# (both modelled): the P=2 model's communication term is a number where
# Open MPI's own (mpi, the default) is NaN; profile given, not the host's
prof=$(cd "$(dirname "$0")/../.." && pwd)/profiles/vm.txt
for a in binomial,rd mpi; do
  out="$T/algo.$a.h5"
  expect 0 "np 2 --algo $a" -- timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$PB" "${V[@]}" \
    --kernel gemm,atax --variant summa,allreduce --algo "$a" --profile "$prof" -o "$out" || continue
  for c in gemm/summa/P2 atax/allreduce/P2; do
    v=$(metric "$out" "$c" model_comm_s)
    if [ "$a" = mpi ]; then
      [ "$v" = nan ] || fail "$c --algo mpi: model_comm_s is '$v', not NaN (mpi is not modelled)"
    else
      awk -v v="$v" 'BEGIN {exit !(v > 0)}' || fail "$c --algo $a: model_comm_s is '$v', not a positive number"
    fi
  done
done

# corrupt: every kernel, at 4 ranks; the line names the case, a rank and an index
for k in atax bicg doitgen gemm gemver gesummv k2mm k3mm mvt jacobi_1d jacobi_2d heat_3d; do
  MB_FAULT_INJECT=corrupt expect 1 "corrupt $k" -- timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$PB" "${V[@]}" --kernel "$k" --seed 11 \
    -o "$T/c.$k.h5" && has "check failed: $k/[a-z]+/P4: rank [0-3], iteration [0-9]+: $k [A-Za-z][A-Za-z0-9]*\[[0-9]+\]" "corrupt $k"
done
if [ "$PBLAS" = 1 ]; then
  for k in gemm k3mm atax gemver gesummv; do
    MB_FAULT_INJECT=corrupt expect 1 "corrupt $k pblas" -- timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$PB" "${V[@]}" --kernel "$k" \
      --variant pblas --seed 11 -o "$T/cp.$k.h5" && has "check failed: $k/pblas/P4: rank [0-3], iteration [0-9]+: $k [A-Za-z][A-Za-z0-9]*\[[0-9]+\]" "corrupt $k pblas"
  done
fi
# a different seed may hit another rank: still caught
MB_FAULT_INJECT=corrupt expect 1 "corrupt k3mm registry" -- timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$PB" "${V[@]}" --kernel k3mm \
  --variant summa --summa-bcast registry --seed 11 -o "$T/cr.h5" && has "check failed: k3mm/summa/P2: rank [01]" "corrupt k3mm registry"
MB_FAULT_INJECT=corrupt expect 1 "corrupt gemm seed 5" -- timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$PB" "${V[@]}" --kernel gemm --seed 5 \
  -o "$T/c5.h5" && has "check failed: gemm/summa/P2: rank [01]" "corrupt gemm seed 5"

# skip-halo: the stencils must fail without their halo exchanges
for k in jacobi_2d jacobi_1d heat_3d; do
  MB_FAULT_INJECT=skip-halo expect 1 "skip-halo $k" -- timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$PB" "${V[@]}" --kernel "$k" \
    -o "$T/h.$k.h5" && has "check failed: $k/halo/P4" "skip-halo $k"
done

# heat_3d over several steps (validation sizes give one): halos and the fault at N=12, TSTEPS=5
expect 0 "heat_3d dims" -- timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$PB" -n 2 -w 1 --kernel heat_3d --dims 12,5 -o "$T/h3.h5"
MB_FAULT_INJECT=skip-halo expect 1 "skip-halo heat_3d dims" -- timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$PB" -n 2 -w 1 --kernel heat_3d \
  --dims 12,5 -o "$T/h3s.h5" && has "check failed: heat_3d/halo/P4: rank [0-3], iteration 0: heat_3d A\[[0-9]+\]\[[0-9]+\]" "skip-halo heat_3d dims"

# bad input: exit 2, one line of the program's own (mpirun's notices aside)
bad 1 "--kernel: 'k5mm' is not a comma-separated list" --kernel k5mm
bad 3 "--grid: 3 ranks are not in DaCe's grid table"
bad 3 "--grid 2x2: 4 ranks, but the run has 3" --grid 2x2
bad 2 "--grid 2by1: expected PxQ" --grid 2by1
bad 3 "--dims: M=10, N=10: the 1x3 grid needs" --grid 1x3 --kernel atax --dims 10,10
bad 4 "--dims: gemm M=8, N=8, K=7: the 2x2 grid needs" --kernel gemm --dims 8,8,7
bad 1 "--dims: needs exactly one --kernel" --dims 10,10
bad 1 "--dims 1,2,x: k3mm takes 5 positive integers \\(M,N,K,R,S\\)" --kernel k3mm --dims 1,2,x
bad 1 "--dims 8: jacobi_2d takes 2 values, not 1" --kernel jacobi_2d --dims 8
if [ "$PBLAS" = 0 ]; then
  bad 1 "--variant pblas: this build has no ScaLAPACK" --variant pblas
else # --variant pblas alone runs the three products and the five matrix-vector kernels
  if expect 0 "pblas alone" -- timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$PB" "${V[@]}" --variant pblas -o "$T/pb.h5"; then
    [ "$(grep -c ' pass$' "$T/out")" = 8 ] || fail "pblas alone: not 8 passing cases"
  fi
fi
bad 1 "--variant: 'nosuch' is not" --variant nosuch
bad 1 "--algo nosuch: not in the collectives registry" --algo nosuch
bad 1 "--algo rd: no bcast among them" --algo rd
bad 1 "--summa-bcast overlap: --algo shm's broadcast .shm. has no nonblocking form" --algo shm
exit $((failures > 0))
