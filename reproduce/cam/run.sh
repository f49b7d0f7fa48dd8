#!/bin/bash
# The CAM study, end to end: measure with mb-aio (throughput against block
# size and against the number of striped files) and mb-ooc (out-of-core
# GEMM, sort and gather in every mode with the phases alone), draw the
# figure, write compare.md.
#   reproduce/cam/run.sh [--scale tiny|small|reference|full] [--slurm] [--dir DIR] [--out DIR]
#     --scale small   random reads 4 KiB..1 MiB x4 and 1..4 files; gemm n=2048 tile=512; sort 8 Mi keys
#                     (64 MiB) with a 16 MiB budget; gather 4096 x 8 rows of 256 Ki; 3 iterations
#                     (about 3 minutes here)
#     --scale full    512 B..4 MiB x2, 1..16 files; gemm n=4096 tile=1024; sort 64 Mi keys (512 MiB)
#                     with 64 MiB; gather 2 Mi rows (1 GiB); 5 iterations
#     --scale reference  small's measurements, for reproduce/cam/reference/ (committed): refused
#                     (exit 2) unless the git tree is clean and build/ was built from HEAD
#     --scale tiny    seconds; for the tests
#     --slurm         each measurement is one job of job_scripts/mb-aio.sbatch or mb-ooc.sbatch (sbatch --wait)
#     --dir DIR       the data files (default $MB_AIO_DIR, else $BUILD/aio-data; BUILD=build)
#     --out DIR       figures, compare.md and results (default $BUILD/reproduce/cam)
# Local runs use the same job scripts, which run the program directly outside Slurm.
set -euo pipefail
source "$(dirname "$0")/../opts.sh"
study_opts run.sh "scale=small slurm=0 dir= out=" "$0" "$@"
# Per scale: the I/O sweep's flags, the file counts, and each app's flags.
case $scale in
tiny)
  iters=2 warmup=1 files_list="1 2"
  io=(--sizes 4K,64K --file-size 16M --stripe 64K --ios 256 --qd 32 --batch 8)
  files_io=(--sizes 4K --file-size 8M --stripe 64K --ios 512 --qd 32 --batch 8)
  gemm=(--gemm-n 256 --gemm-tile 64)
  sort=(--sort-keys 131072 --mem-budget 256K)
  gather=(--gather-rows 8192 --gather-batch 256 --gather-batches 4) ;;
small|reference)
  iters=3 warmup=1 files_list="1 2 4"
  io=(-b 4K -e 1M -f 4 --file-size 256M --stripe 1M --ios 512 --qd 64 --batch 16)
  files_io=(--sizes 4K --file-size 64M --stripe 64K --ios 8192 --qd 64 --batch 16)
  gemm=(--gemm-n 2048 --gemm-tile 512)
  sort=(--sort-keys 8388608 --mem-budget 16M)
  gather=(--gather-rows 262144 --gather-batch 4096 --gather-batches 8) ;;
full)
  iters=5 warmup=1 files_list="1 2 4 8 16"
  io=(-b 512 -e 4M -f 2 --file-size 1G --stripe 1M --ios 1024 --qd 64 --batch 16)
  files_io=(--sizes 4K --file-size 256M --stripe 64K --ios 32768 --qd 128 --batch 16)
  gemm=(--gemm-n 4096 --gemm-tile 1024)
  sort=(--sort-keys 67108864 --mem-budget 64M)
  gather=(--gather-rows 2097152 --gather-batch 8192 --gather-batches 16) ;;
*) echo "run.sh: --scale must be tiny, small, reference or full, not '$scale'" >&2; exit 2 ;;
esac
# the reference run's results are committed: from a clean tree and a binary built from it
[ "$scale" != reference ] || reproduce/clean-tree.sh "--scale reference" || exit 2
out=${out:-$root/${BUILD:-build}/reproduce/cam}
export MB_AIO_DIR=${dir:-${MB_AIO_DIR:-$root/${BUILD:-build}/aio-data}}
export MB_RESULTS=$out/results MB_ITERS=$iters MB_WARMUP=$warmup
py=$(reproduce/python.sh)
mkdir -p "$MB_RESULTS" "$MB_AIO_DIR"
runs=()   # one invocation each: a name, the program (mb-aio: I/O, mb-ooc: the apps), its flags
runs+=("io-blocksize mb-aio --files 2 --mode posix,sync,async ${io[*]}")
for f in $files_list; do runs+=("io-files$f mb-aio --files $f --mode posix,sync,async ${files_io[*]}"); done
runs+=("gemm mb-ooc --app gemm --files 2 --stripe 1M --mode posix,sync,async ${gemm[*]}")
runs+=("sort mb-ooc --app sort --files 2 --stripe 1M --mode posix,sync,async ${sort[*]}")
runs+=("gather mb-ooc --app gather --files 2 --stripe 64K --mode posix,sync,async ${gather[*]}")
t0=$SECONDS
data=()
for r in "${runs[@]}"; do
  read -r name prog flags <<<"$r"
  log=$out/$name.log
  # shellcheck disable=SC2086 # flags are words
  if [ $slurm = 1 ]; then
    sbatch --wait --quiet --job-name="$prog-$name" --output="$log" --export=ALL "job_scripts/$prog.sbatch" $flags ||
      { echo "run.sh: job $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  else
    bash "job_scripts/$prog.sbatch" $flags >"$log" 2>&1 ||
      { echo "run.sh: $name failed; see $log" >&2; tail -5 "$log" >&2; exit 1; }
  fi
  f=$(sed -n 's/^# result file: //p' "$log" | tail -1)
  [ -f "$f" ] || { echo "run.sh: no result file named in $log" >&2; exit 1; }
  data+=("$f")
done
echo "run.sh: measured in $((SECONDS - t0)) s: ${data[*]}" >&2
"$py" -m reproduce.cam.plot -o "$out/cam" "${data[@]}"
"$py" -m reproduce.cam.compare -o "$out/compare.md" "${data[@]}"
