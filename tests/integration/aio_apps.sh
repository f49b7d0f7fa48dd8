# mb-ooc: out-of-core GEMM, external sort and row gather verified in
# every mode (posix, sync, async and the phases alone), the overlap bound and
# ratio in the result file, the fallback engine, a corrupted block on storage
# caught by each app, an injected EIO reaching the app, bad input (exit 2).
. "$(dirname "$0")/../lib.sh"
D="$T/data"; mkdir -p "$D"
A=(--dir "$D" --files 3 --stripe 64K -n 1 -w 1)
GEMM=(--app gemm --gemm-n 256 --gemm-tile 64)
SORT=(--app sort --sort-keys 66048 --mem-budget 256K)   # 9 runs, the last one short
GATHER=(--app gather --gather-rows 5000 --gather-dim 100 --gather-batch 256 --gather-batches 4)

expect 0 "gemm, every mode" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode posix,sync,async -o "$T/g.h5" &&
  has "gemm: compute alone .* overlap bound max\(\) .* the bound" "prints the overlap bound"
for c in compute io posix sync async; do
  h5dump -d /summary "$T/g.h5" 2>/dev/null | grep -q "\"gemm/$c\"" || fail "gemm/$c case missing"
done
[[ $(metric "$T/g.h5" gemm/async overlap_ratio) =~ ^[0-9.e+-]+$ ]] || fail "overlap_ratio of gemm/async not recorded: $(metric "$T/g.h5" gemm/async overlap_ratio)"
[[ $(metric "$T/g.h5" gemm/async overlap_bound_s) =~ ^[0-9.e+-]+$ ]] || fail "overlap_bound_s of gemm/async not recorded"
[[ $(metric "$T/g.h5" gemm/async overlap_ratio_min) =~ ^[0-9.e+-]+$ ]] || fail "overlap_ratio_min of gemm/async not recorded"
[[ $(runmetric "$T/g.h5" aio_engine) =~ ^\"(io_uring|posix)\"$ ]] || fail "engine not recorded: $(runmetric "$T/g.h5" aio_engine)"
"$BIN/mb-report" --csv "$T/g.h5" >"$T/out" 2>&1; has 'gemm/async' "mb-report reads it"
expect 0 "gemm above the full-check size (sampled entries and the sums), 2 steps ahead" -- "$BIN/mb-ooc" "${A[@]}" --app gemm --gemm-n 1088 --gemm-tile 544 --prefetch 2 --mode async -n 1 -w 0 -o "$T/g2.h5"
expect 0 "sort, every mode" -- "$BIN/mb-ooc" "${A[@]}" "${SORT[@]}" --mode posix,sync,async -o "$T/s.h5" &&
  has "sort: compute alone" "sort overlap line"
expect 0 "gather, every mode" -- "$BIN/mb-ooc" "${A[@]}" "${GATHER[@]}" --mode posix,sync,async -o "$T/ga.h5"
expect 0 "gather, uniform rows, one file, 3 batches ahead" -- "$BIN/mb-ooc" "${A[@]}" "${GATHER[@]}" --files 1 --zipf 0 --prefetch 3 --mode async -o "$T/ga2.h5"
MB_AIO_ENGINE=posix expect 0 "sort on the fallback engine" -- "$BIN/mb-ooc" "${A[@]}" "${SORT[@]}" --mode async -o "$T/sf.h5"
runmetric "$T/sf.h5" aio_fallback | grep -q 'MB_AIO_ENGINE=posix' || fail "fallback not recorded: $(runmetric "$T/sf.h5" aio_fallback)"

# A bit flipped in the input on storage must fail every app, in each I/O path.
MB_FAULT_INJECT=corrupt expect 1 "gemm: corrupted tile (async)" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode async -o "$T/c1.h5" &&
  has "check failed: gemm/async: .*(row|column) [0-9]+ of C sums to" "names the wrong row of C"
MB_FAULT_INJECT=corrupt expect 1 "gemm: corrupted tile (posix)" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode posix -o "$T/c2.h5"
MB_FAULT_INJECT=corrupt expect 1 "sort: corrupted key (async)" -- "$BIN/mb-ooc" "${A[@]}" "${SORT[@]}" --mode async -o "$T/c3.h5" &&
  has "check failed: sort/async: .*permutation checksum" "permutation checksum differs"
MB_FAULT_INJECT=corrupt expect 1 "sort: corrupted key (sync)" -- "$BIN/mb-ooc" "${A[@]}" "${SORT[@]}" --mode sync -o "$T/c4.h5"
MB_FAULT_INJECT=corrupt expect 1 "gather: corrupted row (async)" -- "$BIN/mb-ooc" "${A[@]}" "${GATHER[@]}" --mode async -o "$T/c5.h5" &&
  has "check failed: gather/async: .*batch [0-9]+, position [0-9]+: row [0-9]+ column 0" "names the row"
MB_FAULT_INJECT=corrupt expect 1 "gather: corrupted row (posix)" -- "$BIN/mb-ooc" "${A[@]}" "${GATHER[@]}" --mode posix -o "$T/c6.h5"
MB_AIO_INJECT=eio:7 expect 1 "gemm: injected EIO reaches the app" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode sync -o "$T/e1.h5" &&
  has "reading tiles: Input/output error at volume offset" "names the failed read"
MB_AIO_INJECT=eio:40 expect 1 "sort: injected EIO reaches the app" -- "$BIN/mb-ooc" "${A[@]}" "${SORT[@]}" --mode async -o "$T/e2.h5" &&
  has "Input/output error at volume offset" "names the failed request"

# Every allocation of the apps is checked: MB_AIO_INJECT=nomem:N fails the
# N-th one of the process. Each N up to the run that needs no failure must
# end with exit 1 and a line saying out of memory, never a crash or a pass.
for app in gemm sort gather; do
  case $app in gemm) X=("${GEMM[@]}") ;; sort) X=("${SORT[@]}") ;; gather) X=("${GATHER[@]}") ;; esac
  hit=0
  for n in $(seq 1 200); do
    MB_AIO_INJECT=nomem:$n "$BIN/mb-ooc" "${A[@]}" -w 0 "${X[@]}" --mode async -o "$T/nm-$app-$n.h5" >"$T/out" 2>&1
    rc=$?
    [ "$rc" = 0 ] && break
    hit=$((hit + 1))
    if [ "$rc" != 1 ] || ! grep -Eq "out of memory|no memory" "$T/out"; then
      fail "$app: allocation $n failing: exit $rc, expected 1 with 'out of memory'"; sed 's/^/  > /' "$T/out" | tail -n 5 >&2
    fi
  done
  [ "$rc" = 0 ] || fail "$app: still failing at allocation 200"
  [ "$hit" -ge 20 ] || fail "$app: only $hit allocations could be made to fail (MB_AIO_INJECT=nomem not reaching them)"
done

# O_DIRECT: used and recorded; a file system that refuses it gives buffered
# reads, recorded with the reason (MB_AIO_INJECT=nodirect stands for one).
expect 0 "gemm, posix reads" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode posix -o "$T/d1.h5"
[ "$(runmetric "$T/d1.h5" posix_direct)" = 1 ] || fail "posix_direct: $(runmetric "$T/d1.h5" posix_direct), expected 1"
[ "$(runmetric "$T/d1.h5" posix_fallback)" = '"none"' ] || fail "posix_fallback: $(runmetric "$T/d1.h5" posix_fallback)"
MB_AIO_INJECT=nodirect expect 0 "gemm, O_DIRECT refused" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --mode posix,async -o "$T/d2.h5" &&
  has "O_DIRECT refused" "says O_DIRECT was refused"
[ "$(runmetric "$T/d2.h5" posix_direct)" = 0 ] || fail "refused: posix_direct $(runmetric "$T/d2.h5" posix_direct), expected 0"
runmetric "$T/d2.h5" posix_fallback | grep -q "O_DIRECT refused" || fail "refused: posix_fallback $(runmetric "$T/d2.h5" posix_fallback)"
[ "$(runmetric "$T/d2.h5" aio_direct)" = 0 ] || fail "refused: aio_direct $(runmetric "$T/d2.h5" aio_direct), expected 0"
expect 0 "gemm, --buffered" -- "$BIN/mb-ooc" "${A[@]}" "${GEMM[@]}" --buffered --mode posix -o "$T/d3.h5"
[ "$(runmetric "$T/d3.h5" posix_direct)" = 0 ] && [ "$(runmetric "$T/d3.h5" posix_fallback)" = '"none"' ] ||
  fail "--buffered: posix_direct $(runmetric "$T/d3.h5" posix_direct) posix_fallback $(runmetric "$T/d3.h5" posix_fallback)"

# A link planted where an app's data file goes is refused before any work
# (root would otherwise truncate and overwrite its target).
P="$T/planted"; mkdir -p "$P"; echo keep >"$T/victim"
ln -s "$T/victim" "$P/mb-ooc-gemm.1"
expect 2 "planted symlink" -- "$BIN/mb-ooc" --dir "$P" --files 3 --stripe 64K -n 1 -w 0 "${GEMM[@]}" --mode posix -o "$T/p1.h5" &&
  has "^mb-ooc: --dir: .*mb-ooc-gemm.1: a symbolic link, refused" "names the link"
[ "$(cat "$T/victim")" = keep ] || fail "the link's target was written"
[ ! -e "$T/p1.h5" ] || fail "planted symlink: a result file was written"
rm -f "$P/mb-ooc-gemm.1"; mkfifo "$P/mb-ooc-gemm.0"
expect 2 "a fifo in place of a data file" -- "$BIN/mb-ooc" --dir "$P" --files 3 --stripe 64K -n 1 -w 0 "${GEMM[@]}" --mode posix -o "$T/p2.h5" &&
  has "mb-ooc-gemm.0: not a regular file, refused" "names the fifo"

# mb-aio's own data files (the I/O cases) rewritten when the layout changes:
# 2 files with a 1 MiB stripe, then 1 file with 64 KiB (same first 1 MiB).
L="$T/layout"; mkdir -p "$L"
expect 0 "I/O files, 2 x 16M, stripe 1M" -- "$BIN/mb-aio" --dir "$L" --files 2 --file-size 16M --stripe 1M --sizes 4K --ios 256 -n 1 -w 0 --mode async -o "$T/l1.h5"
expect 0 "I/O files, 1 x 8M, stripe 64K: rewritten, verified" -- "$BIN/mb-aio" --dir "$L" --files 1 --file-size 8M --stripe 64K --sizes 4K --ios 2048 -n 1 -w 0 --mode async -o "$T/l2.h5"

# Bad input: one line naming the flag, exit 2, no result file.
expect 2 "tile not a multiple of 32" -- "$BIN/mb-ooc" "${A[@]}" --app gemm --gemm-tile 48 -o "$T/b1.h5" && has "^mb-ooc: --gemm-tile" "names --gemm-tile"
expect 2 "n not a multiple of the tile" -- "$BIN/mb-ooc" "${A[@]}" --app gemm --gemm-n 300 --gemm-tile 64 -o "$T/b2.h5" && has "^mb-ooc: --gemm-n" "names --gemm-n"
expect 2 "keys not a multiple of 512" -- "$BIN/mb-ooc" "${A[@]}" --app sort --sort-keys 1000 -o "$T/b3.h5" && has "^mb-ooc: --sort-keys" "names --sort-keys"
expect 2 "budget holds every key" -- "$BIN/mb-ooc" "${A[@]}" --app sort --sort-keys 65536 --mem-budget 1M -o "$T/b4.h5" && has "^mb-ooc: --mem-budget" "names --mem-budget"
expect 2 "budget too small to merge" -- "$BIN/mb-ooc" "${A[@]}" --app sort --sort-keys 1048576 --mem-budget 64K -o "$T/b5.h5" && has "^mb-ooc: --mem-budget.*runs" "says why"
expect 2 "a mode the apps lack" -- "$BIN/mb-ooc" "${A[@]}" --app gemm --mode inline -o "$T/b6.h5" && has "^mb-ooc: --mode: 'inline'" "names --mode"
expect 2 "negative zipf" -- "$BIN/mb-ooc" "${A[@]}" --app gather --zipf -1 -o "$T/b7.h5" && has "zipf" "names --zipf"
expect 2 "prefetch out of range" -- "$BIN/mb-ooc" "${A[@]}" --app gemm --prefetch 9 -o "$T/b9.h5" && has "prefetch" "names --prefetch"
expect 2 "unknown app" -- "$BIN/mb-ooc" "${A[@]}" --app fft -o "$T/b8.h5" && has "app" "names --app"
for i in 1 2 3 4 5 6 7 8 9; do [ ! -e "$T/b$i.h5" ] || fail "bad input $i wrote a result file"; done
finish
