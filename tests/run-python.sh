#!/bin/sh
# The Python binding over the library as make install puts it: libstrata
# installed into a staging directory, a virtual environment over the
# system's numpy, pandas, h5py, mpi4py, pytest, cffi and setuptools
# (scripts/bootstrap installs them), pip install ./python built against
# the installed library (STRATA_PREFIX: nothing built or bundled; with MPI,
# strata_mc._mpi too), then python/tests with pytest.  No network: pip takes
# cffi and setuptools from the system (--no-build-isolation --no-index).
# tests/run-wheel.sh tests the binding that bundles its own libstrata.
set -u
srcdir=${srcdir:-.}
top=$(pwd)
# The system's python, whose packages bootstrap installs (PYTHON chooses another).
if [ -z "${PYTHON:-}" ]; then PYTHON=python3; [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3; fi
need() { "$PYTHON" -c "import $1" 2>/dev/null || { echo "skip: python3 has no $1 (scripts/bootstrap installs it)"; exit 77; }; }
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || { echo "skip: python3 has no venv (python3-venv)"; exit 77; }
for m in numpy pandas h5py pytest cffi setuptools wheel; do need $m; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
libdir=$(PKG_CONFIG_PATH=. pkg-config --variable=libdir strata)
prefix=$(PKG_CONFIG_PATH=. pkg-config --variable=prefix strata)
make -C "$top" install DESTDIR="$stage/root" MAKEFLAGS= >"$stage/install.log" 2>&1 ||
  { tail -20 "$stage/install.log"; echo "FAIL: make install into $stage/root"; exit 1; }
"$PYTHON" -m venv --system-site-packages "$stage/venv" || { echo "FAIL: $PYTHON -m venv"; exit 1; }
STRATA_PREFIX="$stage/root$prefix" \
  "$stage/venv/bin/pip" install -q --no-build-isolation --no-index "$srcdir/python" \
  >"$stage/pip.log" 2>&1 || { cat "$stage/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
# The tests compare with the program of this build.
cd "$srcdir" || exit 1
STRATA="$top/strata" LD_LIBRARY_PATH="$stage/root$libdir" \
  "$stage/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
