#!/bin/sh
# Lepage's vegas, strata without the peak search and strata with it, side
# by side on the family's REPORT instances at neval 1e4 and 3e4 per
# iteration and epsrel 1e-2: for each, the claims within 3 sigma of the
# exact value and the share of runs that end with a true claim
# (doc/benchmarks.md, R63).  vegas makes no claim of its own: baseline.py
# applies strata's rule to its iterations (5 warm-up iterations, then a
# claim once two or more are kept, Q >= 0.01 and sdev <= epsrel |mean|).
#
#   side_by_side.sh OUTDIR [COUNT] [SEEDS]
#
# COUNT report instances (40), SEEDS runs of each (1); STRATA the program
# (this tree's), PYTHON a python with numpy, scipy and vegas (README.md),
# JOBS runs at once (1).  A sweep that is interrupted resumes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: side_by_side.sh OUTDIR [COUNT] [SEEDS]}
count=${2:-40}
seeds=${3:-1}
PYTHON=${PYTHON:-python3}
STRATA=${STRATA:-$here/../../strata}
export STRATA
mkdir -p "$out"
for method in vegas strata-off strata; do
  "$PYTHON" "$here/baseline.py" "$method" "$out/$method.jsonl" --set report --count "$count" \
    --seeds "$seeds" --neval 1e4,3e4 --epsrel 1e-2 --jobs "${JOBS:-1}"
done
"$PYTHON" "$here/summary.py" "$out/vegas.jsonl" "$out/strata-off.jsonl" "$out/strata.jsonl" --by neval
