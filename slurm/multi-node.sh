#!/bin/bash
# Several nodes with 4 GPUs each: one MPI rank per GPU, 16 ranks here.
#   sbatch slurm/multi-node.sh JOB.ini [strata run options...]
# GPU ranks exchange on their devices through NCCL (a few hundred bytes per
# frozen iteration, 2 MB per adapting one at the default 1e6 hypercubes):
# InfiniBand where the nodes expose it, else sockets; NCCL_DEBUG=INFO shows
# which, NCCL_SOCKET_IFNAME picks the interface (doc/slurm.md, "Several GPUs
# and nodes: NCCL").  One rank per GPU: NCCL takes no shared GPU.  The
# job's directory must be on a file system every node sees: rank 0 writes
# the log and checkpoint there.  Any node count works, and the same job and
# seed give the same result to rounding on any number of ranks.
# Resubmitting the same job file continues the run (resume = auto).
# CPU-only nodes: delete the --gpus-per-task line (Slurm refuses a GPU that
# no node has: "Invalid generic resource (gres) specification") and make
# --ntasks-per-node x --cpus-per-task fit a node (`sinfo -N -o '%N %c'`): a
# job larger than every node stays PENDING for ever with the reason
# PartitionConfig.  The ranks are started by srun, never mpirun: on TERM
# (scancel, the time limit) Open MPI's mpirun ends its ranks (TERM, then
# KILL a second later) and returns 1, whether they have checkpointed or not.
#SBATCH --job-name=strata
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=strata-%x-%j.out
set -euo pipefail
job=${1:?usage: sbatch slurm/multi-node.sh JOB.ini [strata run options...]}
shift
name=$(basename "$job" .ini)
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
# srun takes --cpus-per-task from sbatch only up to Slurm 21.08; from 22.05
# on it must be told, or each rank is bound to one core under its threads.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}
# A checkpoint after the first iteration that ends a minute or more after
# the last one (strata's default checkpoint_every_s = 60): a node failure
# costs less than a minute of finished iterations, and the one in flight.
srun --cpu-bind=cores strata run "$job" --set run.log="$name.log.h5" \
  --set run.checkpoint="$name.ckpt.h5" --set run.resume=auto --json -v "$@"
