#!/bin/sh
# The peak search's channels on 1, 2 and 4 MPI ranks: every rank draws and
# combines the same (run.check_ranks compares their states after every
# iteration), the ranks' results agree with the plain run to rounding (the
# map's parts add per rank; the channels' blocks add in block order), the
# run has a channel per peak, and the result is within 5 sigma of the exact
# value.  Skipped (77) without mpirun.
set -u
STRATA=${STRATA:-./strata}
MPIRUN=${MPIRUN:-mpirun}
srcdir=${srcdir:-.}
command -v "$MPIRUN" >/dev/null 2>&1 || { echo "skip: no $MPIRUN"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STRATA_CACHE_DIR="$tmp/cache"
cp "$srcdir/tests/integrands/two_peaks.c" "$tmp/"
fail=0
field() { tail -n 1 "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p"; }
common="-q --json --set integral.integrand=file:$tmp/two_peaks.c --set integral.function=two_peaks
 --set integral.dim=6 --set vegas.neval=2e4 --set vegas.maxiter=8 --set vegas.epsrel=0
 --set run.threads=1 --set run.backend=cpu --set run.check_ranks=on"
# shellcheck disable=SC2086
"$STRATA" run $common >"$tmp/r0" 2>&1 || { echo "FAIL: plain run: $(cat "$tmp/r0")"; exit 1; }
# Two peaks: the map, a channel each, the uniform part.
nch=$(tail -n 1 "$tmp/r0" | sed -n 's/.*"channels":\[\([^]]*\)\].*/\1/p' | tr ',' '\n' | wc -l)
[ "$nch" -eq 4 ] || { echo "FAIL: $nch channels, expected 4: $(tail -n 1 "$tmp/r0")"; fail=1; }
awk -v a="$(field "$tmp/r0" integral)" -v s="$(field "$tmp/r0" sigma)" 'BEGIN {
  e = (2 * 3.141592653589793) ^ 3 * (0.03 ^ 6 + 0.5 * 0.05 ^ 6); d = a - e; if (d < 0) d = -d
  exit !(d <= 5 * s) }' || { echo "FAIL: $(field "$tmp/r0" integral) +- $(field "$tmp/r0" sigma) is not the exact value"; fail=1; }
for n in 1 2 4; do
  # shellcheck disable=SC2086
  "$MPIRUN" --oversubscribe -n $n "$STRATA" run $common >"$tmp/r$n" 2>"$tmp/r$n.err" ||
    { echo "FAIL: mpirun -n $n: $(cat "$tmp/r$n.err")"; fail=1; continue; }
  awk -v a="$(field "$tmp/r0" integral)" -v b="$(field "$tmp/r$n" integral)" \
      -v sa="$(field "$tmp/r0" sigma)" -v sb="$(field "$tmp/r$n" sigma)" 'BEGIN {
    d = a - b; if (d < 0) d = -d; t = sa - sb; if (t < 0) t = -t
    exit !(d <= 1e-12 * a && t <= 1e-12 * sa) }' ||
    { echo "FAIL: $n ranks: $(field "$tmp/r$n" integral) +- $(field "$tmp/r$n" sigma), one: $(field "$tmp/r0" integral) +- $(field "$tmp/r0" sigma)"; fail=1; }
  [ "$(field "$tmp/r$n" neval)" = "$(field "$tmp/r0" neval)" ] ||
    { echo "FAIL: $n ranks: $(field "$tmp/r$n" neval) evaluations, one: $(field "$tmp/r0" neval)"; fail=1; }
done
[ $fail -eq 0 ] && echo "peaks on 1, 2 and 4 ranks: agree"
exit $fail
