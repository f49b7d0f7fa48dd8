#!/bin/bash
# GPU checks for a machine with a CUDA device (not part of make check, which
# needs no GPU): builds the CUDA variant and runs mb-coll on device buffers
# for every collective and dtype, with validation on, at 1 and 2 ranks; every
# collectives algorithm on device buffers (staged, cuda-ipc, nccl), and
# fault injection for the device algorithms.
# Prints N passed, N failed like the main runner.
set -u
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any OMPI_MCA_rmaps_base_oversubscribe=1
. tests/gpu/lib.sh
gpu_log gpu
gpu_build
out=$(mktemp -d)
for np in 1 2; do
  t "coll-cuda-np$np" mpirun -np $np build-gpu/bin/mb-coll -d cuda --coll all --dtype all --op all \
    --inplace both --sizes 0,1,13,4104,1M -n 3 -w 1 -o "$out/np$np.h5"
done
# every algorithm on device buffers: host algorithms through pinned staging,
# cuda-ipc (and nccl where each rank has its own GPU) on the device buffers
ngpu=$(nvidia-smi -L | grep -c '^GPU')
t coll-cuda-all-np2 mpirun -np 2 build-gpu/bin/mb-coll -d cuda --algo all --coll allreduce,reduce_scatter_block,allgather,bcast,reduce \
  --dtype int8,int32,double --op all --inplace both --sizes 0,1,13,4104,1M -n 2 -w 1 -o "$out/all2.h5"
t cuda-ipc-ran grep -q "algo=cuda-ipc " "/tmp/gpu-coll-cuda-all-np2.log"
for np in 1 $([ "$ngpu" -ge 2 ] && echo 2); do # NCCL refuses two ranks on one GPU
  t "nccl-np$np" mpirun -np $np build-gpu/bin/mb-coll -d cuda --algo nccl --coll allreduce,reduce_scatter_block,allgather,bcast,reduce \
    --dtype all --op all --inplace both --sizes 0,1,13,4104,1M -n 2 -w 1 -o "$out/nccl$np.h5"
  t "nccl-ran-np$np" grep -q "algo=nccl " "/tmp/gpu-nccl-np$np.log"
done
for a in cuda-ipc nccl; do # the check catches a corrupted result of the device algorithms
  np=2; [ $a = nccl ] && [ "$ngpu" -lt 2 ] && np=1
  t "fault-$a" bash -c "! MB_FAULT_INJECT=corrupt mpirun -np $np build-gpu/bin/mb-coll -d cuda --algo $a --coll allreduce,allgather --sizes 4K -n 2 -w 1 -o $out/fault-$a.h5"
done
# the check still catches a corrupted device result
t fault-cuda bash -c "! MB_FAULT_INJECT=corrupt mpirun -np 2 build-gpu/bin/mb-coll -d cuda --sizes 4K -n 2 -w 1 -o $out/fault.h5"
# host runs of the CUDA build still work on a GPU machine
t host-run mpirun -np 2 build-gpu/bin/mb-coll --sizes 4K -n 2 -o "$out/host.h5"
t report build-gpu/bin/mb-report "$out/np2.h5"
gpu_done
