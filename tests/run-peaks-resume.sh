#!/bin/sh
# A run with the peak search's channels, checkpointed after 4 iterations
# and resumed to 8 (a larger maxiter, --force), ends bit for bit where the
# uninterrupted run of 8 does: the checkpoint carries the search's modes,
# the channels' factors and weights, and the iterations' k-hat, channels
# and restarts.
set -u
STRATA=${STRATA:-./strata}
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STRATA_CACHE_DIR="$tmp/cache"
cp "$srcdir/tests/integrands/two_peaks.c" "$tmp/"
pick() { tail -n 1 | grep -o '"integral":[^,]*,"sigma":[^,]*\|"neval":[0-9]*\|"channels":\[[^]]*\]\|"khat":[^,]*\|"share":[^,]*\|"weight":[^,]*'; }
common="-q --json --set integral.integrand=file:$tmp/two_peaks.c --set integral.function=two_peaks
 --set integral.dim=6 --set vegas.neval=2e4 --set vegas.epsrel=0 --set vegas.skip=2
 --set run.threads=1 --set run.backend=cpu"
# shellcheck disable=SC2086
whole=$("$STRATA" run $common --set vegas.maxiter=8 | pick)
case $whole in *'"channels":['*,*,*']'*) ;; *) echo "FAIL: no channels: $whole"; exit 1 ;; esac
# shellcheck disable=SC2086
"$STRATA" run $common --set vegas.maxiter=4 --set run.checkpoint="$tmp/ck.h5" >/dev/null ||
  { echo "FAIL: the first part did not run"; exit 1; }
cp "$tmp/ck.h5" "$tmp/ck4.h5"
# shellcheck disable=SC2086
resumed=$("$STRATA" run $common --set vegas.maxiter=8 --set run.checkpoint="$tmp/ck.h5" --resume --force 2>&1 | pick)
if [ "$whole" != "$resumed" ]; then
  echo "FAIL: resumed: $resumed"
  echo "      whole:   $whole"
  exit 1
fi
# A finished run resumed reports what it reported: its channels' weights
# and shares are the checkpoint's.
# shellcheck disable=SC2086
again=$("$STRATA" run $common --set vegas.maxiter=8 --set run.checkpoint="$tmp/ck.h5" --resume 2>&1 | pick)
if [ "$whole" != "$again" ]; then
  echo "FAIL: the finished run resumed: $again"
  echo "      whole:                    $whole"
  exit 1
fi
# The weights are of one kind: they add up to 1.
echo "$whole" | sed -n 's/"channels":\[\(.*\)\]/\1/p' | tr ',' '\n' |
  awk '{ s += $1 } END { d = s - 1; if (d < 0) d = -d; exit !(NR >= 3 && d < 1e-12) }' ||
  { echo "FAIL: the channels' weights do not add up to 1: $whole"; exit 1; }
echo "resumed with channels: the uninterrupted run's bits"

# Resumed with another peaks.search: on is what auto ran, so the resume
# gives the uninterrupted run's bits; with the search off, a checkpoint
# that holds its state is refused in one line naming the key and the
# file, and so is one without it resumed with the search on; neither
# checkpoint is changed.
# shellcheck disable=SC2086
resumed=$("$STRATA" run $common --set vegas.maxiter=8 --set run.checkpoint="$tmp/ck4.h5" --resume --force --set peaks.search=on 2>&1 | pick)
if [ "$whole" != "$resumed" ]; then
  echo "FAIL: resumed with peaks.search = on: $resumed"
  echo "      whole (auto):                  $whole"
  exit 1
fi
# shellcheck disable=SC2086
"$STRATA" run $common --set vegas.maxiter=4 --set run.checkpoint="$tmp/off.h5" --set peaks.search=off >/dev/null ||
  { echo "FAIL: the run without the search did not run"; exit 1; }
refused() { # refused CHECKPOINT SEARCH: resumed with peaks.search = SEARCH, it must be refused
  before=$(cksum <"$1")
  # shellcheck disable=SC2086
  "$STRATA" run $common --set vegas.maxiter=8 --set run.checkpoint="$1" --resume --force \
    --set peaks.search="$2" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^strata: $1: .*peaks\.search" "$tmp/err" ||
    { echo "FAIL: $1 resumed with peaks.search = $2: exit $rc: $(cat "$tmp/err" "$tmp/out")"; exit 1; }
  [ "$(cksum <"$1")" = "$before" ] || { echo "FAIL: $1 was changed by a refused resume"; exit 1; }
}
refused "$tmp/ck.h5" off
refused "$tmp/off.h5" on
refused "$tmp/off.h5" auto
echo "resumed with peaks.search = on: the same bits; off with channels, or on without, refused"
