#!/bin/sh
# Strong and weak scaling over GPUs (one MPI rank per GPU), CUDA backend.
#   bench/scaling.sh [STRATA] [MAXGPUS] [REPS]
# Strong: the same neval per iteration on 1, 2, 4 .. MAXGPUS GPUs.  Weak:
# neval per iteration grows with the number of GPUs.  Each run: f4 d=6,
# vegas+, 10 iterations (5 adapting), no tolerance; time_s is the median
# over REPS runs (default 3) of the integration's wall time, without the
# one-time set-up (the GPU context, the module load, the exchange's
# communicator), which the setup_s column gives (the NCCL communicator on
# several GPUs).  Then the same strong runs at 1e9 with NCCL kept off
# NVLink and shared memory (sockets, as between nodes), and the overhead
# per adapting and per frozen iteration at 1e9: the median over the
# iterations of each kind of t_R - t_1 / R, from the runs' logs.
set -eu
STRATA=${1:-./strata}
MAX=${2:-$(nvidia-smi -L | wc -l)}
REPS=${3:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { tail -n 1 "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# once NGPU NEVAL LOG [mpirun options]: one run -> "time setup integral sigma exchange"
once() {
  g=$1; n=$2; log=$3; shift 3
  rm -f "$log"
  mpirun --oversubscribe -n "$g" --bind-to none "$@" "$STRATA" run -q --json \
    --set run.backend=cuda --set integral.integrand=f4 --set integral.dim=6 \
    --set vegas.neval="$n" --set vegas.maxiter=10 --set vegas.adapt_iters=5 \
    --set vegas.skip=2 --set vegas.epsrel=0 --set vegas.maxeval=1e12 \
    --set run.log="$log" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  s=$(field "$tmp/out" setup_s); x=$(field "$tmp/out" exchange | cut -d' ' -f1)
  echo "$(field "$tmp/out" time_s) ${s:-0} $(field "$tmp/out" integral) $(field "$tmp/out" sigma) ${x:--}"
}
# run NGPU NEVAL [mpirun options]: REPS runs -> the median's row; the last run's log stays.
run() {
  g=$1; n=$2; shift 2
  : >"$tmp/reps"
  i=0
  while [ $i -lt "$REPS" ]; do once "$g" "$n" "$tmp/log.$g.$n.h5" "$@" >>"$tmp/reps"; i=$((i + 1)); done
  t=$(cut -d' ' -f1 "$tmp/reps" | median)
  s=$(cut -d' ' -f2 "$tmp/reps" | median)
  awk -v t="$t" -v s="$s" '$1 == t { printf "%s %s %s %s %s\n", t, s, $3, $4, $5; exit }' "$tmp/reps"
}
# Per-iteration wall times of a log as "adapting wall_s" lines.
iters() { "$STRATA" log "$1" --csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { print $c["adapting"], $c["wall_s"] }'; }
echo "| kind | neval/iteration | GPUs | time (s) | set-up (s) | efficiency | integral | sigma | exchange |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 1e8 1e9 1e10; do
  base=""
  g=1
  while [ "$g" -le "$MAX" ]; do
    set -- $(run $g $n)
    [ -n "$base" ] || base=$1
    eff=$(awk -v b="$base" -v t="$1" -v g=$g 'BEGIN { printf "%.1f%%", 100 * b / (t * g) }')
    echo "| strong | $n | $g | $1 | $2 | $eff | $3 | $4 | $5 |"
    [ "$n" = 1e9 ] && cp "$tmp/log.$g.$n.h5" "$tmp/nvlink.$g.h5"
    g=$((g * 2))
  done
  [ "$n" = 1e9 ] && base1e9=$base
done
g=2
while [ "$g" -le "$MAX" ]; do
  set -- $(run $g 1e9 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1)
  eff=$(awk -v b="$base1e9" -v t="$1" -v g=$g 'BEGIN { printf "%.1f%%", 100 * b / (t * g) }')
  echo "| strong, sockets | 1e9 | $g | $1 | $2 | $eff | $3 | $4 | $5 |"
  cp "$tmp/log.$g.1e9.h5" "$tmp/sockets.$g.h5"
  g=$((g * 2))
done
for per in 1e8 1e9; do
  base=""
  g=1
  while [ "$g" -le "$MAX" ]; do
    n=$(awk -v p="$per" -v g=$g 'BEGIN { printf "%.0f", p * g }')
    set -- $(run $g $n)
    [ -n "$base" ] || base=$1
    eff=$(awk -v b="$base" -v t="$1" 'BEGIN { printf "%.1f%%", 100 * b / t }')
    echo "| weak | $per per GPU | $g | $1 | $2 | $eff | $3 | $4 | $5 |"
    g=$((g * 2))
  done
done
echo
echo "| path | GPUs | overhead per adapting iteration (ms) | per frozen iteration (ms) | the first iteration's (ms) |"
echo "|---|---|---|---|---|"
iters "$tmp/nvlink.1.h5" >"$tmp/t1"
for f in "$tmp"/nvlink.*.h5 "$tmp"/sockets.*.h5; do
  g=$(basename "$f" .h5 | cut -d. -f2)
  [ "$g" -gt 1 ] || continue
  iters "$f" | paste -d' ' "$tmp/t1" - | awk -v g="$g" -v path="$(basename "$f" | cut -d. -f1)" '
    { o = 1e3 * ($4 - $2 / g) }
    NR == 1 { first = o }
    NR > 1 { if ($1 == 1) a[na++] = o; else z[nz++] = o }
    function med(v, n,   i, j, t) { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
      if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t } return n ? v[int((n - 1) / 2)] : "-" }
    END { printf "| %s | %d | %.3f | %.3f | %.3f |\n", path, g, med(a, na), med(z, nz), first }'
done
