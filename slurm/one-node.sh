#!/bin/bash
# One node with 4 GPUs: one MPI rank per GPU.  Copy and edit, then
#   sbatch slurm/one-node.sh examples/gaussian6.ini [strata run options...]
# Each rank is given one GPU of its own and takes it (backend = auto picks
# CUDA where strata was built with it and a GPU is visible; with several
# visible, the one numbered by its node-local rank).  On a CPU-only node
# drop the GPU line (Slurm refuses a GPU that no node has: "Invalid generic
# resource (gres) specification") and make --ntasks-per-node x
# --cpus-per-task fit a node (`sinfo -N -o '%N %c'`): a job larger than every
# node stays PENDING for ever with the reason PartitionConfig.
# The log (JOB-JOBID.log.h5, one per job: submitting the same job file
# again starts a run of its own) is written as the run goes:
# `strata log JOB-JOBID.log.h5`.  The ranks are started by srun, never
# mpirun: on TERM Open MPI's mpirun ends its ranks (TERM, then KILL a second
# later) and returns 1, where srun passes the signal on and reports the
# ranks' status (3 after a checkpoint, with --set run.checkpoint=...).
#SBATCH --job-name=strata
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=strata-%x-%j.out
set -euo pipefail
job=${1:?usage: sbatch slurm/one-node.sh JOB.ini [strata run options...]}
shift
name=$(basename "$job" .ini)
# OpenMP threads of a rank stay on its own cores (the host part of a GPU
# run, all of a CPU run).
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
# srun takes --cpus-per-task from sbatch only up to Slurm 21.08; from 22.05
# on it must be told, or each rank is bound to one core under its threads.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}
srun --cpu-bind=cores strata run "$job" --set run.log="$name-$SLURM_JOB_ID.log.h5" --json -v "$@"
