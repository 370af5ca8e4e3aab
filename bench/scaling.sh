#!/bin/sh
# Strong and weak scaling over GPUs (one MPI rank per GPU), CUDA backend.
#   bench/scaling.sh [STRATA] [MAXGPUS]
# Strong: the same neval per iteration on 1..MAXGPUS GPUs.  Weak: neval per
# iteration grows with the number of GPUs.  Each run: f4 d=6, vegas+, 10
# iterations (5 adapting), no tolerance; time_s is the integration's wall time
# (the GPU context excluded), allreduce_s the time inside MPI_Allreduce.
set -eu
STRATA=${1:-./strata}
MAX=${2:-$(nvidia-smi -L | wc -l)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
field() { tail -n 1 "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p"; }
run() { # run NGPU NEVAL -> prints a table row
  mpirun --oversubscribe -n "$1" --bind-to none "$STRATA" run -q --json \
    --set run.backend=cuda --set integral.integrand=f4 --set integral.dim=6 \
    --set vegas.neval="$2" --set vegas.maxiter=10 --set vegas.adapt_iters=5 \
    --set vegas.skip=2 --set vegas.epsrel=0 --set vegas.maxeval=1e12 >/tmp/scaling.$$ 2>&1 || { cat /tmp/scaling.$$; exit 1; }
  t=$(field /tmp/scaling.$$ time_s); a=$(field /tmp/scaling.$$ allreduce_s)
  echo "$t $a $(field /tmp/scaling.$$ integral) $(field /tmp/scaling.$$ sigma)"
}
echo "| kind | neval/iteration | GPUs | time (s) | allreduce (s) | efficiency | integral | sigma |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1e8 1e9 1e10; do
  base=""
  g=1
  while [ $g -le "$MAX" ]; do
    set -- $(run $g $n)
    [ -n "$base" ] || base=$1
    eff=$(awk -v b="$base" -v t="$1" -v g=$g 'BEGIN { printf "%.0f%%", 100 * b / (t * g) }')
    echo "| strong | $n | $g | $1 | $2 | $eff | $3 | $4 |"
    g=$((g * 2))
  done
done
for per in 1e8 1e9; do
  base=""
  g=1
  while [ $g -le "$MAX" ]; do
    n=$(awk -v p="$per" -v g=$g 'BEGIN { printf "%.0f", p * g }')
    set -- $(run $g $n)
    [ -n "$base" ] || base=$1
    eff=$(awk -v b="$base" -v t="$1" 'BEGIN { printf "%.0f%%", 100 * b / t }')
    echo "| weak | $per per GPU | $g | $1 | $2 | $eff | $3 | $4 |"
    g=$((g * 2))
  done
done
rm -f /tmp/scaling.$$
