#!/bin/sh
# Default settings under test: every integrand of the tolerance table, run
# with the defaults at epsrel 1e-3 and 1e-4 beside the same with each
# candidate change (SETTINGS, one --try per candidate), over SEEDS seeds:
# time, iterations and honesty side by side (bench_gpu --try).
#   bench/defaults.sh BENCH_GPU SEEDS 'SETTINGS' ['SETTINGS'...]
set -eu
B=$1
N=$2
shift 2
for eps in 1e-3 1e-4; do
  for c in f2:5 f2:6 f2:8 f3:5 f3:6 f3:8 f4:5 f4:6 f4:8 f5:5 f5:6 f5:8 f6:5 f6:6 f6:8 fB:9; do
    job="integral.integrand=${c%:*} integral.dim=${c#*:} vegas.epsrel=$eps"
    [ "${c%:*}" = fB ] && job="$job vegas.neval=1e7"
    set -- "$@"
    args="--try '$job'"
    for s in "$@"; do args="$args --try '$job $s'"; done
    eval "\"$B\" --seeds $N $args" | grep '^|' | grep -v -e '^| configuration' -e '^|---'
  done
done
