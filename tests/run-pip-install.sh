#!/bin/sh
# pip install ./python in one command, as a user with compilers runs it in
# a checkout: setup.py builds libstrata itself (autoreconf, configure, make,
# no make install) and bundles it in the package, with no environment
# variable and no libstrata installed anywhere.  The checkout's tracked
# files are copied first, so that pip's build (in python/build) meets
# neither the developer's own nor tests/run-python.sh's.  No network: a
# virtual environment over the system's numpy, cffi and setuptools
# (--no-build-isolation --no-index).  Then, outside the checkout and with
# no variable pointing anywhere, the package imports, loads the libstrata
# inside it (and strata_mc._mpi where mpicc built libstrata with MPI), and
# integrates.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
if [ -z "${PYTHON:-}" ]; then PYTHON=python3; [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3; fi
need() { "$PYTHON" -c "import $1" 2>/dev/null || { echo "skip: python3 has no $1 (scripts/bootstrap installs it)"; exit 77; }; }
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || { echo "skip: python3 has no venv (python3-venv)"; exit 77; }
for m in numpy cffi setuptools wheel; do need $m; done
command -v autoreconf >/dev/null || { echo "skip: no autoreconf"; exit 77; }
[ -d "$srcdir/.git" ] && command -v git >/dev/null ||
  { echo "skip: $srcdir is not a git checkout"; exit 77; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/checkout"
(cd "$srcdir" && git ls-files -z --cached --others --exclude-standard |
   xargs -0 cp --parents -t "$stage/checkout") ||
  { echo "FAIL: copying the checkout's files"; exit 1; }
# setup.py asks git for the files (the untracked ones too).
git -C "$stage/checkout" init -q || { echo "FAIL: git init in the copy"; exit 1; }
"$PYTHON" -m venv --system-site-packages "$stage/venv" || { echo "FAIL: $PYTHON -m venv"; exit 1; }
start=$(date +%s)
# Make's variables would reach the library's make inside setup.py.
(cd "$stage/checkout" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u STRATA_PREFIX \
   -u STRATA_CONFIGURE -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH \
   "$stage/venv/bin/pip" install -q --no-build-isolation --no-index ./python) \
  >"$stage/pip.log" 2>&1 ||
  { tail -40 "$stage/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
echo "pip install ./python in $(( $(date +%s) - start )) s"
mpi=no
command -v "${MPICC:-mpicc}" >/dev/null && mpi=yes
cd "$stage" || exit 1
env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH "$stage/venv/bin/python" - "$stage/venv" "$mpi" <<'EOF' ||
import math, os, sys
import numpy as np, strata_mc as strata
from strata_mc import _lib
here = os.path.realpath(os.path.dirname(strata.__file__))
assert here.startswith(os.path.realpath(sys.argv[1])), here
import re
bundled = [n for n in os.listdir(here) if re.fullmatch(r"libstrata\.so\.\d+", n)]
assert len(bundled) == 1, os.listdir(here)
with open("/proc/self/maps") as f:
    loaded = {line.split()[-1] for line in f if "libstrata.so" in line}
assert loaded == {os.path.join(here, bundled[0])}, loaded
if sys.argv[2] == "yes":
    import strata_mc._mpi  # noqa: F401
r = strata.Integrator(lambda x: np.exp(-100 * ((x - 0.5) ** 2).sum(axis=1)), [[0, 1]] * 4,
                      neval=2e4, seed=1).integrate()
exact = (math.pi / 100) ** 2 * math.erf(5) ** 4
assert abs(r.mean - exact) < 5 * r.sdev, (r.mean, r.sdev, exact)
print("strata_mc %s with its own libstrata (MPI: %s): %s (exact %.8g)"
      % (strata.version, sys.argv[2], r, exact))
EOF
  { echo "FAIL: the package pip install ./python made"; exit 1; }
