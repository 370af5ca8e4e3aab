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
pick() { tail -n 1 | grep -o '"integral":[^,]*,"sigma":[^,]*\|"neval":[0-9]*\|"channels":\[[^]]*\]\|"khat":[^,]*'; }
common="-q --json --set integral.integrand=file:$tmp/two_peaks.c --set integral.function=two_peaks
 --set integral.dim=6 --set vegas.neval=2e4 --set vegas.epsrel=0 --set vegas.skip=2
 --set run.threads=1 --set run.backend=cpu"
# shellcheck disable=SC2086
whole=$("$STRATA" run $common --set vegas.maxiter=8 | pick)
case $whole in *'"channels":['*,*,*']'*) ;; *) echo "FAIL: no channels: $whole"; exit 1 ;; esac
# shellcheck disable=SC2086
"$STRATA" run $common --set vegas.maxiter=4 --set run.checkpoint="$tmp/ck.h5" >/dev/null ||
  { echo "FAIL: the first part did not run"; exit 1; }
# shellcheck disable=SC2086
resumed=$("$STRATA" run $common --set vegas.maxiter=8 --set run.checkpoint="$tmp/ck.h5" --resume --force 2>&1 | pick)
if [ "$whole" != "$resumed" ]; then
  echo "FAIL: resumed: $resumed"
  echo "      whole:   $whole"
  exit 1
fi
echo "resumed with channels: the uninterrupted run's bits"
