#!/bin/bash
# A parameter sweep with and without a reused map: the width a of
# f4 over the 8 values of slurm/sweep.sh, to epsrel 1e-3, each task
#  - trained from the uniform map (adapt_iters and skip as the job says), or
#  - started from one map trained once at a = 50 ([vegas] map), with
#    adapt_iters = 6 and skip = 2 of its own (slurm/sweep.sh's settings;
#    TRAIN, ADAPT, SKIP and SEED in the environment change them).  The training
#    value is one of the wider gaussians on purpose: a map trained on a
#    narrow one leaves the tails of a wide one to few samples (a = 25 from
#    a = 200 missed by 3 sigma after 50 iterations, doc/benchmarks.md).
# Prints a task per line and the totals, the training counted once in the
# reuse column; every task must converge and lie within 3 sigma of the
# exact value (exit status 1 otherwise).
#   bench/sweep.sh [STRATA] [DIM] [NEVAL]      (defaults: ./strata 6 2e5)
set -u
STRATA=${1:-./strata}
dim=${2:-6}
neval=${3:-2e5}
values=(25 50 100 200 400 625 1000 2000)
train=${TRAIN:-50}
adapt=${ADAPT:-6}
skip=${SKIP:-2}
seed=${SEED:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--set integral.integrand=f4 --set integral.dim="$dim" --set vegas.neval="$neval"
  --set vegas.epsrel=1e-3 --set vegas.maxiter=100 --set vegas.seed="$seed" --set run.backend=cpu --json -q)

field() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(r[sys.argv[2]])' "$@"; }
check() { # check FILE: converged and within 3 sigma
  python3 - "$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
ok = r["converged"] and abs(r["integral"] - r["exact"]) <= 3 * r["sigma"]
print("%+.2f" % ((r["integral"] - r["exact"]) / r["sigma"]), "ok" if ok else "BAD")
sys.exit(0 if ok else 1)
PY
}

status=0
"$STRATA" run "${common[@]}" --set integral.params="$train" --set run.checkpoint="$tmp/train.ckpt.h5" \
  >"$tmp/train.json" || exit 1
tr_n=$(field "$tmp/train.json" neval)
echo "training at a = $train: $tr_n evaluations, $(field "$tmp/train.json" iterations) iterations"
printf "%6s  %12s %5s %-10s  %12s %5s %-10s\n" a "fresh neval" itn "dev" "reuse neval" itn "dev"
fresh_total=0
reuse_total=$tr_n
for a in "${values[@]}"; do
  "$STRATA" run "${common[@]}" --set integral.params="$a" >"$tmp/fresh$a.json" || status=1
  "$STRATA" run "${common[@]}" --set integral.params="$a" --set vegas.map="$tmp/train.ckpt.h5" \
    --set vegas.adapt_iters="$adapt" --set vegas.skip="$skip" >"$tmp/reuse$a.json" || status=1
  cf=$(check "$tmp/fresh$a.json") || status=1
  cr=$(check "$tmp/reuse$a.json") || status=1
  nf=$(field "$tmp/fresh$a.json" neval)
  nr=$(field "$tmp/reuse$a.json" neval)
  fresh_total=$((fresh_total + nf))
  reuse_total=$((reuse_total + nr))
  printf "%6s  %12s %5s %-10s  %12s %5s %-10s\n" "$a" "$nf" "$(field "$tmp/fresh$a.json" iterations)" \
    "$cf" "$nr" "$(field "$tmp/reuse$a.json" iterations)" "$cr"
done
echo "total: fresh $fresh_total, reuse $reuse_total (training included): $(python3 -c "print('%.2f' % ($reuse_total / $fresh_total))") of fresh"
[ "$reuse_total" -lt "$fresh_total" ] || { echo "reuse is not cheaper"; status=1; }
exit $status
