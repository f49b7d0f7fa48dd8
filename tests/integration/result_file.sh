# The result file of a real run: schema attributes and datasets as DESIGN.md
# lists them, read both with HDF5's own h5dump and with mb-report; an
# interrupted run: result_kept.sh.
. "$(dirname "$0")/../lib.sh"
f=$T/r.h5
expect 0 "mb-coll at 2 ranks" -- mpi 2 "$BIN/mb-coll" --coll allreduce,bcast --sizes 8,64,1024 -n 7 -w 2 -o "$f" || finish
has "# result file: $f" "the table names the file"
rows1=$(grep -c ' pass$' "$T/out")
ls "$f".tmp* >/dev/null 2>&1 && fail "temporary left behind"
h5dump -A "$f" >"$T/attrs" 2>&1 || fail "h5dump cannot read $f"
for a in schema_version benchmark command_line start_time_utc git_commit git_dirty nranks nnodes hostnames \
  mpi_library_version ucx_version hdf5_version papi_version cuda_version device compiler cflags \
  slurm_job_id seed emulation kernel perf_event_paranoid; do
  grep -q "ATTRIBUTE \"$a\"" "$T/attrs" || fail "root attribute $a missing"
done
for g in config metrics environment; do grep -q "GROUP \"$g\"" "$T/attrs" || fail "group /$g missing"; done
grep -q 'ATTRIBUTE "schema_version".*' "$T/attrs" && [ "$(h5dump -a /schema_version "$f" | awk '/\(0\):/ {print $2}')" = 2 ] ||
  fail "schema_version is not 2"
# parameters only in /config: no measurement (a name with a slash) there
h5dump -A -g /config "$f" | grep -q 'ATTRIBUTE ".*/.*"' && fail "/config holds a per-case measurement"
# measurements in /metrics: each case's calls per sample, and mb-report lists them
[ "$(metric "$f" allreduce/float/sum/oop/mpi/64 agg_iters)" -ge 1 ] 2>/dev/null || fail "/metrics/<case>/agg_iters missing"
expect 0 "mb-report --metrics --csv" -- "$BIN/mb-report" --metrics --csv "$f" &&
  has "^$f,bcast/[^,]*/1024,agg_iters,0,[0-9]+$" "a case's agg_iters row"
expect 0 "mb-report --metrics" -- "$BIN/mb-report" --metrics "$f" && has "^allreduce/float/sum/oop/mpi/8 +agg_iters +[0-9]+$" "metrics table row"
expect 2 "mb-report --metrics --compare" -- "$BIN/mb-report" --metrics --compare "$f" "$f" && has "mb-report: --metrics and --compare" "refused"
for a in coll dtype op inplace algo minbytes maxbytes iters warmup check device seed; do
  grep -q "ATTRIBUTE \"$a\"" "$T/attrs" || fail "/config attribute $a missing"
done
h5dump -H "$f" >"$T/head" 2>&1
grep -q 'DATASET "topology"' "$T/head" || fail "/topology missing"
grep -q 'DATASET "summary"' "$T/head" || fail "/summary missing"
# samples are [iterations x ranks]
h5dump -H -d '/samples/allreduce%2Ffloat%2Fsum%2Foop%2Fmpi%2F64' "$f" >"$T/s" 2>&1
grep -q 'DATASPACE  SIMPLE { ( 7, 2 )' "$T/s" || { fail "samples of allreduce 64 B are not [7 x 2]"; cat "$T/s" >&2; }
# --rounds: the same [iterations x ranks] per case, each case printed once, every iteration timed
expect 0 "mb-coll in 3 rounds" -- mpi 2 "$BIN/mb-coll" --coll allreduce,bcast --sizes 8,64,1024 -n 7 -w 2 --rounds 3 -o "$T/rounds.h5" || finish
[ "$(grep -c ' pass$' "$T/out")" = "$rows1" ] || fail "--rounds 3 printed another number of rows than one round ($rows1)"
h5dump -H -d '/samples/allreduce%2Ffloat%2Fsum%2Foop%2Fmpi%2F64' "$T/rounds.h5" >"$T/s" 2>&1
grep -q 'DATASPACE  SIMPLE { ( 7, 2 )' "$T/s" || { fail "--rounds 3: samples of allreduce 64 B are not [7 x 2]"; cat "$T/s" >&2; }
h5dump -y -w 0 -d '/samples/allreduce%2Ffloat%2Fsum%2Foop%2Fmpi%2F64' "$T/rounds.h5" | sed -n '/DATA {/,/}/p' |
  tr -s ', ' '\n\n' | grep -qx '0' && fail "--rounds 3: an iteration was never timed (a zero sample)"
h5dump -d /topology "$f" | grep -q '<topology version=' || fail "/topology holds no hwloc XML"
expect 0 "mb-report" -- "$BIN/mb-report" "$f" && has "^allreduce/float/sum/oop/mpi/64 " "report row"
expect 0 "mb-report --csv" -- "$BIN/mb-report" --csv "$f" && has "allreduce/float/sum/oop/mpi/1024" "csv row"
expect 0 "mb-report --compare" -- "$BIN/mb-report" --compare "$f" "$f" && has "1\.00" "self-ratio 1.00"
expect 2 "mb-report on a missing file" -- "$BIN/mb-report" "$T/none.h5" && has "mb-report: .*none.h5" "names the file"

# Interrupted runs (SIGTERM, SIGINT), a planted PATH.tmp, full disks and
# allocation failures: result_kept.sh.
finish
