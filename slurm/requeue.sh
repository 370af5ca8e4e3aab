#!/bin/bash
# A run longer than the time limit: it checkpoints when Slurm warns it,
# requeues itself, and the requeued job resumes where it stopped.
#   sbatch slurm/requeue.sh JOB.ini [strata run options...]
# Slurm sends USR1 to this script 300 s before the limit (--signal=B:...,
# choose more than one iteration plus one checkpoint write takes, and keep
# the limit at least 60 s longer: Slurm may send it up to 60 s early; the
# script refuses a warning that leaves a session less).  The script hands
# it to srun, which passes it to every rank.  strata finishes the
# iteration in flight, writes its checkpoint and exits with status 3,
# "checkpointed, please requeue".  The script requeues the job and exits 0;
# the requeued job (same job ID, same files) starts with resume = auto and
# goes on from the checkpoint.  A node failure is covered too: Slurm
# requeues the job itself (--requeue) and the run resumes from its last
# periodic checkpoint (strata's default checkpoint_every_s = 60): less than
# a minute of finished iterations is lost, and the one in flight.
# "Finished" is the log's word, never srun's status alone: srun returns 0
# also when the ranks never started ("task 0 launch failed").  Such a
# launch is tried once more in a new step; a second one ends the job with
# status 1 and the reason.
# Only the warning, the time limit and Slurm's own requeue go on.
# `scancel JOBID` ends the chain: Slurm sends TERM to this script and
# every rank, strata checkpoints and the job is not requeued; `sbatch` the
# same job file again to go on from there.  `scontrol requeue JOBID` (or
# a requeue by Slurm) sends the same TERM with the job already requeued:
# the script says so and leaves it queued.  `scancel --batch --signal=USR1
# JOBID` requeues by hand, as the warning does.
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
job=${1:?usage: sbatch slurm/requeue.sh JOB.ini [strata run options...]}
shift
name=$(basename "$job" .ini)
log=$name.log.h5
max_restarts=20
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
# srun takes --cpus-per-task from sbatch only up to Slurm 21.08; from 22.05
# on it must be told, or each rank is bound to one core under its threads.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}
say() { echo "strata-requeue: $*" >&2; }
say "job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0}) starts $(date -u +%FT%TZ)"

# [D-]HH:MM:SS or MM:SS, as scontrol writes times, in seconds.
seconds() {
  local d=0 t=$1 a b c
  case $t in *-*) d=${t%%-*} t=${t#*-} ;; esac
  IFS=: read -r a b c <<<"$t"
  [ -n "$c" ] || { c=$b b=$a a=0; }
  echo $(((((10#$d * 24) + 10#$a) * 60 + 10#$b) * 60 + 10#$c))
}
# job_field NAME: the job's NAME= in scontrol's one-line record.
job_field() {
  local f
  f=$(scontrol -o show job "$SLURM_JOB_ID" 2>/dev/null) || return 1
  case $f in *" $1="*) ;; *) return 1 ;; esac
  f=${f##* $1=}
  echo "${f%% *}"
}
# scancel and the time limit both send TERM to this shell and every rank
# alike, and show the job as COMPLETING either way: only its run time
# against its limit tells them apart.  Fails on a cancel, and where
# scontrol cannot tell.
at_time_limit() {
  local run limit
  run=$(job_field RunTime) && limit=$(job_field TimeLimit) || return 1
  case $limit in *[0-9]:[0-9]*) ;; *) return 1 ;; esac
  [ "$(seconds "$run")" -ge "$(seconds "$limit")" ]
}
# `scontrol requeue` (by hand, or by this script) sends the same TERM, and
# Slurm counts the restart before it does: a session that sees more
# restarts than it was started with has been requeued already.
requeued_by_slurm() {
  local n
  n=$(job_field Restarts) || return 1
  [ "$n" -gt "${SLURM_RESTART_COUNT:-0}" ] 2>/dev/null
}

# The warning must leave a session time to work: Slurm may send it up to
# 60 s before it is due (sbatch(1)), and one due less than that after the
# start comes as the session starts, in every session, each then doing
# one iteration.  A --signal given on sbatch's command line is not seen
# by the job: the check reads SBATCH_SIGNAL, else this script's own line
# ($0 is Slurm's copy of it).
signal=${SBATCH_SIGNAL:-$(sed -n 's/^#SBATCH --signal[= ]*\([^ ]*\).*/\1/p' "$0" | head -n 1)}
if [ -n "$signal" ] && limit=$(job_field TimeLimit) && [[ $limit == *[0-9]:[0-9]* ]]; then
  warn=60
  [[ $signal == *@* ]] && warn=${signal##*@}
  limit=$(seconds "$limit")
  if [[ $warn =~ ^[0-9]+$ ]] && [ $((limit - warn)) -lt 60 ]; then
    say "--signal=$signal warns $warn s before a time limit of $limit s, and Slurm may send it" \
      "up to 60 s early: every session would be warned as it starts.  Ask for more time" \
      "(--time) or a smaller @ (more than an iteration and a checkpoint write): not run"
    exit 1
  fi
fi

# The warning (B:) reaches only this shell; every rank must hear it.  The
# trap is set first: USR1 ends a shell that has none, and a warning that
# comes before srun has started is passed on as soon as it has.  A TERM
# is a cancel, unless Slurm has requeued the job, a warning came before it
# or the time is up: then the job goes on.  The ranks have had a TERM of
# their own.
step=
requeue=0
cancelled=0
slurm_requeued=0
on_term() {
  if [ "$requeue" -eq 0 ] && [ "$slurm_requeued" -eq 0 ]; then
    if requeued_by_slurm; then slurm_requeued=1
    elif at_time_limit; then requeue=1
    else cancelled=1; fi
  fi
  [ -n "$step" ] && kill -USR1 "$step" 2>/dev/null
}
# When the warning came, for choosing @: Slurm sends it up to 60 s before
# it is due rather than after (slurmctld looks every 30 s); the time is
# taken first, before scontrol answers.
on_warning() {
  local now end
  now=$(date +%s)
  requeue=1
  [ -n "$step" ] && kill -USR1 "$step" 2>/dev/null
  end=$(job_field EndTime) && end=$(date -d "$end" +%s 2>/dev/null) &&
    say "warned $((end - now)) s before the time limit"
}
trap on_warning USR1
trap on_term TERM
stopping() { [ "$requeue" -eq 1 ] || [ "$cancelled" -eq 1 ] || [ "$slurm_requeued" -eq 1 ]; }
# The end of the run is the log's: its summary (the "converged" line)
# exists only once strata has finished.
finished() { strata log "$log" 2>/dev/null | grep -q '^converged  = '; }

# A launch can fail with srun's status 0 ("task 0 launch failed"), e.g. on
# a node left with a step directory of the same job ID by a session that
# died with its node: a second step has other names.
for launch in 1 2; do
  srun --cpu-bind=cores strata run "$job" --set run.log="$log" \
    --set run.checkpoint="$name.ckpt.h5" --set run.resume=auto -v "$@" &
  step=$!
  ! stopping || kill -USR1 "$step" 2>/dev/null
  # A trapped signal ends `wait` early while srun goes on: wait until it is
  # gone, then ask once more for its exit status.
  wait "$step"
  while kill -0 "$step" 2>/dev/null; do wait "$step"; done
  wait "$step"
  status=$?
  step=
  [ "$status" -eq 0 ] && ! finished || break
  # Not run: the checkpoint is as the last session left it.
  status=3
  stopping && break
  if [ "$launch" -eq 1 ]; then
    say "srun returned 0, but $log holds no finished run: the launch failed (srun's error above); trying again"
  else
    say "srun returned 0 twice, but $log holds no finished run: the launch failed (srun's errors above); not requeued"
    exit 1
  fi
done

case $status in
0) say "finished" ;;
3)
  if [ "$slurm_requeued" -eq 1 ] || { [ "$cancelled" -eq 1 ] && requeued_by_slurm; }; then
    say "checkpointed; Slurm has requeued job $SLURM_JOB_ID: it goes on when it starts again"
    exit 0
  fi
  if [ "$cancelled" -eq 1 ]; then
    say "cancelled; checkpointed, not requeued (sbatch the job again to go on)"
    exit 3
  fi
  if [ "${SLURM_RESTART_COUNT:-0}" -ge "$max_restarts" ]; then
    say "checkpointed, but $max_restarts restarts already: not requeued"
    exit 3
  fi
  say "checkpointed; requeueing job $SLURM_JOB_ID"
  # Slurm's TERM for the requeue reaches scontrol too: it ignores it, so
  # that its status is the request's.  The requeued session is recorded as
  # REQUEUED with this script's exit status.
  (trap '' TERM; exec scontrol requeue "$SLURM_JOB_ID") || requeued_by_slurm && exit 0
  say "scontrol requeue failed: not requeued (sbatch the job again to go on)"
  ;;
*) say "strata failed (exit status $status): not requeued" ;;
esac
exit $status
