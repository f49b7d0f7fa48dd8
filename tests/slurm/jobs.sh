# The job scripts on a real Slurm: a private single-node cluster
# (tests/slurm/cluster.inc), job_scripts/mb-coll.sbatch submitted with
# sbatch --wait at tiny sizes (defaults, an override on the sbatch command
# line, an injected fault that must fail the job), mb-gnn.sbatch and
# mb-aio.sbatch, then job_scripts/sweep.sh
# (a job array, --wait, --collect) and reproduce/collectives/run.sh --slurm.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cluster.inc"
cluster_start   # returns only with the node idle; else exits 77 (no Slurm, not root) or 1
export MB_RESULTS=$T/results MB_ITERS=3 MB_WARMUP=1
unset MB_FAULT_INJECT

# 1. the script's defaults, parameters from the environment
MB_COLLS=allreduce,bcast MB_SIZES=8,1024 submit "mb-coll.sbatch" 0 job_scripts/mb-coll.sbatch
f=$MB_RESULTS/$job/mb-coll.h5
has '\+ srun --mpi=pmix' "launched with srun --mpi=pmix"
has 'bcast .*algo=mpi' "ran the collectives of MB_COLLS"
if [ -f "$f" ]; then
  [ "$(root_attr "$f" slurm_job_id)" = "$job" ] || fail "slurm_job_id is '$(root_attr "$f" slurm_job_id)', not $job"
  [ "$(root_attr "$f" slurm_job_name)" = mb-coll ] || fail "slurm_job_name is '$(root_attr "$f" slurm_job_name)'"
  [ "$(root_attr "$f" job_script)" = job_scripts/mb-coll.sbatch ] || fail "job_script is '$(root_attr "$f" job_script)'"
  [ -n "$(root_attr "$f" slurm_nodelist)" ] || fail "slurm_nodelist empty"
  expect 0 "mb-report reads the job's result" -- "$BIN/mb-report" "$f" &&
    has '^allreduce/float/sum/oop/mpi/1024 ' "allreduce 1 KiB row" && has '^bcast/float/-/oop/mpi/8 ' "bcast row" &&
    has 'nranks +2' "2 ranks (the script's --ntasks-per-node=2)"
else
  fail "no result file $f"
fi

# 2. sbatch options override the #SBATCH defaults; arguments reach mb-coll
submit "mb-coll.sbatch with overrides" 0 --job-name=override --ntasks-per-node=1 \
  job_scripts/mb-coll.sbatch --sizes 64 --dtype double
f=$MB_RESULTS/$job/mb-coll.h5
has 'allreduce +dtype=double' "extra argument --dtype double"
if [ -f "$f" ]; then
  [ "$(root_attr "$f" slurm_job_name)" = override ] || fail "--job-name override not recorded"
  expect 0 "mb-report" -- "$BIN/mb-report" "$f" && has 'nranks +1' "--ntasks-per-node=1 gives 1 rank"
else
  fail "no result file $f"
fi

# 3. a wrong result fails the job, and sbatch --wait says so
MB_FAULT_INJECT=corrupt MB_SIZES=1024 submit "mb-coll.sbatch with an injected fault" 1 job_scripts/mb-coll.sbatch
has 'fail' "the job's table marks the case failed"
state=$(scontrol show job -o "$job" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$state" = FAILED ] || fail "faulty job ended '$state', not FAILED"

# 4. the other job scripts: mb-gnn (generates its dataset in the job, then
# trains) and mb-aio, with their provenance
MB_GNN_SCALE=10 MB_GNN_DIM=128 MB_GNN_SYSTEMS=inmem,hyperion,nopipe MB_GNN_BATCH=64 MB_ITERS=1 \
  MB_GNN_DATA=$T/gnn-data submit "mb-gnn.sbatch" 0 job_scripts/mb-gnn.sbatch --epoch-batches 4
f=$MB_RESULTS/$job/mb-gnn.h5
has '\+ srun --mpi=pmix' "mb-gnn launched with srun --mpi=pmix"
has 'generating' "mb-gnn.sbatch generated the dataset"
[ -f "$T/gnn-data/graph.meta" ] || fail "no dataset at MB_GNN_DATA"
if [ -f "$f" ]; then
  [ "$(root_attr "$f" slurm_job_id)" = "$job" ] || fail "mb-gnn: slurm_job_id is '$(root_attr "$f" slurm_job_id)', not $job"
  [ "$(root_attr "$f" job_script)" = job_scripts/mb-gnn.sbatch ] || fail "mb-gnn: job_script is '$(root_attr "$f" job_script)'"
  expect 0 "mb-report reads mb-gnn's result" -- "$BIN/mb-report" "$f" && has 'hyperion' "the hyperion row"
else
  fail "no result file $f"
fi
MB_AIO_DIR=$T/aio-data submit "mb-aio.sbatch" 0 job_scripts/mb-aio.sbatch --sizes 4K --mode async --file-size 8M
f=$MB_RESULTS/$job/mb-aio.h5
if [ -f "$f" ]; then
  [ "$(root_attr "$f" slurm_job_id)" = "$job" ] || fail "mb-aio: slurm_job_id is '$(root_attr "$f" slurm_job_id)', not $job"
  [ "$(root_attr "$f" job_script)" = job_scripts/mb-aio.sbatch ] || fail "mb-aio: job_script is '$(root_attr "$f" job_script)'"
else
  fail "no result file $f"
fi

# 5. the sweep driver: a job array of two size groups, waited for, collected
py=$(reproduce/python.sh 2>/dev/null) || py=""
collect=()
[ -n "$py" ] && collect=(--collect "$T/sweep.h5")
expect 0 "sweep.sh" -- timeout 300 job_scripts/sweep.sh --nodes 1 --sizes "8:64 1K,4K" --wait "${collect[@]}"
arr=$(grep -E '^[0-9]+$' "$T/out" | head -n1)
if [ -n "$arr" ]; then
  [ -f "$MB_RESULTS/sweep-$arr.txt" ] || fail "no sweep manifest"
  for t in 0 1; do
    [ -f "$MB_RESULTS/${arr}_$t/mb-coll.h5" ] || fail "no result of array task ${arr}_$t"
    [ -f "$MB_RESULTS/mb-coll-n1-${arr}_$t.out" ] || fail "no output file of array task ${arr}_$t beside the results"
  done
  [ -e "slurm-${arr}_0.out" ] && fail "sweep.sh left slurm-${arr}_0.out in the submit folder"
  [ -n "$py" ] && "$py" - "$T/sweep.h5" <<'PY' || fail "the sweep's collection is wrong"
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    s = f["summary"][()]
    sizes = sorted(int(b) for b in s["bytes"])
    jobs = sorted({j.decode() for j in s["slurm_job_id"]})
    assert f.attrs["nruns"] == 2 and len(f["runs"]) == 2, "two runs"
    assert sizes == [8, 16, 32, 64, 1024, 4096], sizes
    assert len(jobs) == 2, jobs
print("collection ok:", len(s), "rows from jobs", jobs)
PY
  has "all 1 job array\(s\) completed" "sweep reports completion"
else
  fail "sweep.sh printed no job id"
fi
# a failing array task makes the sweep fail
MB_FAULT_INJECT=corrupt expect 1 "sweep.sh with a failing task" -- timeout 300 job_scripts/sweep.sh --nodes 1 --sizes 64 --wait
has "ended FAILED" "sweep names the failed task"
expect 2 "sweep.sh bad --nodes" -- job_scripts/sweep.sh --nodes 0
has "--nodes: '0'" "names the flag"

# 6. the study through Slurm
if [ -n "$py" ]; then
  expect 0 "reproduce/collectives/run.sh --slurm" -- timeout 300 reproduce/collectives/run.sh --slurm --scale tiny --out "$T/repro"
  for x in collectives.png collectives.pdf compare.md; do [ -s "$T/repro/$x" ] || fail "run.sh --slurm wrote no $x"; done
else
  echo "no Python with h5py and matplotlib: collector and run.sh --slurm not exercised"
fi
finish
