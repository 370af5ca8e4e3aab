#!/bin/sh
# Error against N for plain MC, Sobol' and lattice points, from the logs:
#   bench/qmc_convergence.sh [INTEGRAND DIM [MMAX [OUTDIR]]]
# runs `strata run` for N = 2^14, 2^16, ... 2^MMAX points per iteration
# (16 iterations each, 16 randomizations per QMC iteration), one HDF5 log per
# run, then draws OUTDIR/INTEGRAND-DIM-vs-n.png with scripts/strata-plot
# --vs-n and prints its table.  STRATA (default ./strata) and extra strata
# options in STRATA_OPTS (e.g. "--set run.backend=cuda") are honoured.
set -eu
f=${1:-f1}; d=${2:-5}; mmax=${3:-24}; out=${4:-qmc-convergence}
strata=${STRATA:-./strata}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for set in "plain" "qmc --set vegas.qmc=sobol" "qmc --set vegas.qmc=lattice"; do
  m=14
  while [ $m -le "$mmax" ]; do
    tag=$(echo "$set" | sed 's/.*=//; s/ .*//')
    log="$out/$f-$d-$tag-$m.h5"
    rm -f "$log"
    # shellcheck disable=SC2086
    "$strata" run -q ${STRATA_OPTS:-} --set integral.integrand="$f" --set integral.dim="$d" \
      --set vegas.mode=$set --set vegas.neval=$((1 << m)) --set vegas.maxiter=16 \
      --set vegas.maxeval=1e15 --set vegas.epsrel=0 --set run.log="$log"
    m=$((m + 2))
  done
done
python3 "$here/scripts/strata-plot" --vs-n "$out/$f-$d"-*.h5 -o "$out/$f-$d"
