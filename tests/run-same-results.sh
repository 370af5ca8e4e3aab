#!/bin/sh
# Results that a change of structure must leave alone: the integral, sigma
# and chi2/dof (as %.17g) of six integrands in every mode, seeds 1-5, on 1
# and 4 ranks, and of a checkpointed run resumed with a larger maxiter.
#
#   tests/run-same-results.sh            print the results (one line a run)
#   tests/run-same-results.sh REF        compare with REF, made by the above
#
# STRATA (default ./strata), MPIRUN (default mpirun), RANKS (default "1 4"),
# BACKEND (default cpu; cuda on a GPU machine) and CASES (default all six,
# as "default f4:5 ...": a share of them for runs side by side) choose what
# runs, SEEDS (default "1 2 3 4 5") which seeds, RESUMED=no leaves out the
# checkpointed runs, and SAME_OUT a file that
# receives each run's line as soon as it ends (what a time limit leaves of
# a long set).  Small
# iterations: the whole set runs in a few minutes on two cores.
set -u
STRATA=${STRATA:-./strata}
MPIRUN=${MPIRUN:-mpirun}
RANKS=${RANKS:-1 4}
BACKEND=${BACKEND:-cpu}
CASES=${CASES:-default f4:5 f6:5 fB:2 f2:6 fB:9}
SEEDS=${SEEDS:-1 2 3 4 5}
RESUMED=${RESUMED:-yes}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STRATA_CACHE_DIR="$tmp/cache"

# launch RANKS ARGS...: the program on that many ranks.
launch() {
  n=$1; shift
  if [ "$n" -eq 1 ]; then "$STRATA" "$@"; else "$MPIRUN" --oversubscribe -n "$n" "$STRATA" "$@"; fi
}
# pick JSON: the fields that must not change.
pick() {
  sed -n 's/.*"integral":\([^,]*\),"sigma":\([^,]*\),"chi2_dof":\([^,]*\),"Q":\([^,]*\),.*"neval":\([^,]*\),"iterations":\([^,]*\),"converged":\([^,]*\),.*"nhcube":\([^,]*\),.*/integral=\1 sigma=\2 chi2_dof=\3 Q=\4 neval=\5 iterations=\6 converged=\7 nhcube=\8/p'
}

out=${SAME_OUT:-$tmp/out}
: >"$out"
common="--set vegas.neval=5e4 --set vegas.maxiter=10 --set vegas.skip=2 --set vegas.adapt_iters=6 --set run.threads=1 --set run.backend=$BACKEND"
for ranks in $RANKS; do
  for case in $CASES; do
    if [ "$case" = default ]; then job=""; else
      job="--set integral.integrand=${case%%:*} --set integral.dim=${case##*:}"; fi
    for mode in vegas+ vegas vegas1d plain qmc; do
      for seed in $SEEDS; do
        r=$(launch "$ranks" run -q --json $job $common --set vegas.mode=$mode \
              --set vegas.seed=$seed 2>&1 | pick)
        echo "ranks=$ranks case=$case mode=$mode seed=$seed ${r:-FAILED}" >>"$out"
      done
      [ "$RESUMED" = no ] && continue
      # Checkpointed after 4 iterations, resumed to 10.
      ck="$tmp/ck.h5"
      rm -f "$ck"
      launch "$ranks" run -q --json $job $common --set vegas.mode=$mode --set vegas.maxiter=4 \
        --set run.checkpoint="$ck" >/dev/null 2>&1
      r=$(launch "$ranks" run -q --json $job $common --set vegas.mode=$mode \
            --set run.checkpoint="$ck" --resume --force 2>&1 | pick)
      echo "ranks=$ranks case=$case mode=$mode resumed ${r:-FAILED}" >>"$out"
    done
  done
done

if [ $# -eq 0 ]; then cat "$out"; exit 0; fi
if cmp -s "$1" "$out"; then
  echo "same results: $(wc -l <"$out") runs identical to $1"
  exit 0
fi
echo "FAIL: results differ from $1:"
diff "$1" "$out" | head -40
exit 1
