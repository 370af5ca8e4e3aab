#!/bin/sh
# The classic test suites' use, 5 iterations of B/5 all averaged:
# strata's true error beside GSL's VEGAS at equal total
# evaluations, with strata's defaults and with the settings doc/algorithm.md
# ("Few iterations") gives for one smooth peak and few iterations:
#   bench/few_iterations.sh [SEEDS [ROWS]]
# SEEDS (default 200) per row and budget; ROWS (default: the classic
# suite's gaussian, Tsuda's product and the constant, and the double
# gaussian of coverage.sh's rows, which shows what the faster map costs) as
# bench_gsl's --only names.  BENCH_GSL (default ./bench/bench_gsl) and
# FEW_ITERS_SETTINGS (default "--ninc 50 --alpha 1.5 --beta 0") are
# honoured; FEW_ITERS_BUDGETS (default "1e4 1e5 1e6") are the totals B.
# Prints a markdown table (doc/benchmarks.md): for each code the median
# relative true error over the seeds and, in brackets, the fraction of
# seeds within 3 sigma; the last column is the settings' median over GSL's.
# Exits 1 where, on a row other than the double gaussian's, that ratio
# exceeds 1.25: the median of 200 |errors| has a standard error of about 9%
# of itself, so the ratio of two codes' medians that are truly equal lies
# below 1.25 in about 95% of draws.
set -eu
seeds=${1:-200}
rows=${2:-gauss/10 tsuda/5 tsuda/8 const/8 dgauss/4 dgauss/8}
gsl=${BENCH_GSL:-./bench/bench_gsl}
settings=${FEW_ITERS_SETTINGS:---ninc 50 --alpha 1.5 --beta 0}
budgets=${FEW_ITERS_BUDGETS:-1e4 1e5 1e6}
[ -x "$gsl" ] || { echo "few_iterations.sh: $gsl: not built (make bench/bench_gsl)" >&2; exit 2; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
set --
for r in $rows; do set -- "$@" --only "$r"; done
for b in $budgets; do set -- "$@" --budget "$b"; done
"$gsl" --iters 5 --seeds "$seeds" "$@" > "$out/defaults"
# shellcheck disable=SC2086 # the settings are several options
"$gsl" --iters 5 --seeds "$seeds" "$@" $settings > "$out/settings"

echo "| row | B | GSL | strata, defaults | strata, \`$settings\` | settings / GSL |"
echo "|---|---|---|---|---|---|"
awk '
  FNR == 1 { file++ }
  /^#/ || NF < 12 || $1 == "integrand" { next }
  { key = $1 " d=" $2 ", " $3 }
  file == 1 && $4 == "gsl" { order[++n] = key; g[key] = $7; g3[key] = $12 }
  file == 1 && $4 == "strata-1t" { d[key] = $7; d3[key] = $12 }
  file == 2 && $4 == "strata-1t" { s[key] = $7; s3[key] = $12 }
  END {
    bad = 0
    for (i = 1; i <= n; i++) {
      k = order[i]
      ratio = g[k] > 0 ? s[k] / g[k] : (s[k] > 0 ? "inf" : 0)
      mark = ""
      if (k !~ /^dgauss/ && ratio != "inf" && ratio > 1.25 && s[k] > 1e-12) { mark = " (worse)"; bad = 1 }
      if (k !~ /^dgauss/ && ratio == "inf" && s[k] > 1e-12) { mark = " (worse)"; bad = 1 }
      split(k, part, ", ")
      printf "| %s | %s | %s (%s) | %s (%s) | %s (%s) | %s%s |\n", part[1], part[2],
             g[k], g3[k], d[k], d3[k], s[k], s3[k],
             ratio == "inf" ? "inf" : sprintf("%.2f", ratio), mark
    }
    exit bad
  }' "$out/defaults" "$out/settings"
