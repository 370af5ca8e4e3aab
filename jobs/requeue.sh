#!/bin/bash
# A run longer than the time limit: it checkpoints when Slurm warns it,
# requeues itself, and the requeued job resumes where it stopped.
#   sbatch jobs/requeue.sh JOB.ini [strata run options...]
# Slurm sends USR1 to this script 300 s before the limit (--signal=B:...,
# choose more than one iteration plus one checkpoint write takes); the
# script hands it to srun, which passes it to every rank.  strata finishes
# the iteration in flight, writes its checkpoint and exits with status 3,
# "checkpointed, please requeue".  The script requeues the job and exits 0;
# the requeued job (same job ID, same files) starts with resume = auto and
# goes on from the checkpoint.  A node failure is covered too: Slurm
# requeues the job itself (--requeue) and the last periodic checkpoint is
# at most checkpoint_every_s old.
# Only the warning and the time limit requeue.  `scancel JOBID` ends the
# chain: Slurm sends TERM to this script and every rank, strata checkpoints
# and the job is not requeued; `sbatch` the same job file again to go on
# from there.  `scancel --batch --signal=USR1 JOBID` requeues by hand, as
# the warning does.
# CPU-only nodes: delete the --gpus-per-task line (Slurm refuses a job
# asking for a GPU that no node has: "Invalid generic resource (gres)
# specification"), and make --ntasks-per-node x --cpus-per-task fit a node
# (`sinfo -N -o '%N %c'`): a job larger than every node stays PENDING for
# ever with the reason PartitionConfig.
# Under Slurm the ranks are started by srun, never mpirun: on TERM (scancel,
# the time limit) Open MPI's mpirun ends its ranks (TERM, then KILL a second
# later) and returns 1, whether they have checkpointed or not.
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

# [D-]HH:MM:SS or MM:SS, as scontrol writes times, in seconds.
seconds() {
  local d=0 t=$1 a b c
  case $t in *-*) d=${t%%-*} t=${t#*-} ;; esac
  IFS=: read -r a b c <<<"$t"
  [ -n "$c" ] || { c=$b b=$a a=0; }
  echo $(((((10#$d * 24) + 10#$a) * 60 + 10#$b) * 60 + 10#$c))
}
# scancel and the time limit both send TERM to this shell and every rank
# alike, and show the job as COMPLETING either way: only its run time
# against its limit tells them apart.  Fails on a cancel, and where
# scontrol cannot tell.
at_time_limit() {
  local f run limit
  f=$(scontrol -o show job "$SLURM_JOB_ID" 2>/dev/null) || return 1
  run=${f##* RunTime=} limit=${f##* TimeLimit=}
  run=${run%% *} limit=${limit%% *}
  case $limit in *[0-9]:[0-9]*) ;; *) return 1 ;; esac
  [ "$(seconds "$run")" -ge "$(seconds "$limit")" ]
}
# The warning (B:) reaches only this shell; every rank must hear it.  The
# trap is set first: USR1 ends a shell that has none, and a warning that
# comes before srun has started is passed on as soon as it has.  A TERM
# is a cancel, unless a warning came before it or the time is up: then
# the job is requeued.  The ranks have had a TERM of their own.
step=
requeue=0
cancelled=0
on_term() {
  if [ "$requeue" -eq 0 ]; then
    if at_time_limit; then requeue=1; else cancelled=1; fi
  fi
  [ -n "$step" ] && kill -USR1 "$step" 2>/dev/null
}
trap 'requeue=1; [ -n "$step" ] && kill -USR1 "$step" 2>/dev/null' USR1
trap on_term TERM
srun --cpu-bind=cores strata run "$job" --set run.log="$name.log.h5" \
  --set run.checkpoint="$name.ckpt.h5" --set run.checkpoint_every_s=600 \
  --set run.resume=auto -v "$@" &
step=$!
[ "$requeue" -eq 0 ] && [ "$cancelled" -eq 0 ] || kill -USR1 "$step" 2>/dev/null
# A trapped signal ends `wait` early while srun goes on: wait until it is
# gone, then ask once more for its exit status.
wait "$step"
while kill -0 "$step" 2>/dev/null; do wait "$step"; done
wait "$step"
status=$?

case $status in
0) echo "strata-requeue: finished" >&2 ;;
3)
  if [ "$cancelled" -eq 1 ]; then
    echo "strata-requeue: cancelled; checkpointed, not requeued (sbatch the job again to go on)" >&2
    exit 3
  fi
  if [ "${SLURM_RESTART_COUNT:-0}" -ge "$max_restarts" ]; then
    echo "strata-requeue: checkpointed, but $max_restarts restarts already: not requeued" >&2
    exit 3
  fi
  echo "strata-requeue: checkpointed; requeueing job $SLURM_JOB_ID" >&2
  # The requeued session is recorded as REQUEUED with this exit status.
  scontrol requeue "$SLURM_JOB_ID" && exit 0
  echo "strata-requeue: scontrol requeue failed: not requeued (sbatch the job again to go on)" >&2
  ;;
*) echo "strata-requeue: strata failed (exit status $status): not requeued" >&2 ;;
esac
exit $status
