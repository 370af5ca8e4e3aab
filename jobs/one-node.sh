#!/bin/bash
# One node, one MPI rank per core group, CPU backend.  Copy and edit:
#   sbatch jobs/one-node.sh examples/gaussian6.ini
#SBATCH --job-name=strata
#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=strata-%j.out
set -euo pipefail
job=${1:?usage: sbatch jobs/one-node.sh JOB.ini}
# Each rank runs OpenMP threads on its own cores.
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
srun --cpu-bind=cores strata run "$job" --json -v
