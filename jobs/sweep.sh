#!/bin/bash
# A job array sweeping an integrand parameter: one task per value, one log
# per task.  Here the width a of the gaussian f4, exp(-a sum (x_i - 1/2)^2).
#   sbatch jobs/sweep.sh JOB.ini [strata run options...]
# Task i integrates with params = ${values[i]} and writes JOB-a<value>.log.h5
# and its result line to JOB-a<value>.json; collect them with
#   cat JOB-a*.json        (one JSON line each)
# Tasks are independent single-GPU (or single-node CPU) runs.
#SBATCH --job-name=strata-sweep
#SBATCH --array=0-7
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=strata-%x-%A_%a.out
set -euo pipefail
job=${1:?usage: sbatch jobs/sweep.sh JOB.ini [strata run options...]}
shift
values=(25 50 100 200 400 625 1000 2000)
a=${values[${SLURM_ARRAY_TASK_ID:?not an array task}]}
name=$(basename "$job" .ini)-a$a
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
srun strata run "$job" --set integral.params="$a" --set run.log="$name.log.h5" \
  --json -q "$@" >"$name.json"
