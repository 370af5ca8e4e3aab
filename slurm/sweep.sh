#!/bin/bash
# A job array sweeping an integrand parameter, every task starting from one
# trained map.  Here the width a of the gaussian f4, exp(-a sum (x_i - 1/2)^2).
#   sbatch slurm/sweep.sh JOB.ini [strata run options...]
# This job trains the map once, at a = $train (JOB-train.ckpt.h5; a later
# submission finds it and trains no more), then submits itself as an array
# of one task per value.  Task i integrates with params = ${values[i]},
# starting from the trained map ([vegas] map) with a few adapting iterations
# of its own, and writes JOB-a<value>.log.h5 and its result line to
# JOB-a<value>.json (through a temporary file, renamed once the run has
# succeeded); collect them with
#   cat JOB-a*.json        (one JSON line each, with its params and the map)
# A task whose JSON exists already is done: it is not run again, and its
# files are left as they are, so a second submission runs only the tasks
# without a result.  To run the tasks alone, from a map trained before:
#   sbatch --array=0-7 --output='strata-%x-%A_%a.out' slurm/sweep.sh JOB.ini
# Tasks are independent single-GPU (or CPU) runs.  CPU-only nodes: delete
# the --gpus-per-task line (Slurm refuses a GPU that no node has: "Invalid
# generic resource (gres) specification") and keep --cpus-per-task within a
# node's cores (`sinfo -N -o '%N %c'`): a larger job stays PENDING for ever
# with the reason PartitionConfig.
#SBATCH --job-name=strata-sweep
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=strata-%x-%j.out
set -euo pipefail
job=${1:?usage: sbatch slurm/sweep.sh JOB.ini [strata run options...]}
shift
values=(25 50 100 200 400 625 1000 2000)
train=50
# Trained on one of the wider gaussians: its map covers the narrower ones,
# which a few adapting iterations of their own sharpen; a map of a narrow
# one starves a wide one's tails.  bench/sweep.sh measures these settings
# against training every task from the uniform map (doc/benchmarks.md).
task_adapt=(--set vegas.adapt_iters=6 --set vegas.skip=2)
base=$(basename "$job" .ini)
map=$base-train.ckpt.h5
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1} OMP_PROC_BIND=close OMP_PLACES=cores
# srun takes --cpus-per-task from sbatch only up to Slurm 21.08; from 22.05
# on it must be told, or each rank is bound to one core under its threads.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  # resume = auto: a finished training is found and not repeated.
  srun --cpu-bind=cores strata run "$job" --set integral.params="$train" --set run.checkpoint="$map" \
    --set run.log="$base-train.log.h5" --set run.resume=auto -q "$@"
  # $0 is Slurm's copy of this script, which sbatch reads while this job
  # runs.  The array gets the #SBATCH lines again; of what the first sbatch
  # command line said, only the CPUs per task and the partition carry over
  # (put the rest in #SBATCH lines).
  opts=(--array=0-$((${#values[@]} - 1)) --output="strata-%x-%A_%a.out")
  [ -z "${SLURM_CPUS_PER_TASK:-}" ] || opts+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
  [ -z "${SLURM_JOB_PARTITION:-}" ] || opts+=(--partition="$SLURM_JOB_PARTITION")
  array=$(sbatch --parsable "${opts[@]}" "$0" "$job" "$@")
  echo "strata-sweep: submitted the array as job ${array%%;*} (${#values[@]} tasks from $map)"
  exit 0
fi

a=${values[$SLURM_ARRAY_TASK_ID]}
name=$base-a$a
if [ -e "$name.json" ]; then
  echo "strata-sweep: $name.json exists: task $SLURM_ARRAY_TASK_ID (a = $a) is done, not run again"
  exit 0
fi
# The result goes to a file of this job's own and takes its name only once
# the run has succeeded: a failed or killed task leaves no JSON behind, and
# an existing one is never written to (ln refuses an existing name; then
# this task's result stays in its own file).
part=$name.json.$SLURM_JOB_ID.part
trap 'rm -f "$part"' EXIT
srun --cpu-bind=cores strata run "$job" --set integral.params="$a" --set vegas.map="$map" \
  "${task_adapt[@]}" --set run.log="$name.log.h5" --json -q "$@" >"$part"
if ! ln "$part" "$name.json"; then
  trap - EXIT
  echo "strata-sweep: $name.json appeared while task $SLURM_ARRAY_TASK_ID ran: its result is in $part" >&2
  exit 1
fi
