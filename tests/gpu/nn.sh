#!/bin/bash
# nn/ checks for a machine with a CUDA device (not part of make check):
# builds the CUDA variant and runs the GEMM test with NN_REQUIRE_CUDA=1,
# so cuBLAS must be present and agree with the CPU (OpenBLAS) path on
# every transpose combination; also runs the nn unit tests of that build.
set -u
cd "$(dirname "$0")/../.."
. tests/gpu/lib.sh
gpu_log gpu-nn
gpu_build
t cublas-vs-cpu env NN_REQUIRE_CUDA=1 build-gpu/tests/test_nn_gemm
grep -h "cuBLAS vs CPU" /tmp/gpu-nn-cublas-vs-cpu.log
for u in ops block account adam sage train; do
  t "nn-$u" "build-gpu/tests/test_nn_$u"
done
gpu_done
