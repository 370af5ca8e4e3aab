#!/bin/sh
# The benchmarks' command lines: a bad option value is refused with exit
# status 2 and one line naming the option and the value, before any work
# (bench_gpu before it looks for a GPU); repeated --only runs every case
# named; --budget's lower bound follows --iters in either order.
# bench/few_iterations.sh, which runs bench_gsl, names a bench_gsl that is
# not there and passes bench_gsl's refusals on, before any work.  make
# check builds the programs for this test: bench_gpu where configure found
# CUDA, bench_gsl where it found GSL.
set -u
top_builddir=${top_builddir:-.}
gpu=$top_builddir/bench/bench_gpu
gsl=$top_builddir/bench/bench_gsl
few=${srcdir:-.}/bench/few_iterations.sh
fail=0
err=$(mktemp)
out=$(mktemp)
trap 'rm -f "$err" "$out"' EXIT

# refused PROGRAM WORD ARGS...: exit status 2, and one line on stderr that
# holds WORD.
refused() {
  prog=$1 word=$2
  shift 2
  "$prog" "$@" >"$out" 2>"$err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(wc -l <"$err")" -ne 1 ] || ! grep -qF -- "$word" "$err"; then
    echo "FAIL: $(basename "$prog") $*: exit $rc, stderr:"
    cat "$err"
    fail=1
  fi
}

if [ ! -x "$gpu" ] && [ ! -x "$gsl" ]; then
  echo "SKIP: neither benchmark was built (bench_gpu needs CUDA, bench_gsl GSL)"
  exit 77
fi
if [ -x "$gpu" ]; then
  refused "$gpu" "--seeds abc" --seeds abc
  refused "$gpu" "--seeds 0" --seeds 0
  refused "$gpu" "--seeds 20x" --seeds 20x --part tolerance
  refused "$gpu" "--part tolerences" --part tolerences
  refused "$gpu" "--tol-min nan" --tol-min nan
  refused "$gpu" "--tol-max 2" --tol-max 2
  refused "$gpu" "is above --tol-max" --tol-min 1e-4 --tol-max 1e-5
  refused "$gpu" "--neval 1e9e" --neval 1e9e
  refused "$gpu" "stray: not an option" --part tolerance stray
  refused "$gpu" "--bogus: not an option" --bogus
  refused "$gpu" "--case: not an option, or its value is missing" --case
else
  echo "bench_gpu not built (no CUDA): its options are not checked"
fi

if [ -x "$gsl" ]; then
  refused "$gsl" "--seeds 0" --seeds 0
  refused "$gsl" "--seeds 201" --seeds 201
  refused "$gsl" "--budget 1e6x" --budget 1e6x
  refused "$gsl" "--budget 900" --budget 900
  refused "$gsl" "--alpha nan" --alpha nan
  refused "$gsl" "--beta 1.5" --beta 1.5
  refused "$gsl" "--ninc 0" --ninc 0
  refused "$gsl" "--iters 7" --iters 7
  refused "$gsl" "--only tsuda/6" --only tsuda/6
  refused "$gsl" "stray: not an option" stray
  refused "$gsl" "--bogus: not an option" --bogus
  refused env "/nonexistent/bench_gsl: not built" BENCH_GSL=/nonexistent/bench_gsl "$few"
  refused env "--seeds abc" BENCH_GSL="$gsl" "$few" abc
  refused env "--only tsuda/6" BENCH_GSL="$gsl" "$few" 5 "tsuda/5 tsuda/6"
  # 5 iterations of 100 evaluations: the bound is 500 after --iters 5,
  # whichever comes first; two cases named, both run.
  for order in "--budget 500 --iters 5" "--iters 5 --budget 500"; do
    # shellcheck disable=SC2086
    "$gsl" $order --seeds 1 --only const/8 --only tsuda/5 >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL: bench_gsl $order: exit status $rc"
      cat "$err"
      fail=1
    fi
    for row in "^const  *8  *5e2 strata-1t" "^tsuda  *5  *5e2 strata-1t"; do
      grep -q "$row" "$out" || { echo "FAIL: bench_gsl $order --only const/8 --only tsuda/5: no row /$row/"; fail=1; }
    done
  done
else
  echo "bench_gsl not built (no GSL): its options are not checked"
fi
exit $fail
