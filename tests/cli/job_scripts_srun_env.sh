#!/bin/bash
# job_scripts/lib.sh's mb_srun_env: every srun --mpi=pmix launch of the job
# scripts runs Open MPI's MPI_Init without its modex fence (async modex, no
# data collection: docs/slurm.md, "MPI_Init under srun"), a value already
# in the environment kept; tools/vcluster env exports the same settings.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
got=$(env -u OMPI_MCA_pmix_base_async_modex -u OMPI_MCA_pmix_base_collect_data bash -c '
  . "$1/job_scripts/lib.sh" && mb_srun_env &&
  echo "$OMPI_MCA_pmix_base_async_modex $OMPI_MCA_pmix_base_collect_data"' _ "$root")
[ "$got" = "1 0" ] || fail "mb_srun_env set '$got', not async modex 1 and collect data 0"
got=$(OMPI_MCA_pmix_base_async_modex=0 OMPI_MCA_pmix_base_collect_data=1 bash -c '
  . "$1/job_scripts/lib.sh" && mb_srun_env &&
  echo "$OMPI_MCA_pmix_base_async_modex $OMPI_MCA_pmix_base_collect_data"' _ "$root")
[ "$got" = "0 1" ] || fail "mb_srun_env overrode the caller's values (got '$got')"
# both srun launchers of the job scripts call it
grep -A2 'cmd=(srun --mpi=pmix' "$root/job_scripts/lib.sh" | grep -q mb_srun_env || fail "mb_launch's srun branch does not call mb_srun_env"
grep -A1 'launch=(srun --mpi=pmix' "$root/job_scripts/mb-polybench.sbatch" | grep -q mb_srun_env ||
  fail "mb-polybench.sbatch's srun launch does not call mb_srun_env"
# tools/vcluster env needs no cluster for these two lines
for v in OMPI_MCA_pmix_base_async_modex=1 OMPI_MCA_pmix_base_collect_data=0; do
  grep -q "echo \"$v\"" "$root/tools/vcluster" || fail "tools/vcluster's environment lacks $v"
done
finish
