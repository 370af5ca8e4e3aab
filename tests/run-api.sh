#!/bin/sh
# The library as its users get it: installed (make install DESTDIR=...),
# the examples of examples/api/ built against the installed copy through
# pkg-config, and run.  The C example over 1 and 4 ranks equals `strata
# run` of the same job and seed; its resume after a kill -9 equals the
# uninterrupted run bit for bit; the batch form equals the point form; the
# integrand sees every point with the caller's data; the C++ and Fortran
# examples equal the C one.  Where a GPU is visible, the cuda backend with
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
else
  fail "no Fortran compiler (configure found none: install gfortran)"
fi
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
