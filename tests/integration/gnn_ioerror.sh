#!/bin/bash
# An I/O error fails mb-gnn whatever --check says: with --no-check, a
# feature file truncated after the first epoch (and an EIO injected by the
# engine's fault hook at setup) end the run with exit 1 and one line naming
# the file; the failed epoch leaves no sample and no epoch record. A fallback
# of the engine (O_DIRECT refused) is recorded in the result file.
. "$(dirname "$0")/../lib.sh"
G=$BIN/mb-gnn
D=$T/data
expect 0 "generate" -- "$G" --generate --data "$D" --scale 11 --feat-dim 128 --classes 4 --train-frac 0.1 \
  --files 2 --stripe 16K -o "$T/gen.h5" || finish
run=(--batch 64 --fanout 5,5 --hidden 16 -w 0 --cache-host 64K --eval-nodes 100 --profile-batches 2 --no-check)

# the engine's EIO on a read of the setup's rate measurement (once silently dropped)
MB_AIO_INJECT=eio:3000 expect 1 "EIO at setup, --no-check" -- "$G" --data "$D" "${run[@]}" -n 1 --system hyperion \
  -o "$T/eio.h5" && has "^mb-gnn: hyperion/.*$D/data\.[01]: reading the features of node [0-9]+: Input/output error" \
  "names the file and the error"

# a feature file truncated once the first epoch is done: a later epoch fails
# (the run would last for hours otherwise: 2 minutes is a failure)
C=$T/trunc; cp -r "$D" "$C"
timeout 120 "$G" --data "$C" "${run[@]}" -n 100000 --system hyperion -o "$T/tr.h5" >"$T/run.out" 2>&1 &
pid=$!
for _ in $(seq 600); do # until the first epoch's line (at most a minute)
  grep -q "^# epoch 0 hyperion" "$T/run.out" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
grep -q "^# epoch 0 hyperion" "$T/run.out" || fail "the first epoch ran"
truncate -s $(($(stat -c %s "$C/data.1") / 2)) "$C/data.1"
wait $pid
rc=$?
cp "$T/run.out" "$T/out"
[ "$rc" = 1 ] || { fail "truncated file, --no-check: exit $rc, expected 1"; tail -n 15 "$T/out" >&2; }
has "^mb-gnn: hyperion/.*: epoch [0-9]+.*: .*$C/data\.1: reading the (features|neighbours) of node [0-9]+: " \
  "the line names the epoch and the file"
last=$(sed -n 's/^# epoch \([0-9]*\) hyperion: .*/\1/p' "$T/out" | tail -n 1)
failed=$(sed -n 's/^mb-gnn: hyperion\/[^:]*: epoch \([0-9]*\).*/\1/p' "$T/out" | head -n 1)
[ -n "$failed" ] && [ "$failed" -gt "${last:--1}" ] || fail "epoch $failed failed yet was reported (last line: epoch $last)"
[ -f "$T/tr.h5" ] || fail "the result file is written"
h5ls "$T/tr.h5/summary" 2>&1 | grep -Eq 'Dataset \{0(\}|/)' || fail "the failed case has no samples"
[ -z "$(sysmetric "$T/tr.h5" hyperion time_s "$failed")" ] || fail "the failed epoch $failed has a time"
sysmetric "$T/tr.h5" hyperion error | grep -q "data\.1" || fail "the result file records the error"

# a fallback is recorded, not silent: O_DIRECT refused (the engine's hook)
MB_AIO_INJECT=nodirect expect 0 "O_DIRECT refused" -- "$G" --data "$D" "${run[@]}" -n 1 --system hyperion -o "$T/fb.h5" &&
  { sysmetric "$T/fb.h5" hyperion engine_fallback | grep -q "O_DIRECT refused" || fail "the result records the fallback"; }
finish
