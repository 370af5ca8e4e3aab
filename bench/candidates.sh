#!/bin/sh
# The settings that, on the CPU, reach the issue-3 targets' errors in the
# fewest evaluations and iterations (doc/benchmarks.md, "Settings for the
# m-CUBES cases"), timed on the GPU over 20 seeds next to the defaults.  The
# CPU draws the same points, so the errors are known; the GPU gives the time.
#   bench/candidates.sh [BENCH_GPU [SEEDS [--cpu]]]
# (--cpu: the same table on the CPU backend, where there is no GPU.)
set -eu
B=${1:-bench/bench_gpu}
N=${2:-20}
CPU=${3:-}
short="vegas.mode=vegas1d vegas.max_nhcube=1e4 vegas.alpha=1 vegas.skip=2"
fb="integral.integrand=fB integral.dim=9 vegas.mode=vegas1d vegas.alpha=1 vegas.neval=1e7 vegas.adapt_iters=10 vegas.skip=10 vegas.maxiter=12 vegas.qmc_map=on vegas.neval_frozen=6.7e7 vegas.epsrel=0"
"$B" --seeds "$N" $CPU \
  --try "integral.integrand=f4 integral.dim=8" \
  --try "integral.integrand=f4 integral.dim=8 $short" \
  --try "integral.integrand=f2 integral.dim=6" \
  --try "integral.integrand=f2 integral.dim=6 $short" \
  --try "integral.integrand=f2 integral.dim=6 $short vegas.neval=2e6" \
  --try "$fb" \
  --try "$fb vegas.beta=0" \
  --try "$fb vegas.max_nhcube=2e4" \
  --try "integral.integrand=fA integral.dim=6 vegas.mode=qmc vegas.neval=4.3e9 vegas.maxiter=1 vegas.epsrel=0"
