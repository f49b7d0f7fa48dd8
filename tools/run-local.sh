#!/bin/bash
# The main job on a workstation: a small mb-coll sweep on a local mpirun,
# written to results/, then its summary through mb-report.
#   tools/run-local.sh [BUILD-DIR [NP]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} np=${2:-2}
# Running as root, and Open MPI's UCX layer on a host with shared memory only.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_pml_ucx_tls=${OMPI_MCA_pml_ucx_tls:-any} OMPI_MCA_pml_ucx_devices=${OMPI_MCA_pml_ucx_devices:-any}
oversub=()
# the PUs we may run on: GNU nproc answers OMP_NUM_THREADS when it is set
[ "$np" -gt "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" ] && oversub=(--oversubscribe)
mkdir -p results
out=results/mb-coll-$(date -u +%Y%m%dT%H%M%SZ).h5
mpirun -np "$np" "${oversub[@]}" "$build/bin/mb-coll" --coll allreduce,allgather,bcast,reduce_scatter_block --algo mpi,shm \
  -b 8 -e 4M -f 4 -n 50 -w 5 -o "$out"
"$build/bin/mb-report" "$out"
