#!/bin/sh
# Are the error bars honest at every budget?  Each row runs one job over
# SEEDS seeds (default 200) with the `strata` program and scores the pull
# (I - exact) / sigma of every result:
#   bench/coverage.sh BACKEND [ROWS] [SEEDS]
# BACKEND is cpu or cuda; ROWS is small (neval 1e2 .. 1e4), medium (1e5),
# large (1e6, 1e7: the GPU's), all, or a list of name:dim:neval:maxiter.
# Every run has the default epsrel (1e-3), so some converge early.  STRATA
# (default ./strata) and extra options in STRATA_OPTS (e.g. "-t 2") are
# honoured; COVERAGE_JOBS (default 1) runs that many seeds at once;
# COVERAGE_SEED0 (default 1) is the first seed, for a fresh draw.  A row
# passes when |pull| <= 3 in at least 99% of the runs, |pull| <= 1 in
# 60-76%, no result is NaN or null, and no run claims convergence with
# |pull| > 4.  Prints a markdown table (doc/benchmarks.md) and exits 1 if a
# row failed.
set -eu
backend=${1:?usage: bench/coverage.sh cpu|cuda [small|medium|large|all|ROWS] [SEEDS]}
rows=${2:-all}
seeds=${3:-200}
strata=${STRATA:-./strata}
jobs=${COVERAGE_JOBS:-1}
case $jobs in '' | *[!0-9]*) jobs=0 ;; esac
[ "$jobs" -ge 1 ] || { echo "coverage.sh: COVERAGE_JOBS=${COVERAGE_JOBS:-}: a whole number of 1 or more" >&2; exit 2; }
seed0=${COVERAGE_SEED0:-1}
case $seed0 in '' | *[!0-9]*) seed0=0 ;; esac
[ "$seed0" -ge 1 ] || { echo "coverage.sh: COVERAGE_SEED0=${COVERAGE_SEED0:-}: a whole number of 1 or more" >&2; exit 2; }
case $backend in cpu | cuda) ;; *) echo "coverage.sh: backend '$backend': cpu or cuda" >&2; exit 2 ;; esac
out=
trap 'rm -rf "$out"' EXIT

# Integrands with exact value 1 by construction (so the exact value is not
# typed in twice); the built-ins take theirs from `strata list`.
const='return 1.0;'
linear='double p = 1.0; for (int i = 0; i < dim; i++) p *= 2.0 * x[i]; return p;'
# Two gaussians of width 0.1 on the diagonal at 1/3 and 2/3, each
# normalised over the unit cube by its 1-D integral (erf), half weight each.
dgauss='double s = 0.1, z1 = 1.0, z2 = 1.0, g1 = 1.0, g2 = 1.0;
  for (int i = 0; i < dim; i++) {
    z1 *= s * sqrt(M_PI / 2) * (erf((2.0 / 3) / (s * sqrt(2.0))) + erf((1.0 / 3) / (s * sqrt(2.0))));
    g1 *= exp(-(x[i] - 1.0 / 3) * (x[i] - 1.0 / 3) / (2 * s * s));
    g2 *= exp(-(x[i] - 2.0 / 3) * (x[i] - 2.0 / 3) / (2 * s * s));
  }
  z2 = z1; /* symmetric about 1/2 */
  return 0.5 * (g1 / z1 + g2 / z2);'

# name dim neval maxiter: one row
row() {
  name=$1 dim=$2 neval=$3 maxiter=$4
  case $name in
  const) set -- --set integral.integrand=inline --set "integral.body=$const" ;;
  linear) set -- --set integral.integrand=inline --set "integral.body=$linear" ;;
  dgauss) set -- --set integral.integrand=inline --set "integral.body=$dgauss" ;;
  *) set -- --set integral.integrand="$name" ;;
  esac
  case $name in
  const | linear | dgauss) exact=1 ;;
  fB) exact=1 ;; # erf(1 / (0.01 sqrt 2))^d: 1 to 20 digits in any dimension up to 32
  *) exact=$("$strata" list | awk -v n="$name" -v d="d=$dim" '
       $1 == n { f = 1; next } f && NF && $1 !~ /^d=/ { f = 0 } f && $1 == d { print $4 }') ;;
  esac
  [ -n "$exact" ] || { echo "coverage.sh: no exact value of $name in d=$dim" >&2; exit 2; }
  skip=5
  [ "$maxiter" -ge 10 ] || skip=$((maxiter / 2)) # the default, where it fits
  # Seeds seed0+j, seed0+j+jobs, ... in job j; the scoring below does not
  # care in which order the results come.
  out=$(mktemp -d "${TMPDIR:-/tmp}/coverage.XXXXXX")
  j=0
  while [ $j -lt "$jobs" ]; do
    s=$((seed0 + j))
    while [ $s -lt $((seed0 + seeds)) ]; do
      # shellcheck disable=SC2086
      "$strata" run -q --json ${STRATA_OPTS:-} "$@" --set integral.dim="$dim" \
        --set vegas.neval="$neval" --set vegas.maxiter="$maxiter" --set vegas.skip=$skip --set vegas.seed="$s" \
        --set vegas.maxeval=1e15 --set run.backend="$backend" | tail -n 1
      s=$((s + jobs))
    done >"$out/$j" &
    j=$((j + 1))
  done
  wait
  cat "$out"/* | awk -v exact="$exact" -v row="| $name | $dim | $neval | $maxiter |" '
    function field(k,   m) { m = match($0, "\"" k "\":[^,}]*"); return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) }
    { n++; I = field("integral"); sg = field("sigma"); conv = field("converged") == "true"
      if (I !~ /^-?[0-9]/ || sg !~ /^[0-9]/) { bad++; next }
      d = I - exact; if (d < 0) d = -d
      # a result equal to the exact value to rounding is exact, whatever its sigma
      if (d <= 4e-16 * (exact < 0 ? -exact : exact) * 8) { p = 0; nx++ }
      else if (sg + 0 > 0) p = d / sg
      else p = 1e300
      in1 += p <= 1; in3 += p <= 3; nc += conv; if (conv && p > 4) wild++
      if (p > worst) worst = p }
    END { if (n == 0) exit 1
          # runs exact to rounding have no error to cover: the rates count the others
          m = n - bad - nx; f1 = m > 0 ? (in1 - nx) / m : 1; f3 = m > 0 ? (in3 - nx) / m : 1
          ok = bad == 0 && wild == 0 && f3 >= 0.99 && (m == 0 || f1 >= 0.60 && f1 <= 0.76)
          printf "%s %d | %d | %.3f | %.3f | %.2f | %d | %d | %d | %s |\n", row, n, nx, f1, f3, worst, nc, bad, wild, ok ? "ok" : "FAIL"
          exit ok ? 0 : 1 }'
  rc=$?
  rm -rf "$out"
  return $rc
}

fail=0
echo "| integrand | d | neval | maxiter | runs | exact | \|pull\|<=1 | \|pull\|<=3 | max \|pull\| | converged | NaN/null | converged, \|pull\|>4 | |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
small="const:8:300:10 const:4:100:30 linear:4:100:10 linear:8:1000:10 f4:5:1000:10 f4:5:10000:5
       f2:6:1000:10 f2:6:10000:10 dgauss:4:1000:10 dgauss:8:10000:10 linear:8:10000:30
       f4:8:10000:30 fB:1:1000:10 fB:1:10000:10 fB:2:1000:10 fB:3:10000:30
       f6:5:1000:10 f6:5:10000:10"
medium="const:8:100000:10 linear:8:100000:10 f4:5:100000:10 f4:8:100000:10 f2:6:100000:10
        dgauss:8:100000:10 fB:4:100000:30"
large="const:8:1000000:5 f4:8:1000000:10 f2:8:1000000:10 dgauss:8:1000000:10 fB:9:1000000:30
       f4:8:10000000:5 dgauss:8:10000000:5 fB:9:10000000:10"
case $rows in
*:*) list=$rows ;;
small) list=$small ;; medium) list=$medium ;; large) list=$large ;;
all) list="$small $medium $large" ;;
*) echo "coverage.sh: rows '$rows': small, medium, large, all or name:dim:neval:maxiter ..." >&2; exit 2 ;;
esac
for r in $list; do
  IFS=: read -r n d e m <<EOF
$r
EOF
  row "$n" "$d" "$e" "$m" || fail=1
done
exit $fail
