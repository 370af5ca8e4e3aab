#!/bin/sh
# peaks.search = off runs as strata ran before it had a peak search: the
# same points, estimates, verdicts and evaluation counts, bit for bit.
# tests/data/peaks-off.ref holds what strata without the search (commit
# 0bd9528, the parent of the search's first change) printed for these
# runs, made with
#
#   OFF= STRATA=/path/to/that/strata tests/run-peaks-off.sh --print >tests/data/peaks-off.ref
#
# (OFF= leaves out the key that strata did not know).  The runs: one peak
# (f4 in 7 dimensions, f2 in 8: dimensions whose frozen iterations draw 32
# bits a coordinate, as every iteration did then; doc/algorithm.md,
# "Random numbers") and two off the diagonal (tests/integrands/two_peaks.c), where
# a search, once on, changes the evaluations and the samples, in the three
# adapting modes, two seeds; and a checkpoint that strata without the
# search wrote (tests/data/peaks-off-old.ckpt.h5, f2 in 5 dimensions after
# 3 iterations), resumed to 6: a checkpoint without peaks state continues
# with the search off, and is refused with it on, naming the key.
set -u
STRATA=${STRATA:-./strata}
srcdir=${srcdir:-.}
OFF=${OFF---set peaks.search=off}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STRATA_CACHE_DIR="$tmp/cache"
cp "$srcdir/tests/integrands/two_peaks.c" "$tmp/"

pick() {
  sed -n 's/.*"integral":\([^,]*\),"sigma":\([^,]*\),"chi2_dof":\([^,]*\),"Q":\([^,]*\),.*"neval":\([^,]*\),"iterations":\([^,]*\),"converged":\([^,]*\),.*"nhcube":\([^,]*\),.*/integral=\1 sigma=\2 chi2_dof=\3 Q=\4 neval=\5 iterations=\6 converged=\7 nhcube=\8/p'
}
common="--set vegas.neval=2e4 --set vegas.maxiter=6 --set vegas.skip=2 --set vegas.adapt_iters=4
 --set vegas.epsrel=1e-2 --set run.threads=1 --set run.backend=cpu"
out="$tmp/out"
: >"$out"
for case in f4:7 f2:8 two_peaks:4; do
  name=${case%%:*} dim=${case##*:}
  if [ "$name" = two_peaks ]; then
    job="--set integral.integrand=file:$tmp/two_peaks.c --set integral.function=two_peaks"
  else
    job="--set integral.integrand=$name"
  fi
  for mode in vegas+ vegas vegas1d; do
    for seed in 1 2; do
      # shellcheck disable=SC2086
      r=$("$STRATA" run -q --json $job --set integral.dim="$dim" $common \
            --set vegas.mode=$mode --set vegas.seed=$seed $OFF 2>&1 | pick)
      echo "case=$case mode=$mode seed=$seed ${r:-FAILED}" >>"$out"
    done
  done
done
# The checkpoint strata without the search wrote: 3 iterations of f2 in 5
# dimensions, vegas+, seed 1, with $common (maxiter 3).
ck="$tmp/old.ckpt.h5"
cp "$srcdir/tests/data/peaks-off-old.ckpt.h5" "$ck"
chmod 600 "$ck"
# shellcheck disable=SC2086
r=$("$STRATA" run -q --json --set integral.integrand=f2 --set integral.dim=5 $common \
      --set run.checkpoint="$ck" --resume --force $OFF 2>&1 | pick)
echo "case=f2:5 mode=vegas+ seed=1 resumed ${r:-FAILED}" >>"$out"

if [ "${1-}" = --print ]; then cat "$out"; exit 0; fi
fail=0
if ! cmp -s "$srcdir/tests/data/peaks-off.ref" "$out"; then
  echo "FAIL: peaks.search = off gives other results than strata without the search:"
  diff "$srcdir/tests/data/peaks-off.ref" "$out" | head -20
  fail=1
fi
# With the search on, the old checkpoint is refused, naming the key, and
# left as it is.
cp "$srcdir/tests/data/peaks-off-old.ckpt.h5" "$ck"
chmod 600 "$ck"
sum=$(cksum <"$ck")
# shellcheck disable=SC2086
if msg=$("$STRATA" run -q --set integral.integrand=f2 --set integral.dim=5 $common \
           --set run.checkpoint="$ck" --resume --force 2>&1); then
  echo "FAIL: a checkpoint without peaks state resumed with the search on"; fail=1
fi
case $msg in
  *peaks.search*) ;;
  *) echo "FAIL: the refusal does not name peaks.search: $msg"; fail=1 ;;
esac
[ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] || { echo "FAIL: not one line: $msg"; fail=1; }
[ "$(cksum <"$ck")" = "$sum" ] || { echo "FAIL: the refused checkpoint changed"; fail=1; }
[ $fail = 0 ] && echo "peaks off: $(wc -l <"$out") runs identical to strata without the search"
exit $fail
