#!/bin/bash
# One node with 4 GPUs: one MPI rank per GPU.  Copy and edit, then
#   sbatch jobs/one-node.sh examples/gaussian6.ini [strata run options...]
# Each rank takes the GPU of its node-local rank (backend = auto picks CUDA
# where strata was built with it and a GPU is visible).  On a CPU-only node
# drop the two GPU lines: the 4 ranks then share the node's cores.
# The log (JOB.log.h5) is written as the run goes: `strata log JOB.log.h5`.
#SBATCH --job-name=strata
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --gpu-bind=single:1
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=strata-%x-%j.out
set -euo pipefail
job=${1:?usage: sbatch jobs/one-node.sh JOB.ini [strata run options...]}
shift
name=$(basename "$job" .ini)
# OpenMP threads of a rank stay on its own cores (the host part of a GPU
# run, all of a CPU run).
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
srun --cpu-bind=cores strata run "$job" --set run.log="$name.log.h5" --json -v "$@"
