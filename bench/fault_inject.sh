#!/bin/sh
# Fault injection for checkpoints: kill -9 at random moments of
# runs with checkpoint_every = 1, and many invocations on one checkpoint at
# once.  Not part of make check (it takes a few minutes); doc/slurm.md.
#
#   bench/fault_inject.sh [STRATA] [KILLS] [CONCURRENT]     (default ./strata 100 20)
#
# Kills: KILLS/10 episodes (one seed each) of 10 kills.  Each kill starts
# `strata run --set run.resume=auto` and kills it with SIGKILL after a random
# 0.02 to 0.6 s.  After each kill:
#   lost    = rows the killed run had printed - iterations in the checkpoint - 1
#             (the row of the iteration whose checkpoint was in flight may be
#             lost; anything beyond that is counted);
#   corrupt = a checkpoint that h5dump cannot read, or that the next run
#             refuses as damaged.
# Each episode then resumes to the end; its result must equal the
# uninterrupted run's to the last bit, and its log must hold every
# iteration once.
# Concurrency: (a) CONCURRENT fresh invocations with resume = auto started
# at once on one checkpoint; (b) a running job and CONCURRENT-1 others
# started at once against it (fresh, --resume needing --force, resume =
# auto).  Every invocation must either run to the uninterrupted result or
# be refused with the lock's message; the running job must finish with
# the uninterrupted result.
set -u
STRATA=${1:-./strata}
KILLS=${2:-100}
CONC=${3:-20}
case $STRATA in /*) ;; *) STRATA=$(pwd)/$STRATA ;; esac
command -v h5dump >/dev/null || { echo "fault_inject: needs h5dump (hdf5-tools)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
T="timeout 300"
job="--threads 1 --set run.backend=cpu --set integral.integrand=f4 --set integral.dim=4
 --set vegas.epsrel=0 --set vegas.neval=1e4 --set vegas.maxiter=300 --set vegas.skip=2"
field() { tail -n 1 "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p"; }
result() { echo "$(field "$1" integral) $(field "$1" sigma)"; }
rand_ms() { awk -v s="$(od -An -N4 -tu4 /dev/urandom)" 'BEGIN { srand(s); print 20 + int(rand() * 580) }'; }
last_row() { # the highest iteration number a table shows
  awk '/^ *[0-9]+   / { if ($1 + 0 > m) m = $1 + 0 } END { print m + 0 }' "$1"; }
ck_iters() { # iterations in a checkpoint, 0 if none, -1 if unreadable
  [ -e "$1" ] || { echo 0; return; }
  h5dump -a /iterations "$1" 2>/dev/null | sed -n 's/^ *(0): \([0-9]*\)$/\1/p' | grep . || echo -1
}

kills=0 lost=0 lost_max=0 corrupt=0 differ=0 badlog=0 episodes=0 early=0 inflight=0
ep=0
while [ $kills -lt "$KILLS" ]; do
  ep=$((ep + 1))
  seed=$((100 + ep))
  $T "$STRATA" run $job --set vegas.seed=$seed -q --json >ref.$ep 2>&1 || { echo "reference run failed: $(cat ref.$ep)"; exit 1; }
  ck="--set vegas.seed=$seed --set run.checkpoint=e$ep.h5 --set run.log=e$ep.log.h5 --set run.checkpoint_every=1 --set run.resume=auto"
  n=0
  while [ $n -lt 10 ] && [ $kills -lt "$KILLS" ]; do
    "$STRATA" run $job $ck >out 2>err &
    pid=$!
    sleep "$(awk -v m="$(rand_ms)" 'BEGIN { print m / 1000 }')"
    if ! kill -9 $pid 2>/dev/null; then
      wait $pid
      early=$((early + 1)) # finished (or failed) before the kill: not a kill
      grep -q "damaged" err && corrupt=$((corrupt + 1))
      break
    fi
    wait $pid 2>/dev/null
    n=$((n + 1))
    kills=$((kills + 1))
    p=$(last_row out)
    c=$(ck_iters e$ep.h5)
    if [ "$c" -lt 0 ]; then corrupt=$((corrupt + 1)); continue; fi
    l=$((p - c - 1))
    [ $((p - c)) -eq 1 ] && inflight=$((inflight + 1))
    if [ $l -gt 0 ]; then lost=$((lost + l)); [ $l -gt $lost_max ] && lost_max=$l; fi
  done
  $T "$STRATA" run $job $ck -q --json >fin.$ep 2>fin.$ep.err
  if grep -q "damaged" fin.$ep.err; then corrupt=$((corrupt + 1)); fi
  [ "$(result fin.$ep)" = "$(result ref.$ep)" ] && [ -n "$(field fin.$ep integral)" ] || {
    differ=$((differ + 1)); echo "episode $ep: $(result fin.$ep) $(cat fin.$ep.err), uninterrupted $(result ref.$ep)"; }
  rowsin=$("$STRATA" log --csv e$ep.log.h5 2>/dev/null | tail -n +2 | cut -d, -f1 | tr '\n' ' ')
  [ "$rowsin" = "$(seq 1 300 | tr '\n' ' ')" ] || { badlog=$((badlog + 1)); echo "episode $ep: the log's iterations are not 1..300 once each"; }
  episodes=$((episodes + 1))
done
tmpleft=$(ls | grep -c '\.h5\.tmp\.' )

# (a) CONCURRENT fresh invocations at once
small="--threads 1 --set run.backend=cpu --set integral.integrand=f4 --set integral.dim=4
 --set vegas.epsrel=0 --set vegas.neval=1e4 --set vegas.maxiter=60 --set vegas.skip=2 --set vegas.seed=7"
$T "$STRATA" run $small -q --json >cref 2>&1
i=0
while [ $i -lt "$CONC" ]; do
  $T "$STRATA" run $small -q --json --set run.checkpoint=conc.h5 --set run.log=conc.log.h5 \
    --set run.checkpoint_every=1 --set run.resume=auto >c.$i 2>c.$i.err &
  i=$((i + 1))
done
wait
a_ran=0 a_refused=0 a_bad=0
i=0
while [ $i -lt "$CONC" ]; do
  if [ -s c.$i ] && [ "$(result c.$i)" = "$(result cref)" ]; then a_ran=$((a_ran + 1))
  elif grep -q "in use by another strata run" c.$i.err && [ "$(wc -l <c.$i.err)" -eq 1 ]; then a_refused=$((a_refused + 1))
  else a_bad=$((a_bad + 1)); echo "concurrent (a) $i: $(cat c.$i.err) $(result c.$i)"; fi
  i=$((i + 1))
done
$T "$STRATA" run $small -q --json --set run.checkpoint=conc.h5 --set run.log=conc.log.h5 --set run.resume=auto >cfin 2>&1
[ "$(result cfin)" = "$(result cref)" ] || { a_bad=$((a_bad + 1)); echo "concurrent (a): final $(cat cfin)"; }

# (b) a running job and CONCURRENT-1 others against it
"$STRATA" run $job --set vegas.seed=101 -q --json --set run.checkpoint=run.h5 --set run.checkpoint_every=1 >runner 2>runner.err &
rp=$!
sleep 0.3
i=1
while [ $i -lt "$CONC" ]; do
  case $((i % 3)) in
  0) extra="" ;;
  1) extra="--resume --set vegas.maxiter=400" ;;
  2) extra="--set run.resume=auto" ;;
  esac
  $T "$STRATA" run $job --set vegas.seed=101 -q --json --set run.checkpoint=run.h5 $extra >b.$i 2>b.$i.err &
  i=$((i + 1))
done
wait
b_refused=0 b_bad=0
i=1
while [ $i -lt "$CONC" ]; do
  if grep -q "in use by another strata run" b.$i.err; then b_refused=$((b_refused + 1))
  else b_bad=$((b_bad + 1)); echo "concurrent (b) $i: $(cat b.$i.err)"; fi
  i=$((i + 1))
done
[ "$(result runner)" = "$(result ref.1)" ] && b_runner=ok || { b_runner=FAILED; echo "runner: $(cat runner.err)"; }

echo "fault_inject: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), strata $("$STRATA" --version | head -1)"
echo "kill -9 during runs (checkpoint_every = 1): $kills kills in $episodes episodes ($early runs ended before their kill)"
echo "  kills that lost the iteration in flight: $inflight; lost iterations beyond it: $lost (at most $lost_max at one kill)"
echo "  corrupted checkpoints: $corrupt"
echo "  results differing from the uninterrupted run: $differ of $episodes; logs not 1..300 once each: $badlog"
echo "  temporary files left beside the checkpoints: $tmpleft"
echo "$CONC fresh invocations at once (resume = auto): $a_ran ran to the uninterrupted result, $a_refused refused (lock), $a_bad otherwise"
echo "a running job and $((CONC - 1)) invocations against it: $b_refused refused (lock), $b_bad otherwise; the running job: $b_runner"
[ $lost -eq 0 ] && [ $corrupt -eq 0 ] && [ $differ -eq 0 ] && [ $badlog -eq 0 ] && [ $a_bad -eq 0 ] && [ $b_bad -eq 0 ] && [ $b_runner = ok ]
