# mb-aio's data files: every write carries its own offset's data (requests
# beyond the buffer slots too), a seeded fault in a write or a read is
# caught wherever it lands, prepared files carry a layout/seed trailer and a
# "complete" mark, a damaged, unfinished or foreign file is written again
# (never blamed on the read path) or refused (exit 2), never followed
# through a link; a refused O_DIRECT in the posix modes is recorded.
. "$(dirname "$0")/../lib.sh"
M=$BIN/mb-aio
D="$T/data"
A=(--dir "$D" -n 2 -w 1 --qd 16 --batch 4)

# 100 sequential 1 MiB writes over 64 slots into a 6 MiB file: requests
# 64..99 reuse slots that held other offsets' data (the old code wrote
# request 36's slot data at offset 0, and its check failed)
expect 0 "writes beyond the slots" -- "$M" "${A[@]}" --file-size 6M --stripe 1M --ios 100 --files 1 --rw write \
  --pattern seq --mode posix,bounce,inline,mmap,sync,async --sizes 1M -o "$T/w.h5"
[ "$(runmetric "$T/w.h5" aio_data_after)" = '"complete: every write was read back and verified"' ] ||
  fail "verified writes leave the files complete: $(runmetric "$T/w.h5" aio_data_after)"
expect 0 "random writes beyond the slots, 2 files" -- "$M" "${A[@]}" --file-size 4M --stripe 64K --ios 3000 --files 2 \
  --rw write --mode posix,sync,async --sizes 64K -o "$T/w2.h5"
expect 0 "the files are reused after verified writes" -- "$M" "${A[@]}" --file-size 4M --stripe 64K --ios 64 --files 2 \
  --mode sync --sizes 4K -o "$T/r0.h5"
[[ $(runmetric "$T/r0.h5" aio_data) == '"reused: '* ]] || fail "reused after verified writes: $(runmetric "$T/r0.h5" aio_data)"

# a fault in a written block at a seeded position: caught by the read-back,
# at more than one request over the seeds, in every mode
reqs=""
for seed in 1 2 3 4; do
  for mode in posix sync async; do
    MB_FAULT_INJECT=corrupt expect 1 "write fault, seed $seed, $mode" -- "$M" "${A[@]}" --seed $seed --file-size 4M \
      --stripe 64K --ios 200 --files 2 --rw write --mode $mode --sizes 4K -o "$T/wf$seed$mode.h5" || continue
    has "check failed: $mode/random/write/4096: .*request [0-9]+ at offset [0-9]+: byte [0-9]+ .* after the write" \
      "seed $seed, $mode: the read-back names the block"
    reqs="$reqs $(sed -n 's/.*request \([0-9]*\) at offset.*/\1/p' "$T/out" | head -n 1)"
  done
  # the failed write run left the files marked: the next run writes them again
  [[ $(runmetric "$T/wf${seed}async.h5" aio_data_after) == '"marked writing'* ]] ||
    fail "a failed write run leaves the files marked writing"
done
[ "$(echo $reqs | tr ' ' '\n' | sort -u | wc -l)" -ge 3 ] || fail "write faults land on varied requests: $reqs"
expect 0 "the files are written again after a failed write run" -- "$M" "${A[@]}" --seed 4 --file-size 4M --stripe 64K \
  --ios 200 --files 2 --mode posix,async --sizes 4K -o "$T/r1.h5" && has "^# data files written \(.*trailer state 'writing'" \
  "says why the files are written again"

# a fault in a read block: seeded, varied request and byte
reqs=""
for seed in 1 2 3 4 5; do
  MB_FAULT_INJECT=corrupt expect 1 "read fault, seed $seed" -- "$M" "${A[@]}" --seed $seed --file-size 4M --stripe 64K \
    --ios 200 --files 2 --mode async --sizes 4K -o "$T/rf$seed.h5" &&
    has "check failed: async/random/read/4096: .*differs from the pattern" "seed $seed: the read check names the block"
  reqs="$reqs $(sed -n 's/.*request \([0-9]*\) at offset [0-9]*: byte \([0-9]*\).*/\1:\2/p' "$T/out" | head -n 1)"
done 
[ "$(echo $reqs | tr ' ' '\n' | sort -u | wc -l)" -ge 3 ] || fail "read faults land on varied requests and bytes: $reqs"

# damage spread over a prepared file (every 16th 512-byte block): noticed
# by the reuse check, the file written again, the read run passes
printf 'X%.0s' $(seq 512) >"$T/junk"
for k in $(seq 0 16 8191); do dd if="$T/junk" of="$D/mb-aio.0" bs=512 seek=$k conv=notrunc status=none; done
expect 0 "a damaged file is written again" -- "$M" "${A[@]}" --seed 5 --file-size 4M --stripe 64K --ios 200 --files 2 \
  --mode posix --sizes 4K -o "$T/r2.h5" && has "^# data files written \(.*damaged" "names the damage"
# a file prepared for another layout (stripe) is written again
expect 0 "another layout is written again" -- "$M" "${A[@]}" --seed 5 --file-size 4M --stripe 128K --ios 64 --files 2 \
  --mode posix --sizes 4K -o "$T/r3.h5" && has "^# data files written \(.*another layout" "names the layout"
# a preparation killed outright (its trailer still says writing) is written again
K="$T/killed"
"$M" "${A[@]}" --dir "$K" --file-size 512M --stripe 1M --ios 64 --mode posix --sizes 4K -o "$T/k.h5" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do
  [ -f "$K/mb-aio.0" ] && tail -c 4096 "$K/mb-aio.0" | grep -aq movebench-aio-volume && break
  sleep 0.05
done
kill -KILL $pid; wait $pid 2>/dev/null
expect 0 "a preparation cut short is written again" -- "$M" "${A[@]}" --dir "$K" --file-size 4M --stripe 1M --ios 64 \
  --mode posix --sizes 4K -o "$T/r4.h5" && has "^# data files written" "written again"
expect 0 "the same layout is then reused" -- "$M" "${A[@]}" --dir "$K" --file-size 4M --stripe 1M --ios 64 \
  --mode posix --sizes 4K -o "$T/r5.h5"
[[ $(runmetric "$T/r5.h5" aio_data) == '"reused: '* ]] || fail "reused once complete: $(runmetric "$T/r5.h5" aio_data)"

# a planted symbolic link and a foreign file: refused before any work,
# their targets untouched
P="$T/planted"; mkdir -p "$P"
echo precious >"$T/victim"
ln -s "$T/victim" "$P/mb-aio.0"
expect 2 "a planted symbolic link" -- "$M" "${A[@]}" --dir "$P" --file-size 4M --ios 64 --mode posix --sizes 4K \
  -o "$T/s.h5" && has "^mb-aio: --dir: $P/mb-aio.0: a symbolic link \(refused\)" "names the link"
[ "$(cat "$T/victim")" = precious ] || fail "the link's target was written"
[ ! -e "$T/s.h5" ] || fail "a refused run wrote a result file"
rm "$P/mb-aio.0"; echo mine >"$P/mb-aio.0"
expect 2 "a foreign file" -- "$M" "${A[@]}" --dir "$P" --file-size 4M --ios 64 --mode posix --sizes 4K --prepare \
  -o "$T/s2.h5" && has "^mb-aio: --dir: $P/mb-aio.0: exists and is not a movebench data file" "names the file"
[ "$(cat "$P/mb-aio.0")" = mine ] || fail "the foreign file was written"
if command -v fio >/dev/null; then
  rm "$P/mb-aio.0"; ln -s "$T/victim" "$P/mb-aio.0.fio"
  expect 2 "a link where fio writes" -- "$M" "${A[@]}" --dir "$P" --file-size 4M --ios 64 --rw write --mode fio \
    --sizes 4K -o "$T/s3.h5" && has "^mb-aio: --dir: $P/mb-aio.0.fio: not a regular file" "names fio's file"
  [ "$(cat "$T/victim")" = precious ] || fail "fio's link target was written"
fi

# O_DIRECT refused in the posix modes: buffered, recorded
expect 0 "posix: direct I/O recorded" -- "$M" "${A[@]}" --seed 5 --file-size 4M --stripe 128K --ios 64 --files 2 \
  --mode posix --sizes 4K -o "$T/d1.h5"
[ "$(runmetric "$T/d1.h5" posix_direct)" = 1 ] || fail "posix_direct 1 without a refusal"
MB_AIO_INJECT=nodirect expect 0 "posix: O_DIRECT refused" -- "$M" "${A[@]}" --seed 5 --file-size 4M --stripe 128K \
  --ios 64 --files 2 --mode posix,bounce --sizes 4K -o "$T/d2.h5" && has "O_DIRECT refused" "warns"
[ "$(runmetric "$T/d2.h5" posix_direct)" = 0 ] || fail "posix_direct 0 after a refusal"
[[ $(runmetric "$T/d2.h5" posix_fallback) == *"O_DIRECT refused"* ]] || fail "posix_fallback names the refusal"
finish
