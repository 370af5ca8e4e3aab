#!/bin/bash
# A run longer than the time limit: it checkpoints when Slurm warns it,
# requeues itself, and the requeued job resumes where it stopped.
#   sbatch jobs/requeue.sh JOB.ini [strata run options...]
# Slurm sends USR1 to this script 300 s before the limit (--signal=B:...,
# choose more than one iteration plus one checkpoint write takes); the
# script hands it to srun, which passes it to every rank.  strata finishes
# the iteration in flight, writes its checkpoint and exits with status 3,
# "checkpointed, please requeue".  The requeued job (same job ID, same
# files) starts with resume = auto and goes on from the checkpoint.  A node
# failure is covered too: Slurm requeues the job itself (--requeue) and the
# last periodic checkpoint is at most checkpoint_every_s old.
#SBATCH --job-name=strata-long
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --signal=B:USR1@300
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=strata-%x-%j.out
set -uo pipefail
job=${1:?usage: sbatch jobs/requeue.sh JOB.ini [strata run options...]}
shift
name=$(basename "$job" .ini)
max_restarts=20
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
# srun takes --cpus-per-task from sbatch only up to Slurm 21.08; from 22.05
# on it must be told, or each rank is bound to one core under its threads.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}
echo "strata-requeue: job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0}) starts $(date -u +%FT%TZ)" >&2

# Slurm signals only this shell (B:); every rank must hear it.  The trap
# is set first: USR1 ends a shell that has none, and a warning that comes
# before srun has started is passed on as soon as it has.
step=
warned=0
trap 'warned=1; [ -n "$step" ] && kill -USR1 "$step" 2>/dev/null' USR1 TERM
srun strata run "$job" --set run.log="$name.log.h5" --set run.checkpoint="$name.ckpt.h5" \
  --set run.checkpoint_every_s=600 --set run.resume=auto -v "$@" &
step=$!
[ "$warned" -eq 0 ] || kill -USR1 "$step" 2>/dev/null
# A trapped signal ends `wait` early while srun goes on: wait until it is
# gone, then ask once more for its exit status.
wait "$step"
while kill -0 "$step" 2>/dev/null; do wait "$step"; done
wait "$step"
status=$?

case $status in
0) echo "strata-requeue: finished" >&2 ;;
3)
  if [ "${SLURM_RESTART_COUNT:-0}" -ge "$max_restarts" ]; then
    echo "strata-requeue: checkpointed, but $max_restarts restarts already: not requeued" >&2
    exit 3
  fi
  echo "strata-requeue: checkpointed; requeueing job $SLURM_JOB_ID" >&2
  scontrol requeue "$SLURM_JOB_ID"
  ;;
*) echo "strata-requeue: strata failed (exit status $status): not requeued" >&2 ;;
esac
exit $status
