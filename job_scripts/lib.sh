# Shared by every job_scripts/*.sbatch (sourced after the script has found
# the movebench tree): where the programs and results are, the result
# folder of this job, the MPI environment, and the launcher.
#
# Environment (all optional):
#   MB_HOME      the movebench tree (found from $SLURM_SUBMIT_DIR or the script's path)
#   MB_BIN       the programs (default $MB_HOME/build/bin)
#   MB_RESULTS   where job folders go (default $MB_HOME/results)
#   MB_NP        ranks when there is no srun (mpirun fallback; default $SLURM_NTASKS, else 2)
#   MB_LAUNCHER  srun|mpirun to force one (default: srun inside a Slurm job when srun exists)

# mb_job_init SCRIPT PROGRAM: sets MB_JOB_SCRIPT (recorded in the result
# file as job_script), MB_JOB_ID, MB_OUTDIR (created: $MB_RESULTS/<job id>)
# and MB_PROGRAM (the binary); exits 2 with one line when something is missing.
mb_job_init() {
  export MB_JOB_SCRIPT=$1
  local prog=$2
  MB_BIN=${MB_BIN:-$MB_HOME/build/bin}
  MB_RESULTS=${MB_RESULTS:-$MB_HOME/results}
  MB_PROGRAM=$MB_BIN/$prog
  if [ ! -x "$MB_PROGRAM" ]; then
    echo "$MB_JOB_SCRIPT: $MB_PROGRAM not found; run 'make' in $MB_HOME first (or set MB_BIN)" >&2
    exit 2
  fi
  # results/<job id>/: an array task is <array job id>_<task id>, as squeue shows it.
  if [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    MB_JOB_ID=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
  elif [ -n "${SLURM_JOB_ID:-}" ]; then
    MB_JOB_ID=$SLURM_JOB_ID
  else
    MB_JOB_ID=local-$(date -u +%Y%m%dT%H%M%SZ)-$$
  fi
  MB_OUTDIR=$MB_RESULTS/$MB_JOB_ID
  mkdir -p "$MB_OUTDIR" || { echo "$MB_JOB_SCRIPT: cannot create $MB_OUTDIR" >&2; exit 2; }

  # What Open MPI needs as root and on hosts with shared memory only; a
  # value the user already set is kept.
  if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_pml_ucx_tls=${OMPI_MCA_pml_ucx_tls:-any}
  export OMPI_MCA_pml_ucx_devices=${OMPI_MCA_pml_ucx_devices:-any}
}

# mb_array_sizes: in an array task with MB_SIZE_GROUPS set (space-separated
# groups, each MIN:MAX or an explicit comma list), sets MB_SIZES or
# MB_MINBYTES/MB_MAXBYTES from the group of this task.
mb_array_sizes() {
  [ -n "${MB_SIZE_GROUPS:-}" ] || return 0
  local groups task=${SLURM_ARRAY_TASK_ID:-0}
  read -r -a groups <<<"$MB_SIZE_GROUPS"
  if [ "$task" -ge "${#groups[@]}" ]; then
    echo "$MB_JOB_SCRIPT: array task $task but MB_SIZE_GROUPS has ${#groups[@]} groups" >&2
    exit 2
  fi
  local g=${groups[$task]}
  case $g in
  *:*) MB_MINBYTES=${g%%:*} MB_MAXBYTES=${g#*:}; unset MB_SIZES ;;
  *) MB_SIZES=$g ;;
  esac
}

# mb_launch PROGRAM ARGS...: srun --mpi=pmix inside a Slurm job, else mpirun.
mb_launch() {
  local how=${MB_LAUNCHER:-}
  if [ -z "$how" ]; then
    if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null 2>&1; then how=srun; else how=mpirun; fi
  fi
  local cmd
  case $how in
  srun)
    # one rank that dies (a signal, a non-zero exit) ends the step: its peers
    # would otherwise wait for it until the job's time limit
    cmd=(srun --mpi=pmix --kill-on-bad-exit=1)
    # Slurm 22.05 does not pass sbatch's --cpus-per-task on to srun.
    [ -n "${SLURM_CPUS_PER_TASK:-}" ] && cmd+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
    ;;
  mpirun)
    local np=${MB_NP:-${SLURM_NTASKS:-2}}
    cmd=(mpirun -np "$np")
    # the PUs we may run on: GNU nproc answers OMP_NUM_THREADS when it is set
    [ "$np" -gt "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" ] && cmd+=(--oversubscribe)
    ;;
  *) echo "$MB_JOB_SCRIPT: MB_LAUNCHER must be srun or mpirun, not '$how'" >&2; exit 2 ;;
  esac
  echo "+ ${cmd[*]} $*" >&2
  "${cmd[@]}" "$@"
}

# mb_storage_job SCRIPT PROGRAM ARGS...: one storage program (mb-aio, mb-ooc)
# on one node, one rank: --dir is MB_AIO_DIR (default build/aio-data), -n/-w
# MB_ITERS (3) and MB_WARMUP (1), ARGS passed on; the result is
# $MB_OUTDIR/PROGRAM.h5. Exits with the program's status.
mb_storage_job() {
  local script=$1 prog=$2 name
  shift 2
  name=$(basename "$script")
  mb_job_init "$script" "$prog"
  local dir=${MB_AIO_DIR:-$MB_HOME/build/aio-data}
  mkdir -p "$dir" || { echo "$name: cannot create MB_AIO_DIR $dir" >&2; exit 2; }
  local out=$MB_OUTDIR/$prog.h5
  echo "$name: job $MB_JOB_ID on ${SLURM_JOB_NODELIST:-$(hostname)}, data $dir, result $out" >&2
  # One rank; the engine's I/O threads and the compute share its cores. Outside
  # Slurm the program runs by itself (an MPI singleton): mpirun -np 1 would bind
  # it, I/O threads included, to one core.
  local args=(--dir "$dir" -n "${MB_ITERS:-3}" -w "${MB_WARMUP:-1}" -o "$out" "$@") rc=0
  if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null 2>&1; then
    export MB_NP=1
    mb_launch "$MB_PROGRAM" "${args[@]}" || rc=$?
  else
    echo "+ $MB_PROGRAM ${args[*]}" >&2
    "$MB_PROGRAM" "${args[@]}" || rc=$?
  fi
  echo "$name: exit $rc" >&2
  exit "$rc"
}
