#!/bin/sh
# Several GPU ranks against one: every mode agrees to 1e-13 with
# run.check_ranks on, 8 ranks on 2 GPUs to 1e-12, the NCCL and MPI paths
# to 1e-13, the peak search's channels to 1e-8, checkpoints move between
# 1 and 2 GPUs, and a rank whose NCCL
# set-up fails ends every rank with one line naming it.  Needs two GPUs,
# mpirun and a CUDA build; skipped (77) otherwise.
set -u
STRATA=${STRATA:-./strata}
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun"; exit 77; }
command -v nvidia-smi >/dev/null 2>&1 || { echo "skip: no GPU"; exit 77; }
[ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ] || { echo "skip: fewer than 2 GPUs"; exit 77; }
$STRATA run --set run.backend=cuda --set vegas.neval=1e4 --set vegas.maxiter=2 -q \
  --set vegas.skip=0 >/dev/null 2>&1 || { echo "skip: no CUDA backend"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
field() { tail -n 1 "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p"; }
# run NRANKS OUT [--set ...]: the job on NRANKS ranks (round-robin on the GPUs).
run() {
  n=$1; out=$2; shift 2
  timeout 300 mpirun --oversubscribe -n "$n" --bind-to none "$STRATA" run -q --json \
    --set run.backend=cuda --set run.check_ranks=on "$@" >"$out" 2>"$out.err"
}
# close A B TOL WHAT: integral and sigma of two runs agree to TOL relative.
close() {
  a=$(field "$1" integral); b=$(field "$2" integral)
  sa=$(field "$1" sigma); sb=$(field "$2" sigma)
  if awk -v a="$a" -v b="$b" -v sa="$sa" -v sb="$sb" -v t="$3" 'BEGIN {
       d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; if (m == 0) m = 1
       e = sa - sb; if (e < 0) e = -e; ms = sa < 0 ? -sa : sa; if (ms == 0) ms = 1
       exit !(a != "" && d <= t * m && e <= 1e3 * t * ms) }'; then
    echo "ok: $4 ($a +- $sa, $b +- $sb)"
  else
    echo "FAIL: $4: $a +- $sa against $b +- $sb (tolerance $3)"; cat "$2.err"; fail=1
  fi
}
job="--set integral.integrand=f4 --set integral.dim=6 --set vegas.neval=2e6 --set vegas.maxiter=8 \
--set vegas.adapt_iters=4 --set vegas.skip=2 --set vegas.epsrel=0"
for mode in vegas+ vegas vegas1d plain qmc; do
  run 1 "$tmp/1.$mode" $job --set vegas.mode=$mode || { echo "FAIL: 1 rank $mode"; cat "$tmp/1.$mode.err"; fail=1; }
  run 2 "$tmp/2.$mode" $job --set vegas.mode=$mode || { echo "FAIL: 2 ranks $mode"; cat "$tmp/2.$mode.err"; fail=1; }
  close "$tmp/1.$mode" "$tmp/2.$mode" 1e-13 "$mode, 1 and 2 GPUs"
done
# A vector integrand (whole hypercubes per rank) and fB (a peak, VEGAS+).
vec="--set integral.integrand=inline --set integral.dim=4 --set integral.ncomp=3 --set vegas.neval=1e6 --set vegas.maxiter=6 --set vegas.skip=1 --set vegas.epsrel=0"
if run 1 "$tmp/1.vec" $vec --set 'integral.body=for (int c = 0; c < 3; c++) out[c] = exp(-(c + 1) * (x[0] * x[0] + x[1] * x[2] + x[3]));' 2>/dev/null; then
  run 2 "$tmp/2.vec" $vec --set 'integral.body=for (int c = 0; c < 3; c++) out[c] = exp(-(c + 1) * (x[0] * x[0] + x[1] * x[2] + x[3]));'
  close "$tmp/1.vec" "$tmp/2.vec" 1e-13 "vector integrand, 1 and 2 GPUs"
fi
# fB's peak magnifies the last bits of the map sums, added in another order
# on two ranks, through the adapting iterations (the points move with the
# map): 2.5e-12 relative, where sigma is 1e-1.
fb="--set integral.integrand=fB --set integral.dim=9 --set vegas.neval=1e7 --set vegas.maxiter=10 --set vegas.epsrel=0"
run 1 "$tmp/1.fB" $fb; run 2 "$tmp/2.fB" $fb
close "$tmp/1.fB" "$tmp/2.fB" 1e-10 "fB d=9, 1 and 2 GPUs"
run 8 "$tmp/8.v" $job --set vegas.mode=vegas+ || { echo "FAIL: 8 ranks"; cat "$tmp/8.v.err"; fail=1; }
close "$tmp/1.vegas+" "$tmp/8.v" 1e-12 "vegas+, 8 ranks on 2 GPUs and 1"
grep -q '"exchange":"mpi through host memory (ranks share' "$tmp/8.v" || { echo "FAIL: 8 ranks on 2 GPUs did not exchange through the host"; fail=1; }
timeout 300 mpirun --oversubscribe -n 2 --bind-to none -x STRATA_NCCL=0 "$STRATA" run -q --json \
  --set run.backend=cuda --set run.check_ranks=on $job --set vegas.mode=vegas+ >"$tmp/2.mpi" 2>"$tmp/2.mpi.err"
close "$tmp/2.vegas+" "$tmp/2.mpi" 1e-13 "vegas+, NCCL and MPI paths"
grep -q '"exchange":"nccl' "$tmp/2.vegas+" && echo "ok: NCCL path used" || echo "note: NCCL path not used ($(field "$tmp/2.vegas+" exchange))"
grep -q '"exchange":"mpi' "$tmp/2.mpi" || { echo "FAIL: STRATA_NCCL=0 did not take the MPI path"; fail=1; }
# The peak search with its channels (five gaussians, d = 7): its runs adapt
# on the host and split the hypercubes, and the channels' sums are added
# in another order on two ranks, whose weights then steer the channels:
# 1e-8, and the same channels with the same weights to 1e-6.
pk="--set integral.integrand=file:${srcdir:-.}/tests/integrands/nb_five.c --set integral.function=peaks \
--set integral.dim=7 --set vegas.neval=3e4 --set vegas.maxiter=10 --set vegas.epsrel=0 --set vegas.seed=2 \
--set peaks.search=on"
run 1 "$tmp/1.pk" $pk; run 2 "$tmp/2.pk" $pk
close "$tmp/1.pk" "$tmp/2.pk" 1e-8 "peak search with channels, 1 and 2 GPUs"
weights() { tail -n 1 "$1" | grep -o '"channels":\[[^]]*\]' | sed 's/.*\[//; s/\]//'; }
w1=$(weights "$tmp/1.pk"); w2=$(weights "$tmp/2.pk")
if echo "$w1 $w2" | awk '{ n = split($1, a, ","); m = split($2, b, ",")
     if (n < 3 || n != m) exit 1
     for (i = 1; i <= n; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > 1e-6) exit 1 } }'; then
  echo "ok: the same channels on 1 and 2 GPUs ($w1)"
else
  echo "FAIL: channels on 1 GPU $w1, on 2 $w2"; fail=1
fi
# Checkpoints between 1 and 2 GPUs: stop after 5 of 8 iterations, resume on the other count.
for pair in "2 1" "1 2"; do
  set -- $pair
  ck="$tmp/ck.$1.$2.h5"
  run "$1" "$tmp/part" $job --set vegas.mode=vegas+ --set vegas.maxiter=5 --set run.checkpoint="$ck" >/dev/null 2>&1
  run "$2" "$tmp/resumed.$1.$2" $job --set vegas.mode=vegas+ --set run.checkpoint="$ck" --resume --force
  close "$tmp/1.vegas+" "$tmp/resumed.$1.$2" 1e-12 "checkpoint of $1 GPU(s) resumed on $2"
done
# A rank whose NCCL set-up fails: every rank ends, one line names it, no hang.
timeout 120 mpirun --oversubscribe -n 2 --bind-to none -x STRATA_TEST_NCCL_FAIL_RANK=1 "$STRATA" run -q \
  --set run.backend=cuda $job >"$tmp/nf" 2>"$tmp/nf.err"
st=$?
lines=$(grep -c '^strata:' "$tmp/nf.err")
if [ $st -ne 0 ] && [ $st -ne 124 ] && [ "$lines" -eq 1 ] && grep -q 'rank 1' "$tmp/nf.err"; then
  echo "ok: NCCL set-up failure on rank 1: exit $st, $(grep '^strata:' "$tmp/nf.err")"
elif grep -q 'mpi through host' "$tmp/nf.err" 2>/dev/null; then
  echo "skip: built without NCCL"
else
  echo "FAIL: NCCL set-up failure: exit $st, $lines lines"; cat "$tmp/nf.err"; fail=1
fi
exit $fail
