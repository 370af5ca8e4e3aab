#!/bin/bash
# What periodic checkpoints cost a run: the time the iteration loop spends
# writing them (strata run -v: "checkpoint after iteration N written ... in
# T s"; the fsync and rename go on in the background, "synced ... in"),
# against the run's time, for strata's default (checkpoint_every_s = 60)
# and for a checkpoint after every iteration (checkpoint_every = 1).
# Each case runs about DURATION seconds (default 150: two periodic
# checkpoints and the final one); its iteration count comes from a
# 20-iteration calibration run.  Prints one markdown row per case and
# policy; doc/slurm.md and doc/benchmarks.md (R49) cite it.
#
#   bench/checkpoint_cost.sh [STRATA] [DURATION]     (default ./strata 150)
#
# Cases (CKPT_CASES, "dim:neval" each): the largest state the defaults
# make, 10^6 hypercubes (d = 6, neval 4e6, an 8 MB checkpoint), and a
# small one of short iterations (d = 4, neval 1e5), as a GPU gives.
set -u
STRATA=${1:-./strata}
DURATION=${2:-150}
CASES=${CKPT_CASES:-6:4e6 4:1e5}
case $STRATA in /*) ;; *) STRATA=$(pwd)/$STRATA ;; esac
[ -x "$STRATA" ] || { echo "checkpoint_cost: $STRATA is not a program (build first)"; exit 1; }
tmp=$(mktemp -d /tmp/strata-ckptcost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# run NAME DIM NEVAL MAXITER [--set ...]: a run of f4, its -v lines kept in
# NAME.err, its wall time (start-up included) in NAME.time.
run() {
  local name=$1 dim=$2 neval=$3 maxiter=$4 t0
  shift 4
  t0=$(date +%s.%N)
  "$STRATA" run -q -v --set integral.integrand=f4 --set integral.dim="$dim" \
    --set vegas.neval="$neval" --set vegas.maxiter="$maxiter" --set vegas.skip=0 \
    --set vegas.epsrel=0 "$@" >"$name.out" 2>"$name.err" ||
    { echo "checkpoint_cost: $name failed:"; tail -n 3 "$name.err"; exit 1; }
  echo "$(date +%s.%N) $t0" | awk '{ printf "%.3f", $1 - $2 }' >"$name.time"
}
files() { echo --set run.log="$1.log.h5" --set run.checkpoint="$1.ckpt.h5"; }
# The run's time from its start to its last iteration's end (the log's
# last elapsed_s): the calibration, without the start-up.
elapsed() { "$STRATA" log --csv "$1.log.h5" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "elapsed_s") c = i; next } { t = $c } END { print t }'; }
# Checkpoints written by the iteration loop (not the last one, at the end
# of the run: every policy writes it), their time on the loop's path, and
# the mean time of the background sync.
written() {
  awk '/checkpoint after iteration .* written/ { for (i = 1; i <= NF; i++) if ($i == "in") t = $(i + 1); n++; s += t; last = t }
       /synced to disk in/ { for (i = 1; i <= NF; i++) if ($i == "in") { y += $(i + 1); m++ } }
       END { printf "%d %.4f %.4f %.4f", n - 1, s - last, (n > 1 ? (s - last) / (n - 1) : 0), (m ? y / m : 0) }' "$1.err"
}

echo "| d | neval | policy | iterations | run (s) | checkpoints in the run | written, each (s) | synced in the background, each (s) | cost |"
echo "|---|---|---|---|---|---|---|---|---|"
for c in $CASES; do
  dim=${c%%:*} neval=${c#*:}
  # shellcheck disable=SC2046
  run cal-"$dim" "$dim" "$neval" 20 $(files cal-"$dim")
  iters=$(awk -v d="$DURATION" -v t="$(elapsed cal-"$dim")" 'BEGIN { k = int(d / (t / 20)); print (k < 6 ? 6 : k) }')
  # A tenth of that for a checkpoint after every iteration, beside the same
  # run without checkpoints: the cost is the difference.
  short=$(((iters + 9) / 10 < 6 ? 6 : (iters + 9) / 10))
  # shellcheck disable=SC2046
  run default-"$dim" "$dim" "$neval" "$iters" $(files default-"$dim")
  # shellcheck disable=SC2046
  run every1-"$dim" "$dim" "$neval" "$short" $(files every1-"$dim") --set run.checkpoint_every=1
  run none-"$dim" "$dim" "$neval" "$short"
  read -r k s each sy <<<"$(written default-"$dim")"
  awk -v d="$dim" -v e="$neval" -v n="$iters" -v t="$(cat default-"$dim".time)" -v k="$k" -v s="$s" \
    -v each="$each" -v sy="$sy" 'BEGIN {
      printf "| %s | %s | checkpoint_every_s = 60 (default) | %d | %.1f | %d | %.4f | %.4f | %.3f %% (written / run) |\n",
        d, e, n, t, k, each, sy, 100 * s / t }'
  read -r k s each sy <<<"$(written every1-"$dim")"
  awk -v d="$dim" -v e="$neval" -v n="$short" -v t="$(cat every1-"$dim".time)" -v t0="$(cat none-"$dim".time)" \
    -v k="$k" -v each="$each" -v sy="$sy" 'BEGIN {
      printf "| %s | %s | checkpoint_every = 1 | %d | %.1f (%.1f without) | %d | %.4f | %.4f | %.1f %% (run time over the run without) |\n",
        d, e, n, t, t0, k, each, sy, 100 * (t - t0) / t0 }'
done
