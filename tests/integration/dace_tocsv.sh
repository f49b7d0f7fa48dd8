#!/bin/bash
# reproduce/dace/tocsv.py: mb-polybench's results in DaCe's CSV schema (no
# header; benchmark, framework, processes, sizes, time; a row per call)
# read back give the medians of /summary (tests/integration/dace_tocsv.py).
. "$(dirname "$0")/../lib.sh"
py=$(reproduce/python.sh 2>&1) || { echo "SKIP: $py"; exit 77; }
"$py" -c 'import h5py, numpy' 2>/dev/null || { echo "SKIP: $py lacks h5py or numpy"; exit 77; }
expect 0 "mb-polybench np 2" -- timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$BIN/mb-polybench" --scale-down 100 \
  -n 10 -w 1 --kernel gemm,k2mm,jacobi_1d,gemver -o "$T/pb.h5"
expect 0 "tocsv round trip" -- env PYTHONPATH="$PWD" "$py" tests/integration/dace_tocsv.py "$T/pb.h5" "$T/pb.csv" 10 || cat "$T/out" >&2
has "rows checked" "tocsv round trip"
exit $((failures > 0))
