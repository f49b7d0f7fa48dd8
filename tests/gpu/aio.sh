#!/bin/bash
# offload/aio checks for a machine with a CUDA device (not part of make
# check): builds the CUDA variant and runs the GPU-posted batch test with
# AIO_REQUIRE_CUDA=1, so a real kernel must post batches through mapped
# host memory, ring the doorbell and spin on each batch's completion
# counter while the host thread reads into device memory (pinned staging +
# cudaMemcpyAsync), and the kernel must find every word right (and catch a
# wrong seed); then mb-aio's host runs of that build.
set -u
cd "$(dirname "$0")/../.."
. tests/gpu/lib.sh
gpu_log gpu-aio
gpu_build
export TESTS_TMP=${TMPDIR:-/tmp}
t gpu-posted env AIO_REQUIRE_CUDA=1 build-gpu/tests/test_aio_post
grep -h "GPU-posted" /tmp/gpu-aio-gpu-posted.log
t engine build-gpu/tests/test_aio
d=$(mktemp -d)
t mb-aio build-gpu/bin/mb-aio --dir "$d" --file-size 64M --sizes 4K,1M --mode sync,async -n 2 -w 1 -o "$d/r.h5"
rm -rf "$d"
gpu_done
