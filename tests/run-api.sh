#!/bin/sh
# The library as its users get it: installed (make install DESTDIR=...),
# the examples of examples/api/ built against the installed copy through
# pkg-config, and run.  The C example over 1 and 4 ranks equals `strata
# run` of the same job and seed; its resume after a kill -9 equals the
# uninterrupted run bit for bit; the batch form equals the point form; the
# integrand sees every point with the caller's data; the C++ and Fortran
# examples equal the C one (the Fortran one where configure found a
# Fortran compiler; CI always has one).  keep.c stops from its callback and resumes with
# a new maxiter and epsrel to the uninterrupted run's bits, its log reads
# with `strata log` (the table and summary keep.c's own report prints,
# strata_report_text) and draws with strata-plot, and a resume with another
# width (the data's identity) is refused; callers of an unknown interface
# or struct size are refused.  Where a GPU is visible, the cuda backend with
# the integrand's source agrees with the CPU to 1e-12.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
STRATA=${STRATA:-$top_builddir/strata}
MPIRUN=${MPIRUN:-mpirun}
CC=${CC:-cc}
CXX=${CXX:-c++}
FC=${FC:-}
libdir=${libdir:-/usr/local/lib}
# The C example is an MPI program (strata/strata_mpi.h is installed only
# with MPI).
if [ ! -f "$top_builddir/comm/libstrata_core_la-comm_mpi.lo" ]; then
  echo "SKIP: strata is built without MPI (the C example needs strata/strata_mpi.h)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export STRATA_CACHE_DIR="$tmp/cache"
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# field NAME LINE: the word after NAME in an example's output line.
field() { echo "$2" | awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'; }
# json NAME LINE: a number of strata's JSON line.
json() { echo "$2" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
# close NAME A B: A and B agree to 1e-12 (relative).
close() {
  if awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
                                      exit !(a != "" && b != "" && d <= 1e-12 * m) }'; then
    ok
  else
    fail "$1: $2 and $3 differ by more than 1e-12"
  fi
}
same() { if [ "$2" = "$3" ]; then ok; else fail "$1:"; echo "  $2"; echo "  $3"; fi; }

# --- install, and build the examples against the installed library -------------------
dest="$tmp/inst"
( unset MAKEFLAGS MFLAGS MAKELEVEL; ${MAKE:-make} -C "$top_builddir" install DESTDIR="$dest" ) \
  >"$tmp/install.log" 2>&1 || { echo "FAIL: make install"; tail -20 "$tmp/install.log"; exit 1; }
export PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
export LD_LIBRARY_PATH="$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
flags=$(pkg-config --cflags --libs strata) || { echo "FAIL: pkg-config strata"; exit 1; }
case $flags in *"$dest"*) ok ;; *) fail "pkg-config does not point into the installed copy: $flags" ;; esac
cd "$tmp" || exit 1
ex="$srcdir/examples/api"
$CC -O2 "$ex/integrate.c" $flags -lm -o integrate 2>build.log || { cat build.log; fail "C example does not build"; }
$CXX -O2 "$ex/integrate.cpp" $flags -o integrate-cxx 2>build.log || { cat build.log; fail "C++ example does not build"; }
if [ -n "$FC" ]; then
  $FC -O2 "$ex/strata.f90" "$ex/integrate_f.f90" $flags -o integrate-f 2>build.log ||
    { cat build.log; fail "Fortran example does not build"; }
elif [ -n "${CI:-}" ]; then
  fail "no Fortran compiler (configure found none: .ci/run installs gfortran)"
else
  echo "note: no Fortran compiler (configure found none): the Fortran example is left out"
fi
$CC -O2 "$ex/keep.c" $flags -lm -o keep 2>build.log || { cat build.log; fail "keep.c does not build"; }
ldd ./integrate | grep -q "$dest$libdir/libstrata.so" && ok || fail "the C example is not linked to the installed libstrata"

# --- the C example and strata run: the same job, the same seed ------------------------
cp "$srcdir/examples/integrands/gauss.c" .
cat >job.ini <<'JOB'
[integral]
integrand = file:gauss.c
function = gauss
dim = 6
params = 625
[vegas]
neval = 100000
maxiter = 10
adapt_iters = 8
skip = 2
epsrel = 0
seed = 5
[run]
backend = cpu
JOB
point=$(./integrate --seed 5 --form point) || fail "C example, point form"
batch=$(./integrate --seed 5 --form batch) || fail "C example, batch form"
run=$("$STRATA" run job.ini --json -q) || fail "strata run"
close "point form = strata run (integral)" "$(field integral "$point")" "$(json integral "$run")"
close "point form = strata run (sigma)" "$(field sigma "$point")" "$(json sigma "$run")"
close "point form = strata run (chi2/dof)" "$(field chi2_dof "$point")" "$(json chi2_dof "$run")"
same "batch form = point form" "$batch" "$point"

point4=$($MPIRUN --oversubscribe -n 4 ./integrate --seed 5 --form point) || fail "C example on 4 ranks"
batch4=$($MPIRUN --oversubscribe -n 4 ./integrate --seed 5 --form batch) || fail "C example on 4 ranks, batch"
# Every rank runs rank 0's job: a rank given another seed is refused, on every rank.
if $MPIRUN --oversubscribe -n 1 ./integrate --seed 5 --form point : -n 1 ./integrate --seed 6 \
    --form point >mixed.out 2>mixed.err; then
  fail "ranks with different seeds ran"
elif grep -q "not the job of rank 0: vegas.seed = 6 here, 5 on rank 0" mixed.err; then ok
else fail "ranks with different seeds: no message naming the seed:"; cat mixed.err; fi
run4=$($MPIRUN --oversubscribe -n 4 "$STRATA" run job.ini --json -q) || fail "strata run on 4 ranks"
close "4 ranks = strata run on 4 ranks" "$(field integral "$point4")" "$(json integral "$run4")"
close "4 ranks = 1 rank" "$(field integral "$point4")" "$(field integral "$point")"
close "4 ranks = 1 rank (sigma)" "$(field sigma "$point4")" "$(field sigma "$point")"
same "batch form = point form on 4 ranks" "$batch4" "$point4"
[ "$(json ranks "$run4")" = 4 ] && ok || fail "strata run did not run on 4 ranks"

# --- kill -9 and resume: bit for bit --------------------------------------------------
./integrate --seed 5 --checkpoint ck.h5 --die-after 4 >/dev/null 2>&1
st=$?
[ $st -eq 137 ] && [ -f ck.h5 ] && ok || fail "--die-after: status $st, not 137 (SIGKILL), or no checkpoint"
resumed=$(./integrate --seed 5 --checkpoint ck.h5 --resume 2>err) || fail "resume"
grep -q "resumed after 4 iterations" err && ok || fail "resume did not continue from iteration 4: $(cat err)"
same "resumed after kill -9 = uninterrupted" "$resumed" "$point"
rm -f ck.h5
$MPIRUN --oversubscribe -n 4 ./integrate --seed 5 --checkpoint ck.h5 --die-after 6 >/dev/null 2>&1 &&
  fail "4 ranks: --die-after did not end the job"
resumed4=$($MPIRUN --oversubscribe -n 4 ./integrate --seed 5 --checkpoint ck.h5 --resume 2>err) ||
  fail "resume on 4 ranks"
grep -q "resumed after 6 iterations" err && ok || fail "4 ranks: resume did not continue from iteration 6: $(cat err)"
same "4 ranks: resumed after kill -9 = uninterrupted" "$resumed4" "$point4"
# A checkpoint of another job is refused, and left as it was.
cp ck.h5 ck-before.h5
err=$(./integrate --seed 6 --checkpoint ck.h5 --resume 2>&1 >/dev/null) && fail "another seed resumed"
echo "$err" | grep -q "vegas.seed" && ok || fail "refusal does not name vegas.seed: $err"
cmp -s ck.h5 ck-before.h5 && ok || fail "a refused resume changed the checkpoint"

# --- the other forms ------------------------------------------------------------------
source=$(./integrate --seed 5 --form source --backend cpu) || fail "source form"
close "source form = point form" "$(field integral "$source")" "$(field integral "$point")"
warm=$(./integrate --seed 5 --warm 4) || fail "--warm"
awk -v a="$(field integral "$warm")" -v b="$(field integral "$point")" \
    -v sa="$(field sigma "$warm")" -v sb="$(field sigma "$point")" \
    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 5 * sqrt(sa * sa + sb * sb)) }' &&
  ok || fail "a run from a trained map disagrees: $warm"
[ "$(field integral "$warm")" != "$(field integral "$point")" ] && ok ||
  fail "--warm gave the untrained run's result: was the map used?"

cxx=$(./integrate-cxx) || fail "C++ example"
same "C++ = C" "$cxx" "$(./integrate --form point)"
if [ -x integrate-f ]; then
  f=$(./integrate-f) || fail "Fortran example"
  c=$(./integrate --form point)
  close "Fortran = C (integral)" "$(field integral "$f")" "$(field integral "$c")"
  close "Fortran = C (sigma)" "$(field sigma "$f")" "$(field sigma "$c")"
fi

# --- a run that keeps its results (keep.c): log, checkpoints, stop, resume ----------
# Stopped from the callback after iteration 5 (a checkpoint every 3, and one
# at the stop), resumed with a new maxiter and epsrel: the uninterrupted run
# with those values, bit for bit.
mkdir keep-a keep-b
(cd keep-a && ../keep log.h5 ck.h5 --stop-after 5 >out 2>err) || fail "keep: stopped run: $(cat keep-a/err)"
[ "$(field stopped "$(cat keep-a/out)")" = 1 ] && [ "$(field iterations "$(cat keep-a/out)")" = 5 ] &&
  ok || fail "keep: the callback did not stop the run after iteration 5: $(cat keep-a/out)"
[ -f keep-a/ck.h5 ] && ok || fail "keep: no checkpoint after the stop"
vers=$(field version "$(cat keep-a/out)")
[ "$vers" = "$(field library "$(cat keep-a/out)")" ] && ok ||
  fail "keep: STRATA_VERSION_* say $vers, strata_version() $(field library "$(cat keep-a/out)")"
# Without new_stop_keys the new maxiter is refused, naming the field to set
# (not the program's --force), and the checkpoint is left alone.
cp keep-a/ck.h5 keep-a/ck-before.h5
(cd keep-a && ../keep log.h5 ck.h5 --resume --maxiter 14 --epsrel 1e-4 >out 2>err) &&
  fail "keep: a new maxiter resumed without new_stop_keys"
grep -q "vegas.maxiter = 12 in the checkpoint, 14 in keep.c: set strata_settings.new_stop_keys" keep-a/err &&
  ! grep -q -- "--force" keep-a/err && ok || fail "keep: the refusal of a new maxiter: $(cat keep-a/err)"
cmp -s keep-a/ck.h5 keep-a/ck-before.h5 && ok || fail "keep: a refused resume changed the checkpoint"
# Another width is other data: refused, naming the identity.
(cd keep-a && ../keep log.h5 ck.h5 --resume --width 600 >out 2>err) && fail "keep: another width resumed"
grep -q "made for other data: the identity of the caller's data is 'gauss a=625' in the checkpoint, 'gauss a=600' in keep.c" keep-a/err &&
  ok || fail "keep: the refusal of another width does not name the identity: $(cat keep-a/err)"
(cd keep-a && ../keep log.h5 ck.h5 --resume --maxiter 14 --epsrel 1e-4 --new-stop-keys >out 2>err) ||
  fail "keep: resume with new stop keys: $(cat keep-a/err)"
grep -q "^itn  1 " keep-a/err && ok || fail "keep: the resume did not report the restored iterations"
(cd keep-b && ../keep log.h5 ck.h5 --maxiter 14 --epsrel 1e-4 --report report >out 2>err) ||
  fail "keep: uninterrupted run"
same "keep: stopped and resumed with new stop keys = uninterrupted" "$(cat keep-a/out)" "$(cat keep-b/out)"
# The library's log reads with strata log, the same table as the
# uninterrupted run's, and draws with strata-plot.
"$STRATA" log keep-a/log.h5 --csv >log-a.csv 2>err || fail "strata log of the library's log: $(cat err)"
"$STRATA" log keep-b/log.h5 --csv >log-b.csv 2>err || fail "strata log of the uninterrupted log: $(cat err)"
rows=$(grep -c '^ *[0-9]' log-a.csv)
[ "$rows" -eq "$(field iterations "$(cat keep-b/out)")" ] && ok ||
  fail "strata log shows $rows rows, the run had $(field iterations "$(cat keep-b/out)") iterations"
# (The CSV's columns of wall time differ between the two runs.)
cut -d, -f1-8 log-a.csv >a3 && cut -d, -f1-8 log-b.csv >b3 && cmp -s a3 b3 && ok ||
  fail "the resumed log's estimates, averages and counts differ from the uninterrupted one's"
# The caller's report (strata_report_text, from the iterations its
# callback saw) is the table and summary that strata log reads back from
# the log.
"$STRATA" log keep-b/log.h5 >log-b.txt 2>err && cmp -s keep-b/report log-b.txt && ok ||
  fail "keep's report differs from strata log's: $(cat err; diff keep-b/report log-b.txt | head -5)"
py=""
for p in ${PYTHON:-python3 /usr/bin/python3}; do
  if command -v "$p" >/dev/null && "$p" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
  MPLBACKEND=Agg "$py" "$srcdir/scripts/strata-plot" keep-a/log.h5 -o plot >err 2>&1 || fail "strata-plot of the library's log: $(cat err)"
  for kind in estimate error map; do
    [ "$(head -c 8 plot-$kind.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok ||
      fail "strata-plot did not draw plot-$kind.png from the library's log"
  done
else
  echo "no python3 with h5py, numpy and matplotlib: strata-plot of the library's log not drawn"
fi

# --- callers' structs the library does not know are refused --------------------------
cat >abi.c <<'C'
#include <stdio.h>
#include <string.h>
#include <strata/strata.h>
static void f(const double *x, int dim, void *user, double *out) { (void)x; (void)dim; (void)user; out[0] = 1; }
int main(void)
{
  strata_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.fu = f;
  pr.dim = 2;
  pr.upper[0] = pr.upper[1] = 1;
  strata_params p;
  strata_params_default(&p);
  strata_integrator *s = NULL;
  if (strata_integrator_alloc_checked(STRATA_INTERFACE + 1, sizeof pr, sizeof p, &pr, &p,
                                      STRATA_BACKEND_CPU, NULL, &s) == STRATA_OK) return 1;
  printf("newer: %s\n", strata_last_error());
  if (strata_integrator_alloc_checked(STRATA_INTERFACE, sizeof pr + 8, sizeof p, &pr, &p,
                                      STRATA_BACKEND_CPU, NULL, &s) == STRATA_OK) return 1;
  printf("sizes: %s\n", strata_last_error());
  if (strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &s) != STRATA_OK) return 1;
  strata_settings st;
  memset(&st, 0, sizeof st); /* not made by strata_settings_init */
  if (strata_integrator_settings(s, &st) == STRATA_OK) return 1;
  printf("settings: %s\n", strata_last_error());
  /* A caller built with interface 2 has the settings up to verbose. */
  strata_settings old;
  strata_settings_init_checked(&old, 2, offsetof(strata_settings, map));
  old.check_ranks = 1;
  if (strata_integrator_settings(s, &old) != STRATA_OK) {
    printf("interface 2: %s\n", strata_last_error());
    return 1;
  }
  printf("interface 2: accepted\n");
  strata_integrator_free(s);
  /* strata_integrator_open reads no problem before it knows the settings. */
  strata_integrator *o = NULL;
  memset(&st, 0, sizeof st);
  if (strata_integrator_open(&pr, &p, STRATA_BACKEND_CPU, NULL, &st, &o) == STRATA_OK) return 1;
  printf("open: %s\n", strata_last_error());
  /* A table's path under a directory, too long to hold: refused, not cut. */
  static char dir[5000];
  memset(dir, 'd', sizeof dir - 1);
  strata_table_set *t = NULL;
  if (strata_tables_read("g=t.h5:/g", dir, "spec", &t) != STRATA_EINVAL) return 1;
  printf("tables: %s\n", strata_last_error());
  return 0;
}
C
$CC -O2 abi.c $flags -o abi 2>build.log && ./abi >abi.out 2>&1 && ok ||
  fail "a caller of another interface or struct size was not refused: $(cat build.log abi.out)"
grep -q "^newer: .*built for strata interface 5, this libstrata .* has 1 to 4" abi.out &&
  grep -q "^sizes: .*out of step with strata.h" abi.out &&
  grep -q "^settings: .*not made by strata_settings_init" abi.out &&
  grep -q "^interface 2: accepted" abi.out &&
  grep -q "^open: strata_integrator_open: the settings are not made by strata_settings_init" abi.out &&
  grep -q "^tables: spec: table g: t.h5 under a directory of 4999 characters is too long a path" abi.out && ok ||
  fail "the refusals do not say why: $(cat abi.out)"

# --- the GPU, where there is one --------------------------------------------------------
if nvidia-smi -L >/dev/null 2>&1; then
  gpu=$(./integrate --seed 5 --form source --backend cuda) || fail "cuda backend"
  [ "$(field backend "$gpu")" = cuda ] && ok || fail "the cuda run ran on $(field backend "$gpu")"
  close "cuda = cpu (integral)" "$(field integral "$gpu")" "$(field integral "$source")"
  close "cuda = cpu (sigma)" "$(field sigma "$gpu")" "$(field sigma "$source")"
else
  echo "no GPU: the cuda comparison is left to a machine with one"
fi

echo "api: $passes passed, $fails failed"
[ $fails -eq 0 ]
