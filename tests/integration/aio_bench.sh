# mb-aio: every mode verifies its data, writes are read back, a corrupted
# block is caught, the fallback engine is chosen by MB_AIO_ENGINE=posix and
# recorded, bad input exits 2, fio agrees when installed.
. "$(dirname "$0")/../lib.sh"
D="$T/data"; mkdir -p "$D"
A=(--dir "$D" --file-size 4M --stripe 64K -n 2 -w 1 --ios 64 --qd 16 --batch 4)
expect 0 "all modes, random read, 2 files" -- "$BIN/mb-aio" "${A[@]}" --files 2 --prepare --mode posix,bounce,inline,mmap,sync,async --sizes 512,4K,64K -o "$T/r.h5" &&
  has "async/random/read/65536" "async case ran"
expect 0 "sequential writes, read back" -- "$BIN/mb-aio" "${A[@]}" --files 2 --rw write --pattern seq --mode posix,sync,async --sizes 4K,1M -o "$T/w.h5"
expect 0 "3 files, adaptive threads, unaligned-free reads after writes" -- "$BIN/mb-aio" "${A[@]}" --files 3 --io-threads 0 --prepare --mode sync,async --sizes 8K -o "$T/r3.h5"
MB_FAULT_INJECT=corrupt expect 1 "corrupted block detected (engine)" -- "$BIN/mb-aio" "${A[@]}" --files 3 --mode async --sizes 4K -o "$T/c.h5" &&
  has "check failed: async/random/read/4096.*differs from the pattern" "names the block"
MB_FAULT_INJECT=corrupt expect 1 "corrupted block detected (posix)" -- "$BIN/mb-aio" "${A[@]}" --files 3 --mode posix --sizes 4K -o "$T/c2.h5"
MB_AIO_ENGINE=posix expect 0 "fallback engine" -- "$BIN/mb-aio" "${A[@]}" --files 3 --mode sync,async --sizes 4K -o "$T/f.h5"
[ "$(runmetric "$T/f.h5" aio_engine)" = '"posix"' ] || fail "result file records the fallback engine: $(runmetric "$T/f.h5" aio_engine)"
runmetric "$T/f.h5" aio_fallback | grep -q 'MB_AIO_ENGINE=posix' || fail "result file does not record why: $(runmetric "$T/f.h5" aio_fallback)"
# O_DIRECT refused: buffered I/O with a warning, recorded. tmpfs accepts
# O_DIRECT since Linux 6.6, so the refusal is injected (MB_AIO_INJECT=nodirect)
# on a tmpfs folder when there is one.
S=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo "$T")/mb-aio-test.XXXXXX")
MB_AIO_INJECT=nodirect expect 0 "O_DIRECT refused: buffered fallback" -- "$BIN/mb-aio" "${A[@]}" --dir "$S" --mode sync --sizes 4K -o "$T/nodirect.h5" &&
  has "O_DIRECT refused" "warns"
runmetric "$T/nodirect.h5" aio_fallback | grep -q 'O_DIRECT refused' || fail "result file does not record the O_DIRECT fallback"
[ "$(runmetric "$T/nodirect.h5" aio_direct)" = 0 ] || fail "result file does not record aio_direct 0: $(runmetric "$T/nodirect.h5" aio_direct)"
rm -rf "$S"
MB_AIO_INJECT=eio:3 expect 1 "injected EIO reaches the waiter" -- "$BIN/mb-aio" "${A[@]}" --files 3 --mode sync --sizes 4K -o "$T/e.h5" &&
  has "engine: request at [0-9]+: Input/output error" "names the failed request"
# adaptive I/O threads: 8 files -> CAM's 2..4, the counts chosen are recorded
expect 0 "adaptive I/O threads" -- "$BIN/mb-aio" "${A[@]}" --files 8 --file-size 1M --stripe 64K --io-threads adaptive --mode sync,async --sizes 4K --ios 512 -o "$T/ad.h5"
h=$(metric "$T/ad.h5" sync/random/read/4096 io_threads_chosen)
[[ $h =~ ^\"[234]x[0-9]+( [234]x[0-9]+)*\"$ ]] || fail "adaptive: thread counts recorded in 2..4 (got '$h')"
[ "$(runmetric "$T/ad.h5" aio_io_threads_adaptive)" = 1 ] || fail "adaptive: aio_io_threads_adaptive is 1"
[ "$(runmetric "$T/ad.h5" aio_io_threads)" = 4 ] || fail "adaptive: 4 I/O threads started for 8 files"
# the engine never has more than --qd requests in flight (its cap)
m=$(metric "$T/ad.h5" async/random/read/4096 inflight_mean)
awk -v m="$m" 'BEGIN { exit !(m > 0 && m <= 16) }' || fail "in-flight mean $m outside (0, qd=16]"
expect 2 "bad --io-threads" -- "$BIN/mb-aio" "${A[@]}" --io-threads many --sizes 4K -o "$T/b3.h5" && has "^mb-aio: --io-threads" "names the flag"
expect 2 "size below 512" -- "$BIN/mb-aio" "${A[@]}" --sizes 100 -o "$T/b1.h5" && has "^mb-aio: --sizes" "names the flag"
expect 2 "sizes below 512 from -b/-e" -- "$BIN/mb-aio" "${A[@]}" -b 8 -e 256 -o "$T/b4.h5" && has "^mb-aio: -b/--minbytes" "names the flags"
expect 2 "batch above qd" -- "$BIN/mb-aio" "${A[@]}" --batch 32 --sizes 4K -o "$T/b2.h5" && has "^mb-aio: --batch" "names the flag"
[ ! -e "$T/b1.h5" ] || fail "bad input wrote a file"
if command -v fio >/dev/null; then
  expect 0 "fio side by side" -- "$BIN/mb-aio" "${A[@]}" --files 1 --vs-fio --mode async --sizes 4K -o "$T/fio.h5" && has "# fio random read" "fio case" &&
    has "engine \(async\) / fio throughput at 4096 B: [0-9.]+" "prints the ratio"
  # fio's data is not checked by movebench: n/a, never pass
  has "^ +262144 +64 .* n/a$" "the fio row's check is n/a"
  has "^ +262144 +64 .* pass$" "the engine's row passes"
  # fio starts from an argument vector: a folder with spaces and shell syntax is only a name
  F="$T/a b;touch $T/pwned;\$(touch $T/pwned2)"
  mkdir -p "$F"
  expect 0 "fio in a folder with spaces and ';'" -- "$BIN/mb-aio" "${A[@]}" --dir "$F" --files 2 --mode fio --sizes 4K -o "$T/fio2.h5" &&
    has "^ +262144 +64 .* n/a$" "fio ran there"
  [ ! -e "$T/pwned" ] && [ ! -e "$T/pwned2" ] || fail "--dir went through a shell"
  [ -s "$F/mb-aio.1" ] || fail "the data files are in the folder named"
fi
finish
