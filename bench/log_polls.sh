#!/bin/sh
# Reading the log while the run writes it: POLLS reads by `strata log`,
# alternately with and without --csv, during a run with run.log_map = 1 and
# a checkpoint after every iteration; every read must succeed and be a
# prefix of the final log.  Not part of make check, which runs the same with
# 200 reads (tests/run-logsafety.sh); doc/slurm.md.
#
#   bench/log_polls.sh [STRATA] [POLLS]     (default ./strata 1000)
set -u
STRATA=${1:-./strata}
POLLS=${2:-1000}
case $STRATA in /*) ;; *) STRATA=$(pwd)/$STRATA ;; esac
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../tests/run-logsafety.sh
[ -x "$script" ] || { echo "log_polls: $script is missing (run configure)"; exit 1; }
LOG_POLLS=$POLLS LOG_POLLS_ONLY=1 STRATA=$STRATA "$script"
