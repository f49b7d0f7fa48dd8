# Bad input to every program but mb-coll (tests/cli/bad_input.sh): for
# each a few classes (unknown flag, bad value, out of range, missing file,
# conflicting flags), exit status 2 and exactly one line naming the flag or
# file (printed once at 2 ranks, not per rank), before any work: no
# result file, no data file written, nothing printed beyond that line.
. "$(dirname "$0")/../lib.sh"
fast_abort   # every failing run here ends by itself on every rank
profiles=$(cd "$(dirname "$0")/../../profiles" && pwd)
cd "$T"
mkdir -p aio gnn empty

# bad NP PROGRAM PATTERN ARGS...: exit 2, one line matching PATTERN, no work done
bad() {
  local np=$1 prog=$2 pat=$3; shift 3
  local what="$prog $* (np $np)"
  if [ "$prog" = mb-report ]; then
    expect 2 "$what" -- timeout 60 "$BIN/$prog" "$@"
  elif [ "$np" = 1 ]; then   # a singleton: its output is the program's alone
    expect 2 "$what" -- timeout 60 "$BIN/$prog" -o "$T/never.h5" "$@"
  else
    expect 2 "$what" -- timeout 60 mpirun -np "$np" --oversubscribe --bind-to none "$BIN/$prog" -o "$T/never.h5" "$@"
  fi && has "^$prog: $pat" "$what"
  # the program's lines: mpirun's own notices (between lines of dashes) aside
  local lines
  lines=$(awk '/^--------------------+$/ {m = !m; next} !m' "$T/out" | wc -l)
  [ "$lines" = 1 ] || fail "$what: $lines lines, expected exactly one"
  [ ! -e "$T/never.h5" ] || { fail "$what: a result file was written"; rm -f "$T/never.h5"; }
  local made
  made=$(find aio empty -mindepth 1 | tr '\n' ' ')
  [ -z "$made" ] || { fail "$what: files written: $made"; rm -rf aio/* empty/*; }
}

# every class at 1 rank (a singleton); at 2 ranks, one per program: printed once
for np in 1; do
  # mb-aio: its data files go to --dir aio, which must stay empty
  bad $np mb-aio "unknown option '--frobnicate'" --dir aio --frobnicate
  bad $np mb-aio "--mode: 'nosuch' is not a comma-separated list" --dir aio --mode nosuch
  bad $np mb-aio "--rw: 'both' is not one of read\|write" --dir aio --rw both
  bad $np mb-aio "--qd: '0' is out of range" --dir aio --qd 0
  bad $np mb-aio "--file-size: '1K' is out of range" --dir aio --file-size 1K
  bad $np mb-aio "--sizes: no size between 512 B and 4 MiB" --dir aio --sizes 8M
  bad $np mb-aio "--dir: $T/no/such: No such file or directory" --dir "$T/no/such"
  bad $np mb-aio "--batch: 16 exceeds --qd 8" --dir aio --qd 8 --batch 16
  bad $np mb-aio "unknown option '--app'" --dir aio --app gemm

  # mb-ooc: the apps' input goes to --dir aio, which must stay empty
  bad $np mb-ooc "unknown option '--frobnicate'" --dir aio --frobnicate
  bad $np mb-ooc "--mode: 'inline' is not a comma-separated list" --dir aio --mode inline
  bad $np mb-ooc "--app: 'fft' is not one of gemm\\|sort\\|gather" --dir aio --app fft
  bad $np mb-ooc "--gemm-tile: 500, must be a multiple of 32" --dir aio --app gemm --gemm-tile 500
  bad $np mb-ooc "--sort-keys: 1000, must be a positive multiple of 512" --dir aio --app sort --sort-keys 1000
  bad $np mb-ooc "--io-threads: 'many' is neither a count" --dir aio --io-threads many
  bad $np mb-ooc "--dir: $T/no/such: No such file or directory" --dir "$T/no/such"

  # mb-nn
  bad $np mb-nn "unknown option '--frobnicate'" --frobnicate
  bad $np mb-nn "--model: unknown preset 'gpt-nosuch'" --model gpt-nosuch
  bad $np mb-nn "--model: unknown key 'layrs'" --model layrs=2,hidden=64,heads=4,seq=8,vocab=16
  bad $np mb-nn "--model: hidden=60 is not a multiple of heads=8" --model layers=2,hidden=60,heads=8,seq=8,vocab=16
  bad $np mb-nn "--cases: 'blk' is not a comma-separated list" --cases blk
  bad $np mb-nn "--batch: '0' is out of range" --batch 0
  bad $np mb-nn "--adam-elems: '12Q' is not a size" --adam-elems 12Q

  # mb-gnn: --generate writes into --data empty, which must stay empty
  bad $np mb-gnn "unknown option '--frobnicate'" --data gnn --frobnicate
  bad $np mb-gnn "--system: 'nosuch' is not a comma-separated list" --data gnn --system nosuch
  bad $np mb-gnn "--budget-method: 'magic' is not one of" --data gnn --budget-method magic
  bad $np mb-gnn "--fanout: '0,x' is not a list" --data gnn --fanout 0,x
  bad $np mb-gnn "--feat-dim: '100' is out of range" --generate --data empty --feat-dim 100
  bad $np mb-gnn "--scale: '99' is out of range" --generate --data empty --scale 99
  bad $np mb-gnn "--data: $T/nowhere/graph.meta: No such file or directory" --data "$T/nowhere"
done
bad 2 mb-aio "--batch: 16 exceeds --qd 8" --dir aio --qd 8 --batch 16
bad 2 mb-ooc "runs on one rank, not 2" --dir aio
bad 2 mb-nn "--model: unknown preset 'gpt-nosuch'" --model gpt-nosuch
bad 2 mb-gnn "--feat-dim: '100' is out of range" --generate --data empty --feat-dim 100

# mb-report (no MPI): unknown flag, missing file, not a result file, wrong count
bad 1 mb-report "unknown option '--frobnicate'" --frobnicate
bad 1 mb-report "$T/none.h5: No such file or directory" "$T/none.h5"
echo "not hdf5" >"$T/text.h5"
bad 1 mb-report "$T/text.h5: not an HDF5 file" "$T/text.h5"
bad 1 mb-report "--compare takes exactly 2 files, got 1" --compare "$T/text.h5"
bad 1 mb-report "no input files" --csv

# mb-gnn: a configuration that cannot run under its budget is refused before
# any work (no table, no result file), exit 2, one line naming the flags and
# the bytes against the budget -- not exit 1 after set-up, nor a cgroup's
# OOM kill (exit 137). 64 MiB of features, 2 files.
expect 0 "mb-gnn --generate" -- "$BIN/mb-gnn" --generate --data "$T/g14" --scale 14 --feat-dim 1024 --files 2 -q
gnn_run=(--data "$T/g14" --system hyperion --batch 1024 --cache-host 8M -n 1 -w 0 --epoch-batches 4)
# 16 slots of a ~14 MiB batch beside 64 MiB held cannot fit 96 MiB
bad 1 mb-gnn ".*--slots 16.*--mem-budget" "${gnn_run[@]}" --mem-budget 96M --slots 16
# a budget below what the run holds before its first batch
bad 1 mb-gnn ".*--mem-budget" "${gnn_run[@]}" --mem-budget 48M --slots 16
# a TPC profile with a key missing or malformed (docs/models.md): refused, one line naming file and key
grep -v '^c_ele' "$profiles/hyperion-machine-a.txt" >"$T/no-c_ele.txt"
bad 1 mb-gnn "--profile: $T/no-c_ele.txt: missing key c_ele" "${gnn_run[@]}" --profile "$T/no-c_ele.txt"
sed 's/^n_ssd = 12/n_ssd = 1.5/' "$profiles/hyperion-machine-a.txt" >"$T/frac.txt"
bad 1 mb-gnn "--profile: $T/frac.txt:[0-9]*: n_ssd: must be an integer >= 0: 1.5" "${gnn_run[@]}" --profile "$T/frac.txt"
bad 1 mb-gnn "--model-set: 'train' is not one of" "${gnn_run[@]}" --model-set train

finish
