#!/bin/bash
# A corrupted topology never crashes mb-gnn: neighbour ids beyond the
# graph and offsets that decrease, written at seeded random positions of
# the data file, give one line naming the file (exit 2 at open, or exit 1
# naming the node mid-run), never a signal. The systems that skip the
# topology checksum (hyperion, nocache, mmap alone) are the ones at risk.
# CI runs this test under the ASan/UBSan build too.
. "$(dirname "$0")/../lib.sh"
G=$BIN/mb-gnn
D=$T/data
expect 0 "generate" -- "$G" --generate --data "$D" --scale 10 --feat-dim 128 --classes 4 --train-frac 0.2 \
  --files 1 --stripe 16K -o "$T/gen.h5" || finish
n=1024
off_neigh=16384                                          # round_up(8 (n + 1), stripe): one file, so file offsets
m=$(od -An -t u8 -j $((8 * n)) -N 8 "$D/data.0" | tr -d ' ') # offsets[n] = m
[ "${m:-0}" -gt 0 ] || { fail "read m from the offsets"; finish; }
run=(--batch 64 --fanout 5,5 --hidden 16 -n 2 -w 0 --cache-host 64K --eval-nodes 100 --profile-batches 2)

# exit 1 or 2 (no signal: 128+), one line naming the file
expect_refused() { # description, pattern, command...
  local what=$1 pat=$2; shift 2
  "$@" >"$T/out" 2>&1
  local rc=$?
  if [ "$rc" != 1 ] && [ "$rc" != 2 ]; then
    fail "$what: exit $rc, expected 1 or 2"; sed 's/^/  > /' "$T/out" | tail -n 15 >&2
    return 1
  fi
  has "$pat" "$what names the file"
  grep -q "ERROR: AddressSanitizer\|runtime error:" "$T/out" && fail "$what: a sanitizer report"
  return 0
}

# put_u32 FILE OFFSET VALUE / put_u64: little-endian, in place
put_u32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($3 & 255)) $(($3 >> 8 & 255)) $(($3 >> 16 & 255)) $(($3 >> 24 & 255)))" |
  dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
put_u64() { put_u32 "$1" "$2" $(($3 & 0xffffffff)); put_u32 "$1" $(($2 + 4)) $(($3 >> 32)); }

for seed in 1 2 3; do
  RANDOM=$seed
  # neighbour ids out of range at 256 random positions of the lists
  C=$T/ids$seed; cp -r "$D" "$C"
  for i in $(seq 256); do
    pos=$(((RANDOM << 15 | RANDOM) % m))
    put_u32 "$C/data.0" $((off_neigh + 4 * pos)) $((n + (RANDOM << 15 | RANDOM)))
  done
  for sys in hyperion nocache mmap; do
    expect_refused "seed $seed: neighbour ids beyond the graph, $sys" \
      "^mb-gnn: .*$C/data\.0: neighbour [0-9]+ of node [0-9]+ is [0-9]+, not one of the $n nodes" \
      "$G" --data "$C" "${run[@]}" --system $sys -o "$T/ids$seed$sys.h5"
  done
  expect_refused "seed $seed: neighbour ids beyond the graph, --no-check" "$C/data\.0: neighbour" \
    "$G" --data "$C" "${run[@]}" --system hyperion --no-check -o "$T/ids${seed}nc.h5"
  # (inmem verifies the topology checksum)
  expect_refused "seed $seed: inmem" "$C/data\.0: topology checksum" "$G" --data "$C" "${run[@]}" --system inmem \
    -o "$T/ids${seed}mem.h5"

  # offsets that decrease: a random node's offset beyond m
  O=$T/off$seed; cp -r "$D" "$O"
  v=$((1 + RANDOM % (n - 1)))
  put_u64 "$O/data.0" $((8 * v)) $((m + 1 + RANDOM))
  expect 2 "seed $seed: offsets decrease at node $((v))" -- "$G" --data "$O" "${run[@]}" --system hyperion \
    -o "$T/off$seed.h5" && has "^mb-gnn: --data: $O/data\.0: CSR offsets decrease at node $v" "names the file and node"
  [ ! -e "$T/off$seed.h5" ] || fail "seed $seed: a dataset refused at open wrote a result"
done
finish
