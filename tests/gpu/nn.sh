#!/bin/bash
# nn/ checks for a machine with a CUDA device (not part of make check):
# builds the CUDA variant and runs the GEMM test with NN_REQUIRE_CUDA=1,
# so cuBLAS must be present and agree with the CPU (OpenBLAS) path on
# every transpose combination; also runs the nn unit tests of that build.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0
t() { # name, command...
  local name=$1; shift
  if "$@" >"/tmp/gpu-nn-$name.log" 2>&1; then pass=$((pass + 1)); echo "PASS $name"
  else fail=$((fail + 1)); echo "FAIL $name"; tail -n 20 "/tmp/gpu-nn-$name.log"; fi
}
nvidia-smi -L || { echo "no GPU here"; echo "0 passed, 1 failed"; exit 1; }
t build make -j"$(nproc)" CUDA=1 BUILD=build-gpu
t cublas-vs-cpu env NN_REQUIRE_CUDA=1 build-gpu/tests/test_nn_gemm
grep -h "cuBLAS vs CPU" /tmp/gpu-nn-cublas-vs-cpu.log
for u in ops block account adam sage train; do
  t "nn-$u" "build-gpu/tests/test_nn_$u"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
